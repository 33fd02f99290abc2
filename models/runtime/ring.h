// One of the four rings (simpler's tensormap_and_ringbuffer pto_ring_buffer.h): its task slots
// and FIFO watermark, its heap, its dependency pool and fanin spill pool.
//
// Every capacity rule of a ring lives here; the Runtime decides when to call
// them. A `whole_graph` ring (host_build_graph) is forward-only: the whole
// graph is built before the device runs, so nothing is reclaimed while it is
// built; its ids stop at the window and its heap at the capacity, without
// wrap (host_build_graph pto_ring_buffer.h, PTO2TaskAllocator::alloc), and it
// has no dep pool or spill pool (fanin is capped instead).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "models/runtime/task.h"

namespace npusim {

// Task slots indexed by local id, in chunks with stable addresses; chunks the
// watermark has passed are recycled, so memory follows the live window.
// A chunk is 64 slots (about 37 KB): a ring with a short live window cycles
// through few slots, and each slot keeps the capacity its vectors grew to
// (Task::reset_for_reuse), so memory is what the window needs. 512-slot
// chunks cost the 1M-task bench 2.8 MB of peak memory (docs/architecture.md,
// "Where the peak memory comes from").
// The live chunks sit in a power-of-two ring of chunk pointers indexed by
// chunk number: a slot is found with a mask and two loads (every edge and
// completion looks tasks up), not through a deque's block map.
class SlotStore {
 public:
  Task& at(std::uint64_t local) { return chunks_[(local >> kBits) & mask_][local & (kChunk - 1)]; }
  const Task& at(std::uint64_t local) const { return chunks_[(local >> kBits) & mask_][local & (kChunk - 1)]; }
  // Makes the slot for `local` (the next head) exist.
  Task& emplace(std::uint64_t local);
  // Drops chunks wholly below `tail`.
  void release_below(std::uint64_t tail);

  static constexpr int kBits = 6;
  static constexpr std::uint64_t kChunk = 1ull << kBits;  // slots per chunk

 private:
  void grow();  // doubles the ring, the live chunks kept at their chunk numbers
  // Chunk c (first_chunk_ <= c < first_chunk_ + live_) is chunks_[c & mask_];
  // the other entries are empty.
  std::vector<std::unique_ptr<Task[]>> chunks_;
  std::uint64_t mask_ = 0;
  std::uint64_t live_ = 0;
  std::vector<std::unique_ptr<Task[]>> spare_;
  std::uint64_t first_chunk_ = 0;
};

struct HeapBlock {
  std::uint64_t begin = 0, end = 0;  // offsets in the ring heap
  std::uint64_t end_unwrapped = 0;
};

class Ring {
 public:
  void init(int index, std::uint64_t window, std::uint64_t heap_bytes, std::uint64_t dep_pool,
            bool whole_graph);

  int index() const { return index_; }
  std::uint64_t window() const { return window_; }
  // The slot of local id `local` (local mod window; the id itself with no
  // window): a mask for a power-of-two window, not a 64-bit division.
  std::uint64_t slot_of(std::uint64_t local) const {
    if (window_mask_) return local & window_mask_;
    return window_ ? local % window_ : local;
  }
  std::uint64_t heap_capacity() const { return heap_cap_; }
  std::uint64_t dep_pool_capacity() const { return dep_cap_; }

  // ---- task slots and watermark (§2.5)
  std::uint64_t head() const { return head_; }  // current_task_index
  std::uint64_t tail() const { return tail_; }  // last_task_alive
  std::uint64_t live() const { return head_ - tail_; }
  bool window_has_room() const { return whole_graph_ ? head_ < window_ : head_ - tail_ + 1 < window_; }
  Task& slot(std::uint64_t local) { return slots_.at(local); }
  const Task& slot(std::uint64_t local) const { return slots_.at(local); }
  bool whole_graph() const { return whole_graph_; }
  // The live task with this local id, or nullptr if it was retired / not yet made.
  Task* find(std::uint64_t local) {
    return (local >= tail_ && local < head_) ? &slots_.at(local) : nullptr;
  }
  const Task* find(std::uint64_t local) const {
    return (local >= tail_ && local < head_) ? &slots_.at(local) : nullptr;
  }
  bool retired(std::uint64_t local) const { return local < tail_; }
  // Takes the next slot (caller checked window_has_room).
  Task& take_slot();
  // Walks the watermark over CONSUMED slots; calls `on_retire` for each slot
  // passed (before it is reset). Returns the number of slots retired. A task
  // can be CONSUMED before its own deferred release ran (the scheduler's
  // on_task_release comes later): its slot's memory is kept until then.
  template <class F>
  std::uint64_t advance(F&& on_retire) {
    std::uint64_t n = 0;
    while (tail_ < head_ && slots_.at(tail_).state == TaskState::Consumed) {
      Task& t = slots_.at(tail_);
      on_retire(t);
      last_retired_heap_end_ = t.heap_end;
      last_retired_heap_end_unwrapped_ = t.heap_end_unwrapped;
      last_retired_dep_mark_ = slot_dep_mark(tail_);
      spill_used_ -= spill_of(t.fanin.size());
      if (!t.self_released) held_.push_back(tail_);
      ++tail_;
      ++n;
    }
    if (n) release_memory();
    return n;
  }
  // A retired task's deferred release has run: its slot's memory may go.
  void release_memory();

  // ---- heap (§2.6). Allocation uses the orchestrator's view of the tail,
  // which the allocator refreshes from the watermark at every allocation
  // attempt (pto_ring_buffer.h, PTO2TaskAllocator::alloc -> update_heap_tail).
  bool heap_try_alloc(std::uint64_t size, HeapBlock& out);
  // Would `size` fit now (with the current view of the tail)? No side effects.
  bool heap_fits(std::uint64_t size) const {
    HeapState s = heap_;
    HeapBlock b;
    return heap_plan(s, size, b);
  }
  // Refreshes the heap tail from the last retired task; true if it moved.
  // Tasks retired before an empty-ring rebase do not move it
  // (update_heap_tail's rebase anchor): their ends lie behind the rebased tail.
  bool heap_refresh_tail();
  std::uint64_t heap_top() const { return heap_.top; }
  std::uint64_t heap_tail() const { return heap_.tail; }  // the orchestrator's view, an offset
  std::uint64_t heap_top_unwrapped() const { return heap_.wraps_top * heap_cap_ + heap_.top; }
  std::uint64_t heap_tail_unwrapped() const { return heap_.tail_unwrapped; }
  std::uint64_t heap_used() const { return heap_top_unwrapped() - heap_.tail_unwrapped; }

  // ---- dependency pool (§2.7): linear counters starting at 1; every one of
  // its `capacity` entries is usable (pto_ring_buffer.h, PTO2DepListPool:
  // alloc fails at used >= capacity, ensure_space wants available() >= needed).
  std::uint64_t dep_top() const { return dep_top_; }
  std::uint64_t dep_tail() const { return dep_tail_; }
  std::uint64_t dep_used() const { return dep_top_ - dep_tail_; }
  bool dep_has_room(std::uint64_t n) const {
    return whole_graph_ || dep_top_ - dep_tail_ + n <= dep_cap_;
  }
  void dep_take(std::uint64_t n) {
    dep_top_ += n;
    dep_high_water_ = std::max(dep_high_water_, dep_top_ - dep_tail_);
  }
  std::uint64_t dep_high_water() const { return dep_high_water_; }  // peak top - tail
  // Records a task's dep_pool_mark (the pool top after its wiring). Alloc
  // tasks never write one: their slot keeps the mark of its previous occupant
  // (0 on a fresh slot), as the device's slot state does.
  void set_dep_mark(Task& t, std::uint64_t mark);
  // Reclaim when short (PTO2DepListPool::reclaim): if the watermark moved
  // >= `interval` since the last reclaim, tail -> the dep_pool_mark of task
  // last_task_alive-1 (when that mark is > 0). True if the tail moved.
  bool dep_reclaim(std::uint64_t interval);

  // ---- fanin spill pool (§2.7): fanin edges beyond the inline cap, sized
  // like the dep pool, every entry usable (PTO2FaninPool::ensure_space).
  void set_spill_inline_cap(std::uint64_t cap) { spill_inline_cap_ = cap; }
  // Spill entries a task with `fanin` edges takes: those beyond the inline cap.
  std::uint64_t spill_of(std::uint64_t fanin) const { return fanin > spill_inline_cap_ ? fanin - spill_inline_cap_ : 0; }
  bool spill_has_room(std::uint64_t n) const {
    return whole_graph_ || spill_used_ + n <= dep_cap_;
  }
  void spill_take(std::uint64_t n) {
    spill_used_ += n;
    spill_top_ += n;
    spill_high_water_ = std::max(spill_high_water_, spill_used_);
  }
  // The spill pool's linear counters (starting at 1) and its peak use.
  std::uint64_t spill_top() const { return spill_top_; }
  std::uint64_t spill_tail() const { return spill_top_ - spill_used_; }
  std::uint64_t spill_used() const { return spill_used_; }
  std::uint64_t spill_high_water() const { return spill_high_water_; }

 private:
  int index_ = 0;
  bool whole_graph_ = false;
  std::uint64_t window_ = 0, heap_cap_ = 0, dep_cap_ = 0;
  std::uint64_t window_mask_ = 0;  // window - 1 for a power-of-two window above 1, else 0
  SlotStore slots_;
  std::uint64_t head_ = 0, tail_ = 0;
  std::deque<std::uint64_t> held_;  // retired before their own release ran, oldest first

  struct HeapState {
    std::uint64_t top = 0, tail = 0;  // offsets; top == tail means empty
    std::uint64_t wraps_top = 0;      // times the alloc pointer went back to 0
    std::uint64_t tail_unwrapped = 0;
  };
  // The allocation rule of §2.6 applied to `s`; false if `size` does not fit.
  bool heap_plan(HeapState& s, std::uint64_t size, HeapBlock& out) const;
  HeapState heap_;
  std::uint64_t last_retired_heap_end_ = 0, last_retired_heap_end_unwrapped_ = 0;

  std::uint64_t dep_top_ = 1, dep_tail_ = 1;
  std::uint64_t last_retired_dep_mark_ = 0;
  // dep_pool_mark per slot (local id mod window), kept across slot reuse.
  std::vector<std::uint64_t> dep_marks_;
  std::uint64_t slot_dep_mark(std::uint64_t local) const {
    const std::uint64_t s = slot_of(local);
    return s < dep_marks_.size() ? dep_marks_[s] : 0;
  }
  std::uint64_t dep_reclaim_watermark_ = 0;
  std::uint64_t dep_high_water_ = 0;

  std::uint64_t spill_inline_cap_ = 64;
  std::uint64_t spill_used_ = 0;
  std::uint64_t spill_top_ = 1, spill_high_water_ = 0;
};

}  // namespace npusim
