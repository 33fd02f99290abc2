#!/usr/bin/env bash
# Host cost per transfer, not per byte (docs/gm.md "Host cost"): runs
# tests/data/trace/big_stores.json (four tasks, each storing 256 GiB) and
# fails unless it takes under LIMIT seconds of wall time (default 1).
#
#   tools/bench_transfer.sh [NPUSIM] [LIMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/npusim}
limit=${2:-1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$(date +%s.%N)
"$bin" run tests/data/trace/big_stores.json --out "$out/o" --quiet --no-host-stats
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v l="$limit" 'BEGIN {
  printf "big_stores: %.3f s (limit %s s)\n", e - s, l
  if (e - s >= l) { print "bench_transfer: too slow" > "/dev/stderr"; exit 1 }
}'
