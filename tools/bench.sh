#!/usr/bin/env bash
# npusim speed benchmark (docs/testing.md, "Benchmark"; the targets of docs/speed.md).
# Each row is the median of N runs of one workload; beside it the target and
# whether it is met, and for the throughput rows how many times slower npusim
# is per task than the floor: tools/floor.cpp, a plain C++ event loop over
# the same count of trivial tasks (one ready push/pop, one timed event, one
# fanin decrement each; built as npusim-floor). Under the 1M row, the SystemC
# floor: what one timed wait of an SC_THREAD costs (tools/floor_systemc.cpp,
# npusim-floor-sc), times the kernel's evaluation rounds per task of the run
# (summary.json's sim.systemc_deltas): the most tasks/s any model could reach
# that wakes the kernel that often per task.
#
# A row is judged on CPU seconds (user + system, all threads), not wall: the
# simulation is single-threaded, so on an idle machine the two agree, and on
# a shared one CPU time is what stays readable. Wall medians are shown too.
#
#   tools/bench.sh [N]                 (default N=5)
#   BUILD=build tools/bench.sh         (the build directory: npusim, npusim-floor)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5}
build=${BUILD:-build}
bin=$build/npusim
floor=$build/npusim-floor
floor_sc=$build/npusim-floor-sc
timer=$build/npusim-timed
for b in "$bin" "$floor" "$floor_sc" "$timer"; do
  [ -x "$b" ] || { echo "bench: $b not built (run ./setup.sh build)" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The binaries' pages in the page cache are written back and dropped, so each
# is read back by readahead before it is timed. Where a freshly linked or
# copied binary's pages happen to lie decides a run's speed by up to 7 % on
# this host (docs/speed.md, "Where the binary's pages lie"): the same bytes
# at another place timed 1.21 s against 1.13 s, every run, until dropped.
for b in "$bin" "$floor" "$floor_sc"; do
  sync "$b" && dd if="$b" iflag=nocache count=0 status=none || true
done

OFF=(--swimlane-level 0 --no-deps --no-scope-stats --no-task-stats)
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ms() { awk '{printf "%.3f", $1}'; }  # seconds to the millisecond
field() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" "$2" | head -1; }

# timed FILE CMD...: runs CMD and writes "WALL USER SYS MAXRSS_KB" to FILE
# (tools/timed.cpp: GNU time's figures, the times to the microsecond where
# its %U and %S print hundredths, too coarse for the 0.1 s row).
timed() { "$timer" "$@"; }

# measure TRACE ARGS...: sets WALL, CPU, SYS (medians, s; SYS the system time alone), RSS (median, MB), TASKS, DELTAS (SystemC
# evaluation rounds), BYTES (outputs).
# run_once TRACE ARGS...: one run of TRACE into $out/run (emptied first),
# its figures in $out/time.
run_once() {
  local trace=$1; shift
  rm -rf "$out/run"
  timed "$out/time" "$bin" run "$trace" --out "$out/run" --quiet "$@"
}

measure() {
  local trace=$1; shift
  local walls=() cpus=() rss=() syss=()
  for ((i = 0; i < n; i++)); do
    run_once "$trace" "$@"
    read -r w u s kb < "$out/time"
    walls+=("$w"); syss+=("$s"); cpus+=("$(echo "$u $s" | awk '{print $1 + $2}')"); rss+=("$(echo "$kb" | awk '{printf "%.1f", $1 / 1024}')")
  done
  WALL=$(printf '%s\n' "${walls[@]}" | median | ms)
  SYS=$(printf '%s\n' "${syss[@]}" | median | ms)
  CPU=$(printf '%s\n' "${cpus[@]}" | median | ms)
  RSS=$(printf '%s\n' "${rss[@]}" | median)
  TASKS=$(field submitted "$out/run/summary.json")
  DELTAS=$(field systemc_deltas "$out/run/summary.json")
  BYTES=$(du -sb "$out/run" | cut -f1)
}

floor_rate() {  # floor_rate TASKS: median tasks per CPU second of the floor loop
  for ((i = 0; i < n; i++)); do "$floor" "$1" | sed -n 's/.*  \([0-9]*\) tasks\/s.*/\1/p'; done | median
}

# row LABEL VALUE TARGET-TEXT MET [FLOOR-RATIO]
row() { printf '%-40s %-34s %-16s %-4s %s\n' "$1" "$2" "$3" "$4" "${5:-}"; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN {print (a >= b ? "yes" : "no")}'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN {print (a <= b ? "yes" : "no")}'; }
rate() { awk -v t="$1" -v s="$2" 'BEGIN {printf "%.0f", (s > 0 ? t / s : 0)}'; }
ratio() { awk -v f="$1" -v r="$2" 'BEGIN {printf "floor x%.1f", (r > 0 ? f / r : 0)}'; }

echo "npusim benchmark: median of $n runs, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
floor_1m=$(floor_rate 1000244)
floor_100k=$(floor_rate 100230)
echo "floor (npusim-floor, a plain event loop): $floor_1m tasks/s (1,000,244 tasks), $floor_100k tasks/s (100,230)"
wait_ns=$(for ((i = 0; i < n; i++)); do "$floor_sc" | sed -n 's/.*  \([0-9.]*\) ns per wait.*/\1/p'; done | median)
echo "SystemC floor (npusim-floor-sc, 4 SC_THREADs waiting): $wait_ns ns of CPU per timed wait"
# What the host charges for memory a run touches for the first time, which
# the rows with every output on pay in system time: fresh memory (their
# heap and the collectors' arrays, on transparent huge pages) and writes to
# the page cache (bench_pa_100k writes 516 MiB) in the directory the runs
# write to (tools/host_memory.py; CPU per 100 MiB, medians of N). On a
# virtual machine that gives freed memory back to its host both can move by
# up to 3x from one minute to the next (docs/speed.md, "The seventeenth
# speed session").
for ((i = 0; i < n; i++)); do python3 tools/host_memory.py "$out"; done > "$out/host_memory"
fresh=$(cut -d' ' -f1 "$out/host_memory" | median)
pc=$(cut -d' ' -f2 "$out/host_memory" | median)
echo "host memory: fresh $fresh ms, page-cache writes $pc ms of CPU per 100 MiB"
echo
row "workload" "measured (cpu; wall)" "target" "met" "npusim vs floor"

measure traces/bench_pa_1m.json "${OFF[@]}"
r=$(rate "$TASKS" "$CPU")
row "1M tasks, outputs off" "$r tasks/s (${CPU} s; ${WALL} s)" ">= 1000000/s" "$(ge "$r" 1000000)" "$(ratio "$floor_1m" "$r")"
per_task=$(awk -v d="$DELTAS" -v t="$TASKS" 'BEGIN {printf "%.2f", d / t}')
# The kernel alone's rate; with the AICPU clock running ahead the rounds are
# a handful in all (no per-task cap): the count is printed instead.
cap=$(awk -v d="$DELTAS" -v t="$TASKS" -v w="$wait_ns" 'BEGIN {if (d * w > 0 && d / t >= 0.005) printf "kernel alone: %.0f/s", 1e9 * t / (d * w); else printf "%d rounds in all", d}')
row "1M tasks: SystemC rounds per task" "$per_task ($cap)" "<= 2" "$(le "$per_task" 2)"
row "1M tasks, outputs off: peak memory" "${RSS} MB" "<= 13 MB" "$(le "$RSS" 13)"

measure traces/bench_pa_100k.json
r=$(rate "$TASKS" "$CPU")
row "100k tasks, every output on" "$r tasks/s (${CPU} s; ${WALL} s)" ">= 150000/s" "$(ge "$r" 150000)" "$(ratio "$floor_100k" "$r")"
echo "  its system time (median; fresh memory and the page cache, above): ${SYS} s"
plain_mb=$(echo "$BYTES" | awk '{printf "%.0f", $1 / 1048576}')
# The gzip row is a ratio of walls, and the compressed run's wall moves with
# the host more than the plain run's (docs/speed.md): N pairs of a plain and
# a compressed run, one right after the other, and the median of the pairs'
# ratios, so that a change of the host's state between two batches of runs
# does not read as a ratio. The pairs take turns going first (ABBA), so what
# the run before leaves behind (its 516 MB of outputs being removed, the
# page cache) falls on both sides alike. Beside the ratio the medians of the
# walls and the pairs' range.
wall_of() {  # wall_of ARGS...: one run of bench_pa_100k with every output on; prints its wall
  run_once traces/bench_pa_100k.json "$@"
  local w _r
  read -r w _r < "$out/time"
  echo "$w"
}
pw=() gw=() pr=()
for ((i = 0; i < n; i++)); do
  if ((i % 2 == 0)); then
    a=$(wall_of); b=$(wall_of --compress gzip)
    gz_bytes=$(du -sb "$out/run" | cut -f1)
  else
    b=$(wall_of --compress gzip)
    gz_bytes=$(du -sb "$out/run" | cut -f1)
    a=$(wall_of)
  fi
  pw+=("$a"); gw+=("$b"); pr+=("$(awk -v a="$a" -v b="$b" 'BEGIN {print (a > 0 ? b / a : 0)}')")
done
gz_mb=$(echo "$gz_bytes" | awk '{printf "%.0f", $1 / 1048576}')
plain_wall=$(printf '%s\n' "${pw[@]}" | median | ms)
gz_wall=$(printf '%s\n' "${gw[@]}" | median | ms)
gz_ratio=$(printf '%s\n' "${pr[@]}" | median | awk '{printf "%.2f", $1}')
gz_range=$(printf '%s\n' "${pr[@]}" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.2f-%.2f", lo, hi}')
row "100k tasks, every output on, gzip" "wall ${gz_ratio}x (pairs ${gz_range}; ${gz_wall} s vs ${plain_wall} s; ${gz_mb} vs ${plain_mb} MB)" "<= 1.3x" "$(le "$gz_ratio" 1.3)"

measure traces/paged_attention_case1.json "${OFF[@]}"
row "Case1 ($TASKS tasks), outputs off" "${CPU} s (${WALL} s)" "<= 0.1 s" "$(le "$CPU" 0.1)"
measure traces/paged_attention_case1.json
row "Case1, every output on" "${CPU} s (${WALL} s)" "<= 0.45 s" "$(le "$CPU" 0.45)"

python3 tools/gen_flat_program.py 320000 "$out/flat.json"
loads=()
for ((i = 0; i < n; i++)); do
  timed "$out/time" "$bin" check -q "$out/flat.json"
  loads+=("$(awk '{print $2 + $3}' "$out/time")")
done
load=$(printf '%s\n' "${loads[@]}" | median | ms)
row "load a flat program of 320,000 ops" "${load} s" "< 2 s" "$(awk -v a="$load" 'BEGIN {print (a < 2 ? "yes" : "no")}')"
rm -f "$out/flat.json"

# Loading that streams (docs/trace-format.md, "How a trace is loaded").
python3 tools/gen_flat_program.py --scoped-submits 320000 "$out/scoped.json"
loads=(); mems=()
for ((i = 0; i < n; i++)); do
  timed "$out/time" "$bin" check -q "$out/scoped.json"
  loads+=("$(awk '{print $2 + $3}' "$out/time")"); mems+=("$(awk '{printf "%.1f", $4 / 1024}' "$out/time")")
done
rm -f "$out/scoped.json"
load=$(printf '%s\n' "${loads[@]}" | median | ms)
mem=$(printf '%s\n' "${mems[@]}" | median)
row "check a flat program of 320,000 scoped submits" "${load} s, ${mem} MB" "< 2 s, < 100 MB" \
  "$(awk -v a="$load" -v m="$mem" 'BEGIN {print (a < 2 && m < 100 ? "yes" : "no")}')"
python3 tools/gen_flat_program.py --scoped-submits 1000000 "$out/flat1m.json"
measure "$out/flat1m.json" "${OFF[@]}"
rm -f "$out/flat1m.json"
row "run a flat million-task trace: peak memory" "${RSS} MB ($TASKS tasks, ${CPU} s)" "< 200 MB" "$(awk -v a="$RSS" 'BEGIN {print (a < 200 ? "yes" : "no")}')"
