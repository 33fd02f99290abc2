// Element types of tensors, as the trace names them and as deps.json prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace npusim {

enum class DType : std::uint8_t {
  FP32, FP16, BF16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64
};

inline int dtype_bytes(DType t) {
  switch (t) {
    case DType::FP32: case DType::INT32: case DType::UINT32: return 4;
    case DType::FP16: case DType::BF16: case DType::INT16: case DType::UINT16: return 2;
    case DType::INT8: case DType::UINT8: return 1;
    case DType::INT64: case DType::UINT64: return 8;
  }
  return 1;
}

inline bool dtype_is_signed_int(DType t) {
  return t == DType::INT8 || t == DType::INT16 || t == DType::INT32 || t == DType::INT64;
}
// Trace spelling: fp32 fp16 bf16 int8 ... uint64
inline const char* dtype_trace_name(DType t) {
  static const char* n[] = {"fp32", "fp16", "bf16", "int8", "int16", "int32",
                            "int64", "uint8", "uint16", "uint32", "uint64"};
  return n[static_cast<int>(t)];
}
// Runtime spelling used by deps.json: FLOAT32, FLOAT16, BFLOAT16, INT8, ...
inline const char* dtype_runtime_name(DType t) {
  static const char* n[] = {"FLOAT32", "FLOAT16", "BFLOAT16", "INT8", "INT16", "INT32",
                            "INT64", "UINT8", "UINT16", "UINT32", "UINT64"};
  return n[static_cast<int>(t)];
}
inline std::optional<DType> dtype_from_trace_name(const std::string& s) {
  for (int i = 0; i <= static_cast<int>(DType::UINT64); ++i)
    if (s == dtype_trace_name(static_cast<DType>(i))) return static_cast<DType>(i);
  return std::nullopt;
}
inline const char* dtype_names_list() {
  return "fp32, fp16, bf16, int8, int16, int32, int64, uint8, uint16, uint32, uint64";
}

}  // namespace npusim
