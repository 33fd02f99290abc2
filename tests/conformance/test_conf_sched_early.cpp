// Conformance of early dispatch and sync-start with the runtime's source
// (hw-native-sys/simpler src/a2a3/runtime/tensormap_and_ringbuffer/): the
// AICore side of a gated block (aicore/aicore_executor.cpp) and the
// scheduler's early-dispatch and sync-start paths
// (runtime/scheduler/scheduler_dispatch.cpp). Times are exact on the tiny
// platform (loop 10, COND poll 100, complete 50, fanout edge 10, pop 20,
// payload 100, submit 200, DMB arrival 300, entry poll 200, receive->start
// 500 of which the ACK write 50, FIN notice 100).
#include "tests/catch.h"

#include "tests/conformance/conf_sched_fixture.h"

using namespace npusim;
using conf::ConfSim;
using conf::at;
using conf::root_task;


// Upstream: aicore_executor.cpp aicore_execute: a gated payload
// (src_payload != 0) fills its arguments, then spins until
// read_dmb_high32() == task_id, and only then writes
// MAKE_ACK_VALUE(task_id) to COND and runs the kernel. The doorbell is
// therefore noticed through the spin loop (entry poll) and the ACK write is
// paid after it, as on the normal path after a new token.
TEST_CASE("a gated block sees its doorbell through the spin loop, then ACKs and starts", "[conformance]") {
  ConfSim s("sched_doorbell_start.json");
  s.run();
  REQUIRE(s.finished());
  const auto p = s.of_task(root_task(0)), c = s.of_task(root_task(1));
  REQUIRE((p.size() == 1 && c.size() == 1));
  CHECK(p[0].end == at(2320));
  // C is staged gated at 550 on the next idle AIV (pop 20 + payload 100
  // after the iteration at 430); its token arrives at 850 and is picked up
  // at 1050; its setup without the ACK ends at 1050 + 450 = 1500.
  CHECK(c[0].gated);
  CHECK(c[0].dispatch == at(550));
  CHECK(c[0].receive == at(1050));
  // P's FIN (visible 2420) is read at 2420; completing P (50 + one edge 10)
  // rings C's doorbell at 2480 (+ one MMIO write 0); it reaches the core at
  // 2780, the spinning core notices it at 2780 + 200, and ACKs: 2980 + 50.
  CHECK(c[0].release == at(2480));
  CHECK(c[0].start == at(3030));
  CHECK(c[0].end == at(4030));
}

// Upstream: scheduler_completion.cpp SchedulerContext::handle_drain_mode
// (ack, availability on the coordinator, then every thread stages its own
// cores: stage_sync_start_cores, with DrainPrepare / DrainPublish records
// per staged batch, and a Drain record per thread that staged);
// scheduler_dispatch.cpp resolve_and_dispatch (the drain check `continue`s
// past dummy, dispatch and release). Upstream test: spmd_sync_start
// (a cohort wider than one thread's cores).
TEST_CASE("a drained sync-start cohort is staged by each thread on its own cores", "[conformance]") {
  ConfSim s("sched_drain_parallel.json");
  s.run();
  REQUIRE(s.finished());
  const auto k = s.of_task(root_task(0));
  REQUIRE(k.size() == 4);
  // Staging is released at 230 (the coordinator saw every thread's ack and
  // 4 idle AIVs); thread 0 and thread 1 each claim two blocks and build
  // their two payloads (100 each) in parallel, so every block is published
  // at 430. One thread placing all four would have built four payloads.
  int staged_by[3] = {0, 0, 0};
  for (const auto& b : k) {
    CHECK(b.dispatch == at(430));
    CHECK(b.start == at(430 + 300 + 200 + 500));
    ++staged_by[b.thread];
  }
  CHECK(staged_by[0] == 2);
  CHECK(staged_by[1] == 2);
  // One drain, drain_prepare and drain_publish record per staging thread,
  // counting its blocks / subtasks; thread 2 owns no cluster and stages
  // nothing, so it records none.
  for (SchedPhase kind : {SchedPhase::Drain, SchedPhase::DrainPrepare, SchedPhase::DrainPublish}) {
    INFO(sched_phase_name(kind));
    const auto recs = s.phases(kind);
    REQUIRE(recs.size() == 2);
    for (int i = 0; i < 2; ++i) {
      CHECK(recs[i].thread == i);
      CHECK(recs[i].tasks_processed == 2);
    }
  }
  const auto prep = s.phases(SchedPhase::DrainPrepare);
  CHECK(prep[0].start == at(230));
  CHECK(prep[0].end == at(430));
}

// Upstream: pto_orchestrator.cpp submit_task sets the sync_start attribute
// only `if (block_num > 1 && args.launch_spec.require_sync_start())` ("sync_start
// is only meaningful for tasks with block_num > 1"), so a one-block launch
// that asks for it is an ordinary task everywhere in the scheduler: its
// normal ready queue, pending slots, and (pto_scheduler.h
// try_enqueue_early_dispatch_candidate) the early-dispatch queue of its shape.
// Here it is staged gated while its flagged producer runs, exactly as the
// consumer of sched_doorbell_start.json without sync_start is.
TEST_CASE("sync_start on a one-block launch is ignored: it early-dispatches like any task", "[conformance]") {
  ConfSim s("sched_sync_start_one_block.json");
  s.run();
  REQUIRE(s.finished());
  const auto c = s.of_task(root_task(1));
  REQUIRE(c.size() == 1);
  CHECK(c[0].gated);
  CHECK(c[0].dispatch == at(550));
  CHECK(c[0].release == at(2480));
  CHECK(c[0].start == at(3030));
  REQUIRE(s.phases(SchedPhase::EarlyDispatch).size() == 1);
}

// Upstream test: tensormap_and_ringbuffer spmd_sync_start_edge (five MIX
// launches over one INOUT output: block_num 1, c/3, c/3+1, c-1 with
// require_sync_start, then 1 without; every block writes its cache lines).
// pto_orchestrator.cpp submit_task: the one-block launch carries no
// sync_start attribute; the others are cohorts, the wider than one thread's
// 8 clusters (9, 23) drained (scheduler_completion.cpp handle_drain_mode).
TEST_CASE("spmd_sync_start_edge: every block of each boundary-width launch runs", "[conformance]") {
  ConfSim s("spmd_sync_start_edge.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  const int widths[5] = {1, 8, 9, 23, 1};
  for (int i = 0; i < 5; ++i) {
    INFO("launch " << i);
    const auto b = s.of_task(root_task(static_cast<std::uint64_t>(i)));
    REQUIRE(static_cast<int>(b.size()) == widths[i] * 3);  // AIC + 2 AIV per block
    std::vector<int> seen(static_cast<std::size_t>(widths[i]), 0);
    for (const auto& r : b) ++seen[static_cast<std::size_t>(r.block_idx)];
    for (int n : seen) CHECK(n == 3);
  }
  // The 9- and 23-block cohorts exceed one thread's 8 clusters: each is
  // staged through a drain by more than one thread.
  int drains = 0;
  for (const auto& r : s.phases(SchedPhase::Drain)) drains += r.tasks_processed;
  CHECK(drains == 9 + 23);
}

// Upstream: pto_orchestrator.cpp submit_dummy_task carries the early-dispatch
// hint over (`task_attrs.set_early_resolve(args.allow_early_resolve())`), and
// wire_fanin_task disqualifies a consumer with any unflagged WAIT producer,
// completed or not, while a flagged completed producer seeds its
// dispatch_fanin. So a flagged dummy that completed before its consumer is
// wired leaves the consumer eligible (staged gated while its flagged kernel
// producer runs, as in sched_doorbell_start.json); an unflagged one does not.
TEST_CASE("a flagged dummy producer leaves its consumer early-dispatchable, an unflagged one does not",
          "[conformance]") {
  SECTION("flagged") {
    ConfSim s("sched_flagged_dummy.json");
    s.run();
    REQUIRE(s.finished());
    const auto c = s.of_task(root_task(2));
    REQUIRE(c.size() == 1);
    // D is retired at 430, before C's submit ends at 600; C is staged gated
    // in the next early-dispatch pass (dispatch 830), long before P ends.
    // P's completion rings C's doorbell at 2540; it reaches the core at
    // 2840, is seen at 2840 + 200 and ACKed: 3090.
    CHECK(c[0].gated);
    CHECK(c[0].dispatch == at(830));
    CHECK(c[0].release == at(2540));
    CHECK(c[0].start == at(3090));
    CHECK(s.phases(SchedPhase::EarlyDispatch).size() == 1);
  }
  SECTION("unflagged") {
    ConfSim s("sched_unflagged_dummy.json");
    s.run();
    REQUIRE(s.finished());
    const auto p = s.of_task(root_task(0)), c = s.of_task(root_task(2));
    REQUIRE((p.size() == 1 && c.size() == 1));
    CHECK_FALSE(c[0].gated);
    CHECK(c[0].dispatch > p[0].end);
    CHECK(s.phases(SchedPhase::EarlyDispatch).empty());
  }
}

// Upstream: pto_scheduler.h on_task_complete: "A pre-staged consumer that
// becomes ready has its doorbell rung INLINE ... the moment its node is
// reached, not batched to after the whole walk" (release_fanin_and_check_ready
// -> route_ready_once -> try_early_dispatch_release rings the staged cores in
// core order, then one wmb); the released consumers' own propagation
// (propagate_dispatch_fanin) is collected in an EarlyDispatchReleaseSink and
// replayed after the walk.
TEST_CASE("a completion rings each staged consumer's doorbell when its fanout walk reaches it", "[conformance]") {
  ConfSim s("sched_doorbell_in_walk.json");
  s.run();
  REQUIRE(s.finished());
  // P's completion starts at 2440: complete 50, then the walk, newest
  // consumer first, 10 per edge: C3's doorbell at 2500, C2's at 2510, C1's
  // at 2520 (npusim rang all three at the walk's end, 2520).
  const Time release[3] = {at(2520), at(2510), at(2500)};
  for (int i = 0; i < 3; ++i) {
    INFO("consumer C" << i + 1);
    const auto c = s.of_task(root_task(static_cast<std::uint64_t>(i + 1)));
    REQUIRE(c.size() == 1);
    CHECK(c[0].gated);
    CHECK(c[0].release == release[i]);
    // The doorbell reaches the core 300 later, is seen 200 later, ACK 50.
    CHECK(c[0].start == release[i] + at(550));
  }
}

// Upstream: scheduler_dispatch.cpp try_early_dispatch runs the early queues
// through run_staging_order with has_residual_early_mix: a MIX candidate
// left in the early MIX queue after the idle MIX stage (early_dispatch_shape
// pops it, finds no cluster whose used cores are all idle and pushes it back)
// holds back the AIC/AIV stages of the pass, and MIX goes into pending slots
// first. EarlyDispatch records count the blocks staged
// (stage_consumer_blocks' return), not the subtasks.
TEST_CASE("early dispatch skips AIC/AIV while MIX candidates remain, and counts staged blocks", "[conformance]") {
  ConfSim s("sched_early_mix_residual.json");
  s.run();
  REQUIRE(s.finished());
  const auto m = s.of_task(root_task(3)), d = s.of_task(root_task(4));
  REQUIRE((m.size() == 3 && d.size() == 1));
  // P is dispatched at 4720 and makes M and D candidates together. The pass
  // that follows: the idle MIX stage pops M (20) and puts it back (AIC0 holds
  // P unacknowledged, AIC1 runs Q), so the AIC/AIV stages are skipped; the
  // pending MIX stage pops M again (20) and stages it on cluster 1 (AIC1's
  // pending slot, both AIVs idle: three payloads, 300): 5060. D waits for the
  // next iteration (complete 5060..5320, pop 20, payload 100): 5440. npusim
  // used to stage D on an idle AIV first and M after it, both at 4960.
  for (const auto& b : m) {
    CHECK(b.gated);
    CHECK(b.dispatch == at(5060));
    CHECK((b.core == 1 || b.core == 4 || b.core == 5));
  }
  CHECK(d[0].gated);
  CHECK(d[0].dispatch == at(5440));
  const auto recs = s.phases(SchedPhase::EarlyDispatch);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].tasks_processed == 1);  // M: one block of three subtasks
  CHECK(recs[0].start == at(4720));
  CHECK(recs[0].end == at(5060));
  CHECK(recs[1].tasks_processed == 1);
}

// Upstream: pto_scheduler.h try_enqueue_early_dispatch_candidate (a
// sync_start consumer of a fully published flagged producer goes to
// early_sync_start_queue); scheduler_dispatch.cpp try_early_dispatch tier 0
// (the owner stages the whole cohort locally when count_available_blocks
// with pending slots holds it: stage_sync_start_cores gated, idle cores into
// running slots and running cores' free pending slots; running_slot_count
// seeded with the running-slot cores; no drain records, the early_dispatch
// record counts the blocks); scheduler_completion.cpp
// check_running_cores_for_completion (a gated sync_start block promoted into
// its running slot after the running FIN bumps running_slot_count) and
// pto_scheduler.h maybe_rendezvous_ring (the doorbells ring once every staged
// core is in a running slot and the producer released the cohort). Upstream
// test: dfx/chip_swimlane test_sync_start_early_local_owner.py.
TEST_CASE("an early sync-start cohort that fits its owner is staged locally, pending slots included, and rings at the rendezvous",
          "[conformance]") {
  ConfSim s("sched_sync_early_local.json");
  s.run();
  REQUIRE(s.finished());
  const auto p = s.of_task(root_task(0)), c = s.of_task(root_task(7));
  REQUIRE((p.size() == 2 && c.size() == 4));
  // P runs on AIV2 and AIV3 (ACKs seen at 1520); C is wired at 1600 after the
  // six dummies. The early pass at 1770 stages blocks 0 and 1 on the idle
  // AIV4 and AIV5 (pop 20, two payloads: 1970), then blocks 2 and 3 into the
  // pending slots of AIV2 and AIV3 (2170).
  const int core[4] = {4, 5, 2, 3};
  const Time dispatch[4] = {at(1970), at(1970), at(2170), at(2170)};
  for (int i = 0; i < 4; ++i) {
    INFO("block " << i);
    CHECK(c[i].gated);
    CHECK(c[i].core == core[i]);
    CHECK(c[i].dispatch == dispatch[i]);
    // P's FINs are read at 2550 (AIV2: block 2 promoted, 3 of 4 cores in a
    // running slot) and 2650 (AIV3: P completes, 50 + one edge, releasing C
    // at 2710 while block 3 still sits in the pending slot; then block 3 is
    // promoted, the fourth core): every doorbell rings at 2710.
    CHECK(c[i].release == at(2710));
  }
  // The parked AIV4/AIV5 see the doorbell at 3010 + 200 and ACK: 3260; the
  // promoted blocks arrived at 2470 on cores free since 2420 (receive 2670,
  // setup done 3120) see it while still setting up: 3170.
  CHECK(c[0].start == at(3260));
  CHECK(c[2].start == at(3170));
  const auto early = s.phases(SchedPhase::EarlyDispatch);
  REQUIRE(early.size() == 1);
  CHECK(early[0].tasks_processed == 4);
  CHECK(s.phases(SchedPhase::Drain).empty());
  CHECK(s.phases(SchedPhase::DrainPrepare).empty());
}

// Upstream: scheduler_dispatch.cpp try_early_dispatch tier 0 falls back to
// enter_drain_mode when the owner's idle cores and free pending slots cannot
// hold the cohort; scheduler_completion.cpp handle_drain_mode for a gated
// drain (owns_early_sync_drain): count_global_available with include_pending,
// stage_sync_start_cores gated on idle cores then pending slots (drain,
// drain_prepare and drain_publish records), the coordinator seeding
// running_slot_count from drain_running_staged and retrying the rendezvous.
TEST_CASE("an early sync-start cohort its owner cannot hold goes through a gated drain counting pending slots",
          "[conformance]") {
  ConfSim s("sched_sync_early_drain.json");
  s.run();
  REQUIRE(s.finished());
  const auto c = s.of_task(root_task(1));
  REQUIRE(c.size() == 4);
  // C is a candidate at 420, before P's ACKs are seen (1520): two idle AIVs
  // and no free pending slot, so the owner starts a gated drain. Its
  // capacity (2 idle + 2 pending) exists once the ACKs are read; the drain
  // stages blocks 0 and 1 on AIV4/AIV5 (1680..1880) and 2 and 3 into the
  // pending slots of AIV2/AIV3 (1880..2080). P completes at 2710 + 60; the
  // last promotion follows and every doorbell rings at 2770.
  const Time dispatch[4] = {at(1880), at(1880), at(2080), at(2080)};
  for (int i = 0; i < 4; ++i) {
    INFO("block " << i);
    CHECK(c[i].gated);
    CHECK(c[i].dispatch == dispatch[i]);
    CHECK(c[i].release == at(2770));
  }
  const auto drain = s.phases(SchedPhase::Drain);
  REQUIRE(drain.size() == 1);
  CHECK(drain[0].tasks_processed == 4);
  CHECK(drain[0].start == at(1680));
  CHECK(s.phases(SchedPhase::DrainPrepare).size() == 2);  // the idle and the pending batch
  CHECK(s.phases(SchedPhase::EarlyDispatch).empty());
}

// Upstream: scheduler_dispatch.cpp SchedulerContext::try_early_dispatch: tier 0
// (the sync-start candidate) arms a drain with enter_drain_mode and the same
// call then runs the regular early staging (run_staging_order with
// early_dispatch_shape): nothing in try_early_dispatch looks at
// sync_start_pending after tier 0. resolve_and_dispatch checks the drain
// only once per iteration, before dummies and dispatch, so the drain stops
// the thread from its next iteration on.
TEST_CASE("the early pass that arms a sync-start drain still stages the other candidates", "[conformance]") {
  ConfSim s("sched_sync_early_drain_more.json");
  s.run();
  REQUIRE(s.finished());
  // P is dispatched at 2800, after Q (a FIN read in the iteration from 2410);
  // C and D become candidates then. The early pass starts at 2800: C finds
  // 2 idle AIVs and no free pending slot (P's cores not ACKed), so it arms
  // a gated drain; the pass goes on to the AIV stage: pop 20, payload 100,
  // D staged gated on AIV4 at 2920.
  const auto d = s.of_task(root_task(3));
  REQUIRE(d.size() == 1);
  CHECK(d[0].gated);
  CHECK(d[0].dispatch == at(2920));
  const auto early = s.phases(SchedPhase::EarlyDispatch);
  REQUIRE(early.size() == 1);
  CHECK(early[0].start == at(2800));
  CHECK(early[0].end == at(2920));
  CHECK(early[0].tasks_processed == 1);
  // The drain then stages all of C once P and D free their cores.
  const auto drain = s.phases(SchedPhase::Drain);
  REQUIRE(drain.size() == 1);
  CHECK(drain[0].tasks_processed == 4);
}

// Upstream: scheduler_completion.cpp SchedulerContext::handle_drain_mode: a
// follower that has staged its share spins until the coordinator reopens
// the gate (sync_start_pending back to 0), which the coordinator does only
// once every thread's stage_done bit is set; resolve_and_dispatch stamps
// the Drain record's end after handle_drain_mode returns. Upstream test:
// spmd_sync_start (a cohort wider than one thread's cores).
TEST_CASE("a drain follower leaves the drain when the coordinator reopens the gate", "[conformance]") {
  ConfSim s("sched_drain_uneven.json");
  s.run();
  REQUIRE(s.finished());
  // Staging is released at 230: thread 0 builds two payloads (230..430),
  // thread 1 one (230..330). The gate reopens at 430, when thread 0 is done.
  const auto prep = s.phases(SchedPhase::DrainPrepare);
  REQUIRE(prep.size() == 2);
  CHECK(prep[1].thread == 1);
  CHECK(prep[1].end == at(330));
  const auto drain = s.phases(SchedPhase::Drain);
  REQUIRE(drain.size() == 2);
  for (const auto& r : drain) {
    INFO("thread " << r.thread);
    CHECK(r.start == at(230));
    CHECK(r.end == at(430));
    CHECK(r.tasks_processed == (r.thread == 0 ? 2 : 1));
  }
}
