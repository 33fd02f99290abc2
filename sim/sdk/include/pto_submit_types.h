// npusim orchestration SDK: the submit contract: kernel slots of a task
// (MixedKernels), SPMD launch parameters, dispatch predicates.
#pragma once

#include <stdint.h>
#include <string.h>

inline constexpr int32_t INVALID_KERNEL_ID = -1;
inline constexpr int32_t PTO2_SUBTASK_SLOT_COUNT = 3;

enum class PTO2SubtaskSlot : uint8_t { AIC = 0, AIV0 = 1, AIV1 = 2 };

inline constexpr uint8_t PTO2_SUBTASK_MASK_AIC = 1u << 0;
inline constexpr uint8_t PTO2_SUBTASK_MASK_AIV0 = 1u << 1;
inline constexpr uint8_t PTO2_SUBTASK_MASK_AIV1 = 1u << 2;

// Comparison of a dispatch predicate (operand OP target); NONE: always dispatch.
enum class PredicateOp : uint8_t { NONE = 0, EQ, NE, GT, LT, GE, LE };

// A predicate as the scheduler evaluates it: the element at `addr`, sign-extended.
struct DispatchPredicate {
    uint64_t addr{0};
    int64_t target{0};
    uint8_t elem_size{0};
    PredicateOp op{PredicateOp::NONE};

    bool pass() const {
        if (op == PredicateOp::NONE) return true;
        int64_t v = 0;
        memcpy(&v, reinterpret_cast<const void *>(addr), elem_size);
        if (elem_size < 8) {
            const int shift = 64 - 8 * elem_size;
            v = static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;
        }
        switch (op) {
        case PredicateOp::EQ: return v == target;
        case PredicateOp::NE: return v != target;
        case PredicateOp::GT: return v > target;
        case PredicateOp::LT: return v < target;
        case PredicateOp::GE: return v >= target;
        case PredicateOp::LE: return v <= target;
        default: return true;
        }
    }
};

enum class PTO2ResourceShape : uint8_t { AIC = 0, AIV = 1, MIX = 2, DUMMY = 3 };
inline constexpr int32_t PTO2_NUM_RESOURCE_SHAPES = 3;

class ActiveMask {
public:
    constexpr ActiveMask() = default;
    constexpr explicit ActiveMask(uint8_t raw) : raw_(raw) {}
    uint8_t raw() const { return raw_; }
    bool subtask_active(PTO2SubtaskSlot slot) const { return (raw_ >> static_cast<uint8_t>(slot)) & 1u; }
    uint8_t core_mask() const { return raw_ & 0x07u; }
    PTO2ResourceShape to_shape() const {
        const uint8_t m = core_mask();
        if (m == 0) return PTO2ResourceShape::DUMMY;
        if (__builtin_popcount(m) >= 2) return PTO2ResourceShape::MIX;
        return (m & PTO2_SUBTASK_MASK_AIC) ? PTO2ResourceShape::AIC : PTO2ResourceShape::AIV;
    }
    bool operator==(ActiveMask o) const { return raw_ == o.raw_; }
    bool operator!=(ActiveMask o) const { return raw_ != o.raw_; }
    ActiveMask operator|(ActiveMask o) const { return ActiveMask(static_cast<uint8_t>(raw_ | o.raw_)); }
    ActiveMask &operator|=(ActiveMask o) {
        raw_ = static_cast<uint8_t>(raw_ | o.raw_);
        return *this;
    }
    ActiveMask operator&(uint8_t mask) const { return ActiveMask(static_cast<uint8_t>(raw_ & mask)); }
    bool has_mask(uint8_t mask) const { return (raw_ & mask) != 0; }
    explicit operator bool() const { return raw_ != 0; }

private:
    uint8_t raw_{0};
};
static_assert(sizeof(ActiveMask) == 1, "ActiveMask is one byte");

// Per-task scheduling flags in one byte: early resolve, sync start, predicate, timing tag.
class TaskAttrs {
public:
    constexpr TaskAttrs() = default;
    bool allow_early_resolve() const { return raw_ & kEarly; }
    void set_early_resolve(bool v) { raw_ = static_cast<uint8_t>(v ? raw_ | kEarly : raw_ & ~kEarly); }
    bool requires_sync_start() const { return raw_ & kSync; }
    void set_sync_start() { raw_ |= kSync; }
    bool has_predicate() const { return raw_ & kPred; }
    void set_predicate() { raw_ |= kPred; }
    bool is_timed() const { return raw_ & kTimed; }
    int32_t timing_slot() const { return is_timed() ? static_cast<int32_t>(raw_ >> 4) : -1; }
    void set_timing_slot(int32_t slot) {
        raw_ &= 0x07u;
        if (slot >= 0) raw_ = static_cast<uint8_t>(raw_ | kTimed | ((slot & 0x0F) << 4));
    }

private:
    static constexpr uint8_t kEarly = 1u, kSync = 2u, kPred = 4u, kTimed = 8u;
    uint8_t raw_{0};
};
static_assert(sizeof(TaskAttrs) == 1, "TaskAttrs is one byte");

// The kernels of one task's subtask slots; INVALID_KERNEL_ID leaves a slot inactive.
struct MixedKernels {
    int32_t aic_kernel_id{INVALID_KERNEL_ID};
    int32_t aiv0_kernel_id{INVALID_KERNEL_ID};
    int32_t aiv1_kernel_id{INVALID_KERNEL_ID};

    ActiveMask to_active_mask() const {
        uint8_t m = 0;
        if (aic_kernel_id != INVALID_KERNEL_ID) m |= PTO2_SUBTASK_MASK_AIC;
        if (aiv0_kernel_id != INVALID_KERNEL_ID) m |= PTO2_SUBTASK_MASK_AIV0;
        if (aiv1_kernel_id != INVALID_KERNEL_ID) m |= PTO2_SUBTASK_MASK_AIV1;
        return ActiveMask(m);
    }
};

// SPMD launch: how many blocks a task runs, and whether they start together.
class PTO2LaunchSpec {
public:
    constexpr PTO2LaunchSpec() = default;
    int16_t block_num() const { return block_num_; }
    void set_block_num(int16_t n) { block_num_ = n; }
    bool require_sync_start() const { return require_sync_start_; }
    void set_require_sync_start(bool v) { require_sync_start_ = v; }

private:
    int16_t block_num_{1};
    bool require_sync_start_{false};
};
