// Conformance of the runtime's rules (models/runtime, the orchestrator) with
// the runtime's own source, hw-native-sys/simpler
// src/a2a3/runtime/tensormap_and_ringbuffer/. Each TEST_CASE names the
// upstream file and function it mirrors; the ones reproducing an upstream
// system test name it too (docs/conformance.md lists them all). Plain C++
// tests drive the runtime directly; [cli] ones run a trace of
// tests/conformance/traces/ through the npusim binary.
#include "tests/catch.h"

#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "models/runtime/runtime.h"
#include "tests/cli_support.h"
#include "tests/runtime_fixture.h"

using namespace npusim;
using namespace testing_support;

namespace {

struct Samples : RuntimeHooks {
  std::vector<ScopeSample> samples;
  void on_scope_sample(const ScopeSample& s) override { samples.push_back(s); }
};

// The runtime on the tiny platform, driven as the orchestrator and a
// scheduler would, without time.
struct Rt {
  Platform platform = tiny_platform();
  RunConfig config;
  DataStore data;
  Samples hooks;
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<KernelDef> k = kernel("K", 0, CoreType::AIV, 1000);

  explicit Rt(RunOptions o = {}) {
    config = config_for(platform, o);
    rt = std::make_unique<Runtime>(platform, config, data, &hooks);
    rt->begin_orchestration();
  }
  Tensor ext(std::int64_t n) { return data.add_external("x", DType::FP32, {n}, 0, {}); }
  // prepare + wire + commit; nullptr (and `last` says why) if a step did not finish.
  Task* sub(const SubmitRequest& r, bool alloc = false) {
    SubmitProgress p;
    last = rt->submit_prepare(r, p, alloc, 0);
    if (last.kind == SubmitStatus::Kind::Done) last = rt->submit_wire(p);
    if (last.kind != SubmitStatus::Kind::Done) return nullptr;
    rt->submit_commit(r, p, 0);
    return p.task;
  }
  // A scheduler completes and releases the task (its queue entry is left alone).
  void finish(Task* t) {
    SubmitWork w;
    rt->complete_task(*t, 0, w);
    rt->release_task(*t);
  }
  Tensor output(Task* t, int i = 0) {
    std::vector<Tensor> outs;
    rt->outputs_of(*t, outs);
    return outs.at(i);
  }
  SubmitStatus last;
};

RunOptions window_heap(std::uint64_t window, std::uint64_t heap) {
  RunOptions o;
  o.ring_task_window = RingValues{0, 0, 0, window};
  o.ring_heap = RingValues{0, 0, 0, heap};
  return o;
}

RunOptions dep_pool(std::uint64_t n) {
  RunOptions o;
  o.ring_dep_pool = RingValues{n, n, n, n};
  o.ring_task_window = RingValues{256, 256, 256, 256};
  return o;
}

}  // namespace

// ------------------------------------------------------------------ item 1

// pto_runtime2.cpp wait_for_tensor_ready (get_tensor_data): Step A the
// creator (owner_task_id), Step B every writer the tensormap holds for an
// overlapping region, waited one after the other.
TEST_CASE("read waits for the creator and every tensormap writer of the tensor", "[conformance]") {
  Rt h;
  Task* c = h.sub(submit(h.k.get(), {out(64)}));
  REQUIRE(c);
  const Tensor t = h.output(c);
  Task* w1 = h.sub(submit(h.k.get(), {arg(ArgTag::OutputExisting, view(t, 0, 32))}));
  Task* w2 = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(t, 32, 32))}));
  Task* other = h.sub(submit(h.k.get(), {arg(ArgTag::OutputExisting, h.ext(64))}));
  REQUIRE((w1 && w2 && other));
  std::vector<TaskId> ps;
  h.rt->read_producers(t, ps);
  // The creator first, then the tensormap's writers newest first (the
  // runtime's bucket chain is insert-at-head); another buffer's writer is not one.
  CHECK(ps == std::vector<TaskId>{c->id, w2->id, w1->id});
  // A read of one element's region waits only for the writers overlapping it.
  h.rt->read_producers(view(t, 40, 1), ps);
  CHECK(ps == std::vector<TaskId>{c->id, w2->id});
  for (TaskId p : {c->id, w1->id, w2->id}) CHECK_FALSE(h.rt->producer_done(p));
  h.finish(c);
  CHECK(h.rt->producer_done(c->id));
  CHECK_FALSE(h.rt->producer_done(w1->id));
}

// pto_runtime2.cpp wait_for_tensor_ready reads the producer's slot state by
// local id: a retired producer's slot reads CONSUMED, unless a newer task of
// the ring reuses the slot, which the wait then waits for.
TEST_CASE("a read of a retired producer's tensor waits for the task reusing its slot", "[conformance]") {
  RunOptions o;
  o.ring_task_window = RingValues{4, 4, 4, 4};
  Rt h(o);
  auto scoped = [&](std::vector<SubmitArg> args) {
    h.rt->scope_begin(ScopeMode::Auto, "s");
    Task* t = h.sub(submit(h.k.get(), std::move(args)));
    h.rt->scope_end();
    return t;
  };
  Task* a = scoped({out(16)});
  REQUIRE(a);
  const TaskId aid = a->id;  // ring 1, local 0
  h.finish(a);
  CHECK(h.rt->retired(aid));
  CHECK(h.rt->producer_done(aid));  // slot 0 free: reads CONSUMED
  for (int i = 0; i < 3; ++i) {  // locals 1..3 come and go
    Task* t = scoped({});
    REQUIRE(t);
    h.finish(t);
  }
  Task* reuse = scoped({});  // local 4 takes slot 0 (4 mod window 4)
  REQUIRE(reuse);
  CHECK_FALSE(h.rt->producer_done(aid));  // slot 0 holds local 4, still pending
  h.finish(reuse);
  CHECK(h.rt->producer_done(aid));
}

// A read after an out_existing writer sees the written value (pto_runtime2.cpp
// get_tensor_data after wait_for_tensor_ready): the writer is a tensormap
// producer of the external tensor, which has no creator.
TEST_CASE("read after an out_existing writer sees the written value [cli]", "[conformance][cli]") {
  cli::RunResult r = cli::run_summary("tests/conformance/traces/read_after_out_existing.json --quiet", "conf_read");
  CHECK(r.status == 0);
  REQUIRE(r.summary.is_object());
  // The program submits one task per unit of the value it read: 1 writer + 7.
  CHECK(r.summary["tasks"]["submitted"] == 8);
}

// ------------------------------------------------------------------ item 3

// pto_ring_buffer.h PTO2TaskAllocator::alloc: `local_task_id_ - last_alive + 1
// < window_size_` is tested before try_bump_heap, so a ring short of both
// slots and heap blocks on the window (FLOW_CONTROL_DEADLOCK, report_deadlock
// with heap_blocked=false).
TEST_CASE("an allocation short of both task window and heap blocks on the window", "[conformance]") {
  Rt h(window_heap(4, 1024));
  for (int d = 1; d <= 3; ++d) REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));  // depth 3: ring 3
  REQUIRE(h.sub(submit(h.k.get(), {out(256)})));  // the heap's 1024 bytes
  REQUIRE(h.sub(submit(h.k.get(), {})));
  REQUIRE(h.sub(submit(h.k.get(), {})));  // three live: the window of 4 is full
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));  // depth 4 shares ring 3
  CHECK_FALSE(h.rt->ring(3).window_has_room());
  CHECK_FALSE(h.rt->ring(3).heap_fits(1024));
  CHECK(h.sub(submit(h.k.get(), {out(256)})) == nullptr);
  CHECK(h.last.kind == SubmitStatus::Kind::Blocked);
  CHECK(h.last.blocked == Resource::TaskWindow);
}

TEST_CASE("a program short of both window and heap fails with FLOW_CONTROL_DEADLOCK, advice on the window [cli]",
          "[conformance][cli]") {
  cli::RunResult r =
      cli::run_summary("tests/conformance/traces/window_and_heap_short.json --quiet --no-host-stats", "conf_both");
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["error"]["name"] == "FLOW_CONTROL_DEADLOCK");
  CHECK(r.summary["error"]["orch_error_code"] == 3);
  CHECK(cli::has(r.err, "FATAL: Task Allocator Deadlock - Task Ring Full! ring=3\n"));
  CHECK(cli::has(r.err, "\nProvable head-of-line deadlock.\n"));
  CHECK(r.summary["error"]["diagnosis"]["enough"]["field"] == "ring_task_window");
}

// ------------------------------------------------------------------ item 4

// pto_ring_buffer.h PTO2DepListPool::ensure_space / alloc: available() =
// capacity - used, alloc fails only at used >= capacity.
TEST_CASE("every dep-pool entry is usable", "[conformance]") {
  Rt h(dep_pool(4));
  Tensor x = h.ext(64);
  for (int i = 0; i < 4; ++i) REQUIRE(h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, i * 16, 16))})));
  Task* c = h.sub(submit(h.k.get(), {arg(ArgTag::Input, x)}));
  REQUIRE(c);  // four live producers, four entries
  CHECK(h.rt->ring(0).dep_used() == 4);
}

// pto_ring_buffer.h PTO2FaninPool::ensure_space: the spill pool is sized like
// the dep pool and every entry is usable; 64 edges stay inline
// (PTO2_FANIN_INLINE_CAP), the 65th.. spill.
TEST_CASE("every fanin spill entry is usable", "[conformance]") {
  Rt h(dep_pool(4));
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));
  SubmitRequest c = submit(h.k.get(), {});
  for (int i = 0; i < 68; ++i) {
    Task* p = h.sub(submit(nullptr, {}));  // dummies: their completion is not needed here
    REQUIRE(p);
    h.finish(p);  // completed, kept live by the open scope
    c.deps.push_back(p->id);
  }
  // 68 producers, all completed: 4 spill entries and no dep-pool entry.
  Task* t = h.sub(c);
  REQUIRE(t);
  CHECK(t->fanin.size() == 68);
  CHECK(h.rt->ring(1).dep_used() == 0);
}

TEST_CASE("a fanin one spill entry beyond the pool blocks on the spill pool", "[conformance]") {
  Rt h(dep_pool(4));
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));
  SubmitRequest c = submit(h.k.get(), {});
  for (int i = 0; i < 69; ++i) {
    Task* p = h.sub(submit(nullptr, {}));
    REQUIRE(p);
    h.finish(p);
    c.deps.push_back(p->id);
  }
  c.deps.push_back(c.deps.front());  // a duplicate folds into its edge: still 69
  CHECK(h.sub(c) == nullptr);
  CHECK(h.last.kind == SubmitStatus::Kind::Blocked);
  CHECK(h.last.blocked == Resource::FaninSpill);
}

// pto_orchestrator.cpp submit_task_common STEP 6: when every claimed producer
// has completed (all_claimed_fanin_completed) the task is made ready without
// wiring, so it needs no dep-pool entry at all; orch_wire_live_fanin_task's
// ensure_space runs only with a live producer.
TEST_CASE("a consumer of completed producers takes no dep-pool entry", "[conformance]") {
  Rt h(dep_pool(4));
  Tensor x = h.ext(128);
  for (int i = 0; i < 8; ++i) {
    Task* p = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, i * 16, 16))}));
    REQUIRE(p);
    h.finish(p);
  }
  Task* c = h.sub(submit(h.k.get(), {arg(ArgTag::Input, x)}));
  REQUIRE(c);  // eight WAIT edges, all producers completed
  CHECK(c->is_ready());
  CHECK(h.rt->ring(0).dep_used() == 0);
}

// ------------------------------------------------------------------ item 5

// pto_ring_buffer.h PTO2TaskAllocator::alloc calls update_heap_tail(last_alive)
// before its first check: once the watermark moved, the next allocation sees
// the reclaimed heap even when it would have fitted anyway, and scope_stats
// (begin_scope/end_scope -> alloc.heap_tail()) reports that tail.
TEST_CASE("the heap tail is refreshed at every allocation once the watermark moved", "[conformance]") {
  Rt h;  // tiny platform: large heaps, nothing ever has to wait
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "a"));
  Task* a = h.sub(submit(h.k.get(), {out(256)}));
  REQUIRE(a);
  h.finish(a);
  h.rt->scope_end();  // a is CONSUMED and retired: ring 1's watermark is 1
  CHECK(h.rt->ring(1).tail() == 1);
  CHECK(h.rt->ring(1).heap_tail_unwrapped() == 0);  // nothing allocated since
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "b"));
  REQUIRE(h.sub(submit(h.k.get(), {out(256)})));
  CHECK(h.rt->ring(1).heap_tail_unwrapped() == 1024);
  h.rt->scope_end();
  const ScopeSample& end_b = h.hooks.samples.back();
  CHECK_FALSE(end_b.begin);
  CHECK(end_b.heap_start == 1024);  // live at exit: b's 1024 bytes only
  CHECK(end_b.heap_end == 2048);
}

// ------------------------------------------------------------------ item 8

// pto_orchestrator.cpp append_fanin_or_fail claims the producer's fanout pin
// (fanout_count++) under its fanout_lock as the producer is found, so the
// producer cannot become CONSUMED between the lookup and the wiring.
TEST_CASE("a producer found by a submit is pinned at the lookup, before the commit", "[conformance]") {
  Rt h;
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "p"));
  Task* p = h.sub(submit(h.k.get(), {out(64)}));
  REQUIRE(p);
  const Tensor t = h.output(p);
  h.rt->scope_end();  // the scope's pin on p is gone
  SubmitProgress sp;
  SubmitRequest r = submit(h.k.get(), {arg(ArgTag::Input, t)});
  REQUIRE(h.rt->submit_prepare(r, sp, false, 0).kind == SubmitStatus::Kind::Done);
  // p finishes while the consumer's submit is still under way.
  h.finish(p);
  CHECK(p->state == TaskState::Completed);  // held by the consumer's pin
  CHECK(h.rt->ring(1).tail() == 0);
  REQUIRE(h.rt->submit_wire(sp).kind == SubmitStatus::Kind::Done);
  h.rt->submit_commit(r, sp, 0);
  Task* c = sp.task;
  REQUIRE(c->fanin.size() == 1);
  CHECK(c->fanin[0].producer == p->id);
  CHECK(c->is_ready());
  h.finish(c);  // the consumer's release drops the pin
  CHECK(h.rt->ring(1).tail() == 1);
}

// ------------------------------------------------------- item 9 behaviours

// pto_orchestrator.cpp PTO2OrchestratorState::begin_scope:
// assert(scope_stack_top < scope_stack_capacity - 1 && "Scope stack overflow"),
// PTO2_MAX_SCOPE_DEPTH = 64 entries with the root scope; the AICPU build keeps
// assert() (no NDEBUG), so a 65th level aborts instead of latching INVALID_ARGS.
TEST_CASE("scope nesting beyond 64 levels is the runtime's assert, not INVALID_ARGS", "[conformance]") {
  Rt h;
  for (int d = 1; d < 64; ++d) REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));
  CHECK(h.rt->scope_depth() == 63);
  CHECK_FALSE(h.rt->has_error());
  CHECK_FALSE(h.rt->scope_begin(ScopeMode::Auto, "deep"));
  CHECK(h.rt->error().code == ErrorCode::AicpuAssert);
  CHECK(cli::has(h.rt->error().message, "Scope stack overflow"));
}

TEST_CASE("scope nesting beyond 64 levels fails as an AICPU exception with no error code [cli]", "[conformance][cli]") {
  cli::RunResult r = cli::run_summary("traces/fatal/scope_overflow.json --quiet --no-host-stats", "conf_assert");
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["error"]["name"] == "AICPU_ASSERT");
  CHECK(r.summary["error"]["orch_error_code"] == 0);
  CHECK(r.summary["error"]["sched_error_code"] == 0);
  CHECK(r.summary["error"]["host_code"] == 507018);
  CHECK(cli::has(r.err, "Assertion `orch->scope_stack_top < static_cast<int32_t>(orch->scope_stack_capacity - 1) && "
                        "\"Scope stack overflow\"' failed."));
  CHECK_FALSE(cli::has(r.err, "INVALID_ARGS"));
}

// runtime_fatal_codes dep_pool_overflow_orch.cpp: 128 dummy producers in a
// scope, one consumer with all 128 as explicit deps, ring_dep_pool=4. The
// 64 edges beyond PTO2_FANIN_INLINE_CAP need the fanin spill pool, whose
// PTO2FaninPool::ensure_space has no structural test: only the 500 ms
// backstop fires, with DEP_POOL_OVERFLOW (pto_ring_buffer.cpp).
TEST_CASE("runtime_fatal_codes dep_pool_overflow: the fanin spill pool overflows after the 500 ms backstop [cli]",
          "[conformance][cli]") {
  cli::RunResult r =
      cli::run_summary("tests/conformance/traces/dep_pool_overflow.json --quiet --no-host-stats", "conf_dpo");
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["error"]["name"] == "DEP_POOL_OVERFLOW");
  CHECK(r.summary["error"]["orch_error_code"] == 4);
  CHECK(cli::has(r.err, "FATAL: Fanin Spill Pool Deadlock Detected!\n"));
  CHECK(cli::has(r.err, "\nFanin spill pool cannot reclaim space after ~500 ms (no progress).\n"));
  CHECK_FALSE(cli::has(r.err, "Provable head-of-line"));
  // The backstop's clock starts at the first 1024-spin check (102.4 us of
  // 100 ns spins) and fires at the first check 500 ms after it.
  const double since = r.summary["error"]["detector_since_ns"], dev = r.summary["error"]["device_time_ns"];
  CHECK(dev - since == Approx(102400.0 * (1 + 4883)).epsilon(0));
}

// --------------------------------------- upstream system tests, reproduced
//
// Each trace in tests/conformance/traces/ names in its x_about the upstream
// test it reproduces and the outcome that test asserts.

namespace {

// task_stats.csv as (task name -> column -> value).
std::map<std::string, std::map<std::string, std::string>> task_rows(const std::filesystem::path& csv) {
  std::istringstream in(cli::slurp(csv));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> cols;
  for (std::size_t a = 0, b; a <= line.size(); a = b + 1) {
    b = line.find(',', a);
    if (b == std::string::npos) b = line.size();
    cols.push_back(line.substr(a, b - a));
  }
  std::map<std::string, std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> r;
    std::size_t i = 0;
    for (std::size_t a = 0, b; a <= line.size() && i < cols.size(); a = b + 1, ++i) {
      b = line.find(',', a);
      if (b == std::string::npos) b = line.size();
      r[cols[i]] = line.substr(a, b - a);
    }
    rows[r["task"]] = r;
  }
  return rows;
}

struct Conf {
  cli::Result res;
  nlohmann::json summary, deps;
  std::map<std::string, std::map<std::string, std::string>> tasks;
};

Conf run_conf(const std::string& trace, const std::string& extra = "") {
  std::filesystem::path out;
  Conf c;
  c.res = cli::run("tests/conformance/traces/" + trace + ".json --quiet --no-host-stats --no-suggest " + extra,
                   "conf_" + trace, out);
  if (std::filesystem::exists(out / "summary.json")) c.summary = cli::load(out / "summary.json");
  if (std::filesystem::exists(out / "deps.json")) c.deps = cli::load(out / "deps.json");
  if (std::filesystem::exists(out / "task_stats.csv")) c.tasks = task_rows(out / "task_stats.csv");
  return c;
}

double col_ns(const std::map<std::string, std::string>& row, const char* col) { return std::stod(row.at(col)); }

// Every dependency edge is honoured: a consumer becomes ready only after each
// of its producers completed. Returns the number of edges checked.
int check_edges(const Conf& c) {
  int n = 0;
  for (const auto& e : c.deps["edges"]) {
    auto p = c.tasks.find(task_display(std::stoull(e["pred"].get<std::string>())));
    auto s = c.tasks.find(task_display(std::stoull(e["succ"].get<std::string>())));
    REQUIRE(p != c.tasks.end());
    REQUIRE(s != c.tasks.end());
    CHECK(col_ns(s->second, "ready_ns") >= col_ns(p->second, "complete_ns"));
    ++n;
  }
  return n;
}

void check_fatal(const Conf& c, const std::string& name, int code) {
  CHECK(c.res.status == 1);
  REQUIRE(c.summary.is_object());
  CHECK(c.summary["error"]["name"] == name);
  CHECK(c.summary["error"]["orch_error_code"] == code);
  CHECK(cli::has(c.res.err, "orch_error_code=" + std::to_string(code)));  // the upstream test's marker
  CHECK(cli::has(c.res.err, "error detail: orch_error_code=" + std::to_string(code) + " " + name + " - "));
}

}  // namespace

// runtime_fatal_codes flow_control_deadlock_orch.cpp; pto_ring_buffer.h
// PTO2TaskAllocator::alloc -> report_deadlock(heap_blocked=false,
// scope_gated=true): ring 3's head is the oldest task of the open depth-3 scope.
TEST_CASE("runtime_fatal_codes flow_control_deadlock: 8 nested scopes of 3 dummies on a window of 4 [cli]",
          "[conformance][cli]") {
  Conf c = run_conf("flow_control_deadlock");
  check_fatal(c, "FLOW_CONTROL_DEADLOCK", 3);
  CHECK(cli::has(c.res.err, "FATAL: Task Allocator Deadlock - Task Ring Full! ring=3\n"));
  CHECK(cli::has(c.res.err, "\nProvable head-of-line deadlock.\n"));
  CHECK(c.summary["tasks"]["submitted"] == 9);  // depths 1, 2 and 3: three each
}

// runtime_fatal_codes heap_ring_deadlock_orch.cpp; PTO2TaskAllocator::alloc:
// no live task on the ring, so no structural proof; the backstop fires.
TEST_CASE("runtime_fatal_codes heap_ring_deadlock: a 32 KiB output on a 1024-byte heap [cli]", "[conformance][cli]") {
  Conf c = run_conf("heap_ring_deadlock");
  check_fatal(c, "HEAP_RING_DEADLOCK", 2);
  CHECK(cli::has(c.res.err, "FATAL: Task Allocator Deadlock - Heap Exhausted! ring=0\n"));
  CHECK(cli::has(c.res.err, "\nNo reclaim progress for ~500 ms (25000000 cycles wall clock).\n"));
  CHECK(c.summary["error"]["device_time_ns"] == 102400.0 * (1 + 4883));
}

// runtime_fatal_codes scope_deadlock_orch.cpp; pto_orchestrator.cpp
// check_scope_can_accept_task: scope_task_count >= window_size - 1.
TEST_CASE("runtime_fatal_codes scope_deadlock: 8 dummies in one scope on a window of 4 [cli]", "[conformance][cli]") {
  Conf c = run_conf("scope_deadlock");
  check_fatal(c, "SCOPE_DEADLOCK", 1);
  CHECK(cli::has(c.res.err, "FATAL: Scope Deadlock Detected! (ring 1)"));
  CHECK(c.summary["tasks"]["submitted"] == 3);
}

// runtime_fatal_codes tensor_wait_timeout_orch.cpp; pto_runtime2.cpp
// wait_for_tensor_ready: the clock is read every 1024 spins, the wait fails
// at the first check more than PTO2_TENSOR_DATA_TIMEOUT_MS (15 s) after it began.
TEST_CASE("runtime_fatal_codes tensor_wait_timeout: a read of a hung AIC task's output [cli]", "[conformance][cli]") {
  Conf c = run_conf("tensor_wait_timeout");
  check_fatal(c, "TENSOR_WAIT_TIMEOUT", 8);
  const double since = c.summary["error"]["detector_since_ns"], dev = c.summary["error"]["device_time_ns"];
  CHECK(dev - since == 102400.0 * 146485);
}

// tensormap_and_ringbuffer heap_empty_ring_rebase; pto_ring_buffer.h
// try_bump_heap: top == tail and the size fits the ring -> rebase to 0
// (heap_tail_ = 0), and update_heap_tail ignores the tasks retired before it.
TEST_CASE("tensormap_and_ringbuffer heap_empty_ring_rebase: a drained ring takes a whole-span allocation [cli]",
          "[conformance][cli]") {
  std::filesystem::path out;
  cli::Result r = cli::run("tests/conformance/traces/heap_empty_ring_rebase.json --quiet --no-host-stats", "conf_rebase", out);
  REQUIRE(r.status == 0);
  nlohmann::json s = cli::load(out / "summary.json");
  CHECK(s["tasks"]["submitted"] == 4 + 84);  // y1[0] + y2[0] = 42 + 42 dummies
  // The second scope's end record: ring 1's heap rebased to 0 after one wrap.
  std::istringstream in(cli::slurp(out / "scope_stats" / "scope_stats.jsonl"));
  std::string line;
  nlohmann::json end2;
  while (std::getline(in, line)) {
    nlohmann::json rec = nlohmann::json::parse(line);
    if (rec.value("site", "") == "heap_empty_ring_rebase_orch.cpp:2" && rec["phase"] == "end") end2 = rec;
  }
  REQUIRE(end2.is_object());
  // Ring 1 is upstream's 1.5 MiB (not a power of 2; call_config.h
  // RuntimeEnv::validate takes any heap >= 1024), the scratch 1 MiB.
  CHECK(end2["heap_start"] == 1572864);            // the tail, rebased: 1 x capacity
  CHECK(end2["heap_end"] == 1572864 + 1048576);    // the second scratch at offset 0
}

// tensormap_and_ringbuffer fanin_lookup_perf; pto_orchestrator.cpp: 64
// explicit deps per consumer, all inline (PTO2_FANIN_INLINE_CAP = 64).
TEST_CASE("tensormap_and_ringbuffer fanin_lookup_perf: 64 x 64 explicit fanin completes in order [cli]",
          "[conformance][cli]") {
  for (const char* t : {"fanin_lookup_perf_dummy", "fanin_lookup_perf_real"}) {
    INFO(t);
    Conf c = run_conf(t);
    REQUIRE(c.res.status == 0);
    CHECK(c.summary["tasks"]["completed"] == 128);
    CHECK(check_edges(c) == 64 * 64);
  }
}

// tensormap_and_ringbuffer dummy_task; pto_orchestrator.cpp
// submit_dummy_task: a dummy takes part in tensormap and explicit
// dependencies like any task, and is retired without a core.
TEST_CASE("tensormap_and_ringbuffer dummy_task: consumers run after their producers through dummies [cli]",
          "[conformance][cli]") {
  const int tasks[] = {3, 6, 4, 20};
  for (int k = 1; k <= 4; ++k) {
    INFO("dummy_task_" << k);
    Conf c = run_conf("dummy_task_" + std::to_string(k));
    REQUIRE(c.res.status == 0);
    CHECK(c.summary["tasks"]["completed"] == tasks[k - 1]);
    CHECK(check_edges(c) > 0);
    // The consumer (the last task) starts after the WRITE_CONST of X ended.
    const auto& producer = c.tasks.at("t0");
    const auto& consumer = c.tasks.at("t" + std::to_string(tasks[k - 1] - 1));
    CHECK(consumer.at("kernel") == "COPY_FIRST");
    CHECK(col_ns(consumer, "first_start_ns") > col_ns(producer, "complete_ns"));
    for (const auto& [name, row] : c.tasks)
      if (row.at("kind") == "dummy") CHECK(col_ns(consumer, "ready_ns") >= col_ns(row, "complete_ns"));
  }
}

// tensormap_and_ringbuffer available_aicore_counts; pto_orchestrator.cpp
// submit_task: require_sync_start fails only for block_num > limit
// (total_cluster_count for MIX).
TEST_CASE("tensormap_and_ringbuffer available_aicore_counts: a sync-start MIX launch as wide as every cluster [cli]",
          "[conformance][cli]") {
  Conf c = run_conf("available_aicore_counts");
  REQUIRE(c.res.status == 0);
  CHECK(c.summary["tasks"]["blocks_dispatched"] == 24);
  CHECK(c.summary["tasks"]["completed"] == 1);
}

// tensormap_and_ringbuffer dfx/scope_stats (vector_example); begin_scope /
// end_scope -> scope_stats_begin / scope_stats_end with the allocator's
// task and heap start/end and the dep-pool snapshot.
TEST_CASE("tensormap_and_ringbuffer dfx/scope_stats: vector_example's scope_stats.jsonl [cli]", "[conformance][cli]") {
  std::filesystem::path out;
  cli::Result r = cli::run("tests/conformance/traces/scope_stats_vector_example.json --quiet --no-host-stats",
                           "conf_scope_stats", out);
  REQUIRE(r.status == 0);
  std::istringstream in(cli::slurp(out / "scope_stats" / "scope_stats.jsonl"));
  std::string line;
  REQUIRE(std::getline(in, line));
  nlohmann::json meta = nlohmann::json::parse(line);
  CHECK(meta["version"] == 6);
  CHECK(meta["fatal"] == false);
  CHECK(meta["dropped"] == 0);
  CHECK(meta.contains("dep_pool_max"));
  int records = 0;
  while (std::getline(in, line)) {
    nlohmann::json rec = nlohmann::json::parse(line);
    for (const char* k : {"site", "phase", "depth", "ring", "task_window_start", "task_window_end", "heap_start",
                          "heap_end", "dep_pool_start", "dep_pool_end", "tensormap"})
      CHECK(rec.contains(k));
    ++records;
  }
  CHECK(records >= 4);
}

// runtime_fatal_codes explicit_fatal_orch.cpp; pto_runtime2.cpp
// rt_report_fatal -> orch_report_fatal_v: the code is latched, the line is
// "FATAL(code=9): <message>", and the orchestration API short-circuits after.
TEST_CASE("runtime_fatal_codes explicit_fatal: rt_report_fatal latches code 9 and the rest of the orchestration is a no-op [cli]",
          "[conformance][cli]") {
  Conf c = run_conf("explicit_fatal");
  check_fatal(c, "EXPLICIT_ORCH_FATAL", 9);
  CHECK(cli::has(c.res.err, "FATAL(code=9): st injected fatal"));
  CHECK(c.summary["error"]["detector"] == "rt_report_fatal() in the orchestration");
  CHECK(c.summary["tasks"]["submitted"] == 1);  // the alloc before the fatal only
}

// host_build_graph pto_ring_buffer.h PTO2TaskAllocator::alloc: the whole graph
// is built before the device runs, nothing is reclaimed meanwhile, so the
// window caps the task count (local_task_id_ >= window_size_) and the heap is
// bumped forward only; a graph that does not fit fails at once.
TEST_CASE("host_build_graph: the whole graph must fit one ring, which nothing reclaims while it is built",
          "[conformance]") {
  RunOptions o;
  o.runtime = RuntimeKind::HostBuildGraph;
  o.ring_task_window = RingValues{4, 4, 4, 4};
  o.ring_heap = RingValues{4096, 4096, 4096, 4096};
  SECTION("every task on ring 0, up to the window's 4") {
    Rt h(o);
    REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));  // depth 1: ring 1 elsewhere
    for (int i = 0; i < 4; ++i) {
      Task* t = h.sub(submit(h.k.get(), {}));
      REQUIRE(t);
      CHECK(t->ring == 0);
      h.finish(t);  // even retired tasks do not give their slot back
    }
    CHECK(h.sub(submit(h.k.get(), {})) == nullptr);
    CHECK(h.last.kind == SubmitStatus::Kind::Fatal);
    CHECK(h.rt->error().code == ErrorCode::FlowControlDeadlock);
    CHECK(h.rt->error().message == "FATAL: Task Window Exhausted!");
  }
  SECTION("the heap is bumped forward, never wrapped") {
    Rt h(o);
    Task* a = h.sub(submit(h.k.get(), {out(768)}));  // 3072 of 4096
    REQUIRE(a);
    h.finish(a);
    CHECK(h.sub(submit(h.k.get(), {out(512)})) == nullptr);  // 2048 > the 1024 left
    CHECK(h.rt->error().code == ErrorCode::HeapRingDeadlock);
    CHECK(h.rt->error().message == "FATAL: Graph Heap Exhausted!");
  }
}

// host_build_graph pto_orchestrator.cpp append_fanin_or_fail: at most
// PTO2_MAX_FANIN = 128 distinct producers, completed ones included (no spill
// pool, no dep pool): "Fanin Capacity Exhausted!", DEP_POOL_OVERFLOW.
TEST_CASE("host_build_graph: a task with more than 128 producers overflows its fanin", "[conformance]") {
  RunOptions o;
  o.runtime = RuntimeKind::HostBuildGraph;
  o.ring_task_window = RingValues{1024, 1024, 1024, 1024};
  o.ring_dep_pool = RingValues{4, 4, 4, 4};  // no dep pool in host_build_graph: irrelevant
  Rt h(o);
  SubmitRequest c = submit(h.k.get(), {});
  for (int i = 0; i < 128; ++i) {
    Task* p = h.sub(submit(nullptr, {}));
    REQUIRE(p);
    h.finish(p);
    c.deps.push_back(p->id);
  }
  REQUIRE(h.sub(c));  // 128: fits
  Task* p = h.sub(submit(nullptr, {}));
  REQUIRE(p);
  c.deps.push_back(p->id);  // 129
  CHECK(h.sub(c) == nullptr);
  CHECK(h.rt->error().code == ErrorCode::DepPoolOverflow);
  CHECK(h.rt->error().message == "FATAL: Fanin Capacity Exhausted!");
}

// pto_orchestrator.cpp alloc_tensors runs no STEP 2 (sync_tensormap): an
// alloc at the slot of the last cleanup point frees no tensormap entry, the
// next kernel submit does.
TEST_CASE("alloc_tensors runs no tensormap cleanup", "[conformance]") {
  RunOptions o;
  o.ring_task_window = RingValues{4, 4, 4, 4};
  auto run = [&](bool alloc_at_slot0) {
    Rt h(o);
    Tensor x = h.ext(16);
    auto scoped = [&](SubmitRequest r, bool alloc) {
      h.rt->scope_begin(ScopeMode::Auto, "s");
      Task* t = h.sub(r, alloc);
      h.rt->scope_end();
      return t;
    };
    Task* w = scoped(submit(h.k.get(), {arg(ArgTag::Inout, x)}), false);  // ring 1, local 0: one entry
    REQUIRE(w);
    h.finish(w);  // retired: ring 1's watermark is 1
    for (int i = 0; i < 3; ++i) {  // locals 1..3
      Task* t = scoped(submit(h.k.get(), {}), false);
      REQUIRE(t);
      h.finish(t);
    }
    CHECK(h.rt->tensormap().in_use() == 1);
    SubmitRequest al;
    al.args = {out(16)};
    REQUIRE(scoped(alloc_at_slot0 ? al : submit(h.k.get(), {}), alloc_at_slot0));  // local 4: slot 0 again
    return h.rt->tensormap().in_use();
  };
  CHECK(run(true) == 1);   // the alloc leaves w's retired entry
  CHECK(run(false) == 0);  // a kernel submit at that slot cleans it up
}

// pto_scheduler.h check_and_handle_consumed: COMPLETED and fanout_refcount ==
// fanout_count is CONSUMED, whoever releases last: a scope_end can retire a
// completed task before the scheduler's deferred on_task_release for it ran.
TEST_CASE("a completed task is CONSUMED at its scope's end, before its own deferred release", "[conformance]") {
  Rt h;
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));
  Task* p = h.sub(submit(h.k.get(), {out(64)}));
  REQUIRE(p);
  Task* c = h.sub(submit(h.k.get(), {arg(ArgTag::Input, h.output(p))}));
  REQUIRE(c);
  SubmitWork w;
  h.rt->complete_task(*p, 0, w);  // p completes; its release is deferred
  h.rt->complete_task(*c, 0, w);
  h.rt->release_task(*c);         // c releases its RETAIN pin on p
  h.rt->scope_end();              // the scope's pins on p and c go
  CHECK(p->state == TaskState::Consumed);
  CHECK(h.rt->ring(1).tail() == 2);  // both retired although p's release is pending
  h.rt->release_task(*p);            // the deferred release still finds p's slot (ASan: no use after free)
  CHECK(h.rt->ring(1).tail() == 2);
}
