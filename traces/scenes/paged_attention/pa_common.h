// Paged attention for npusim's scenes: what the three orchestration variants
// share (the structure of simpler's examples/a2a3/tensormap_and_ringbuffer/
// paged_attention*). Arguments: query [batch, heads, dim], key/value caches
// [blocks, block_size, 1, dim], block_table [batch, max_blocks] int32,
// context_lens [batch] int32, out [batch, heads, dim] fp32, scale (float).
#pragma once

#include <stdint.h>

#include <algorithm>

#include "pto_orchestration_api.h"

namespace pa {

enum : int32_t { kQK = 0, kSF = 1, kPV = 2, kUP = 3 };

struct Setup {
    uint32_t batch, heads, dim, block_size, q_tile;
    DataType dtype;
    uint64_t scale;
    ChipTensor query, key_cache, value_cache, out, block_table, context_lens;  // 2-D views of the arguments
    uint32_t tile[2], row[1], scores[2];

    explicit Setup(const ChipTaskArgs &a) {
        const ChipTensor &q = a.tensor(0).ref();
        batch = q.shapes[0];
        heads = q.shapes[1];
        dim = q.shapes[2];
        dtype = q.dtype;
        block_size = a.tensor(1).ref().shapes[1];
        q_tile = std::min<uint32_t>(heads, 128);
        scale = a.scalar(0);
        const uint32_t cache_rows = a.tensor(1).ref().shapes[0] * block_size;
        uint32_t q2[2] = {batch * heads, dim}, kv2[2] = {cache_rows, dim};
        // The same memory seen as 2-D tensors, as the example builds them.
        query = make_tensor_external(q.data_as<void>(), q2, 2, dtype);
        key_cache = make_tensor_external(a.tensor(1).ref().data_as<void>(), kv2, 2, dtype);
        value_cache = make_tensor_external(a.tensor(2).ref().data_as<void>(), kv2, 2, dtype);
        out = make_tensor_external(a.tensor(5).ref().data_as<void>(), q2, 2, DataType::FLOAT32);
        block_table = a.tensor(3).ref();
        context_lens = a.tensor(4).ref();
        tile[0] = q_tile, tile[1] = dim;
        row[0] = q_tile;
        scores[0] = q_tile, scores[1] = block_size;
    }

    uint32_t seq_len(uint32_t b) const {
        uint32_t i[1] = {b};
        return static_cast<uint32_t>(get_tensor_data<int32_t>(context_lens, 1, i));
    }
    uint32_t block_of(uint32_t b, uint32_t n) const {
        uint32_t i[2] = {b, n};
        return static_cast<uint32_t>(get_tensor_data<int32_t>(block_table, 2, i));
    }
    ChipTensor kv_block(const ChipTensor &cache, uint32_t block, uint32_t rows) const {
        uint32_t shape[2] = {rows, dim}, at[2] = {block * block_size, 0};
        return cache.view(shape, at);
    }
};

}  // namespace pa
