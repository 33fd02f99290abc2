#!/usr/bin/env python3
"""A flat trace of N `let` ops, for the loading benchmarks (tools/bench.sh,
tools/bench_load.sh): how fast a long program without loops loads.

  tools/gen_flat_program.py N FILE
"""
import sys

n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write('{"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 1}}}, "program": [')
    op = '{"op": "let", "var": "v", "value": 1}'
    f.write(", ".join([op] * n))
    f.write("]}")
