#!/usr/bin/env python3
"""Check the flow arrows of a merged_swimlane.json (Chrome/Perfetto trace).

Usage: tools/perfetto_flows.py RUN_DIR/merged_swimlane.json [-v]

Prints one line per flow name: how many flows, how many run backwards in time
(end ts < start ts), and how many endpoints fall outside every slice ("X"
event) of their pid/tid lane. Exit status 1 when any flow is backwards or
unbound, 0 otherwise. docs/outputs.md, "merged_swimlane.json", says what the
arrows are.
"""
import bisect
import collections
import json
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "-v" in sys.argv[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(args[0]) as f:
        events = json.load(f)["traceEvents"]
    # Slices per lane, as (start, end) sorted by start; a point is inside when
    # some slice has start <= ts <= end.
    lanes = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            lanes[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    index = {}
    for k, v in lanes.items():
        v.sort()
        ends, best = [], float("-inf")
        for _, end in v:
            best = max(best, end)
            ends.append(best)
        index[k] = ([s for s, _ in v], ends)

    def inside(e):
        starts, ends = index.get((e["pid"], e["tid"]), ([], []))
        i = bisect.bisect_right(starts, e["ts"] + 1e-9)
        return i > 0 and ends[i - 1] >= e["ts"] - 1e-9

    flows = collections.defaultdict(dict)
    for e in events:
        if e.get("ph") in ("s", "f"):
            flows[e["id"]][e["ph"]] = e
    stats = collections.defaultdict(lambda: [0, 0, 0])
    bad = 0
    for fid in sorted(flows):
        pair = flows[fid]
        s, f = pair.get("s"), pair.get("f")
        name = (s or f)["name"]
        st = stats[name]
        st[0] += 1
        problems = []
        if s is None or f is None:
            problems.append("unpaired")
        else:
            if f["ts"] < s["ts"] - 1e-9:
                st[1] += 1
                problems.append("backwards")
        if any(e is not None and not inside(e) for e in (s, f)):
            st[2] += 1
            problems.append("unbound")
        if problems:
            bad += 1
            if verbose:
                print(f"  {name} id {fid}: {', '.join(problems)}: {s} -> {f}")
    for name in sorted(stats):
        n, back, unbound = stats[name]
        print(f"{name}: {n} flows, {back} backwards, {unbound} with an endpoint outside a slice")
    total = [sum(v[i] for v in stats.values()) for i in range(3)]
    print(f"total: {total[0]} flows, {total[1]} backwards, {total[2]} with an endpoint outside a slice")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
