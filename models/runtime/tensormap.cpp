#include "models/runtime/tensormap.h"

#include <algorithm>

namespace npusim {

void TensorMap::init(std::uint64_t capacity, const std::array<Ring, kNumRings>* rings,
                     std::uint64_t cleanup_interval) {
  capacity_ = capacity;
  cleanup_interval_ = cleanup_interval;
  rings_ = rings;
}

template <class Unlink>
void TensorMap::visit(const Tensor& view, bool every, std::int64_t first, std::int32_t e, bool remove_covered,
                      std::vector<Match>& out, std::uint8_t* self, Unlink&& unlink) {
  Entry& en = entries_[e];
  if ((!every && en.last < first) || stale(en)) return;
  Overlap ov;
  if (same_view(view, en.view)) {
    // The same view as the entry's: its overlap with itself, tested once
    // per chain of such entries (the insert takes the hint), not per lookup.
    if (en.self == kSelfUnknown) en.self = static_cast<std::uint8_t>(view_overlap(view, en.view));
    ov = static_cast<Overlap>(en.self);
    if (self) *self = en.self;
  } else {
    ov = view_overlap(view, en.view);
  }
  if (ov == Overlap::None) return;
  out.push_back(Match{en.producer, ov, en.seq});
  // The walk holds the entry's group and node: no second hash probe and
  // search of the group for them (erase(e) finds both).
  if (remove_covered && ov == Overlap::Covered) unlink();
}

std::uint32_t TensorMap::lookup(const Tensor& view, bool remove_covered, std::vector<Match>& out,
                                std::uint8_t* self) {
  const std::uint32_t walked = bucket_len_[bucket_of(view.addr)];
  // An empty chain holds no entry of this address: most lookups (inputs no
  // task registered) end here, without hashing into groups_.
  if (walked == 0) return walked;
  auto g = groups_.find(view.addr);
  if (g == groups_.end()) return walked;
  Group& grp = g->second;
  const std::size_t before = out.size();
  std::int64_t first, last;
  view.extent(first, last);
  // A newer version of the buffer overlaps every entry (view_overlap); else an
  // entry reaching `first` starts no earlier than first - max_span.
  const bool every = view.version > 0;
  if (grp.single >= 0) {
    // The tree's walk over its one entry: visited when its first is in the
    // walk's range.
    const std::int32_t e = grp.single;
    const std::int64_t f = entries_[e].first;
    if (every || (f >= first - grp.max_span && f <= last))
      visit(view, every, first, e, remove_covered, out, self, [&] {
        grp.single = -1;
        release_entry(e, grp);
      });
    return walked;
  }
  auto& by_first = grp.by_first;
  auto it = every ? by_first.begin() : by_first.lower_bound(first - grp.max_span);
  while (it != by_first.end() && (every || it->first <= last)) {
    const auto node = it++;
    const std::int32_t e = node->second;
    visit(view, every, first, e, remove_covered, out, self, [&] { erase_node(e, grp, node, true); });
  }
  if (out.size() - before > 1)  // most lookups match one entry or none
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(),
              [](const Match& a, const Match& b) { return a.seq > b.seq; });
  return walked;
}

void TensorMap::insert(const Tensor& view, TaskId producer, std::uint8_t self) {
  if (emptied_.size() >= kEmptyGroups) drop_empty_groups();
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
  en.seq = next_seq_++;
  en.used = true;
  en.self = self;
  view.extent(en.first, en.last);
  Group& g = groups_.try_emplace(view.addr, pool_.get()).first->second;
  if (g.single < 0 && g.by_first.empty()) {
    g.single = e;
  } else {
    if (g.single >= 0) {  // a second live entry: both in the tree, the older first
      g.by_first.emplace(entries_[g.single].first, g.single);
      g.single = -1;
    }
    g.by_first.emplace(en.first, e);
  }
  if (en.last - en.first > g.max_span) g.max_span = en.last - en.first;
  order_[task_ring(producer)].push_back(Ref{e, en.generation});
  ++bucket_len_[bucket_of(view.addr)];
  ++in_use_;
}

void TensorMap::erase(std::int32_t e) {
  Entry& en = entries_[e];
  auto g = groups_.find(en.view.addr);
  if (g->second.single == e) {
    g->second.single = -1;
    release_entry(e, g->second);
    return;
  }
  auto range = g->second.by_first.equal_range(en.first);
  auto it = range.first;
  while (it != range.second && it->second != e) ++it;
  erase_node(e, g->second, it, it != range.second);
}

void TensorMap::erase_node(std::int32_t e, Group& g, std::pmr::multimap<std::int64_t, std::int32_t>::iterator node,
                           bool in_group) {
  if (in_group) g.by_first.erase(node);
  release_entry(e, g);
}

void TensorMap::release_entry(std::int32_t e, Group& g) {
  Entry& en = entries_[e];
  // An address left without entries keeps its group for a while: an INOUT
  // argument's lookup removes the entry its own insert puts back at the end
  // of the submit, and a group made and dropped per submit (a hash-table node
  // and its tree) cost more than the lookup. Groups still empty are dropped
  // at an insert once kEmptyGroups of them are listed (never inside a
  // lookup's walk of a group), so the map holds about that many empty groups
  // between inserts. A group is listed once until that drop (an INOUT
  // argument empties its group at every submit). A kept group's max_span
  // only widens the scan of a lookup to entries that cannot reach its view,
  // which it skips: the same matches.
  if (g.empty() && !g.listed) {
    g.listed = true;
    emptied_.push_back(en.view.addr);
  }
  --bucket_len_[bucket_of(en.view.addr)];
  en.used = false;
  ++en.generation;  // invalidates references in order_
  free_.push_back(e);
  --in_use_;
  ++freed_total_;
}

void TensorMap::drop_empty_groups() {
  for (std::uint64_t addr : emptied_) {
    auto g = groups_.find(addr);
    if (g == groups_.end()) continue;
    if (g->second.empty())
      groups_.erase(g);
    else
      g->second.listed = false;
  }
  emptied_.clear();
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
    erase(r.index);
    ++freed;
  }
  return freed;
}

void TensorMap::sync_for_submit(int ring, std::uint64_t local, std::uint64_t alive) {
  alive_[ring] = alive;
  const Ring& r = (*rings_)[ring];
  const bool same_slot = r.window() != 0 && r.slot_of(local) == r.slot_of(last_cleanup_[ring]);
  if (alive - last_cleanup_[ring] >= cleanup_interval_ || same_slot) {
    cleanup_ring(ring);
    last_cleanup_[ring] = alive;
  }
}

std::uint64_t TensorMap::reclaim_all(const std::array<std::uint64_t, kNumRings>& alive) {
  std::uint64_t freed = 0;
  for (int r = 0; r < kNumRings; ++r) {
    alive_[r] = alive[r];
    if (alive[r] > last_cleanup_[r]) {
      freed += cleanup_ring(r);
      last_cleanup_[r] = alive[r];
    }
  }
  return freed;
}

}  // namespace npusim
