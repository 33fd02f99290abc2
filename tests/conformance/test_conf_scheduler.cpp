// Conformance of the AICPU scheduler with the runtime's source
// (hw-native-sys/simpler src/a2a3/runtime/tensormap_and_ringbuffer/runtime/scheduler/
// and host_build_graph/runtime/scheduler/): each TEST_CASE names the upstream
// file and function it mirrors, and the upstream system test where one exists.
// Times are exact on the tiny platform (docs in tests/test_timing.cpp's header:
// loop 10, COND poll 100, complete 50, fanout edge 10, pop 20, payload 100,
// submit 200, DMB arrival 300, entry poll 200, receive->start 500, FIN notice 100).
#include "tests/catch.h"

#include <filesystem>

#include "tests/cli_support.h"
#include "tests/conformance/conf_sched_fixture.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace npusim;
using conf::ConfSim;
using conf::at;
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

// Without an observer that reads them (outputs off, or a swimlane level
// below 3) the scheduler counts no pops and samples no queue: the records
// are the same but for those fields, and the loop-exit record, which only
// carries pop counts, is not written (SimObserver::reads_sched_detail).
TEST_CASE("scheduler phase records without a detail reader: same spans and counts - no pops - no snapshots",
          "[conformance]") {
  ConfSim s("sched_one_task.json");
  s.obs.detail = false;
  s.run();
  REQUIRE(s.finished());
  const auto d = s.phases(SchedPhase::Dispatch);
  REQUIRE(d.size() == 1);  // no loop-exit record
  CHECK(d[0].start == at(190));
  CHECK(d[0].end == at(320));
  CHECK(d[0].tasks_processed == 1);
  CHECK(d[0].pop_hit == 0);
  CHECK(d[0].pop_miss == 0);
  for (const SchedPhaseRecord& r : s.obs.phases) {
    CHECK(r.pop_hit == 0);
    CHECK(r.pop_miss == 0);
    CHECK(r.shared_at_start == std::array<int, 3>{});
    CHECK(r.shared_at_end == std::array<int, 3>{});
  }
  CHECK_FALSE(s.phases(SchedPhase::Complete).empty());
}

// Upstream: scheduler_dispatch.cpp SchedulerContext::resolve_and_dispatch
// (a dispatch record per iteration that prepared subtasks, spanning the time
// since the previous record of the iteration; pop_hit / pop_miss as
// pop_ready_tasks_batch counts them: every batch pop of a stage with units,
// an empty one a miss, idle iterations included; the loop-exit zero-length
// dispatch record carrying the pops since the last one; the complete record
// spanning the iteration up to the end of its completion check).
TEST_CASE("scheduler phase records: dispatch spans, pop counts of every pop, the loop-exit record",
          "[conformance]") {
  ConfSim s("sched_one_task.json");
  s.run();
  REQUIRE(s.finished());
  const auto d = s.phases(SchedPhase::Dispatch);
  REQUIRE(d.size() == 2);
  // One scheduler thread (cores AIC 0,1, AIV 2..5). Until the task is ready
  // every iteration (10 ns long: no core runs) pops 8 empty queues: per tier
  // MIX idle (every cluster is a unit), AIC idle, AIV idle, MIX pending (no
  // peer has an idle cluster). The task is ready at 200: iteration 20
  // (190..) pops it (hit) and finds the AIV queue empty again with 3 idle
  // AIVs left (miss): 19 x 8 + 8 misses. The record starts at the iteration's
  // start (no running core, no complete record) and ends after the pop (20)
  // and the payload (100).
  CHECK(d[0].start == at(190));
  CHECK(d[0].end == at(320));
  CHECK(d[0].tasks_processed == 1);
  CHECK(d[0].pop_hit == 1);
  CHECK(d[0].pop_miss == 160);
  // Then 9 iterations of 110 ns (loop + one COND read) with the ACK not yet
  // seen (8 misses each), iteration 30 sees the ACK (1420) and from then on
  // the AIV pending stage pops too (10 misses each): iterations 30..39; the
  // FIN is seen in iteration 40 (2520), whose dispatch finds everything idle
  // again (8). The loop exits at the next iteration's termination check
  // (2570 + loop 10), releases the task it deferred (release_task 10) and
  // writes the rest as a zero-length record after that drain.
  CHECK(d[1].start == at(2590));
  CHECK(d[1].end == at(2590));
  CHECK(d[1].tasks_processed == 0);
  CHECK(d[1].pop_hit == 0);
  CHECK(d[1].pop_miss == 9 * 8 + 10 * 10 + 8);
  const auto c = s.phases(SchedPhase::Complete);
  REQUIRE(c.size() == 1);
  CHECK(c[0].start == at(2410));  // the iteration's start
  CHECK(c[0].end == at(2570));    // FIN seen 2520, complete_task 50
  CHECK(c[0].loop_iter == 40);
}

// Upstream: scheduler_dispatch.cpp resolve_and_dispatch, the dummy drain:
// `dummy_ready_queue.pop_batch(dummy_batch, DUMMY_DRAIN_BATCH)` with
// DUMMY_DRAIN_BATCH = 8 (platform limits.dummy_pop_max): one iteration's
// Dummy phase takes at most 8, the rest wait for the next iteration.
TEST_CASE("the dummy phase pops at most 8 dummies per iteration", "[conformance]") {
  ConfSim s("sched_dummy_batch.json");
  s.run();
  REQUIRE(s.finished());
  // The AIV task's completion (seen in iteration 40, complete_task 50 and a
  // fanout walk of 10 edges) makes all ten dummies ready at once; the same
  // iteration's Dummy phase completes 8 (50 ns each), the next one 2.
  const auto c = s.phases(SchedPhase::Complete);
  REQUIRE(c.size() == 1);
  const auto d = s.phases(SchedPhase::Dummy);
  REQUIRE(d.size() == 2);
  CHECK(d[0].tasks_processed == 8);
  CHECK(d[0].loop_iter == c[0].loop_iter);
  CHECK(d[0].start == c[0].end);
  CHECK(d[0].end == d[0].start + at(8 * 50));
  CHECK(d[1].tasks_processed == 2);
  CHECK(d[1].loop_iter == d[0].loop_iter + 1);
  CHECK(d[1].end - d[1].start == at(2 * 50));
}

// Upstream: scheduler_dispatch.cpp resolve_and_dispatch's loop exit: every
// scheduler thread leaves its loop once the orchestration is done and every
// task completed, writing its remaining pops as a zero-length dispatch record
// (chip_swimlane_collector_aicpu.cpp). Here the orchestration ends last: its
// get_tensor_data (pto_runtime2.cpp wait_for_tensor_ready) returns after the
// only task completed, so the threads are idle, waiting, when it ends; its
// end must wake them. On a2a3, where the completed task's release comes
// later than its completion (the tensormap runtime defers releases to an idle
// iteration), the read's spin sees the completion itself: the first poll at
// or after it, then the read costs one more poll.
TEST_CASE("a read that outlives the last task sees its completion, and the idle threads still exit", "[conformance]") {
  ConfSim s("sched_read_last.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  REQUIRE(s.config.sched_threads == 3);
  std::vector<int> exits(3, 0);
  npusim::Time last_exit = 0;
  for (const auto& p : s.phases(SchedPhase::Dispatch))
    if (p.start == p.end && p.tasks_processed == 0) {
      ++exits[p.thread];
      last_exit = std::max(last_exit, p.end);
    }
  CHECK(exits == std::vector<int>{1, 1, 1});
  const npusim::Time end = s.chip->orchestrator().end_time();
  CHECK(last_exit >= end);
  REQUIRE(s.obs.completed.size() == 1);
  const npusim::Time done = s.obs.completed.begin()->second;
  const npusim::Time poll = at(100);  // orch.read_poll_ns
  const npusim::Time noticed = end - poll;
  CHECK(noticed >= done);
  CHECK(noticed - done < poll);
}

// Upstream: scheduler_completion.cpp SchedulerContext::complete_slot_task and
// scheduler_dispatch.cpp resolve_and_dispatch (the dummy drain): a resolve
// record for a fanout walk of at least 1 us of the device counter
// (RESOLVE_EMIT_MIN_CYCLES), before the complete record; the dummy_task
// marker after the dummy's resolve; chip_swimlane_collector_aicpu.cpp
// chip_swimlane_aicpu_record_sched_phase: records other than complete, dummy
// and dispatch carry zero queue snapshots.
TEST_CASE("resolve records for long fanout walks, markers after them, zero snapshots", "[conformance]") {
  ConfSim s("sched_wide_fanout.json");
  s.run();
  REQUIRE(s.finished());
  const auto r = s.phases(SchedPhase::Resolve);
  // P completes: 50 + 96 edges x 10 = 1010 ns >= 1 us; the dummy D (96
  // consumers too) the same with dummy_task 50.
  REQUIRE(r.size() == 2);
  CHECK(r[0].tasks_processed == 96);
  CHECK(r[0].end - r[0].start == at(1010));
  CHECK(r[1].tasks_processed == 96);
  CHECK(r[1].end - r[1].start == at(1010));
  // The order on the thread: resolve(P) before complete, resolve(D) before
  // the dummy_task marker (at the resolve's start) before the dummy record.
  int ri = -1, ci = -1, r2 = -1, mi = -1, di = -1;
  for (int i = 0; i < static_cast<int>(s.obs.phases.size()); ++i) {
    const auto& p = s.obs.phases[static_cast<std::size_t>(i)];
    if (p.kind == SchedPhase::Resolve) (ri < 0 ? ri : r2) = i;
    if (p.kind == SchedPhase::Complete && ci < 0 && ri >= 0) ci = i;
    if (p.kind == SchedPhase::DummyTask && r2 >= 0 && mi < 0) mi = i;
    if (p.kind == SchedPhase::Dummy && mi >= 0 && di < 0) di = i;
  }
  REQUIRE((ri >= 0 && ci >= 0 && r2 >= 0 && mi >= 0 && di >= 0));
  CHECK(ri < ci);
  CHECK(r2 + 1 == mi);
  CHECK(mi < di);
  CHECK(s.obs.phases[static_cast<std::size_t>(mi)].start == r[1].start);
  for (const auto& p : s.obs.phases) {
    const bool shared = p.kind == SchedPhase::Complete || p.kind == SchedPhase::Dummy || p.kind == SchedPhase::Dispatch;
    if (shared) continue;
    CHECK(p.shared_at_start == std::array<int, 3>{0, 0, 0});
    CHECK(p.shared_at_end == std::array<int, 3>{0, 0, 0});
  }
}

// Upstream: src/common/platform/shared/host/chip_swimlane_collector.cpp
// ChipSwimlaneCollector::export_swimlane_json: the metadata object one key a
// line, AICore and AICPU rows grouped by core, one array of phase records per
// AICPU thread (4 on a2a3), the orchestrator phases as an array of lanes.
// Upstream test: dfx/chip_swimlane (test_chip_swimlane.py, _swimlane_validate.py).
TEST_CASE("chip_swimlane_records.json has the collector's layout", "[conformance]") {
  fs::path out;
  const cli::Result r =
      cli::run("tests/conformance/traces/sched_fanout_walk_order.json --platform tiny --quiet --swimlane-level 4",
               "conf_swimlane", out);
  REQUIRE(r.status == 0);
  const std::string text = cli::slurp(out / "chip_swimlane_records.json");
  CHECK(text.rfind("{\n  \"chip_swimlane_level\": 4,\n  \"metadata\": {\n    \"clock_freq_hz\": 50000000,\n"
                   "    \"num_cores\": 6,\n    \"core_types\": [\"aic\", \"aic\", \"aiv\", \"aiv\", \"aiv\", \"aiv\"],\n"
                   "    \"core_to_thread\": [0, 0, 0, 0, 0, 0]\n  },\n  \"aicore_tasks\": [\n    [0, ",
                   0) == 0);
  CHECK(cli::has(text, "\n  \"aicpu_scheduler_phases\": [\n    [\n      {\"kind\": \"dispatch\", "));
  CHECK(cli::has(text, "\n    ],\n    [],\n    [],\n    []\n  ],\n  \"aicpu_orchestrator_phases\": [\n    [\n"
                       "      {\"submit_idx\": 0, "));
  CHECK(text.size() > 8);
  CHECK(text.substr(text.size() - 8) == "]\n  ]\n}\n");
  // Rows grouped by core, in core order: C2's row (core 2) comes before C1's
  // (core 3) although C1's FIN was observed first.
  const json j = json::parse(text);
  for (const char* key : {"aicore_tasks", "aicpu_tasks"}) {
    int last = -1;
    for (const auto& row : j[key]) {
      CHECK(row[0].get<int>() >= last);
      last = row[0].get<int>();
    }
  }
}

// Upstream: scheduler_dispatch.cpp SchedulerContext::resolve_and_dispatch, the
// no-progress branch: `while (deferred_release_count > 0)
// on_task_release(*deferred_release_slot_states[--deferred_release_count])`,
// newest deferred task first; pto_scheduler.h on_task_release ends with the
// task's own check_and_handle_consumed, whose advance_ring_pointers moves
// last_task_alive only over a run of CONSUMED slots from the tail. So each
// release takes effect at the end of its own cost, and the tail passes two
// independent tasks only when the older one (released last) is consumed.
TEST_CASE("the release phase releases newest first, each at its own cost", "[conformance]") {
  ConfSim s("sched_release_lifo.json");
  s.run();
  REQUIRE(s.finished());
  // One scheduler thread. A (AIV, 1130 ns) runs 1320..2450, B (AIV,
  // 1000 ns) 1550..2550, C (AIC, 3000 ns) until 4880; FINs are seen 100 ns
  // after they are written. The iteration of 2430 (loop 10, then one 100 ns
  // COND read per running core, C's first) reads A's FIN at 2640 (complete
  // 50) and B's at 2790 (complete 50): one complete phase defers [A, B].
  const auto c = s.phases(SchedPhase::Complete);
  REQUIRE(c.size() == 2);
  CHECK(c[0].tasks_processed == 2);
  CHECK(c[0].start == at(2430));
  CHECK(c[0].end == at(2840));
  const TaskId a = root_task(0), b = root_task(1);
  CHECK(s.obs.completed.at(a) == at(2640));
  CHECK(s.obs.completed.at(b) == at(2790));
  // The next iteration (2840: loop 10, C's read 100) places nothing and
  // releases: B at 2950..2960 (consumed, but A holds the tail), A at
  // 2960..2970; the tail passes A and B together at the end of A's release
  // (before this rule both retired at the phase's start, 2950, in the
  // order A then B).
  const auto r = s.phases(SchedPhase::Release);
  REQUIRE(r.size() == 1);
  CHECK(r[0].tasks_processed == 2);
  CHECK(r[0].start == at(2950));
  CHECK(r[0].end == at(2970));
  REQUIRE(s.obs.retired.count(a) == 1);
  REQUIRE(s.obs.retired.count(b) == 1);
  CHECK(s.obs.retired.at(a) == at(2970));
  CHECK(s.obs.retired.at(b) == at(2970));
}

// Upstream: scheduler_dispatch.cpp SchedulerContext::resolve_and_dispatch and
// scheduler_cold_path.cpp handle_orchestrator_exit: a thread with no running
// core leaves its loop once the orchestration is done and completed_tasks_
// reaches the task count; the completing thread adds its completions to
// completed_tasks_ after its whole completion check. A peer spinning on
// empty queues sees the count at its next iteration, and writes its pops
// since its last record as a zero-length dispatch record on the way out.
TEST_CASE("idle peer threads leave their loops once the last completion is published", "[conformance]") {
  ConfSim s("sched_idle_peers_exit.json");
  s.run();
  REQUIRE(s.finished());
  // Three scheduler threads; thread 0 owns cluster 0 and runs the task,
  // thread 1 owns cluster 1 and idles from the orchestration's end on,
  // thread 2 owns no cluster (no pops, no records).
  const auto c = s.phases(SchedPhase::Complete);
  REQUIRE(c.size() == 1);
  REQUIRE(c[0].thread == 0);
  std::vector<SchedPhaseRecord> t1;
  for (const auto& p : s.obs.phases) {
    CHECK(p.thread != 2);
    if (p.thread == 1) t1.push_back(p);
  }
  // Thread 0's FIN is seen at 2520 (complete_task 50): the completion is
  // published at 2570, the end of its complete phase. Thread 1's iterations
  // are 10 ns long (loop_ns, no core to poll) and begin at multiples of
  // 10 ns: the one of 2560 reads the count at its termination check (2570,
  // after loop_ns) and leaves. Before, nothing woke it: it never left its
  // loop and wrote no record.
  REQUIRE(t1.size() == 1);
  CHECK(t1[0].kind == SchedPhase::Dispatch);
  CHECK(t1[0].tasks_processed == 0);
  CHECK(c[0].end == at(2570));
  CHECK(t1[0].start == at(2570));
  CHECK(t1[0].end == at(2570));
  CHECK(t1[0].pop_miss > 0);
}

// Upstream: scheduler_dispatch.cpp SchedulerContext::resolve_and_dispatch,
// after the loop: "Drain any entries left in the deferred-release batch"
// (`while (deferred_release_count > 0) on_task_release(...)`, no Release
// phase record), before the final zero-length dispatch record; pto_scheduler.h
// on_task_release ends with the task's own check_and_handle_consumed, whose
// advance_ring_pointers moves the ring's tail past it.
TEST_CASE("a thread releases its deferred tasks after it leaves its loop", "[conformance]") {
  ConfSim s("sched_idle_peers_exit.json");
  s.run();
  REQUIRE(s.finished());
  // Thread 0 completes the task in the complete phase ending at 2570 (FIN
  // seen 2520, complete 50) and defers its release. The next iteration
  // (2570, loop 10) finds no running core and the run finished: it leaves at
  // 2580 and releases the task (10): the tail passes it at 2590. Before, the
  // deferred list was dropped at the exit: the task never retired.
  const TaskId k = root_task(0);
  CHECK(s.obs.completed.at(k) == at(2520));
  REQUIRE(s.obs.retired.count(k) == 1);
  CHECK(s.obs.retired.at(k) == at(2590));
  // The final drain writes no release record.
  CHECK(s.phases(SchedPhase::Release).empty());
  CHECK(s.chip->runtime().total_submitted() == 1);
}
