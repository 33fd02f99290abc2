// The 2-deep pipeline share (tools/pending_share.py; docs/conformance.md,
// "The 2-deep pipeline share"): of the block starts that follow another block
// on the same core, those dispatched before that block's end, i.e. into the
// core's pending slot. What decides it for a consumer of a running producer
// is early dispatch (hw-native-sys/simpler
// src/a2a3/runtime/tensormap_and_ringbuffer/runtime/scheduler/):
// pto_scheduler.h propagate_dispatch_fanin makes a consumer whose every
// producer is flagged (allow_early_resolve) a candidate once they are fully
// published, and scheduler_dispatch.cpp try_early_dispatch stages it gated
// on an idle core or, with none, in the pending slot of a core whose running
// block's ACK was seen (CoreTracker::get_pending_core_offset_states). Without
// the flag the consumer is ready only at the producer's completion, after
// its blocks ended. Times are exact on the tiny platform (2 AICs = cores 0-1,
// 4 AIVs; loop 10, COND poll 100, complete 50, fanout edge 10, pop 20,
// payload 100, submit 200, DMB arrival 300, entry poll 200, receive->start
// 500 of which the ACK write 50, FIN notice 100), one scheduler thread.
#include "tests/catch.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/conformance/conf_sched_fixture.h"

using namespace npusim;
using conf::ConfSim;
using conf::at;
using conf::root_task;

namespace {

// tools/pending_share.py's count on the blocks of a run: per core, blocks
// in dispatch order; a block after another counts when it was dispatched
// strictly before the previous one's end. {pairs, into the pending slot}.
std::pair<int, int> pending_share(const ConfSim& s) {
  std::map<int, std::vector<BlockRecord>> by_core;
  for (const auto& b : s.obs.blocks) by_core[b.rec.core].push_back(b.rec);
  int pairs = 0, pending = 0;
  for (auto& [core, v] : by_core) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.dispatch < b.dispatch; });
    for (std::size_t i = 1; i < v.size(); ++i) {
      ++pairs;
      pending += v[i].dispatch < v[i - 1].end;
    }
  }
  return {pairs, pending};
}

// P: 2 AIC blocks of 1000 ns, dispatched at 420 (the iteration from 190:
// loop 10, pop 20, two payloads 100 each); each receives its token at
// 420 + 300 + 200 = 920, ACKs and starts at 1420 and ends at 2420.
void check_producer(const ConfSim& s) {
  const auto p = s.of_task(root_task(0));
  REQUIRE(p.size() == 2);
  for (const auto& b : p) {
    CHECK(b.dispatch == at(420));
    CHECK(b.start == at(1420));
    CHECK(b.end == at(2420));
  }
}

}  // namespace

// Upstream: pto_scheduler.h propagate_dispatch_fanin (C a candidate once P's
// blocks are all published), scheduler_dispatch.cpp try_early_dispatch /
// early_dispatch_shape (the PENDING stage), scheduler_types.h
// CoreTracker::get_pending_core_offset_states (a running core whose
// pending_occupied bit the ACK cleared: scheduler_completion.cpp
// decide_slot_transition Case 4).
TEST_CASE("a flagged producer's consumer is staged into the pending slot of a core still running it",
          "[conformance][pending_share]") {
  ConfSim s("sched_pending_flagged.json");
  s.run();
  REQUIRE(s.finished());
  check_producer(s);
  const auto c = s.of_task(root_task(1));
  REQUIRE(c.size() == 1);
  // C is a candidate at 420, but both AICs hold P unacknowledged. The
  // iterations from 420 take 210 (loop 10, two COND reads of 100); P's ACKs
  // are visible from 1520, so the iteration from 1470 sees them at 1580 and
  // 1680; its early-dispatch pass pops C (20) and stages it gated in core 0's
  // pending slot with one payload (100): 1800, before P's block there ends.
  CHECK(c[0].gated);
  CHECK(c[0].core == 0);
  CHECK(c[0].dispatch == at(1800));
  CHECK(c[0].dispatch < s.of_task(root_task(0))[0].end);
  const auto e = s.phases(SchedPhase::EarlyDispatch);
  REQUIRE(e.size() == 1);
  CHECK(e[0].start == at(1680));
  CHECK(e[0].end == at(1800));
  // The core reads C's token when P's block returns (2420). P's FINs
  // (visible 2520) are read at 2540 and 2640; completing P (50, one edge 10)
  // rings C's doorbell at 2700; it reaches the core at 3000, the spin loop
  // sees it at 3200, ACK 50: 3250.
  CHECK(c[0].receive == at(2420));
  CHECK(c[0].release == at(2700));
  CHECK(c[0].start == at(3250));
  CHECK(pending_share(s) == std::make_pair(1, 1));
}

// Upstream: as above; an unflagged producer does not propagate
// (propagate_dispatch_fanin returns at `!allow_early_resolve()`), so C is
// pushed ready by P's completion (on_task_complete) and dispatched by
// dispatch_ready_tasks on the core P left idle.
TEST_CASE("an unflagged producer's consumer goes to an idle core after the producer ended",
          "[conformance][pending_share]") {
  ConfSim s("sched_pending_unflagged.json");
  s.run();
  REQUIRE(s.finished());
  check_producer(s);
  const auto c = s.of_task(root_task(1));
  REQUIRE(c.size() == 1);
  // P's FINs are visible from 2520: the iteration from 2310 reads core 0 at
  // 2420 (not yet) and core 1 at 2520 (block 1 done); the next, from 2520,
  // reads core 0 at 2630: P completes (50), its edge to C (10) pushes C
  // ready at 2690, and the dispatch phase pops it (20) and writes one
  // payload (100) to the idle core 0: 2810, 390 ns after P's block there
  // ended; C starts at 2810 + 300 + 200 + 500 = 3810, 560 ns later than
  // when it was staged.
  CHECK_FALSE(c[0].gated);
  CHECK(c[0].core == 0);
  CHECK(c[0].dispatch == at(2810));
  CHECK(c[0].start == at(3810));
  CHECK(s.phases(SchedPhase::EarlyDispatch).empty());
  CHECK(pending_share(s) == std::make_pair(1, 0));
}

// Upstream: pto_scheduler.h propagate_dispatch_fanin returns while the
// producer's early_dispatch_state is STAGING ("a task's successors
// early-dispatch off its DIRECT producers' marks, never an inherited
// chain"): a staged producer propagates when its own producer's completion
// releases it (try_early_dispatch_release, then the EarlyDispatchReleaseSink
// replay). This is why the first wave of qwen3_decode's q_proj cannot sit
// behind the previous layer's down_proj.
TEST_CASE("early dispatch does not chain: a staged producer's consumer waits for its release",
          "[conformance][pending_share]") {
  ConfSim s("sched_pending_chain.json");
  s.run();
  REQUIRE(s.finished());
  check_producer(s);
  const auto q = s.of_task(root_task(1)), r = s.of_task(root_task(2));
  REQUIRE((q.size() == 1 && r.size() == 1));
  // Q (flagged, AIV) is staged gated on the idle AIV 2 in the pass after P's
  // publish: pop 20, payload 100: 540.
  CHECK(q[0].gated);
  CHECK(q[0].core == 2);
  CHECK(q[0].dispatch == at(540));
  // R is no candidate while Q is staged, though AIC 0's pending slot is free
  // from 1580. P completes as in the flagged case and rings Q's doorbell at
  // 2700; Q released propagates to R, which the early-dispatch pass of the
  // same iteration stages (pop 20, payload 100) on the now idle AIC 0: 2820,
  // after P's block there ended. Q starts at 3250 and ends at 4250; its FIN
  // (visible 4350) is read at 4370, completing Q rings R's doorbell at 4430,
  // and R starts at 4430 + 300 + 200 + 50 = 4980.
  CHECK(q[0].release == at(2700));
  CHECK(r[0].gated);
  CHECK(r[0].core == 0);
  CHECK(r[0].dispatch == at(2820));
  CHECK(r[0].release == at(4430));
  CHECK(r[0].start == at(4980));
  CHECK(pending_share(s) == std::make_pair(1, 0));
}

namespace {

// The kernels of the submits a trace program flags early_resolve, through
// its for and scope bodies; `all` collects every submitted kernel.
void flagged_kernels(const nlohmann::json& ops, std::set<std::string>& flagged, std::set<std::string>& all) {
  for (const auto& op : ops) {
    if (op.contains("body")) flagged_kernels(op["body"], flagged, all);
    if (op.value("op", "") != "submit") continue;
    all.insert(op["kernel"].get<std::string>());
    if (op.value("early_resolve", false)) flagged.insert(op["kernel"].get<std::string>());
  }
}

}  // namespace

// Upstream: examples/a2a3/tensormap_and_ringbuffer/qwen3_14b_decode/kernels/
// orchestration/decode_fwd_layers.cpp (aicpu_orchestration_entry, the same
// at simpler 6ebaf77 as at its 40-layer harvest) calls
// set_allow_early_resolve(true) on these producers and no other; the flags
// decide which consumers propagate_dispatch_fanin stages early, hence the
// pending-slot share (docs/conformance.md, "The 2-deep pipeline share").
// The scene traces/scenes/qwen3_decode makes the same calls
// (tests/test_scenes.cpp compares their deps.json).
TEST_CASE("qwen3_decode flags early_resolve on the producers decode_fwd_layers.cpp flags",
          "[conformance][pending_share]") {
  std::ifstream f(std::string(NPUSIM_SOURCE_DIR) + "/traces/qwen3_decode.json");
  REQUIRE(f.good());
  const nlohmann::json t = nlohmann::json::parse(f);
  std::set<std::string> flagged, all;
  flagged_kernels(t["program"], flagged, all);
  const std::set<std::string> source = {
      "pa_tiling_cce", "xgamma0",          "attn_out_seed",       "rms_recip",           "q_seed",
      "q_proj",        "mlp_out_seed",     "k_proj",              "v_proj",              "attention",
      "residual_rms_cast", "residual_rms_cast_0", "residual_rms_cast_1", "residual_rms_cast_2",
      "residual_rms_cast_3", "down_proj",  "dcr_xgamma"};
  CHECK(flagged == source);
  CHECK(all.size() == 36);  // every kernel of the trace is submitted; the other 19 unflagged
  CHECK(all.count("silu") == 1);
  CHECK(flagged.count("silu") == 0);
}
