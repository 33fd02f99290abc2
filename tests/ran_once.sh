#!/usr/bin/env bash
# ran_once.sh BINARY LOG: every test case BINARY lists ran exactly once, by the
# LOG its runs appended to (NPUSIM_TEST_RAN_LOG, tests/sc_catch_main.cpp).
# setup.sh test runs it after each ctest pass. It fails on a test case that
# never ran (its ctest entry was split or misnamed: the entries matching
# nothing also fail on their own, with -w NoTests) and on one that ran twice
# (two entries matching it). docs/testing.md.
set -euo pipefail
binary=$1 log=$2
listed=$(mktemp) ran=$(mktemp)
trap 'rm -f "$listed" "$ran"' EXIT
# The names only: Catch2 v2's --list-test-names-only, v3's --list-tests
# --verbosity quiet. v2 exits with the number of test cases it listed, not 0.
# (--help is read whole first: under pipefail, grep -q closing the pipe early
# would fail the binary's write and take v2 for v3.)
list=(--list-test-names-only)
help=$("$binary" --help 2>&1 || true)
grep -q -- --list-test-names-only <<<"$help" || list=(--list-tests --verbosity quiet)
{ "$binary" "${list[@]}" || true; } | sed '/^$/d' | LC_ALL=C sort >"$listed"
[ -s "$listed" ] || { echo "ran_once: $binary lists no test case" >&2; exit 1; }
[ -e "$log" ] || : >"$log"
LC_ALL=C sort "$log" >"$ran"
status=0
# Catch2 v2's console reporter indents a failing test case's header after its
# first ": "; past about column 60 the text left is narrower than a word and
# it prints that header for ever (a failing test then hangs until ctest's
# timeout instead of failing). Keep ": " early in a name, or out of it.
late=$(awk '{ i = index($0, ": "); if (i > 0 && i + 1 > 60) print }' "$listed")
if [ -n "$late" ]; then
  echo "ran_once: test case names with ': ' past column 60 (Catch2's reporter loops on them when they fail):"
  sed 's/^/  /' <<<"$late"; status=1
fi
missing=$(LC_ALL=C comm -23 "$listed" <(LC_ALL=C sort -u "$ran"))
twice=$(LC_ALL=C uniq -d "$ran")
unknown=$(LC_ALL=C comm -13 "$listed" <(LC_ALL=C sort -u "$ran"))
if [ -n "$missing" ]; then
  echo "ran_once: test cases that never ran (is their ctest entry split or misnamed?):"
  sed 's/^/  /' <<<"$missing"; status=1
fi
if [ -n "$twice" ]; then
  echo "ran_once: test cases that ran more than once:"
  sed 's/^/  /' <<<"$twice"; status=1
fi
if [ -n "$unknown" ]; then
  echo "ran_once: runs of test cases the binary does not list:"
  sed 's/^/  /' <<<"$unknown"; status=1
fi
echo "ran_once: $(wc -l <"$ran") run(s) of $(wc -l <"$listed") test case(s) of $(basename "$binary")$([ $status = 0 ] && echo ", each exactly once" || echo ": FAILED")"
exit $status
