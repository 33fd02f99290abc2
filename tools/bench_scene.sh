#!/usr/bin/env bash
# The cost of running a program as a scene rather than as a trace: the same
# 200,000 submits (tools/bench_scene/many.cpp and many_trace.json), checked
# (dry run) and simulated. Prints CPU seconds (user + system, the runner
# process included) and the difference per API call. A benchmark, not a
# test: figures vary with the machine and its load.
set -euo pipefail
cd "$(dirname "$0")/.."
NPUSIM=${NPUSIM:-build/npusim}
export NPUSIM_CACHE_DIR=${NPUSIM_CACHE_DIR:-$(mktemp -d)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$NPUSIM" check tools/bench_scene/many.json -q  # compile once
cpu() {  # cpu LABEL ARGS...: prints LABEL and the CPU seconds of `npusim ARGS`
  local label=$1; shift
  /usr/bin/time -f "%U %S" -o "$out/t" "$NPUSIM" "$@" >/dev/null
  awk -v l="$label" '{printf "%-12s %.3f s CPU\n", l, $1 + $2; print $1 + $2 > "/dev/stderr"}' "$out/t" 2>"$out/$label"
}
quiet="-q --no-host-stats --swimlane-level 0 --no-deps --no-scope-stats --no-task-stats"
cpu scene_check check tools/bench_scene/many.json -q
cpu trace_check check tools/bench_scene/many_trace.json -q
cpu scene_run run tools/bench_scene/many.json $quiet --out "$out/s"
cpu trace_run run tools/bench_scene/many_trace.json $quiet --out "$out/t2"
awk -v a="$(cat "$out/scene_check")" -v b="$(cat "$out/trace_check")" -v c="$(cat "$out/scene_run")" -v d="$(cat "$out/trace_run")" \
  'BEGIN { printf "per API call: %.2f us (check), %.2f us (run)\n", (a - b) / 200000 * 1e6, (c - d) / 200000 * 1e6 }'
