// Conformance of the AICPU scheduler with the runtime's source
// (hw-native-sys/simpler src/a2a3/runtime/tensormap_and_ringbuffer/runtime/scheduler/
// and host_build_graph/runtime/scheduler/): each TEST_CASE names the upstream
// file and function it mirrors, and the upstream system test where one exists.
// Times are exact on the tiny platform (docs in tests/test_timing.cpp's header:
// loop 10, COND poll 100, complete 50, fanout edge 10, pop 20, payload 100,
// submit 200, DMB arrival 300, entry poll 200, receive->start 500, FIN notice 100).
#include <catch2/catch.hpp>

#include "tests/conformance/conf_sched_fixture.h"

using namespace npusim;
using conf::ConfSim;
using conf::root_task;

namespace {
Time at(double v) { return from_ns(v); }
}  // namespace

// Upstream: pto_scheduler.h PTO2SchedulerState::on_task_complete walks
// fanout_head; pto_orchestrator.cpp PTO2OrchestratorState::wire_fanin_task
// prepends each consumer (dep_pool.prepend), so the newest consumer is
// released first.
TEST_CASE("the fanout walk releases the newest consumer first", "[conformance]") {
  ConfSim s("sched_fanout_walk_order.json");
  s.run();
  REQUIRE(s.finished());
  const auto c1 = s.of_task(root_task(1)), c2 = s.of_task(root_task(2));
  REQUIRE((c1.size() == 1 && c2.size() == 1));
  // P's FIN is seen at 2520; completing it (50 + 2 edges x 10) pushes C2
  // then C1; one pop (20) takes both onto the idle AIVs in bit order:
  // payloads 100 each, one flush at 2810.
  CHECK(c2[0].core == 2);
  CHECK(c1[0].core == 3);
  CHECK(c1[0].dispatch == at(2810));
  CHECK(c2[0].dispatch == at(2810));
}

// Upstream: scheduler_dispatch.cpp SchedulerContext::dispatch_shape (claim a
// block range, push the slot back before dispatching, push_batch the rest of
// the pop); pop_ready_tasks_batch pops up to the thread's free units.
// Upstream tests: spmd_multiblock_aiv (cross-thread dispatch via re-push),
// spmd_batch_dispatch_oob (two SPMD tasks in one pop).
TEST_CASE("a partly placed SPMD task is re-pushed ahead of the rest of its pop and keeps first claim",
          "[conformance]") {
  ConfSim s("sched_spmd_first_claim.json");
  s.run();
  REQUIRE(s.finished());
  const auto b = s.of_task(root_task(1)), a = s.of_task(root_task(2));
  REQUIRE(a.size() == 8);
  REQUIRE(b.size() == 1);
  // P completes at 2590 (FIN seen 2520, 50 + 2 edges). One pop (20) takes
  // [A, B]: A claims the 4 idle AIVs (4 payloads, 3010) and is re-pushed;
  // B finds no unit left and goes back behind it.
  for (int i = 0; i < 4; ++i) {
    CHECK(a[i].dispatch == at(3010));
    CHECK(a[i].core == 2 + i);
  }
  // A's other four blocks go to the pending slots as the first wave ACKs,
  // each popped batch [A, B] placing A first; B waits for a free slot.
  Time last_a = 0;
  for (int i = 4; i < 8; ++i) {
    last_a = std::max(last_a, a[i].dispatch);
    // Written into the pending slot: the AICPU had not yet seen the first
    // wave's block on that core finish.
    bool pending = false;
    for (int j = 0; j < 4; ++j)
      if (a[j].core == a[i].core && a[i].dispatch < a[j].finish) pending = true;
    CHECK(pending);
  }
  CHECK(b[0].dispatch > last_a);
}

// Upstream: scheduler_dispatch.cpp SchedulerContext::dispatch_shape (a MIX
// task with no cluster of the wanted placement is pushed back and the next
// task of the pop is tried), scheduler_types.h CoreTracker::classify_mix_cluster.
// Upstream test: spmd_multiblock_mix.
TEST_CASE("a MIX task whose lanes fit no cluster is re-pushed, not a head-of-line block", "[conformance]") {
  ConfSim s("sched_mix_repush.json");
  s.run();
  REQUIRE(s.finished());
  const CoreMap& m = s.chip->cores().map();
  const auto half = s.of_task(root_task(5)), full = s.of_task(root_task(6));
  REQUIRE(half.size() == 2);
  REQUIRE(full.size() == 3);
  // P's completion pushes M_FULL then M_HALF. The MIX idle stage pops both:
  // M_FULL's AIV1 is busy on both clusters (a pending placement, not a
  // running one): re-pushed; M_HALF takes cluster 0 (all its cores idle).
  for (const auto& r : half) CHECK(m.cluster_of(r.core) == 0);
  // The MIX pending stage then places M_FULL on cluster 1, its AIV1 lane in
  // the pending slot behind the long vector task.
  for (const auto& r : full) CHECK(m.cluster_of(r.core) == 1);
  CHECK(full[0].dispatch > half[0].dispatch);
  CHECK(full[2].lane == kLaneAiv1);
  CHECK(full[2].receive == at(22430));  // the end of L on core 5
}

// Upstream: scheduler_dispatch.cpp SchedulerContext::dispatch_shape
// (flush_publish: one wmb() and one dispatch timestamp per pop, then one
// DATA_MAIN_BASE store per prepared subtask).
TEST_CASE("each pop is published behind its own write barrier", "[conformance]") {
  ConfSim s("sched_flush_per_pop.json");
  s.platform.sched.wmb = at(30);
  s.platform.sched.mmio_write = at(5);
  s.run();
  REQUIRE(s.finished());
  const auto a = s.of_task(root_task(1)), v = s.of_task(root_task(2));
  REQUIRE((a.size() == 1 && v.size() == 1));
  // P: pop 20 + payload 100 + wmb 30 -> dispatch 350, store 355; start 1355,
  // end 2355, FIN seen 2555; completion 50 + 2 edges -> 2625. The even thread
  // pops AIC first: 20 + 100 + wmb 30 -> 2775, store 2780; then AIV: 20 +
  // 100 + wmb 30 -> 2930, store 2935.
  CHECK(a[0].dispatch == at(2775));
  CHECK(v[0].dispatch == at(2930));
  CHECK(a[0].start == at(2780 + 300 + 200 + 500));
  CHECK(v[0].start == at(2935 + 300 + 200 + 500));
}
