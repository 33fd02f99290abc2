#!/usr/bin/env python3
"""A flat trace of N ops, for the loading benchmarks (tools/bench.sh,
tools/bench_load.sh): how fast, and in how much memory, a long program
without loops loads, is checked and runs.

  tools/gen_flat_program.py N FILE                  N `let` ops
  tools/gen_flat_program.py --scoped-submits N FILE N scopes, each around one
      submit of a one-block kernel that reads the previous submit's output
      and writes its own (a chain of N tasks)
"""
import sys

args = sys.argv[1:]
scoped = args[0] == "--scoped-submits"
if scoped:
    args = args[1:]
n, path = int(args[0]), args[1]
with open(path, "w") as f:
    f.write('{"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 1}}}, ')
    if not scoped:
        f.write('"program": [')
        op = '{"op": "let", "var": "v", "value": 1}'
        f.write(", ".join([op] * n))
        f.write("]}")
    else:
        f.write('"tensors": {"x": {"shape": [16], "dtype": "fp32"}}, "program": [')
        first = ('{"op": "scope", "body": [{"op": "submit", "kernel": "K", '
                 '"args": [{"in": "x"}, {"out": "y", "shape": [16], "dtype": "fp32"}]}]}')
        op = ('{"op": "scope", "body": [{"op": "submit", "kernel": "K", '
              '"args": [{"in": "y"}, {"out": "y", "shape": [16], "dtype": "fp32"}]}]}')
        f.write(first)
        for _ in range(n - 1):
            f.write(", ")
            f.write(op)
        f.write("]}")
