// npusim orchestration SDK: what a program builds and gets back at submit:
// Arg (CoreTaskArgs / ChipTaskArgs), its tagged tensor references, explicit
// dependencies with their kinds, dispatch predicates, and TaskOutputTensors.
// Names, signatures and rules are the runtime's (tensormap_and_ringbuffer
// pto_types.h); the code is npusim's.
#pragma once

#include <stdint.h>
#include <string.h>

#include <string>
#include <type_traits>
#include <utility>

#include "aicpu/dump_arg_selection.h"
#include "common/device_phase.h"
#include "data_type.h"
#include "profiling_config.h"
#include "pto_submit_types.h"
#include "task_args.h"
#include "tensor.h"
#include "tensor_create_info.h"

typedef enum {
    ASYNC_ENGINE_SDMA = 0,
    ASYNC_ENGINE_ROCE = 1,
    ASYNC_ENGINE_URMA = 2,
    ASYNC_ENGINE_CCU = 3,
    NUM_ASYNC_ENGINES = 4,
} AsyncEngine;

enum class CompletionType : int32_t { COUNTER = 0 };

enum class PTO2ScopeMode : uint8_t { AUTO = 0, MANUAL = 1 };

// Per-edge semantics: WAIT orders the consumer after the producer; RETAIN
// keeps the producer's slot and buffer alive until the consumer is done.
enum DepFlags : uint8_t {
    DEP_NONE = 0,
    DEP_WAIT = 1u << 0,
    DEP_RETAIN = 1u << 1,
};
constexpr DepFlags operator|(DepFlags a, DepFlags b) { return static_cast<DepFlags>(uint8_t(a) | uint8_t(b)); }
constexpr DepFlags operator&(DepFlags a, DepFlags b) { return static_cast<DepFlags>(uint8_t(a) & uint8_t(b)); }
constexpr DepFlags &operator|=(DepFlags &a, DepFlags b) {
    a = a | b;
    return a;
}
constexpr bool dep_has_wait(DepFlags f) { return (f & DEP_WAIT) != DEP_NONE; }
constexpr bool dep_has_retain(DepFlags f) { return (f & DEP_RETAIN) != DEP_NONE; }

// The outputs a submit materialized (OUTPUT args, in add_output order) and
// the task id. The tensors live in the task's slot: they must not outlive
// the scope the submit ran in (the slot is reused afterwards).
class TaskOutputTensors {
public:
    TaskOutputTensors() : task_id_(PTO2TaskId::invalid()), output_count_(0) {}

    bool empty() const { return output_count_ == 0; }
    uint32_t size() const { return output_count_; }

    const ChipTensor &get_ref(uint32_t index) const & {
        always_assert(index < output_count_);
        return *tensors_[index];
    }
    const ChipTensor &get_ref(uint32_t index) const && = delete;

    void materialize_output(const ChipTensor &tensor) {
        always_assert(output_count_ < MAX_TENSOR_ARGS);
        tensors_[output_count_++] = &tensor;
    }
    void set_task_id(PTO2TaskId id) { task_id_ = id; }
    PTO2TaskId task_id() const { return task_id_; }

private:
    PTO2TaskId task_id_;
    uint32_t output_count_;
    const ChipTensor *tensors_[MAX_TENSOR_ARGS];
};

// One tensor slot of an Arg: a ChipTensor (INPUT, INOUT, OUTPUT_EXISTING,
// NO_DEP) or a TensorCreateInfo (OUTPUT), by reference; never copied.
class TensorRef {
    union {
        const ChipTensor *ptr_;
        const TensorCreateInfo *create_info_;
    };

public:
    TensorRef() : ptr_(nullptr) {}
    TensorRef(const TensorRef &) = delete;
    TensorRef(TensorRef &&) = delete;
    TensorRef &operator=(const TensorRef &) = delete;
    TensorRef &operator=(TensorRef &&) = delete;

    TensorRef &operator=(const ChipTensor *p) {
        ptr_ = p;
        return *this;
    }
    TensorRef &operator=(const TensorCreateInfo *ci) {
        create_info_ = ci;
        return *this;
    }
    const ChipTensor &ref() const { return *ptr_; }
    const TensorCreateInfo &create_info() const { return *create_info_; }
    bool refers_to(const ChipTensor *t) const { return ptr_ == t; }
    bool refers_to(const TensorCreateInfo *ci) const { return create_info_ == ci; }
};

// The element a dispatch predicate reads: tensor + indices, as get_tensor_data takes them.
struct CorePredicateOperand {
    const ChipTensor *tensor{nullptr};
    uint32_t ndims{0};
    uint32_t indices[MAX_TENSOR_DIMS]{};
};

// operand OP target, evaluated when the task becomes ready; false: the task
// retires without running.
struct CoreTaskPredicate {
    CorePredicateOperand operand;
    PredicateOp op{PredicateOp::NONE};
    int64_t target{0};
};

template <size_t MaxT, size_t MaxS>
struct Arg : TaskArgsTpl<TensorRef, uint64_t, MaxT, MaxS, TensorArgType> {
    using Base = TaskArgsTpl<TensorRef, uint64_t, MaxT, MaxS, TensorArgType>;
    using Base::scalar_count_;
    using Base::scalars_;
    using Base::tags_;
    using Base::tensor_count_;
    using Base::tensors_;

    Arg() = default;
    Arg(const Arg &) = delete;
    Arg(Arg &&) = delete;
    Arg &operator=(const Arg &) = delete;
    Arg &operator=(Arg &&) = delete;

    bool has_error{false};
    const char *error_msg{nullptr};
    PTO2LaunchSpec launch_spec;

    bool allow_early_resolve_{false};
    void set_allow_early_resolve(bool v = true) { allow_early_resolve_ = v; }
    bool allow_early_resolve() const { return allow_early_resolve_; }

    CoreTaskPredicate predicate_;
    void set_predicate(const CoreTaskPredicate &pred) { predicate_ = pred; }
    const CoreTaskPredicate &predicate() const { return predicate_; }

    // Selective task timing (0..15); npusim times every task, the tag is only checked.
    int32_t task_timing_slot_{TASK_TIMING_SLOT_NONE};
    void set_task_timing_slot(int32_t slot) {
        if (slot < 0 || slot >= NUM_TASK_TIMING_SLOTS) {
            set_error("task_timing_slot out of range (valid: 0..15)");
            return;
        }
        task_timing_slot_ = slot;
    }
    int32_t task_timing_slot() const { return task_timing_slot_; }

    void clear() {
        Base::clear();
        explicit_deps_ = nullptr;
        explicit_dep_kinds_ = nullptr;
        explicit_dep_count_ = 0;
        allow_early_resolve_ = false;
        predicate_ = CoreTaskPredicate{};
        task_timing_slot_ = TASK_TIMING_SLOT_NONE;
    }

    void reset() {
        clear();
        has_error = false;
        error_msg = nullptr;
    }

    // The first error wins; it surfaces at submit (INVALID_ARGS).
    void set_error(const char *msg) {
        if (has_error) return;
        has_error = true;
        error_msg = msg;
    }

    // Argument dumps are a DFX feature npusim does not model: the arguments
    // are checked as the runtime checks them and nothing is recorded.
    template <typename... Args>
    void dump(Args &&...args) {
        static_assert((std::is_lvalue_reference_v<Args> && ...),
                      "dump: temporaries are not allowed — pass tensors/scalars already added to this Arg");
        ((void)args, ...);
    }
    uint64_t dump_arg_mask() const { return 0; }
    uint64_t dump_arg_index_ambiguous_mask() const { return 0; }

    template <typename... Args>
    void add_input(Args &&...args) {
        check_tensor_args<false, Args...>();
        if (!room_for_tensors(static_cast<int32_t>(sizeof...(Args)))) return;
        (push_tensor(&args, TensorArgType::INPUT), ...);
    }

    // All TensorCreateInfo: OUTPUT (the runtime allocates); all ChipTensor: OUTPUT_EXISTING.
    template <typename... Args>
    void add_output(Args &&...args) {
        check_tensor_args<true, Args...>();
        if (!room_for_tensors(static_cast<int32_t>(sizeof...(Args)))) return;
        if constexpr ((std::is_same_v<std::decay_t<Args>, TensorCreateInfo> && ...)) {
            (push_tensor(&args, TensorArgType::OUTPUT), ...);
        } else {
            (push_tensor(&args, TensorArgType::OUTPUT_EXISTING), ...);
        }
    }

    template <typename... Args>
    void add_inout(Args &&...args) {
        check_tensor_args<false, Args...>();
        if (!room_for_tensors(static_cast<int32_t>(sizeof...(Args)))) return;
        (push_tensor(&args, TensorArgType::INOUT), ...);
    }

    template <typename... Args>
    void add_no_dep(Args &&...args) {
        check_tensor_args<false, Args...>();
        if (!room_for_tensors(static_cast<int32_t>(sizeof...(Args)))) return;
        (push_tensor(&args, TensorArgType::NO_DEP), ...);
    }

    // The caller's array (it must outlive the submit); count 0 clears, a
    // second non-empty call is an error.
    void set_dependencies(const PTO2TaskId *deps, uint32_t count) {
        if (count == 0) {
            explicit_deps_ = nullptr;
            explicit_dep_kinds_ = nullptr;
            explicit_dep_count_ = 0;
            return;
        }
        if (deps == nullptr) {
            set_error("set_dependencies: deps must not be null when count > 0");
            return;
        }
        if (explicit_deps_ != nullptr) {
            set_error("set_dependencies: may be called at most once per Arg");
            return;
        }
        explicit_deps_ = deps;
        explicit_dep_kinds_ = nullptr;
        explicit_dep_count_ = count;
    }

    void set_dependencies_with_kinds(const PTO2TaskId *deps, const DepFlags *kinds, uint32_t count) {
        if (count == 0) {
            explicit_deps_ = nullptr;
            explicit_dep_kinds_ = nullptr;
            explicit_dep_count_ = 0;
            return;
        }
        if (deps == nullptr || kinds == nullptr) {
            set_error("set_dependencies_with_kinds: deps and kinds must not be null when count > 0");
            return;
        }
        if (explicit_deps_ != nullptr) {
            set_error("set_dependencies_with_kinds: may be called at most once per Arg");
            return;
        }
        explicit_deps_ = deps;
        explicit_dep_kinds_ = kinds;
        explicit_dep_count_ = count;
    }

    uint32_t explicit_dep_count() const { return explicit_dep_count_; }
    PTO2TaskId explicit_dep(uint32_t index) const {
        always_assert(index < explicit_dep_count_);
        return explicit_deps_[index];
    }
    DepFlags explicit_dep_kind(uint32_t index) const {
        always_assert(index < explicit_dep_count_);
        return explicit_dep_kinds_ ? explicit_dep_kinds_[index] : (DEP_WAIT | DEP_RETAIN);
    }
    const PTO2TaskId *explicit_deps_data() const { return explicit_deps_; }

    template <typename... Args>
    void add_scalar(Args &&...args) {
        static_assert(sizeof...(Args) >= 1, "add_scalar: at least one argument required");
        static_assert((is_supported_scalar_arg_v<Args> && ...), "add_scalar: all types must be arithmetic or enum");
        if (scalar_count_ + sizeof...(Args) > MaxS) {
            set_error(scalar_cap_msg());
            return;
        }
        ((scalars_[scalar_count_++] = to_u64(args)), ...);
    }

    void add_scalars(const uint64_t *values, int count) {
        if (count < 0 || scalar_count_ + count > static_cast<int>(MaxS)) {
            set_error(scalar_cap_msg());
            return;
        }
        if (count > 0) memcpy(&scalars_[scalar_count_], values, static_cast<size_t>(count) * sizeof(uint64_t));
        scalar_count_ += count;
    }

    // int32 bit patterns zero-extended into the slots (-1 -> 0xFFFFFFFF).
    void add_scalars_i32(const int32_t *values, int count) {
        if (count < 0 || scalar_count_ + count > static_cast<int>(MaxS)) {
            set_error(scalar_cap_msg());
            return;
        }
        for (int i = 0; i < count; i++) scalars_[scalar_count_ + i] = static_cast<uint32_t>(values[i]);
        scalar_count_ += count;
    }

    void copy_scalars_from(const Arg &src, int src_offset, int count) {
        if (src_offset < 0 || count < 0 || src_offset + count > src.scalar_count_) {
            set_error("Source scalar range out of bounds in copy_scalars_from");
            return;
        }
        if (scalar_count_ + count > static_cast<int>(MaxS)) {
            set_error(scalar_cap_msg());
            return;
        }
        if (count > 0)
            memcpy(&scalars_[scalar_count_], &src.scalars_[src_offset], static_cast<size_t>(count) * sizeof(uint64_t));
        scalar_count_ += count;
    }

    const uint8_t *scalar_dtypes() const { return nullptr; }

private:
    const PTO2TaskId *explicit_deps_{nullptr};
    const DepFlags *explicit_dep_kinds_{nullptr};
    uint32_t explicit_dep_count_{0};

    template <typename P>
    void push_tensor(P p, TensorArgType tag) {
        tensors_[tensor_count_] = p;
        tags_[tensor_count_] = tag;
        ++tensor_count_;
    }

    static const char *scalar_cap_msg() {
        static const std::string m = "Too many scalar args (max " + std::to_string(MaxS) + ")";
        return m.c_str();
    }
    static const char *tensor_cap_msg() {
        static const std::string m = "Too many tensor args (max " + std::to_string(MaxT) + ")";
        return m.c_str();
    }

    template <bool is_output, typename... Args>
    static void check_tensor_args() {
        static_assert(sizeof...(Args) >= 1, "at least one argument required");
        static_assert((std::is_lvalue_reference_v<Args> && ...),
                      "temporaries are not allowed — stored pointers would dangle after the call");
        if constexpr (is_output) {
            static_assert((std::is_same_v<std::decay_t<Args>, ChipTensor> && ...) ||
                              (std::is_same_v<std::decay_t<Args>, TensorCreateInfo> && ...),
                          "add_output: all arguments must be the same type (all ChipTensor or all TensorCreateInfo)");
        } else {
            static_assert((std::is_same_v<std::decay_t<Args>, ChipTensor> && ...), "all arguments must be ChipTensor");
        }
    }

    bool room_for_tensors(int32_t count) {
        if (scalar_count_ != 0) {
            set_error("add_input/add_output/add_inout called after add_scalar: all tensors must be added before any "
                      "scalars");
            return false;
        }
        if (tensor_count_ + count > static_cast<int32_t>(MaxT)) {
            set_error(tensor_cap_msg());
            return false;
        }
        return true;
    }
};

// The arguments of one task.
using CoreTaskArgs = Arg<MAX_TENSOR_ARGS, MAX_SCALAR_ARGS>;

// The orchestration entry's arguments (the host's tensors and scalars).
struct ChipTaskArgs : Arg<CHIP_MAX_TENSOR_ARGS, CHIP_MAX_SCALAR_ARGS> {
    void create_from_chip_args(const ChipStorageTaskArgs &src) {
        reset();
        for (int32_t i = 0; i < src.tensor_count(); ++i) add_input(src.tensor(i));
        for (int32_t i = 0; i < src.scalar_count(); ++i) add_scalar(src.scalar(i));
    }
};
