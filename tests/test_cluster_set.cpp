// ClusterSet: the scheduler threads' per-lane cluster bit sets
// (models/common/cluster_set.h). A thread's clusters span several words when
// it owns more than 64 (a 1024-cluster platform with one scheduler thread).
#include "tests/catch.h"

#include <vector>

#include "models/aicore/aicore.h"
#include "models/common/cluster_set.h"

using npusim::ClusterSet;

TEST_CASE("ClusterSet: set, test and the valid tail across words") {
  ClusterSet s;
  s.resize(130);
  REQUIRE(s.words() == 3);
  CHECK(s.valid(0) == ~ClusterSet::Word{0});
  CHECK(s.valid(1) == ~ClusterSet::Word{0});
  CHECK(s.valid(2) == ClusterSet::Word{3});  // clusters 128 and 129
  for (int k : {0, 63, 64, 129}) s.set(k, true);
  CHECK(s.test(63));
  CHECK(s.test(64));
  CHECK_FALSE(s.test(65));
  CHECK(s.word(1) == 1);
  s.set(63, false);
  CHECK_FALSE(s.test(63));
  CHECK(s.word(0) == 1);
}

TEST_CASE("ClusterSet: bits in increasing order and counted") {
  ClusterSet s;
  s.resize(1024);
  REQUIRE(s.words() == 16);
  CHECK(s.valid(15) == ~ClusterSet::Word{0});
  const std::vector<int> want{1, 5, 62, 63, 64, 200, 1023};
  for (int k : want) s.set(k, true);
  std::vector<int> got;
  int n = 0;
  for (int i = 0; i < s.words(); ++i) {
    ClusterSet::for_each_bit(i, s.word(i), [&](int k) { got.push_back(k); });
    n += ClusterSet::count(s.word(i));
  }
  CHECK(got == want);
  CHECK(n == 7);
  CHECK(ClusterSet::count(~ClusterSet::Word{0}) == 64);
  CHECK(ClusterSet::count(0) == 0);
}

// AicoreComplex::ClusterView keeps the polled cores (running, not parked)
// twice: per lane over the clusters (~idle & ~parked & valid), and one bit per
// core in the scheduler's order (3 * cluster + lane, 63 cores a word) for
// the completion walk's bit scan (SchedulerThread::for_each_polled). The two
// must agree after any sequence of the view's updates, and the second must
// list the cores in the order the first gives cluster by cluster.
TEST_CASE("ClusterView: the per-core polled bits agree with the per-lane words after every update") {
  using View = npusim::AicoreComplex::ClusterView;
  const int n = 130;  // three 64-cluster words, seven 63-core words
  View v;
  v.resize(n);
  REQUIRE(v.core_words() == 7);
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  auto next = [&x](std::uint64_t m) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x % m;
  };
  for (int k = 0; k < n; ++k)
    for (int l = 0; l < 3; ++l) v.set(k, l, true, false, false);  // every core idle, as add_view leaves them
  for (int step = 0; step < 20000; ++step) {
    const int k = static_cast<int>(next(n)), l = static_cast<int>(next(3));
    switch (next(4)) {
      case 0: v.set(k, l, next(2) == 0, next(2) == 0, next(2) == 0); break;
      case 1: v.set_idle(k, l); break;
      case 2: v.set_dispatched(k, l, next(2) == 0); break;
      default: v.clear_occupied(k, l); break;
    }
    if (step % 97 != 0 && step < 19990) continue;
    std::vector<int> by_lane, by_core;
    for (int c = 0; c < n; ++c)
      for (int lane = 0; lane < 3; ++lane)
        if ((~v.idle(lane, c / 64) & ~v.parked(lane, c / 64) & v.valid(c / 64)) >> (c % 64) & 1)
          by_lane.push_back(3 * c + lane);
    for (int i = 0; i < v.core_words(); ++i)
      for (int b = 0; b < View::kCoresPerWord; ++b)
        if (v.polled_core_word(i) >> b & 1) by_core.push_back(View::kCoresPerWord * i + b);
    REQUIRE(by_core == by_lane);
    for (int i = 0; i < v.core_words(); ++i) REQUIRE((v.polled_core_word(i) >> View::kCoresPerWord) == 0);
  }
}
