#include "models/gm/l2.h"

#include <algorithm>

namespace npusim {

L2Cache::L2Cache(std::uint64_t bytes, std::uint64_t line, std::uint64_t ways)
    : line_(std::max<std::uint64_t>(1, line)), ways_(std::max<std::uint64_t>(1, ways)),
      sets_(std::max<std::uint64_t>(1, bytes / (line_ * ways_))) {}

L2Cache::Access L2Cache::access(std::uint64_t lo, std::uint64_t hi, bool write, std::uint64_t writer) {
  Access a;
  marked_.clear();
  ++serial_;
  walked_ = 0;
  if (hi <= lo) return a;
  if (tag_.empty()) {
    tag_.assign(sets_ * ways_, kEmpty);
    used_.assign(sets_ * ways_, 0);
    dirty_.assign(sets_ * ways_, 0);
    writer_.assign(sets_ * ways_, 0);
    ready_.assign(sets_ * ways_, 0);
    serial_of_.assign(sets_ * ways_, 0);
  }
  // A way is listed once per access, so the list is no longer than the L2's ways.
  auto mark = [&](std::size_t w) {
    if (serial_of_[w] == serial_) return;
    serial_of_[w] = serial_;
    marked_.push_back(w);
  };
  // Sets are independent, so the lines are taken set by set; each keeps the
  // LRU stamp it would get in address order (the i-th line of the access:
  // clock_ + i + 1). Within a set, once `ways_` lines of this access are in,
  // the set holds only this access's lines, and each further line misses and
  // evicts the line `ways_` before it (the oldest of them): those are counted
  // in closed form, and only the last line each way receives is written. The
  // cost is bounded by the L2's lines, whatever the bytes (docs/gm.md).
  const std::uint64_t first = lo / line_, n = (hi - 1) / line_ + 1 - first;
  const std::uint64_t clock0 = clock_;
  clock_ += n;
  a.lines = n;
  way_of_.resize(static_cast<std::size_t>(ways_));
  for (std::uint64_t k = 0; k < std::min(n, sets_); ++k) {
    const std::uint64_t count = (n - k + sets_ - 1) / sets_;  // lines k, k + sets_, ... of the access
    const std::size_t base = static_cast<std::size_t>(((first + k) % sets_) * ways_);
    const std::uint64_t detailed = std::min(count, ways_);
    walked_ += detailed + (count > ways_ ? std::min(count - ways_, ways_) : 0);
    std::uint64_t dirty_before = 0;  // of the detailed lines, those left dirty (a read hit on a dirty line)
    for (std::uint64_t j = 0; j < detailed; ++j) {
      const std::uint64_t x = first + k + j * sets_;
      std::size_t victim = base;
      bool hit = false;
      for (std::size_t w = base; w < base + ways_; ++w) {
        if (tag_[w] == x) {
          victim = w;
          hit = true;
          break;
        }
        // The empty way, else the least recently used (empty ways have stamp 0).
        if (used_[w] < used_[victim]) victim = w;
      }
      if (hit) {
        ++a.hits;
        a.ready = std::max(a.ready, ready_[victim]);
      } else {
        if (tag_[victim] != kEmpty && dirty_[victim]) {
          a.writeback_bytes += line_;
          --dirty_count_;
        }
        tag_[victim] = x;
        dirty_[victim] = 0;
        ready_[victim] = 0;
        if (!write) {
          a.fill_bytes += line_;
          mark(victim);
        }
      }
      used_[victim] = clock0 + k + j * sets_ + 1;
      if (write) {
        dirty_count_ += dirty_[victim] ? 0 : 1;
        dirty_[victim] = 1;
        writer_[victim] = writer;
        mark(victim);
      }
      way_of_[static_cast<std::size_t>(j)] = victim;
    }
    if (count <= ways_) continue;
    // Lines ways_ .. count-1: each a miss into the way of the line ways_
    // before it; the victims are lines 0 .. count-ways_-1 of this set.
    const std::uint64_t bulk = count - ways_;
    if (write) {
      a.writeback_bytes += bulk * line_;  // every victim is one of this access's dirty lines
    } else {
      a.fill_bytes += bulk * line_;
      for (std::uint64_t j = 0; j < std::min(bulk, ways_); ++j)  // a detailed line left dirty is written back
        if (dirty_[way_of_[static_cast<std::size_t>(j)]]) ++dirty_before;
      a.writeback_bytes += dirty_before * line_;
      dirty_count_ -= dirty_before;
    }
    for (std::uint64_t r = 0; r < std::min(bulk, ways_); ++r) {
      // The last line way r receives: the largest j < count with j = r (mod ways_).
      const std::uint64_t j = r + (count - 1 - r) / ways_ * ways_;
      const std::size_t w = way_of_[static_cast<std::size_t>(r)];
      tag_[w] = first + k + j * sets_;
      dirty_[w] = write ? 1 : 0;
      ready_[w] = 0;
      used_[w] = clock0 + k + j * sets_ + 1;
      if (write) writer_[w] = writer;
      mark(w);
    }
  }
  return a;
}

void L2Cache::mark_ready(std::uint64_t stamp) {
  for (const std::size_t w : marked_) ready_[w] = std::max(ready_[w], stamp);
  marked_.clear();
}

std::vector<L2Cache::Dirty> L2Cache::dirty_lines(std::uint64_t lo, std::uint64_t hi) const {
  std::vector<Dirty> v;
  if (hi <= lo || dirty_count_ == 0) return v;
  const std::uint64_t first = lo / line_, end = (hi - 1) / line_ + 1;
  if (end - first > tag_.size()) {  // more lines than the L2 holds: look at each way once
    for (std::size_t w = 0; w < tag_.size(); ++w)
      if (tag_[w] != kEmpty && dirty_[w] && tag_[w] >= first && tag_[w] < end) v.push_back({tag_[w], writer_[w]});
    std::sort(v.begin(), v.end(), [](const Dirty& a, const Dirty& b) { return a.line < b.line; });
    return v;
  }
  for (std::uint64_t x = first; x < end; ++x) {
    const std::size_t base = static_cast<std::size_t>((x % sets_) * ways_);
    for (std::size_t w = base; w < base + ways_; ++w)
      if (tag_[w] == x) {
        if (dirty_[w]) v.push_back({x, writer_[w]});
        break;
      }
  }
  return v;
}

}  // namespace npusim
