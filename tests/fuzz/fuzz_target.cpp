// One libFuzzer target per function of targets.h: CMake compiles this file
// once per target with NPUSIM_FUZZ_TARGET set to trace_one, expr_one or
// platform_one (docs/fuzzing.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/targets.h"

#ifndef NPUSIM_FUZZ_TARGET
#error "NPUSIM_FUZZ_TARGET must name a function of tests/fuzz/targets.h"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  npusim::fuzz::NPUSIM_FUZZ_TARGET(data, size);
  return 0;
}

// libsystemc (linked because the project's libraries use SystemC) has a main()
// that calls sc_main. libFuzzer's main, linked into this executable as a whole
// archive, is the one that runs; if libsystemc's ever did, this says so
// instead of fuzzing nothing.
extern "C" int sc_main(int, char*[]) {
  std::fprintf(stderr, "fuzz target: libsystemc's main() ran instead of libFuzzer's\n");
  std::abort();
}
