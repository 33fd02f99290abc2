// Element values of tensors, where the program needs them: `read`
// (get_tensor_data), predicates, and the `writes` a task applies when it
// completes. Storage is sparse: a buffer costs nothing until a value is
// written; unwritten elements read as the buffer's fill (0 by default).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
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

  // A buffer id for the elements of `buffer` from `element_offset` on: an
  // external tensor made over another's memory (make_tensor_external at an
  // address inside it). Reads and writes go to the original buffer.
  std::int32_t alias(std::int32_t buffer, std::int64_t element_offset) {
    resolve(buffer, element_offset);
    if (element_offset == 0) return buffer;
    auto key = std::make_pair(buffer, element_offset);
    auto it = aliases_.find(key);
    if (it != aliases_.end()) return it->second;
    std::int32_t id = next_id_++;
    Buffer& b = buffers_[id];
    b.alias_of = buffer;
    b.alias_offset = element_offset;
    aliases_.emplace(key, id);
    return id;
  }

  // The buffer an alias stands for and its element offset (a buffer that is
  // no alias: itself and 0).
  std::pair<std::int32_t, std::int64_t> original(std::int32_t buffer) const {
    std::int64_t offset = 0;
    resolve(buffer, offset);
    return {buffer, offset};
  }

  std::int64_t get(std::int32_t buffer, std::int64_t element) const {
    resolve(buffer, element);
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) return 0;
    const Buffer& b = it->second;
    auto w = b.written.find(element);
    if (w != b.written.end()) return w->second;
    if (element >= 0 && static_cast<size_t>(element) < b.dense.size()) return b.dense[element];
    return b.fill;
  }

  void set(std::int32_t buffer, std::int64_t element, std::int64_t value) {
    resolve(buffer, element);
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
    std::int32_t alias_of = -1;  // an alias: elements of that buffer from alias_offset on
    std::int64_t alias_offset = 0;
  };
  struct PairHash {
    std::size_t operator()(const std::pair<std::int32_t, std::int64_t>& p) const {
      return std::hash<std::int64_t>()(p.second * 1000003 + p.first);
    }
  };
  void resolve(std::int32_t& buffer, std::int64_t& element) const {
    auto it = buffers_.find(buffer);
    if (it != buffers_.end() && it->second.alias_of >= 0) {  // aliases never chain (alias() resolves first)
      element += it->second.alias_offset;
      buffer = it->second.alias_of;
    }
  }
  std::unordered_map<std::int32_t, Buffer> buffers_;
  std::unordered_map<std::pair<std::int32_t, std::int64_t>, std::int32_t, PairHash> aliases_;
  std::int32_t next_id_ = 0;
  std::uint64_t next_external_ = kExternalBase;
};

}  // namespace npusim
