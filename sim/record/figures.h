// The figures users quote (summary.json's `figures`, docs/outputs.md): per
// core type busy time and utilisation, dispatch-to-start and
// ready-to-dispatch percentiles, scheduler phase shares per thread, ring
// peaks, and the idle-core-with-ready-work overhead of the runtime's
// scheduler-overhead analysis (simpler_setup/tools/sched_overhead_analysis.py,
// compute_overhead; docs/dfx/sched-overhead-model.md). Everything is
// simulated time: deterministic.
#pragma once

#include <array>
#include <map>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/runtime/observer.h"

namespace npusim::record {

// Nearest-rank percentiles of a sample (ns): {count, p50, p90, p99, max};
// nulls when the sample is empty.
nlohmann::ordered_json percentiles_json(std::vector<double> sample);

// The overhead of one window [w0, w1): for each core type T, the time an
// idle T-core existed while a ready, undispatched T-task existed.
struct Overhead {
  Time window = 0;
  std::array<Time, 2> by_type{};  // aic, aiv
  Time all = 0;                   // every present engine overhead
  Time has = 0;                   // every engine with ready work overhead
};

// The inputs of the overhead sweep: the blocks that ran and, per task, its
// engines, its first dispatch, its end and the ends of its producers.
struct OverheadInput {
  struct Run { Time start, end; int type; int core; };
  struct TaskSpan { Time ready, dispatch; std::uint8_t types; };  // types: bit 0 aic, bit 1 aiv
  std::vector<Run> runs;
  std::vector<TaskSpan> tasks;
};
Overhead compute_overhead(const OverheadInput& in);

class FiguresCollector : public SimObserver {
 public:
  explicit FiguresCollector(int clusters) : clusters_(clusters) {}
  void on_submitted(const Task& t, const SubmitRequest&, const std::vector<EdgeInfo>& edges) override;
  void on_block_finished(const Task& t, const BlockRecord& b) override;
  void on_retired(Task& t) override;
  void on_sched_phase(const SchedPhaseRecord& r) override;
  void on_scope_sample(const ScopeSample& x) override;

  // `makespan` and the platform's core counts per type give the utilisation.
  nlohmann::ordered_json to_json(Time makespan, int aic_cores, int aiv_cores) const;

 private:
  int type_of(int core) const { return core < clusters_ ? 0 : 1; }
  OverheadInput overhead_input() const;

  int clusters_;
  std::array<Time, 2> busy_{};
  std::vector<double> dispatch_to_start_, ready_to_dispatch_;
  std::vector<OverheadInput::Run> runs_;
  struct TaskRec {
    Time dispatch = kNever, end = 0;
    std::uint8_t types = 0;
  };
  std::unordered_map<TaskId, TaskRec> ran_;                      // tasks with a block that ran
  std::unordered_map<TaskId, std::vector<TaskId>> producers_;    // from the submit's edges
  std::map<int, std::map<SchedPhase, Time>> phases_;             // thread -> kind -> time
  struct RingPeak { std::uint64_t task_slots = 0, heap_bytes = 0, dep_pool = 0; };
  std::map<int, RingPeak> rings_;
};

}  // namespace npusim::record
