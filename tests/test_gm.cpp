// The GM model (models/gm): exact times of loads, stores, fences and SOFT
// syncall on the tiny platform, contention, the per-block cache life cycle,
// and how little state a read-only stream leaves behind.
//
// Tiny's costs (ns): gm line_latency 200, bytes_per_ns 64, fence 100,
// cacheinvalid_line 50, cacheinvalid_all 500, line_serialize 50; L2 (docs/gm.md
// "L2 and HBM") 2 KiB of 256 B lines, 2 ways, hit 200, miss 300, HBM
// 32 B/ns shared: a load of n cold bytes costs 300 + n / 32, of resident
// bytes 200 + n / 64; a store 200 + n / 64 (plus dirty write-backs); dispatch:
// submit 200, pop 20 + 100 per block; DMB arrival 300, entry poll 200,
// receive->start 500. With one scheduler thread owning every core, a task of
// B blocks is published in one batch at 200 + 20 + 100 B and every block
// starts 1000 later: 1320 (B=1), 1420 (B=2), 1620 (B=4).
//
// SOFT syncall (docs/gm.md), as PTO-ISA's a2a3 SYNCALL_SOFT_ATOMIC_BARRIER
// (include/pto/common/syncall_soft.hpp) does it, for a core arriving at T:
// dsb (fence 100), ld_dev of the counter (200) reads `before` at T+300; dcci
// (50) issues the atomic add at T+350, which is visible at T+550 (one GM round
// trip), or line_serialize (50) after the previous add to the counter if that
// is later; dcci + dsb wait for it: the polls start 100 after the add. Each
// poll is an ld_dev (200); the core leaves on the first poll completing at or
// after the add that reaches target = (before / used_cores + 1) * used_cores,
// then dsb (100). Alone: T+950.
#include "tests/catch.h"

#include <algorithm>
#include <functional>
#include <map>

#include "tests/chip_fixture.h"

using namespace npusim;
using namespace testing_support;

namespace {

// The program: a fixed list of submits (the tests' tensors are external, so
// no op depends on an earlier one's results).
struct GmOps : OpSource {
  std::vector<OrchOp> ops;
  std::vector<TaskId> ids;  // as the runtime assigned them
  bool next(OrchOp& op) override {
    if (pos_ >= ops.size()) return false;
    op = ops[pos_++];
    return true;
  }
  void deliver_task(TaskId id, const std::vector<Tensor>&) override { ids.push_back(id); }
  void deliver_value(std::int64_t) override {}
  void add(const KernelDef* k, std::vector<SubmitArg> args, int blocks, bool sync_start = false) {
    OrchOp op;
    op.kind = OrchOp::Kind::Submit;
    op.submit = submit(k, std::move(args));
    op.submit.block_num = blocks;
    op.submit.sync_start = sync_start;
    ops.push_back(std::move(op));
  }

 private:
  std::size_t pos_ = 0;
};

struct GmObs : SimObserver {
  std::vector<std::pair<TaskId, BlockRecord>> done;
  std::vector<std::pair<std::string, std::string>> warnings;
  std::vector<std::tuple<int, WaitKind, Time, Time>> waits;
  void on_block_finished(const Task& t, const BlockRecord& b) override { done.emplace_back(t.id, b); }
  void on_warning(const std::string& k, const std::string& m) override { warnings.emplace_back(k, m); }
  void on_core_wait(int core, const Task&, int, WaitKind k, Time s, Time e) override { waits.emplace_back(core, k, s, e); }
  std::vector<ErrorCode> errors;
  void on_error(const LatchedError& e) override { errors.push_back(e.code); }
  // Block end by core (a test's blocks run on distinct cores).
  std::map<int, Time> end_by_core() const {
    std::map<int, Time> m;
    for (const auto& d : done) m[d.second.core] = d.second.end;
    return m;
  }
  int count(const std::string& kind) const {
    return static_cast<int>(std::count_if(warnings.begin(), warnings.end(), [&](const auto& w) { return w.first == kind; }));
  }
};

struct GmSim : ChipSim<GmOps, GmObs> {
  GmSim() : ChipSim(one_scheduler()) {}
};

Expr bexpr(const std::string& text) {
  return Expr::parse(text, [](const std::string& n) { return n == "block_idx" ? 0 : n == "block_num" ? 1 : -1; });
}

Phase transfer(PhaseKind kind, int arg, std::int64_t bytes, const std::string& offset = "0") {
  Phase p;
  p.kind = kind;
  p.arg = arg;
  p.bytes = Expr::constant(bytes);
  p.offset = bexpr(offset);
  return p;
}
Phase load(int arg, std::int64_t bytes, const std::string& offset = "0") { return transfer(PhaseKind::Load, arg, bytes, offset); }
Phase store(int arg, std::int64_t bytes, const std::string& offset = "0") { return transfer(PhaseKind::Store, arg, bytes, offset); }
Phase fence() {
  Phase p;
  p.kind = PhaseKind::Fence;
  return p;
}
Phase invalidate_all() {
  Phase p;
  p.kind = PhaseKind::CacheInvalid;
  p.all = true;
  return p;
}
Phase invalidate_region(int arg) {
  Phase p;
  p.kind = PhaseKind::CacheInvalid;
  p.arg = arg;
  return p;
}
Phase soft_syncall(int ws_arg, const std::string& used) {
  Phase p;
  p.kind = PhaseKind::Syncall;
  p.sync_mode = SyncMode::Soft;
  p.sync_core_type = CoreType::AIV;
  p.workspace_arg = ws_arg;
  p.used_cores = bexpr(used);
  return p;
}

std::unique_ptr<KernelDef> aiv_kernel(const std::string& name, std::vector<Phase> body) {
  auto k = std::make_unique<KernelDef>();
  k->name = name;
  k->core = CoreType::AIV;
  k->lanes[kLaneAiv0].active = true;
  k->lanes[kLaneAiv0].phases = std::move(body);
  return k;
}

// Every block of a SOFT barrier of `n` participants (one block each, then
// compute 100); returns the release times by core (end - 100).
std::map<int, Time> barrier_releases(int n) {
  GmSim s;
  Tensor ws = s.ext("ws", DType::INT32, 16);
  auto k = aiv_kernel("BAR", {soft_syncall(0, "block_num"), compute(100)});
  s.src.add(k.get(), {arg(ArgTag::Inout, ws)}, n);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  std::map<int, Time> r;
  for (const auto& [core, end] : s.obs.end_by_core()) r[core] = end - ns(100);
  return r;
}

}  // namespace

TEST_CASE("load, store, fence and cacheinvalid take their platform costs, and a fence writes the dirty lines back", "[gm]") {
  GmSim s;
  Tensor in = s.ext("in", DType::FP32, 4096);
  Tensor out = s.ext("out", DType::FP32, 4096);
  // load 6400 B, 25 cold L2 lines: 300 + max(6400 / 64, 6400 / 32 over
  // HBM) = 500; store 640 B at byte 32 (lines 0..10 of
  // out): 200 + 10 = 210; fence: 100 + write-back of 11 lines (704 B:
  // 200 + 11) = 311; a second fence, nothing dirty: 100; cacheinvalid "all"
  // 500; the region form 50.
  auto k = aiv_kernel("MEM", {load(0, 6400), store(1, 640, "32"), fence(), fence(), invalidate_all(),
                              invalidate_region(0)});
  s.src.add(k.get(), {arg(ArgTag::Input, in), arg(ArgTag::Inout, out)}, 1);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 1);
  const BlockRecord& b = s.obs.done[0].second;
  CHECK(b.start == ns(1320));
  CHECK(b.end == ns(1320 + 500 + 210 + 311 + 100 + 500 + 50));
  CHECK(s.obs.warnings.empty());
  CHECK(s.obs.waits.empty());  // a transfer is not a wait
  CHECK(s.chip->gm().reports() == 0);
}

TEST_CASE("a store of zero bytes costs one line latency and leaves nothing to write back", "[gm]") {
  // A block's byte count may evaluate to 0 (the remainder of a tiling past
  // the end): no bytes move, no line turns dirty. The store costs 200 + 0;
  // the fence then has nothing to write back: 100.
  GmSim s;
  Tensor out = s.ext("out", DType::FP32, 4096);
  auto k = aiv_kernel("EMPTY", {store(0, 0), fence()});
  s.src.add(k.get(), {arg(ArgTag::Inout, out)}, 1);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 1);
  const BlockRecord& b = s.obs.done[0].second;
  CHECK(b.start == ns(1320));
  CHECK(b.end == ns(1320 + 200 + 100));
  CHECK(s.obs.warnings.empty());
}

TEST_CASE("the chip passes a runtime fatal to its observer once and stops", "[gm]") {
  // pto_orchestrator.cpp: a require_sync_start submit of more blocks than
  // the chip has cores is fatal (code 7) at submit; nothing runs after it.
  GmSim s;
  auto k = aiv_kernel("K", {compute(100)});
  s.src.add(k.get(), {}, 1000, true);
  s.src.add(k.get(), {}, 1);
  s.run();
  CHECK_FALSE(s.chip->runtime().finished());
  CHECK(s.obs.errors == std::vector<ErrorCode>{ErrorCode::RequireSyncStartInvalid});
  CHECK(s.obs.done.empty());
}

// Mirrors SYNCALL_SOFT_ATOMIC_BARRIER (PTO-ISA include/pto/common/syncall_soft.hpp).
TEST_CASE("a SOFT syncall of two participants: read, atomic add, polls until the count reaches the target", "[gm]") {
  // Both arrive at T = 1420 and read 0: target 2. Core 2's add is visible at
  // T+550, core 3's 50 later (T+600, the count reaches 2). Core 2 polls from
  // T+650: its first poll (T+850) sees 2: released at T+950 = 2370. Core 3
  // polls from T+700: released at T+1000 = 2420.
  std::map<int, Time> r = barrier_releases(2);
  REQUIRE(r.size() == 2);
  CHECK(r[2] == ns(2370));
  CHECK(r[3] == ns(2420));
}

// Mirrors SYNCALL_SOFT_ATOMIC_BARRIER (PTO-ISA include/pto/common/syncall_soft.hpp).
TEST_CASE("a SOFT syncall of four participants: exact release times", "[gm]") {
  // All arrive at T = 1620 and read 0 (the first add is visible only at
  // T+550): target 4. The adds of cores 2..5 are visible at T+550, +600,
  // +650, +700 (one at a time, 50 apart). Each polls from its add + 100
  // (T+650, 700, 750, 800) and its first poll already sees the count 4 (the
  // last add is visible at T+700): released 300 later, T+950, 1000, 1050, 1100.
  std::map<int, Time> r = barrier_releases(4);
  REQUIRE(r.size() == 4);
  const Time T = ns(1620);
  CHECK(r[2] == T + ns(950));
  CHECK(r[3] == T + ns(1000));
  CHECK(r[4] == T + ns(1050));
  CHECK(r[5] == T + ns(1100));
}

// Mirrors SYNCALL_SOFT_ATOMIC_BARRIER (PTO-ISA include/pto/common/syncall_soft.hpp).
TEST_CASE("a SOFT syncall poll that completes exactly when the last add becomes visible sees it", "[gm]") {
  // Block 0 (core 2) computes 100 ns, block 1 (core 3) 600 ns, from T =
  // 1420. Core 2 arrives at T+100: its add is visible at T+650 and it polls
  // from T+750. Core 3 arrives at T+600 and reads the count 1 (target 2);
  // its add is visible at T+1150 = exactly two polls (200 each) after core
  // 2's polls began: the second poll, completing at T+1150, sees the count
  // 2 (a poll completing at x sees the adds visible by x), so core 2 is
  // released at T+1150 + dsb 100 = T+1250, not a poll later. Core 3 polls
  // from T+1250 and its first poll sees 2: released at T+1250 + 200 + 100.
  GmSim s;
  Tensor ws = s.ext("ws", DType::INT32, 16);
  Phase before = compute(0);
  before.duration.kind = Duration::Kind::ByBlock;
  before.duration.by_block = {100, 600};
  auto k = aiv_kernel("BAR", {before, soft_syncall(0, "block_num"), compute(100)});
  s.src.add(k.get(), {arg(ArgTag::Inout, ws)}, 2);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  std::map<int, Time> r;
  for (const auto& [core, end] : s.obs.end_by_core()) r[core] = end - ns(100);
  REQUIRE(r.size() == 2);
  const Time T = ns(1420);
  CHECK(r[2] == T + ns(1250));
  CHECK(r[3] == T + ns(1550));
}

TEST_CASE("contention grows with the participants: SOFT barrier and stores to one line", "[gm]") {
  // Barrier: last release after the common start, n = 1..4: 950 alone (see
  // the top), then line_serialize (50) more per participant, whose add is
  // applied after the others: 1000, 1050, 1100; starts at 1320, 1420, 1520, 1620.
  const Time start[] = {0, ns(1320), ns(1420), ns(1520), ns(1620)};
  const Time expect[] = {0, ns(950), ns(1000), ns(1050), ns(1100)};
  Time prev = 0;
  for (int n = 1; n <= 4; ++n) {
    INFO("participants " << n);
    std::map<int, Time> r = barrier_releases(n);
    Time last = 0;
    for (const auto& [core, t] : r) last = std::max(last, t);
    CHECK(last - start[n] == expect[n]);
    CHECK(last - start[n] > prev);
    prev = last - start[n];
  }
  // Stores of one whole line (64 B: 200 + 1 = 201) by n blocks at once:
  // each waits for the previous owner's store and costs 50 more, so block
  // k ends at T + 201 + k x 251.
  for (int n = 1; n <= 4; ++n) {
    INFO("writers " << n);
    GmSim s;
    Tensor x = s.ext("x", DType::INT32, 16);
    auto k = aiv_kernel("ST", {store(0, 64)});
    s.src.add(k.get(), {arg(ArgTag::Inout, x)}, n);
    s.run();
    REQUIRE(s.chip->runtime().finished());
    std::vector<Time> ends;
    for (const auto& d : s.obs.done) ends.push_back(d.second.end - d.second.start);
    std::sort(ends.begin(), ends.end());
    REQUIRE(static_cast<int>(ends.size()) == n);
    for (int i = 0; i < n; ++i) CHECK(ends[static_cast<std::size_t>(i)] == ns(201 + 251 * i));
    // The wait for the line is reported as a memory stall, the transfer is not.
    int memory_waits = 0;
    for (const auto& w : s.obs.waits) memory_waits += std::get<1>(w) == WaitKind::Memory;
    CHECK(memory_waits == n - 1);
  }
}

// Mirrors SYNCALL_SOFT_ATOMIC_BARRIER's epochs (PTO-ISA include/pto/common/syncall_soft.hpp):
// the counter is never reset; each barrier waits for the next multiple of used_cores.
TEST_CASE("repeated SOFT barriers each gather their participants, in one kernel and across launches", "[gm]") {
  GmSim s;
  Tensor ws = s.ext("ws", DType::INT32, 16);
  auto k = aiv_kernel("BAR2", {soft_syncall(0, "2"), soft_syncall(0, "2")});
  s.src.add(k.get(), {arg(ArgTag::Inout, ws)}, 2);
  s.src.add(k.get(), {arg(ArgTag::Inout, ws)}, 2);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 4);
  // First launch: barrier 1 releases core 2 at 2370, core 3 at 2420 (as
  // above; the counter is 2). Barrier 2: core 2 arrives at 2370 and reads 2
  // (at 2670): target 4; its add is visible at 2920, it polls from 3020.
  // Core 3 arrives at 2420, reads 2 (at 2720): target 4; its add is visible
  // at 2970 (the count reaches 4); it polls from 3070. Core 2's first poll
  // (3220) sees 4: released at 3320; core 3 at 3370.
  std::map<int, Time> first;
  for (const auto& d : s.obs.done)
    if (d.first == s.src.ids[0]) first[d.second.core] = d.second.end;
  CHECK(first[2] == ns(3320));
  CHECK(first[3] == ns(3370));
  // Second launch: the counter is at 4, so a barrier that waited for the
  // count used_cores would release at once; each waits for the next multiple
  // (6, then 8), so both blocks take exactly as long as in the first launch
  // (from a common start, 1900 and 1950).
  std::map<int, std::pair<Time, Time>> second;
  for (const auto& d : s.obs.done)
    if (d.first == s.src.ids[1]) second[d.second.core] = {d.second.start, d.second.end};
  REQUIRE(second.size() == 2);
  CHECK(second[2].first == second[3].first);
  CHECK(second[2].second - second[2].first == ns(1900));
  CHECK(second[3].second - second[3].first == ns(1950));
}

// Mirrors SYNCALL_SOFT_POLL (PTO-ISA include/pto/common/syncall_soft.hpp): after
// SYNCALL_SOFT_MAX_POLL_ITERATIONS (1,000,000, include/pto/common/type.hpp) polls
// below the target the loop breaks (PTO_CPU_ASSERT is empty on the device).
TEST_CASE("a SOFT syncall whose used_cores is never reached gives up after 1,000,000 polls", "[gm]") {
  GmSim s;
  Tensor ws = s.ext("ws", DType::INT32, 16);
  auto k = aiv_kernel("HANG", {compute(100), soft_syncall(0, "block_num + 1"), compute(100)});
  s.src.add(k.get(), {arg(ArgTag::Inout, ws)}, 2);
  s.run();
  // Both arrive at T = 1520 and wait for 3: core 2 polls from T+650, core 3
  // from T+700; 1,000,000 polls of 200 ns, dsb 100, then the last compute.
  REQUIRE(s.chip->runtime().finished());
  const std::map<int, Time> end = s.obs.end_by_core();
  const Time T = ns(1520);
  CHECK(end.at(2) == T + ns(650) + ns(200) * 1000000 + ns(100 + 100));
  CHECK(end.at(3) == T + ns(700) + ns(200) * 1000000 + ns(100 + 100));
  // One report per (task, workspace line).
  REQUIRE(s.obs.count("coherency_syncall_timeout") == 1);
  CHECK(s.obs.warnings[0].second.find("used_cores=3) gave up at 200002.270 us after 1000000 polls: the counter "
                                      "is at 2, the barrier waits for 3") != std::string::npos);
  CHECK(s.chip->gm().reports() == 1);
}

TEST_CASE("a task's stores are visible to its consumer task without a fence (hazards live inside a kernel run)", "[gm]") {
  GmSim s;
  Tensor buf = s.ext("buf", DType::FP32, 64);
  auto producer = aiv_kernel("PROD", {load(0, 256), store(0, 256)});
  auto consumer = aiv_kernel("CONS", {load(0, 256)});
  // The consumer depends on the producer through the tensormap (INOUT then
  // INPUT): it starts after the producer's block ended, with an empty cache.
  s.src.add(producer.get(), {arg(ArgTag::Inout, buf)}, 1);
  s.src.add(consumer.get(), {arg(ArgTag::Input, buf)}, 1);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  CHECK(s.obs.warnings.empty());
  REQUIRE(s.obs.done.size() == 2);
  const BlockRecord& p = s.obs.done[0].second;
  const BlockRecord& c = s.obs.done[1].second;
  // Producer: load 256 B, one cold L2 line (300 + 256 / 32 over HBM), and
  // store 256 B (200 + 4) from 1320.
  CHECK(p.start == ns(1320));
  CHECK(p.end == ns(1320 + 308 + 204));
  // Consumer: after the producer's completion, one load of 256 B into an
  // empty core cache, nobody else owning the lines, its L2 line resident
  // (the producer stored it): 200 + 4, no memory stall.
  CHECK(c.start > p.finish);
  CHECK(c.end - c.start == ns(204));
  CHECK(s.obs.waits.empty());
}

TEST_CASE("coherency reports inside one kernel run: each missing step, once per (task, line, kind)", "[gm]") {
  struct Case {
    const char* name;
    bool fence, invalidate_all, region, bypass;
    const char* kind;
    std::vector<int> lines;  // line indices within buf's view
  };
  const Case cases[] = {
      {"ok", true, true, false, false, "", {}},
      {"no fence", false, true, false, false, "coherency_unfenced_read", {0, 1, 2, 3}},
      {"no invalidate", true, false, false, false, "coherency_stale_read", {0, 1, 2, 3}},
      {"region invalidate", true, false, true, false, "coherency_partial_invalidate", {1, 2, 3}},
      {"bypass", true, false, false, true, "coherency_bypass_write", {0, 1, 2, 3}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    GmSim s;
    Tensor buf = s.ext("buf", DType::FP32, 64);  // 256 B: 4 lines
    Tensor ws = s.ext("ws", DType::INT32, 16);
    std::vector<Phase> body = {load(0, 256), compute(1000), store(0, 128, "block_idx*128")};
    if (c.fence) body.push_back(fence());
    body.push_back(soft_syncall(1, "block_num"));
    if (c.invalidate_all) body.push_back(invalidate_all());
    if (c.region) body.push_back(invalidate_region(0));
    Phase second = load(0, 128, "(1-block_idx)*128");
    if (c.bypass) second.cache = CacheMode::Bypass;
    body.push_back(second);
    // The same read twice, while the other block still runs: a second read
    // of a reported line is not reported again.
    body.push_back(second);
    body.push_back(compute(1000));
    auto k = aiv_kernel("EXCHANGE", body);
    s.src.add(k.get(), {arg(ArgTag::Inout, buf), arg(ArgTag::Inout, ws)}, 2);
    s.run();
    REQUIRE(s.chip->runtime().finished());
    if (!*c.kind) {
      CHECK(s.obs.warnings.empty());
      continue;
    }
    if (c.bypass) {  // today's toolchain lowers BYPASS to a cached read: said once, first
      REQUIRE_FALSE(s.obs.warnings.empty());
      CHECK(s.obs.warnings.front().first == "cache_bypass_not_lowered");
      s.obs.warnings.erase(s.obs.warnings.begin());
    }
    CHECK(static_cast<int>(s.obs.warnings.size()) == static_cast<int>(c.lines.size()));
    std::vector<int> seen;
    for (const auto& [kind, msg] : s.obs.warnings) {
      CHECK(kind == c.kind);
      CHECK(msg.find("task t0 (EXCHANGE)") != std::string::npos);
      CHECK(msg.find("tensor \"buf\"") != std::string::npos);
      CHECK(msg.find("missing: ") != std::string::npos);
      for (int l = 0; l < 4; ++l)
        if (msg.find("reads line " + std::to_string(l) + " of") != std::string::npos) seen.push_back(l);
    }
    std::sort(seen.begin(), seen.end());
    CHECK(seen == c.lines);
  }
}

TEST_CASE("an unfenced store is a hazard to the bytes it wrote, not to the rest of their line", "[gm]") {
  // Two blocks store 32 B each into the two halves of line 0 and do not fence;
  // after the barrier each reads its own half (the other's bytes meet it at
  // one byte boundary, inside the line): nothing to report. Reading one byte
  // more reaches into the other's bytes: one unfenced read (once per task,
  // line and kind).
  for (const bool reach : {false, true}) {
    INFO(reach);
    GmSim s;
    Tensor buf = s.ext("buf", DType::FP32, 64);
    Tensor ws = s.ext("ws", DType::INT32, 16);
    auto k = aiv_kernel("HALVES", {store(0, 32, "block_idx*32"), soft_syncall(1, "block_num"), invalidate_all(),
                                   reach ? load(0, 33, "block_idx*31") : load(0, 32, "block_idx*32"), compute(1000)});
    s.src.add(k.get(), {arg(ArgTag::Inout, buf), arg(ArgTag::Inout, ws)}, 2);
    s.run();
    REQUIRE(s.chip->runtime().finished());
    if (!reach) {
      CHECK(s.obs.warnings.empty());
      continue;
    }
    REQUIRE(s.obs.warnings.size() == 1);
    CHECK(s.obs.warnings[0].first == "coherency_unfenced_read");
    CHECK(s.obs.warnings[0].second.find("reads line 0 of") != std::string::npos);
  }
}

TEST_CASE("a line cached before a later, separate fetch is still known stale after another core's fence", "[gm]") {
  // Block b caches the other block's line (1-b), then, 100 ns later, line
  // 2+b (a second fetch: a segment of its own after the first); it stores
  // and fences its own line b; after the barrier it reads line 1-b again
  // without invalidating: the copy cached before the other's fence is stale,
  // one report per line (0 and 1).
  GmSim s;
  Tensor buf = s.ext("buf", DType::FP32, 64);  // 256 B: 4 lines
  Tensor ws = s.ext("ws", DType::INT32, 16);
  auto k = aiv_kernel("REREAD", {load(0, 64, "(1-block_idx)*64"), compute(100), load(0, 64, "128+block_idx*64"),
                                 store(0, 64, "block_idx*64"), fence(), soft_syncall(1, "block_num"),
                                 load(0, 64, "(1-block_idx)*64"), compute(1000)});
  s.src.add(k.get(), {arg(ArgTag::Inout, buf), arg(ArgTag::Inout, ws)}, 2);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.warnings.size() == 2);
  std::vector<int> seen;
  for (const auto& [kind, msg] : s.obs.warnings) {
    CHECK(kind == "coherency_stale_read");
    for (int l = 0; l < 4; ++l)
      if (msg.find("reads line " + std::to_string(l) + " of") != std::string::npos) seen.push_back(l);
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<int>{0, 1});
}

TEST_CASE("a stale read names the end of the writer's block when no fence made the line visible", "[gm]") {
  // R (submitted first, reading buf) and W (writing buf, no edge to R: the
  // tensormap orders a reader after a writer, not a writer after a reader)
  // run at once on two cores. R caches line 0, computes, then reads it again
  // without invalidating; W stored line 0 and never fenced: its bytes became
  // visible only when its block ended (GmModel::block_end writes a block's
  // stores back), after R cached the line. The report says so.
  GmSim s;
  Tensor buf = s.ext("buf", DType::FP32, 16);  // 64 B: one line
  auto r = aiv_kernel("R", {load(0, 64), compute(5000), load(0, 64)});
  auto w = aiv_kernel("W", {store(0, 64), compute(100)});
  s.src.add(r.get(), {arg(ArgTag::Input, buf)}, 1);
  s.src.add(w.get(), {arg(ArgTag::Inout, buf)}, 1);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.warnings.size() == 1);
  CHECK(s.obs.warnings[0].first == "coherency_stale_read");
  const std::string& msg = s.obs.warnings[0].second;
  INFO(msg);
  CHECK(msg.find("task t1 (W)") != std::string::npos);
  CHECK(msg.find("(the end of its block)") != std::string::npos);
  CHECK(msg.find("(its fence)") == std::string::npos);
}

TEST_CASE("a bypass load of bytes its own block stored names 'this block' as the writer", "[gm]") {
  // One block stores line 0 (1320 + 200 + 1 = 1521) and fences (+ 100 + the
  // write-back of one line, 201: 1822), then reads it with a bypass load:
  // the report names this block, not a block number and core.
  GmSim s;
  Tensor buf = s.ext("buf", DType::FP32, 16);  // 64 B: one line
  Phase bypass = load(0, 64);
  bypass.cache = CacheMode::Bypass;
  auto k = aiv_kernel("SELF", {store(0, 64), fence(), bypass});
  s.src.add(k.get(), {arg(ArgTag::Inout, buf)}, 1);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.warnings.size() == 2);
  CHECK(s.obs.warnings[0].first == "cache_bypass_not_lowered");
  CHECK(s.obs.warnings[1].first == "coherency_bypass_write");
  CHECK(s.obs.warnings[1].second ==
        "task t0 (SELF) block 0 on core 2 at 1.822 us: a cache \"bypass\" load reads line 0 of tensor \"buf\" "
        "(GM 0x100000000), which this block of the same task stores at 1.320 us: a bypass load reads GM directly "
        "and is not ordered with the kernel's own stores; missing: a cached load (cache \"default\") after the "
        "writer's fence, the barrier and cacheinvalid");
}

TEST_CASE("a kernel mixing HARD and SOFT syncall is reported once, at its first launch", "[gm]") {
  GmSim s;
  Tensor ws = s.ext("ws", DType::INT32, 16);
  Phase hard;
  hard.kind = PhaseKind::Syncall;
  hard.sync_mode = SyncMode::Hard;
  hard.sync_core_type = CoreType::AIV;
  auto k = aiv_kernel("MIXED", {soft_syncall(0, "block_num"), hard});
  // Every AIV of tiny, co-resident: the HARD barrier completes.
  for (int i = 0; i < 2; ++i) s.src.add(k.get(), {arg(ArgTag::Inout, ws)}, 4, true);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.count("syncall_mixed_modes") == 1);
  CHECK(s.obs.warnings[0].second.find("kernel \"MIXED\" (first launch: task t0)") != std::string::npos);
}

TEST_CASE("a streaming load of a read-only input keeps no per-line state and a store keeps one range", "[gm]") {
  GmSim s;
  Tensor in = s.ext("in", DType::FP32, 1 << 20);   // 4 MiB
  Tensor out = s.ext("out", DType::FP32, 1 << 18);  // 1 MiB
  auto k = aiv_kernel("STREAM", {load(0, 4 << 20), load(0, 4 << 20), store(1, 1 << 20)});
  s.src.add(k.get(), {arg(ArgTag::Input, in), arg(ArgTag::Inout, out)}, 1);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  CHECK(s.chip->gm().tracked_runs() == 1);  // the 16384 stored lines as one range
  CHECK(s.obs.warnings.empty());
  // Two loads of 4 MiB, every L2 line a miss (the L2 holds 2 KiB): 300 +
  // 4 MiB / 32 over HBM = 131372 each; a store of 1 MiB (4096 lines,
  // write-allocate) whose last 4088 lines evict its own dirty lines: 200 +
  // max(16384 streaming, 4088 x 256 / 32 = 32704 of write-back).
  REQUIRE(s.obs.done.size() == 1);
  CHECK(s.obs.done[0].second.end - s.obs.done[0].second.start == ns(2 * 131372 + 32904));
}

// ------------------------------------------------------------------ L2 and HBM
// docs/gm.md "L2 and HBM". Tiny's L2: 2 KiB, 256 B lines, 2 ways (4 sets,
// line x in set x % 4), LRU in a set; hit 200, miss 300; HBM 32 B/ns shared
// by every core, one transfer at a time in issue order; a core streams at 64
// B/ns. External tensors are 4 KiB aligned, so a tensor's line i is in set
// i % 4.

TEST_CASE("L2: the set-associative cache counts hits, fills and dirty write-backs, LRU in a set", "[gm][l2]") {
  L2Cache c(2048, 256, 2);
  CHECK(c.sets() == 4);
  auto a = c.access(0, 1024, false);  // lines 0..3, cold
  CHECK(a.lines == 4);
  CHECK(a.hits == 0);
  CHECK(a.fill_bytes == 1024);
  a = c.access(100, 600, false);  // lines 0..2, resident
  CHECK(a.lines == 3);
  CHECK(a.hits == 3);
  CHECK(a.fill_bytes == 0);
  a = c.access(1024, 2048, true);  // lines 4..7 written: allocated without a fetch, the sets' second ways
  CHECK(a.hits == 0);
  CHECK(a.fill_bytes == 0);
  a = c.access(2048, 2304, false);  // line 8, set 0: evicts line 0 (least recently used), clean
  CHECK(a.fill_bytes == 256);
  CHECK(a.writeback_bytes == 0);
  a = c.access(3072, 3328, false);  // line 12, set 0: evicts dirty line 4
  CHECK(a.writeback_bytes == 256);
  a = c.access(0, 256, false);  // line 0 was evicted
  CHECK(a.hits == 0);
  // An access of no bytes touches no line, wherever it points (inside line 1 here).
  a = c.access(300, 300, false);
  CHECK(a.lines == 0);
  CHECK(a.fill_bytes == 0);
  a = c.access(300, 300, true);
  CHECK(a.lines == 0);
}

TEST_CASE("L2: an access longer than the cache leaves each way once for mark_ready", "[gm][l2]") {
  // 2 KiB in 4 sets of 2 ways of 256 B: a 4 KiB write touches 16 lines, each
  // set's two ways twice (lines 0..7 allocated, then lines 8..15 evict them
  // within the same access). The ways left for mark_ready are the 8 ways,
  // once each; the last lines written hold them and are ready at the stamp.
  L2Cache c(2048, 256, 2);
  auto a = c.access(0, 4096, true);
  CHECK(a.lines == 16);
  CHECK(c.marked_ways() == 8);
  c.mark_ready(700);
  a = c.access(2048, 4096, false);  // lines 8..15: resident, ready at 700
  CHECK(a.hits == 8);
  CHECK(a.ready == 700);
  CHECK(c.marked_ways() == 0);  // a read that hit allocated nothing
}

TEST_CASE("L2: a cold load misses to HBM, a re-read hits, and the counters say so", "[gm][l2]") {
  GmSim s;
  Tensor in = s.ext("in", DType::FP32, 256);  // 1 KiB: 4 L2 lines
  auto k = aiv_kernel("RE", {load(0, 1024), load(0, 1024)});
  s.src.add(k.get(), {arg(ArgTag::Input, in)}, 1);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 1);
  const BlockRecord& b = s.obs.done[0].second;
  // Miss: 300 + max(1024 / 64 = 16 streaming, 1024 / 32 = 32 over HBM) = 332.
  // Hit: 200 + 16 = 216.
  CHECK(b.start == ns(1320));
  CHECK(b.end == ns(1320 + 332 + 216));
  CHECK(s.chip->gm().hbm_bytes() == 1024);
  CHECK(s.obs.warnings.empty());
}

TEST_CASE("L2: capacity is exceeded, the least recently used lines are evicted and miss again", "[gm][l2]") {
  GmSim s;
  Tensor a = s.ext("a", DType::FP32, 512);  // 2 KiB: the whole L2, two lines per set
  Tensor b = s.ext("b", DType::FP32, 512);
  Tensor c = s.ext("c", DType::FP32, 256);  // 1 KiB: one line per set
  SECTION("a second buffer of the L2's size evicts the first") {
    auto k = aiv_kernel("EVICT", {load(0, 2048), load(1, 2048), load(0, 2048)});
    s.src.add(k.get(), {arg(ArgTag::Input, a), arg(ArgTag::Input, b)}, 1);
    s.run();
    REQUIRE(s.obs.done.size() == 1);
    // Each load misses every line: 300 + max(2048 / 64, 2048 / 32) = 364.
    // Without the second load the third would hit: 200 + 32.
    CHECK(s.obs.done[0].second.end - s.obs.done[0].second.start == ns(3 * 364));
    CHECK(s.chip->gm().hbm_bytes() == 3 * 2048);
  }
  SECTION("half the L2 evicts the older way of each set, and a sequential re-read then misses throughout") {
    auto k = aiv_kernel("EVICT", {load(0, 2048), load(1, 1024), load(0, 2048)});
    s.src.add(k.get(), {arg(ArgTag::Input, a), arg(ArgTag::Input, c)}, 1);
    s.run();
    REQUIRE(s.obs.done.size() == 1);
    // a: 364; c: 300 + max(16, 32) = 332, evicting a's lines 0..3 (the
    // older way of each set). a again, in order: line 0 misses and evicts
    // the LRU way of set 0, now a's line 4, so line 4 misses when its turn
    // comes: a sequential re-read of more than the remaining ways misses
    // every line (LRU), 364.
    CHECK(s.obs.done[0].second.end - s.obs.done[0].second.start == ns(364 + 332 + 364));
    CHECK(s.chip->gm().hbm_bytes() == 2048 + 1024 + 2048);
  }
}

TEST_CASE("L2: two cores streaming at once share the HBM link and the later one waits", "[gm][l2]") {
  GmSim s;
  Tensor in = s.ext("in", DType::FP32, 1024);  // 4 KiB: 2 KiB per block
  auto k = aiv_kernel("STREAM2", {load(0, 2048, "block_idx*2048")});
  s.src.add(k.get(), {arg(ArgTag::Input, in)}, 2);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 2);
  // Both blocks start at 1420 and load 2 KiB of cold lines. Alone, each
  // would take 300 + 2048 / 32 = 364. The link carries one transfer at a
  // time in issue order: the first holds it for 64 ns, the second's bytes
  // cross in the next 64: 300 + 128 = 428.
  std::vector<Time> d;
  for (const auto& [id, r] : s.obs.done) {
    CHECK(r.start == ns(1420));
    d.push_back(r.end - r.start);
  }
  std::sort(d.begin(), d.end());
  CHECK(d == std::vector<Time>{ns(364), ns(428)});
  CHECK(s.chip->gm().hbm_bytes() == 4096);
}

// A line is in flight while another access's fill has not arrived (its HBM
// share + the miss latency) or another core's store to it has not ended: a
// load that finds it resident takes its first byte no earlier than that
// (docs/gm.md "L2 and HBM", "Lines in flight"), moves no HBM bytes for it,
// and counts it as a hit.
TEST_CASE("L2: a load of lines another core's fill has not brought yet waits for that fill, no second fill", "[gm][l2]") {
  GmSim s;
  Tensor in = s.ext("in", DType::FP32, 512);  // 2 KiB: the whole L2
  Tensor pre = s.ext("pre", DType::FP32, 64);  // 256 B
  Phase first = load(1, 0);
  first.bytes = bexpr("256*block_idx");  // block 0: nothing (200 ns); block 1: one cold line (300 + 8)
  auto k = aiv_kernel("SHARE", {first, load(0, 2048)});
  s.src.add(k.get(), {arg(ArgTag::Input, in), arg(ArgTag::Input, pre)}, 2);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 2);
  // Both blocks start at 1420. Block 0 loads `in` at 1620, every line cold:
  // the link carries its 2 KiB in [1620, 1684], so the lines are ready at
  // 1684 + 300 = 1984, and so is block 0 (300 + 64 = 364 from 1620).
  // Block 1 loads the same lines at 1728 (200 + 300 + 8 later): resident,
  // in flight. A hit would end at 1728 + 200 + 32 = 1960 and a second fill
  // at 1728 + 300 + 64 = 2092; its first byte comes when the fill arrives,
  // 1984 (not 1928), and its own stream follows: 1984 + 32 = 2016.
  const auto end = s.obs.end_by_core();
  std::vector<Time> ends;
  for (const auto& [core, e] : end) ends.push_back(e);
  std::sort(ends.begin(), ends.end());
  CHECK(ends == std::vector<Time>{ns(1984), ns(2016)});
  CHECK(s.chip->gm().hbm_bytes() == 256 + 2048);  // one fill of `in`
}

TEST_CASE("L2: a load right after another core's long store waits for the store to end, and a later read is a plain hit", "[gm][l2]") {
  GmSim s;
  Tensor buf = s.ext("buf", DType::FP32, 4096);  // 16 KiB: eight times the L2
  Phase st = store(0, 0);
  st.bytes = bexpr("16384*(1-block_idx)");  // block 0 stores 16 KiB; block 1 nothing (200 ns)
  auto k = aiv_kernel("WRITE_READ", {st, load(0, 256, "14336")});
  s.src.add(k.get(), {arg(ArgTag::Inout, buf)}, 2);
  s.run();
  REQUIRE(s.chip->runtime().finished());
  REQUIRE(s.obs.done.size() == 2);
  // Block 0, from 1420: 64 lines written without a fetch; the last 56 evict
  // the store's own dirty lines, 56 x 256 B written back over the link:
  // 200 + max(16384 / 64 = 256, 14336 / 32 = 448) = 648, so it ends at 2068
  // and its lines (the last 8, resident) are in flight until then. Block 1
  // stores nothing (1420 + 200) and loads 256 B of line 56 at 1620: a hit
  // would end at 1620 + 200 + 4 = 1824; the line is ready at 2068, then 4 ns
  // of stream: 2072. Block 0 reads the same line after its store, at 2068:
  // ready, a plain hit, 2068 + 204 = 2272.
  std::vector<Time> ends;
  for (const auto& [core, e] : s.obs.end_by_core()) ends.push_back(e);
  std::sort(ends.begin(), ends.end());
  CHECK(ends == std::vector<Time>{ns(2072), ns(2272)});
  CHECK(s.chip->gm().hbm_bytes() == 56 * 256);  // write-backs only: no load fetched the line
}

TEST_CASE("L2: a line's ready stamp is kept through hits and reset when the line is allocated again", "[gm][l2]") {
  L2Cache c(2048, 256, 2);
  auto a = c.access(0, 512, false);  // lines 0, 1: filled
  CHECK(a.ready == 0);
  c.mark_ready(500);
  a = c.access(0, 768, false);  // lines 0, 1 hit (ready 500), line 2 filled
  CHECK(a.hits == 2);
  CHECK(a.ready == 500);
  c.mark_ready(900);  // only line 2, the one it allocated
  a = c.access(0, 256, false);
  CHECK(a.ready == 500);
  a = c.access(512, 768, false);
  CHECK(a.ready == 900);
  a = c.access(0, 256, true);  // a write marks the lines it writes, hits included
  c.mark_ready(1200);
  CHECK(c.access(0, 256, false).ready == 1200);
  c.access(2048, 2304, false);  // line 8, set 0: its empty way
  c.access(4096, 4352, false);  // line 16, set 0: evicts line 0 (LRU)
  CHECK(c.access(0, 256, false).hits == 0);  // line 0 again: a fill (not marked)
  a = c.access(0, 256, false);               // and a hit: its old stamp is gone
  CHECK(a.hits == 1);
  CHECK(a.ready == 0);
}
