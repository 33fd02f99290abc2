// Element values of tensors, where the program needs them: `read`
// (get_tensor_data), predicates, and the `writes` a task applies when it
// completes. Storage is sparse: a buffer costs nothing until a value is
// written; unwritten elements read as the buffer's fill (0 by default).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/common/dtype.h"
#include "models/runtime/tensor.h"

namespace npusim {

class DataStore {
 public:
  // GM address range of external tensors (orchestration arguments).
  static constexpr std::uint64_t kExternalBase = 0x100000000ull;
  static constexpr std::uint64_t kExternalAlign = 4096;

  // Registers an external tensor: assigns its address and buffer id and
  // returns the whole-buffer view. `data` (row-major) wins over `fill`.
  Tensor add_external(const std::string& name, DType dtype, const std::vector<std::int64_t>& shape,
                      std::int64_t fill, std::vector<std::int64_t> data) {
    Tensor t;
    t.dtype = dtype;
    t.ndims = static_cast<std::uint8_t>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      t.buf_shape[d] = shape[d];
      t.shape[d] = shape[d];
    }
    t.addr = next_external_;
    std::uint64_t bytes = t.buffer_bytes();
    next_external_ += (bytes + kExternalAlign - 1) / kExternalAlign * kExternalAlign;
    if (bytes == 0) next_external_ += kExternalAlign;
    t.buffer = new_buffer(name, fill);
    Buffer& b = buffers_[t.buffer];
    b.dense = std::move(data);
    return t;
  }

  // A fresh buffer id (heap outputs use this too); named for messages.
  std::int32_t new_buffer(const std::string& name, std::int64_t fill = 0) {
    std::int32_t id = next_id_++;
    if (!name.empty() || fill != 0) {
      Buffer& b = buffers_[id];
      b.name = name;
      b.fill = fill;
    }
    return id;
  }

  std::int64_t get(std::int32_t buffer, std::int64_t element) const {
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) return 0;
    const Buffer& b = it->second;
    auto w = b.written.find(element);
    if (w != b.written.end()) return w->second;
    if (element >= 0 && static_cast<size_t>(element) < b.dense.size()) return b.dense[element];
    return b.fill;
  }

  void set(std::int32_t buffer, std::int64_t element, std::int64_t value) {
    buffers_[buffer].written[element] = value;
  }

  // Name of a buffer for messages ("" if it has none).
  std::string name(std::int32_t buffer) const {
    auto it = buffers_.find(buffer);
    return it == buffers_.end() ? std::string() : it->second.name;
  }

 private:
  struct Buffer {
    std::string name;
    std::int64_t fill = 0;
    std::vector<std::int64_t> dense;
    std::unordered_map<std::int64_t, std::int64_t> written;
  };
  std::unordered_map<std::int32_t, Buffer> buffers_;
  std::int32_t next_id_ = 0;
  std::uint64_t next_external_ = kExternalBase;
};

}  // namespace npusim
