// The shared last-level cache (L2) in front of HBM (docs/gm.md "L2 and HBM").
//
// Set-associative, LRU within a set, write-back and write-allocate. Plain
// C++, no time: GmModel asks which lines of an access hit and which bytes
// must cross the HBM link, and prices them. Each line keeps an opaque ready
// stamp its caller sets (GmModel: the time a fill arrives or a store ends),
// so a line in flight is told from a plain hit. Tags are allocated at the
// first access, so a run without GM phases pays nothing.
#pragma once

#include <cstdint>
#include <vector>

namespace npusim {

class L2Cache {
 public:
  // `bytes` capacity, `line` bytes per line, `ways` lines per set; the set
  // count is bytes / (line * ways), at least 1.
  L2Cache(std::uint64_t bytes, std::uint64_t line, std::uint64_t ways);

  struct Access {
    std::uint64_t lines = 0;           // L2 lines the bytes touch
    std::uint64_t hits = 0;            // of which already resident
    std::uint64_t fill_bytes = 0;      // read from HBM (missed lines of a read)
    std::uint64_t writeback_bytes = 0; // dirty victims written back to HBM
    std::uint64_t ready = 0;           // the latest ready stamp among the hits (0: none set)
  };
  // Reads (`write` false) or writes bytes [lo, hi). A read miss fetches the
  // line from HBM; a write miss allocates it without a fetch (the core
  // writes whole lines: a simplification) and marks it dirty.
  // `writer` tags the lines a write dirties (GmModel: the writing task).
  Access access(std::uint64_t lo, std::uint64_t hi, bool write, std::uint64_t writer = 0);
  // The lines the last access() allocated (a read: its misses) or wrote (a
  // write: all of them) are ready at `stamp` (the later stamp is kept).
  // A newly allocated line's stamp is 0 until then.
  void mark_ready(std::uint64_t stamp);
  // How many ways the last access() left for mark_ready: each way once, so
  // never more than the L2's ways, however long the access.
  std::size_t marked_ways() const { return marked_.size(); }
  // The host's work of the last access(): the lines it looked up one by one
  // plus the ways it rewrote in closed form; never more than twice the L2's
  // lines, however many bytes the access moves (tests/test_l2_bounded.cpp).
  std::uint64_t lines_walked() const { return walked_; }

  // The resident dirty lines among those bytes [lo, hi) touch (written, not
  // yet written back to HBM), in address order; nothing is looked up as a use.
  struct Dirty {
    std::uint64_t line;    // line index: bytes [line * line_bytes, +line_bytes)
    std::uint64_t writer;  // the tag of its last write
  };
  std::vector<Dirty> dirty_lines(std::uint64_t lo, std::uint64_t hi) const;

  std::uint64_t line_bytes() const { return line_; }
  std::uint64_t sets() const { return sets_; }

 private:
  static constexpr std::uint64_t kEmpty = ~0ull;
  std::uint64_t line_, ways_, sets_;
  std::uint64_t clock_ = 0;             // LRU stamps
  std::vector<std::uint64_t> tag_;      // sets_ x ways_: the line held, kEmpty if none
  std::vector<std::uint64_t> used_;     // its last use
  std::vector<std::uint8_t> dirty_;
  std::vector<std::uint64_t> writer_;   // the tag of a dirty line's last write
  std::vector<std::uint64_t> ready_;    // the line's ready stamp (mark_ready)
  std::vector<std::size_t> marked_;     // ways the last access allocated or wrote: mark_ready's
  std::vector<std::uint64_t> serial_of_;  // the access that last listed the way in marked_
  std::uint64_t serial_ = 0;            // accesses so far
  std::uint64_t walked_ = 0;            // lines_walked()
  std::vector<std::size_t> way_of_;     // access(): the way each of a set's first ways_ lines went to
  std::uint64_t dirty_count_ = 0;       // dirty lines resident: dirty_lines() returns at once when none
};

}  // namespace npusim
