// The AICPU threads' fibers on the portable path (POSIX ucontext), which
// other architectures use: fiber.cpp compiled again here with
// NPUSIM_FIBER_UCONTEXT, its class in a namespace of its own
// (npusim::fiber_ucontext), beside the native one the model links.
#define NPUSIM_FIBER_UCONTEXT 1
#include "models/aicpu/fiber.cpp"
#define FIBER_CASE_TAG "ucontext"
#define FIBER_CASE_NS test_fiber_ucontext
#include "tests/fiber_cases.h"
