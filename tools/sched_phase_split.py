#!/usr/bin/env python3
"""Per scheduler thread: its scheduling window and the share of it spent in
each loop phase, from chip_swimlane_records.json (level >= 3). This is the
split the aSim study reports for its silicon calibration runs
(huawei-csl/simpler docs/asim/log.md, 2026-09-02).

    tools/sched_phase_split.py npusim_out/bgemm_case0/chip_swimlane_records.json
"""
import json
import sys
from collections import defaultdict

rec = json.load(open(sys.argv[1]))
hz = rec["metadata"]["clock_freq_hz"]
us = lambda c: c * 1e6 / hz
for t, phases in enumerate(rec.get("aicpu_scheduler_phases") or []):
    if not phases:
        continue
    start = min(p["start_cycles"] for p in phases)
    end = max(p["end_cycles"] for p in phases)
    wall = us(end - start)
    by = defaultdict(float)
    for p in phases:
        by[p["kind"]] += us(p["end_cycles"] - p["start_cycles"])
    busy = sum(by.values())
    parts = "  ".join(f"{k} {100 * v / wall:5.1f}%" for k, v in sorted(by.items()))
    print(f"thread {t}: window {wall:9.2f} us  {parts}  idle {100 * (wall - busy) / wall:5.1f}%  "
          f"loops {phases[-1]['loop_iter']}")
