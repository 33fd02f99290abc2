// Exact simulated times on small hand-checked programs (tiny platform).
//
// Tiny's costs (ns): scheduler loop 10, COND poll 100, complete 50, fanout
// edge 10, dispatch pop 20, payload per block 100; orchestrator submit 200;
// core: DMB arrival 300, entry poll 200, receive->start 500, FIN notice 100.
// Each expected value below is derived in a comment from those numbers.
#include "tests/catch.h"

#include <functional>
#include <map>

#include "tests/chip_fixture.h"
#include "tests/conformance/conf_sched_fixture.h"

using namespace npusim;
using namespace testing_support;

namespace {

// A program given as a list of steps; each step makes an op from the
// results so far (task ids and output tensors of earlier steps).
class ScriptSource : public OpSource {
 public:
  using Step = std::function<OrchOp(ScriptSource&)>;
  std::vector<Step> steps;
  std::vector<TaskId> ids;
  std::vector<std::vector<Tensor>> outs;

  bool next(OrchOp& op) override {
    if (pos_ >= steps.size()) return false;
    op = steps[pos_++](*this);
    return true;
  }
  void deliver_task(TaskId id, const std::vector<Tensor>& o) override {
    ids.push_back(id);
    outs.push_back(o);
  }
  void deliver_value(std::int64_t v) override { values.push_back(v); }
  std::vector<std::int64_t> values;

 private:
  std::size_t pos_ = 0;
};

OrchOp submit_op(SubmitRequest r) {
  OrchOp op;
  op.kind = OrchOp::Kind::Submit;
  op.submit = std::move(r);
  return op;
}

OrchOp scope_op(bool begin) {
  OrchOp op;
  op.kind = begin ? OrchOp::Kind::ScopeBegin : OrchOp::Kind::ScopeEnd;
  op.site = "s";
  return op;
}

struct Blocks : SimObserver {
  std::vector<std::pair<TaskId, BlockRecord>> done;
  std::vector<SchedPhaseRecord> phases;
  std::vector<OrchSubmitRecord> submits;
  void on_block_finished(const Task& t, const BlockRecord& b) override { done.emplace_back(t.id, b); }
  void on_sched_phase(const SchedPhaseRecord& r) override { phases.push_back(r); }
  bool reads_sched_detail() const override { return true; }
  void on_orch_submit(const OrchSubmitRecord& r) override { submits.push_back(r); }
};

using Sim = ChipSim<ScriptSource, Blocks>;

}  // namespace

TEST_CASE("one AIV task: dispatch, receive, start, end, finish and completion times", "[timing]") {
  Sim s(one_scheduler());
  auto k = kernel("ADD", 1, CoreType::AIV, 1000);
  s.src.steps.push_back([&](ScriptSource&) { return submit_op(submit(k.get(), {})); });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 1);
  const BlockRecord& b = s.obs.done[0].second;
  // Submit 0..200 makes it ready at 200; the idle scheduler (loop period 10)
  // sees it in the iteration whose dispatch check is at 200: pop 20 + payload
  // 100 -> DMB store at 320.
  CHECK(b.dispatch == ns(320));
  CHECK(b.core == 2);  // the lowest free AIV bit: AIV0 of cluster 0
  CHECK(b.receive == ns(320 + 300 + 200));  // arrival + the idle core's entry poll
  CHECK(b.start == ns(820 + 500));
  CHECK(b.end == ns(1320 + 1000));
  // Polls every 110 (loop 10 + one COND read 100) from 320; the FIN is
  // visible at 2420; the read returning at 2520 is the first to see it.
  CHECK(b.finish == ns(2520));
  CHECK(s.last_completion() == ns(2520 + 50));
  CHECK(s.chip->cores().last_end() - s.chip->cores().first_start() == ns(1000));
}

TEST_CASE("a chain of two tasks: the consumer is dispatched after the producer's completion", "[timing]") {
  Sim s(one_scheduler());
  auto k = kernel("K", 0, CoreType::AIV, 1000);
  s.src.steps.push_back([&](ScriptSource&) { return submit_op(submit(k.get(), {out(256)})); });
  s.src.steps.push_back([&](ScriptSource& x) {
    return submit_op(submit(k.get(), {arg(ArgTag::Input, x.outs[0][0])}));
  });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 2);
  const BlockRecord& a = s.obs.done[0].second;
  const BlockRecord& b = s.obs.done[1].second;
  CHECK(a.start == ns(1320));
  CHECK(a.finish == ns(2520));
  // Completing A at 2520: 50 + one fanout edge 10 -> B ready, dispatch phase
  // from 2580: pop 20 + payload 100 -> store at 2700.
  CHECK(b.dispatch == ns(2700));
  CHECK(b.core == 2);
  CHECK(b.receive == ns(2700 + 300 + 200));
  CHECK(b.start == ns(3200 + 500));
  CHECK(b.end == ns(4700));
  // After the dispatch a release iteration (10 + poll 100 + release 10) and
  // idle polling every 110 from 2820: polls return at 2930 + 110k; the FIN
  // (visible 4800) is first seen by the read returning at 4800.
  CHECK(b.finish == ns(4800));
  CHECK(s.last_completion() == ns(4850));
  // No task starts before its producer completed.
  CHECK(b.start > a.finish);
}

TEST_CASE("an SPMD task fans out over free cores and completes when its last block does", "[timing]") {
  Sim s(one_scheduler());
  auto k = kernel("VEC", 3, CoreType::AIV, 1000);
  s.src.steps.push_back([&](ScriptSource&) {
    SubmitRequest r = submit(k.get(), {});
    r.block_num = 6;  // 4 AIV cores: two waves
    return submit_op(r);
  });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 6);
  // First wave: 4 blocks in one pop (20 + 4 x 100) -> store at 620, on cores
  // 2,3,4,5; then the task is re-pushed for the 2 remaining blocks, which go
  // to pending slots once the running blocks have ACKed.
  int first_wave = 0;
  for (const auto& d : s.obs.done)
    if (d.second.dispatch == ns(620)) ++first_wave;
  CHECK(first_wave == 4);
  for (const auto& d : s.obs.done)
    if (d.second.dispatch == ns(620)) CHECK(d.second.start == ns(620 + 300 + 200 + 500));
  CHECK(s.chip->blocks_dispatched() == 6);
  // The second wave runs on cores the first wave frees: each of its blocks
  // starts after the first-wave block of its core has ended.
  std::map<int, Time> first_end;
  Time last_finish = 0;
  for (const auto& d : s.obs.done) {
    if (d.second.dispatch == ns(620)) first_end[d.second.core] = d.second.end;
    last_finish = std::max(last_finish, d.second.finish);
  }
  int second_wave = 0;
  for (const auto& d : s.obs.done) {
    if (d.second.dispatch == ns(620)) continue;
    ++second_wave;
    REQUIRE(first_end.count(d.second.core));
    CHECK(d.second.start >= first_end[d.second.core]);
  }
  CHECK(second_wave == 2);
  // The task completes when its last block's FIN is noticed: complete_task 50.
  CHECK(s.last_completion() == last_finish + ns(50));
}

namespace {

// A mix kernel whose AIC produces `tiles` tiles (compute `cube_ns`, push
// `push_bytes`) and whose AIV lanes in `aivs` consume them (pop `pop_bytes`,
// compute `vec_ns`; AIV1 first computes `aiv1_head_ns`). Its AIC lane ends in
// the pipe's destructor (add_pipe_drain), as the trace loader builds it.
std::unique_ptr<KernelDef> pipelined_mix(int slots, int tiles, double cube_ns, double vec_ns, std::uint8_t aivs = kMaskAiv0,
                                         std::int64_t push_bytes = 0, std::int64_t pop_bytes = 0,
                                         double aiv1_vec_ns = 0, double aiv1_head_ns = 0) {
  auto k = std::make_unique<KernelDef>();
  k->name = "MIXPIPE";
  k->func_id = 7;
  k->core = CoreType::MIX;
  k->cross_core_slots = slots;
  Phase push;
  push.kind = PhaseKind::Push;
  push.push_to = aivs;
  push.bytes = Expr::constant(push_bytes);
  Phase pop;
  pop.kind = PhaseKind::Pop;
  pop.bytes = Expr::constant(pop_bytes);
  k->lanes[kLaneAic].active = true;
  for (int lane = kLaneAiv0; lane <= kLaneAiv1; ++lane) k->lanes[lane].active = (aivs & (1u << lane)) != 0;
  if (aiv1_head_ns > 0) k->lanes[kLaneAiv1].phases.push_back(compute(aiv1_head_ns));
  for (int i = 0; i < tiles; ++i) {
    k->lanes[kLaneAic].phases.push_back(compute(cube_ns));
    k->lanes[kLaneAic].phases.push_back(push);
    for (int lane = kLaneAiv0; lane <= kLaneAiv1; ++lane) {
      if (!k->lanes[lane].active) continue;
      k->lanes[lane].phases.push_back(pop);
      k->lanes[lane].phases.push_back(compute(lane == kLaneAiv1 && aiv1_vec_ns > 0 ? aiv1_vec_ns : vec_ns));
    }
  }
  add_pipe_drain(*k);
  return k;
}

struct Waits : Blocks {
  std::vector<std::tuple<int, WaitKind, Time, Time>> waits;
  void on_core_wait(int core, const Task&, int, WaitKind k, Time s, Time e) override {
    waits.emplace_back(core, k, s, e);
  }
};

// Runs one block of `k`; returns the lanes' blocks by core.
std::map<int, BlockRecord> run_mix(ChipSim<ScriptSource, Waits>& s, const KernelDef* k) {
  s.src.steps.push_back([k](ScriptSource&) { return submit_op(submit(k, {})); });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  std::map<int, BlockRecord> by_core;
  for (const auto& d : s.obs.done) by_core[d.second.core] = d.second;
  return by_core;
}

}  // namespace

// PTO-ISA include/pto/npu/a2a3/TPush.hpp (pto-isa cd4a3d3f, the revision
// simpler's pto_isa.pin selects), TPipe: SyncPeriod, shouldWaitFree,
// shouldNotifyFree, countPendingFreeCredits.
TEST_CASE("the pipe's batching follows PTO-ISA's TPipe", "[timing]") {
  CHECK(pipe_sync_period(1) == 1);
  CHECK(pipe_sync_period(2) == 2);
  CHECK(pipe_sync_period(3) == 1);
  CHECK(pipe_sync_period(8) == 4);
  // 8 slots: the pushes of tiles 8, 12, 16 ... wait for a credit; the pops of
  // tiles 3, 7, 11 ... free a batch.
  CHECK_FALSE(pipe_push_waits(8, 7));
  CHECK(pipe_push_waits(8, 8));
  CHECK_FALSE(pipe_push_waits(8, 9));
  CHECK(pipe_push_waits(8, 12));
  CHECK_FALSE(pipe_pop_frees(8, 2));
  CHECK(pipe_pop_frees(8, 3));
  CHECK(pipe_pop_frees(8, 7));
  // ~TPipe: credits notified (tiles / period) less those the pushes waited for.
  CHECK(pipe_pending_credits(8, 3) == 0);    // no batch freed
  CHECK(pipe_pending_credits(8, 8) == 2);    // frees after tiles 3 and 7, none waited
  CHECK(pipe_pending_credits(8, 16) == 2);   // 4 notified, tiles 8 and 12 waited
  CHECK(pipe_pending_credits(1, 0) == 0);
  CHECK(pipe_pending_credits(1, 5) == 1);    // every tile after the first waited
  CHECK(pipe_pending_credits(2, 4) == 1);    // frees after 1 and 3, tile 2 waited
  CHECK(pipe_pending_credits(3, 7) == 3);    // period 1: 7 notified, tiles 3..6 waited
}

TEST_CASE("a mix pipe: GM store, flag and GM load, the cube waits only at SyncPeriod boundaries and drains at its end", "[timing]") {
  // Tiny platform: a GM transfer of 0 bytes is gm.line_latency 200, a flag
  // ffts.flag_ns 20. Both lanes start at 1420 (one batch: pop 20 + two
  // payloads of 100 at 420, then receive-to-start). 4 slots: SyncPeriod 2.
  ChipSim<ScriptSource, Waits> s(one_scheduler());
  auto k = pipelined_mix(4, 8, 500, 2000);
  auto lanes = run_mix(s, k.get());
  const CoreMap& map = s.chip->cores().map();
  const BlockRecord& aic = lanes.at(map.aic(0));
  const BlockRecord& aiv = lanes.at(map.aiv0(0));
  const Time t0 = ns(1420);
  CHECK(aic.start == t0);
  CHECK(aiv.start == t0);
  // Cube: compute 500, TSTORE 200 per tile; tile i's flag reaches the AIV
  // 20 later: 720, 1420, 2120, 2820. Tile 4 (a boundary) needs credit 0, the
  // free after pop 1 (3120 + 20 = 3140): already there at 3300, no wait;
  // stores 3500 (flag 3520). Tile 5 is no boundary: 4200 (flag 4220). Tile 6
  // needs credit 1, the free after pop 3 at 7540: waits 4700..7540, stores
  // 7740 (flag 7760); tile 7: 8440 (flag 8460).
  // Vector: pop 0 waits for 720, loads to 920, adds to 2920; pop 1 3120
  // (frees: 3140); 5120 -> 5320; 7320 -> 7520 (frees: 7540); 9520 -> 9720;
  // 11720 -> 11920 (frees: 11940); 13920 -> 14120; 16120 -> 16320 (frees:
  // 16340); adds to 18320.
  CHECK(aiv.end == t0 + ns(18320));
  // ~TPipe: 8 tiles, 4 batches notified, tiles 4 and 6 consumed 2, so the
  // cube waits from 8440 for the frees after pops 5 and 7 (16340).
  CHECK(aic.end == t0 + ns(16340));
  // Every push is a "push" slice (its time in the phase): 200 ns of TSTORE
  // but for tile 6 (its wait and store) and the drain.
  std::vector<std::pair<Time, Time>> pushes;
  for (const auto& [core, kind, from, to] : s.obs.waits)
    if (core == map.aic(0) && kind == WaitKind::Push) pushes.emplace_back(from - t0, to - t0);
  const std::vector<std::pair<Time, Time>> want = {
      {ns(500), ns(700)},   {ns(1200), ns(1400)}, {ns(1900), ns(2100)}, {ns(2600), ns(2800)}, {ns(3300), ns(3500)},
      {ns(4000), ns(4200)}, {ns(4700), ns(7740)}, {ns(8240), ns(8440)}, {ns(8440), ns(16340)}};
  CHECK(pushes == want);
}

TEST_CASE("a mix pipe in the paired mode: a push flags both AIVs, a credit needs both frees", "[timing]") {
  // One slot (SyncPeriod 1): every pop frees, every push after the first
  // waits. The cube stores 6400 bytes (200 + 6400/64 = 300 ns), each AIV
  // loads 3200 (250 ns); AIV1 computes 2000 first and adds for 3000.
  // (Tiny platform: gm.line_latency 200, gm.bytes_per_ns 64, ffts.flag_ns 20.)
  ChipSim<ScriptSource, Waits> s(one_scheduler());
  auto k = pipelined_mix(1, 2, 500, 1000, kMaskAiv0 | kMaskAiv1, 6400, 3200, 3000, 2000);
  auto lanes = run_mix(s, k.get());
  const CoreMap& map = s.chip->cores().map();
  // Three payloads in the batch: the lanes start at 1520.
  const Time t0 = ns(1520);
  CHECK(lanes.at(map.aic(0)).start == t0);
  // Tile 0 stored 500..800; its flag reaches both AIVs at 820. AIV0 loads
  // 820..1070 (free at 1090), AIV1 at 2000..2250 (free at 2270). Tile 1 waits
  // for the later free, 1300..2270, stores to 2570 (flags at 2590).
  // AIV0: pop 1 waits 2070..2590, loads to 2840 (free 2860), adds to 3840.
  // AIV1: adds to 5250, loads to 5500 (free 5520), adds to 8500.
  CHECK(lanes.at(map.aiv0(0)).end == t0 + ns(3840));
  CHECK(lanes.at(map.aiv1(0)).end == t0 + ns(8500));
  // ~TPipe (one credit pending) waits for both AIVs' last frees: 5520.
  CHECK(lanes.at(map.aic(0)).end == t0 + ns(5520));
  bool aiv0_waited = false;
  for (const auto& [core, kind, from, to] : s.obs.waits)
    if (core == map.aiv0(0) && kind == WaitKind::Pop && from == t0 + ns(2070) && to == t0 + ns(2840)) aiv0_waited = true;
  CHECK(aiv0_waited);
  // The run's pipe, drained and fully popped, is retired.
  CHECK(s.chip->pipes().open_pipes() == 0);
}

TEST_CASE("a drain that waits for the AIVs' frees resumes as the drain, and every pipe is retired", "[timing]") {
  // traces/mix_pipeline.json on a2a3: in some kernel run the AIC's ~TPipe
  // drain (pto-isa TPush.hpp, the destructor draining pending free credits)
  // reaches its end before an AIV has popped, so it waits and is resumed by
  // that pop's free. Resumed, it is still the drain: it pushes no tile and
  // marks the pipe drained, so every run's pipe is retired at the end.
  conf::ConfSim s(std::string(NPUSIM_SOURCE_DIR) + "/traces/mix_pipeline.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  CHECK(s.chip->pipes().open_pipes() == 0);
}

TEST_CASE("early resolve stages the consumer on a core before its producer completes", "[timing]") {
  Sim s(one_scheduler());
  auto k = kernel("K", 0, CoreType::AIV, 1000);
  s.src.steps.push_back([&](ScriptSource&) {
    SubmitRequest r = submit(k.get(), {out(256)});
    r.early_resolve = true;  // the producer is flagged
    return submit_op(r);
  });
  s.src.steps.push_back([&](ScriptSource& x) {
    return submit_op(submit(k.get(), {arg(ArgTag::Input, x.outs[0][0])}));
  });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 2);
  const BlockRecord& a = s.obs.done[0].second;
  const BlockRecord& b = s.obs.done[1].second;
  CHECK(a.start == ns(1320));
  CHECK(a.end == ns(2320));
  // B becomes a candidate at its commit (400): A is flagged and published.
  // The next iteration's early-dispatch phase (ready queues empty) stages it
  // gated on the next idle AIV at 430 + pop 20 + payload 100.
  CHECK(b.gated);
  CHECK(b.dispatch == ns(550));
  CHECK(b.core == 3);
  CHECK(b.receive == ns(550 + 300 + 200));
  // The polls skip the parked core; A's FIN (visible 2420) is seen by
  // the read returning at 2420; completing A (50 + one edge 10) rings B's
  // doorbell at 2480, which arrives at 2780; B's spin loop notices it after
  // the entry poll (2980) and writes its ACK (50): B starts at 3030
  // (aicore_executor.cpp, tests/conformance/test_conf_sched_early.cpp).
  CHECK(a.finish == ns(2420));
  CHECK(b.start == ns(2480 + 300 + 200 + 50));
  CHECK(b.end == ns(4030));
  // Polls return every 110 from 2810; B's FIN (visible 4130) is read by the
  // one returning at 2810 + 12 x 110 = 4130, and completing B ends at 4180.
  CHECK(b.finish == ns(4130));
  CHECK(s.last_completion() == ns(4180));
  // Without the flag the same chain starts B at 3700 (see the chain test):
  // the producer-end-to-consumer-start gap shrinks from 1380 to 710 ns.
  CHECK(b.start - a.end == ns(710));
}

TEST_CASE("one unflagged producer of three disqualifies early resolve", "[timing]") {
  Sim s(one_scheduler());
  auto k = kernel("K", 0, CoreType::AIV, 1000);
  for (int i = 0; i < 3; ++i)
    s.src.steps.push_back([&, i](ScriptSource&) {
      SubmitRequest r = submit(k.get(), {out(256)});
      r.early_resolve = i == 0;  // marking one of three buys nothing
      return submit_op(r);
    });
  s.src.steps.push_back([&](ScriptSource& x) {
    return submit_op(submit(k.get(), {arg(ArgTag::Input, x.outs[0][0]), arg(ArgTag::Input, x.outs[1][0]),
                                      arg(ArgTag::Input, x.outs[2][0])}));
  });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 4);
  for (const auto& d : s.obs.done) CHECK_FALSE(d.second.gated);
}

TEST_CASE("a sync-start cohort wider than one thread's cores is launched by a global drain", "[timing]") {
  // Default 3 scheduler threads on tiny: thread 0 owns cluster 0 (2 AIVs),
  // thread 1 cluster 1 (2 AIVs). A 4-block AIV cohort fits no thread alone.
  Sim s;
  auto k = kernel("K", 0, CoreType::AIV, 1000);
  s.src.steps.push_back([&](ScriptSource&) {
    SubmitRequest r = submit(k.get(), {});
    r.block_num = 4;
    r.sync_start = true;
    return submit_op(r);
  });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 4);
  // All four blocks are published at once (each thread stages its two) and start together.
  const Time d0 = s.obs.done[0].second.dispatch, s0 = s.obs.done[0].second.start;
  for (const auto& d : s.obs.done) {
    CHECK(d.second.dispatch == d0);
    CHECK(d.second.start == s0);
  }
  // Threads 0 and 1 each stage two blocks on their own cluster.
  int drained = 0;
  for (const auto& p : s.obs.phases)
    if (p.kind == SchedPhase::Drain && p.thread < 2 && p.tasks_processed == 2) drained |= 1 << p.thread;
  CHECK(drained == 3);
}

TEST_CASE("a drain started by a thread with no running cores still launches", "[timing]") {
  // Two AIC producers: P0 (3000 ns) lands on thread 0's AIC, P1 (1000 ns) on
  // thread 1's. Thread 0 completes P0 last and readies the 4-block cohort;
  // idle thread 1, woken by the push, sees it first (thread 0 is still
  // walking P0's fanout), cannot fit it and starts the drain in an
  // iteration without progress, then goes idle with nothing to poll. It
  // must ack the drain itself (a notification of its own wake-up event is
  // lost while it runs), or the leader waits for it forever.
  Sim s;
  auto p0 = kernel("P0", 0, CoreType::AIC, 3000);
  auto p1 = kernel("P1", 1, CoreType::AIC, 1000);
  auto k = kernel("K", 2, CoreType::AIV, 1000);
  s.src.steps.push_back([&](ScriptSource&) { return submit_op(submit(p0.get(), {out(256)})); });
  s.src.steps.push_back([&](ScriptSource&) { return submit_op(submit(p1.get(), {out(256)})); });
  s.src.steps.push_back([&](ScriptSource& x) {
    SubmitRequest r = submit(k.get(), {arg(ArgTag::Input, x.outs[0][0]), arg(ArgTag::Input, x.outs[1][0])});
    r.block_num = 4;
    r.sync_start = true;
    return submit_op(r);
  });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 6);
  const CoreMap& m = s.chip->cores().map();
  // The premise: P0 ran on cluster 0 (thread 0) and finished after P1,
  // which ran on cluster 1 (thread 1).
  CHECK(s.obs.done[0].first == s.src.ids[1]);
  CHECK(m.cluster_of(s.obs.done[0].second.core) == 1);
  CHECK(s.obs.done[1].first == s.src.ids[0]);
  CHECK(m.cluster_of(s.obs.done[1].second.core) == 0);
  // Threads 0 and 1 each stage two blocks on their own cluster.
  int drained = 0;
  for (const auto& p : s.obs.phases)
    if (p.kind == SchedPhase::Drain && p.thread < 2 && p.tasks_processed == 2) drained |= 1 << p.thread;
  CHECK(drained == 3);
}

namespace {

// base -> gated (predicate gate[0] > 0, INOUT o) -> consumer (IN o): the
// consumer depends on both (creator edge to base, tensormap edge to gated).
void gated_program(Sim& s, const KernelDef* k, std::int64_t gate_value) {
  Tensor gate = s.data.add_external("gate", DType::INT32, {1}, 0, {gate_value});
  s.src.steps.push_back([=](ScriptSource&) { return submit_op(submit(k, {out(256)})); });
  s.src.steps.push_back([=](ScriptSource& x) {
    SubmitRequest r = submit(k, {arg(ArgTag::Inout, x.outs[0][0])}, {x.ids[0]});
    PredicateSpec p;
    p.tensor = gate;
    p.element = 0;
    p.cmp = Cmp::GT;
    p.value = 0;
    r.predicate = p;
    return submit_op(r);
  });
  s.src.steps.push_back([=](ScriptSource& x) { return submit_op(submit(k, {arg(ArgTag::Input, x.outs[0][0])})); });
}

}  // namespace

TEST_CASE("a false predicate retires the task through the dummy queue and its consumer unlocks", "[timing]") {
  Sim s(one_scheduler());
  auto k = kernel("K", 0, CoreType::AIV, 1000);
  gated_program(s, k.get(), 0);
  s.run();
  Runtime& rt = s.chip->runtime();
  REQUIRE(rt.finished());
  CHECK(rt.predicated_skips() == 1);
  REQUIRE(s.obs.done.size() == 2);  // base and consumer ran; the gated task touched no core
  const BlockRecord& base = s.obs.done[0].second;
  const BlockRecord& cons = s.obs.done[1].second;
  CHECK(base.finish == ns(2520));
  // Completing base at 2520: 50 + two consumers visited (2 x 10) + the
  // predicate read (20) = 2610; the dummy phase retires the gated task
  // (50, then one consumer visited, 10) = 2670; the consumer is dispatched
  // at 2670 + pop 20 + payload 100.
  CHECK(cons.dispatch == ns(2790));
  CHECK(cons.start == ns(2790 + 300 + 200 + 500));
  CHECK(cons.finish == ns(4900));
  bool skip_marker = false;
  for (const auto& p : s.obs.phases)
    if (p.kind == SchedPhase::PredicatedSkip && p.start == ns(2610)) skip_marker = true;
  CHECK(skip_marker);
}

TEST_CASE("a true predicate dispatches the task as usual", "[timing]") {
  Sim s(one_scheduler());
  auto k = kernel("K", 0, CoreType::AIV, 1000);
  gated_program(s, k.get(), 1);
  s.run();
  Runtime& rt = s.chip->runtime();
  REQUIRE(rt.finished());
  CHECK(rt.predicated_skips() == 0);
  REQUIRE(s.obs.done.size() == 3);
  const BlockRecord& gated = s.obs.done[1].second;
  // Ready at 2610 (as above), no dummy work: dispatched at 2610 + 20 + 100.
  CHECK(gated.dispatch == ns(2730));
  CHECK(gated.start == ns(2730 + 300 + 200 + 500));
  // It ends at 4730; its FIN, visible 100 later, is read at 4830 (the idle
  // loop skips to that poll). Completing it: 50 + its one consumer (10);
  // the consumer is dispatched at 4890 + pop 20 + payload 100.
  const BlockRecord& cons = s.obs.done[2].second;
  CHECK(gated.end == ns(4730));
  CHECK(gated.finish == ns(4830));
  CHECK(cons.dispatch == ns(5010));
  CHECK(cons.start == ns(5010 + 300 + 200 + 500));
}

TEST_CASE("a HARD syncall releases every core ffts.barrier_release after the last arrival", "[timing]") {
  Sim s(one_scheduler());  // thread 0 owns all four AIVs of tiny
  auto k = kernel("BAR", 0, CoreType::AIV, 1000);
  Phase bar;
  bar.kind = PhaseKind::Syncall;
  bar.sync_mode = SyncMode::Hard;
  bar.sync_core_type = CoreType::AIV;
  Phase tail;
  tail.kind = PhaseKind::Compute;
  tail.duration.a = 500;
  k->lanes[kLaneAiv0].phases.push_back(bar);
  k->lanes[kLaneAiv0].phases.push_back(tail);
  s.src.steps.push_back([&](ScriptSource&) {
    SubmitRequest r = submit(k.get(), {});
    r.block_num = 4;
    r.sync_start = true;
    return submit_op(r);
  });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 4);
  // Ready at 200; one pop of the sync tier places all four: 20 + 4 x 100,
  // published at 620; all start at 620 + 300 + 200 + 500 = 1620, arrive at
  // 2620, are released at 2620 + 100 and end 500 later.
  for (const auto& d : s.obs.done) {
    CHECK(d.second.dispatch == ns(620));
    CHECK(d.second.start == ns(1620));
    CHECK(d.second.end == ns(3220));
  }
}

TEST_CASE("get_tensor_data polls every read_poll from its start and costs one more poll", "[timing]") {
  // OrchestratorThread::do_read; upstream pto_orchestrator.cpp, the
  // get_tensor_data wait on the producer's task state.
  Sim s(one_scheduler());
  auto k = kernel("P", 0, CoreType::AIV, 1000);
  s.src.steps.push_back([&](ScriptSource&) {
    SubmitRequest r = submit(k.get(), {out(256)});
    r.writes.push_back(WriteSpec{0, 3, 7});  // element 3 of its output := 7
    return submit_op(r);
  });
  s.src.steps.push_back([&](ScriptSource& x) {
    OrchOp op;
    op.kind = OrchOp::Kind::Read;
    op.read_tensor = x.outs[0][0];
    op.read_element = 3;
    return op;
  });
  s.src.steps.push_back([&](ScriptSource&) { return submit_op(submit(k.get(), {})); });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  // P: submitted 0..200, completed at 2520 (as "one AIV task"). The read
  // starts at 200 and polls every 100: the poll at 200 + 24 x 100 = 2600 is
  // the first after 2520; one more poll (100) returns the value at 2700,
  // when the next submit starts.
  CHECK(s.src.values == std::vector<std::int64_t>{7});
  REQUIRE(s.obs.submits.size() == 2);
  CHECK(s.obs.submits[0].task_id == s.src.ids[0]);
  CHECK(s.obs.submits[0].start == ns(0));
  CHECK(s.obs.submits[0].end == ns(200));
  CHECK(s.obs.submits[1].task_id == s.src.ids[1]);
  CHECK(s.obs.submits[1].submit_idx == 1);
  CHECK(s.obs.submits[1].start == ns(2700));
  CHECK(s.obs.submits[1].end == ns(2900));
}

TEST_CASE("a blocked submit's structural deadlock check counts its 1024 spins from the last reclaim progress",
          "[timing]") {
  // OrchestratorThread::wait_for_space; upstream pto_ring_buffer.h
  // PTO2TaskAllocator::alloc: spin_count restarts when last_task_alive moves.
  // Ring 3 (depth >= 3), heap 4096. Scope A (depth 3) stays open; inside it
  // scope B (depth 4) holds b0 (1024 B), then A allocates a0 (2048 B,
  // alloc_tensors: complete at once) and submits a1 (2048 B), which does not
  // fit. b0 retires, freeing [0, 1024): progress, but a1 still does not fit,
  // and the head a0 is pinned by A.
  RunOptions o = one_scheduler();
  o.ring_heap = RingValues{0, 0, 0, 4096};
  Sim s(o);
  auto k = kernel("K", 0, CoreType::AIV, 1000);
  for (int d = 0; d < 4; ++d) s.src.steps.push_back([](ScriptSource&) { return scope_op(true); });
  s.src.steps.push_back([&](ScriptSource&) { return submit_op(submit(k.get(), {out(256)})); });   // b0
  s.src.steps.push_back([](ScriptSource&) { return scope_op(false); });                           // B ends
  s.src.steps.push_back([](ScriptSource&) {  // a0
    OrchOp op;
    op.kind = OrchOp::Kind::Alloc;
    op.alloc_outputs = {out(512)};
    return op;
  });
  s.src.steps.push_back([&](ScriptSource&) { return submit_op(submit(k.get(), {out(512)})); });  // a1
  s.run();
  const Runtime& rt = s.chip->runtime();
  REQUIRE(rt.has_error());
  // b0: submitted 0..200, completed at 2520 + 50; the scheduler's next,
  // idle iteration (10) releases it at 2580: it retires. a0 200..300 (alloc
  // 100); a1 blocked from 300; its spins (100) notice the progress at 2600,
  // and the structural test runs 1024 spins later: 2600 + 102400 (not
  // 300 + 102400).
  CHECK(rt.error().code == ErrorCode::HeapRingDeadlock);
  CHECK(rt.error().time == ns(2600 + 102400));
  CHECK(rt.error().ring == 3);
  CHECK(rt.error().message ==
        "FATAL: Task Allocator Deadlock - Heap Exhausted! ring=3 Provable head-of-line deadlock: the ring's "
        "reclaim head is pinned by an open scope");
  CHECK(rt.ring(3).tail() == 1);
  CHECK(rt.ring(3).heap_tail_unwrapped() == 1024);
}

namespace {
struct Retired : SimObserver {
  std::size_t finished = 0, max_records = 0, block_times = 0;
  void on_block_finished(const Task&, const BlockRecord&) override { ++finished; }
  // At completion every block has finished: `blocks` is as large as it ever
  // grew (the most records in flight at once).
  void on_completed(Task& t) override {
    max_records = std::max(max_records, t.blocks.size());
    block_times = t.block_times().count;
  }
};
}  // namespace

TEST_CASE("a task keeps the records of its blocks in flight, not of every block it declared", "[timing][hardening]") {
  // Issue 12 finding 2: records grew with block_num for as long as the task
  // lived (2,000 streamed tasks of 32,767 blocks each took 2.7 GB).
  ChipSim<ScriptSource, Retired> s(one_scheduler());
  auto k = kernel("VEC", 3, CoreType::AIV, 100);
  s.src.steps.push_back([&](ScriptSource&) {
    SubmitRequest r = submit(k.get(), {});
    r.block_num = 1000;  // 4 AIV cores: 250 waves
    return submit_op(r);
  });
  s.run();
  REQUIRE(s.chip->runtime().finished());
  CHECK(s.obs.finished == 1000);    // every block still reaches the writers
  CHECK(s.obs.block_times == 1000);  // and the task's summary
  // At most a running and a pending block per core are in flight.
  CHECK(s.obs.max_records >= 4);
  CHECK(s.obs.max_records <= static_cast<std::size_t>(2 * s.platform.topo.total_cores()));
}

// Upstream: scheduler_dispatch.cpp SchedulerContext::prepare_subtask_to_core
// (`dispatch_seq++`, reg_task_id = dispatch_seq & TASK_ID_MASK, a value from
// AICORE_EXIT_SIGNAL 0x7FFFFFF0 on skipped by `TASK_ID_MASK - reg_task_id + 1`,
// an even skip that keeps the dual payload buffer's parity). Before, the
// token restarted at 1 after 0x7FFFFFEF: two odd tokens in a row.
TEST_CASE("dispatch tokens count from 1 and skip the reserved range to 0", "[timing]") {
  std::uint64_t seq = 0;
  CHECK(npusim::next_dispatch_token(seq) == 1u);
  CHECK(npusim::next_dispatch_token(seq) == 2u);
  seq = 0x7FFFFFEEu;
  CHECK(npusim::next_dispatch_token(seq) == 0x7FFFFFEFu);
  CHECK(npusim::next_dispatch_token(seq) == 0u);  // parity alternates across the skip
  CHECK(seq == 0x80000000u);
  CHECK(npusim::next_dispatch_token(seq) == 1u);
  // The second wrap, where the runtime's 32-bit counter overflows to 0.
  seq = 0xFFFFFFEEu;
  CHECK(npusim::next_dispatch_token(seq) == 0x7FFFFFEFu);
  CHECK(npusim::next_dispatch_token(seq) == 0u);
  CHECK((seq & 0xFFFFFFFFu) == 0u);
}
