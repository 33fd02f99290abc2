#!/bin/sh
# The adversarial pass's replay (docs/fuzzing.md, "Adversarial passes"): runs
# `npusim run` (not only the loader, as the fuzz targets do) on every input of
# the trace fuzz corpus and every malformed trace of the tests, each with a
# time limit, and reports any run that exits with a status other than 0, 1
# or 2, is killed by a signal, times out, or leaves anything behind beside its
# output folder. Prints one line per finding and a count; exits 1 if any.
#   tools/adversarial_replay.sh [BUILD_DIR] [SECONDS_PER_RUN]
build=${1:-build}
limit=${2:-20}
bin=$(cd "$build" && pwd)/npusim
work=${TMPDIR:-/tmp}/npusim-adversarial-$$
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT INT TERM
n=0 bad=0
for f in tests/fuzz/corpus/trace/* tests/data/bad/*.json traces/fatal/*.json; do
  [ -f "$f" ] || continue
  case "$f" in *.expect) continue ;; esac
  n=$((n + 1))
  rm -rf "$work/p"
  mkdir -p "$work/p"
  timeout -s KILL "$limit" nice "$bin" run "$f" --out "$work/p/out" --quiet --no-suggest >/dev/null 2>"$work/err"
  rc=$?
  left=$(ls -A "$work/p" | grep -v '^out$')
  if [ "$rc" -gt 2 ] || [ -n "$left" ] || { [ "$rc" = 2 ] && [ -e "$work/p/out" ]; }; then
    bad=$((bad + 1))
    echo "FINDING $f: exit $rc, left: ${left:-nothing}; $(head -c 300 "$work/err")"
  fi
done
echo "replayed $n inputs: $bad finding(s)"
[ "$bad" = 0 ]
