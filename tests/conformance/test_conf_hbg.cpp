// Conformance of host_build_graph's AICPU thread layout with the runtime's
// source (hw-native-sys/simpler src/a2a3/runtime/host_build_graph/runtime/
// scheduler/): "3S+1P", the last AICPU thread owning no core and resolving
// every completion and dummy task, and the earlier all-schedule layout kept as
// hbg_layout "all_schedule". Times are exact on the tiny platform (loop 10,
// COND poll 100, complete 50, fanout edge 10, ready push 0, pop 20, payload
// 100, dummy 50, DMB arrival 300, entry poll 200, receive->start 500, FIN
// notice 100; 2 clusters, cores 0-1 AIC, 2-5 AIV).
#include "tests/catch.h"

#include "tests/conformance/conf_sched_fixture.h"

using namespace npusim;
using conf::ConfSim;
using conf::at;
using conf::root_task;

namespace {

std::vector<int> cores_of(const ConfSim& s, std::size_t thread) { return s.chip->schedulers()[thread]->cores(); }

Time completed(const ConfSim& s, std::uint64_t n) { return s.obs.completed.at(root_task(n)); }

int records_of(const ConfSim& s, int thread) {
  int n = 0;
  for (const auto& p : s.obs.phases) n += p.thread == thread;
  return n;
}

}  // namespace

// Upstream: scheduler_cold_path.cpp SchedulerContext::assign_cores_to_threads
// (cluster ci -> scheduler thread ci % (aicpu_thread_num - 1); the last thread
// is the resolution thread P and owns no cluster), scheduler_completion.cpp
// (a scheduler thread pushes a finished task onto its CompletedTaskQueue),
// scheduler_dispatch.cpp SchedulerContext::run_resolution_thread (P drains the
// queues in thread order, runs complete_task, then the dummy_ready_queue in
// batches of 8; it writes no scheduler phase records).
TEST_CASE("host_build_graph: the last AICPU thread owns no core and resolves completions and dummies",
          "[conformance]") {
  ConfSim s("hbg_resolution_thread.json");
  REQUIRE(s.config.resolution_thread());
  REQUIRE(s.config.sched_threads == 2);
  s.run();
  REQUIRE(s.finished());
  // The boot scan (test_conf_hbg_boot.cpp) classifies A (thread 0), B
  // (thread 1), D and C (P) at 10 ns each: dispatch begins at 20, and every
  // time below is the derivation in the comments, counted from 0, plus 20.
  REQUIRE(s.chip->schedulers().size() == 3);
  CHECK(cores_of(s, 0) == std::vector<int>{0, 2, 3});  // cluster 0
  CHECK(cores_of(s, 1) == std::vector<int>{1, 4, 5});  // cluster 1
  CHECK(cores_of(s, 2).empty());                       // P
  // Thread 0 places A and B on its AIVs (loop 10, pop 20, a payload each:
  // published at 230): kernels 1230-2230 ns, FINs visible at 2330.
  const auto a = s.of_task(root_task(0)), b = s.of_task(root_task(1)), c = s.of_task(root_task(3));
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  CHECK(a[0].core == 2);
  CHECK(b[0].core == 3);
  CHECK(a[0].thread == 0);
  CHECK(b[0].thread == 0);
  CHECK(a[0].start == at(1250));
  CHECK(a[0].end == at(2250));
  // Thread 0's iteration from 2120: core 2's poll returns at 2230 (too
  // early), core 3's at 2330 sees B. B is handed to P (a push, 0 on tiny) and
  // thread 0 polls on at once: core 2 at 2440 sees A.
  CHECK(b[0].finish == at(2350));
  CHECK(a[0].finish == at(2460));
  // P, idle on its 10 ns loop grid, resolves B at 2330 (complete 50, no
  // consumer) and A at 2440 (complete 50 + one edge), which readies the
  // dummy D; P drains the dummy queue in the same pass: D at 2500 (dummy 50 +
  // one edge, C). (Completion times are the start of each resolution.)
  CHECK(completed(s, 1) == at(2350));
  CHECK(completed(s, 0) == at(2460));
  CHECK(completed(s, 2) == at(2520));
  // C is placed by scheduler thread 0 (loop grid 2490, pop 20, payload 100).
  REQUIRE(c.size() == 1);
  CHECK(c[0].thread == 0);
  CHECK(c[0].dispatch == at(2640));
  CHECK(c[0].start == at(3640));
  // P writes no phase records; the scheduler threads write no resolve or
  // dummy records (their completion is a push).
  CHECK(records_of(s, 2) == 0);
  CHECK(s.phases(SchedPhase::Dummy).empty());
  CHECK(s.phases(SchedPhase::DummyTask).empty());
  CHECK(s.phases(SchedPhase::Resolve).empty());
}

// The earlier layout (every AICPU thread owns cores and resolves its own
// completions; scheduler threads 0..dummy_threads-1 pop the dummy queue),
// with which published silicon measurements were taken.
TEST_CASE("host_build_graph: hbg_layout all_schedule restores every thread scheduling", "[conformance]") {
  RunOptions over;
  over.hbg_layout = HbgLayout::AllSchedule;
  ConfSim s("hbg_resolution_thread.json", "tiny", over);
  REQUIRE_FALSE(s.config.resolution_thread());
  REQUIRE(s.config.sched_threads == 3);
  s.run();
  REQUIRE(s.finished());
  // The boot scan ends at 20, as above: every time below is the comments'
  // derivation plus 20.
  REQUIRE(s.chip->schedulers().size() == 3);
  CHECK(cores_of(s, 0) == std::vector<int>{0, 2, 3});
  CHECK(cores_of(s, 1) == std::vector<int>{1, 4, 5});
  CHECK(cores_of(s, 2).empty());  // only 2 clusters for 3 scheduling threads
  const auto a = s.of_task(root_task(0)), b = s.of_task(root_task(1)), c = s.of_task(root_task(3));
  CHECK(a[0].start == at(1250));
  // Thread 0 resolves B itself after its poll at 2330 before polling core 2,
  // so it sees A's FIN later than with the resolution thread (2440).
  CHECK(b[0].finish == at(2350));
  CHECK(completed(s, 1) == at(2350));
  CHECK(a[0].finish == at(2520));
  CHECK(completed(s, 0) == at(2520));
  // The dummy is retired by another thread's dummy phase, with its records.
  const auto dummies = s.phases(SchedPhase::DummyTask);
  REQUIRE(dummies.size() == 1);
  CHECK(dummies[0].thread != 0);
  CHECK(dummies[0].task_id == root_task(2));
  CHECK(s.phases(SchedPhase::Dummy).size() == 1);
  CHECK(completed(s, 2) == at(2520));
  CHECK(dummies[0].start == at(2520));
  // C, ready at 2500, is placed by thread 0 after its completion of A
  // (2560 + pop 20 + payload 100): 60 ns later than with the resolution thread.
  CHECK(c[0].dispatch == at(2700));
  CHECK(c[0].start == at(3700));
}

// Upstream: host_build_graph/runtime/scheduler/pto_scheduler.h
// propagate_dispatch_fanin is empty ("Milestone 1: early-dispatch (predicated
// / allow_early_resolve) is stubbed ... Nothing pre-stages into
// early_dispatch_queues / early_sync_start_queue, so tasks reach cores only
// through the normal ready path"). The consumer of a flagged producer,
// staged gated under tensormap_and_ringbuffer (sched_doorbell_start.json),
// waits for the producer's completion under host_build_graph.
TEST_CASE("host_build_graph: early_resolve stages nothing early, early dispatch being stubbed", "[conformance]") {
  ConfSim s("hbg_early_resolve_stubbed.json");
  s.run();
  REQUIRE(s.finished());
  // The boot scan (2 threads: P, then C, at 10 ns each) ends at 10: every
  // time below is the comments' derivation plus 10.
  const auto p = s.of_task(root_task(0)), c = s.of_task(root_task(1));
  REQUIRE((p.size() == 1 && c.size() == 1));
  CHECK_FALSE(c[0].gated);
  CHECK(c[0].dispatch > completed(s, 0));
  CHECK(s.phases(SchedPhase::EarlyDispatch).empty());
  // P (thread 0, AIV2) is dispatched at 130 and its FIN read at 2330 (the
  // iteration from 2220: loop 10, one poll 100), where C becomes ready;
  // thread 1's iteration from 2320 pops it (20) and builds its payload
  // (100): C is dispatched at 2450, ungated, onto AIV4.
  CHECK(completed(s, 0) == at(2340));
  CHECK(c[0].dispatch == at(2460));
}

// Upstream: host_build_graph/runtime/scheduler/pto_scheduler.h
// classify_fanin_state (the LAST unmet fanin: "the latest-submitted producer
// -- the one likeliest to complete last", #1924), register_wake,
// on_mixed_task_complete (drain the wake list: route a waiter whose fanins
// are all met, re-register any other); the boot scan
// scheduler_cold_path.cpp classify_partition. C1..C8 read B's output, then
// A's: they wait on A's wake list, so B's completion drains one waiter (E),
// where a fanout walk would visit all nine consumers.
TEST_CASE("host_build_graph: a completion drains its wake list, not its fanout", "[conformance]") {
  ConfSim s("hbg_wake_list.json");
  s.run();
  REQUIRE(s.finished());
  // The boot scan (3 threads: A, B, E; C1..C4; C5..C8, at 10 ns each) ends at
  // 40: every time below is the comments' derivation plus 40.
  const auto a = s.of_task(root_task(0)), b = s.of_task(root_task(1)), e = s.of_task(root_task(2));
  REQUIRE((a.size() == 1 && b.size() == 1 && e.size() == 1));
  // As in the resolution-thread case: A on AIV2, B on AIV3, B's FIN seen at
  // 2330, A's at 2440.
  CHECK(b[0].finish == at(2370));
  CHECK(a[0].finish == at(2480));
  // P resolves B at 2330: complete 50 + one waiter (10), free again at 2390,
  // so it resolves A as its FIN arrives, at 2440. (A fanout walk of nine
  // edges would keep P busy until 2470 and resolve A in its next pass, at
  // 2480: the case fails on that model.)
  CHECK(completed(s, 1) == at(2370));
  CHECK(completed(s, 0) == at(2480));
  // E is made ready by B's resolution (pushed at its start, 2330): thread 1,
  // idle on its 10 ns grid, pops it (20) and builds the payload (100).
  CHECK(e[0].thread == 1);
  CHECK(e[0].dispatch == at(2490));
  // A's resolution makes every Ci ready: none is dispatched before it.
  for (std::uint64_t i = 3; i < 11; ++i) {
    const auto ci = s.of_task(root_task(i));
    REQUIRE(ci.size() == 1);
    CHECK(ci[0].dispatch > at(2480));
  }
}
