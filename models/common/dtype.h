// Element types of tensors, as the trace names them and as deps.json prints them.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace npusim {

enum class DType : std::uint8_t {
  FP32, FP16, BF16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
  BOOL  // the runtime's DataType::BOOL: one byte (an extension of the trace format's list)
};

inline int dtype_bytes(DType t) {
  switch (t) {
    case DType::FP32: case DType::INT32: case DType::UINT32: return 4;
    case DType::FP16: case DType::BF16: case DType::INT16: case DType::UINT16: return 2;
    case DType::INT8: case DType::UINT8: case DType::BOOL: return 1;
    case DType::INT64: case DType::UINT64: return 8;
  }
  return 1;
}

inline bool dtype_is_signed_int(DType t) {
  return t == DType::INT8 || t == DType::INT16 || t == DType::INT32 || t == DType::INT64;
}
inline bool dtype_is_float(DType t) { return t == DType::FP32 || t == DType::FP16 || t == DType::BF16; }
// Trace spelling: fp32 fp16 bf16 int8 ... uint64
inline const char* dtype_trace_name(DType t) {
  static const char* n[] = {"fp32", "fp16", "bf16", "int8", "int16", "int32",
                            "int64", "uint8", "uint16", "uint32", "uint64", "bool"};
  return n[static_cast<int>(t)];
}
// Runtime spelling used by deps.json: FLOAT32, FLOAT16, BFLOAT16, INT8, ...
inline const char* dtype_runtime_name(DType t) {
  static const char* n[] = {"FLOAT32", "FLOAT16", "BFLOAT16", "INT8", "INT16", "INT32",
                            "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "BOOL"};
  return n[static_cast<int>(t)];
}
inline std::optional<DType> dtype_from_trace_name(const std::string& s) {
  for (int i = 0; i <= static_cast<int>(DType::BOOL); ++i)
    if (s == dtype_trace_name(static_cast<DType>(i))) return static_cast<DType>(i);
  return std::nullopt;
}
// The bit pattern of `v` in a float dtype (round to nearest even), as the
// device's memory holds it; for other dtypes `v` truncated to an integer.
inline std::int64_t float_bits(double v, DType t) {
  float f = static_cast<float>(v);
  std::uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  switch (t) {
    case DType::FP32: return u;
    case DType::BF16: {
      if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40;  // NaN stays NaN
      return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    }
    case DType::FP16: {
      const std::uint32_t sign = (u >> 16) & 0x8000u;
      const std::uint32_t a = u & 0x7fffffffu;
      if (a > 0x7f800000u) return sign | 0x7e00u;             // NaN
      if (a >= 0x477ff000u) return sign | 0x7c00u;            // overflow: infinity
      if (a < 0x38800000u) {                                  // subnormal or zero
        if (a < 0x33000000u) return sign;
        const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
        const int shift = 126 - static_cast<int>(a >> 23);    // 14..24
        std::uint32_t h = m >> shift;
        const std::uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1u))) ++h;
        return sign | h;
      }
      std::uint32_t h = ((a >> 13) - (112u << 10));
      const std::uint32_t rem = a & 0x1fffu;
      if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
      return sign | h;
    }
    default: return static_cast<std::int64_t>(v);
  }
}

// An element as the device's memory holds it (its bytes, zero-extended to
// 64 bits: what get_tensor_data returns) and as npusim's data store keeps it
// (integers as their value, floats as their bits), both ways.
inline std::uint64_t element_bits(std::int64_t stored, DType t) {
  const int bytes = dtype_bytes(t);
  return bytes >= 8 ? static_cast<std::uint64_t>(stored)
                    : static_cast<std::uint64_t>(stored) & ((std::uint64_t{1} << (8 * bytes)) - 1);
}
inline std::int64_t element_from_bits(std::uint64_t bits, DType t) {
  const int bytes = dtype_bytes(t);
  if (bytes >= 8) return static_cast<std::int64_t>(bits);
  const int shift = 64 - 8 * bytes;
  bits &= (std::uint64_t{1} << (8 * bytes)) - 1;
  if (dtype_is_signed_int(t)) return static_cast<std::int64_t>(bits << shift) >> shift;
  return static_cast<std::int64_t>(bits);
}

inline const char* dtype_names_list() {
  return "fp32, fp16, bf16, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool";
}

}  // namespace npusim
