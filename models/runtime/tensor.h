// Tensors as the runtime sees them: a buffer in GM and a view of it.
//
// A view is a box of a row-major layout of its buffer (`buf_shape`, the
// runtime's reference shape derived from the view's strides), so two views of
// one buffer in the same layout are compared exactly as hyper-rectangles
// (simpler's tensormap_and_ringbuffer pto_tensormap.h). A view the runtime cannot see as such a box
// (a transpose, a permute) is `strided`: it keeps its element strides and is
// compared by its linear extent only. `owner` is the task that created the
// buffer (OUTPUT or alloc_tensors result); external tensors have none.
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
  // Not a box of a row-major layout: element i of the view is at
  // start + sum(i[d] * strides[d]); buf_shape is {buffer elements, 1, ...}.
  bool strided = false;
  std::int64_t start = 0;
  std::array<std::int64_t, kMaxDims> strides{};
  // The ChipTensor's buffer.size when it exceeds the buffer's elements: a
  // runtime-allocated OUTPUT is padded to packed_output_align
  // (pto_orchestrator.cpp calculate_output_layout, PTO2TaskPayload::init);
  // 0 means buffer_bytes(). Views of the buffer keep it.
  std::uint64_t storage_bytes = 0;

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
    if (strided) return strides[d];
    std::int64_t s = 1;
    for (int k = d + 1; k < ndims; ++k) s *= buf_shape[k];
    return s;
  }
  // stride(d) of every dimension d < ndims, in one pass from the last
  // dimension (stride(d) alone multiplies the extents after d each time: the
  // tensormap's overlap tests took most of their time there). The same
  // products of the same integers, so the same values.
  void strides_into(std::array<std::int64_t, kMaxDims>& s) const {
    if (strided) {
      s = strides;
      return;
    }
    std::int64_t acc = 1;
    for (int d = ndims - 1; d >= 0; --d) {
      s[d] = acc;
      if (d > 0) acc *= buf_shape[d];
    }
  }
  std::int64_t start_offset() const {  // first element of the view, linear
    if (strided) return start;
    std::array<std::int64_t, kMaxDims> s;
    strides_into(s);
    return start_offset(s);
  }
  // start_offset() with the strides already at hand (strides_into).
  std::int64_t start_offset(const std::array<std::int64_t, kMaxDims>& s) const {
    if (strided) return start;
    std::int64_t o = 0;
    for (int d = 0; d < ndims; ++d) o += offset[d] * s[d];
    return o;
  }
  bool empty() const {
    for (int d = 0; d < ndims; ++d)
      if (shape[d] == 0) return true;
    return false;
  }
  // Linear extent of the view in elements, [first, last]; last < first when empty.
  void extent(std::int64_t& first, std::int64_t& last) const {
    std::array<std::int64_t, kMaxDims> s;
    strides_into(s);
    extent(s, first, last);
  }
  // extent() with the strides already at hand (strides_into).
  void extent(const std::array<std::int64_t, kMaxDims>& s, std::int64_t& first, std::int64_t& last) const {
    first = start_offset(s);
    last = first - 1;
    if (empty()) return;
    last = first;
    for (int d = 0; d < ndims; ++d) last += (shape[d] - 1) * s[d];
  }
  std::uint64_t buffer_bytes() const {
    return static_cast<std::uint64_t>(buffer_numel()) * dtype_bytes(dtype);
  }
  // buffer.size / elem_size as check_overlap reads it (the padded storage).
  std::int64_t storage_numel() const {
    return storage_bytes ? static_cast<std::int64_t>(storage_bytes / dtype_bytes(dtype)) : buffer_numel();
  }
  // Whole-buffer view of the same buffer.
  bool is_whole() const {
    if (strided) return false;
    for (int d = 0; d < ndims; ++d)
      if (offset[d] != 0 || shape[d] != buf_shape[d]) return false;
    return true;
  }
};

enum class Overlap : std::uint8_t { None, Covered, Other };

// Overlap of a consumer view with a producer's registered view of the same
// buffer address, step by step as the runtime's
// PTO2TensorMapEntry::check_overlap decides it (pto_tensormap.h):
// 1. a newer version of the buffer overlaps every older entry (Other);
// 2. element ranges [start, start + extent) that do not meet: None. Ranges
//    meet when each ends after the other begins
//    (Segment::line_segment_intersection), so an empty view, the range
//    [s, s) at its start s, meets a range holding s strictly inside it;
// 3. another dtype or rank, different element strides, or strides that are
//    not a row-major layout (last 1, each a multiple of the next): Other;
// 4. the reference shape of that layout, its first extent taken from the
//    CONSUMER's buffer.size (its storage in elements / strides[0], which must
//    divide; a runtime-allocated output's storage is padded to 1024 B, so a
//    padded element count strides[0] does not divide makes every overlap of
//    the extents Other, disjoint boxes included);
//    either start offset not on the layout's grid, or either box beyond the
//    reference shape: Other;
// 5. the two boxes per dimension: None if one dimension is disjoint,
//    Covered if the consumer's box contains the producer's, else Other.
// Every step reads the views as ChipTensors (start offset, shapes, strides),
// so a producer registered over a buffer of another size (a "numel" view)
// is compared in the consumer's layout, as on the device.
inline Overlap view_overlap(const Tensor& consumer, const Tensor& producer) {
  if (consumer.addr != producer.addr) return Overlap::None;
  if (consumer.version > producer.version) return Overlap::Other;
  std::int64_t c_first, c_last, p_first, p_last;  // [first, last + 1); last = first - 1 when empty
  std::array<std::int64_t, kMaxDims> stride, p_stride, ref{};  // each view's stride(d), d < its ndims
  consumer.strides_into(stride);
  producer.strides_into(p_stride);
  consumer.extent(stride, c_first, c_last);
  producer.extent(p_stride, p_first, p_last);
  if (c_last < p_first || p_last < c_first) return Overlap::None;
  const int n = consumer.ndims;
  if (consumer.dtype != producer.dtype || n != producer.ndims || n == 0) return Overlap::Other;
  for (int d = 0; d < n; ++d)
    if (stride[d] <= 0 || stride[d] != p_stride[d]) return Overlap::Other;
  if (stride[n - 1] != 1) return Overlap::Other;
  for (int d = 1; d < n; ++d) {
    if (stride[d - 1] % stride[d] != 0) return Overlap::Other;
    ref[d] = stride[d - 1] / stride[d];
  }
  const std::int64_t storage = consumer.storage_numel();
  if (storage % stride[0] != 0) return Overlap::Other;
  ref[0] = storage / stride[0];
  std::int64_t c_rest = c_first, p_rest = p_first;
  std::array<std::int64_t, kMaxDims> c_off{}, p_off{};
  for (int d = 0; d < n; ++d) {
    c_off[d] = c_rest / stride[d];
    p_off[d] = p_rest / stride[d];
    c_rest %= stride[d];
    p_rest %= stride[d];
  }
  if (c_rest != 0 || p_rest != 0) return Overlap::Other;
  for (int d = 0; d < n; ++d)
    if (c_off[d] + consumer.shape[d] > ref[d] || p_off[d] + producer.shape[d] > ref[d]) return Overlap::Other;
  bool covered = true;
  for (int d = 0; d < n; ++d) {
    const std::int64_t c0 = c_off[d], c1 = c0 + consumer.shape[d];
    const std::int64_t p0 = p_off[d], p1 = p0 + producer.shape[d];
    if (c1 <= p0 || p1 <= c0) return Overlap::None;
    if (!(c0 <= p0 && p1 <= c1)) covered = false;
  }
  return covered ? Overlap::Covered : Overlap::Other;
}

// A view given as the runtime's ChipTensor encodes it (start_offset, shapes,
// element strides, over a buffer of `buffer_elems` elements), in npusim's
// form: a box of the reference layout the strides imply when there is one
// (the runtime's check_overlap derives it the same way: A[i] = strides[i-1] /
// strides[i], A[0] = buffer elements / strides[0]), else a strided view.
// `base` supplies addr, buffer, dtype, owner and version.
inline Tensor view_from_strides(const Tensor& base, std::int64_t buffer_elems, int ndims, const std::int64_t* shape,
                                const std::int64_t* strides, std::int64_t start) {
  Tensor t = base;
  t.ndims = static_cast<std::uint8_t>(ndims);
  t.strided = false;
  t.start = 0;
  t.strides = {};
  t.offset = {};
  t.buf_shape = {};
  t.shape = {};
  for (int d = 0; d < ndims; ++d) t.shape[d] = shape[d];
  bool box = ndims > 0 && strides[ndims - 1] == 1 && buffer_elems > 0;
  for (int d = 0; box && d < ndims; ++d) box = strides[d] > 0 && (d == 0 || strides[d - 1] % strides[d] == 0);
  if (box) box = buffer_elems % strides[0] == 0;
  if (box) {
    t.buf_shape[0] = buffer_elems / strides[0];
    for (int d = 1; d < ndims; ++d) t.buf_shape[d] = strides[d - 1] / strides[d];
    std::int64_t rest = start;
    for (int d = 0; d < ndims; ++d) {
      t.offset[d] = rest / strides[d];
      rest %= strides[d];
    }
    box = rest == 0 && start >= 0;
    for (int d = 0; box && d < ndims; ++d) box = t.offset[d] + shape[d] <= t.buf_shape[d];
  }
  if (box) return t;
  t.strided = true;
  t.start = start;
  t.offset = {};
  t.buf_shape = {};
  t.buf_shape[0] = buffer_elems;
  for (int d = 1; d < ndims; ++d) t.buf_shape[d] = 1;
  for (int d = 0; d < ndims; ++d) t.strides[d] = strides[d];
  return t;
}

}  // namespace npusim
