// An explicit skip (Catch2 v2 has no SKIP): the test warns "npusim-test-skipped:
// <why>" and returns; ctest marks the entry "Skipped" (SKIP_REGULAR_EXPRESSION
// in tests/CMakeLists.txt) instead of counting it as passed.
#pragma once

#include "tests/catch.h"

#define NPUSIM_SKIP(why)                     \
  do {                                       \
    WARN("npusim-test-skipped: " << why);    \
    return;                                  \
  } while (0)
