// npusim orchestration SDK: CoreTaskArgsWithDeps<N>, an Arg with its own
// buffer of up to N explicit dependencies (add_dep: WAIT|RETAIN, add_dep_wait:
// WAIT only), and the submit overloads that take it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "pto_orchestration_api.h"  // NOLINT(build/include_subdir)

template <size_t MAX_DEP_COUNT = 16>
class CoreTaskArgsWithDeps : private CoreTaskArgs {
public:
    using CoreTaskArgs::add_inout;
    using CoreTaskArgs::add_input;
    using CoreTaskArgs::add_no_dep;
    using CoreTaskArgs::add_output;
    using CoreTaskArgs::add_scalar;
    using CoreTaskArgs::add_scalars;
    using CoreTaskArgs::add_scalars_i32;
    using CoreTaskArgs::allow_early_resolve;
    using CoreTaskArgs::copy_scalars_from;
    using CoreTaskArgs::set_allow_early_resolve;
    using CoreTaskArgs::set_task_timing_slot;
    using CoreTaskArgs::task_timing_slot;

    using CoreTaskArgs::error_msg;
    using CoreTaskArgs::has_error;
    using CoreTaskArgs::launch_spec;
    using CoreTaskArgs::set_error;

    template <typename... Ids>
    void add_dep(Ids... ids) {
        append(DEP_WAIT | DEP_RETAIN, ids...);
    }

    template <typename... Ids>
    void add_dep_wait(Ids... ids) {
        append(DEP_WAIT, ids...);
    }

    void reset() {
        CoreTaskArgs::reset();
        count_ = 0;
    }

    // Binds the buffered deps onto the Arg (idempotent) for a submit.
    CoreTaskArgs &finalize_for_submit() {
        CoreTaskArgs::set_dependencies(nullptr, 0);
        CoreTaskArgs::set_dependencies_with_kinds(deps_, kinds_, count_);
        return *this;
    }

private:
    template <typename... Ids>
    void append(DepFlags kind, Ids... ids) {
        static_assert(sizeof...(Ids) >= 1, "add_dep/add_dep_wait: at least one task id is required");
        static_assert((std::is_same_v<std::decay_t<Ids>, PTO2TaskId> && ...),
                      "add_dep/add_dep_wait: all arguments must be PTO2TaskId");
        if (count_ + sizeof...(Ids) > MAX_DEP_COUNT) {
            CoreTaskArgs::set_error(
                "CoreTaskArgsWithDeps::add_dep/add_dep_wait: dep count exceeds MAX_DEP_COUNT (bump the template arg)");
            return;
        }
        ((kinds_[count_] = kind, deps_[count_] = ids, ++count_), ...);
    }

    PTO2TaskId deps_[MAX_DEP_COUNT];
    DepFlags kinds_[MAX_DEP_COUNT];
    uint32_t count_ = 0;
};

template <size_t N>
static inline TaskOutputTensors rt_submit_task(const MixedKernels &mixed_kernels, CoreTaskArgsWithDeps<N> &awd) {
    return rt_submit_task(mixed_kernels, awd.finalize_for_submit());
}

template <size_t N>
static inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, CoreTaskArgsWithDeps<N> &awd) {
    return rt_submit_aic_task(kernel_id, awd.finalize_for_submit());
}

template <size_t N>
static inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, CoreTaskArgsWithDeps<N> &awd) {
    return rt_submit_aiv_task(kernel_id, awd.finalize_for_submit());
}
