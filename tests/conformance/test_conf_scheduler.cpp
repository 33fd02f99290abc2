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
  // P's completion pushes C2 then C1; the idle AIVs take them in bit order.
  CHECK(c2[0].core == 2);
  CHECK(c1[0].core == 3);
}
