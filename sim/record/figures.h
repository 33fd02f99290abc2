// The figures users quote (summary.json's `figures`, docs/outputs.md): per
// core type busy time and utilisation, dispatch-to-start and
// ready-to-dispatch percentiles, scheduler phase shares per thread, ring
// peaks, and the idle-core-with-ready-work overhead of the runtime's
// scheduler-overhead analysis (simpler_setup/tools/sched_overhead_analysis.py,
// compute_overhead; docs/dfx/sched-overhead-model.md). Everything is
// simulated time: deterministic.
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/runtime/observer.h"

namespace npusim::record {

// Nearest-rank percentiles of a sample (ns): {count, p50, p90, p99, max};
// nulls when the sample is empty.
nlohmann::ordered_json percentiles_json(std::vector<double> sample);
// The same from the sample's histogram (value -> how many times): exact, in
// memory that grows with the distinct values, not with the sample.
using Histogram = std::map<double, std::uint64_t>;
nlohmann::ordered_json histogram_percentiles_json(const Histogram& h);

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

// The sweep's state over one interval [from, to) of the window: per core
// type its idle cores and its ready, undispatched tasks (the converter's
// oh_{aic,aiv}_idle / _ready counters), whether that type is overhead, and
// the two whole-chip flags. A type with no core that ran is not present.
struct OverheadLevels {
  std::array<bool, 2> present{};
  std::array<long, 2> idle{}, ready{};
  std::array<bool, 2> over{};
  bool all = false, has = false;
};
// Calls `each(from, to, levels)` for every interval of non-zero length, in time order.
template <class Each>
void sweep_overhead(const OverheadInput& in, Each each);

// The records the overhead needs, gathered from the observer calls: the
// blocks that ran, each task's first dispatch, end and producers.
class OverheadCollector {
 public:
  void on_submitted(const Task& t, const std::vector<EdgeInfo>& edges);
  void on_block_finished(const Task& t, const BlockRecord& b);
  // Cores below `clusters` are AIC, the others AIV.
  OverheadInput input(int clusters) const;

 private:
  struct Run { Time start, end; int core; };
  struct TaskRec {
    Time dispatch = kNever, end = 0;
    int low_core = -1, high_core = -1;  // its core types follow from these two
  };
  std::vector<Run> runs_;
  std::unordered_map<TaskId, TaskRec> ran_;                      // tasks with a block that ran
  std::unordered_map<TaskId, std::vector<TaskId>> producers_;    // from the submit's edges
};

// `overhead`: collect what the overhead sweep needs (every block and task,
// like the swimlane's records); without it the figure is null.
class FiguresCollector : public SimObserver {
 public:
  FiguresCollector(int clusters, bool overhead) : clusters_(clusters), sweep_(overhead) {}
  void on_submitted(const Task& t, const SubmitRequest&, const std::vector<EdgeInfo>& edges) override;
  void on_block_finished(const Task& t, const BlockRecord& b) override;
  void on_retired(Task& t) override;
  void on_sched_phase(const SchedPhaseRecord& r) override;
  void on_scope_sample(const ScopeSample& x) override;

  // `makespan` and the platform's core counts per type give the utilisation.
  nlohmann::ordered_json to_json(Time makespan, int aic_cores, int aiv_cores) const;
  // The overhead sweep's records, for the Perfetto writer's counters (null without the sweep).
  const OverheadCollector* overhead() const { return sweep_ ? &overhead_ : nullptr; }

 private:
  int type_of(int core) const { return core < clusters_ ? 0 : 1; }

  int clusters_;
  bool sweep_;
  std::array<Time, 2> busy_{};
  Histogram dispatch_to_start_, ready_to_dispatch_;
  OverheadCollector overhead_;
  std::map<int, std::map<SchedPhase, Time>> phases_;             // thread -> kind -> time
  struct RingPeak { std::uint64_t task_slots = 0, heap_bytes = 0, dep_pool = 0; };
  std::map<int, RingPeak> rings_;
};

// A sweep over the moments where a count changes, as compute_overhead in the
// runtime's sched_overhead_analysis.py (and build_overhead_counter_events in
// swimlane_converter.py) define the figures: the window is [first start, last
// end]; a type's engine count is the cores of that type that ran a block; a
// task is ready-undispatched over [ready, dispatch] for every engine it ran
// on (a MIX task for both).
template <class Each>
void sweep_overhead(const OverheadInput& in, Each each) {
  if (in.runs.empty()) return;
  Time w0 = kNever, w1 = 0;
  std::array<std::set<int>, 2> cores;
  for (const auto& r : in.runs) {
    w0 = std::min(w0, r.start);
    w1 = std::max(w1, r.end);
    cores[static_cast<std::size_t>(r.type)].insert(r.core);
  }
  // (time, counter, delta); counters 0-1 running per type, 2-3 ready-undispatched per type.
  struct Step { Time t; int counter; int delta; };
  std::vector<Step> steps;
  auto add = [&](Time a, Time b, int counter) {
    a = std::clamp(a, w0, w1);
    b = std::clamp(b, w0, w1);
    if (b <= a) return;
    steps.push_back({a, counter, +1});
    steps.push_back({b, counter, -1});
  };
  for (const auto& r : in.runs) add(r.start, r.end, r.type);
  for (const auto& t : in.tasks)
    for (int ty = 0; ty < 2; ++ty)
      if (t.types & (1u << ty)) add(t.ready, t.dispatch, 2 + ty);
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.t < b.t; });
  std::array<long, 4> count{};
  std::size_t i = 0;
  Time now = w0;
  while (i < steps.size()) {
    const Time t = steps[i].t;
    if (t > now) {
      OverheadLevels l;
      bool any_type = false, any_work = false, all = true, has = true;
      for (std::size_t ty = 0; ty < 2; ++ty) {
        if (cores[ty].empty()) continue;  // an engine not present
        any_type = l.present[ty] = true;
        l.idle[ty] = static_cast<long>(cores[ty].size()) - count[ty];
        l.ready[ty] = count[2 + ty];
        l.over[ty] = l.idle[ty] > 0 && l.ready[ty] > 0;
        all = all && l.over[ty];
        if (l.ready[ty] > 0) {
          any_work = true;
          has = has && l.idle[ty] > 0;
        }
      }
      l.all = any_type && all;
      l.has = any_work && has;
      each(now, t, l);
    }
    now = t;
    for (; i < steps.size() && steps[i].t == t; ++i) count[static_cast<std::size_t>(steps[i].counter)] += steps[i].delta;
  }
}

}  // namespace npusim::record
