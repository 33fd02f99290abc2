// npusim orchestration SDK: the runtime's error codes (orch_error_code /
// sched_error_code) and scheduler-timeout sub-classes.
#ifndef NPUSIM_SDK_PTO_RUNTIME_STATUS_H
#define NPUSIM_SDK_PTO_RUNTIME_STATUS_H

#include <stdint.h>

#define PTO2_ERROR_NONE 0
#define PTO2_ERROR_SCOPE_DEADLOCK 1
#define PTO2_ERROR_HEAP_RING_DEADLOCK 2
#define PTO2_ERROR_FLOW_CONTROL_DEADLOCK 3
#define PTO2_ERROR_DEP_POOL_OVERFLOW 4
#define PTO2_ERROR_INVALID_ARGS 5
#define PTO2_ERROR_REQUIRE_SYNC_START_INVALID 7
#define PTO2_ERROR_TENSOR_WAIT_TIMEOUT 8
#define PTO2_ERROR_EXPLICIT_ORCH_FATAL 9
#define PTO2_ERROR_SCOPE_TASKS_OVERFLOW 10
#define PTO2_ERROR_TENSORMAP_OVERFLOW 11

#define PTO2_ERROR_SCHEDULER_TIMEOUT 100
#define PTO2_ERROR_ASYNC_COMPLETION_INVALID 101
#define PTO2_ERROR_ASYNC_WAIT_OVERFLOW 102
#define PTO2_ERROR_ASYNC_REGISTRATION_FAILED 103
#define PTO2_ERROR_READY_QUEUE_OVERFLOW 104  // host_build_graph: a ready-queue push found no free slot

#define PTO2_STALL_DETAIL_NONE 0
#define PTO2_STALL_DETAIL_RUNNING_STALLED 1
#define PTO2_STALL_DETAIL_READY_IDLE 3
#define PTO2_STALL_DETAIL_DEP_DEADLOCK 4
#define PTO2_STALL_DETAIL_ORCH_STARVATION 5
#define PTO2_STALL_DETAIL_UNKNOWN 99

static inline int32_t classify_stall_detail(int32_t cnt_running, int32_t cnt_ready, int32_t cnt_waiting,
                                            int32_t orch_done) {
    if (cnt_running > 0) return PTO2_STALL_DETAIL_RUNNING_STALLED;
    if (cnt_ready > 0) return PTO2_STALL_DETAIL_READY_IDLE;
    if (cnt_waiting > 0) return PTO2_STALL_DETAIL_DEP_DEADLOCK;
    if (!orch_done) return PTO2_STALL_DETAIL_ORCH_STARVATION;
    return PTO2_STALL_DETAIL_UNKNOWN;
}

static inline const char *stall_detail_name(int32_t detail) {
    switch (detail) {
    case PTO2_STALL_DETAIL_RUNNING_STALLED: return "S1:running-stalled";
    case PTO2_STALL_DETAIL_READY_IDLE: return "S3:ready-but-all-idle";
    case PTO2_STALL_DETAIL_DEP_DEADLOCK: return "S4:dependency-deadlock";
    case PTO2_STALL_DETAIL_ORCH_STARVATION: return "S5:orchestrator-starvation";
    case PTO2_STALL_DETAIL_UNKNOWN: return "unknown:accounting/corruption";
    case PTO2_STALL_DETAIL_NONE: return "none";
    default: return "invalid";
    }
}

static inline int32_t runtime_status_from_error_codes(int32_t orch_error_code, int32_t sched_error_code) {
    const int32_t code = orch_error_code != PTO2_ERROR_NONE ? orch_error_code : sched_error_code;
    return code < 0 ? code : -code;
}

#endif
