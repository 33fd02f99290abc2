// The dep pool at the wiring, against the runtime's source
// (hw-native-sys/simpler src/a2a3/runtime/tensormap_and_ringbuffer/runtime/):
//
// pto_orchestrator.cpp submit_task_common STEP 6 decides once, at the end of
// the submit, whether the task must be wired: no claimed WAIT producer still
// running (all_claimed_fanin_completed) -> ready at once, no dep-pool entry;
// otherwise orch_wire_live_fanin_task -> PTO2DepListPool::ensure_space(ring,
// wait_count, oldest_open_task) (pto_ring_buffer.cpp), which spins until
// wait_count entries are free, reclaiming only (PTO2DepListPool::reclaim:
// last_task_alive moved by PTO2_DEP_POOL_CLEANUP_INTERVAL, tail -> the
// dep_pool_mark of task last_task_alive - 1), and latches
// PTO2_ERROR_DEP_POOL_OVERFLOW when the head of the ring is the oldest task
// of an open scope (structural, every 1024 spins) or after ~500 ms without
// reclaim progress. The wait never looks at the producers again: a producer
// completing meanwhile does not release it. wire_fanin_task then re-reads each
// producer under its fanout lock: a completed one counts towards readiness and
// takes no entry (dep_pool.prepend only for a live one).
#include "tests/catch.h"

#include <string>
#include <vector>

#include "tests/cli_support.h"
#include "tests/runtime_harness.h"

using namespace npusim;
using namespace testing_support;

namespace {

RunOptions pool_on_ring1(std::uint64_t n) {
  RunOptions o;
  o.ring_dep_pool = RingValues{0, n, 0, 0};
  return o;
}

}  // namespace

// STEP 6 -> orch_wire_live_fanin_task -> PTO2DepListPool::ensure_space: the
// decision is taken once; the retry after its producer completed still waits
// for the entry, and wire_fanin_task, once room came, takes none for the
// completed producer.
TEST_CASE("dep pool: a submit that found a live producer waits for its entries after the producer completes",
          "[conformance][limits]") {
  // Ring 1, 4 entries, reclaim interval 1. Each task in a scope of its own,
  // so a completed task retires once its consumers are released.
  Harness h(pool_on_ring1(4), [](Platform& p, RunConfig&) { p.limits.dep_pool_cleanup_interval = 1; });
  Tensor x = h.ext(64), y = h.ext(16);
  auto scoped = [&](const SubmitRequest& r) {
    REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));
    Task* t = h.sub(r);
    h.rt->scope_end();
    return t;
  };
  std::vector<Task*> p;
  for (int i = 0; i < 4; ++i) p.push_back(scoped(submit(h.k.get(), {arg(ArgTag::Inout, view(x, i * 16, 16))})));
  Task* c = scoped(submit(h.k.get(), {arg(ArgTag::Input, x)}));  // 4 live producers: 4 of 4 entries
  REQUIRE(c);
  REQUIRE(h.rt->ring(1).dep_used() == 4);
  Task* p4 = scoped(submit(h.k.get(), {arg(ArgTag::Inout, y)}));
  REQUIRE(p4);
  // D reads y: p4 is running, so D must wire and needs 1 entry; none is free
  // and nothing has retired (last_task_alive 0).
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "d"));
  const SubmitRequest d = submit(h.k.get(), {arg(ArgTag::Input, y)});
  CHECK(h.sub(d) == nullptr);
  CHECK(h.last.kind == SubmitStatus::Kind::Blocked);
  CHECK(h.last.blocked == Resource::DepPool);
  // p4 completes: D no longer has a live producer, but the runtime does not
  // look again; it still waits for a free entry.
  h.finish(p4);
  CHECK(p4->state == TaskState::Completed);
  CHECK(h.resume(d) == nullptr);
  CHECK(h.last.blocked == Resource::DepPool);
  CHECK(h.rt->ring(1).dep_used() == 4);
  // The first four producers and C finish and retire (ids 0..4); p4 stays,
  // pinned by D. The watermark moved by 5 >= 1: tail -> C's mark, 5.
  for (Task* t : p) h.finish(t);
  h.finish(c);
  CHECK(h.rt->ring(1).tail() == 5);
  Task* dt = h.resume(d);
  REQUIRE(dt);
  CHECK(h.rt->ring(1).dep_tail() == 5);
  // wire_fanin_task: p4 has completed, so D takes no entry and is ready.
  CHECK(h.rt->ring(1).dep_used() == 0);
  CHECK(dt->wait_edges == 1);
  CHECK(dt->is_ready());
  h.rt->scope_end();
}

// STEP 6: the wait asks for wait_count entries (every WAIT edge), not one per
// producer still running: a consumer of one completed and one running
// producer needs 2 free entries and takes 1.
TEST_CASE("dep pool: ensure_space asks for every WAIT edge, the wiring takes one per running producer",
          "[conformance][limits]") {
  Harness h(pool_on_ring1(4));
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));
  Tensor x = h.ext(64);
  Task* a = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 0, 16))}));
  Task* b = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 16, 16))}));
  REQUIRE(b);
  h.finish(a);  // completed, held by the open scope
  Task* c1 = h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 16, 16))}));  // b: 1 entry
  Task* c2 = h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 16, 16))}));  // b: 1 entry
  REQUIRE(c1);
  REQUIRE(c2);
  REQUIRE(h.rt->ring(1).dep_used() == 2);
  // a completed, b running: 2 WAIT edges, 2 free entries: it wires, takes 1.
  Task* c3 = h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 0, 32))}));
  REQUIRE(c3);
  CHECK(c3->wait_edges == 2);
  CHECK(h.rt->ring(1).dep_used() == 3);
  // The same fanin again: 2 needed, 1 free. Blocked, though it would take 1.
  CHECK(h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 0, 32))})) == nullptr);
  CHECK(h.last.blocked == Resource::DepPool);
  CHECK(h.rt->ring(1).dep_used() == 3);
}

// runtime_fatal_codes 4 reached through the wiring:
// orch_wire_live_fanin_task -> PTO2DepListPool::ensure_space's structural test
// (oldest_open_task_on_current_ring is the ring's head) -> report_deadlock
// (scope_gated) and PTO2_ERROR_DEP_POOL_OVERFLOW. One scope of 8
// producer/consumer pairs, ring_dep_pool 4: the 5th consumer's producer
// completes while it waits, and the device still fails.
TEST_CASE("dep pool: a scope of 8 producer/consumer pairs on a pool of 4 is DEP_POOL_OVERFLOW [cli]",
          "[conformance][cli][fatal]") {
  cli::RunResult r = cli::run_summary("traces/fatal/dep_pool_pairs.json --quiet --no-host-stats", "dep_pool_pairs");
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  const nlohmann::json& e = r.summary["error"];
  CHECK(e["name"] == "DEP_POOL_OVERFLOW");
  CHECK(e["orch_error_code"] == 4);
  CHECK(e["ring"] == 1);
  CHECK(cli::has(r.err, "FATAL: Dependency Pool Deadlock Detected!\n"));
  CHECK(cli::has(r.err, "\nProvable head-of-line deadlock.\n"));
  CHECK(cli::has(r.err, "  - Pool used:     4 / 4 (100.0%)\n"));
  CHECK(cli::has(r.err, "  - Needed:        1 entries\n"));
  CHECK(r.summary["tasks"]["submitted"] == 10);  // 4 pairs, the 5th producer and the blocked consumer
  CHECK(r.summary["tasks"]["completed"] == 9);
  // The advice re-runs the program until it completes.
  const nlohmann::json& en = e["diagnosis"]["enough"];
  REQUIRE(en.is_object());
  CHECK(en["field"] == "ring_dep_pool");
  CHECK(en["ring"] == 1);
  CHECK(en["from"] == 4);
  CHECK(en["to"] == 8);
  CHECK(en["outcome"] == "ok");
  cli::RunResult ok = cli::run_summary("traces/fatal/dep_pool_pairs.json --quiet --no-host-stats --ring-dep-pool 0,8,0,0",
                                       "dep_pool_pairs_8");
  CHECK(ok.status == 0);
  CHECK(ok.summary["status"] == "ok");
}

// The upstream vector example (examples/a2a3/tensormap_and_ringbuffer/
// vector_example, here traces/scenes/vector_example) with ring_dep_pool 4.
// Ring 1 (the inner scope): p1 and p2 each wait on sum (running): 1 entry
// each; prod waits on p1 and p2 (running): 2 entries, the pool is full; f
// waits on prod (running) and sum: STEP 6 decides to wire, ensure_space wants
// 2 entries, and the open scope holds every ring-1 task: the structural test
// latches DEP_POOL_OVERFLOW though prod completes while f waits.
TEST_CASE("dep pool: the vector example scene on a pool of 4 is DEP_POOL_OVERFLOW [cli]",
          "[conformance][cli][scene]") {
  const std::string scene = "traces/scenes/vector_example/vector_example.json --quiet --no-host-stats";
  cli::RunResult r = cli::run_summary(scene + " --ring-dep-pool 4", "dep_pool_vector_4");
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["error"]["name"] == "DEP_POOL_OVERFLOW");
  CHECK(r.summary["error"]["ring"] == 1);
  CHECK(r.summary["tasks"]["completed"] == 4);
  CHECK(cli::has(r.err, "  - Needed:        2 entries\n"));
  const nlohmann::json& en = r.summary["error"]["diagnosis"]["enough"];
  REQUIRE(en.is_object());
  CHECK(en["to"] == 8);
  CHECK(en["outcome"] == "ok");
  cli::RunResult ok = cli::run_summary(scene + " --ring-dep-pool 4,8,4,4", "dep_pool_vector_8");
  CHECK(ok.status == 0);
  CHECK(ok.summary["status"] == "ok");
}

// examples/a2a3/tensormap_and_ringbuffer/benchmark_bgemm Case1
// (test_benchmark_bgemm.py: matmul_add_task_num 64, grid_k 2: 32 group
// scopes, 128 tasks; bgemm_orch.cpp). Each group takes up to 3 entries on
// ring 1 and PTO2DepListPool::reclaim frees nothing before 64 tasks of the
// ring retired (PTO2_DEP_POOL_CLEANUP_INTERVAL): 4, 8, 16 and 32 fail, 64
// completes. The blocked ADD's group scope is open and its first task is the
// ring's head: the structural test fires.
TEST_CASE("dep pool: bgemm Case1 fails up to ring_dep_pool 32 and completes at 64 [cli]", "[conformance][cli]") {
  const std::string trace = "tests/conformance/traces/bgemm_case1.json --quiet --no-host-stats";
  for (int n : {4, 8, 16}) {
    cli::RunResult r = cli::run_summary(trace + " --no-suggest --ring-dep-pool " + std::to_string(n),
                                        "bgemm1_" + std::to_string(n));
    INFO("ring_dep_pool " << n);
    CHECK(r.status == 1);
    REQUIRE(r.summary.is_object());
    CHECK(r.summary["error"]["name"] == "DEP_POOL_OVERFLOW");
    CHECK(cli::has(r.err, "\nProvable head-of-line deadlock.\n"));
  }
  cli::RunResult r = cli::run_summary(trace + " --ring-dep-pool 32", "bgemm1_32");
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["error"]["name"] == "DEP_POOL_OVERFLOW");
  CHECK(r.summary["error"]["ring"] == 1);
  const nlohmann::json& en = r.summary["error"]["diagnosis"]["enough"];
  REQUIRE(en.is_object());
  CHECK(en["from"] == 32);
  CHECK(en["to"] == 64);
  CHECK(en["outcome"] == "ok");
  cli::RunResult ok = cli::run_summary(trace + " --ring-dep-pool 64", "bgemm1_64");
  CHECK(ok.status == 0);
  CHECK(ok.summary["tasks"]["completed"] == 128);
}
