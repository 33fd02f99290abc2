// RingQueue (the runtime's ready queues, the tensormap's insertion order) and
// NodePool (the tensormap's node memory): FIFO order across wrap-around and
// growth, and node reuse without new chunks.
#include "tests/catch.h"

#include <deque>
#include <map>
#include <memory_resource>

#include "models/runtime/node_pool.h"
#include "models/runtime/ring_queue.h"

using npusim::NodePool;
using npusim::RingQueue;

TEST_CASE("RingQueue pops in push order across wrap-around and growth", "[ring_queue]") {
  RingQueue<int> q;
  std::deque<int> ref;  // the container it replaces
  int next = 0;
  // Interleave pushes and pops so the head wraps before each growth.
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 11 + 7 * round; ++i) {
      q.push_back(next);
      ref.push_back(next++);
    }
    for (int i = 0; i < 9; ++i) {
      REQUIRE(q.front() == ref.front());
      q.pop_front();
      ref.pop_front();
    }
    REQUIRE(q.size() == ref.size());
  }
  while (!ref.empty()) {
    REQUIRE(q.front() == ref.front());
    q.pop_front();
    ref.pop_front();
  }
  REQUIRE(q.empty());
}

TEST_CASE("NodePool hands a freed node back to the next insert of its size", "[ring_queue]") {
  NodePool pool;
  std::pmr::multimap<long, int> m(&pool);
  auto it = m.emplace(5, 1);
  const void* first = &*it;
  m.erase(it);
  auto again = m.emplace(7, 2);
  REQUIRE(static_cast<const void*>(&*again) == first);

  // Equal keys keep insertion order, as with the default allocator.
  m.emplace(7, 3);
  m.emplace(7, 4);
  auto range = m.equal_range(7);
  int expect = 2;
  for (auto i = range.first; i != range.second; ++i) REQUIRE(i->second == expect++);
  REQUIRE(expect == 5);
}
