// npusim orchestration SDK: AICPU cache maintenance. The orchestrator's own
// view of GM is not modelled (it never reads device memory directly in
// npusim), so these are no-ops.
#pragma once

#include <stddef.h>

inline void cache_invalidate_range(const void *addr, size_t size) {
    (void)addr;
    (void)size;
}
inline void cache_flush_range(const void *addr, size_t size) {
    (void)addr;
    (void)size;
}
