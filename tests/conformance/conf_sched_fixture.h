// A conformance trace (tests/conformance/traces/) simulated in this process
// on a platform of platforms/ (tiny by default, so times are hand-checkable):
// every block the AICPU saw finish, every scheduler phase record and every
// wait of a core, in the order the models reported them.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/chip/chip.h"
#include "sim/config/run_options.h"
#include "sim/platform/platform_loader.h"
#include "sim/trace/trace.h"
#include "tests/sc_fixture.h"
#include "tests/test_paths.h"

namespace conf {

struct Block {
  npusim::TaskId task;
  npusim::BlockRecord rec;
};

struct Recorder : npusim::SimObserver {
  std::vector<Block> blocks;
  std::vector<npusim::SchedPhaseRecord> phases;
  std::vector<npusim::LatchedError> errors;
  std::map<npusim::TaskId, npusim::Time> completed;  // when each task completed
  std::map<npusim::TaskId, npusim::Time> retired;    // when the ring's tail passed each task
  std::vector<npusim::TaskId> ready;                 // tasks made ready, in push order
  void on_ready(npusim::Task& t) override { ready.push_back(t.id); }
  void on_block_finished(const npusim::Task& t, const npusim::BlockRecord& b) override { blocks.push_back({t.id, b}); }
  void on_sched_phase(const npusim::SchedPhaseRecord& r) override { phases.push_back(r); }
  // Pop counts and queue snapshots (as a level-3 swimlane writer); a test
  // may turn it off before run().
  bool detail = true;
  bool reads_sched_detail() const override { return detail; }
  void on_error(const npusim::LatchedError& e) override { errors.push_back(e); }
  void on_completed(npusim::Task& t) override { completed[t.id] = t.complete_time; }
  // on_retired carries no time: the retiring thread's present, which runs
  // ahead of the kernel's time when the AICPU clock does (models/common/present.h).
  void on_retired(npusim::Task& t) override { retired[t.id] = npusim::model_present(); }
};

// A conformance trace by name, or any trace by absolute path.
inline std::string trace_path(const std::string& name) {
  return name.rfind('/', 0) == 0 ? name : std::string(NPUSIM_CONFORMANCE_DIR) + "/" + name;
}

struct ConfSim {
  ScKernelFixture kernel;  // first: destroyed after the chip
  npusim::Platform platform;
  npusim::trace::Trace trace;
  npusim::RunConfig config;
  npusim::DataStore data;
  std::unique_ptr<npusim::OpSource> program;
  Recorder obs;
  std::unique_ptr<npusim::Chip> chip;

  // `over` overrides the trace's run block; a test may change `platform`
  // (e.g. a non-zero barrier cost on tiny) before run().
  explicit ConfSim(const std::string& trace_name, const std::string& platform_name = "tiny",
                   npusim::RunOptions over = {})
      : platform(npusim::platform::load_platform(std::string(NPUSIM_SOURCE_DIR) + "/platforms/" + platform_name +
                                                 ".json")),
        trace(npusim::trace::load_trace(trace_path(trace_name))) {
    config = npusim::config::resolve(npusim::config::merge(trace.run, over), platform, trace.file);
  }
  void run() {
    program = npusim::trace::make_interpreter(trace, data);
    chip = std::make_unique<npusim::Chip>("chip", platform, config, *program, data, &obs);
    sc_core::sc_start();
  }
  bool finished() const { return chip->runtime().finished() && !chip->runtime().has_error(); }

  // The blocks of task `id`, by block index then lane.
  std::vector<npusim::BlockRecord> of_task(npusim::TaskId id) const {
    std::vector<npusim::BlockRecord> out;
    for (const Block& b : obs.blocks)
      if (b.task == id) out.push_back(b.rec);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.block_idx != b.block_idx ? a.block_idx < b.block_idx : a.lane < b.lane;
    });
    return out;
  }
  std::vector<npusim::SchedPhaseRecord> phases(npusim::SchedPhase kind) const {
    std::vector<npusim::SchedPhaseRecord> out;
    for (const auto& p : obs.phases)
      if (p.kind == kind) out.push_back(p);
    return out;
  }
};

// A simulated time given in ns, for expected values.
inline npusim::Time at(double ns) { return npusim::from_ns(ns); }

// Task ids of ring 0 in submission order (a program without scopes).
inline npusim::TaskId root_task(std::uint64_t n) { return npusim::make_task_id(0, n); }

}  // namespace conf
