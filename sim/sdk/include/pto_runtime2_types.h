// npusim orchestration SDK: the runtime's public constants (the defaults of
// the ring sizes, limits, timeouts). The runtime's internal structures (task
// slots, payloads, pools) are npusim's model and are not part of the SDK.
#pragma once

#include <stdint.h>

#include "profiling_config.h"
#include "pto_constants.h"
#include "pto_runtime_status.h"
#include "pto_submit_types.h"
#include "pto_task_id.h"
#include "pto_types.h"

#ifndef SPIN_WAIT_HINT
#define SPIN_WAIT_HINT() ((void)0)
#endif

#define PTO2_TASK_WINDOW_SIZE 16384
#define PTO2_MAX_RING_DEPTH 4
#define PTO2_HEAP_SIZE (256 * 1024 * 1024)
#define PTO2_DEP_LIST_POOL_SIZE 16384
#define PTO2_TENSORMAP_POOL_SIZE (65536)
#define PTO2_TENSORMAP_NUM_BUCKETS 4096
#define PTO2_MAX_SCOPE_DEPTH 64
#define PTO2_SCOPE_TASKS_CAP (PTO2_TASK_WINDOW_SIZE * PTO2_MAX_RING_DEPTH)
#define PTO2_READY_QUEUE_SIZE 65536
#define PTO2_EARLY_DISPATCH_QUEUE_SIZE 256
#define PTO2_FANIN_INLINE_CAP 64
#define PTO2_DEP_DEGREE_DEBUG_THRESHOLD 16
#define PTO2_TENSORMAP_CLEANUP_INTERVAL 64
#define PTO2_DEP_POOL_CLEANUP_INTERVAL 64

constexpr uint64_t PTO2_TENSOR_DATA_TIMEOUT_MS = 15000;

static constexpr uint32_t PTO2_FANOUT_SCOPE_BIT = 0x80000000u;
