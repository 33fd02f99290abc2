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
  for (std::uint64_t x = lo / line_, end = (hi - 1) / line_ + 1; x < end; ++x) {
    ++a.lines;
    const std::size_t base = static_cast<std::size_t>((x % sets_) * ways_);
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
    used_[victim] = ++clock_;
    if (write) {
      dirty_count_ += dirty_[victim] ? 0 : 1;
      dirty_[victim] = 1;
      writer_[victim] = writer;
      mark(victim);
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
  for (std::uint64_t x = lo / line_, end = (hi - 1) / line_ + 1; x < end; ++x) {
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
