// The L2 model's host cost follows the lines an access leaves in the cache,
// not the bytes it moves (models/gm/l2.cpp, docs/gm.md "L2 and HBM"): an
// access longer than the cache is counted in closed form. These cases hold
// the closed form to the line-by-line walk it replaces (kept here as the
// reference: every line, in address order, LRU within its set), on random
// access sequences over small caches where both are cheap, including
// accesses many times the cache's size, read hits on dirty lines and empty
// ways; and they bound the work of a 256 GiB store.
#include "tests/catch.h"

#include <cstdint>
#include <random>
#include <vector>

#include "models/gm/l2.h"

using npusim::L2Cache;

namespace {

// The line-by-line walk: the model as it was before the closed form.
struct ReferenceL2 {
  static constexpr std::uint64_t kEmpty = ~0ull;
  std::uint64_t line, ways, sets, clock = 0;
  std::vector<std::uint64_t> tag, used, writer, ready;
  std::vector<std::uint8_t> dirty;
  std::vector<std::size_t> marked;
  ReferenceL2(std::uint64_t bytes, std::uint64_t l, std::uint64_t w)
      : line(l), ways(w), sets(std::max<std::uint64_t>(1, bytes / (l * w))), tag(sets * ways, kEmpty),
        used(sets * ways, 0), writer(sets * ways, 0), ready(sets * ways, 0), dirty(sets * ways, 0) {}
  L2Cache::Access access(std::uint64_t lo, std::uint64_t hi, bool write, std::uint64_t wr) {
    L2Cache::Access a;
    marked.clear();
    if (hi <= lo) return a;
    auto mark = [&](std::size_t w) {
      if (std::find(marked.begin(), marked.end(), w) == marked.end()) marked.push_back(w);
    };
    for (std::uint64_t x = lo / line, end = (hi - 1) / line + 1; x < end; ++x) {
      ++a.lines;
      const std::size_t base = static_cast<std::size_t>((x % sets) * ways);
      std::size_t victim = base;
      bool hit = false;
      for (std::size_t w = base; w < base + ways; ++w) {
        if (tag[w] == x) {
          victim = w;
          hit = true;
          break;
        }
        if (used[w] < used[victim]) victim = w;
      }
      if (hit) {
        ++a.hits;
        a.ready = std::max(a.ready, ready[victim]);
      } else {
        if (tag[victim] != kEmpty && dirty[victim]) a.writeback_bytes += line;
        tag[victim] = x;
        dirty[victim] = 0;
        ready[victim] = 0;
        if (!write) {
          a.fill_bytes += line;
          mark(victim);
        }
      }
      used[victim] = ++clock;
      if (write) {
        dirty[victim] = 1;
        writer[victim] = wr;
        mark(victim);
      }
    }
    return a;
  }
  void mark_ready(std::uint64_t stamp) {
    for (std::size_t w : marked) ready[w] = std::max(ready[w], stamp);
  }
  std::vector<L2Cache::Dirty> dirty_lines(std::uint64_t lo, std::uint64_t hi) const {
    std::vector<L2Cache::Dirty> v;
    if (hi <= lo) return v;
    for (std::uint64_t x = lo / line, end = (hi - 1) / line + 1; x < end; ++x)
      for (std::size_t w = static_cast<std::size_t>((x % sets) * ways); w < (x % sets + 1) * ways; ++w)
        if (tag[w] == x) {
          if (dirty[w]) v.push_back({x, writer[w]});
          break;
        }
    return v;
  }
};

void same_as_reference(std::uint64_t bytes, std::uint64_t line, std::uint64_t ways, unsigned seed) {
  L2Cache c(bytes, line, ways);
  ReferenceL2 r(bytes, line, ways);
  std::mt19937_64 rng(seed);
  const std::uint64_t span = bytes * 8;  // addresses over 8 caches' worth
  for (int i = 0; i < 400; ++i) {
    const std::uint64_t lo = rng() % span;
    // Mostly short accesses, some a few times the cache, some many times it.
    const std::uint64_t kind = rng() % 10;
    const std::uint64_t len = kind < 6 ? 1 + rng() % (line * 4) : kind < 9 ? 1 + rng() % (bytes * 3) : bytes * 20 + rng() % bytes;
    const bool write = rng() % 2;
    const std::uint64_t writer = 1 + rng() % 5;
    INFO("seed " << seed << " access " << i << ": [" << lo << ", +" << len << ") " << (write ? "write" : "read"));
    const L2Cache::Access got = c.access(lo, lo + len, write, writer);
    const L2Cache::Access want = r.access(lo, lo + len, write, writer);
    REQUIRE(got.lines == want.lines);
    REQUIRE(got.hits == want.hits);
    REQUIRE(got.fill_bytes == want.fill_bytes);
    REQUIRE(got.writeback_bytes == want.writeback_bytes);
    REQUIRE(got.ready == want.ready);
    REQUIRE(c.marked_ways() == r.marked.size());
    REQUIRE(c.lines_walked() <= std::min(want.lines, 2 * c.sets() * ways));
    const std::uint64_t stamp = 1 + rng() % 1000;
    c.mark_ready(stamp);
    r.mark_ready(stamp);
    const std::uint64_t dlo = rng() % span, dlen = rng() % 2 ? 1 + rng() % (line * 8) : bytes * 10;
    const auto gd = c.dirty_lines(dlo, dlo + dlen), wd = r.dirty_lines(dlo, dlo + dlen);
    REQUIRE(gd.size() == wd.size());
    for (std::size_t k = 0; k < gd.size(); ++k) {
      REQUIRE(gd[k].line == wd[k].line);
      REQUIRE(gd[k].writer == wd[k].writer);
    }
  }
}

}  // namespace

TEST_CASE("L2 closed-form access equals the line-by-line walk", "[gm][l2]") {
  // Direct-mapped, 2-way (tiny platform's shape), 4-way, one set, odd set counts.
  for (unsigned seed = 1; seed <= 3; ++seed) {
    same_as_reference(2048, 256, 1, seed);
    same_as_reference(2048, 256, 2, seed);
    same_as_reference(4096, 64, 4, seed);
    same_as_reference(1024, 256, 4, seed);  // one set
    same_as_reference(3 * 4 * 128, 128, 4, seed);  // 3 sets
  }
}

TEST_CASE("L2 host work per access is bounded by its lines, not bytes", "[gm][l2]") {
  // The a2a3 L2 (192 MiB, 512 B lines, 16 ways): a 256 GiB store touches
  // 2^29 lines; the walk visited each, the closed form at most the L2's
  // 393,216. Counted results: every line a miss, every victim past the
  // first fill a dirty line of the same store.
  L2Cache c(201326592, 512, 16);
  const std::uint64_t bytes = 256ull << 30;
  for (int i = 0; i < 4; ++i) {
    const L2Cache::Access a = c.access(0, bytes, true, 1);
    CHECK(a.lines == bytes / 512);
    CHECK(a.hits == (i == 0 ? 0u : 0u));  // the cache holds the last 192 MiB: the next store starts at 0, long evicted
    CHECK(a.writeback_bytes == (i == 0 ? bytes - 201326592 : bytes));
    CHECK(c.marked_ways() == 393216u);
    // The host's work: each of the L2's 393,216 ways looked up once and
    // rewritten once (the walk visited 2^29 lines, about 16 s a store).
    CHECK(c.lines_walked() == 2u * 393216u);
  }
  // A short access walks its own lines only.
  CHECK(c.access(1u << 20, (1u << 20) + 4096, false).lines == 8u);
  CHECK(c.lines_walked() == 8u);
}
