#include "sim/record/figures.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

namespace npusim::record {

using nlohmann::ordered_json;

namespace {

constexpr const char* kTypeNames[2] = {"aic", "aiv"};

double share(Time part, Time whole) { return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

}  // namespace

ordered_json percentiles_json(std::vector<double> v) {
  Histogram h;
  for (double x : v) ++h[x];
  return histogram_percentiles_json(h);
}

ordered_json histogram_percentiles_json(const Histogram& h) {
  std::uint64_t n = 0;
  for (const auto& [value, count] : h) n += count;
  // Nearest rank: the smallest value with at least p% of the sample at or
  // below it; the values in order up to the rank's.
  auto at = [&](double p) -> ordered_json {
    if (n == 0) return nullptr;
    const auto rank =
        std::max<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(n))), 1);
    std::uint64_t seen = 0;
    for (const auto& [value, count] : h)
      if ((seen += count) >= rank) return value;
    return h.rbegin()->first;
  };
  return {{"count", n}, {"p50", at(50)}, {"p90", at(90)}, {"p99", at(99)}, {"max", at(100)}};
}

Overhead compute_overhead(const OverheadInput& in) {
  Overhead o;
  sweep_overhead(in, [&o](Time from, Time to, const OverheadLevels& l) {
    const Time length = to - from;
    for (int ty = 0; ty < 2; ++ty)
      if (l.over[static_cast<std::size_t>(ty)]) o.by_type[static_cast<std::size_t>(ty)] += length;
    if (l.all) o.all += length;
    if (l.has) o.has += length;
  });
  Time w0 = kNever, w1 = 0;
  for (const auto& r : in.runs) {
    w0 = std::min(w0, r.start);
    w1 = std::max(w1, r.end);
  }
  if (!in.runs.empty()) o.window = w1 - w0;
  return o;
}

void FiguresCollector::on_submitted(const Task& t, const SubmitRequest&, const std::vector<EdgeInfo>& edges) {
  if (sweep_) overhead_.on_submitted(t, edges);
}

void OverheadCollector::on_submitted(const Task& t, const std::vector<EdgeInfo>& edges) {
  std::vector<TaskId> preds;
  for (const EdgeInfo& e : edges)
    if (e.pred != kNoTask && e.pred != t.id) preds.push_back(e.pred);
  if (preds.empty()) return;
  std::sort(preds.begin(), preds.end());
  preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
  producers_[t.id] = std::move(preds);
}

void FiguresCollector::on_block_finished(const Task& t, const BlockRecord& b) {
  if (b.end == kNever || b.end < b.start) return;
  const int ty = type_of(b.core);
  busy_[static_cast<std::size_t>(ty)] += b.end - b.start;
  // The dispatch that let the block start: its doorbell when early-staged.
  const Time released = b.gated ? b.release : b.dispatch;
  if (released != kNever) ++dispatch_to_start_[to_ns(b.start) - to_ns(released)];
  if (sweep_) overhead_.on_block_finished(t, b);
}

void OverheadCollector::on_block_finished(const Task& t, const BlockRecord& b) {
  if (b.end == kNever || b.end < b.start) return;
  runs_.push_back({b.start, b.end, b.core});
  TaskRec& rec = ran_[t.id];
  rec.dispatch = std::min(rec.dispatch, b.dispatch);
  rec.end = std::max(rec.end, b.end);
  rec.low_core = rec.low_core < 0 ? b.core : std::min(rec.low_core, b.core);
  rec.high_core = std::max(rec.high_core, b.core);
}

void FiguresCollector::on_retired(Task& t) {
  const BlockTimes b = t.block_times();
  if (b.count == 0 || t.ready_time == kNever || b.first_release == kNever) return;
  ++ready_to_dispatch_[to_ns(b.first_release) - to_ns(t.ready_time)];
}

void FiguresCollector::on_sched_phase(const SchedPhaseRecord& r) {
  if (r.end > r.start) phases_[r.thread][r.kind] += r.end - r.start;
}

void FiguresCollector::on_scope_sample(const ScopeSample& x) {
  RingPeak& p = rings_[x.ring];
  p.task_slots = std::max(p.task_slots, x.task_window_end - x.task_window_start);
  p.heap_bytes = std::max(p.heap_bytes, x.heap_end - x.heap_start);
  p.dep_pool = std::max(p.dep_pool, x.dep_pool_end - x.dep_pool_start);
}

// A task is ready when the last of its producers that ran ended (the data
// exists); one whose producers never ran on a core is ready at its own
// dispatch (sched-overhead-model.md, "Off-perf predecessors").
OverheadInput OverheadCollector::input(int clusters) const {
  OverheadInput in;
  in.runs.reserve(runs_.size());
  for (const Run& r : runs_) in.runs.push_back({r.start, r.end, r.core < clusters ? 0 : 1, r.core});
  in.tasks.reserve(ran_.size());
  for (const auto& [id, rec] : ran_) {
    Time ready = 0;
    bool any = false;
    if (auto p = producers_.find(id); p != producers_.end())
      for (TaskId pred : p->second)
        if (auto q = ran_.find(pred); q != ran_.end()) {
          ready = std::max(ready, q->second.end);
          any = true;
        }
    const auto types = static_cast<std::uint8_t>((rec.low_core < clusters ? 1u : 0u) | (rec.high_core >= clusters ? 2u : 0u));
    in.tasks.push_back({any ? ready : rec.dispatch, rec.dispatch, types});
  }
  return in;
}

namespace {
ordered_json overhead_json(const Overhead& o) {
  ordered_json oh;
  oh["window_ns"] = to_ns(o.window);
  auto put = [&](const std::string& name, Time t) { oh[name] = {{"ns", to_ns(t)}, {"pct", 100.0 * share(t, o.window)}}; };
  put("oh_aic_overhead", o.by_type[0]);
  put("oh_aiv_overhead", o.by_type[1]);
  put("oh_all_overhead", o.all);
  put("oh_has_overhead", o.has);
  return oh;
}
}  // namespace

ordered_json FiguresCollector::to_json(Time makespan, int aic_cores, int aiv_cores) const {
  ordered_json f;
  const int counts[2] = {aic_cores, aiv_cores};
  for (int ty = 0; ty < 2; ++ty) {
    const Time busy = busy_[static_cast<std::size_t>(ty)];
    const Time capacity = makespan * static_cast<Time>(counts[ty]);
    f["core_types"][kTypeNames[ty]] = {{"cores", counts[ty]},
                                       {"busy_ns", to_ns(busy)},
                                       {"utilisation", share(busy, capacity)}};
  }
  f["dispatch_to_start_ns"] = histogram_percentiles_json(dispatch_to_start_);
  f["ready_to_dispatch_ns"] = histogram_percentiles_json(ready_to_dispatch_);
  f["overhead"] = sweep_ ? overhead_json(compute_overhead(overhead_.input(clusters_))) : ordered_json(nullptr);

  ordered_json threads = ordered_json::object();
  for (const auto& [thread, kinds] : phases_) {
    Time total = 0;
    for (const auto& [kind, t] : kinds) total += t;
    ordered_json shares = ordered_json::object();
    for (const auto& [kind, t] : kinds) shares[sched_phase_name(kind)] = share(t, total);
    threads[std::to_string(thread)] = {{"phase_ns", to_ns(total)}, {"shares", shares}};
  }
  f["sched_phases"] = threads;

  ordered_json rings = ordered_json::object();
  for (const auto& [ring, p] : rings_)
    rings[std::to_string(ring)] = {{"task_slots", p.task_slots}, {"heap_bytes", p.heap_bytes}, {"dep_pool", p.dep_pool}};
  f["ring_peaks"] = rings;
  return f;
}

}  // namespace npusim::record
