// npusim orchestration SDK: element types and the uint64 scalar packing of
// the runtime's orchestration API (names and signatures as the a2a3
// tensormap_and_ringbuffer runtime declares them; the bodies are npusim's).
#ifndef NPUSIM_SDK_DATA_TYPE_H
#define NPUSIM_SDK_DATA_TYPE_H

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

template <typename T>
inline constexpr bool is_supported_scalar_arg_v = std::is_arithmetic_v<std::remove_cv_t<std::remove_reference_t<T>>> ||
                                                  std::is_enum_v<std::remove_cv_t<std::remove_reference_t<T>>>;

constexpr int MAX_TENSOR_DIMS = 5;

enum class AddressSpace : uint8_t { HOST = 0, DEVICE = 1 };

// The runtime's numbering: the order is part of the ABI.
enum class DataType : uint8_t {
    FLOAT32,
    FLOAT16,
    INT32,
    INT16,
    INT8,
    UINT8,
    BFLOAT16,
    INT64,
    UINT64,
    UINT16,
    UINT32,
    BOOL,
    FP8E4M3FN,  // A5 only
    FP8E8M0,    // A5 only
    FP4E2M1,    // A5 only
    DATA_TYPE_NUM,
};
static_assert(sizeof(DataType) == 1, "DataType is one byte");

inline uint64_t get_element_size(DataType dtype) {
    switch (dtype) {
    case DataType::FLOAT32:
    case DataType::INT32:
    case DataType::UINT32:
        return 4;
    case DataType::FLOAT16:
    case DataType::INT16:
    case DataType::BFLOAT16:
    case DataType::UINT16:
        return 2;
    case DataType::INT64:
    case DataType::UINT64:
        return 8;
    case DataType::INT8:
    case DataType::UINT8:
    case DataType::BOOL:
    case DataType::FP8E4M3FN:
    case DataType::FP8E8M0:
    case DataType::FP4E2M1:
        return 1;
    default:
        return 0;
    }
}

inline const char *get_dtype_name(DataType dtype) {
    static const char *const names[] = {"FLOAT32", "FLOAT16", "INT32",  "INT16",  "INT8",   "UINT8",
                                        "BFLOAT16", "INT64",  "UINT64", "UINT16", "UINT32", "BOOL",
                                        "FP8E4M3FN", "FP8E8M0", "FP4E2M1"};
    const auto i = static_cast<unsigned>(dtype);
    return i < sizeof(names) / sizeof(names[0]) ? names[i] : "UNKNOWN";
}

#if defined(__DAV_VEC__) || defined(__DAV_CUBE__)
#ifndef __aicore__
#define __aicore__ [aicore]
#endif
#define PTO_DEVICE_FUNC __aicore__
#else
#define PTO_DEVICE_FUNC
#endif

// The DataType a C++ scalar type is recorded as.
template <typename T>
inline constexpr uint8_t dtype_of() {
    static_assert(is_supported_scalar_arg_v<T>, "dtype_of: type must be arithmetic or enum");
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, float> || std::is_same_v<U, double>) return static_cast<uint8_t>(DataType::FLOAT32);
    else if constexpr (std::is_same_v<U, bool>) return static_cast<uint8_t>(DataType::BOOL);
    else if constexpr (std::is_same_v<U, int32_t>) return static_cast<uint8_t>(DataType::INT32);
    else if constexpr (std::is_same_v<U, uint32_t>) return static_cast<uint8_t>(DataType::UINT32);
    else if constexpr (std::is_same_v<U, int64_t>) return static_cast<uint8_t>(DataType::INT64);
    else if constexpr (std::is_same_v<U, int16_t>) return static_cast<uint8_t>(DataType::INT16);
    else if constexpr (std::is_same_v<U, uint16_t>) return static_cast<uint8_t>(DataType::UINT16);
    else if constexpr (std::is_same_v<U, int8_t>) return static_cast<uint8_t>(DataType::INT8);
    else if constexpr (std::is_same_v<U, uint8_t>) return static_cast<uint8_t>(DataType::UINT8);
    else return static_cast<uint8_t>(DataType::UINT64);
}

// A value's bytes, zero-extended into a uint64 (the scalar slot).
template <typename T>
PTO_DEVICE_FUNC inline uint64_t to_u64(T value) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "to_u64: type must fit in 8 bytes");
    static_assert(std::is_trivially_copyable_v<T>, "to_u64: type must be trivially copyable");
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return bits;
}

// The inverse: the low sizeof(T) bytes of a slot as a T.
template <typename T>
PTO_DEVICE_FUNC inline T from_u64(uint64_t bits) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "from_u64: type must fit in 8 bytes");
    static_assert(std::is_trivially_copyable_v<T>, "from_u64: type must be trivially copyable");
    T value;
    std::memcpy(&value, &bits, sizeof(T));
    return value;
}

#endif  // NPUSIM_SDK_DATA_TYPE_H
