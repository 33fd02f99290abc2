// The runtime's error codes, names, descriptions and hints
// (runtime-semantics.md §7), and the host-visible CANN codes.
#pragma once

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
  const char* name;
  const char* description;
  const char* hint;
};

inline const ErrorInfo& error_info(ErrorCode c) {
  static const ErrorInfo table[] = {
      {ErrorCode::None, "NONE", "no error", ""},
      {ErrorCode::ScopeDeadlock, "SCOPE_DEADLOCK",
       "one scope submitted more tasks than the ring's task window; slots only free at scope_end",
       "raise ring_task_window (PTO2_RING_TASK_WINDOW) or split the scope so slots are reclaimed "
       "sooner; enable CallConfig.enable_scope_stats to see which scope peaked"},
      {ErrorCode::HeapRingDeadlock, "HEAP_RING_DEADLOCK",
       "the ring ran out of heap bytes (and slots); no further task can be admitted",
       "raise ring_heap (PTO2_RING_HEAP) or shrink per-task args / intermediate tensors; the "
       "'Ring buffer sizes:' line above reports the configured capacities"},
      {ErrorCode::FlowControlDeadlock, "FLOW_CONTROL_DEADLOCK",
       "task window blocked while heap is free; usually nesting on the same ring",
       "raise ring_task_window (PTO2_RING_TASK_WINDOW) or shrink the graph; in a reclaiming "
       "runtime also check for nested submission or a stalled consumer"},
      {ErrorCode::DepPoolOverflow, "DEP_POOL_OVERFLOW",
       "a task's fanin edges overflowed the ring's dep pool",
       "follow the preceding resource diagnostic: HBG has no spill pool, so reduce fanin to "
       "PTO2_MAX_FANIN or less; for a reclaiming runtime raise PTO2_RING_DEP_POOL or cut fanin"},
      {ErrorCode::InvalidArgs, "INVALID_ARGS", "invalid arguments to an orchestration API call",
       "an orchestration bug, not a capacity problem -- resizing the rings will not help; recheck "
       "the arguments of the orchestration API calls listed above"},
      {ErrorCode::RequireSyncStartInvalid, "REQUIRE_SYNC_START_INVALID",
       "sync-start block_num exceeds the physical core limit",
       "lower the task's block_num to at most the physical core count of the target core type "
       "(total AIV count, or total cluster count for MIX/AIC), or drop the sync-start request"},
      {ErrorCode::TensorWaitTimeout, "TENSOR_WAIT_TIMEOUT",
       "get_tensor_data / set_tensor_data waited longer than the timeout",
       "find the producing kernel and check it for a hang (see SCHEDULER_TIMEOUT sub_class S1); "
       "verify the consumer declares the dependency and exits; raise PTO2_TENSOR_DATA_TIMEOUT_MS "
       "to tell a slow kernel apart from a stuck one"},
      {ErrorCode::ExplicitOrchFatal, "EXPLICIT_ORCH_FATAL", "rt_report_fatal() was called",
       "self-inflicted -- follow the message passed to the rt_report_fatal() call site"},
      {ErrorCode::ScopeTasksOverflow, "SCOPE_TASKS_OVERFLOW", "scope record buffer full",
       "not expected in normal operation -- keep the device log and report it to the runtime "
       "maintainers; tuning the ring capacities will not help"},
      {ErrorCode::TensormapOverflow, "TENSORMAP_OVERFLOW", "the global tensormap wedged",
       "follow the preceding resource diagnostic: in HBG increase PTO2_TENSORMAP_POOL_SIZE or "
       "shrink the graph; in a reclaiming runtime also inspect entry-reclaim progress"},
      {ErrorCode::AicpuAssert, "AICPU_ASSERT", "an assertion in the runtime's AICPU code failed (abort)",
       "an orchestration bug: the runtime asserts on it instead of reporting an error code; the "
       "assertion text above names the violated limit"},
      {ErrorCode::SchedulerTimeout, "SCHEDULER_TIMEOUT", "a scheduler thread made no progress",
       "read the sub_class= line below first, then follow the S1-S5 table in the doc; raise "
       "PTO2_SCHEDULER_TIMEOUT_MS to tell a true deadlock apart from a merely slow kernel"},
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

inline bool is_sched_error(ErrorCode c) { return static_cast<int>(c) >= 100 && static_cast<int>(c) < 200; }

// Host-visible CANN codes.
constexpr int kAclAicpuException = 507018;  // ACL_ERROR_RT_AICPU_EXCEPTION
constexpr int kAclMemoryAllocation = 207001;  // ACL_ERROR_RT_MEMORY_ALLOCATION

}  // namespace npusim
