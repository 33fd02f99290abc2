// A fresh SystemC kernel per test (SystemC 2.3.4 has no reset API): swaps the
// global simulation context (sim/engine/fresh_kernel.h). Create it first in a
// TEST_CASE so modules built in the test are destroyed before it.
#pragma once

#include "sim/engine/fresh_kernel.h"

using ScKernelFixture = npusim::engine::FreshKernel;
