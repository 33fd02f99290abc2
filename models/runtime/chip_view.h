// A view as a program holds it in the runtime's own encoding (ChipTensor:
// buffer address and size, dtype, start_offset, shapes and element strides,
// version, owner), made into npusim's Tensor. The trace's strided argument
// form and the orchestration SDK's tensors both come through here, so a
// scene and the trace it records build identical views.
#pragma once

#include <cstdint>

#include "models/runtime/data_store.h"
#include "models/runtime/tensor.h"

namespace npusim {

struct ChipView {
  std::uint64_t byte_offset = 0;  // from the buffer's base address (make_tensor_external inside another buffer)
  DType dtype = DType::FP32;
  std::int64_t numel = 0;         // elements of `dtype` from the (offset) base: buffer.size / element size
  int ndims = 1;
  std::int64_t shape[kMaxDims] = {};
  std::int64_t strides[kMaxDims] = {};  // elements
  std::int64_t start = 0;               // start_offset, elements
  std::uint32_t version = 0;
  TaskId owner = kNoTask;
};

// `buffer` is any view of the buffer the view lies in (its addr, buffer id
// and dtype are used). A view at a byte offset is another buffer address for
// the tensormap (the runtime keys it by address) but the same data: its
// elements are read and written through an alias of the buffer, counted in
// the buffer's own element size.
inline Tensor make_chip_view(DataStore& data, const Tensor& buffer, const ChipView& v) {
  Tensor base;
  base.addr = buffer.addr + v.byte_offset;
  base.buffer = v.byte_offset ? data.alias(buffer.buffer, static_cast<std::int64_t>(v.byte_offset) /
                                                              dtype_bytes(buffer.dtype))
                              : buffer.buffer;
  base.dtype = v.dtype;
  base.owner = v.owner;
  base.version = v.version;
  return view_from_strides(base, v.numel, v.ndims, v.shape, v.strides, v.start);
}

// The ChipTensor encoding of a view (the inverse of make_chip_view for a view
// of `buffer` at offset `byte_offset`).
inline ChipView chip_view_of(const Tensor& t, std::uint64_t byte_offset) {
  ChipView v;
  v.byte_offset = byte_offset;
  v.dtype = t.dtype;
  v.numel = t.buffer_numel();
  v.ndims = t.ndims;
  for (int d = 0; d < t.ndims; ++d) {
    v.shape[d] = t.shape[d];
    v.strides[d] = t.stride(d);
  }
  v.start = t.start_offset();
  v.version = t.version;
  v.owner = t.owner;
  return v;
}

}  // namespace npusim
