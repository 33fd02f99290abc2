// Conformance of what npusim prints and writes: the host's and the device's
// lines on a failure, scope_stats.jsonl, deps.json, and the checks of the run
// configuration, each against the upstream code that prints or writes it
// (hw-native-sys/simpler unless stated, PyPTO's RunConfig for the messages
// PyPTO gives first). Exact strings and bytes throughout.
#include "tests/catch.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/runtime/error_codes.h"
#include "tests/cli_support.h"

namespace {

namespace fs = std::filesystem;
using cli::has;
using nlohmann::json;

cli::RunResult run(const std::string& args, const std::string& name) {
  return cli::run_summary(args + " --quiet --no-host-stats --no-suggest", "conf_outputs_" + name);
}

// The lines of `text` from the one equal to `first`, `n` of them.
std::vector<std::string> section(const std::string& text, const std::string& first, std::size_t n) {
  std::vector<std::string> all = cli::lines_of(text);
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i] == first) return std::vector<std::string>(all.begin() + i, all.begin() + std::min(all.size(), i + n));
  return {};
}

const std::string kConf = "tests/conformance/traces/";

const char* const kAclAicpuDetail =
    "ACL error detail: 507018 ACL_ERROR_RT_AICPU_EXCEPTION - an AICPU task raised an exception; several distinct "
    "on-device mechanisms all surface as this one generic code";
const char* const kAclAicpuHint =
    "ACL error hint: do NOT read this as 'deadlock' or 'OOM' on its own -- it is a generic host-side code. Grep the "
    "host log for 'orch_error_code=' / 'sched_error_code=' / 'sub_class=' to get the device-classified reason, and "
    "read the device log for the detector that fired. See docs/troubleshooting/device-error-codes.md";

}  // namespace

// ============================================================ item 9: texts

// src/common/runtime_status/error_names.h: error_name, error_desc,
// error_hint, byte for byte, for every code the runtime latches.
TEST_CASE("error_names.h: every code's name, description and hint", "[conformance]") {
  using npusim::ErrorCode;
  using npusim::error_info;
  struct Row {
    ErrorCode code;
    const char *name, *desc_start, *desc_end, *hint_end;
  };
  const Row rows[] = {
      {ErrorCode::ScopeDeadlock, "SCOPE_DEADLOCK", "tasks submitted in one scope reached the ring task-window cap",
       "so no slot can be reclaimed", "enable CallConfig.enable_scope_stats to see which scope peaked"},
      {ErrorCode::HeapRingDeadlock, "HEAP_RING_DEADLOCK", "the task allocator could not reserve the heap bytes",
       "required for another task", "the 'Ring buffer sizes:' line above reports the configured capacities"},
      {ErrorCode::FlowControlDeadlock, "FLOW_CONTROL_DEADLOCK", "the task allocator could not admit another task",
       "had no available slot", "also check for nested submission or a stalled consumer"},
      {ErrorCode::DepPoolOverflow, "DEP_POOL_OVERFLOW", "a task's producer dependencies exceeded",
       "available fanin representation capacity", "raise PTO2_RING_DEP_POOL or cut fanin"},
      {ErrorCode::InvalidArgs, "INVALID_ARGS", "an orchestration API rejected its arguments",
       "or an CoreTaskArgs carrying an error flag)", "recheck the arguments of the orchestration API calls listed above"},
      {ErrorCode::RequireSyncStartInvalid, "REQUIRE_SYNC_START_INVALID", "require_sync_start() asked for more blocks",
       "which can never be satisfied", "or drop the sync-start request"},
      {ErrorCode::TensorWaitTimeout, "TENSOR_WAIT_TIMEOUT", "waiting for tensor data timed out",
       "never released its fanout reference", "to tell a slow kernel apart from a stuck one"},
      {ErrorCode::ExplicitOrchFatal, "EXPLICIT_ORCH_FATAL", "the orchestration code called rt_report_fatal() itself",
       "short-circuits to a no-op", "follow the message passed to the rt_report_fatal() call site"},
      {ErrorCode::ScopeTasksOverflow, "SCOPE_TASKS_OVERFLOW", "the scope task-record buffer saturated",
       "latch SCOPE_DEADLOCK or FLOW_CONTROL_DEADLOCK)", "tuning the ring capacities will not help"},
      {ErrorCode::TensormapOverflow, "TENSORMAP_OVERFLOW", "the tensormap could not reserve the entries",
       "register another task's outputs", "also inspect entry-reclaim progress"},
      {ErrorCode::SchedulerTimeout, "SCHEDULER_TIMEOUT", "the scheduler saw no forward progress within its timeout",
       "carries the device-classified reason and locators", "tell a true deadlock apart from a merely slow kernel"},
  };
  for (const Row& r : rows) {
    INFO(r.name);
    const auto& e = error_info(r.code);
    const std::string desc = e.description, hint = e.hint;
    CHECK(std::string(e.name) == r.name);
    const std::string desc_end = r.desc_end, hint_end = r.hint_end;
    CHECK(desc.rfind(r.desc_start, 0) == 0);
    CHECK((desc.size() >= desc_end.size() && desc.compare(desc.size() - desc_end.size(), std::string::npos, desc_end) == 0));
    CHECK((hint.size() >= hint_end.size() && hint.compare(hint.size() - hint_end.size(), std::string::npos, hint_end) == 0));
  }
  CHECK(std::string(error_info(ErrorCode::SchedulerTimeout).description) ==
        "the scheduler saw no forward progress within its timeout; the sub_class= line below carries the "
        "device-classified reason and locators");
  CHECK(std::string(error_info(ErrorCode::None).name) == "none");
}

// The host's report of a runtime fatal, in its order: resolve_arena_sizing's
// "Ring buffer sizes:" (tensormap_and_ringbuffer/host/runtime_maker.cpp), the
// stream sync's failure with ACL_LOG_ERROR_DETAIL
// (DeviceRunnerBase::sync_stream_pair; acl_error_log.h, acl_error_names.h),
// then validate_runtime_impl's LOG_RUNTIME_FAILURE
// (src/common/runtime_status/error_log.h). Upstream system test:
// tests/st/runtime_fatal_codes (marker, "error detail:", name, "error hint:").
TEST_CASE("host lines of a runtime fatal, exactly and in order", "[conformance]") {
  cli::RunResult r = run("traces/fatal/heap_ring_deadlock.json", "host_lines");
  REQUIRE(r.status == 1);
  const std::vector<std::string> expect = {
      "Ring buffer sizes: task_window=[16384, 16384, 16384, 16384] heap=[1024, 1024, 1024, 1024] "
      "dep_pool=[16384, 16384, 16384, 16384]",
      "aclrtSynchronizeStreamWithTimeout (AICPU) failed: 507018",
      kAclAicpuDetail,
      kAclAicpuHint,
      "PTO2 runtime failed: orch_error_code=2 sched_error_code=0 runtime_status=-2",
      "error detail: orch_error_code=2 HEAP_RING_DEADLOCK - the task allocator could not reserve the heap bytes "
      "required for another task",
      "error hint: raise ring_heap (PTO2_RING_HEAP) or shrink per-task args / intermediate tensors; the 'Ring buffer "
      "sizes:' line above reports the configured capacities. See docs/troubleshooting/device-error-codes.md",
  };
  std::vector<std::string> got = cli::lines_of(r.err);
  got.resize(std::min(got.size(), expect.size()));
  CHECK(got == expect);
  CHECK(r.summary["error"]["host_log"] == json(expect));
}

// PTO2TaskAllocator::report_deadlock (runtime/pto_ring_buffer.h): the banner
// the allocator logs when its 500 ms backstop fires, with the ring's state.
TEST_CASE("the task allocator's heap-exhausted banner", "[conformance]") {
  cli::RunResult r = run("traces/fatal/heap_ring_deadlock.json", "heap_banner");
  const std::vector<std::string> expect = {
      "========================================",
      "FATAL: Task Allocator Deadlock - Heap Exhausted! ring=0",
      "========================================",
      "No reclaim progress for ~500 ms (25000000 cycles wall clock).",
      "  Task ring 0: current=0, last_alive=0, active=0/16384 (0.0%)",
      "  Heap ring 0: top=0, tail=0, size=1024, used=0, available=1024",
      "  Requested:  32768 bytes",
      "  Head task 0: state=0, consumers=0/0, scope_released=0",
      "Solution:",
      "  Increase heap (current: 1024); env PTO2_RING_HEAP=<bytes> (e.g. 2048)",
      "  If one increase completes, it was under-provisioned; otherwise debug the stuck head consumer.",
      "========================================",
  };
  CHECK(section(r.err, expect[0], expect.size()) == expect);
  CHECK(r.summary["error"]["device_log"] == json(expect));
  CHECK(r.summary["error"]["message"] == "FATAL: Task Allocator Deadlock - Heap Exhausted! ring=0");
  // The device's lines come before npusim's own, which keep their heading.
  CHECK(r.err.find("device log (AICPU)") < r.err.find("npusim diagnosis:\n"));
}

// check_scope_can_accept_task (runtime/pto_orchestrator.cpp). The root
// scope is scope_stack_top 0, so the first user scope prints scope_depth 2.
TEST_CASE("the scope-deadlock banner", "[conformance]") {
  cli::RunResult r = run("traces/fatal/scope_deadlock.json", "scope_banner");
  const std::vector<std::string> expect = {
      "========================================",
      "FATAL: Scope Deadlock Detected! (ring 1)",
      "========================================",
      "Tasks in current scope (3) >= task_window_size (4).",
      "  scope_depth:        2",
      "  ring_id:            1",
      "  scope_task_count:   3",
      "  active_tasks:       3 / 4",
      "Root Cause:",
      "  Tasks within a scope hold a fanout_count reference that is only",
      "  released at scope_end. When scope task count >= window_size,",
      "  no slots can be reclaimed -> deadlock.",
      "Solution:",
      "  1. Reduce tasks per scope (use batching/unroll)",
      "  2. Increase task window (current: 4)",
      "     Compile-time: PTO2_TASK_WINDOW_SIZE in pto_runtime2_types.h",
      "     Runtime env:  PTO2_RING_TASK_WINDOW=<power-of-2>",
      "  3. Split work across multiple scopes",
      "========================================",
  };
  CHECK(section(r.err, expect[0], expect.size()) == expect);
}

// wait_for_tensor_ready (runtime/pto_runtime2.cpp) reports code 8 through
// report_fatal (orch_report_fatal_v: "FATAL(code=%d): %s") with the timeout
// in counter cycles (PTO2_TENSOR_DATA_TIMEOUT_MS x 50 MHz).
TEST_CASE("code 8's device line", "[conformance]") {
  cli::RunResult r = run("traces/fatal/tensor_wait_timeout.json", "code8");
  CHECK(r.summary["error"]["device_log"] ==
        json::array({"FATAL(code=8): Timeout (750000000 cycles): producer (ring=0, local=0) not completed"}));
  CHECK(has(r.err, "\nFATAL(code=8): Timeout (750000000 cycles): producer (ring=0, local=0) not completed\n"));
}

// validate_runtime_impl's sub-class line (runtime_maker.cpp) with the locators
// classify_stall_reason records (scheduler/scheduler_cold_path.cpp): the
// first running task in ring order and its lowest core. 16 AIV blocks stop
// at a HARD syncall that waits for all 48 AIV cores; the first AIV core is 24.
TEST_CASE("the scheduler-timeout sub-class line names the stuck task and core", "[conformance]") {
  cli::RunResult r = run("traces/barriers/hard_partial_16.json", "subclass");
  REQUIRE(r.status == 1);
  const std::string line =
      "PTO2 scheduler timeout sub_class=S1:running-stalled (detail=1) completed=0/1 running=1 ready=0 waiting=0 "
      "orch_done=1 stuck_task_id=0 stuck_core=24";
  CHECK(has(r.err, "error hint: read the sub_class= line below first, then follow the S1-S5 table in the doc; raise "
                   "PTO2_SCHEDULER_TIMEOUT_MS to tell a true deadlock apart from a merely slow kernel. See "
                   "docs/troubleshooting/device-error-codes.md\n" + line + "\n"));
  CHECK(r.summary["error"]["sub_class"] == "S1:running-stalled");
}

// MemoryAllocator::alloc (a2a3/platform/onboard/host/memory_allocator.cpp):
// "rtMalloc failed: %d (size=%zu)" and ACL_LOG_ERROR_DETAIL; the size is the
// region setup_static_arena commits first and cannot fit: the four 16 GiB
// heaps plus DeviceArena's 1023 bytes of base-alignment slack
// (DeviceArena::commit, src/common/utils/device_arena.h). Then
// ensure_static_arenas' "Failed to setup pooled static arena".
TEST_CASE("rtMalloc 207001: the failing allocation's size and the ACL annotation", "[conformance]") {
  cli::RunResult r = run("traces/chain.json --ring-heap 17179869184", "rtmalloc");
  REQUIRE(r.status == 1);
  const std::vector<std::string> expect = {
      "Ring buffer sizes: task_window=[16384, 16384, 16384, 16384] heap=[17179869184, 17179869184, 17179869184, "
      "17179869184] dep_pool=[16384, 16384, 16384, 16384]",
      "rtMalloc failed: 207001 (size=68719477759)",
      "ACL error detail: 207001 ACL_ERROR_RT_MEMORY_ALLOCATION - device memory allocation failed (out of memory)",
      "ACL error hint: reduce the workload's device memory footprint, or check whether another process is holding "
      "memory on this device. See docs/troubleshooting/device-error-codes.md",
      "Failed to setup pooled static arena",
  };
  std::vector<std::string> got = cli::lines_of(r.err);
  got.resize(std::min(got.size(), expect.size()));
  CHECK(got == expect);
  CHECK(r.summary["error"]["host_code"] == 207001);
  CHECK(r.summary["error"]["message"] == "rtMalloc failed: 207001 (size=68719477759)");
}

// submit_dummy_task rejecting an Arg that carries the builder's error
// (pto_orchestrator.cpp; "Too many tensor args (max N)" from pto_types.h):
// its banner, then orch_mark_fatal (code 5, without report_fatal). The trace
// format caps arguments at 32, the runtime's CORE_MAX_TENSOR_ARGS, so the
// test lowers the platform's cap to 4. Upstream system test:
// runtime_fatal_codes invalid_args (an Arg error on a dummy task; the host
// log carries orch_error_code=5, "error detail:" naming INVALID_ARGS and
// "error hint:").
TEST_CASE("INVALID_ARGS from an Arg error on a dummy task: banner and host lines", "[conformance]") {
  json platform = cli::load(fs::path(NPUSIM_SOURCE_DIR) / "platforms/tiny.json");
  platform["name"] = "tiny_4_args";
  platform["limits"]["max_tensor_args"]["value"] = 4;
  const fs::path file = cli::scratch("conf_outputs_platform") / "tiny_4_args.json";
  fs::create_directories(file.parent_path());
  std::ofstream(file) << platform.dump(2);
  cli::RunResult r = run(kConf + "outputs_invalid_arg_dummy.json --platform '" + file.string() + "'", "invalid_arg");
  REQUIRE(r.status == 1);
  CHECK(has(r.err, "PTO2 runtime failed: orch_error_code=5 sched_error_code=0 runtime_status=-5\n"
                   "error detail: orch_error_code=5 INVALID_ARGS - an orchestration API rejected its arguments (bad "
                   "alloc_tensors info, illegal nested scope, unknown task id in set_dependencies, or an CoreTaskArgs "
                   "carrying an error flag)\nerror hint: an orchestration bug, not a capacity problem"));
  const std::vector<std::string> expect = {
      "========================================",
      "FATAL: Invalid Arg in submit_dummy_task!",
      "========================================",
      "Error: Too many tensor args (max 4)",
      "  tensor_count: 4, scalar_count: 0",
      "========================================",
  };
  CHECK(r.summary["error"]["device_log"] == json(expect));
}

// wait_for_tensor_ready (runtime/pto_runtime2.cpp), wait_one_consumers:
// set_tensor_data (wait_for_consumers) waits, per producer, until the
// producer's consumers are done; its report_fatal line names the producer
// whose consumers are not done. The producer FAST completes, its consumer
// HANG never does.
TEST_CASE("code 8's device line when set_tensor_data waits on consumers", "[conformance]") {
  cli::RunResult r = run(kConf + "outputs_set_waits_consumers.json", "code8_consumers");
  REQUIRE(r.status == 1);
  CHECK(r.summary["error"]["orch_error_code"] == 8);
  CHECK(r.summary["error"]["device_log"] ==
        json::array({"FATAL(code=8): Timeout (750000000 cycles): consumers of producer (ring=0, local=0) not done"}));
  CHECK(r.summary["error"]["message"] ==
        "FATAL(code=8): Timeout (750000000 cycles): consumers of producer (ring=0, local=0) not done");
}

// PTO2FaninPool::ensure_space (runtime/pto_ring_buffer.cpp): the backstop's
// banner. append_fanin_or_fail (pto_orchestrator.cpp) takes spill entries one
// edge at a time (ensure_space(ring, 1), then alloc), so when the consumer of
// 128 producers blocks, its first 4 spill edges fill the 4-entry pool (top 5,
// tail 1, high water 4) and it waits for 1 more. 128 producers and the
// consumer's own slot: current_task 129. Upstream: runtime_fatal_codes
// dep_pool_overflow_orch.cpp.
TEST_CASE("the fanin spill pool's banner shows the pool as the device fills it", "[conformance]") {
  cli::RunResult r = run("traces/fatal/dep_pool_overflow.json", "spill_banner");
  REQUIRE(r.status == 1);
  const std::vector<std::string> expect = {
      "========================================",
      "FATAL: Fanin Spill Pool Deadlock Detected!",
      "========================================",
      "Fanin spill pool cannot reclaim space after ~500 ms (no progress).",
      "  - Pool used:     4 / 4 (100.0%)",
      "  - Pool top:      5 (linear)",
      "  - Pool tail:     1 (linear)",
      "  - High water:    4",
      "  - Needed:        1 entries",
      "  - last_task_alive: 0 (stuck here)",
      "  - current_task:    129",
      "  - In-flight tasks: 129",
      "Diagnosis:",
      "  last_task_alive is not advancing, so fanin spill pool tail",
      "  cannot reclaim. Check TaskRing diagnostics for root cause.",
      "Solution:",
      "  Increase fanin spill pool capacity (current: 4, recommended: 8)",
      "  Compile-time: PTO2_DEP_LIST_POOL_SIZE in pto_runtime2_types.h",
      "  Runtime env:  PTO2_RING_DEP_POOL=8",
      "========================================",
  };
  CHECK(r.summary["error"]["device_log"] == json(expect));
}

// PTO2DepListPool::report_deadlock (runtime/pto_ring_buffer.cpp), from
// ensure_space's structural test: orch_wire_live_fanin_task reserves one
// entry per live WAIT producer at once (ensure_space(wfanin)), so 5 running
// producers need 5 entries of a 4-entry pool that is still empty; the head
// task (the root scope's oldest) is pinned by its open scope. The
// recommendation is high_water x 2, which is 0 here, as upstream prints it.
TEST_CASE("the dep pool's banner", "[conformance]") {
  cli::RunResult r = run(kConf + "outputs_dep_pool.json", "dep_pool_banner");
  REQUIRE(r.status == 1);
  const std::vector<std::string> expect = {
      "========================================",
      "FATAL: Dependency Pool Deadlock Detected!",
      "========================================",
      "Head task 0 is the oldest task owned by an open scope on this ring ->",
      "no open scope can end while the orchestrator is blocked here.",
      "Provable head-of-line deadlock.",
      "  - Pool used:     0 / 4 (0.0%)",
      "  - Pool top:      1 (linear)",
      "  - Pool tail:     1 (linear)",
      "  - High water:    0",
      "  - Needed:        5 entries",
      "  - last_task_alive: 0 (stuck here)",
      "  - current_task:    6",
      "  - In-flight tasks: 6",
      "  Head task 0: state=0, consumers=0/1, scope_released=0",
      "Solution:",
      "  Increase dep pool capacity (current: 4, recommended: 0)",
      "  Compile-time: PTO2_DEP_LIST_POOL_SIZE in pto_runtime2_types.h",
      "  Runtime env:  PTO2_RING_DEP_POOL=0",
      "========================================",
  };
  CHECK(r.summary["error"]["device_log"] == json(expect));
  CHECK(r.summary["error"]["message"] == "FATAL: Dependency Pool Deadlock Detected!");
}

// An assert() in the runtime's AICPU code (PTO2OrchestratorState::begin_scope,
// pto_orchestrator.cpp, "Scope stack overflow") aborts the AICPU process: the
// stream sync fails with 507018 and its ACL lines (DeviceRunnerBase::
// sync_stream_pair), but no code is latched, so runtime_status is 0
// (runtime_status_from_error_codes) and validate_runtime_impl
// (runtime_maker.cpp) prints no LOG_RUNTIME_FAILURE lines.
TEST_CASE("an AICPU assert: the stream's ACL lines and no runtime-failure lines", "[conformance]") {
  cli::RunResult r = run("traces/fatal/scope_overflow.json", "assert");
  REQUIRE(r.status == 1);
  const std::vector<std::string> host = {
      "Ring buffer sizes: task_window=[16384, 16384, 16384, 16384] heap=[268435456, 268435456, 268435456, "
      "268435456] dep_pool=[16384, 16384, 16384, 16384]",
      "aclrtSynchronizeStreamWithTimeout (AICPU) failed: 507018",
      kAclAicpuDetail,
      kAclAicpuHint,
  };
  CHECK(r.summary["error"]["host_log"] == json(host));
  REQUIRE(r.summary["error"]["device_log"].size() == 1);
  const std::string line = r.summary["error"]["device_log"][0];
  CHECK(line.rfind("pto_orchestrator.cpp: PTO2OrchestratorState::begin_scope: Assertion `orch->scope_stack_top < "
                   "static_cast<int32_t>(orch->scope_stack_capacity - 1) && \"Scope stack overflow\"' failed.",
                   0) == 0);
  CHECK(r.summary["error"]["message"] == line);
}

// host_build_graph builds the whole graph on the host before launch
// (host/runtime_maker.cpp run_host_orchestration): a capacity shortage is
// logged there by its detector, then LOG_RUNTIME_FAILURE and the refusal to
// upload, after the bind-time "Ring buffer sizes:" line (no dep_pool in it).
// No stream runs, so no ACL lines.
TEST_CASE("host_build_graph's capacity banners on the host, in order", "[conformance]") {
  const std::string rule(40, '=');
  SECTION("the task window (PTO2TaskAllocator::report_capacity_exhausted, host_build_graph pto_ring_buffer.h)") {
    cli::RunResult r = run("traces/chain.json --runtime host_build_graph --ring-task-window 4", "hbg_window");
    REQUIRE(r.status == 1);
    const std::vector<std::string> expect = {
        "Ring buffer sizes: task_window=[4, 4, 4, 4] heap=[268435456, 268435456, 268435456, 268435456]",
        rule,
        "FATAL: Task Window Exhausted!",
        rule,
        "The whole graph must fit the configured ring; nothing is reclaimed mid-run.",
        "  Task window: used=4/4",
        "  Graph heap:  used=131072/268435456, available=268304384",
        "  Requested:   32768 bytes + 1 task slot",
        "Solution:",
        "  Increase task window (current: 4); env PTO2_RING_TASK_WINDOW=<pow2> (e.g. 8)",
        rule,
        "PTO2 runtime failed: orch_error_code=3 sched_error_code=0 runtime_status=-3",
        "error detail: orch_error_code=3 FLOW_CONTROL_DEADLOCK - the task allocator could not admit another task "
        "because the configured task window had no available slot",
        "error hint: raise ring_task_window (PTO2_RING_TASK_WINDOW) or shrink the graph; in a reclaiming runtime also "
        "check for nested submission or a stalled consumer. See docs/troubleshooting/device-error-codes.md",
        "host-orch: refusing to upload an incomplete graph after 131072 heap bytes",
    };
    CHECK(r.summary["error"]["host_log"] == json(expect));
    CHECK(r.summary["error"]["device_log"] == json::array());
    CHECK(r.summary["error"]["message"] == "FATAL: Task Window Exhausted!");
    CHECK_FALSE(has(r.err, "aclrtSynchronizeStreamWithTimeout"));
  }
  SECTION("the heap (report_capacity_exhausted, heap_blocked)") {
    cli::RunResult r = run("traces/chain.json --runtime host_build_graph --ring-heap 1024", "hbg_heap");
    REQUIRE(r.status == 1);
    const std::vector<std::string> expect = {
        rule,
        "FATAL: Graph Heap Exhausted!",
        rule,
        "The whole graph must fit the configured ring; nothing is reclaimed mid-run.",
        "  Task window: used=0/16384",
        "  Graph heap:  used=0/1024, available=1024",
        "  Requested:   32768 bytes + 1 task slot",
        "Solution:",
        "  Increase heap (current: 1024); env PTO2_RING_HEAP=<pow2> (e.g. 2048)",
        rule,
    };
    CHECK(section(r.err, rule, expect.size()) == expect);
    CHECK(has(r.err, "host-orch: refusing to upload an incomplete graph after 0 heap bytes\n"));
  }
  SECTION("the fanin cap (append_fanin_or_fail, host_build_graph orchestrator_core/pto_orchestrator.cpp)") {
    cli::RunResult r = run(kConf + "outputs_hbg_fanin.json --runtime host_build_graph", "hbg_fanin");
    REQUIRE(r.status == 1);
    const std::vector<std::string> expect = {
        rule,
        "FATAL: Fanin Capacity Exhausted!",
        rule,
        "HBG stores every producer dependency in the consumer task's fanin region.",
        "  Fanin:     used=128/128",
        "  Requested: at least 129 distinct producer dependencies",
        "Solution:",
        "  Reduce the task fanin to at most PTO2_MAX_FANIN=128.",
        "  HBG has no dependency spill pool; PTO2_RING_DEP_POOL does not apply.",
        rule,
        "PTO2 runtime failed: orch_error_code=4 sched_error_code=0 runtime_status=-4",
    };
    CHECK(section(r.err, rule, expect.size()) == expect);
  }
}

// ====================================================== item 10: scope_stats

// The header's fatal_latched is set only by scope_stats_on_fatal, which only
// orch_report_fatal_v calls (pto_orchestrator.cpp; scope_stats_collector_aicpu.cpp).
// The allocator latches HEAP_RING_DEADLOCK without it; REQUIRE_SYNC_START_INVALID
// goes through report_fatal. Upstream system test: dfx/scope_stats.
TEST_CASE("scope_stats: fatal only on the report-fatal path", "[conformance]") {
  fs::path out;
  cli::run("traces/fatal/heap_ring_deadlock.json --quiet --no-suggest", "conf_outputs_ss_heap", out);
  const std::string heap = cli::slurp(out / "scope_stats/scope_stats.jsonl");
  CHECK(json::parse(cli::lines_of(heap)[0])["fatal"] == false);
  cli::run("traces/fatal/require_sync_start_invalid.json --quiet --no-suggest", "conf_outputs_ss_sync", out);
  const std::string sync = cli::slurp(out / "scope_stats/scope_stats.jsonl");
  CHECK(json::parse(cli::lines_of(sync)[0])["fatal"] == true);
}

// tensormap_used is the pool's live-entry count (PTO2TensorMap::current_used)
// at the scope boundary, as the runtime's cleanup leaves it: sync_tensormap
// (pto_tensormap.cpp), called per submit for the submitting task's ring only,
// frees a ring's retired entries once its watermark moved 64 tasks past the
// last cleanup. 65 writers on ring 1 retire; a ring-0 dummy does not free
// their entries; the next ring-1 submit does. Sites: copy_basename
// (scope_stats_collector_aicpu.cpp) keeps the basename after the last '/' or
// '\', the host prints "%.*s:%d" (ScopeStatsCollector::write_jsonl); a site
// without a line is a file name at line 0, like the root's "(unknown):0".
TEST_CASE("scope_stats: tensormap counts after the per-ring cleanup, and sites as the device records them",
          "[conformance]") {
  fs::path out;
  cli::Result r = cli::run(kConf + "outputs_scope_stats.json --quiet", "conf_outputs_ss_tm", out);
  REQUIRE(r.status == 0);
  std::vector<std::string> lines = cli::lines_of(cli::slurp(out / "scope_stats/scope_stats.jsonl"));
  REQUIRE(lines.size() == 7);
  std::vector<std::string> sites;
  std::vector<int> tensormap;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    json rec = json::parse(lines[i]);
    sites.push_back(rec["site"].get<std::string>() + " " + rec["phase"].get<std::string>());
    tensormap.push_back(rec["tensormap"].get<int>());
  }
  CHECK(sites == std::vector<std::string>{"(unknown):0 begin", "writer.cpp:12 begin", "writer.cpp:12 end",
                                          "attention:0 begin", "attention:0 end", "(unknown):0 end"});
  CHECK(tensormap == std::vector<int>{0, 0, 65, 65, 0, 0});
  // The records keep the collector's separators (", " and ": ").
  CHECK(lines[4].rfind("{\"site\": \"attention:0\", \"phase\": \"begin\", \"depth\": 1, \"ring\": 1, ", 0) == 0);
}

// ============================================================ item 12: deps

// dep_gen_replay.cpp (dep_gen_replay_emit_deps_json, annot_pass,
// write_deps_json): compact JSON with the runtime's keys and separators; an
// explicit edge per listed dep; the creator edge only for a producer with no
// edge yet in this task; the tensormap's matches in its lookup order (bucket
// chains are newest first); and the replay's tensormap never retires a task,
// so edges to producers the device had already retired stay in the file.
// Here p1, p2 (rows 0-1 and 1-2 of x) and p0 (creator of a) on ring 1 all
// retire before the consumer on ring 0 is submitted. Upstream system test:
// dfx/dep_gen.
TEST_CASE("deps.json as dep_gen replay writes it", "[conformance]") {
  fs::path out;
  cli::Result r = cli::run(kConf + "outputs_deps.json --quiet", "conf_outputs_deps", out);
  REQUIRE(r.status == 0);
  const std::string x = "3849708865656527476", a = "9611349180437134949";
  const std::string p1 = "4294967296", p2 = "4294967297", p0 = "4294967298";
  const std::string view = "\"dtype\":\"FLOAT32\",\"shape\":[2,8],\"start_offset\":\"";
  const std::string expect =
      "{\"tasks\":["
      "{\"task_id\":\"" + p1 + "\",\"scope\":\"auto\",\"early_dispatch\":false,\"kernel_ids\":[-1,3,-1],\"block_num\":1,"
      "\"args\":[{\"idx\":0,\"type\":\"OUTPUT_EXISTING\",\"tensor_id\":\"" + x + "\"," + view + "0\",\"strides\":[8,1]}]},"
      "{\"task_id\":\"" + p2 + "\",\"scope\":\"auto\",\"early_dispatch\":false,\"kernel_ids\":[-1,3,-1],\"block_num\":1,"
      "\"args\":[{\"idx\":0,\"type\":\"OUTPUT_EXISTING\",\"tensor_id\":\"" + x + "\"," + view + "8\",\"strides\":[8,1]}]},"
      "{\"task_id\":\"" + p0 + "\",\"scope\":\"auto\",\"early_dispatch\":false,\"kernel_ids\":[-1,3,-1],\"block_num\":1,"
      "\"args\":[{\"idx\":0,\"type\":\"OUTPUT\"}]},"
      "{\"task_id\":\"0\",\"scope\":\"auto\",\"early_dispatch\":false,\"kernel_ids\":[-1,4,-1],\"block_num\":1,\"args\":["
      "{\"idx\":0,\"type\":\"INPUT\",\"tensor_id\":\"" + a + "\"," + view + "0\",\"strides\":[8,1]},"
      "{\"idx\":1,\"type\":\"INPUT\",\"tensor_id\":\"" + a + "\",\"dtype\":\"FLOAT32\",\"shape\":[1,8],\"start_offset\":\"8\","
      "\"strides\":[8,1]},"
      "{\"idx\":2,\"type\":\"INPUT\",\"tensor_id\":\"" + x + "\",\"dtype\":\"FLOAT32\",\"shape\":[3,8],\"start_offset\":\"0\","
      "\"strides\":[8,1]}]}],"
      "\"tensors\":["
      "{\"tensor_id\":\"" + x + "\",\"buffer_addr\":\"4294967296\",\"version\":0,\"dtype\":\"FLOAT32\",\"buffer_numel\":\"32\"},"
      "{\"tensor_id\":\"" + a + "\",\"buffer_addr\":\"206158430208\",\"version\":0,\"dtype\":\"FLOAT32\",\"buffer_numel\":\"16\"}],"
      "\"edges\":["
      "{\"pred\":\"" + p1 + "\",\"succ\":\"" + p0 + "\",\"arg\":-1,\"source\":\"explicit\",\"flags\":[\"wait\",\"retain\"]},"
      "{\"pred\":\"" + p2 + "\",\"succ\":\"" + p0 + "\",\"arg\":-1,\"source\":\"explicit\",\"flags\":[\"wait\",\"retain\"]},"
      "{\"pred\":\"" + p1 + "\",\"succ\":\"0\",\"arg\":-1,\"source\":\"explicit\",\"flags\":[\"wait\",\"retain\"]},"
      "{\"pred\":\"" + p0 + "\",\"succ\":\"0\",\"arg\":0,\"source\":\"creator\",\"flags\":[\"wait\",\"retain\"],"
      "\"tensor_id\":\"" + a + "\",\"consumer_dtype\":\"FLOAT32\",\"consumer_shape\":[2,8],\"consumer_start_offset\":\"0\","
      "\"consumer_strides\":[8,1]},"
      "{\"pred\":\"" + p2 + "\",\"succ\":\"0\",\"arg\":2,\"source\":\"tensormap\",\"flags\":[\"wait\"],\"overlap\":\"covered\","
      "\"tensor_id\":\"" + x + "\",\"consumer_dtype\":\"FLOAT32\",\"consumer_shape\":[3,8],\"consumer_start_offset\":\"0\","
      "\"consumer_strides\":[8,1],\"producer_shape\":[2,8],\"producer_start_offset\":\"8\",\"producer_strides\":[8,1]},"
      "{\"pred\":\"" + p1 + "\",\"succ\":\"0\",\"arg\":2,\"source\":\"tensormap\",\"flags\":[\"wait\"],\"overlap\":\"covered\","
      "\"tensor_id\":\"" + x + "\",\"consumer_dtype\":\"FLOAT32\",\"consumer_shape\":[3,8],\"consumer_start_offset\":\"0\","
      "\"consumer_strides\":[8,1],\"producer_shape\":[2,8],\"producer_start_offset\":\"0\",\"producer_strides\":[8,1]}"
      "]}\n";
  CHECK(cli::slurp(out / "deps.json") == expect);
}

// ================================================= item 13: run configuration

// PyPTO validates the ring fields first (runner.py,
// RunConfig._validate_ring_overrides, from __post_init__; seed 003), with
// Python's repr of the value; the runtime's RuntimeEnv::validate
// (src/common/task_interface/call_config.h) then bounds the window at
// INT32_MAX, which PyPTO does not.
TEST_CASE("run configuration: PyPTO's messages, then the runtime's window bound", "[conformance]") {
  auto error_of = [](const std::string& args) {
    cli::Result r = cli::npusim("run traces/chain.json --quiet --out /dev/null/x " + args);
    CHECK(r.status == 2);
    return r.err;
  };
  CHECK(error_of("--ring-task-window 6") ==
        "npusim: error: command line: at --ring-task-window: ring_task_window must be a power of 2 >= 4, got 6\n");
  CHECK(error_of("--ring-dep-pool 3") ==
        "npusim: error: command line: at --ring-dep-pool: ring_dep_pool must be in [4, INT32_MAX], got 3\n");
  CHECK(error_of("--ring-heap 0") ==
        "npusim: error: command line: at --ring-heap: ring_heap must be >= 1024 (bytes per ring), got 0\n");
  CHECK(error_of("--ring-heap 0,0,1000,0") ==
        "npusim: error: command line: at --ring-heap: ring_heap entries must be >= 1024 (bytes per ring) "
        "(or 0 to keep default), got 1000\n");
  CHECK(error_of("--ring-task-window 2147483648") ==
        "npusim: error: command line: at --ring-task-window: RuntimeEnv: ring_task_window must be a power of 2 in "
        "[4, INT32_MAX]\n");
}

// The arena's fanin spill pool has dep_pool entries of
// sizeof(PTO2FaninSpillEntry) = 8 bytes (pto_runtime2_types.h;
// PTO2OrchestratorState::reserve_layout), beside the dep-list pool's 16-byte
// entries (PTO2SchedulerState::reserve_layout). With 2^29 entries per ring
// the four rings need 48 GiB for both pools: the arena fits the 61.3 GiB of
// the device, and the run completes.
TEST_CASE("run configuration: the fanin spill pool at the runtime's entry size in the arena", "[conformance]") {
  cli::RunResult r = run("traces/chain.json --ring-dep-pool 536870912", "spill_arena");
  CHECK(r.status == 0);
  CHECK(r.summary["status"] == "ok");
}

// ==================================================== upstream DFX system tests

// tests/st/a2a3/tensormap_and_ringbuffer/dfx/scope_stats/test_scope_stats.py
// (_validate_scope_stats_artifact) on the vector example: version 6, not
// fatal, nothing dropped, dep_pool_max present, at least 4 records, each
// with every field of docs/dfx/scope-stats.md.
TEST_CASE("dfx/scope_stats: the vector example's scope_stats.jsonl", "[conformance]") {
  fs::path out;
  cli::Result r = cli::run(kConf + "dfx_vector_example.json --quiet", "conf_outputs_dfx_ss", out);
  REQUIRE(r.status == 0);
  std::vector<std::string> lines = cli::lines_of(cli::slurp(out / "scope_stats/scope_stats.jsonl"));
  REQUIRE(lines.size() >= 5);
  json meta = json::parse(lines[0]);
  CHECK(meta["version"] == 6);
  CHECK(meta["fatal"] == false);
  CHECK(meta["dropped"] == 0);
  CHECK(meta.contains("dep_pool_max"));
  const std::vector<std::string> fields = {"site", "phase", "depth", "ring", "task_window_start", "task_window_end",
                                           "heap_start", "heap_end", "dep_pool_start", "dep_pool_end", "tensormap"};
  for (std::size_t i = 1; i < lines.size(); ++i) {
    json rec = json::parse(lines[i]);
    for (const std::string& f : fields) CHECK(rec.contains(f));
  }
  CHECK(meta["total"] == lines.size() - 1);
}

// tests/st/a2a3/tensormap_and_ringbuffer/dfx/dep_gen/test_dep_gen.py
// (_post_validate) on the vector example: t0 on ring 0, t1..t4 on ring 1,
// the six edges t0->t1, t0->t2, t1->t3, t2->t3, t0->t4, t3->t4 and none
// outside the task set; every non-explicit edge names a tensor of tensors[]
// and carries the consumer's slice.
TEST_CASE("dfx/dep_gen: the vector example's deps.json", "[conformance]") {
  fs::path out;
  cli::Result r = cli::run(kConf + "dfx_vector_example.json --quiet", "conf_outputs_dfx_deps", out);
  REQUIRE(r.status == 0);
  json deps = cli::load(out / "deps.json");
  auto id = [](std::uint64_t ring, std::uint64_t local) { return (ring << 32) | local; };
  const std::uint64_t t0 = id(0, 0), t1 = id(1, 0), t2 = id(1, 1), t3 = id(1, 2), t4 = id(1, 3);
  std::set<std::pair<std::uint64_t, std::uint64_t>> edges;
  std::set<std::uint64_t> tensors, tasks;
  for (const auto& t : deps["tensors"]) tensors.insert(std::stoull(t["tensor_id"].get<std::string>()));
  for (const auto& t : deps["tasks"]) tasks.insert(std::stoull(t["task_id"].get<std::string>()));
  for (const auto& e : deps["edges"]) {
    edges.insert({std::stoull(e["pred"].get<std::string>()), std::stoull(e["succ"].get<std::string>())});
    if (e["source"] == "explicit") continue;
    CHECK(tensors.count(std::stoull(e["tensor_id"].get<std::string>())));
    CHECK((e.contains("consumer_shape") && e.contains("consumer_start_offset") && e.contains("consumer_strides")));
  }
  CHECK(edges == std::set<std::pair<std::uint64_t, std::uint64_t>>{
                     {t0, t1}, {t0, t2}, {t1, t3}, {t2, t3}, {t0, t4}, {t3, t4}});
  CHECK(tasks == std::set<std::uint64_t>{t0, t1, t2, t3, t4});
}

// tests/st/a2a3/tensormap_and_ringbuffer/dfx/dep_gen/test_dep_gen_chain.py
// (chain_barrier_orch.cpp) with n = 100: every one of the barrier's explicit
// deps survives (the device record holds 64 inline and chains the rest), and
// the barrier has exactly one outgoing explicit edge, to the consumer.
TEST_CASE("dfx/dep_gen: a barrier with 100 explicit deps keeps them all", "[conformance]") {
  fs::path out;
  cli::Result r = cli::run(kConf + "dfx_dep_gen_chain.json --quiet", "conf_outputs_dfx_chain", out);
  REQUIRE(r.status == 0);
  json deps = cli::load(out / "deps.json");
  std::map<std::string, int> in_explicit, out_explicit;
  for (const auto& e : deps["edges"]) {
    if (e["source"] != "explicit") continue;
    ++in_explicit[e["succ"].get<std::string>()];
    ++out_explicit[e["pred"].get<std::string>()];
  }
  const std::string barrier = "100";  // the 101st task on ring 0
  CHECK(in_explicit[barrier] == 100);
  CHECK(out_explicit[barrier] == 1);
}
