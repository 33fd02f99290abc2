#include "models/runtime/ring.h"

#include <algorithm>

namespace npusim {

Task& SlotStore::emplace(std::uint64_t local) {
  std::uint64_t chunk = local >> kBits;
  if (live_ == 0) first_chunk_ = chunk;
  while (first_chunk_ + live_ <= chunk) {
    if (live_ == chunks_.size()) grow();
    std::unique_ptr<Task[]>& c = chunks_[(first_chunk_ + live_) & mask_];
    if (!spare_.empty()) {
      c = std::move(spare_.back());
      spare_.pop_back();
    } else {
      c.reset(new Task[kChunk]);
    }
    ++live_;
  }
  return at(local);
}

void SlotStore::grow() {
  std::vector<std::unique_ptr<Task[]>> bigger(chunks_.empty() ? 4 : chunks_.size() * 2);
  const std::uint64_t mask = bigger.size() - 1;
  for (std::uint64_t c = first_chunk_; c < first_chunk_ + live_; ++c) bigger[c & mask] = std::move(chunks_[c & mask_]);
  chunks_.swap(bigger);
  mask_ = mask;
}

void SlotStore::release_below(std::uint64_t tail) {
  std::uint64_t keep_from = tail >> kBits;
  while (live_ > 0 && first_chunk_ < keep_from) {
    spare_.push_back(std::move(chunks_[first_chunk_ & mask_]));
    ++first_chunk_;
    --live_;
  }
  if (live_ == 0) first_chunk_ = keep_from;
  // Keep at most a couple of spare chunks: memory follows the live window.
  while (spare_.size() > 2) spare_.pop_back();
}

void Ring::init(int index, std::uint64_t window, std::uint64_t heap_bytes, std::uint64_t dep_pool,
                bool whole_graph) {
  index_ = index;
  window_ = window;
  window_mask_ = window > 1 && (window & (window - 1)) == 0 ? window - 1 : 0;
  heap_cap_ = heap_bytes;
  dep_cap_ = dep_pool;
  whole_graph_ = whole_graph;
}

Task& Ring::take_slot() {
  Task& t = slots_.emplace(head_);
  t.reset_for_reuse();
  t.ring = index_;
  t.id = make_task_id(index_, head_);
  ++head_;
  return t;
}

void Ring::release_memory() {
  while (!held_.empty() && slots_.at(held_.front()).self_released) held_.pop_front();
  slots_.release_below(held_.empty() ? tail_ : std::min(tail_, held_.front()));
}

bool Ring::heap_plan(HeapState& s, std::uint64_t size, HeapBlock& out) const {
  if (size == 0) {  // zero-output tasks record base == end == current top
    out.begin = out.end = s.top;
    out.end_unwrapped = s.wraps_top * heap_cap_ + s.top;
    return true;
  }
  if (whole_graph_) {  // forward-only bump, no wrap (host_build_graph try_bump_heap)
    if (heap_cap_ - s.top < size) return false;
    out.begin = s.top;
    s.top += size;
    out.end = s.top;
    out.end_unwrapped = s.top;
    return true;
  }
  if (s.top >= s.tail) {
    if (s.top + size <= heap_cap_) {      // fits at the end: bump
      out.begin = s.top;
      s.top += size;
    } else if (s.tail > size) {           // wrap to offset 0; the end gap is wasted
      ++s.wraps_top;
      out.begin = 0;
      s.top = size;
    } else if (s.top == s.tail && size <= heap_cap_) {  // empty: rebase to 0
      ++s.wraps_top;
      s.tail = 0;
      s.tail_unwrapped = s.wraps_top * heap_cap_;
      out.begin = 0;
      s.top = size;
    } else {
      return false;
    }
  } else if (s.tail - s.top > size) {     // strict: top never reaches tail from below
    out.begin = s.top;
    s.top += size;
  } else {
    return false;
  }
  out.end = s.top;
  out.end_unwrapped = s.wraps_top * heap_cap_ + s.top;
  return true;
}

bool Ring::heap_try_alloc(std::uint64_t size, HeapBlock& out) {
  HeapState s = heap_;
  if (!heap_plan(s, size, out)) return false;
  heap_ = s;
  return true;
}

bool Ring::heap_refresh_tail() {
  if (last_retired_heap_end_unwrapped_ <= heap_.tail_unwrapped) return false;
  heap_.tail = last_retired_heap_end_;
  heap_.tail_unwrapped = last_retired_heap_end_unwrapped_;
  return true;
}

void Ring::set_dep_mark(Task& t, std::uint64_t mark) {
  t.dep_pool_mark = mark;
  const std::uint64_t local = t.id & 0xffffffffull;
  const std::uint64_t s = slot_of(local);
  if (s >= dep_marks_.size()) {
    // Grown by doubling (up to the window), not by one slot per new id: a
    // slot not yet written reads 0 either way (slot_dep_mark).
    std::size_t n = std::max<std::size_t>(s + 1, 2 * dep_marks_.size());
    if (window_ > 0) n = std::min<std::size_t>(n, std::max<std::size_t>(s + 1, window_));
    dep_marks_.resize(n, 0);
  }
  dep_marks_[s] = mark;
}

bool Ring::dep_reclaim(std::uint64_t interval) {
  if (tail_ == 0 || tail_ < dep_reclaim_watermark_ + interval) return false;
  dep_reclaim_watermark_ = tail_;
  if (last_retired_dep_mark_ == 0 || last_retired_dep_mark_ <= dep_tail_) return false;
  dep_tail_ = last_retired_dep_mark_;
  return true;
}

}  // namespace npusim
