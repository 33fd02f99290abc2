#!/usr/bin/env bash
# Regenerates the golden timing baselines traces/golden/<name>.summary.json
# from the example traces (the big workloads are left out; see below).
# Run after a deliberate model or platform change, review the diff, commit.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${NPUSIM:-build/npusim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for t in traces/*.json; do
  name=$(basename "$t" .json)
  case "$name" in bench_*|paged_attention_case1) continue ;; esac
  # --no-host-stats: no wall-clock figures, so the file is the same on every machine.
  # --swimlane-level 1: figures.overhead needs the swimlane's records (it is null without).
  "$bin" run "$t" --out "$out/$name" --quiet --swimlane-level 1 --no-deps --no-scope-stats --no-host-stats
  cp "$out/$name/summary.json" "traces/golden/$name.summary.json"
  echo "traces/golden/$name.summary.json"
done
