#!/usr/bin/env python3
"""Generates traces/qwen3_decode.json: the qwen3_14b decode of simpler's
examples/a2a3/tensormap_and_ringbuffer/qwen3_14b_decode (40 layers of 277
tasks + prefix/suffix = 11,085 tasks without the allocs), with the per-kernel
durations of huawei-csl/simpler docs/asim/calib/qwen_decode_fwd_graph.calib. Dependencies are explicit, in a manual
scope per layer, as the generated orchestration declares them.

    tools/gen_qwen3_decode.py [--layers N] [--out traces/qwen3_decode.json]

Kernel x_gamma0 is named xgamma0: names starting with x_ are annotations in a
trace (docs/trace-format.md). The attention is a MIX task over every cluster (24 blocks = 72 cores) with
require_sync_start and an internal FFTS SyncAll: it is modelled as half its
work, a HARD syncall over all cores, and the other half.

early=True marks the producers the source flags with set_allow_early_resolve
(decode_fwd_layers.cpp at simpler 6ebaf77, unchanged since the 40-layer
harvest): pa_tiling_cce, x_gamma0, attn_out_seed, rms_recip, q_seed,
q_proj, mlp_out_seed, k_proj, v_proj, the attention, the five
residual_rms_cast, down_proj and dcr_xgamma; not copy_hidden, kv_seed,
out_proj, out_proj_0, post_rms_reduce, gate/up, silu, copy_out, the dummies.
A consumer of flagged producers only is staged early (docs/conformance.md,
the 2-deep pipeline share).
"""
import argparse
import json

# func_id: (name, core, mean_ns, sigma_ns), qwen_decode_fwd_graph.calib
K = {
    0: ("pa_tiling_cce", "aiv", 31240, 0), 1: ("copy_hidden", "aiv", 14160, 0),
    2: ("xgamma0", "aiv", 2820, 30), 3: ("attn_out_seed", "aiv", 200, 15),
    4: ("rms_recip", "aiv", 5614, 178), 5: ("q_seed", "aiv", 3808, 163),
    6: ("q_proj", "aic", 22080, 1038), 7: ("kv_seed", "aiv", 1922, 89),
    8: ("mlp_out_seed", "aiv", 23914, 489), 9: ("k_proj", "aic", 21314, 756),
    10: ("v_proj", "aic", 21856, 979), 13: ("out_proj", "aic", 20377, 1067),
    14: ("out_proj_0", "aic", 20257, 979), 15: ("residual_rms_cast", "aiv", 3256, 237),
    16: ("residual_rms_cast_0", "aiv", 4337, 1216), 17: ("residual_rms_cast_1", "aiv", 4664, 1957),
    18: ("residual_rms_cast_2", "aiv", 4402, 1216), 19: ("residual_rms_cast_3", "aiv", 4312, 979),
    20: ("post_rms_reduce", "aiv", 16282, 934), 21: ("gate_proj", "aic", 40076, 2179),
    22: ("up_proj", "aic", 39543, 1764), 23: ("gate_proj_0", "aic", 39940, 2372),
    24: ("up_proj_0", "aic", 39065, 1690), 25: ("gate_proj_1", "aic", 39594, 2046),
    26: ("up_proj_1", "aic", 39565, 2105), 27: ("gate_proj_2", "aic", 39539, 2431),
    28: ("up_proj_2", "aic", 40070, 2268), 29: ("gate_proj_3", "aic", 39694, 2165),
    30: ("up_proj_3", "aic", 39774, 2580), 31: ("gate_proj_4", "aic", 40350, 2209),
    32: ("up_proj_4", "aic", 40540, 2491), 33: ("silu", "aiv", 5549, 474),
    34: ("down_proj", "aic", 38097, 3025), 35: ("dcr_xgamma", "aiv", 3668, 208),
    36: ("copy_out", "aiv", 15000, 0),
}
ATTN_AIC, ATTN_AIV = (275788, 6924), (276649, 7339)  # func 11 / 12


def duration(mean, sigma):
    return {"ns": mean} if sigma == 0 else {"mean_ns": mean, "sigma_ns": sigma}


def kernels():
    ks = {}
    for fid, (name, core, mean, sigma) in K.items():
        ks[name] = {"func_id": fid, "core": core, "duration": duration(mean, sigma)}

    def half(mean, sigma):
        return {"compute": duration(mean / 2, sigma / 2 ** 0.5)}

    sync = {"syncall": {"mode": "hard", "core_type": "mix"}}
    ks["attention"] = {"func_id": 11, "core": "mix", "lanes": {
        "aic": {"body": [half(*ATTN_AIC), sync, half(*ATTN_AIC)]},
        # func 12 on both AIV lanes, as the source's MixedKernels {11, 12, 12} (deps.json kernel_ids)
        "aiv": {"func_id": 12, "body": [half(*ATTN_AIV), sync, half(*ATTN_AIV)]}}}
    return ks


def submit(kernel, deps=(), bn=1, tid=None, early=False, sync_start=False):
    op = {"op": "submit", "kernel": kernel, "args": []}
    if tid:
        op["id"] = tid
    if bn != 1:
        op["block_num"] = bn
    if deps:
        op["deps"] = list(deps)
    if early:
        op["early_resolve"] = True
    if sync_start:
        op["sync_start"] = True
    return op


def dummy(tid, deps=()):
    op = {"op": "dummy", "id": tid}
    if deps:
        op["deps"] = list(deps)
    return op


def layer():
    """One layer's body (inside the manual scope); `normed` is the previous layer's normed producer."""
    b = []
    b.append(dummy("barrier1"))
    b.append(submit("attn_out_seed", tid="attn_out_seed", early=True))
    b.append(submit("rms_recip", ["normed", "barrier1"], tid="rms_recip", early=True))
    b.append(submit("q_seed", tid="q_seed", early=True))
    b.append(submit("q_proj", ["normed", "q_seed"], bn=50, tid="q_proj", early=True))
    b.append(submit("kv_seed", ["normed", "barrier1"], tid="kv_seed"))
    b.append(submit("mlp_out_seed", ["normed", "barrier1"], tid="mlp_out_seed", early=True))
    b.append(submit("k_proj", ["kv_seed"], bn=10, tid="k_proj", early=True))
    b.append(submit("v_proj", ["kv_seed"], bn=10, tid="v_proj", early=True))
    b.append(submit("attention", ["q_proj", "k_proj", "v_proj", "rms_recip", "tiling", "attn_out_seed",
                                  "mlp_out_seed"], bn=24, tid="attention", sync_start=True, early=True))
    b.append(dummy("barrier2", ["attention"]))
    for i in range(26):  # out_proj: n = idx/5, k = idx%5
        b.append(submit("out_proj", ["barrier2"], tid=f"op{i}"))
    b.append(submit("out_proj_0", ["attention"], bn=24, tid="op_0"))
    # out slots 0-25 are the 26 out_proj tasks, 26-49 the out_proj_0 task
    slot = [f"op{i}" for i in range(26)] + ["op_0"] * 24
    casts = ["residual_rms_cast", "residual_rms_cast_0", "residual_rms_cast_1", "residual_rms_cast_2",
             "residual_rms_cast_3"]
    for k, name in enumerate(casts):
        b.append(submit(name, list(dict.fromkeys(slot[10 * k:10 * k + 10])), tid=f"cast{k}", early=True))
    # deps in slot order (deps.json keeps a task's explicit deps in the order passed)
    b.append(submit("post_rms_reduce", list(dict.fromkeys(slot)), tid="post_rms"))
    gate_names = ["gate_proj", "gate_proj_0", "gate_proj_1", "gate_proj_2", "gate_proj_3"]
    up_names = ["up_proj", "up_proj_0", "up_proj_1", "up_proj_2", "up_proj_3"]
    for k in range(5):  # a pair of barriers, gate_k, up_k: all on cast_k
        b.append(dummy(f"bar{3 + 2 * k}", [f"cast{k}"]))
        b.append(dummy(f"bar{4 + 2 * k}", [f"cast{k}"]))
        b.append(submit(gate_names[k], [f"cast{k}"], bn=6, tid=f"gate{k}"))
        b.append(submit(up_names[k], [f"cast{k}"], bn=6, tid=f"up{k}"))
    for n in range(6, 17):
        for k in range(5):
            b.append(submit("gate_proj_4", [f"bar{3 + 2 * k}"], tid=f"g4_{n}_{k}"))
            b.append(submit("up_proj_4", [f"bar{4 + 2 * k}"], tid=f"u4_{n}_{k}"))
    for n in range(17):
        if n < 6:
            producers = [f"gate{k}" for k in range(5)] + [f"up{k}" for k in range(5)]
        else:
            producers = [f"g4_{n}_{k}" for k in range(5)] + [f"u4_{n}_{k}" for k in range(5)]
        b.append(submit("silu", ["post_rms"] + producers, tid=f"silu{n}"))
    for n in range(5):
        for k in range(17):
            b.append(submit("down_proj", [f"silu{k}"], tid=f"down{n}_{k}", early=True))
    b.append(submit("dcr_xgamma", [f"down{n}_{k}" for n in range(5) for k in range(17)], bn=5, tid="normed", early=True))
    return b


def program(layers):
    hidden = [{"bind": "hidden", "shape": [16, 5120], "dtype": "bf16"}]
    p = [{"op": "alloc", "outputs": hidden, "id": "alloc0"},
         submit("pa_tiling_cce", tid="tiling", early=True),
         dummy("prefix_barrier"),
         submit("copy_hidden", ["prefix_barrier"], tid="copy_hidden"),
         submit("xgamma0", ["copy_hidden"], bn=5, tid="normed", early=True)]
    body = [{"op": "alloc", "outputs": [{"bind": "qkv", "shape": [16, 7168], "dtype": "bf16"}]},
            {"op": "alloc", "outputs": [{"bind": "mlp", "shape": [16, 17408], "dtype": "bf16"}]},
            {"op": "scope", "mode": "manual", "site": "decode_fwd_layers.cpp:layer_body", "body": layer()}]
    p.append({"op": "for", "var": "layer", "to": layers, "body": [
        {"op": "scope", "site": "decode_fwd_layers.cpp:layer", "body": body}]})
    p.append(submit("copy_out", ["normed"]))
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=40)
    ap.add_argument("--out", default="traces/qwen3_decode.json")
    a = ap.parse_args()
    t = {"npusim_trace": 1, "name": "qwen3_decode",
         "x_about": "qwen3_14b decode, %d layers (simpler's qwen3_14b_decode example; 277 tasks a layer), kernel durations from "
                    "huawei-csl/simpler docs/asim/calib/qwen_decode_fwd_graph.calib. Generated by tools/gen_qwen3_decode.py." % a.layers,
         "kernels": kernels(), "program": program(a.layers)}
    with open(a.out, "w") as f:
        json.dump(t, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
