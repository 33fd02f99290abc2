#!/usr/bin/env python3
"""Writes the one-phase allreduce over 2, 4 and 8 chips (traces/allreduce/):
one trace per chip count and a distributed worker file running it on every
chip. The kernel's phases mirror simpler's
examples/workers/l3/allreduce/kernels/aiv/allreduce_onephase_kernel.cpp
(kernel_entry): stage the input into this chip's scratch window, TNOTIFY an
atomic add to every peer, TWAIT for every peer's notification, TLOAD the own
scratch, then each peer's scratch in turn with a TADD, TSTORE the output.
The arithmetic of the expected times: docs/interconnect.md.

    tools/gen_allreduce.py [OUT_DIR]      (default traces/allreduce)
"""
import json
import os
import sys

COUNT = 256            # ALLREDUCE_COUNT floats
BYTES = COUNT * 4      # one fp32 tile: 1024 bytes
TADD_NS = 50           # the vector add of one tile (this example's assumption)


def kernel_body(n, nbytes=BYTES, tadd_ns=TADD_NS):
    """The kernel's phases on n chips, for one tile of nbytes reduced with a
    TADD of tadd_ns per peer (tools/gen_tp_ffn.py reuses it for its partial
    outputs)."""
    tile = {"bytes": nbytes}
    body = [
        {"load": dict(arg=0, **tile)},                      # TLOAD(stageTile, input)
        {"store": dict(arg=2, **tile)},                     # TSTORE(scratch, stageTile)
    ]
    body += [{"notify": {"peer_offset": k, "flag": 0}} for k in range(1, n)]  # TNOTIFY(peer's slot, AtomicAdd)
    body.append({"wait_flag": {"flag": 0, "count": n - 1}})                   # TWAIT(every peer's slot >= 1)
    body.append({"load": dict(arg=2, **tile)})                                # TLOAD(accTile, own scratch)
    for k in range(1, n):                                                     # each peer in turn
        body.append({"load": dict(arg=2, peer_offset=k, **tile)})             # TLOAD(recvTile, peer's scratch)
        body.append({"compute": {"ns": tadd_ns}})                             # TADD(acc, acc, recv)
    body.append({"store": dict(arg=1, **tile)})                               # TSTORE(output, accTile)
    return body


def trace(n):
    return {
        "npusim_trace": 1,
        "name": f"allreduce_onephase_{n}",
        "x_about": f"One-phase allreduce of {COUNT} fp32 over {n} chips, the same program on every chip "
                   "(tools/gen_allreduce.py; simpler examples/workers/l3/allreduce). Run it through "
                   f"worker_{n}.json; docs/interconnect.md has the arithmetic of its time.",
        "kernels": {"ALLREDUCE": {"func_id": 0, "core": "aiv", "body": kernel_body(n)}},
        "tensors": {
            "input": {"shape": [COUNT], "dtype": "fp32"},
            "scratch": {"shape": [COUNT], "dtype": "fp32"},
        },
        "program": [
            {"op": "submit", "kernel": "ALLREDUCE", "args": [
                {"in": "input"}, {"out": "output", "shape": [COUNT], "dtype": "fp32"}, {"inout": "scratch"}]}
        ],
    }


def worker_doc(n, about, trace_name, rings=None):
    """A distributed worker of n chips running `trace_name` once; `rings`
    (ring_* sizes) are both its prepare and the dispatch's config."""
    dispatch = {"trace": trace_name}
    if rings is not None:
        dispatch["config"] = rings
    return {
        "npusim_worker": 1,
        "x_about": about,
        "worker": {"kind": "distributed", "chips": n},
        "prepare": rings,
        "dispatches": [dispatch],
    }


def write_examples(folder, prefix, trace_of, worker_of):
    """PREFIX_N.json and worker_N.json for 2, 4 and 8 chips, into `folder`
    (the first argument overrides it)."""
    out = sys.argv[1] if len(sys.argv) > 1 else folder
    os.makedirs(out, exist_ok=True)
    for n in (2, 4, 8):
        for name, doc in ((f"{prefix}_{n}.json", trace_of(n)), (f"worker_{n}.json", worker_of(n))):
            with open(os.path.join(out, name), "w") as f:
                json.dump(doc, f, indent=1)
                f.write("\n")


def worker(n):
    return worker_doc(n, f"The one-phase allreduce on {n} chips of one node (tools/gen_allreduce.py).",
                      f"allreduce_onephase_{n}.json")


def main():
    write_examples(os.path.join(os.path.dirname(__file__), "..", "traces", "allreduce"), "allreduce_onephase",
                   trace, worker)


if __name__ == "__main__":
    main()
