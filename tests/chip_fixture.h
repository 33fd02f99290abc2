// A whole chip on the tiny platform for timing tests: a test's op source
// feeds the orchestrator, a test's observer records what happened, and run()
// simulates to the end in a fresh SystemC kernel.
#pragma once

#include <algorithm>
#include <memory>

#include "models/chip/chip.h"
#include "tests/runtime_fixture.h"
#include "tests/sc_fixture.h"

namespace testing_support {

// Two AICPU threads: one scheduler owning every core, and the orchestrator.
inline npusim::RunOptions one_scheduler() {
  npusim::RunOptions o;
  o.aicpu_thread_num = 2;
  return o;
}

template <class Source, class Observer>
struct ChipSim {
  ScKernelFixture kernel;  // first: the modules below are destroyed before it
  npusim::Platform platform = tiny_platform();
  npusim::RunConfig config;
  npusim::DataStore data;
  Source src;
  Observer obs;
  std::unique_ptr<npusim::Chip> chip;

  explicit ChipSim(npusim::RunOptions o = {}) : config(config_for(platform, o)) {}
  void run() {
    chip = std::make_unique<npusim::Chip>("chip", platform, config, src, data, &obs);
    sc_core::sc_start();
  }
  npusim::Time last_completion() const {
    npusim::Time t = 0;
    for (const auto& s : chip->schedulers()) t = std::max(t, s->last_completion());
    return t;
  }
  npusim::Tensor ext(const std::string& name, npusim::DType dt, std::int64_t n) {
    return data.add_external(name, dt, {n}, 0, {});
  }
};

}  // namespace testing_support
