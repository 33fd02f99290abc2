// libFuzzer target: the expression parser and evaluator (models/common/expr.h), checked against an
// independent reference evaluator in 128-bit arithmetic.
// Build and run: docs/fuzzing.md. The body is npusim::fuzz::expr_one (targets.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  npusim::fuzz::expr_one(data, size);
  return 0;
}

// libsystemc (linked because the project's libraries use SystemC) has a main()
// that calls sc_main. libFuzzer's main, linked into this executable, is the one
// that runs; if libsystemc's ever did, this says so instead of fuzzing nothing.
extern "C" int sc_main(int, char*[]) {
  std::fprintf(stderr, "fuzz_expr: libsystemc's main() ran instead of libFuzzer's\n");
  std::abort();
}
