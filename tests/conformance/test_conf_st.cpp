// The runtime's system tests (hw-native-sys/simpler tests/st/a2a3/
// tensormap_and_ringbuffer/ and tests/st/runtime_fatal_codes/) reproduced as
// traces (tests/conformance/traces/): each TEST_CASE names the upstream test
// it reproduces and the runtime source whose rule decides the outcome, and
// asserts that outcome. The kernels' data is not computed, so where an
// upstream test compares output values, the test here asserts what produces
// them: every block of every lane runs once, in the order the dependencies
// allow. docs/conformance.md lists every upstream system test and its status.
#include "tests/catch.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/cli_support.h"
#include "tests/conformance/conf_sched_fixture.h"

using namespace npusim;
using conf::ConfSim;
using conf::root_task;

namespace {

// Every block index of the task ran exactly `lanes` times (one record per
// active lane: 3 for a MIX task of AIC + AIV0 + AIV1, 1 for an AIV task).
void check_every_block_ran(const std::vector<BlockRecord>& blocks, int block_num, int lanes) {
  REQUIRE(static_cast<int>(blocks.size()) == block_num * lanes);
  std::map<int, int> seen;
  for (const auto& b : blocks) ++seen[b.block_idx];
  REQUIRE(static_cast<int>(seen.size()) == block_num);
  for (const auto& [idx, n] : seen) {
    INFO("block_idx " << idx);
    CHECK(idx >= 0);
    CHECK(idx < block_num);
    CHECK(n == lanes);
  }
}

Time first_start(const std::vector<BlockRecord>& b) {
  Time t = b.at(0).start;
  for (const auto& r : b) t = std::min(t, r.start);
  return t;
}
Time last_end(const std::vector<BlockRecord>& b) {
  Time t = 0;
  for (const auto& r : b) t = std::max(t, r.end);
  return t;
}

// The most blocks running at once (kernel start to end).
int max_concurrent(const std::vector<BlockRecord>& b) {
  std::vector<std::pair<Time, int>> ev;
  for (const auto& r : b) {
    ev.emplace_back(r.start, 1);
    ev.emplace_back(r.end, -1);
  }
  std::sort(ev.begin(), ev.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second < y.second;  // an end before a start at the same time
  });
  int now = 0, most = 0;
  for (const auto& e : ev) most = std::max(most, now += e.second);
  return most;
}

// A chain of SPMD launches INOUT on one tensor, of the given widths: every
// lane of every block runs once, and each launch starts only after the one
// before it ended (pto_orchestrator.cpp submit_task: the tensormap lookup of
// the INOUT argument finds the previous writer; a producer's consumers are
// released by its completion, scheduler_completion.cpp).
void check_inout_chain(const ConfSim& s, const std::vector<int>& widths, int lanes) {
  for (std::size_t i = 0; i < widths.size(); ++i) {
    INFO("launch " << i << " (block_num " << widths[i] << ")");
    const auto b = s.of_task(root_task(i));
    check_every_block_ran(b, widths[i], lanes);
    if (i > 0) CHECK(first_start(b) >= last_end(s.of_task(root_task(i - 1))));
  }
}

// Every block of a sync-start cohort is placed at once: the last block to be
// launched (its DATA_MAIN_BASE store, or for a gated block its doorbell) is
// launched before any block of the cohort ends, so no block waits for a core
// that another block of the cohort frees (scheduler_dispatch.cpp places a
// cohort only whole, on the fast path or through the drain). The kernels'
// starts differ by the cores' own latencies.
void check_cohort_placed_whole(const std::vector<BlockRecord>& b) {
  REQUIRE_FALSE(b.empty());
  Time last_launch = 0, earliest_end = b[0].end;
  for (const auto& r : b) {
    last_launch = std::max(last_launch, r.gated ? r.release : r.dispatch);
    earliest_end = std::min(earliest_end, r.end);
  }
  CHECK(last_launch < earliest_end);
}

int drained_blocks(const ConfSim& s) {
  int n = 0;
  for (const auto& r : s.phases(SchedPhase::Drain)) n += r.tasks_processed;
  return n;
}


// The four launches of spmd_sync_start(_aiv) on a2a3: every block in INOUT
// order, the 1st, 2nd and 4th (sync_start) each placed whole, and `drained`
// blocks staged through the drain.
void check_four_launches(const std::string& trace, const std::vector<int>& widths, int lanes, int drained) {
  ConfSim s(trace, "a2a3");
  s.run();
  REQUIRE(s.finished());
  check_inout_chain(s, widths, lanes);
  for (std::uint64_t i : {0u, 1u, 3u}) check_cohort_placed_whole(s.of_task(root_task(i)));
  CHECK(drained_blocks(s) == drained);
}

}  // namespace

// ------------------------------------------------------------------ SPMD launches

// Upstream test: tensormap_and_ringbuffer spmd_basic (one MIX task of
// block_num 1; each of AIC, AIV0, AIV1 writes block_idx 0, block_num 1 and
// its sub_block_id into its own cache line). scheduler_dispatch.cpp
// dispatch_shape: a MIX block takes one cluster, one subtask per active lane.
TEST_CASE("tensormap_and_ringbuffer spmd_basic: one MIX block runs on AIC, AIV0 and AIV1 of one cluster",
          "[conformance]") {
  ConfSim s("spmd_basic.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  const auto b = s.of_task(root_task(0));
  REQUIRE(b.size() == 3);
  for (int lane = kLaneAic; lane <= kLaneAiv1; ++lane) {
    INFO("lane " << lane);
    CHECK(b[static_cast<std::size_t>(lane)].block_idx == 0);
    CHECK(b[static_cast<std::size_t>(lane)].lane == lane);
  }
  // The three subtasks are on one cluster: a2a3 numbers the AIC of cluster c
  // as core c and its AIVs as 24 + 2c and 24 + 2c + 1 (models/common/core_map.h).
  CHECK(b[1].core == 24 + 2 * b[0].core);
  CHECK(b[2].core == b[1].core + 1);
}

// Upstream test: tensormap_and_ringbuffer spmd_multiblock_aiv (five AIV
// launches, block_num 4, 16, 24, 48, 96, INOUT on one output; every block
// writes its block_idx). scheduler_dispatch.cpp dispatch_shape claims as many
// blocks as there are idle AIVs and re-pushes the rest, so the 96-block
// launch runs in two waves over a2a3's 48 AIVs.
TEST_CASE("tensormap_and_ringbuffer spmd_multiblock_aiv: every block of launches up to twice the AIV count runs",
          "[conformance]") {
  ConfSim s("spmd_multiblock_aiv.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  check_inout_chain(s, {4, 16, 24, 48, 96}, 1);
  CHECK(max_concurrent(s.of_task(root_task(3))) == 48);
  CHECK(max_concurrent(s.of_task(root_task(4))) == 48);
}

// Upstream test: tensormap_and_ringbuffer spmd_multiblock_mix (five MIX
// launches, block_num 2, 8, 12, 24, 48, INOUT on one output; each block's
// three subtasks write block_idx). A MIX block needs a whole cluster, so the
// 48-block launch runs in two waves over a2a3's 24 clusters.
TEST_CASE("tensormap_and_ringbuffer spmd_multiblock_mix: every lane of every block of MIX launches up to 48 blocks runs",
          "[conformance]") {
  ConfSim s("spmd_multiblock_mix.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  check_inout_chain(s, {2, 8, 12, 24, 48}, 3);
  CHECK(max_concurrent(s.of_task(root_task(4))) == 24 * 3);
}

// Upstream test: tensormap_and_ringbuffer spmd_batch_dispatch_oob (regression
// of upstream issue #565: two MIX launches of 48 blocks, twice the cluster
// count; the second dispatch must not index past an empty cluster mask).
// scheduler_dispatch.cpp dispatch_shape stops claiming when no cluster is
// idle and re-pushes the partly placed task.
TEST_CASE("tensormap_and_ringbuffer spmd_batch_dispatch_oob: two 48-block MIX launches run every block",
          "[conformance]") {
  ConfSim s("spmd_batch_dispatch_oob.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  check_inout_chain(s, {48, 48}, 3);
}

// Upstream test: tensormap_and_ringbuffer spmd_starvation (18 MIX launches
// of 4 blocks and 2 sync_start MIX launches of 6 blocks, interleaved, INOUT
// on one output: the sync_start launches are not starved by the normal ones).
// pto_orchestrator.cpp submit_task sets sync_start (block_num > 1);
// scheduler_dispatch.cpp places a sync_start cohort only when it fits whole,
// so its six blocks are all resident at once.
TEST_CASE("tensormap_and_ringbuffer spmd_starvation: sync_start launches between normal ones all run",
          "[conformance]") {
  ConfSim s("spmd_starvation.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  std::vector<int> widths;
  for (int g = 0; g < 3; ++g) {
    widths.insert(widths.end(), 6, 4);
    if (g < 2) widths.push_back(6);
  }
  check_inout_chain(s, widths, 3);
  check_cohort_placed_whole(s.of_task(root_task(6)));
  check_cohort_placed_whole(s.of_task(root_task(13)));
}

// ------------------------------------------------------------------ runtime_fatal_codes

// Upstream test: runtime_fatal_codes require_sync_start_invalid
// (require_sync_start_orch.cpp: one AIV launch of 1000 blocks with
// require_sync_start): orch_error_code=7. pto_orchestrator.cpp submit_task
// checks block_num against the core type's total (48 AIVs on a2a3) and
// reports REQUIRE_SYNC_START_INVALID at the submit.
TEST_CASE("runtime_fatal_codes require_sync_start_invalid: a sync_start launch wider than every AIV",
          "[conformance]") {
  ConfSim s("require_sync_start.json", "a2a3");
  s.run();
  REQUIRE(s.obs.errors.size() == 1);
  CHECK(s.obs.errors[0].code == ErrorCode::RequireSyncStartInvalid);
  CHECK(s.obs.errors[0].message == "require_sync_start block_num=1000 > limit=48 (deadlock guaranteed)");
  CHECK(s.obs.errors[0].time == 0);
  CHECK(s.obs.blocks.empty());
}

// Upstream test: runtime_fatal_codes aicore_hang (aicore_hang_orch.cpp: one
// AIC task whose kernel never returns, the scheduler timeout lowered to 2 s):
// sched_error_code=100 SCHEDULER_TIMEOUT with sub_class=S1 (a running task
// stalled), from the scheduler's watchdog (scheduler_dispatch.cpp
// resolve_and_dispatch, the idle branch; scheduler_cold_path.cpp
// handle_timeout_exit), its budget SIMPLER_SCHEDULER_TIMEOUT_MS=2000
// (run.scheduler_timeout_ms in the trace). Exact timings of the watchdog:
// tests/test_watchdog.cpp.
TEST_CASE("runtime_fatal_codes aicore_hang: a kernel that never returns is SCHEDULER_TIMEOUT S1 [cli]",
          "[conformance][cli]") {
  cli::RunResult r =
      cli::run_summary("tests/conformance/traces/aicore_hang.json --quiet --no-host-stats", "conf_st_hang");
  REQUIRE(r.summary.is_object());
  CHECK(r.status == 1);
  CHECK(r.summary["error"]["name"] == "SCHEDULER_TIMEOUT");
  CHECK(r.summary["error"]["sched_error_code"] == 100);
  CHECK(r.summary["error"]["sub_class"] == "S1:running-stalled");
  CHECK(r.summary["error"]["detector"] == "scheduler no-progress timeout (2000 ms)");
  CHECK(r.summary["error"]["device_time_ns"] == 2000000909.0);
}

// ------------------------------------------------------------------ sync-start

// Upstream test: tensormap_and_ringbuffer spmd_sync_start (four MIX launches
// INOUT on one output, widths clusters/12, /3, /12, /2, the first, second and
// fourth require_sync_start; the orchestration reports the layout through
// set_tensor_data). On a2a3 (24 clusters, 3 scheduler threads of 8 clusters
// each) the 2- and 8-block cohorts fit one thread's clusters and the
// 12-block one is drained (scheduler_completion.cpp handle_drain_mode).
TEST_CASE("tensormap_and_ringbuffer spmd_sync_start: MIX cohorts on the fast path and through the drain",
          "[conformance]") {
  check_four_launches("spmd_sync_start.json", {2, 8, 2, 12}, 3, 12);
}

// Upstream test: tensormap_and_ringbuffer spmd_sync_start_aiv (four AIV
// launches INOUT on one output, widths aiv/12, /3, /12, /2, the first, second
// and fourth require_sync_start: "fast path and drain"). On a2a3 (48 AIVs,
// 16 per scheduler thread) the 4- and 16-block cohorts fit one thread's AIVs
// and the 24-block one is drained.
TEST_CASE("tensormap_and_ringbuffer spmd_sync_start_aiv: AIV cohorts on the fast path and through the drain",
          "[conformance]") {
  check_four_launches("spmd_sync_start_aiv.json", {4, 16, 4, 24}, 1, 24);
}

// Upstream test: tensormap_and_ringbuffer spmd_sync_start_stress (6 rounds of
// 4 normal MIX launches of clusters/6 blocks, 2 sync_start MIX of clusters/2,
// 2 sync_start AIV of clusters/3 and 1 normal AIV of clusters/6, INOUT on one
// output). On a2a3: 4, 12, 8, 4 blocks; every 12-block MIX cohort exceeds a
// thread's 8 clusters and is drained, the 8-block AIV ones fit a thread's 16 AIVs.
TEST_CASE("tensormap_and_ringbuffer spmd_sync_start_stress: 54 launches of mixed shapes, cohorts and not",
          "[conformance]") {
  ConfSim s("spmd_sync_start_stress.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  std::uint64_t id = 0;
  for (int r = 0; r < 6; ++r) {
    INFO("round " << r);
    for (int i = 0; i < 4; ++i) check_every_block_ran(s.of_task(root_task(id++)), 4, 3);
    for (int i = 0; i < 2; ++i) {
      const auto b = s.of_task(root_task(id++));
      check_every_block_ran(b, 12, 3);
      check_cohort_placed_whole(b);
    }
    for (int i = 0; i < 2; ++i) {
      const auto b = s.of_task(root_task(id++));
      check_every_block_ran(b, 8, 1);
      check_cohort_placed_whole(b);
    }
    check_every_block_ran(s.of_task(root_task(id++)), 4, 1);
  }
  for (std::uint64_t i = 1; i < id; ++i)
    CHECK(first_start(s.of_task(root_task(i))) >= last_end(s.of_task(root_task(i - 1))));
  CHECK(drained_blocks(s) == 6 * 2 * 12);
}

// Upstream test: tensormap_and_ringbuffer spmd_sync_start_early_dispatch (in a
// manual scope a flagged AIC producer of 50 blocks, wider than the 24 AICs,
// then a sync_start MIX consumer of every cluster with the producer as its
// sole explicit dep: "the consumer must not stage until every producer block
// range has reserved a core slot; otherwise it occupies every AIC slot and
// strands the producer's unclaimed remainder"). pto_scheduler.h
// try_enqueue_early_dispatch_candidate / scheduler_dispatch.cpp: a consumer
// is an early-dispatch candidate only once its producers are fully dispatched.
TEST_CASE("tensormap_and_ringbuffer spmd_sync_start_early_dispatch: a device-wide cohort waits for the producer's last blocks",
          "[conformance]") {
  ConfSim s("spmd_sync_start_early_dispatch.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  const auto p = s.of_task(make_task_id(1, 0)), c = s.of_task(make_task_id(1, 1));
  check_every_block_ran(p, 50, 1);
  check_every_block_ran(c, 24, 3);
  check_cohort_placed_whole(c);
  Time last_dispatch = 0, first_consumer = c[0].dispatch;
  for (const auto& r : p) last_dispatch = std::max(last_dispatch, r.dispatch);
  for (const auto& r : c) first_consumer = std::min(first_consumer, r.dispatch);
  CHECK(first_consumer >= last_dispatch);
  CHECK(first_start(c) >= last_end(p));
}

// Upstream test: tensormap_and_ringbuffer spmd_sync_start_mix_spill
// (aicpu_thread_num 3: a flagged AIV producer on every AIV, then a
// sync_start MIX consumer on every cluster with it as a dep: the consumer
// pre-stages with its AIC on an idle core and both AIVs on the producer's
// busy cores' pending slots, and the rendezvous must count them so the gated
// cores launch). scheduler_dispatch.cpp stage_sync_start_cores (to_pending).
TEST_CASE("tensormap_and_ringbuffer spmd_sync_start_mix_spill: a cohort staged onto busy AIVs' pending slots launches",
          "[conformance]") {
  ConfSim s("spmd_sync_start_mix_spill.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  const auto p = s.of_task(root_task(0)), c = s.of_task(root_task(1));
  check_every_block_ran(p, 48, 1);
  check_every_block_ran(c, 24, 3);
  check_cohort_placed_whole(c);
  CHECK(first_start(c) >= last_end(p));
}

// The path the two tests above exercise upstream: the sync_start consumer of
// a flagged producer is an early-dispatch candidate (pto_scheduler.h
// early_sync_start_queue, try_claim_early_sync_drain; scheduler_dispatch.cpp
// stage_sync_start_cores with to_pending), staged gated while the producer
// still runs and launched by the doorbells after the rendezvous.
TEST_CASE("tensormap_and_ringbuffer spmd_sync_start_mix_spill / _early_dispatch (the sync_start consumer is staged early)",
          "[conformance]") {
  for (const char* trace : {"spmd_sync_start_mix_spill.json", "spmd_sync_start_early_dispatch.json"}) {
    INFO(trace);
    ConfSim s(trace, "a2a3");
    s.run();
    REQUIRE(s.finished());
    const bool scoped = std::string(trace) == "spmd_sync_start_early_dispatch.json";
    const auto p = s.of_task(make_task_id(scoped ? 1 : 0, 0)), c = s.of_task(make_task_id(scoped ? 1 : 0, 1));
    REQUIRE(!c.empty());
    for (const auto& r : c) {
      CHECK(r.gated);
      CHECK(r.dispatch < last_end(p));
    }
  }
}

// ------------------------------------------------------------------ predicates

namespace {

// The element of the external tensor `name` in the data store after the run.
std::int64_t element_of(const ConfSim& s, const std::string& name, std::int64_t element) {
  for (std::int32_t buffer = 0; buffer < 1024; ++buffer)
    if (s.data.name(buffer) == name) return s.data.get(buffer, element);
  FAIL("no tensor named " << name);
  return 0;
}

}  // namespace

// Upstream test: tensormap_and_ringbuffer predicated_dispatch (gate writer,
// X writer, a CLOBBER of X with the predicate gate[0] > 0 and an explicit dep
// on the gate writer, then a consumer of X; case 1 gate 0: the clobber is not
// dispatched, X keeps 42 and the consumer still runs; case 2 gate 1: the
// clobber runs and X = 999). The scheduler evaluates the predicate when the
// task becomes ready (scheduler_dispatch.cpp; pto_runtime2_types.h
// CoreTaskPredicate) and a false one retires the task without a core, which
// still releases its consumers.
TEST_CASE("tensormap_and_ringbuffer predicated_dispatch: a false predicate skips the task, a true one dispatches it",
          "[conformance]") {
  SECTION("PredicateFalseSkips") {
    ConfSim s("predicated_dispatch_false.json", "a2a3");
    s.run();
    REQUIRE(s.finished());
    CHECK(s.of_task(root_task(2)).empty());  // the clobber never reached a core
    const auto x = s.of_task(root_task(1)), y = s.of_task(root_task(3));
    REQUIRE((x.size() == 1 && y.size() == 1));
    CHECK(y[0].start >= x[0].end);
    CHECK(element_of(s, "X", 0) == 42);
    CHECK(element_of(s, "gate", 0) == 0);
  }
  SECTION("PredicateTrueDispatches") {
    ConfSim s("predicated_dispatch_true.json", "a2a3");
    s.run();
    REQUIRE(s.finished());
    const auto x = s.of_task(root_task(1)), clobber = s.of_task(root_task(2)), y = s.of_task(root_task(3));
    REQUIRE((x.size() == 1 && clobber.size() == 1 && y.size() == 1));
    CHECK(clobber[0].start >= x[0].end);
    CHECK(y[0].start >= clobber[0].end);
    CHECK(element_of(s, "X", 0) == 999);
  }
}

// ------------------------------------------------------------------ resource shapes

// Upstream test: tensormap_and_ringbuffer mixed_example case1 (4 iterations,
// each in its own scope, of five tasks, one per resource shape: AIC_AIV_X2,
// AIC_ONLY, AIV_X1, AIV_X2, AIC_AIV_X1, each writing its own output tiles).
// pto_orchestrator.cpp submit_task derives the shape from the active lanes
// (MixedKernels); scheduler_dispatch.cpp places each subtask on its lane's
// core of one cluster (a2a3: AIC c, AIV0 24 + 2c, AIV1 24 + 2c + 1).
TEST_CASE("tensormap_and_ringbuffer mixed_example: every lane of the five resource shapes runs on its core",
          "[conformance]") {
  ConfSim s("mixed_example.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  const std::vector<std::vector<int>> lanes = {
      {kLaneAic, kLaneAiv0, kLaneAiv1}, {kLaneAic}, {kLaneAiv0}, {kLaneAiv0, kLaneAiv1}, {kLaneAic, kLaneAiv0}};
  CoreMap map;
  map.clusters = 24;
  for (int it = 0; it < 4; ++it)
    for (int k = 0; k < 5; ++k) {
      INFO("iteration " << it << ", task " << k);
      const auto b = s.of_task(make_task_id(1, static_cast<std::uint64_t>(5 * it + k)));
      REQUIRE(b.size() == lanes[static_cast<std::size_t>(k)].size());
      for (std::size_t j = 0; j < b.size(); ++j) {
        CHECK(b[j].block_idx == 0);
        if (k == 2) {  // an AIV_X1 task takes any AIV
          CHECK(map.kind(b[j].core) == CoreKind::AIV);
          continue;
        }
        CHECK(b[j].lane == lanes[static_cast<std::size_t>(k)][j]);
        CHECK(b[j].core == map.of_lane(map.cluster_of(b[0].core), b[j].lane));  // one cluster
      }
    }
}

// Upstream test: tensormap_and_ringbuffer alternating_matmul_add Case1 (500
// groups of an AIC matmul task over 4 tiles and an AIV add task over 4
// tiles, submitted alternately, independent of each other: "AIC+AIV mixed
// execution"). Every task runs once, each on a core of its type, and the two
// types overlap in time (scheduler_dispatch.cpp dispatches AIC and AIV
// shapes from their own ready queues onto their own cores).
TEST_CASE("tensormap_and_ringbuffer alternating_matmul_add: 500 AIC and 500 AIV tasks interleaved all run",
          "[conformance]") {
  ConfSim s("alternating_matmul_add.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  CoreMap map;
  map.clusters = 24;
  std::vector<BlockRecord> aic, aiv;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const auto b = s.of_task(root_task(i));
    REQUIRE(b.size() == 1);
    CHECK(map.kind(b[0].core) == (i % 2 == 0 ? CoreKind::AIC : CoreKind::AIV));
    (i % 2 == 0 ? aic : aiv).push_back(b[0]);
  }
  REQUIRE(s.obs.blocks.size() == 1000);
  CHECK(first_start(aiv) < last_end(aic));
  CHECK(first_start(aic) < last_end(aiv));
}

// ------------------------------------------------------------------ dfx: deps.json

namespace {

using Edge = std::pair<std::uint64_t, std::uint64_t>;

// deps.json of a trace of tests/conformance/traces/ run through the npusim
// binary (task ids are decimal strings, as dep_gen_replay.cpp writes them).
nlohmann::json deps_of(const std::string& trace, const std::string& name) {
  std::filesystem::path out;
  cli::Result r = cli::run("tests/conformance/traces/" + trace + " --quiet --no-host-stats", name, out);
  REQUIRE(r.status == 0);
  return cli::load(out / "deps.json");
}

std::uint64_t id_of(const nlohmann::json& v) { return std::stoull(v.get<std::string>()); }

}  // namespace

// Upstream test: tensormap_and_ringbuffer dfx/dep_gen test_dep_gen.py
// (vector_example with --enable-dep-gen: deps.json holds the six edges
// t0->t1, t0->t2, t1->t3, t2->t3, t0->t4, t3->t4, with t0 on ring 0 and
// t1..t4 on ring 1, no edge to an unknown task, every task in tasks[], and
// every non-explicit edge naming a tensor of tensors[] and carrying the
// consumer's shape, start offset and strides). dep_gen_replay.cpp writes it.
TEST_CASE("tensormap_and_ringbuffer dfx/dep_gen: vector_example's deps.json [cli]", "[conformance][cli]") {
  const nlohmann::json d = deps_of("scope_stats_vector_example.json", "conf_st_depgen");
  const std::uint64_t t0 = make_task_id(0, 0), t1 = make_task_id(1, 0), t2 = make_task_id(1, 1),
                      t3 = make_task_id(1, 2), t4 = make_task_id(1, 3);
  std::set<Edge> edges;
  for (const auto& e : d["edges"]) edges.insert({id_of(e["pred"]), id_of(e["succ"])});
  const std::set<Edge> expected = {{t0, t1}, {t0, t2}, {t1, t3}, {t2, t3}, {t0, t4}, {t3, t4}};
  CHECK(edges == expected);  // upstream allows extra edges among the five tasks; npusim writes none
  std::set<std::uint64_t> tasks, tensors;
  for (const auto& t : d["tasks"]) tasks.insert(id_of(t["task_id"]));
  for (const auto& t : d["tensors"]) tensors.insert(id_of(t["tensor_id"]));
  CHECK(tasks == std::set<std::uint64_t>{t0, t1, t2, t3, t4});
  for (const auto& e : d["edges"]) {
    if (e["source"] == "explicit") continue;
    INFO(e.dump());
    CHECK(tensors.count(id_of(e["tensor_id"])) == 1);
    CHECK(e.contains("consumer_shape"));
    CHECK(e.contains("consumer_start_offset"));
    CHECK(e.contains("consumer_strides"));
  }
}

// Upstream test: tensormap_and_ringbuffer dfx/dep_gen test_dep_gen_chain.py
// (chain_barrier_orch.cpp: n producers INOUT X, a dummy barrier with explicit
// deps on all n, a consumer with an explicit dep on the barrier; n = 64, 65,
// 200, 391 cross the capture's 64-dep overflow records): exactly one task has
// n explicit predecessors, and one explicit edge leaves it. npusim writes
// deps.json from its own model, with no capture ring to overflow; 65 and 391
// are the first and the widest upstream case.
TEST_CASE("tensormap_and_ringbuffer dfx/dep_gen chain: a barrier's every explicit dep survives [cli]",
          "[conformance][cli]") {
  for (std::uint64_t n : {65u, 391u}) {
    INFO("n = " << n);
    const nlohmann::json d =
        deps_of("dep_gen_chain_" + std::to_string(n) + ".json", "conf_st_chain" + std::to_string(n));
    std::map<std::uint64_t, std::set<std::uint64_t>> explicit_by_succ;
    std::set<std::uint64_t> out_of_barrier;
    for (const auto& e : d["edges"])
      if (e["source"] == "explicit") explicit_by_succ[id_of(e["succ"])].insert(id_of(e["pred"]));
    std::vector<std::uint64_t> barriers;
    for (const auto& [succ, preds] : explicit_by_succ)
      if (preds.size() == n) barriers.push_back(succ);
    REQUIRE(barriers.size() == 1);
    CHECK(barriers[0] == root_task(n));
    std::set<std::uint64_t> producers;
    for (std::uint64_t i = 0; i < n; ++i) producers.insert(root_task(i));
    CHECK(explicit_by_succ[barriers[0]] == producers);
    for (const auto& [succ, preds] : explicit_by_succ)
      if (preds.count(barriers[0])) out_of_barrier.insert(succ);
    CHECK(out_of_barrier == std::set<std::uint64_t>{root_task(n + 1)});
  }
}

// ------------------------------------------------------------------ dfx: chip_swimlane_records.json

namespace {

// chip_swimlane_records.json (and the run's directory) of a conformance trace.
nlohmann::json swimlane_of(const std::string& trace_and_options, const std::string& name,
                           std::filesystem::path& out) {
  cli::Result r = cli::run("tests/conformance/traces/" + trace_and_options + " --quiet --no-host-stats", name, out);
  REQUIRE(r.status == 0);
  return cli::load(out / "chip_swimlane_records.json");
}

// Blocks or subtasks counted by the scheduler phase records of a kind, over
// every thread (the runtime names the kind `kind`; upstream's reader
// swimlane_converter.py read_perf_data surfaces it as `phase`).
std::int64_t phase_work(const nlohmann::json& perf, const std::string& kind, int* records = nullptr) {
  std::int64_t n = 0;
  int count = 0;
  for (const auto& thread : perf["aicpu_scheduler_phases"])
    for (const auto& r : thread)
      if (r["kind"] == kind) {
        n += r.value("tasks_processed", 0);
        ++count;
      }
  if (records) *records = count;
  return n;
}

}  // namespace

// Upstream test: tensormap_and_ringbuffer dfx/chip_swimlane test_chip_swimlane.py
// (vector_example, 5 AIV tasks, default threads and aicpu_thread_num 2:
// chip_swimlane_level in 1..4, exactly one record per task).
// chip_swimlane_collector.cpp writes one AICore and one AICPU row per subtask.
TEST_CASE("tensormap_and_ringbuffer dfx/chip_swimlane: one record per task of vector_example [cli]",
          "[conformance][cli]") {
  for (const char* threads : {"", " --aicpu-thread-num 2"}) {
    INFO("options:" << threads);
    std::filesystem::path out;
    const nlohmann::json perf =
        swimlane_of(std::string("scope_stats_vector_example.json") + threads, "conf_st_swim", out);
    CHECK(perf["chip_swimlane_level"] == 3);
    CHECK(perf["aicore_tasks"].size() == 5);
    CHECK(perf["aicpu_tasks"].size() == 5);
  }
}

// Upstream test: tensormap_and_ringbuffer dfx/chip_swimlane
// test_chip_swimlane_mixed.py (chained_mix_orch.cpp: three MIX tasks of
// AIC + AIV0, each reading the previous one's two outputs: one record per
// subtask, and deps.json's edges collapse to 2 unique (pred, succ) pairs).
TEST_CASE("tensormap_and_ringbuffer dfx/chip_swimlane mixed: a record per MIX subtask, one edge per task pair [cli]",
          "[conformance][cli]") {
  std::filesystem::path out;
  const nlohmann::json perf = swimlane_of("chip_swimlane_chained_mix.json", "conf_st_swim_mix", out);
  CHECK(perf["aicore_tasks"].size() == 6);
  const nlohmann::json deps = cli::load(out / "deps.json");
  std::set<Edge> pairs;
  for (const auto& e : deps["edges"]) pairs.insert({id_of(e["pred"]), id_of(e["succ"])});
  CHECK(pairs == std::set<Edge>{{root_task(0), root_task(1)}, {root_task(1), root_task(2)}});
}

// Upstream test: tensormap_and_ringbuffer dfx/chip_swimlane
// test_sync_start_drain_phases.py (spmd_sync_start_aiv's program: the drain,
// drain_prepare and drain_publish records each count between 1 and the
// sync-start blocks, and all three the same). scheduler_completion.cpp
// handle_drain_mode / stage_sync_start_cores record them per staging thread.
TEST_CASE("tensormap_and_ringbuffer dfx/chip_swimlane sync_start drain phases (the three drain records agree) [cli]",
          "[conformance][cli]") {
  std::filesystem::path out;
  const nlohmann::json perf = swimlane_of("spmd_sync_start_aiv.json", "conf_st_swim_drain", out);
  const std::int64_t sync_start_blocks = 4 + 16 + 24;
  const std::int64_t drain = phase_work(perf, "drain");
  CHECK(drain > 0);
  CHECK(drain <= sync_start_blocks);
  CHECK(phase_work(perf, "drain_prepare") == drain);
  CHECK(phase_work(perf, "drain_publish") == drain);
}

// Upstream test: tensormap_and_ringbuffer dfx/chip_swimlane
// test_sync_start_early_local_owner.py case single_scheduler_idle (upstream
// #1548: a flagged slow AIC producer, then an 8-block sync_start AIV consumer
// that fits the one scheduler's AIVs: no drain record, and early_dispatch
// records staging all 8 blocks). pto_scheduler.h early_sync_start_queue;
// scheduler_dispatch.cpp try_early_dispatch stages such a cohort locally.
TEST_CASE("tensormap_and_ringbuffer dfx/chip_swimlane sync_start early local owner (staged early, no drain) [cli]",
          "[conformance][cli]") {
  std::filesystem::path out;
  const nlohmann::json perf = swimlane_of("chip_swimlane_early_local_owner.json", "conf_st_swim_early", out);
  int drains = 0;
  for (const char* kind : {"drain", "drain_prepare", "drain_publish"}) {
    int n = 0;
    phase_work(perf, kind, &n);
    drains += n;
  }
  CHECK(drains == 0);
  CHECK(phase_work(perf, "early_dispatch") == 8);
}
