// The AICPU clock's order, driven directly (models/aicpu/aicpu_clock.h): its
// threads run in (time, sequence) order, the same on fibers (one chip: a
// horizon) as on SC_THREADs (several chips, NPUSIM_AICPU_LOCKSTEP=1: none),
// and an exception a thread's function lets out reaches sc_start either way.
#include <stdexcept>
#include <string>
#include <vector>

#include "models/aicpu/aicpu_clock.h"
#include "tests/catch.h"
#include "tests/sc_fixture.h"

namespace test_aicpu_clock_order {

using npusim::AicpuClock;
using npusim::Time;

struct Script;
// One thread: sleeps until each of `wakes` in turn, logging "name@time" at
// its start and after each sleep; throws at the end if `boom`.
struct Thread {
  Script* script = nullptr;
  std::string name;
  std::vector<Time> wakes;
  bool boom = false;
  int id = -1;
  static void body(void* self);
};

struct Script {
  explicit Script(bool fibers) : clock("clock") {
    static const npusim::Time kNothing = npusim::kNever;
    if (fibers) clock.set_horizon(&kNothing);  // nothing else acts
  }
  void add(const std::string& name, std::vector<Time> wakes, bool boom = false) {
    threads.push_back(new Thread{this, name, std::move(wakes), boom});
  }
  void start() {
    for (Thread* t : threads) t->id = clock.add(&Thread::body, t, std::size_t(256) << 10);
  }
  ~Script() {
    for (Thread* t : threads) delete t;
  }
  AicpuClock clock;
  std::vector<Thread*> threads;
  std::vector<std::string> log;
};

void Thread::body(void* self) {
  Thread& t = *static_cast<Thread*>(self);
  AicpuClock& c = t.script->clock;
  t.script->log.push_back(t.name + "@" + std::to_string(c.now()));
  for (Time w : t.wakes) {
    c.sleep(t.id, w, false);
    t.script->log.push_back(t.name + "@" + std::to_string(c.now()));
  }
  if (t.boom) throw std::runtime_error("thread " + t.name + " failed");
}

// a: 0, then 20, 30; b: 0, 10, 20, 30; c: 0, then 10. At 0 all three are
// due: a, b, c in registration order. At 10: b and c (b first). At 20: a and
// b, at 30: a and b again, each time a first (registered first), however
// long ago each went to sleep.
std::vector<std::string> run_script(bool fibers, Time& end) {
  ScKernelFixture kernel;
  Script s(fibers);
  s.add("a", {20, 30});
  s.add("b", {10, 20, 30});
  s.add("c", {10});
  s.start();
  sc_core::sc_start();
  end = sc_core::sc_time_stamp().value();
  return s.log;
}

// Six threads: the clock scans its due times four at a time (two pairs,
// then the pairs' winners, then the groups in order; the slots past the
// last thread are never due). The ties fall inside a pair, across a group's
// two pairs and across the two groups: t1, t2 and t5 at 10; t3, t4 and t5
// at 20; t0, t2 and t4 at 30; t1, t3 and t5 at 40. Each time stamp's
// threads must run in registration order, whichever slot they sit in.
std::vector<std::string> run_six(bool fibers) {
  ScKernelFixture kernel;
  Script s(fibers);
  s.add("t0", {30});
  s.add("t1", {10, 40});
  s.add("t2", {10, 30});
  s.add("t3", {20, 40});
  s.add("t4", {20, 30});
  s.add("t5", {10, 20, 40});
  s.start();
  sc_core::sc_start();
  return s.log;
}

}  // namespace test_aicpu_clock_order

TEST_CASE("AICPU clock: threads due at one time run in registration order on fibers and on SC_THREADs alike", "[aicpu][clock]") {
  using namespace test_aicpu_clock_order;
  const std::vector<std::string> expected = {"a@0",  "b@0",  "c@0",  "b@10", "c@10",
                                             "a@20", "b@20", "a@30", "b@30"};
  Time end_fibers = 0, end_threads = 0;
  CHECK(run_script(true, end_fibers) == expected);
  CHECK(run_script(false, end_threads) == expected);
  // Running ahead, the kernel is brought up to the clock's present once no
  // thread is due; in lock step it waited for each due time.
  CHECK(end_fibers == 30);
  CHECK(end_threads == 30);
}

TEST_CASE("AICPU clock: an exception a thread lets out reaches sc_start from fibers and from SC_THREADs", "[aicpu][clock]") {
  using namespace test_aicpu_clock_order;
  for (const bool fibers : {true, false}) {
    INFO((fibers ? "fibers" : "SC_THREADs"));
    ScKernelFixture kernel;
    Script s(fibers);
    s.add("a", {5});
    s.add("b", {10}, true);
    s.start();
    std::string what;
    try {
      sc_core::sc_start();
    } catch (const std::exception& e) {
      what = e.what();
    }
    CHECK(what.find("thread b failed") != std::string::npos);
    // a ran to its end at 5 before b failed at 10.
    CHECK(s.log == std::vector<std::string>{"a@0", "b@0", "a@5", "b@10"});
  }
}

TEST_CASE("AICPU clock: ties among six threads run in registration order across the due-time scan's groups", "[aicpu][clock]") {
  using namespace test_aicpu_clock_order;
  const std::vector<std::string> expected = {"t0@0",  "t1@0",  "t2@0",  "t3@0",  "t4@0",  "t5@0",
                                             "t1@10", "t2@10", "t5@10", "t3@20", "t4@20", "t5@20",
                                             "t0@30", "t2@30", "t4@30", "t1@40", "t3@40", "t5@40"};
  CHECK(run_six(true) == expected);
  CHECK(run_six(false) == expected);
}
