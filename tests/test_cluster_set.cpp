// ClusterSet: the scheduler threads' per-lane cluster bit sets
// (models/common/cluster_set.h). A thread's clusters span several words when
// it owns more than 64 (a 1024-cluster platform with one scheduler thread).
#include "tests/catch.h"

#include <vector>

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
