// npusim orchestration SDK: ChipTensor, the runtime's 128-byte tensor
// descriptor (a strided view of a GM buffer), with its view operations and
// factories. Field names, layout and semantics follow the runtime's
// (src/common/task_interface/tensor.h); the code is npusim's.
//
// In npusim a buffer's `addr` is an address of the simulated device: the
// orchestration program never dereferences it (npusim has no device memory
// to read; get_tensor_data / set_tensor_data are the way to data).
#pragma once

#include <memory.h>
#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "assert_compat.h"
#include "data_type.h"
#include "pto_task_id.h"

struct PTOBufferHandle {
    uint64_t addr;  // device address (bytes)
    uint64_t size;  // buffer size in bytes
};

enum class TensorArgType : int32_t {
    INPUT = 0,
    OUTPUT = 1,
    INOUT = 2,
    OUTPUT_EXISTING = 3,
    NO_DEP = 4,
};

struct alignas(64) ChipTensor {
    // cache line 1
    PTOBufferHandle buffer;
    PTO2TaskId owner_task_id;
    uint64_t start_offset;  // elements
    int32_t version;
    uint32_t ndims;
    DataType dtype;
    bool manual_dep;
    bool is_contiguous;
    AddressSpace address_space;
    uint32_t shapes[MAX_TENSOR_DIMS];
    // cache line 2
    uint64_t extent_elem_cache;
    uint32_t strides[MAX_TENSOR_DIMS];  // elements, > 0
    uint8_t _pad_cl2[36];

    ChipTensor() = default;
    ChipTensor(const ChipTensor &) = default;
    ChipTensor &operator=(const ChipTensor &) = default;
    ChipTensor(ChipTensor &&) = default;
    ChipTensor &operator=(ChipTensor &&) = default;
    ~ChipTensor() = default;

    uint64_t numel() const {
        uint64_t n = 1;
        for (uint32_t d = 0; d < ndims; d++) n *= shapes[d];
        return n;
    }
    uint64_t extent_elem() const { return is_contiguous ? numel() : extent_elem_cache; }
    [[nodiscard]] bool is_device_memory() const { return address_space == AddressSpace::DEVICE; }
    [[nodiscard]] uint64_t nbytes() const { return numel() * get_element_size(dtype); }

    template <typename T>
    T *data_as() const {
        return reinterpret_cast<T *>(static_cast<uintptr_t>(buffer.addr));
    }

    void init_external(
        void *addr, uint64_t buffer_size_bytes, const uint32_t in_shapes[], uint32_t in_ndims, DataType in_dtype,
        int32_t in_version, bool in_manual_dep = false, AddressSpace in_address_space = AddressSpace::HOST
    ) {
        always_assert(in_ndims > 0 && in_ndims <= MAX_TENSOR_DIMS);
        buffer.addr = reinterpret_cast<uint64_t>(addr);
        buffer.size = buffer_size_bytes;
        owner_task_id = PTO2TaskId::invalid();
        start_offset = 0;
        version = in_version;
        ndims = in_ndims;
        dtype = in_dtype;
        manual_dep = in_manual_dep;
        address_space = in_address_space;
        for (uint32_t d = 0; d < in_ndims; d++) shapes[d] = in_shapes[d];
        set_row_major_strides();
    }

    void init_from(const ChipTensor &other) { *this = other; }
    void init_from_line1(const ChipTensor &other) { memcpy(static_cast<void *>(this), &other, 64); }
    void copy(const ChipTensor &other) { init_from(other); }

    uint64_t compute_flat_offset(const uint32_t indices[], uint32_t in_ndims) const {
        uint64_t off = start_offset;
        for (uint32_t d = 0; d < in_ndims; d++) off += static_cast<uint64_t>(indices[d]) * strides[d];
        return off;
    }

    // A box of this view: per-dim offsets and shape (a zero extent makes an
    // empty view, whose offsets are not checked).
    ChipTensor view(const uint32_t view_shapes[], const uint32_t view_offsets[], bool in_manual_dep = false) const {
        ChipTensor r = *this;
        bool empty = false;
        for (uint32_t d = 0; d < ndims; d++) empty = empty || view_shapes[d] == 0;
        for (uint32_t d = 0; d < ndims; d++) {
            if (!empty) {
                debug_assert(view_offsets[d] + view_shapes[d] <= shapes[d]);
                r.start_offset += static_cast<uint64_t>(view_offsets[d]) * strides[d];
            }
            r.shapes[d] = view_shapes[d];
        }
        r.manual_dep = in_manual_dep;
        r.refresh_derived();
        if (empty) {
            r.is_contiguous = true;
            r.extent_elem_cache = 0;
        } else {
            r.assert_in_buffer_bounds();
        }
        return r;
    }

    bool valid_transpose(uint32_t x, uint32_t y) const { return x < ndims && y < ndims; }

    ChipTensor transpose(uint32_t x, uint32_t y, bool in_manual_dep = false) const {
        debug_assert(valid_transpose(x, y));
        ChipTensor r = *this;
        std::swap(r.shapes[x], r.shapes[y]);
        std::swap(r.strides[x], r.strides[y]);
        r.manual_dep = in_manual_dep;
        r.refresh_derived();
        return r;
    }

    ChipTensor permute(const uint32_t order[], bool in_manual_dep = false) const {
        ChipTensor r = *this;
        for (uint32_t d = 0; d < ndims; d++) {
            debug_assert(order[d] < ndims);
            r.shapes[d] = shapes[order[d]];
            r.strides[d] = strides[order[d]];
        }
        r.manual_dep = in_manual_dep;
        r.refresh_derived();
        return r;
    }

    ChipTensor slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step = 1, bool in_manual_dep = false) const {
        debug_assert(dim < ndims);
        debug_assert(step >= 1);
        debug_assert(end > start);
        debug_assert(end <= shapes[dim]);
        ChipTensor r = *this;
        r.start_offset += static_cast<uint64_t>(start) * strides[dim];
        r.shapes[dim] = (end - start + step - 1) / step;
        r.strides[dim] = strides[dim] * step;
        r.manual_dep = in_manual_dep;
        r.refresh_derived();
        r.assert_in_buffer_bounds();
        return r;
    }

    bool valid_reshape(const uint32_t new_shapes[], uint32_t new_ndims) const {
        uint64_t n = 1;
        for (uint32_t d = 0; d < new_ndims; d++) n *= new_shapes[d];
        return n == numel();
    }

    // Contiguous views only: the same elements in a new row-major shape.
    ChipTensor reshape(const uint32_t new_shapes[], uint32_t new_ndims, bool in_manual_dep = false) const {
        debug_assert(valid_reshape(new_shapes, new_ndims));
        always_assert(is_contiguous);
        ChipTensor r = *this;
        r.ndims = new_ndims;
        for (uint32_t d = 0; d < new_ndims; d++) r.shapes[d] = new_shapes[d];
        r.manual_dep = in_manual_dep;
        r.set_row_major_strides();
        return r;
    }

    std::string dump() const {
        std::ostringstream o;
        o << "{\n    buffer.addr: " << buffer.addr << "\n    buffer.size: " << buffer.size
          << " bytes\n    dtype: " << get_dtype_name(dtype) << "\n    ndims: " << ndims << "\n    version: " << version
          << "\n    start_offset: " << start_offset << " (elements)\n    is_contiguous: "
          << (is_contiguous ? "true" : "false") << "\n    shapes: [";
        for (uint32_t d = 0; d < ndims; d++) o << (d ? ", " : "") << shapes[d];
        o << "]\n    strides: [";
        for (uint32_t d = 0; d < ndims; d++) o << (d ? ", " : "") << strides[d];
        o << "]\n}\n";
        return o.str();
    }

private:
    ChipTensor(
        void *addr, uint64_t buffer_size_bytes, const uint32_t in_shapes[], uint32_t in_ndims, DataType in_dtype,
        int32_t in_version, bool in_manual_dep = false, AddressSpace in_address_space = AddressSpace::HOST
    ) {
        init_external(addr, buffer_size_bytes, in_shapes, in_ndims, in_dtype, in_version, in_manual_dep, in_address_space);
    }

    void set_row_major_strides() {
        uint32_t s = 1;
        for (int32_t d = static_cast<int32_t>(ndims) - 1; d >= 0; d--) {
            strides[d] = s;
            s *= shapes[d];
        }
        is_contiguous = true;
        extent_elem_cache = s;
    }

    // extent_elem_cache and is_contiguous from shapes and strides.
    void refresh_derived() {
        uint64_t extent = 1, expect = 1;
        bool contiguous = true;
        for (int32_t d = static_cast<int32_t>(ndims) - 1; d >= 0; d--) {
            if (strides[d] != expect) contiguous = false;
            if (shapes[d] > 0) extent += static_cast<uint64_t>(shapes[d] - 1) * strides[d];
            expect *= shapes[d];
        }
        extent_elem_cache = extent;
        is_contiguous = contiguous;
    }

    void assert_in_buffer_bounds() const {
        const uint64_t elem = get_element_size(dtype);
        debug_assert(elem == 0 || start_offset + extent_elem_cache <= buffer.size / elem);
        (void)elem;
    }

    friend struct PTO2TaskPayload;
    friend inline ChipTensor make_tensor_external(void *, const uint32_t[], uint32_t, DataType, bool, int32_t,
                                                  AddressSpace);
    friend inline ChipTensor make_tensor_strided(void *, const uint32_t[], const uint32_t[], uint32_t, DataType, bool,
                                                 int32_t, AddressSpace);
};

static_assert(std::is_trivially_copyable_v<ChipTensor>, "ChipTensor is trivially copyable");
static_assert(sizeof(ChipTensor) == 128, "ChipTensor is two cache lines");
static_assert(offsetof(ChipTensor, owner_task_id) == 16);
static_assert(offsetof(ChipTensor, start_offset) == 24);
static_assert(offsetof(ChipTensor, version) == 32);
static_assert(offsetof(ChipTensor, ndims) == 36);
static_assert(offsetof(ChipTensor, dtype) == 40);
static_assert(offsetof(ChipTensor, manual_dep) == 41);
static_assert(offsetof(ChipTensor, is_contiguous) == 42);
static_assert(offsetof(ChipTensor, address_space) == 43);
static_assert(offsetof(ChipTensor, shapes) == 44);
static_assert(offsetof(ChipTensor, extent_elem_cache) == 64);
static_assert(offsetof(ChipTensor, strides) == 72);

// A contiguous tensor over pre-allocated memory at `addr` (an address a
// program got from another tensor: data_as<void>()).
inline ChipTensor make_tensor_external(
    void *addr, const uint32_t shapes[], uint32_t ndims, DataType dtype = DataType::FLOAT32, bool manual_dep = false,
    int32_t version = 0, AddressSpace address_space = AddressSpace::HOST
) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < ndims; d++) n *= shapes[d];
    return ChipTensor(addr, n * get_element_size(dtype), shapes, ndims, dtype, version, manual_dep, address_space);
}

// A possibly strided external view with its origin at `addr`.
inline ChipTensor make_tensor_strided(
    void *addr, const uint32_t shapes[], const uint32_t strides[], uint32_t ndims, DataType dtype = DataType::FLOAT32,
    bool manual_dep = false, int32_t version = 0, AddressSpace address_space = AddressSpace::HOST
) {
    always_assert(ndims > 0 && ndims <= MAX_TENSOR_DIMS);
    ChipTensor t{};
    t.buffer.addr = reinterpret_cast<uint64_t>(addr);
    t.owner_task_id = PTO2TaskId::invalid();
    t.start_offset = 0;
    t.version = version;
    t.ndims = ndims;
    t.dtype = dtype;
    t.manual_dep = manual_dep;
    t.address_space = address_space;
    for (uint32_t d = 0; d < ndims; d++) {
        t.shapes[d] = shapes[d];
        t.strides[d] = strides[d];
    }
    t.refresh_derived();
    t.buffer.size = t.extent_elem_cache * get_element_size(dtype);
    return t;
}
