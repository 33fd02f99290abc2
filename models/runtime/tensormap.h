// The global TensorMap (runtime-semantics.md §2.7, §4.2): which task last
// wrote which region of which buffer.
//
// One pool of entries for all rings. An entry whose producer has been retired
// (local id below its ring's watermark) is stale: lookups skip it at once, and
// it is physically freed by periodic cleanup (every `cleanup_interval` retired
// tasks of a ring, at submit) or by a forced reclaim when the pool is short.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "models/common/platform.h"
#include "models/runtime/tensor.h"

namespace npusim {

class TensorMap {
 public:
  static constexpr int kBuckets = 4096;

  struct Match {
    TaskId producer;
    Overlap overlap;
    Tensor producer_view;
  };

  // `retired(ring, local)`: has that task's slot been reclaimed?
  using RetiredFn = std::function<bool(TaskId)>;

  void init(std::uint64_t capacity, bool unbounded, RetiredFn retired);

  // Valid entries of the same buffer overlapping `view`, oldest first. With
  // `remove_covered`, entries the view covers are removed (INOUT).
  void lookup(const Tensor& view, bool remove_covered, std::vector<Match>& out);
  // Registers `producer` as the writer of `view`. Caller ensured capacity.
  void insert(const Tensor& view, TaskId producer);

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t in_use() const { return in_use_; }
  bool has_room(std::uint64_t n) const { return unbounded_ || in_use_ + n <= capacity_; }

  // Frees stale entries of one ring (periodic cleanup) or of all rings
  // (forced reclaim). Returns the number of entries freed.
  std::uint64_t cleanup_ring(int ring);
  std::uint64_t reclaim_all();
  std::uint64_t freed_total() const { return freed_total_; }

 private:
  struct Entry {
    Tensor view;
    TaskId producer = kNoTask;
    std::int32_t next = -1, prev = -1;  // bucket chain
    std::uint32_t generation = 0;
    bool used = false;
  };
  struct Ref {
    std::int32_t index;
    std::uint32_t generation;
  };

  static int bucket_of(std::uint64_t addr) {
    return static_cast<int>((addr * 0x9E3779B97F4A7C15ull) >> 52) & (kBuckets - 1);
  }
  void unlink_and_free(std::int32_t e);
  bool stale(const Entry& e) const { return retired_(e.producer); }

  std::uint64_t capacity_ = 0;
  bool unbounded_ = false;
  RetiredFn retired_;
  std::vector<Entry> entries_;
  std::vector<std::int32_t> free_;
  std::array<std::int32_t, kBuckets> heads_{};
  std::array<std::deque<Ref>, kNumRings> order_;  // insertion order per ring
  std::uint64_t in_use_ = 0;
  std::uint64_t freed_total_ = 0;
};

}  // namespace npusim
