// One task slot of a ring (PTO2TaskSlotState, simpler's
// tensormap_and_ringbuffer pto_runtime2_types.h): identity, state,
// refcounts, edges, heap block, and what the scheduler needs to run it.
//
// Slots are recycled when the ring's watermark passes them; their vectors keep
// their capacity, so a program in steady state allocates no memory per task.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/common/kernel.h"
#include "models/common/time.h"
#include "models/runtime/orch_ops.h"
#include "models/runtime/tensor.h"

namespace npusim {

enum class TaskState : std::uint8_t { Pending = 0, Completed = 1, Consumed = 2 };

constexpr std::uint32_t kFanoutScopeBit = 0x80000000u;  // PTO2_FANOUT_SCOPE_BIT

enum DepFlags : std::uint8_t { kDepWait = 1, kDepRetain = 2 };

enum class EdgeSource : std::uint8_t { Explicit, Creator, Tensormap };

inline const char* edge_source_name(EdgeSource s) {
  switch (s) {
    case EdgeSource::Explicit: return "explicit";
    case EdgeSource::Creator: return "creator";
    case EdgeSource::Tensormap: return "tensormap";
  }
  return "?";
}

enum class TaskKind : std::uint8_t { Kernel, Alloc, Dummy };

struct FaninRef {
  TaskId producer;
  std::uint8_t flags;  // DepFlags
};

// Where one block (sub-task) ran, for the output writers.
struct BlockRecord {
  int core = -1;
  int block_idx = 0;
  int lane = 0;
  std::uint32_t token = 0;       // reg_task_id (dispatch token)
  // A moment that has not come (yet) is kNever: a block still in a core's
  // pending slot has no receive, one stuck at a barrier no end.
  Time dispatch = 0;             // AICPU timestamp after wmb, before the DMB store
  Time receive = kNever;         // AICore read the token
  Time start = kNever;           // kernel start (after setup and ACK)
  Time end = kNever;             // kernel return, FIN written (set ahead when the rest of the kernel is local)
  Time finish = kNever;          // AICPU observed the FIN
  int thread = -1;               // scheduler thread that dispatched it
  bool gated = false;            // early-dispatched: waits for the doorbell
  bool doorbell = false;         // its doorbell has been rung
  Time release = kNever;         // gated: the doorbell store (the dispatch that matters)
  int release_thread = -1;       // gated: the thread that rang it
  std::uint32_t seq = 0;         // the task's records in dispatch order: 0, 1, ...
};

// The blocks of a task that have finished, summed up (what the summary and
// task_stats.csv need), so that a task keeps the records of its blocks in
// flight only. A moment no block reached is kNever (last_start, last_end
// included: 0 is a time, never "missing").
struct BlockTimes {
  std::uint32_t count = 0, started = 0, ended = 0;  // records; of those, started and ended
  Time first_dispatch = kNever, first_release = kNever, first_start = kNever;
  Time last_start = kNever, last_end = kNever;
  TimeSum busy = 0;  // kernel time (end - start) of the blocks that ended; a block still on its core counts up to `until`
  Time first_receive = kNever;  // the earliest receive (the first record in dispatch order on a tie) ...
  int first_receive_core = -1;  // ... and its core
  std::uint32_t first_receive_seq = 0;

  static Time later(Time a, Time b) { return a == kNever ? b : b == kNever ? a : std::max(a, b); }

  // `until`: the moment the run stopped (kNever: it ran to its end); a
  // record's moments after it had not come when the device stopped.
  void add(const BlockRecord& r, Time until = kNever) {
    BlockRecord b = r;
    if (until != kNever)
      for (Time* t : {&b.receive, &b.start, &b.end, &b.finish, &b.release})
        if (*t != kNever && *t > until) *t = kNever;
    ++count;
    first_dispatch = std::min(first_dispatch, b.dispatch);
    first_release = std::min(first_release, b.gated ? b.release : b.dispatch);
    first_start = std::min(first_start, b.start);
    if (b.start != kNever) last_start = later(last_start, b.start), ++started;
    if (b.end != kNever) last_end = later(last_end, b.end), ++ended;
    if (b.start != kNever && b.end != kNever && b.end > b.start) busy += b.end - b.start;
    else if (b.start != kNever && b.end == kNever && until != kNever) busy += span(b.start, until);
    if (b.receive != kNever && (first_receive_core < 0 || b.receive < first_receive ||
                                (b.receive == first_receive && b.seq < first_receive_seq))) {
      first_receive = b.receive;
      first_receive_core = b.core;
      first_receive_seq = b.seq;
    }
  }
};

// An optional whose value lives on the heap, its storage kept when it is
// reset (a task slot is reused): a field that few tasks set does not widen
// every slot.
template <class T>
class BoxedOptional {
 public:
  BoxedOptional() = default;
  BoxedOptional(const BoxedOptional& o) { *this = o; }
  // A move takes the box (a Task in a growing vector moves, not copies).
  BoxedOptional(BoxedOptional&& o) noexcept : box_(std::move(o.box_)), engaged_(o.engaged_) { o.engaged_ = false; }
  BoxedOptional& operator=(BoxedOptional&& o) noexcept {
    box_ = std::move(o.box_);
    engaged_ = o.engaged_;
    o.engaged_ = false;
    return *this;
  }
  BoxedOptional& operator=(const BoxedOptional& o) {
    if (o)
      emplace(*o);
    else
      reset();
    return *this;
  }
  BoxedOptional& operator=(const std::optional<T>& o) {
    if (o)
      emplace(*o);
    else
      reset();
    return *this;
  }
  explicit operator bool() const { return engaged_; }
  bool has_value() const { return engaged_; }
  const T& operator*() const { return *box_; }
  T& operator*() { return *box_; }
  const T* operator->() const { return box_.get(); }
  T* operator->() { return box_.get(); }
  void reset() { engaged_ = false; }
  void emplace(const T& v) {
    if (box_)
      *box_ = v;
    else
      box_ = std::make_unique<T>(v);
    engaged_ = true;
  }

 private:
  std::unique_ptr<T> box_;
  bool engaged_ = false;
};

struct alignas(64) Task {  // a slot starts on a cache line
  // The slot's fields in cache lines (64 bytes each): what a completion reads
  // of each consumer it visits and a release of each producer (state, the
  // readiness and lifetime counts, the flags routing a ready task) is in
  // the first line, the scheduling progress in the second, the lists and
  // times after, the rarely set fields last.
  TaskId id = kNoTask;
  TaskState state = TaskState::Pending;
  TaskKind kind = TaskKind::Kernel;
  Shape shape = Shape::DUMMY;
  std::uint8_t active_mask = 0;
  // Early dispatch (§5.8).
  enum class Early : std::uint8_t { None, Staging, Released };
  Early early = Early::None;
  bool ready_claimed = false;
  bool self_released = false;    // its own on_task_release has run
  bool sync_start = false;       // the attribute: requested and block_num > 1
  bool early_resolve = false;
  bool manual_scope = false;     // submitted inside a manual scope
  bool predicate_false = false;  // evaluated false when it became ready
  bool published = false;        // every block placed and launch-visible
  bool all_flagged = false;      // every WAIT producer carries allow_early_resolve
  // One of the rarely set fields at the slot's end (predicate, writes, site,
  // wake, all_consumers) may be set: the runtime sets this where it writes
  // them; readers on the hot paths test it first, and a slot's reuse clears
  // them only then.
  bool cold = false;
  int ring = 0;
  int block_num = 1;

  // Readiness (fanin) and lifetime (fanout) accounting, §2.3-2.4.
  std::uint32_t fanin_count = 0;
  std::uint32_t fanin_refcount = 0;
  std::uint32_t fanout_count = 0;
  std::uint32_t fanout_refcount = 0;
  const KernelDef* kernel = nullptr;
  // Bit i: the scope's set_cache_policy makes argument i BYPASS for every
  // load that names no `cache` of its own (docs/gm.md "Cache policy").
  // Arguments 0 to kBypassArgs - 1 only: a platform may allow more arguments
  // (max_tensor_args up to 1024), and those have no bit.
  std::uint32_t scope_bypass = 0;
  static constexpr std::size_t kBypassArgs = 32;
  std::uint32_t wait_edges = 0;      // WAIT fanin edges kept at wiring

  // Scheduling progress.
  std::uint32_t dispatch_fanin = 0;  // WAIT producers completed or fully published
  int next_block = 0;                // blocks claimed so far
  std::uint32_t total_subtasks = 0;  // block_num x popcount(active_mask)
  std::uint32_t completed_subtasks = 0;
  int dispatch_ops = 0;              // dispatch operations (pops) that placed blocks
  int staged_blocks = 0;             // blocks placed gated, waiting for the doorbell
  // A sync-start candidate (pto_scheduler.h early_sync_start_queue): one
  // thread owns its staging (early_sync_drain_state OWNER, kept until the
  // slot is reused), READY once its producers released it while owned; its
  // gated cores launch together at the rendezvous: every staged core in a
  // running slot and the producers released (maybe_rendezvous_ring).
  int staged_cores = 0;              // gated cores staged (popcount staged_core_mask)
  int running_slot_count = 0;        // of those, the ones in a running slot
  bool sync_owner = false;
  bool sync_ready = false;
  bool launched = false;             // the rendezvous rang the doorbells
  std::uint64_t submit_idx = 0;      // order of submission (all kinds)
  // Timing, filled by the models for the output writers.
  Time ready_time = kNever;
  Time complete_time = kNever;  // COMPLETED (last FIN observed / inline retire)

  std::vector<FaninRef> fanin;       // producers, merged, with flags
  std::vector<TaskId> fanout;        // consumers waiting on this task (dep-pool entries)
  Time submit_start = kNever, submit_end = kNever;  // kNever: the submit call has not returned (a failed run)

  std::vector<Tensor> args;      // the views passed to the kernel, in order
  std::vector<ArgTag> arg_tags;
  // Heap block (offsets within the ring's heap, and unwrapped end for stats).
  std::uint64_t heap_begin = 0;
  std::uint64_t heap_end = 0;
  std::uint64_t heap_end_unwrapped = 0;
  std::uint64_t dep_pool_mark = 0;

  // Block records: a block's record lives in `blocks` from its dispatch until
  // the AICPU observes its FIN (the models refer to it by index meanwhile);
  // then it is handed to the observers (on_block_finished), summed up in
  // `finished` and its slot reused. Memory follows the blocks in flight, not
  // block_num.
  std::vector<BlockRecord> blocks;  // a free slot has core -1
  std::vector<int> free_blocks;
  std::uint32_t records = 0;        // records made so far (the next seq)
  BlockTimes finished;

  // Rarely set (see `cold`), kept at the end of the slot.
  BoxedOptional<PredicateSpec> predicate;
  std::vector<WriteSpec> writes;
  std::string site;
  // host_build_graph: the consumers registered on this producer's wake list
  // (pto_scheduler.h register_wake), in registration order; drained newest first.
  std::vector<TaskId> wake;
  std::vector<TaskId> all_consumers; // every consumer that took an edge (outputs' hints)

  // A new record (its seq assigned here); returns its index in `blocks`.
  int add_block(BlockRecord r) {
    r.seq = records++;
    if (free_blocks.empty()) {
      blocks.push_back(r);
      return static_cast<int>(blocks.size()) - 1;
    }
    const int i = free_blocks.back();
    free_blocks.pop_back();
    blocks[static_cast<std::size_t>(i)] = r;
    return i;
  }
  // The block of record `i` has finished: sums it up and frees the slot.
  void block_finished(int i) {
    BlockRecord& r = blocks[static_cast<std::size_t>(i)];
    finished.add(r);
    r = BlockRecord{};
    free_blocks.push_back(i);
  }
  // Finished blocks and those still in flight (a run that ended early:
  // `until` is where it stopped, see BlockTimes::add).
  BlockTimes block_times(Time until = kNever) const {
    BlockTimes t = finished;
    for (const BlockRecord& b : blocks)
      if (b.core >= 0) t.add(b, until);
    return t;
  }
  // block_times() without its copy when no block is in flight (a task
  // retires with its blocks finished): `finished` itself, else `scratch`
  // filled.
  const BlockTimes& block_times(BlockTimes& scratch) const {
    for (const BlockRecord& b : blocks)
      if (b.core >= 0) return scratch = block_times();
    return finished;
  }

  void reset_for_reuse() {
    state = TaskState::Pending;
    kind = TaskKind::Kernel;
    kernel = nullptr;
    shape = Shape::DUMMY;
    active_mask = 0;
    block_num = 1;
    early_resolve = sync_start = manual_scope = false;
    if (cold) {
      predicate.reset();
      writes.clear();
      site.clear();
      wake.clear();
      all_consumers.clear();
      cold = false;
    }
    predicate_false = false;
    args.clear();
    arg_tags.clear();
    fanin_count = fanin_refcount = 0;
    fanout_count = kFanoutScopeBit;
    fanout_refcount = 0;
    fanin.clear();
    fanout.clear();
    ready_claimed = self_released = false;
    heap_begin = heap_end = heap_end_unwrapped = dep_pool_mark = 0;
    next_block = 0;
    total_subtasks = completed_subtasks = 0;
    dispatch_ops = 0;
    published = false;
    early = Early::None;
    all_flagged = false;
    wait_edges = dispatch_fanin = 0;
    staged_blocks = 0;
    sync_owner = sync_ready = launched = false;
    staged_cores = running_slot_count = 0;
    submit_start = submit_end = kNever;
    ready_time = complete_time = kNever;
    blocks.clear();
    free_blocks.clear();
    records = 0;
    finished = BlockTimes{};
  }

  bool is_ready() const { return fanin_refcount >= fanin_count; }
  int blocks_remaining() const { return block_num - next_block; }
};

}  // namespace npusim
