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
#include <cstdint>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/runtime/observer.h"
#include "sim/record/big_array.h"
#include "sim/record/json_out.h"

namespace npusim::record {

// Nearest-rank percentiles of a sample (ns): {count, p50, p90, p99, max};
// nulls when the sample is empty.
nlohmann::ordered_json percentiles_json(std::vector<double> sample);
// A sample's histogram (value -> how many times): exact, in memory that grows
// with the distinct values, not with the sample. An open-addressing table
// keyed by the value's bits (a count per task on the hot path: one multiply
// and, mostly, one probe; a tree walked ~log2(distinct) compares); the
// values come out in order only when asked. -0.0 counts as 0.0 (one key, as
// in an ordered map).
class Histogram {
 public:
  // A value already counted (most adds of a run) is counted here, inline;
  // a new one goes to `insert`.
  void add(double value, std::uint64_t n = 1) {
    if (n == 0) return;
    if (value == 0.0) value = 0.0;  // -0.0: the key of 0.0
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    if (!slots_.empty())
      for (std::size_t i = slot_of(bits);; i = (i + 1) & mask_) {
        Slot& s = slots_[i];
        if (s.count == 0) break;
        if (s.bits == bits) {
          s.count += n;
          total_ += n;
          return;
        }
      }
    insert(bits, n);
  }
  std::uint64_t total() const { return total_; }
  std::size_t distinct() const { return used_; }
  // (value, count) in increasing value.
  std::vector<std::pair<double, std::uint64_t>> sorted() const;

 private:
  struct Slot { std::uint64_t bits = 0, count = 0; };  // count 0: empty
  // Fibonacci hashing, the product's top bits: a double's low mantissa bits
  // are often all zero (whole or short decimal values), and the low bits of
  // the product depend only on those.
  std::size_t slot_of(std::uint64_t bits) const { return static_cast<std::size_t>((bits * 0x9E3779B97F4A7C15ull) >> shift_); }
  void insert(std::uint64_t bits, std::uint64_t n);
  void grow();
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;  // slots_.size() - 1
  int shift_ = 64;        // 64 - log2(slots_.size())
  std::size_t used_ = 0;
  std::uint64_t total_ = 0;
};
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
  BigVector<Run> runs;  // on huge pages (big_array.h), as the collector's arrays
  BigVector<TaskSpan> tasks;
};

// The sweep's prepared state (prepare_overhead): the window [w0, w1], each
// type's engine count (0: that type is not present) and every change of a
// count, in time order. Built once, swept by every consumer.
struct OverheadSteps {
  struct Step { Time t; int counter; int delta; };  // counters 0-1 running per type, 2-3 ready-undispatched
  bool empty = true;  // no block ran: no window, no interval
  Time w0 = 0, w1 = 0;
  std::array<long, 2> cores{};
  BigVector<Step> steps;
};
OverheadSteps prepare_overhead(const OverheadInput& in);
Overhead sum_overhead(const OverheadSteps& s);  // the sweep's totals
inline Overhead compute_overhead(const OverheadInput& in) { return sum_overhead(prepare_overhead(in)); }

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
void sweep_overhead(const OverheadSteps& s, Each each);

// The records the overhead needs, gathered from the observer calls: the
// blocks that ran, each task's first dispatch, end and producers. Tasks are
// numbered by their first submit (a TaskIndex) and kept in
// flat arrays: two observer calls per task on the hot path of a run with
// every output on.
class OverheadCollector {
 public:
  void on_submitted(const Task& t, const std::vector<EdgeInfo>& edges);
  void on_block_finished(const Task& t, const BlockRecord& b);
  // Cores below `clusters` are AIC, the others AIV.
  OverheadInput input(int clusters) const;
  // prepare_overhead(input(clusters)), built once for the figures and the
  // Perfetto counters (until another record arrives).
  const OverheadSteps& steps(int clusters) const;

 private:
  struct Run { Time start, end; int core; };
  struct TaskRec {
    Time dispatch = kNever, end = 0;
    int low_core = -1, high_core = -1;  // its core types follow from these two; -1: no block ran
    std::uint32_t preds_begin = 0, preds_end = 0;  // its producers' numbers in preds_
  };
  std::uint32_t number(TaskId id);  // the task's number (a new record for a new id)
  // Every block and task of the run: on huge pages (big_array.h).
  GrowArray<Run> runs_;
  TaskIndex index_;                  // task id -> number
  GrowArray<TaskRec> tasks_;         // by number
  GrowArray<std::uint32_t> preds_;   // producers (numbers), a range per consumer, from the submit's edges
  mutable bool steps_valid_ = false;
  mutable int steps_clusters_ = 0;
  mutable OverheadSteps steps_;
};

// `overhead`: collect what the overhead sweep needs (every block and task,
// like the swimlane's records); without it the figure is null.
class FiguresCollector : public SimObserver {
 public:
  FiguresCollector(int clusters, bool overhead) : clusters_(clusters), sweep_(overhead) {}
  // The submits only feed the overhead sweep.
  // The hooks it always reads (the submits only with the sweep).
  static constexpr std::uint32_t kHooks = hook::BlockFinished | hook::Retired | hook::SchedPhase | hook::ScopeSample;
  std::uint32_t hooks() const override { return (sweep_ ? hook::Submitted : 0u) | kHooks; }
  bool reads_edges() const override { return sweep_; }  // the overhead sweep's
  // The per-event hooks inline: the engine's collectors call them by name.
  void on_submitted(const Task& t, const SubmitRequest&, const std::vector<EdgeInfo>& edges) override;
  void on_block_finished(const Task& t, const BlockRecord& b) override {
    if (b.end == kNever || b.end < b.start) return;
    const int ty = type_of(b.core);
    busy_[static_cast<std::size_t>(ty)] += b.end - b.start;
    // The dispatch that let the block start: its doorbell when early-staged.
    const Time released = b.gated ? b.release : b.dispatch;
    if (released != kNever) dispatch_to_start_.add(to_ns(b.start) - to_ns(released));
    if (sweep_) overhead_.on_block_finished(t, b);
  }
  void on_retired(Task& t) override;
  // on_retired with the task's block times (t.block_times()) at hand: the
  // engine's collectors take them once for the summary and the figures.
  void retired(const Task& t, const BlockTimes& b) {
    if (until_ != kNever) retired_until(t);
    if (b.count == 0 || t.ready_time == kNever || b.first_release == kNever) return;
    ready_to_dispatch_.add(to_ns(b.first_release) - to_ns(t.ready_time));
  }
  // A failed run: progress stopped at `t`; a block still on its core counts
  // as busy up to it (its tasks retire after this call).
  void stop_at(Time t) { until_ = t; }
  Time stopped_at() const { return until_; }
  void on_sched_phase(const SchedPhaseRecord& r) override {
    if (r.end <= r.start) return;
    const auto n = static_cast<std::size_t>(static_cast<unsigned>(r.thread));  // a negative thread: past the end
    if (n < phases_.size()) {
      phases_[n][static_cast<std::size_t>(r.kind)] += r.end - r.start;
      return;
    }
    add_phase_slow(r);
  }
  void on_scope_sample(const ScopeSample& x) override;
  // A thread's phase spans summed per kind by the thread itself (what
  // on_sched_phase would have added record by record; a kind at 0 had no
  // record with time).
  template <std::size_t N>
  void add_phase_sums(int thread, const std::array<Time, N>& span) {
    static_assert(N == kPhaseKinds);
    for (std::size_t k = 0; k < N; ++k)
      if (span[k] > 0) {
        SchedPhaseRecord r;
        r.thread = thread;
        r.kind = static_cast<SchedPhase>(k);
        r.end = span[k];
        on_sched_phase(r);
      }
  }

  // `makespan` and the platform's core counts per type give the utilisation.
  nlohmann::ordered_json to_json(Time makespan, int aic_cores, int aiv_cores) const;
  // The overhead sweep's records, for the Perfetto writer's counters (null without the sweep).
  const OverheadCollector* overhead() const { return sweep_ ? &overhead_ : nullptr; }

 private:
  int type_of(int core) const { return core < clusters_ ? 0 : 1; }
  void retired_until(const Task& t);  // a failed run's blocks in flight, busy up to until_

  int clusters_;
  bool sweep_;
  std::array<TimeSum, 2> busy_{};  // per core type, over every block: may pass 2^64 ps
  Time until_ = kNever;
  Histogram dispatch_to_start_, ready_to_dispatch_;
  OverheadCollector overhead_;
  // Per thread, indexed by the thread's number (scheduler threads count
  // from 0; a handful): time per phase kind. Only records with time are
  // added, so a kind had a record iff its time is not 0 (a thread's phases
  // lie in the run, under 10^18 ps: no sum wraps), and a thread with all
  // zeros had none and is not reported. One index per record, where a
  // search of the threads seen was most of this collector's work per task
  // with every output off.
  static constexpr std::size_t kPhaseKinds = static_cast<std::size_t>(SchedPhase::DrainPublish) + 1;
  using ThreadPhases = std::array<Time, kPhaseKinds>;
  std::vector<ThreadPhases> phases_;
  std::vector<std::pair<int, ThreadPhases>> odd_phases_;  // a negative thread number, if one ever comes (sorted)
  void add_phase_slow(const SchedPhaseRecord& r);  // a thread not yet in phases_
  // Per ring, indexed by the ring's number (a handful, from 0): a vector
  // indexed per scope sample where a map was searched; `seen` rings only
  // are reported, in increasing number as the map gave them.
  struct RingPeak { std::uint64_t task_slots = 0, heap_bytes = 0, dep_pool = 0; bool seen = false; };
  std::vector<RingPeak> rings_;
  std::map<int, RingPeak> odd_rings_;  // a negative ring number, if one ever comes
};

// A sweep over the moments where a count changes, as compute_overhead in the
// runtime's sched_overhead_analysis.py (and build_overhead_counter_events in
// swimlane_converter.py) define the figures: the window is [first start, last
// end]; a type's engine count is the cores of that type that ran a block; a
// task is ready-undispatched over [ready, dispatch] for every engine it ran
// on (a MIX task for both).
template <class Each>
void sweep_overhead(const OverheadSteps& s, Each each) {
  if (s.empty) return;
  std::array<long, 4> count{};
  std::size_t i = 0;
  Time now = s.w0;
  while (i < s.steps.size()) {
    const Time t = s.steps[i].t;
    if (t > now) {
      OverheadLevels l;
      bool any_type = false, any_work = false, all = true, has = true;
      for (std::size_t ty = 0; ty < 2; ++ty) {
        if (s.cores[ty] == 0) continue;  // an engine not present
        any_type = l.present[ty] = true;
        l.idle[ty] = s.cores[ty] - count[ty];
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
    for (; i < s.steps.size() && s.steps[i].t == t; ++i)
      count[static_cast<std::size_t>(s.steps[i].counter)] += s.steps[i].delta;
  }
}

}  // namespace npusim::record
