# The environment of the sanitized test run (ASan + UBSan), sourced by
# setup.sh; docs/testing.md explains each setting. By hand:
#   . tests/sanitizer/sanitizer.sh
#   sanitizer_env build-asan/sanitizer-logs
#   ctest --test-dir build-asan -j2 --output-on-failure
#   sanitizer_check build-asan/sanitizer-logs
#
# asan.options, ubsan.options: plain key=value lines (the sanitizers' include=
# files take no comments):
#   exitcode=86            an ASan/LSan report fails with 86, never with npusim's
#                          own statuses (1 = device failure, 2 = input error), so
#                          a test that expects 1 cannot pass over a report
#   detect_leaks=1         LeakSanitizer at exit (the default on x86_64, stated)
#   check_initialization_order=1, strict_init_order=1
#                          static initialisers that read another TU's globals
#   print_stacktrace=1, halt_on_error=1 (UBSan): a stack with every report, and
#                          stop at the first (the build also has -fno-sanitize-recover)
#
# log_path: SystemC runs each SC_THREAD on a QuickThreads coroutine stack that
# ASan does not know about (Debian's libsystemc is not built with ASan's fiber
# annotations). When a C++ exception is thrown on such a stack (an input error
# found by the interpreter inside the orchestrator thread, by design), ASan
# prints once per process "WARNING: ASan is ignoring requested
# __asan_handle_no_return ... False positive error reports may follow", on
# stderr, which the tests compare byte for byte. So ASan writes to files in the
# log directory instead, and sanitizer_check fails the run if any file holds a
# report; files with only that warning are counted, not failed. UBSan reports
# stay on stderr (they abort the test, and ctest shows them).
_sanitizer_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

sanitizer_env() {  # sanitizer_env LOGDIR
  rm -rf "$1" && mkdir -p "$1"
  local logs
  logs=$(cd "$1" && pwd)
  export ASAN_OPTIONS="include=$_sanitizer_dir/asan.options:log_path=$logs/asan"
  export UBSAN_OPTIONS="include=$_sanitizer_dir/ubsan.options"
}

sanitizer_check() {  # sanitizer_check LOGDIR: 0 if no report was written
  local f bad=0 warned=0
  for f in "$1"/asan.*; do
    [ -e "$f" ] || continue
    if grep -q -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|Sanitizer has encountered a fatal error" "$f"; then
      echo "sanitizer report in $f:" >&2
      cat "$f" >&2
      bad=1
    else
      warned=$((warned + 1))
    fi
  done
  echo "sanitizers: $([ $bad = 0 ] && echo "no report" || echo "REPORTS (above)");" \
       "$warned process(es) threw on a SystemC coroutine stack (ASan's no_return warning, expected)"
  return $bad
}
