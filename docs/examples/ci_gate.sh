#!/usr/bin/env bash
# A CI gate on a program's simulated timing (docs/outputs.md, "A CI gate").
#
#   ci_gate.sh TRACE BASELINE [TOLERANCE]
#
# Runs TRACE with npusim into $OUT (default npusim_ci/<trace file name>) and
# compares its summary.json with BASELINE (a committed summary.json of the
# same trace, or a run folder) at TOLERANCE (default 1%): the status,
# device_wall_ns and makespan_ns gate, the other figures are reported. Writes the JUnit report to
# $OUT.junit.xml, appends the markdown table to $GITHUB_STEP_SUMMARY when it
# is set, prints the text table and exits with compare's status: 0 within
# tolerance, 3 a regression, 2 bad input; a run that fails on the simulated
# device exits 1, a launch `npusim check` rejects exits 2 (--strict).
# NPUSIM names the binary (default: npusim on the PATH).
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: ci_gate.sh TRACE BASELINE [TOLERANCE]" >&2
  exit 2
fi
trace=$1
baseline=$2
tolerance=${3:-1%}
npusim=${NPUSIM:-npusim}
name=$(basename "$trace")
out=${OUT:-npusim_ci/${name%.json}}

# --no-host-stats: no wall-clock figures, so an unchanged trace gives the same summary.json.
"$npusim" run "$trace" --out "$out" --quiet --strict --no-host-stats

compare=("$npusim" compare "$baseline" "$out" --tolerance "$tolerance")
"${compare[@]}" --format junit > "$out.junit.xml" || true
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  "${compare[@]}" --format markdown >> "$GITHUB_STEP_SUMMARY" || true
fi
exec "${compare[@]}"
