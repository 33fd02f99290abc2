// Tensors as the runtime sees them: a buffer in GM and a view of it.
//
// Every view of one buffer keeps the buffer's rank and row-major strides, so
// two views of the same buffer are compared exactly as hyper-rectangles
// (runtime-semantics.md §4.2). `owner` is the task that created the buffer
// (OUTPUT or alloc_tensors result); external tensors have none.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "models/common/dtype.h"

namespace npusim {

using TaskId = std::uint64_t;  // (ring << 32) | local_id
constexpr TaskId kNoTask = ~0ull;

inline int task_ring(TaskId id) { return static_cast<int>(id >> 32); }
inline std::uint32_t task_local(TaskId id) { return static_cast<std::uint32_t>(id); }
inline TaskId make_task_id(int ring, std::uint64_t local) {
  return (static_cast<TaskId>(ring) << 32) | (local & 0xffffffffull);
}
// The runtime's display form: t<local> on ring 0, r<ring>t<local> otherwise.
inline std::string task_display(TaskId id) {
  int r = task_ring(id);
  return (r == 0 ? std::string("t") : "r" + std::to_string(r) + "t") +
         std::to_string(task_local(id));
}

constexpr int kMaxDims = 5;

struct Tensor {
  std::uint64_t addr = 0;       // buffer base address in GM
  std::int32_t buffer = -1;     // buffer id (index into the data store / names)
  DType dtype = DType::FP32;
  std::uint8_t ndims = 0;
  std::array<std::int64_t, kMaxDims> buf_shape{};  // the whole buffer, row-major
  std::array<std::int64_t, kMaxDims> offset{};     // view origin, per dim
  std::array<std::int64_t, kMaxDims> shape{};      // view extent, per dim
  TaskId owner = kNoTask;       // creator task (OUTPUT / alloc_tensors), else none
  std::uint32_t version = 0;

  std::int64_t buffer_numel() const {
    std::int64_t n = 1;
    for (int d = 0; d < ndims; ++d) n *= buf_shape[d];
    return n;
  }
  std::int64_t view_numel() const {
    std::int64_t n = 1;
    for (int d = 0; d < ndims; ++d) n *= shape[d];
    return n;
  }
  std::int64_t stride(int d) const {  // in elements
    std::int64_t s = 1;
    for (int k = d + 1; k < ndims; ++k) s *= buf_shape[k];
    return s;
  }
  std::int64_t start_offset() const {  // first element of the view, linear
    std::int64_t o = 0;
    for (int d = 0; d < ndims; ++d) o += offset[d] * stride(d);
    return o;
  }
  std::uint64_t buffer_bytes() const {
    return static_cast<std::uint64_t>(buffer_numel()) * dtype_bytes(dtype);
  }
  // Whole-buffer view of the same buffer.
  bool is_whole() const {
    for (int d = 0; d < ndims; ++d)
      if (offset[d] != 0 || shape[d] != buf_shape[d]) return false;
    return true;
  }
};

enum class Overlap : std::uint8_t { None, Covered, Other };

// Overlap of a consumer view with a producer's registered view of the same
// buffer: None when disjoint, Covered when the consumer's view contains the
// producer's entry, Other otherwise.
inline Overlap view_overlap(const Tensor& consumer, const Tensor& producer) {
  if (consumer.addr != producer.addr) return Overlap::None;
  if (consumer.ndims != producer.ndims || consumer.dtype != producer.dtype ||
      consumer.version != producer.version)
    return Overlap::Other;
  bool covered = true;
  for (int d = 0; d < consumer.ndims; ++d) {
    std::int64_t c0 = consumer.offset[d], c1 = c0 + consumer.shape[d];
    std::int64_t p0 = producer.offset[d], p1 = p0 + producer.shape[d];
    if (c1 <= p0 || p1 <= c0) return Overlap::None;
    if (!(c0 <= p0 && p1 <= c1)) covered = false;
  }
  return covered ? Overlap::Covered : Overlap::Other;
}

}  // namespace npusim
