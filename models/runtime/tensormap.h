// The global TensorMap (runtime-semantics.md §2.7, §4.2): which task last
// wrote which region of which buffer.
//
// One pool of entries for all rings. An entry whose producer has been retired
// (local id below its ring's watermark) is stale: lookups skip it at once, and
// it is physically freed by periodic cleanup (every `cleanup_interval` retired
// tasks of a ring, at submit) or by a forced reclaim when the pool is short.
//
// Like the runtime, only entries with the consumer's base address are
// compared. Entries of one address are kept ordered by the first element of
// their view, so a lookup visits only entries whose linear extent can reach
// the consumer's, even when thousands of views of one buffer are live.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

#include "models/common/platform.h"
#include "models/runtime/ring.h"
#include "models/runtime/tensor.h"

namespace npusim {

class TensorMap {
 public:
  struct Match {
    TaskId producer;
    Overlap overlap;
    Tensor producer_view;
  };

  // `rings`: the runtime's rings, whose watermarks say which producers retired.
  void init(std::uint64_t capacity, bool unbounded, const std::array<Ring, kNumRings>* rings);

  // Valid entries of the same buffer overlapping `view`, in order of their
  // first element. With `remove_covered`, entries the view covers are removed (INOUT).
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
    std::int64_t first = 0;  // linear extent of the view, in elements: [first, last]
    std::int64_t last = 0;
    std::uint32_t generation = 0;
    bool used = false;
  };
  struct Ref {
    std::int32_t index;
    std::uint32_t generation;
  };
  // The live entries of one buffer address.
  struct Group {
    std::multimap<std::int64_t, std::int32_t> by_first;
    std::int64_t max_span = 0;  // max (last - first) ever inserted
  };

  bool stale(const Entry& e) const {
    return (*rings_)[task_ring(e.producer)].retired(task_local(e.producer));
  }
  void erase(std::int32_t e);

  std::uint64_t capacity_ = 0;
  bool unbounded_ = false;
  const std::array<Ring, kNumRings>* rings_ = nullptr;
  std::vector<Entry> entries_;
  std::vector<std::int32_t> free_;
  std::unordered_map<std::uint64_t, Group> groups_;
  std::array<std::deque<Ref>, kNumRings> order_;  // insertion order per ring
  std::uint64_t in_use_ = 0;
  std::uint64_t freed_total_ = 0;
};

}  // namespace npusim
