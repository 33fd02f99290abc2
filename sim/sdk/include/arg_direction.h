// npusim orchestration SDK: argument directions and the argument capacities.
#pragma once

#include <cstdint>

enum class ArgDirection : int32_t { SCALAR = 0, IN = 1, OUT = 2, INOUT = 3 };

inline constexpr int CORE_MAX_TENSOR_ARGS = 32;
inline constexpr int CHIP_MAX_TENSOR_ARGS = 256;
inline constexpr int CORE_MAX_SCALAR_ARGS = 16;
inline constexpr int CHIP_MAX_SCALAR_ARGS = 128;
inline constexpr uint32_t CALLABLE_ALIGN = 64;
inline constexpr uint32_t CALLABLE_CHILD_ALIGN = 16;

#define MAX_TENSOR_ARGS CORE_MAX_TENSOR_ARGS
#define MAX_SCALAR_ARGS CORE_MAX_SCALAR_ARGS

static inline uint32_t callable_align_up(uint32_t size) { return (size + CALLABLE_ALIGN - 1) / CALLABLE_ALIGN * CALLABLE_ALIGN; }

inline const char *arg_direction_name(ArgDirection d) {
    switch (d) {
    case ArgDirection::SCALAR: return "SCALAR";
    case ArgDirection::IN: return "IN";
    case ArgDirection::OUT: return "OUT";
    case ArgDirection::INOUT: return "INOUT";
    }
    return "UNKNOWN";
}
