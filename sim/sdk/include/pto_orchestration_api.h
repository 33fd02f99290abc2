// npusim orchestration SDK: the orchestration API of the a2a3
// tensormap_and_ringbuffer runtime (pto_orchestration_api.h), for programs
// npusim runs as the simulated orchestrator thread (docs/scenes.md).
//
// As in the runtime, every call goes through the ops table of the runtime
// the framework bound (framework_current_runtime()); in npusim that runtime
// is the orchestration runner, which streams each call to the simulator as
// the runtime operation it is. Names, signatures and the calls' rules are
// the runtime's; the code is npusim's.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "common.h"
#include "pto_runtime2_types.h"
#include "pto_submit_types.h"
#include "pto_types.h"
#include "task_args.h"
#include "tensor.h"

typedef struct PTO2Runtime PTO2Runtime;

typedef struct PTO2RuntimeOps {
    TaskOutputTensors (*submit_task)(PTO2Runtime *rt, const MixedKernels &mixed_kernels, const CoreTaskArgs &args);
    void (*scope_begin)(PTO2Runtime *rt);
    void (*scope_end)(PTO2Runtime *rt);
    void (*orchestration_done)(PTO2Runtime *rt);
    bool (*is_fatal)(PTO2Runtime *rt);
    void (*report_fatal)(PTO2Runtime *rt, int32_t error_code, const char *func, const char *fmt, ...);

    void (*log_error)(const char *func, const char *fmt, ...);
    void (*log_warn)(const char *func, const char *fmt, ...);
    void (*log_timing)(const char *func, const char *fmt, ...);
    void (*log_info)(const char *func, const char *fmt, ...);
    void (*log_debug)(const char *func, const char *fmt, ...);

    uint64_t (*get_tensor_data)(PTO2Runtime *rt, const ChipTensor &tensor, uint32_t ndims, const uint32_t indices[]);
    void (*set_tensor_data)(PTO2Runtime *rt, const ChipTensor &tensor, uint32_t ndims, const uint32_t indices[],
                            uint64_t value);
    TaskOutputTensors (*alloc_tensors)(PTO2Runtime *rt, const CoreTaskArgs &args);
    TaskOutputTensors (*submit_dummy_task)(PTO2Runtime *rt, const CoreTaskArgs &args);

    int32_t (*available_cluster_count)(PTO2Runtime *rt);
    int32_t (*available_aiv_count)(PTO2Runtime *rt);

    void (*scope_set_site)(const char *file, int line);
} PTO2RuntimeOps;

// What a program sees of the runtime: the ops table and the mode the next
// scope_begin takes.
struct PTO2Runtime {
    const PTO2RuntimeOps *ops;
    PTO2ScopeMode pending_scope_mode;
};

static inline PTO2Runtime *current_runtime() { return framework_current_runtime(); }

static inline TaskOutputTensors alloc_tensors(const CoreTaskArgs &args) {
    PTO2Runtime *rt = current_runtime();
    if (rt->ops->is_fatal(rt)) return TaskOutputTensors{};
    return rt->ops->alloc_tensors(rt, args);
}

static inline TaskOutputTensors alloc_tensors(const TensorCreateInfo create_infos[], uint32_t count) {
    PTO2Runtime *rt = current_runtime();
    if (rt->ops->is_fatal(rt)) return TaskOutputTensors{};
    CoreTaskArgs args;
    for (uint32_t i = 0; i < count; i++) args.add_output(create_infos[i]);
    if (args.has_error) {
        rt->ops->report_fatal(rt, PTO2_ERROR_INVALID_ARGS, __FUNCTION__, "%s",
                              args.error_msg ? args.error_msg : "alloc_tensors failed to construct output-only Arg");
        return TaskOutputTensors{};
    }
    return alloc_tensors(args);
}

template <typename... CIs>
static inline TaskOutputTensors alloc_tensors(const CIs &...cis) {
    static_assert(sizeof...(cis) > 0, "alloc_tensors requires at least one TensorCreateInfo");
    static_assert((std::is_same_v<std::decay_t<CIs>, TensorCreateInfo> && ...),
                  "alloc_tensors only accepts TensorCreateInfo arguments");
    PTO2Runtime *rt = current_runtime();
    if (rt->ops->is_fatal(rt)) return TaskOutputTensors{};
    CoreTaskArgs args;
    (args.add_output(cis), ...);
    if (args.has_error) {
        rt->ops->report_fatal(rt, PTO2_ERROR_INVALID_ARGS, __FUNCTION__, "%s",
                              args.error_msg ? args.error_msg : "alloc_tensors failed to construct output-only Arg");
        return TaskOutputTensors{};
    }
    return alloc_tensors(args);
}

static inline TaskOutputTensors rt_submit_task(const MixedKernels &mixed_kernels, const CoreTaskArgs &args) {
    PTO2Runtime *rt = current_runtime();
    if (rt->ops->is_fatal(rt)) return TaskOutputTensors{};
    return rt->ops->submit_task(rt, mixed_kernels, args);
}

static inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs &args) {
    MixedKernels mk;
    mk.aic_kernel_id = kernel_id;
    return rt_submit_task(mk, args);
}

static inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs &args) {
    MixedKernels mk;
    mk.aiv0_kernel_id = kernel_id;
    return rt_submit_task(mk, args);
}

// A task with no kernel: it takes part in dependencies and may own outputs.
static inline TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs &args) {
    PTO2Runtime *rt = current_runtime();
    if (rt->ops->is_fatal(rt)) return TaskOutputTensors{};
    return rt->ops->submit_dummy_task(rt, args);
}

static inline void rt_scope_begin(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
    PTO2Runtime *rt = current_runtime();
    if (rt->ops->is_fatal(rt)) return;
    rt->pending_scope_mode = mode;
    rt->ops->scope_begin(rt);
}

static inline void rt_scope_end() {
    PTO2Runtime *rt = current_runtime();
    if (rt->ops->is_fatal(rt)) return;
    rt->ops->scope_end(rt);
}

static inline void rt_orchestration_done() {
    PTO2Runtime *rt = current_runtime();
    rt->ops->orchestration_done(rt);
}

static inline int32_t rt_available_cluster_count() {
    PTO2Runtime *rt = current_runtime();
    return rt->ops->available_cluster_count(rt);
}

static inline int32_t rt_available_aiv_count() {
    PTO2Runtime *rt = current_runtime();
    return rt->ops->available_aiv_count(rt);
}

static inline bool rt_is_fatal() {
    PTO2Runtime *rt = current_runtime();
    return rt->ops->is_fatal(rt);
}

#define rt_report_fatal(code, fmt, ...)                                          \
    do {                                                                         \
        PTO2Runtime *_rt = current_runtime();                                    \
        _rt->ops->report_fatal(_rt, (code), __FUNCTION__, (fmt), ##__VA_ARGS__); \
    } while (0)

#define LOG_ERROR(fmt, ...) current_runtime()->ops->log_error(__FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_WARN(fmt, ...) current_runtime()->ops->log_warn(__FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_TIMING(fmt, ...) current_runtime()->ops->log_timing(__FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_INFO(fmt, ...) current_runtime()->ops->log_info(__FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_DEBUG(fmt, ...) current_runtime()->ops->log_debug(__FUNCTION__, fmt, ##__VA_ARGS__)

// One element of a tensor, at per-dimension indices of the view (T = the
// element's C++ type; default: the raw bits). Waits for the tensor's writers.
template <typename T = uint64_t>
static inline T get_tensor_data(const ChipTensor &tensor, uint32_t ndims, const uint32_t indices[]) {
    PTO2Runtime *rt = current_runtime();
    if (rt->ops->is_fatal(rt)) return from_u64<T>(0);
    return from_u64<T>(rt->ops->get_tensor_data(rt, tensor, ndims, indices));
}

// Writes one element; waits for the tensor's writers and their readers first.
template <typename T = uint64_t>
static inline void set_tensor_data(const ChipTensor &tensor, uint32_t ndims, const uint32_t indices[], T value) {
    PTO2Runtime *rt = current_runtime();
    if (rt->ops->is_fatal(rt)) return;
    rt->ops->set_tensor_data(rt, tensor, ndims, indices, to_u64(value));
}

// A scope for the lifetime of the guard; `file:line` names it (scope_stats).
class PTO2ScopeGuard {
public:
    explicit PTO2ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO, const char *file = __builtin_FILE(),
                            int line = __builtin_LINE()) :
        rt_(current_runtime()) {
        if (rt_->ops->is_fatal(rt_)) return;
        rt_->pending_scope_mode = mode;
        if (rt_->ops->scope_set_site) rt_->ops->scope_set_site(file, line);
        rt_->ops->scope_begin(rt_);
    }
    ~PTO2ScopeGuard() {
        if (!rt_->ops->is_fatal(rt_)) rt_->ops->scope_end(rt_);
    }

private:
    PTO2Runtime *rt_;
};

#define _PTO2_CONCATENATE_IMPL(x, y) x##y
#define _PTO2_CONCATENATE(x, y) _PTO2_CONCATENATE_IMPL(x, y)

#define PTO2_SCOPE_GUARD(...) \
    [[maybe_unused]] PTO2ScopeGuard _PTO2_CONCATENATE(scope_guard_, __COUNTER__) { __VA_ARGS__ }

#define PTO2_SCOPE(...) if (PTO2ScopeGuard _PTO2_CONCATENATE(scope_guard_, __COUNTER__){__VA_ARGS__}; true)

#ifndef PTO2_ORCHESTRATION_CONFIG_DEFINED
#define PTO2_ORCHESTRATION_CONFIG_DEFINED
struct PTO2OrchestrationConfig {
    int expected_arg_count;
};
#endif

#include "pto_arg_with_deps.h"  // NOLINT(build/include_subdir)
