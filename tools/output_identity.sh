#!/usr/bin/env bash
# Byte-identity check for host-speed work: runs every example trace
# (traces/**/*.json, the bench_* workloads left out unless ALL=1) with the
# default outputs and --no-host-stats through two builds, each into its own
# directory, and compares every output file byte for byte.
#
#   tools/output_identity.sh OLD_NPUSIM NEW_NPUSIM [WORKDIR]
#
# Prints one line per trace and exits 0 only when every file of every run is
# identical (exit status included). A speed change must leave this at 0.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 OLD_NPUSIM NEW_NPUSIM [WORKDIR]" >&2; exit 2; }
old=$1 new=$2
work=${3:-$(mktemp -d)}
mkdir -p "$work"
fail=0
while IFS= read -r t; do
  name=${t#traces/}; name=${name%.json}; name=${name//\//_}
  case "$name" in bench_*) [ "${ALL:-0}" = 1 ] || continue ;; esac
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    rm -rf "$work/$side/$name"
    "$bin" run "$t" --out "$work/$side/$name" --quiet --no-host-stats --no-suggest >/dev/null 2>"$work/$side.$name.err"
    echo $? >"$work/$side.$name.rc"
  done
  if [ ! -e "$work/old/$name" ] && [ ! -e "$work/new/$name" ]; then
    # Refused by `run` in both builds (a worker file, a multi-chip program):
    # no output directory; the exit status and the message must agree.
    if cmp -s "$work/old.$name.rc" "$work/new.$name.rc" && cmp -s "$work/old.$name.err" "$work/new.$name.err"; then
      echo "same  $name (exit $(cat "$work/new.$name.rc"), no output, same message)"
    else
      echo "DIFF  $name (no output; exit status or message differs)"
      fail=1
    fi
  elif cmp -s "$work/old.$name.rc" "$work/new.$name.rc" && diff -r -q "$work/old/$name" "$work/new/$name" >/dev/null 2>&1; then
    echo "same  $name (exit $(cat "$work/new.$name.rc"), $(find "$work/new/$name" -type f 2>/dev/null | wc -l) files)"
  else
    echo "DIFF  $name"; diff -r -q "$work/old/$name" "$work/new/$name" | head -5
    fail=1
  fi
done < <(find traces -name '*.json' -not -path 'traces/golden/*' -not -path 'traces/scenes/*' | sort)
[ $fail = 0 ] && echo "output_identity: every output file identical" || echo "output_identity: outputs differ"
exit $fail
