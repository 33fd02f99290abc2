// A trace written as JSON text, run in-process on the tiny platform with one
// scheduler thread owning every core, every block recorded: for conformance
// tests that check exact times of a small program (tests/conformance).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "sim/trace/trace.h"
#include "tests/chip_fixture.h"

namespace testing_support {

// The trace's program, through the interpreter the engine uses.
struct TraceSource : npusim::OpSource {
  std::unique_ptr<npusim::OpSource> inner;
  bool next(npusim::OrchOp& op) override { return inner->next(op); }
  void deliver_task(npusim::TaskId id, const std::vector<npusim::Tensor>& outputs) override {
    inner->deliver_task(id, outputs);
  }
  void deliver_value(std::int64_t value) override { inner->deliver_value(value); }
};

struct BlockLog : npusim::SimObserver {
  std::vector<npusim::BlockRecord> blocks;
  std::vector<std::pair<std::string, std::string>> warnings;
  std::vector<std::tuple<int, npusim::WaitKind, npusim::Time, npusim::Time>> waits;
  void on_block_finished(const npusim::Task&, const npusim::BlockRecord& b) override { blocks.push_back(b); }
  void on_warning(const std::string& k, const std::string& m) override { warnings.emplace_back(k, m); }
  void on_core_wait(int core, const npusim::Task&, int, npusim::WaitKind k, npusim::Time s, npusim::Time e) override {
    waits.emplace_back(core, k, s, e);
  }
  // The block (or lane) that ran on `core`; the test's blocks run on distinct cores.
  const npusim::BlockRecord& on(int core) const {
    for (const auto& b : blocks)
      if (b.core == core) return b;
    throw std::out_of_range("no block ran on core " + std::to_string(core));
  }
};

struct TraceRun : ChipSim<TraceSource, BlockLog> {
  npusim::trace::Trace trace;
  explicit TraceRun(const std::string& json, npusim::RunOptions o = one_scheduler())
      : ChipSim(o), trace(npusim::trace::parse_trace(json, "conformance.json", "conformance")) {}
  void run() {
    src.inner = npusim::trace::make_interpreter(trace, data);
    ChipSim::run();
  }
};

}  // namespace testing_support
