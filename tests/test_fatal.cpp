// Every capacity and argument fatal of the runtime, each from its minimal
// trace in traces/fatal/: the runtime's code, name and hint on stderr and in
// summary.json, the host code, when the device would report it, npusim's
// diagnosis, and the sizes that would have been enough. Simulated time only:
// a 500 ms backstop or a 15 s wait costs no wall-clock time.
#include "tests/catch.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using cli::has;

using Run = cli::RunResult;

Run fatal_run(const std::string& trace, const std::string& extra = "") {
  return cli::run_summary(trace + " --quiet --no-host-stats " + extra, "fatal");
}

// What every device-reported fatal shares.
void check_common(const Run& r, const std::string& name, int orch_code, const std::string& hint_start) {
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["status"] == "error");
  const json& e = r.summary["error"];
  CHECK(e["name"] == name);
  CHECK(e["orch_error_code"] == orch_code);
  CHECK(e["sched_error_code"] == 0);
  CHECK(e["host_code"] == 507018);
  CHECK(has(e["hint"].get<std::string>(), hint_start));
  const std::string code = std::to_string(orch_code);
  // The host's lines in the order it prints them (sync_stream_pair's
  // ACL_LOG_ERROR_DETAIL, then validate_runtime_impl's LOG_RUNTIME_FAILURE);
  // the exact texts are checked in tests/conformance/test_conf_outputs.cpp.
  const std::string host = "aclrtSynchronizeStreamWithTimeout (AICPU) failed: 507018\n"
                           "ACL error detail: 507018 ACL_ERROR_RT_AICPU_EXCEPTION - an AICPU task raised an exception";
  CHECK(has(r.err, host));
  CHECK(has(r.err, "PTO2 runtime failed: orch_error_code=" + code + " sched_error_code=0 runtime_status=-" + code + "\n" +
                       "error detail: orch_error_code=" + code + " " + name + " - "));
  CHECK(has(r.err, "error hint: " + hint_start));
  CHECK(r.err.find(host) < r.err.find("PTO2 runtime failed:"));
  CHECK(r.err.find("PTO2 runtime failed:") < r.err.find("npusim diagnosis:\n"));
}

void check_enough(const Run& r, const std::string& field, int ring, std::uint64_t from, std::uint64_t to) {
  const json& en = r.summary["error"]["diagnosis"]["enough"];
  REQUIRE(en.is_object());
  CHECK(en["field"] == field);
  if (ring >= 0) CHECK(en["ring"] == ring);
  CHECK(en["from"] == from);
  CHECK(en["to"] == to);
  CHECK(en["outcome"] == "ok");
  CHECK(has(r.err, "sizes that would have been enough: " + field));
}

}  // namespace

TEST_CASE("SCOPE_DEADLOCK: 8 tasks in one scope with ring_task_window=4", "[fatal]") {
  Run r = fatal_run("traces/fatal/scope_deadlock.json");
  check_common(r, "SCOPE_DEADLOCK", 1, "raise ring_task_window");
  CHECK(has(r.err, "FATAL: Scope Deadlock Detected! (ring 1)\n"));
  CHECK(r.summary["error"]["message"] == "FATAL: Scope Deadlock Detected! (ring 1)");
  CHECK(has(r.err, "is the 4th task of scope 'scope_deadlock:1' (depth 1, ring 1)"));
  CHECK(r.summary["error"]["ring"] == 1);
  CHECK(r.summary["error"]["detector"] == "scope check at submit");
  check_enough(r, "ring_task_window", 1, 4, 16);  // 8 tasks need a window of at least 9
}

TEST_CASE("HEAP_RING_DEADLOCK: one 32 KiB output with ring_heap=1024, reported after the 500 ms backstop", "[fatal]") {
  Run r = fatal_run("traces/fatal/heap_ring_deadlock.json");
  check_common(r, "HEAP_RING_DEADLOCK", 2, "raise ring_heap");
  CHECK(has(r.err, "FATAL: Task Allocator Deadlock - Heap Exhausted! ring=0\n"));
  CHECK(has(r.err, "No reclaim progress for ~500 ms (25000000 cycles wall clock).\n"));
  CHECK(has(r.err, "needs 32768 bytes of heap on ring 0"));
  CHECK(has(r.err, "larger than the whole heap"));
  // Blocked at once; the device's backstop clock starts at the first
  // 1024-spin check (102.4 us) and fires at the first check 500 ms after it.
  CHECK(r.summary["error"]["stall_time_ns"] == 0.0);
  CHECK(r.summary["error"]["detector_since_ns"] == 0.0);
  CHECK(r.summary["error"]["device_time_ns"] == 102400.0 * (1 + 4883));
  check_enough(r, "ring_heap", 0, 1024, 32768);
}

TEST_CASE("HEAP_RING_DEADLOCK while a kernel still runs: the backstop fires at its check, not one later", "[fatal]") {
  // The same oversized output, but a 1 s kernel of a closed scope (ring 1)
  // keeps the device busy: the orchestrator spins check by check (no
  // shortcut to the end), the head is pinned by no open scope (no
  // structural verdict), and the backstop fires at the first 1024-spin
  // check at least 500 ms after its anchor (pto_ring_buffer.h
  // PTO2TaskAllocator::alloc's no-progress backstop): the same 102.4 us x
  // 4884 after the stall as with nothing running. Under `timeout`: a
  // regression that never fires would spin the host forever at that time.
  const fs::path dir = cli::scratch("busy");
  fs::create_directories(dir);
  std::ofstream(dir / "busy.json") << R"({"npusim_trace": 1, "name": "heap_ring_deadlock_busy", "run": {"ring_heap": 1024},
    "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 2000}},
                "LONG": {"func_id": 1, "core": "aiv", "duration": {"ns": 1000000000}}},
    "program": [{"op": "scope", "body": [{"op": "submit", "kernel": "LONG", "args": []}]},
                {"op": "submit", "kernel": "K", "args": [{"out": "o", "shape": [8192], "dtype": "fp32"}]}]})";
  const cli::Result r = cli::captured("timeout 300 '" + std::string(NPUSIM_BINARY) + "' run '" +
                                      (dir / "busy.json").string() + "' --quiet --no-host-stats --out '" +
                                      (dir / "out").string() + "'");
  CHECK(r.status == 1);
  REQUIRE(fs::exists(dir / "out" / "summary.json"));
  const json e = cli::load(dir / "out" / "summary.json")["error"];
  CHECK(e["name"] == "HEAP_RING_DEADLOCK");
  CHECK(e["detector"] == "no-progress backstop (500 ms)");
  CHECK(has(r.err, "No reclaim progress for ~500 ms (25000000 cycles wall clock).\n"));
  const double since = e["detector_since_ns"], dev = e["device_time_ns"];
  CHECK(dev - since == 102400.0 * (1 + 4883));
  CHECK(dev < 1e9);  // before the kernel ends
  // The kernel computes until the report: progress stops there.
  CHECK(e["stall_time_ns"] == dev);
}

TEST_CASE("FLOW_CONTROL_DEADLOCK: 8 nested scopes of 3 tasks share ring 3", "[fatal]") {
  Run r = fatal_run("traces/fatal/flow_control_deadlock.json");
  check_common(r, "FLOW_CONTROL_DEADLOCK", 3, "raise ring_task_window");
  CHECK(has(r.err, "FATAL: Task Allocator Deadlock - Task Ring Full! ring=3\n"));
  CHECK(has(r.err, "Provable head-of-line deadlock.\n"));
  CHECK(has(r.err, "'nest:3' (depth 3, 3 tasks), 'nest:4' (depth 4, 3 tasks)"));
  CHECK(has(r.err, "every scope at depth >= 3 shares ring 3"));
  CHECK(r.summary["error"]["ring"] == 3);
  CHECK(r.summary["error"]["diagnosis"]["rings"][2]["reclaim_head"]["pinned_by_scope"] == "nest:3");
  // The structural test runs every 1024 spins of 100 ns.
  const double since = r.summary["error"]["detector_since_ns"], dev = r.summary["error"]["device_time_ns"];
  CHECK(dev - since == 102400.0);  // whole nanoseconds: exact
  check_enough(r, "ring_task_window", 3, 16, 32);
}

TEST_CASE("DEP_POOL_OVERFLOW: 128 producers into one consumer with ring_dep_pool=4", "[fatal]") {
  Run r = fatal_run("traces/fatal/dep_pool_overflow.json");
  check_common(r, "DEP_POOL_OVERFLOW", 4, "follow the preceding resource diagnostic");
  // The 64 edges beyond the inline 64 need the fanin spill pool first, which
  // has only the backstop (pto_ring_buffer.cpp PTO2FaninPool::ensure_space).
  CHECK(has(r.err, "FATAL: Fanin Spill Pool Deadlock Detected!\n" + std::string(40, '=') +
                       "\nFanin spill pool cannot reclaim space after ~500 ms (no progress).\n"));
  CHECK(has(r.err, "has 128 fanin edges, 64 beyond the 64 kept inline"));
  check_enough(r, "ring_dep_pool", 0, 4, 64);  // 64 spill entries: every entry usable
}

TEST_CASE("TENSORMAP_OVERFLOW: live writers fill the global tensormap", "[fatal]") {
  Run r = fatal_run("traces/fatal/tensormap_overflow.json");
  check_common(r, "TENSORMAP_OVERFLOW", 11, "follow the preceding resource diagnostic");
  CHECK(has(r.err, "FATAL: TensorMap Entry Pool Deadlock Detected!\n"));
  CHECK(has(r.err, "TensorMap entry pool freed no entries for ~500 ms while a task waits.\n"));
  CHECK(has(r.err, "which holds 65536 of 65536 entries"));
  check_enough(r, "tensormap_pool", -1, 65536, 131072);
}

TEST_CASE("REQUIRE_SYNC_START_INVALID: 1000 AIV blocks with sync_start", "[fatal]") {
  Run r = fatal_run("traces/fatal/require_sync_start_invalid.json");
  check_common(r, "REQUIRE_SYNC_START_INVALID", 7, "lower the task's block_num");
  CHECK(has(r.err, "FATAL(code=7): require_sync_start block_num=1000 > limit=48 (deadlock guaranteed)\n"));
  CHECK(r.summary["tasks"]["submitted"] == 0);
}

TEST_CASE("TENSOR_WAIT_TIMEOUT: a read of a kernel that never ends times out after 15 s", "[fatal]") {
  Run r = fatal_run("traces/fatal/tensor_wait_timeout.json");
  check_common(r, "TENSOR_WAIT_TIMEOUT", 8, "find the producing kernel");
  CHECK(has(r.err, "FATAL(code=8): Timeout (750000000 cycles): producer (ring=0, local=0) not completed\n"));
  CHECK(has(r.err, "waits for t0 (HANG) to complete; it is running on core"));
  // The wait reads the clock every 1024 polls of 100 ns and fails at the
  // first check more than 15 s after it began (wait_for_tensor_ready).
  const double since = r.summary["error"]["detector_since_ns"], dev = r.summary["error"]["device_time_ns"];
  CHECK(dev - since == 102400.0 * 146485);
  // The kernel computes through the wait: progress stops at the report.
  CHECK(r.summary["error"]["stall_time_ns"] == dev);
}

TEST_CASE("AICPU_ASSERT: scopes nested deeper than the runtime's 64 levels", "[fatal]") {
  // pto_orchestrator.cpp begin_scope asserts "Scope stack overflow": the AICPU
  // aborts, no runtime code is latched, the host sees the AICPU exception.
  Run r = fatal_run("traces/fatal/scope_overflow.json");
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  const json& e = r.summary["error"];
  CHECK(e["name"] == "AICPU_ASSERT");
  CHECK(e["orch_error_code"] == 0);
  CHECK(e["sched_error_code"] == 0);
  CHECK(e["host_code"] == 507018);
  CHECK(has(r.err, "\"Scope stack overflow\"' failed."));
  // acl_error_log.h ACL_LOG_ERROR_DETAIL: the ACL detail and hint lines.
  CHECK(has(r.err, "ACL error detail: 507018 ACL_ERROR_RT_AICPU_EXCEPTION - an AICPU task raised an exception"));
  CHECK(has(r.err, "ACL error hint: do NOT read this as 'deadlock'"));
  // runtime_maker.cpp: runtime_status 0 (no code latched): no LOG_RUNTIME_FAILURE.
  CHECK_FALSE(has(r.err, "PTO2 runtime failed"));
}

TEST_CASE("scopes nested as deep as JSON allows are an AICPU_ASSERT of the runtime, not a crash of npusim", "[fatal]") {
  // 126 nested scopes around one submit: 253 levels of JSON objects and lists,
  // under the limit of 256. The interpreter compiles the op on the
  // orchestrator's coroutine stack (a few frames a level); the runtime's
  // scope stack overflows at 64 as in the test above.
  std::string program = R"({"op": "submit", "kernel": "K"})";
  for (int i = 0; i < 126; ++i) program = R"({"op": "scope", "body": [)" + program + "]}";
  const fs::path trace = cli::scratch("deep_scopes.json");
  fs::create_directories(trace.parent_path());
  std::ofstream(trace) << R"({"npusim_trace": 1, "name": "deep", "kernels": {"K": {"func_id": 0, "core": "aiv",)"
                       << R"( "duration": {"ns": 2000}}}, "program": [)" << program << "]}";
  Run r = fatal_run(trace.string());
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["error"]["name"] == "AICPU_ASSERT");
  CHECK(has(r.err, "\"Scope stack overflow\"' failed."));
}

TEST_CASE("rtMalloc 207001: an arena larger than the device's memory fails before the first task", "[fatal]") {
  // 1 GiB heaps, 2^27-slot windows: 4 x (2^27 x 4968 B) alone is 2.4 TiB.
  Run r = fatal_run("traces/chain.json", "--ring-task-window 134217728 --ring-heap 1073741824");
  CHECK(r.status == 1);
  const json& e = r.summary["error"];
  CHECK(e["name"] == "ACL_ERROR_RT_MEMORY_ALLOCATION");
  CHECK(e["host_code"] == 207001);
  CHECK(e["orch_error_code"] == 0);
  CHECK(r.summary["tasks"]["submitted"] == 0);
  CHECK(has(r.err, "ACL error detail: 207001 ACL_ERROR_RT_MEMORY_ALLOCATION - device memory allocation failed (out of memory)\n"));
  CHECK(has(r.err, "a scalar ring size applies to each of the four rings"));
  CHECK(e["diagnosis"]["arena_bytes"].get<std::uint64_t>() > e["diagnosis"]["device_memory_bytes"].get<std::uint64_t>());
}

TEST_CASE("ring heaps whose sum overflows 64 bits fail before any allocation, at the saturated total", "[fatal]") {
  // 4 x 2^63 heap bytes wrapped to 0 before the arithmetic saturated. The
  // runtime refuses the sum before any allocation (derive_arena_static_sizes).
  Run r = fatal_run("traces/chain.json", "--ring-heap 9223372036854775808");
  CHECK(r.status == 1);
  CHECK(r.summary["error"]["name"] == "HEAP_SIZE_OVERFLOW");
  CHECK(has(r.err, "Total ring heap size overflows uint64_t\n"));
  CHECK(r.summary["error"]["diagnosis"]["arena_bytes"].get<std::uint64_t>() == UINT64_MAX);
  CHECK(r.summary["tasks"]["submitted"] == 0);
}

TEST_CASE("no-suggest option skips the re-runs that search for sufficient sizes", "[fatal]") {
  Run r = fatal_run("traces/fatal/scope_deadlock.json", "--no-suggest");
  CHECK(r.status == 1);
  CHECK_FALSE(r.summary["error"]["diagnosis"].contains("enough"));
  CHECK_FALSE(has(r.err, "would have been enough"));
}

// The latch is the writer's, not the code's: rt_report_fatal stores any code
// it is given in orch_error_code (pto_runtime2.cpp rt_report_fatal ->
// pto_orchestrator.cpp orch_mark_fatal), a scheduler's number included.
TEST_CASE("rt_report_fatal with a scheduler's code still latches orch_error_code", "[fatal][cli]") {
  const fs::path dir = cli::scratch("fatal100_in");
  fs::create_directories(dir);
  const json trace = {{"npusim_trace", 1},
                      {"name", "fatal100"},
                      {"kernels", {{"K", {{"func_id", 0}, {"core", "aiv"}, {"duration", {{"ns", 1000}}}}}}},
                      {"program", json::array({{{"op", "fatal"}, {"code", 100}, {"message", "as a scheduler"}}})}};
  std::ofstream(dir / "t.json") << trace.dump();
  Run r = fatal_run("'" + (dir / "t.json").string() + "'");
  REQUIRE(r.summary.is_object());
  CHECK(r.status == 1);
  CHECK(r.summary["error"]["orch_error_code"] == 100);
  CHECK(r.summary["error"]["sched_error_code"] == 0);
  CHECK(has(r.err, "PTO2 runtime failed: orch_error_code=100 sched_error_code=0 runtime_status=-100\n"));
}
