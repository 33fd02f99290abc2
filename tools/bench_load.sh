#!/bin/sh
# Trace loading speed (docs/outputs.md, issue 12): prints the wall time of
# `npusim check` on a flat program of N ops (default 320,000) and on a trace
# of about 200 MB, and their peak memory. A benchmark, not a test.
#   tools/bench_load.sh [BUILD_DIR] [N]
set -e
build=${1:-build}
n=${2:-320000}
dir=${TMPDIR:-/tmp}/npusim-bench-load-$$
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT INT TERM
gen() {  # gen COUNT FILE
  python3 "$(dirname "$0")/gen_flat_program.py" "$1" "$2"
}
run() {  # run FILE LABEL
  /usr/bin/time -f "%e %M" -o "$dir/time" "$build/npusim" check -q "$1"
  read -r secs kb < "$dir/time"
  printf '%-32s %10s bytes  %6.2f s  peak %6d MB\n' "$2" "$(wc -c < "$1")" "$secs" "$((kb / 1024))"
}
gen "$n" "$dir/flat.json"
run "$dir/flat.json" "flat program, $n ops"
gen 5300000 "$dir/big.json"
run "$dir/big.json" "flat program, 5,300,000 ops"
