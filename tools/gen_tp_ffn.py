#!/usr/bin/env python3
"""Writes a tensor-parallel FFN over 2, 4 and 8 chips (traces/tp_ffn/): one
trace per chip count (every chip runs the same program on its own shard)
and a distributed worker file running it on every chip.

Megatron-style: Y = GeLU(X A) B with A split by columns and B by rows over
the N chips. Chip r holds A_r = A[:, r F/N : (r+1) F/N] and B_r = the same rows
of B, and computes, dependencies through the tensormap:

    MM1   (AIC, SPMD)  H_r = X A_r          [M, F/N] bf16
    GELU  (AIV, SPMD)  Z_r = GeLU(H_r)      [M, F/N] bf16
    MM2   (AIC, SPMD)  P_r = Z_r B_r        [M, H]   fp32, a partial sum
    ALLREDUCE (AIV)    Y = sum over r of P_r, the one-phase allreduce of
                       tools/gen_allreduce.py (kernel_body) on P_r

Kernel times: the silicon per-kernel means of the aSim study's calibration
files (huawei-csl/simpler docs/asim/calib/) scaled by
the shard's size (per 1024-wide tile; each block loops over its share of the
tiles). The arithmetic of the expected times: docs/interconnect.md,
"Example: a tensor-parallel FFN".

    tools/gen_tp_ffn.py [OUT_DIR]      (default traces/tp_ffn)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_allreduce import kernel_body, worker_doc, write_examples  # noqa: E402

# Shapes. HIDDEN is qwen3_14b's hidden size (simpler's qwen3_14b_decode example: hidden 5120).
# FFN is 16 tiles of 1024 (an assumption: qwen3_14b's inter 17408 is 17 tiles,
# rounded to 16 so that 2, 4 and 8 chips divide it). TOKENS: a 384-token
# prefill chunk (an assumption: 24 row tiles of 16, one per AIC of a2a3), so
# every chip has more tiles than cores and its compute shrinks as 1/N.
TILE_ROWS = 16         # rows of one tile: qwen3_14b decode's batch 16 (simpler's example)
TILE = 1024            # columns (and K chunk) of one tile: 5120 / 5 and 17408 / 17 in D.3
TOKENS = 384           # M (assumption, above)
HIDDEN = 5120          # H
FFN = 16384            # F (assumption, above)

# Per-tile kernel times (ns), huawei-csl/simpler docs/asim/calib/qwen_decode_fwd_graph.calib:
MM1_TILE_NS = 40076    # func 21 gate_proj (AIC): [16 x 1024] x [1024 x 1024] bf16, one K chunk
MM2_TILE_NS = 38097    # func 34 down_proj (AIC): [16 x 1024] x [1024 x 1024] bf16, one K chunk
GELU_TILE_NS = 5549    # func 33 silu (AIV) on [16 x 1024]; GeLU costs as SiLU (an assumption)
# The allreduce's TADD: benchmark_bgemm.calib func 1 ADD (AIV) 10512 ns for
# incore_loop 4 x 128 x 128 = 65536 fp32 elements (huawei-csl/simpler
# docs/asim/calib/benchmark_bgemm.calib; Case0's tile 128, incore_loop 4 and f32
# tiles: simpler's examples/a2a3/tensormap_and_ringbuffer/benchmark_bgemm); the partial output's M x H = 1966080 elements are 30 such adds.
ADD_NS = 10512
ADD_ELEMENTS = 4 * 128 * 128

# SPMD blocks: one per AIC / AIV of an a2a3 die (24 clusters of 1 AIC + 2 AIV,
# platforms/a2a3.json topology.clusters); on a smaller platform they queue.
AIC_BLOCKS = 24
AIV_BLOCKS = 48

# Every chip's rings: 64 MiB of heap holds a shard's four outputs (at most
# 28.3 MB, N = 2) on any platform (tiny's default is 1 MiB). The worker is
# prepared with it, so its one dispatch finds the arena prewarmed.
RINGS = {"ring_heap": 64 << 20}


def tiles(rows, cols):
    return (rows // TILE_ROWS) * (cols // TILE)


def shard_times(n):
    """Per-block durations (ns) of MM1, GELU, MM2 on n chips and the TADD of
    the allreduce, with the tile counts behind them."""
    f = FFN // n
    mm1 = tiles(TOKENS, f) * (HIDDEN // TILE)      # output tiles x K chunks
    gelu = tiles(TOKENS, f)
    mm2 = tiles(TOKENS, HIDDEN) * (f // TILE)
    assert mm1 % AIC_BLOCKS == 0 and mm2 % AIC_BLOCKS == 0 and gelu % AIV_BLOCKS == 0
    assert (TOKENS * HIDDEN) % ADD_ELEMENTS == 0
    return {
        "MM1": mm1 // AIC_BLOCKS * MM1_TILE_NS,
        "GELU": gelu // AIV_BLOCKS * GELU_TILE_NS,
        "MM2": mm2 // AIC_BLOCKS * MM2_TILE_NS,
        "TADD": TOKENS * HIDDEN // ADD_ELEMENTS * ADD_NS,
    }


def trace(n):
    t = shard_times(n)
    f = FFN // n
    partial_bytes = TOKENS * HIDDEN * 4
    kernels = {
        "MM1": {"func_id": 0, "core": "aic", "duration": {"ns": t["MM1"]}},
        "GELU": {"func_id": 1, "core": "aiv", "duration": {"ns": t["GELU"]}},
        "MM2": {"func_id": 2, "core": "aic", "duration": {"ns": t["MM2"]}},
        "ALLREDUCE": {"func_id": 3, "core": "aiv", "body": kernel_body(n, partial_bytes, t["TADD"])},
    }
    return {
        "npusim_trace": 1,
        "name": f"tp_ffn_{n}",
        "x_about": f"Tensor-parallel FFN Y = GeLU(X A) B, M {TOKENS}, H {HIDDEN}, F {FFN}, A by columns and B by "
                   f"rows over {n} chips: this is one chip's shard (F/{n} = {f}), then the one-phase allreduce "
                   f"of its fp32 partial output. tools/gen_tp_ffn.py; run it through worker_{n}.json; "
                   "docs/interconnect.md has the arithmetic of its time.",
        "kernels": kernels,
        "tensors": {
            "x": {"shape": [TOKENS, HIDDEN], "dtype": "bf16"},
            "a_shard": {"shape": [HIDDEN, f], "dtype": "bf16"},
            "b_shard": {"shape": [f, HIDDEN], "dtype": "bf16"},
            "scratch": {"shape": [TOKENS, HIDDEN], "dtype": "fp32"},
        },
        "program": [
            {"op": "submit", "kernel": "MM1", "block_num": AIC_BLOCKS, "args": [
                {"in": "x"}, {"in": "a_shard"}, {"out": "h", "shape": [TOKENS, f], "dtype": "bf16"}]},
            {"op": "submit", "kernel": "GELU", "block_num": AIV_BLOCKS, "args": [
                {"in": "h"}, {"out": "z", "shape": [TOKENS, f], "dtype": "bf16"}]},
            {"op": "submit", "kernel": "MM2", "block_num": AIC_BLOCKS, "args": [
                {"in": "z"}, {"in": "b_shard"}, {"out": "partial", "shape": [TOKENS, HIDDEN], "dtype": "fp32"}]},
            {"op": "submit", "kernel": "ALLREDUCE", "args": [
                {"in": "partial"}, {"out": "y", "shape": [TOKENS, HIDDEN], "dtype": "fp32"}, {"inout": "scratch"}]},
        ],
    }


def worker(n):
    return worker_doc(n, f"The tensor-parallel FFN on {n} chips of one node (tools/gen_tp_ffn.py).",
                      f"tp_ffn_{n}.json", RINGS)


def main():
    write_examples(os.path.join(os.path.dirname(__file__), "..", "traces", "tp_ffn"), "tp_ffn", trace, worker)


if __name__ == "__main__":
    main()
