// npusim orchestration SDK: TensorCreateInfo, what a program gives for an
// output the runtime allocates on its ring heap (add_output / alloc_tensors).
// 64 bytes laid out as ChipTensor's first cache line, as in the runtime.
#pragma once

#include <cstring>
#include <memory.h>
#include <stdint.h>

#include "data_type.h"
#include "tensor.h"

class alignas(64) TensorCreateInfo {
public:
    TensorCreateInfo(
        const uint32_t shapes_in[], uint32_t ndims_in, DataType dtype_in = DataType::FLOAT32, bool manual_dep_in = false
    ) :
        initial_value(0),
        has_initial_value(false),
        __pad1__{},
        __pad2__(0),
        start_offset(0),
        version(0),
        ndims(ndims_in),
        dtype(dtype_in),
        manual_dep(manual_dep_in),
        is_contiguous(true),
        __pad_flags__(0),
        shapes{} {
        always_assert(ndims_in > 0 && ndims_in <= MAX_TENSOR_DIMS);
        for (uint32_t d = 0; d < ndims_in; d++) shapes[d] = shapes_in[d];
    }
    TensorCreateInfo() = default;

    void copy(const TensorCreateInfo &other) { memcpy(static_cast<void *>(this), &other, sizeof(other)); }

    // Every element of the new buffer starts as `value` (its bytes, as the runtime fills them).
    template <typename T = uint64_t>
    void set_initial_value(T value) {
        has_initial_value = true;
        initial_value = to_u64(value);
    }

    uint64_t buffer_size_bytes() const {
        uint64_t n = 1;
        for (uint32_t d = 0; d < ndims; d++) n *= shapes[d];
        return n * get_element_size(dtype);
    }

    uint64_t initial_value;
    bool has_initial_value;
    uint8_t __pad1__[7];
    uint64_t __pad2__;
    uint64_t start_offset;
    int32_t version;
    uint32_t ndims;
    DataType dtype;
    bool manual_dep;
    bool is_contiguous;
    uint8_t __pad_flags__;
    uint32_t shapes[MAX_TENSOR_DIMS];
};

static_assert(sizeof(TensorCreateInfo) == 64, "TensorCreateInfo is one cache line");
static_assert(offsetof(TensorCreateInfo, start_offset) == offsetof(ChipTensor, start_offset));
static_assert(offsetof(TensorCreateInfo, version) == offsetof(ChipTensor, version));
static_assert(offsetof(TensorCreateInfo, ndims) == offsetof(ChipTensor, ndims));
static_assert(offsetof(TensorCreateInfo, dtype) == offsetof(ChipTensor, dtype));
static_assert(offsetof(TensorCreateInfo, manual_dep) == offsetof(ChipTensor, manual_dep));
static_assert(offsetof(TensorCreateInfo, is_contiguous) == offsetof(ChipTensor, is_contiguous));
static_assert(offsetof(TensorCreateInfo, shapes) == offsetof(ChipTensor, shapes));

// Runtime-side materialization, as the runtime's header offers it. In npusim
// buffers hold no bytes in the program's process: filling is recorded by the
// runtime model from TensorCreateInfo::set_initial_value, so this is a no-op.
inline void fill_tensor_initial_value(ChipTensor &t, uint64_t initial_value) {
    (void)t;
    (void)initial_value;
}

inline void init_tensor_from_create_info(ChipTensor &t, const TensorCreateInfo &ci, void *addr, uint64_t buffer_size) {
    always_assert(ci.ndims > 0 && ci.ndims <= MAX_TENSOR_DIMS);
    memcpy(static_cast<void *>(&t), &ci, 64);
    t.buffer.addr = reinterpret_cast<uint64_t>(addr);
    t.buffer.size = buffer_size;
    t.owner_task_id = PTO2TaskId::invalid();
    t.address_space = AddressSpace::HOST;
    uint32_t s = 1;
    for (int32_t d = static_cast<int32_t>(t.ndims) - 1; d >= 0; d--) {
        t.strides[d] = s;
        s *= t.shapes[d];
    }
    t.extent_elem_cache = s;
    if (ci.has_initial_value) fill_tensor_initial_value(t, ci.initial_value);
}
