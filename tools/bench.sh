#!/usr/bin/env bash
# npusim speed benchmark: simulated tasks per host second and peak memory on a
# 100,230-task trace (paged attention's structure at batch 390), with every
# output on (the default) and with every output off, median of N runs each
# (machines are shared and noisy: read ratios and medians); then one run of a
# 1,000,244-task trace with the swimlane and deps.json off, whose peak memory
# shows that memory follows the rings' live window, not the task count.
#
#   tools/bench.sh [N] [TRACE]        (default N=5, traces/bench_pa_100k.json)
#   NPUSIM=build/npusim tools/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5}
trace=${2:-traces/bench_pa_100k.json}
bin=${NPUSIM:-build/npusim}
[ -x "$bin" ] || { echo "bench: $bin not built (run ./setup.sh build)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" "$2" | head -1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

run_mode() {  # run_mode LABEL ARGS...
  local label=$1; shift
  local walls=() rates=() rss=() tasks=0
  for ((i = 0; i < n; i++)); do
    rm -rf "$out/run"
    "$bin" run "$trace" --out "$out/run" --quiet "$@"
    walls+=("$(field wall_seconds "$out/run/summary.json")")
    rates+=("$(field tasks_per_second "$out/run/summary.json")")
    rss+=("$(field peak_rss_mb "$out/run/summary.json")")
    tasks=$(field submitted "$out/run/summary.json")
  done
  local bytes
  bytes=$(du -sb "$out/run" | cut -f1)
  printf '%-12s %8d tasks  median %7.3f s  %9.0f tasks/s  peak RSS %6.1f MB  outputs %6.1f MB\n' \
    "$label" "$tasks" "$(printf '%s\n' "${walls[@]}" | median)" "$(printf '%s\n' "${rates[@]}" | median)" \
    "$(printf '%s\n' "${rss[@]}" | median)" "$(echo "$bytes" | awk '{print $1/1048576}')"
}

echo "npusim benchmark: $trace, median of $n runs ($(nproc) cores)"
run_mode "outputs on"
run_mode "outputs off" --swimlane-level 0 --no-deps --no-scope-stats --no-task-stats
if [ "${2:-}" = "" ]; then
  trace=traces/bench_pa_1m.json n=1 run_mode "1M, no swim" --swimlane-level 0 --no-deps
fi
