// The AICPU threads' fibers with the native switch (x86-64 or AArch64
// assembly; models/aicpu/fiber.cpp).
#define FIBER_CASE_TAG "native"
#define FIBER_CASE_NS test_fiber_native
#include "tests/fiber_cases.h"

#include <string>
#include <vector>

#include "tests/source_scan.h"

namespace {

// The calls and instructions that change the floating-point control state
// (rounding mode, exception masks), outside // comments: "path:line: token".
std::vector<std::string> fp_control_changes(const source_scan::Source& f) {
  static const char* const kTokens[] = {"fesetround(", "fesetenv(",     "feupdateenv(", "feholdexcept(",
                                        "fesetmode(",  "feenableexcept(", "fedisableexcept(", "_mm_setcsr(",
                                        "_FPU_SETCW(", "ldmxcsr",       "fldcw",        "fldenv"};
  std::vector<std::string> found;
  source_scan::for_each_code_line(f.text, [&](int n, const std::string&, const std::string& code) {
    for (const char* t : kTokens)
      if (code.find(t) != std::string::npos) found.push_back(f.path + ":" + std::to_string(n) + ": " + t);
  });
  return found;
}

}  // namespace

// The native switch does not switch the floating-point control state
// (models/aicpu/fiber.h): every AICPU thread runs with the process's, which
// holds only while no code that can run on a fiber changes it.
TEST_CASE("fibers: no code under models/ or sim/ changes the floating-point control state", "[fiber]") {
  std::vector<std::string> found;
  for (const source_scan::Source& f : source_scan::sources_under({"models", "sim"}))
    for (const std::string& hit : fp_control_changes(f)) found.push_back(hit);
  INFO(source_scan::listed(found));
  CHECK(found.empty());
}

TEST_CASE("fibers: the control-state scan sees a planted change and skips a comment", "[fiber]") {
  const source_scan::Source planted{"models/x.cpp", "int a;\n  std::fesetround(FE_UPWARD);\n// fldcw in a comment\n"
                                                    "asm(\"ldmxcsr %0\" : : \"m\"(w));  // restore\n"};
  CHECK(fp_control_changes(planted) ==
        std::vector<std::string>{"models/x.cpp:2: fesetround(", "models/x.cpp:4: ldmxcsr"});
}
