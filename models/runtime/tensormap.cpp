#include "models/runtime/tensormap.h"

namespace npusim {

void TensorMap::init(std::uint64_t capacity, bool unbounded, RetiredFn retired) {
  capacity_ = capacity;
  unbounded_ = unbounded;
  retired_ = std::move(retired);
  heads_.fill(-1);
}

void TensorMap::lookup(const Tensor& view, bool remove_covered, std::vector<Match>& out) {
  std::int32_t e = heads_[bucket_of(view.addr)];
  while (e >= 0) {
    Entry& en = entries_[e];
    std::int32_t next = en.next;
    if (en.view.addr == view.addr && !stale(en)) {
      Overlap ov = view_overlap(view, en.view);
      if (ov != Overlap::None) {
        out.push_back(Match{en.producer, ov, en.view});
        if (remove_covered && ov == Overlap::Covered) unlink_and_free(e);
      }
    }
    e = next;
  }
}

void TensorMap::insert(const Tensor& view, TaskId producer) {
  std::int32_t e;
  if (!free_.empty()) {
    e = free_.back();
    free_.pop_back();
  } else {
    e = static_cast<std::int32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& en = entries_[e];
  en.view = view;
  en.producer = producer;
  en.used = true;
  int b = bucket_of(view.addr);
  en.prev = -1;
  en.next = heads_[b];
  if (en.next >= 0) entries_[en.next].prev = e;
  heads_[b] = e;
  order_[task_ring(producer)].push_back(Ref{e, en.generation});
  ++in_use_;
}

void TensorMap::unlink_and_free(std::int32_t e) {
  Entry& en = entries_[e];
  if (en.prev >= 0)
    entries_[en.prev].next = en.next;
  else
    heads_[bucket_of(en.view.addr)] = en.next;
  if (en.next >= 0) entries_[en.next].prev = en.prev;
  en.used = false;
  en.next = en.prev = -1;
  ++en.generation;  // invalidates references in order_
  free_.push_back(e);
  --in_use_;
  ++freed_total_;
}

std::uint64_t TensorMap::cleanup_ring(int ring) {
  std::uint64_t freed = 0;
  auto& q = order_[ring];
  while (!q.empty()) {
    Ref r = q.front();
    Entry& en = entries_[r.index];
    if (!en.used || en.generation != r.generation) {  // already freed (INOUT cover)
      q.pop_front();
      continue;
    }
    if (!stale(en)) break;  // FIFO per ring: younger entries are live too
    q.pop_front();
    unlink_and_free(r.index);
    ++freed;
  }
  return freed;
}

std::uint64_t TensorMap::reclaim_all() {
  std::uint64_t freed = 0;
  for (int r = 0; r < kNumRings; ++r) freed += cleanup_ring(r);
  return freed;
}

}  // namespace npusim
