// The AICPU threads' fibers with the native switch (x86-64 or AArch64
// assembly; models/aicpu/fiber.cpp).
#define FIBER_CASE_TAG "native"
#define FIBER_CASE_NS test_fiber_native
#include "tests/fiber_cases.h"
