// The runtime's error codes with their names, descriptions and hints, and the
// host-visible CANN codes with theirs: the texts the host prints on a failure,
// byte for byte.
//
// Runtime codes: src/a2a3/runtime/tensormap_and_ringbuffer/common/pto_runtime_status.h
// (values, stall_detail_name) and src/common/runtime_status/error_names.h
// (error_name, error_desc, error_hint). CANN codes:
// src/common/platform/include/host/acl_error_names.h (acl_error_name,
// acl_error_desc, acl_error_hint), printed by ACL_LOG_ERROR_DETAIL
// (src/common/platform/include/host/acl_error_log.h).
#pragma once

#include <cstdint>
#include <string>

namespace npusim {

enum class ErrorCode : int {
  None = 0,
  ScopeDeadlock = 1,
  HeapRingDeadlock = 2,
  FlowControlDeadlock = 3,
  DepPoolOverflow = 4,
  InvalidArgs = 5,
  RequireSyncStartInvalid = 7,
  TensorWaitTimeout = 8,
  ExplicitOrchFatal = 9,
  ScopeTasksOverflow = 10,
  TensormapOverflow = 11,
  SchedulerTimeout = 100,
  AsyncCompletionInvalid = 101,
  AsyncWaitOverflow = 102,
  AsyncRegistrationFailed = 103,
  ReadyQueueOverflow = 104,  // host_build_graph only
  // npusim's own (the device has no code for it: the AICPU process dies and
  // the host sees an AICPU exception): the orchestration program of a scene
  // crashed, aborted or let an exception escape (docs/scenes.md).
  OrchestrationCrash = 200,
  // Not a runtime code: an assert() in the runtime's AICPU code failed and the
  // AICPU process aborted, so no error code is latched (the host sees the
  // AICPU exception). npusim's own marker for that outcome.
  AicpuAssert = -1,
};

struct ErrorInfo {
  ErrorCode code;
  const char* name;         // error_name()
  const char* description;  // error_desc()
  const char* hint;         // error_hint()
};

inline const ErrorInfo& error_info(ErrorCode c) {
  static const ErrorInfo table[] = {
      {ErrorCode::None, "none", "no error", ""},
      {ErrorCode::ScopeDeadlock, "SCOPE_DEADLOCK",
       "tasks submitted in one scope reached the ring task-window cap; their fanout references are only "
       "released at scope_end, so no slot can be reclaimed",
       "raise ring_task_window (PTO2_RING_TASK_WINDOW) or split the scope so slots are reclaimed sooner; "
       "enable CallConfig.enable_scope_stats to see which scope peaked"},
      {ErrorCode::HeapRingDeadlock, "HEAP_RING_DEADLOCK",
       "the task allocator could not reserve the heap bytes required for another task",
       "raise ring_heap (PTO2_RING_HEAP) or shrink per-task args / intermediate tensors; the "
       "'Ring buffer sizes:' line above reports the configured capacities"},
      {ErrorCode::FlowControlDeadlock, "FLOW_CONTROL_DEADLOCK",
       "the task allocator could not admit another task because the configured task window had no "
       "available slot",
       "raise ring_task_window (PTO2_RING_TASK_WINDOW) or shrink the graph; in a reclaiming runtime also "
       "check for nested submission or a stalled consumer"},
      {ErrorCode::DepPoolOverflow, "DEP_POOL_OVERFLOW",
       "a task's producer dependencies exceeded the runtime's available fanin representation capacity",
       "follow the preceding resource diagnostic: HBG has no spill pool, so reduce fanin to PTO2_MAX_FANIN "
       "or less; for a reclaiming runtime raise PTO2_RING_DEP_POOL or cut fanin"},
      {ErrorCode::InvalidArgs, "INVALID_ARGS",
       "an orchestration API rejected its arguments (bad alloc_tensors info, illegal nested scope, unknown "
       "task id in set_dependencies, or an CoreTaskArgs carrying an error flag)",
       "an orchestration bug, not a capacity problem -- resizing the rings will not help; recheck the "
       "arguments of the orchestration API calls listed above"},
      {ErrorCode::RequireSyncStartInvalid, "REQUIRE_SYNC_START_INVALID",
       "require_sync_start() asked for more blocks than the target core type physically has, which can "
       "never be satisfied",
       "lower the task's block_num to at most the physical core count of the target core type (total AIV "
       "count, or total cluster count for MIX/AIC), or drop the sync-start request"},
      {ErrorCode::TensorWaitTimeout, "TENSOR_WAIT_TIMEOUT",
       "waiting for tensor data timed out: the producing task never completed, or a consumer never "
       "released its fanout reference",
       "find the producing kernel and check it for a hang (see SCHEDULER_TIMEOUT sub_class S1); verify the "
       "consumer declares the dependency and exits; raise PTO2_TENSOR_DATA_TIMEOUT_MS to tell a slow kernel "
       "apart from a stuck one"},
      {ErrorCode::ExplicitOrchFatal, "EXPLICIT_ORCH_FATAL",
       "the orchestration code called rt_report_fatal() itself; every later orchestration API call "
       "short-circuits to a no-op",
       "self-inflicted -- follow the message passed to the rt_report_fatal() call site"},
      {ErrorCode::ScopeTasksOverflow, "SCOPE_TASKS_OVERFLOW",
       "the scope task-record buffer saturated (runtime-internal; the rings normally fill first and latch "
       "SCOPE_DEADLOCK or FLOW_CONTROL_DEADLOCK)",
       "not expected in normal operation -- keep the device log and report it to the runtime maintainers; "
       "tuning the ring capacities will not help"},
      {ErrorCode::TensormapOverflow, "TENSORMAP_OVERFLOW",
       "the tensormap could not reserve the entries required to register another task's outputs",
       "follow the preceding resource diagnostic: in HBG increase PTO2_TENSORMAP_POOL_SIZE or shrink the "
       "graph; in a reclaiming runtime also inspect entry-reclaim progress"},
      {ErrorCode::SchedulerTimeout, "SCHEDULER_TIMEOUT",
       "the scheduler saw no forward progress within its timeout; the sub_class= line below carries the "
       "device-classified reason and locators",
       "read the sub_class= line below first, then follow the S1-S5 table in the doc; raise "
       "PTO2_SCHEDULER_TIMEOUT_MS to tell a true deadlock apart from a merely slow kernel"},
      {ErrorCode::AsyncCompletionInvalid, "ASYNC_COMPLETION_INVALID",
       "an async completion condition is malformed (bad completion_type, null counter address, or an "
       "invalid SDMA event record)",
       "recheck the register_completion_condition() arguments in the kernel, in particular the completion "
       "type and the counter address"},
      {ErrorCode::AsyncWaitOverflow, "ASYNC_WAIT_OVERFLOW",
       "the async wait list filled up: in-flight async completions exceeded the per-task cap",
       "cut the number of in-flight async completions per task, and confirm the consumer side actually "
       "polls and retires them"},
      {ErrorCode::AsyncRegistrationFailed, "ASYNC_REGISTRATION_FAILED",
       "the scheduler received an async completion message of an illegal kind (runtime-internal; "
       "ASYNC_WAIT_OVERFLOW normally intercepts this first)",
       "not expected in normal operation -- keep the device log and report it to the runtime maintainers; "
       "tuning the ring capacities will not help"},
      {ErrorCode::ReadyQueueOverflow, "READY_QUEUE_OVERFLOW",
       "a push into a ready queue found no free slot (full, or window > capacity)",
       "more tasks were ready at once than a host_build_graph ready queue holds (PTO2_READY_QUEUE_SIZE per "
       "shape): release fewer tasks at a time (fewer independent tasks behind one producer or at the start), "
       "or raise the queue size"},
      {ErrorCode::AicpuAssert, "AICPU_ASSERT", "an assertion in the runtime's AICPU code failed (abort)",
       "an orchestration bug: the runtime asserts on it instead of reporting an error code; the "
       "assertion text above names the violated limit"},
      {ErrorCode::OrchestrationCrash, "ORCHESTRATION_CRASH",
       "the orchestration program crashed (a signal, an abort or an uncaught exception in its own code)",
       "the bug is in the orchestration source, not in the runtime: see the message above and the program's "
       "own output on standard error"},
  };
  for (const auto& e : table)
    if (e.code == c) return e;
  // A code an orchestration passed to rt_report_fatal that the runtime does not define.
  static const ErrorInfo unknown{ErrorCode::None, "UNKNOWN_ERROR", "an error code the runtime does not define",
                                 "follow the message passed to the rt_report_fatal() call site"};
  return c == ErrorCode::None ? table[0] : unknown;
}


// The SCHEDULER_TIMEOUT sub-class (PTO2_STALL_DETAIL_*): its number and the
// label stall_detail_name() prints, chosen with classify_stall_detail()'s
// priority running > ready > waiting > orchestrator not done > unknown.
struct StallDetail {
  int detail;
  const char* name;
};
inline StallDetail classify_stall_detail(std::uint64_t running, std::uint64_t ready, std::uint64_t waiting,
                                         bool orch_done) {
  if (running > 0) return {1, "S1:running-stalled"};
  if (ready > 0) return {3, "S3:ready-but-all-idle"};
  if (waiting > 0) return {4, "S4:dependency-deadlock"};
  if (!orch_done) return {5, "S5:orchestrator-starvation"};
  return {99, "unknown:accounting/corruption"};
}

// Whether the runtime latches `c` through the orchestrator's report_fatal
// (orch_report_fatal_v, pto_orchestrator.cpp), which prints
// "FATAL(code=N): ..." and marks scope-stats fatal (scope_stats_on_fatal):
// REQUIRE_SYNC_START_INVALID, TENSOR_WAIT_TIMEOUT, EXPLICIT_ORCH_FATAL,
// SCOPE_TASKS_OVERFLOW, and INVALID_ARGS except an Arg that carries an error
// into submit_task / submit_dummy_task (their banner, then orch_mark_fatal;
// npusim's message for it starts "submit has "); and any code an orchestration
// passes to rt_report_fatal (npusim's message is already the device's line,
// "FATAL(code=N)..."). The allocator, the pools, the scope check and the
// scheduler latch their codes without it.
inline bool via_report_fatal(ErrorCode c, const std::string& message) {
  if (message.rfind("FATAL(code=", 0) == 0) return true;
  switch (c) {
    case ErrorCode::RequireSyncStartInvalid:
    case ErrorCode::TensorWaitTimeout:
    case ErrorCode::ExplicitOrchFatal:
    case ErrorCode::ScopeTasksOverflow:
      return true;
    case ErrorCode::InvalidArgs:
      return message.rfind("submit has ", 0) != 0;
    default:
      return false;
  }
}

// Host-visible CANN codes.
constexpr int kAclAicpuException = 507018;    // ACL_ERROR_RT_AICPU_EXCEPTION
constexpr int kAclMemoryAllocation = 207001;  // ACL_ERROR_RT_MEMORY_ALLOCATION

struct AclErrorInfo {
  int code;
  const char* name;         // acl_error_name()
  const char* description;  // acl_error_desc()
  const char* hint;         // acl_error_hint()
};

inline const AclErrorInfo* acl_error_info(int rc) {
  static const AclErrorInfo table[] = {
      {kAclMemoryAllocation, "ACL_ERROR_RT_MEMORY_ALLOCATION", "device memory allocation failed (out of memory)",
       "reduce the workload's device memory footprint, or check whether another process is holding memory on "
       "this device"},
      {kAclAicpuException, "ACL_ERROR_RT_AICPU_EXCEPTION",
       "an AICPU task raised an exception; several distinct on-device mechanisms all surface as this one "
       "generic code",
       "do NOT read this as 'deadlock' or 'OOM' on its own -- it is a generic host-side code. Grep the host "
       "log for 'orch_error_code=' / 'sched_error_code=' / 'sub_class=' to get the device-classified reason, "
       "and read the device log for the detector that fired"},
  };
  for (const auto& e : table)
    if (e.code == rc) return &e;
  return nullptr;
}

}  // namespace npusim
