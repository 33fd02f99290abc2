// The global TensorMap (simpler's tensormap_and_ringbuffer pto_tensormap.h): which task last
// wrote which region of which buffer.
//
// One pool of entries for all rings (pto_tensormap.h, PTO2TensorMap). An
// entry is stale when its producer's local id is below the watermark the map
// last synced for that ring (lazy invalidation: the map keeps its own copy,
// refreshed for the submitting ring at every submit and for every ring by a
// forced reclaim, so a producer retired since is still seen as valid, and
// lookups skip stale entries). Entries are physically freed by the periodic
// cleanup of the submitting ring (sync_tensormap: every `cleanup_interval`
// retired tasks, or when the new task's slot is the slot of the last cleanup
// point) or by a forced reclaim of every ring when the pool is short.
//
// Like the runtime, only entries with the consumer's base address are
// compared, and matches come newest first (the runtime inserts at the head of
// the bucket chain). Entries of one address are kept ordered by the first
// element of their view, so a lookup visits only entries whose linear extent
// can reach the consumer's, even when thousands of views of one buffer are live.
// The map's nodes (per address, and per entry of an address with more than
// one live entry: a lone entry is kept in its group, Group::single) come
// from a NodePool that recycles them, so inserts and frees do not reach
// malloc once warm. An
// address whose last entry is freed keeps its (empty) group until the next
// sweep of such groups (TensorMap::erase), so an INOUT argument's submit,
// which removes the entry its own insert puts back, does not drop and make
// the group each time.
//
// The runtime's lookup walks the whole chain of the address's bucket
// (PTO2TensorMap::lookup: PTO2_TENSORMAP_NUM_BUCKETS 4096 buckets, hash() of
// the address), every entry not yet freed, stale ones and other addresses
// of the bucket included. The map counts the entries per bucket, so a lookup
// reports the chain length the device walks (its cost, not its result).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <unordered_map>
#include <vector>

#include "models/common/platform.h"
#include "models/runtime/node_pool.h"
#include "models/runtime/ring.h"
#include "models/runtime/ring_queue.h"
#include "models/runtime/tensor.h"

namespace npusim {

class TensorMap {
 public:
  struct Match {
    TaskId producer;
    Overlap overlap;
    std::uint64_t seq;  // insertion order of the entry
  };

  // `rings`: the runtime's rings, whose watermarks say which producers retired.
  // `cleanup_interval`: PTO2_TENSORMAP_CLEANUP_INTERVAL.
  void init(std::uint64_t capacity, const std::array<Ring, kNumRings>* rings,
            std::uint64_t cleanup_interval);

  static constexpr std::uint32_t kNumBuckets = 4096;  // PTO2_TENSORMAP_NUM_BUCKETS
  // PTO2TensorMap::hash: Fibonacci hashing of the address, top 12 bits.
  static std::uint32_t bucket_of(std::uint64_t addr) {
    return static_cast<std::uint32_t>((addr * 0x9E3779B97F4A7C15ull) >> (64 - 12));
  }

  // What view_overlap(v, v) gives for a view v (an entry's `self`): not
  // known yet, or the Overlap value.
  static constexpr std::uint8_t kSelfUnknown = 0xff;

  // Valid entries of the same buffer overlapping `view`, newest first. With
  // `remove_covered`, entries the view covers are removed (INOUT). Returns
  // the number of entries of the bucket chain the runtime walks. `self`,
  // when given, receives view_overlap(view, view) if the walk met an entry
  // of the very same view (else it is left as it is): the hint for that
  // view's insert.
  std::uint32_t lookup(const Tensor& view, bool remove_covered, std::vector<Match>& out,
                       std::uint8_t* self = nullptr);
  // Registers `producer` as the writer of `view`. Caller ensured capacity.
  // `self`: view_overlap(view, view) if the caller knows it (lookup's hint),
  // else kSelfUnknown.
  void insert(const Tensor& view, TaskId producer, std::uint8_t self = kSelfUnknown);

  // Whether two views are the same for view_overlap: every field it reads
  // (it reads the arrays below ndims only). view_overlap(a, b) is then
  // view_overlap(b, b). The arrays' differences are or-ed, not compared
  // one by one (std::array's == calls memcmp per array).
  static bool same_view(const Tensor& a, const Tensor& b) {
    if (a.addr != b.addr || a.version != b.version || a.ndims != b.ndims || a.dtype != b.dtype ||
        a.strided != b.strided || a.storage_bytes != b.storage_bytes || a.start != b.start)
      return false;
    std::int64_t diff = 0;
    for (int d = 0; d < a.ndims; ++d)
      diff |= (a.offset[d] ^ b.offset[d]) | (a.shape[d] ^ b.shape[d]) | (a.buf_shape[d] ^ b.buf_shape[d]) |
              (a.strides[d] ^ b.strides[d]);
    return diff == 0;
  }

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t in_use() const { return in_use_; }
  bool has_room(std::uint64_t n) const { return in_use_ + n <= capacity_; }

  // At a submit of task `local` on `ring` whose watermark is `alive`
  // (PTO2TensorMap::sync_tensormap): syncs the ring's validity threshold and
  // runs the periodic cleanup when it is due.
  void sync_for_submit(int ring, std::uint64_t local, std::uint64_t alive);
  // Forced reclaim (reclaim_retired_all): syncs every ring's threshold and
  // frees every ring's retired entries. Returns the number of entries freed.
  std::uint64_t reclaim_all(const std::array<std::uint64_t, kNumRings>& alive);
  std::uint64_t freed_total() const { return freed_total_; }

 private:
  struct Entry {
    Tensor view;
    TaskId producer = kNoTask;
    std::uint64_t seq = 0;   // insertion order (lookups return newest first)
    std::int64_t first = 0;  // linear extent of the view, in elements: [first, last]
    std::int64_t last = 0;
    std::uint32_t generation = 0;
    bool used = false;
    // view_overlap(view, view), or kSelfUnknown: a lookup with the very same
    // view (an INOUT accumulator's next submit) takes it instead of the
    // overlap test, and its insert passes it on to the next entry.
    std::uint8_t self = kSelfUnknown;
  };
  struct Ref {
    std::int32_t index;
    std::uint32_t generation;
  };
  // The live entries of one buffer address. A group with one live entry
  // (most of them: an INOUT argument's lookup removes the entry its own
  // insert puts back) keeps it in `single`, outside the tree: no node made,
  // rebalanced and freed per submit. A second insert moves it into the tree
  // first, so the tree holds every entry whenever `single` is empty and its
  // order (by first, then insertion) is the order the entries were made in.
  struct Group {
    explicit Group(std::pmr::memory_resource* pool) : by_first(pool) {}
    std::pmr::multimap<std::int64_t, std::int32_t> by_first;
    std::int64_t max_span = 0;  // max (last - first) ever inserted
    std::int32_t single = -1;   // the one live entry when the tree is empty, else -1
    bool listed = false;        // in emptied_ (listed once until the next drop)
    bool empty() const { return single < 0 && by_first.empty(); }
  };

  bool stale(const Entry& e) const { return task_local(e.producer) < alive_[task_ring(e.producer)]; }
  void erase(std::int32_t e);
  // erase(e) with its group and its node in the group at hand (`in_group`
  // false: erase(e) found no node of the entry to remove).
  void erase_node(std::int32_t e, Group& g, std::pmr::multimap<std::int64_t, std::int32_t>::iterator node,
                  bool in_group);
  // The entry is gone from its group (tree node or `single`): the rest of a free.
  void release_entry(std::int32_t e, Group& g);
  // Overlap of `view` (extent [first, last]) with the live entry `e`,
  // appended to `out` (newest first is sorted by the caller); with
  // `remove_covered` a covered entry is unlinked by `unlink`.
  template <class Unlink>
  void visit(const Tensor& view, bool every, std::int64_t first, std::int32_t e, bool remove_covered,
             std::vector<Match>& out, std::uint8_t* self, Unlink&& unlink);
  // Drops the groups of `emptied_` still without entries.
  void drop_empty_groups();
  // Frees the ring's entries whose producers are below its synced threshold.
  std::uint64_t cleanup_ring(int ring);

  std::uint64_t capacity_ = 0;
  std::uint64_t cleanup_interval_ = 64;
  const std::array<Ring, kNumRings>* rings_ = nullptr;
  std::vector<Entry> entries_;
  std::vector<std::int32_t> free_;
  // Declared before groups_, so it outlives their nodes; on the heap, so a
  // moved map's containers still point at it.
  std::unique_ptr<NodePool> pool_ = std::make_unique<NodePool>();
  std::pmr::unordered_map<std::uint64_t, Group> groups_{pool_.get()};
  std::array<RingQueue<Ref>, kNumRings> order_;  // insertion order per ring
  static constexpr std::size_t kEmptyGroups = 256;
  std::vector<std::uint64_t> emptied_;  // addresses whose group became empty since the last drop
  std::uint64_t in_use_ = 0;
  std::uint64_t freed_total_ = 0;
  std::uint64_t next_seq_ = 0;
  std::array<std::uint64_t, kNumRings> alive_{};         // last_task_alives
  std::array<std::uint64_t, kNumRings> last_cleanup_{};  // last_cleanup
  std::vector<std::uint32_t> bucket_len_ = std::vector<std::uint32_t>(kNumBuckets, 0);  // entries per chain
};

}  // namespace npusim
