#!/usr/bin/env python3
"""The 2-deep pipeline share of a run: of the block starts that have a
previous block on the same core, the share dispatched while that previous
block was still running (its pending slot), overall and per core type.

    tools/pending_share.py RUN_DIR | chip_swimlane_records.json[.gz] [--json]

Definition (docs/conformance.md, "The 2-deep pipeline share"): per core, the
blocks in dispatch order (aicpu_tasks' dispatch time, joined to aicore_tasks
by core and register token); for each consecutive pair (previous, next) the
next block counts as "into the pending slot" when its AICPU dispatch time is
strictly before the AICore end time of the previous block. A core's first
block has no previous block and is not counted (the 72 first starts of a
full a2a3 run). Needs the AICPU timestamps: --swimlane-level 2 or more (the
default, 3). Times are the swimlane's counter ticks (20 ns on a2a3), so a
dispatch in the same tick as the previous end does not count.
"""
import gzip
import json
import os
import sys
from collections import defaultdict


def load(path):
    if os.path.isdir(path):
        for name in ("chip_swimlane_records.json", "chip_swimlane_records.json.gz"):
            if os.path.exists(os.path.join(path, name)):
                path = os.path.join(path, name)
                break
        else:
            sys.exit(f"pending_share: {path}: no chip_swimlane_records.json(.gz) in it")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return path, json.load(f)


def share(rec):
    types = rec["metadata"]["core_types"]
    dispatch = {(r[0], r[1]): r[2] for r in rec["aicpu_tasks"]}
    blocks = defaultdict(list)
    for r in rec["aicore_tasks"]:
        core, _task, token, _start, end = r[:5]
        if (core, token) not in dispatch:
            sys.exit(f"pending_share: aicore_tasks row {r} has no aicpu_tasks row (level 2 or more needed)")
        blocks[core].append((dispatch[(core, token)], end))
    counts = defaultdict(lambda: [0, 0])  # type -> [pairs, into the pending slot]
    for core, rows in blocks.items():
        rows.sort()
        for (_, prev_end), (nxt_dispatch, _) in zip(rows, rows[1:]):
            for key in (types[core], "all"):
                counts[key][0] += 1
                counts[key][1] += nxt_dispatch < prev_end
    return {k: {"starts": n, "pending": p, "share_pct": round(100.0 * p / n, 1) if n else None}
            for k, (n, p) in sorted(counts.items())}


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    if len(args) != 1:
        sys.exit(__doc__)
    path, rec = load(args[0])
    if not rec.get("aicpu_tasks"):
        sys.exit(f"pending_share: {path}: no aicpu_tasks (written at --swimlane-level 2 or more)")
    out = share(rec)
    if "--json" in sys.argv:
        print(json.dumps(out, indent=1))
        return
    for k, v in out.items():
        print(f"{k:4s} {v['pending']:6d} of {v['starts']:6d} starts into the pending slot  {v['share_pct']:5.1f} %")


if __name__ == "__main__":
    main()
