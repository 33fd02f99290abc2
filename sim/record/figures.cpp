#include "sim/record/figures.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace npusim::record {

using nlohmann::ordered_json;

namespace {

constexpr const char* kTypeNames[2] = {"aic", "aiv"};

double share(Time part, Time whole) { return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

// Sorts `v` by time (every t in [w0, w1]); steps of one time in any order.
// An LSD radix sort on t - w0, 11 bits a pass, as many passes as w1 - w0
// has bits: std::sort's comparisons of 400,000 steps (bench_pa_100k) were
// most of the mispredicted branches this sort and the critical path's block
// sort removed (0.55 M of pa_10k's 5.3 M, cachegrind) and about a percent of
// a run with every output on (perf).
void sort_by_time(BigVector<OverheadSteps::Step>& v, Time w0, Time w1) {
  using Step = OverheadSteps::Step;
  const std::size_t n = v.size();
  if (n < 64) {
    std::sort(v.begin(), v.end(), [](const Step& x, const Step& y) { return x.t < y.t; });
    return;
  }
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  const int width = 64 - __builtin_clzll((w1 - w0) | 1);
  const int passes = (width + kBits - 1) / kBits;
  // Every pass's counts in one read of the steps.
  std::vector<std::uint32_t> counts(static_cast<std::size_t>(passes) * kBuckets, 0);
  for (const Step& x : v) {
    const std::uint64_t key = x.t - w0;
    for (int p = 0; p < passes; ++p) ++counts[static_cast<std::size_t>(p) * kBuckets + (key >> (p * kBits) & (kBuckets - 1))];
  }
  HugePageAllocator<Step> alloc;
  Step* const other = alloc.allocate(n);
  Step* from = v.data();
  Step* to = other;
  for (int p = 0; p < passes; ++p) {
    std::uint32_t* const c = counts.data() + static_cast<std::size_t>(p) * kBuckets;
    const std::uint64_t first = (from[0].t - w0) >> (p * kBits) & (kBuckets - 1);
    if (c[first] == n) continue;  // one digit for every step: this pass keeps the order
    std::uint32_t sum = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) sum += std::exchange(c[b], sum);
    for (std::size_t k = 0; k < n; ++k) {
      const Step& x = from[k];
      to[c[(x.t - w0) >> (p * kBits) & (kBuckets - 1)]++] = x;
    }
    std::swap(from, to);
  }
  if (from != v.data()) std::copy(from, from + n, v.data());
  alloc.deallocate(other, n);
}

}  // namespace

void Histogram::insert(std::uint64_t bits, std::uint64_t n) {
  if (2 * (used_ + 1) > slots_.size()) grow();
  for (std::size_t i = slot_of(bits);; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.count == 0) {
      s.bits = bits;
      s.count = n;
      ++used_;
      break;
    }
    if (s.bits == bits) {
      s.count += n;
      break;
    }
  }
  total_ += n;
}

void Histogram::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
  mask_ = slots_.size() - 1;
  shift_ = 64 - __builtin_ctzll(slots_.size());
  used_ = 0;
  total_ = 0;
  for (const Slot& s : old)
    if (s.count) insert(s.bits, s.count);  // each key once: always a new one
}

std::vector<std::pair<double, std::uint64_t>> Histogram::sorted() const {
  std::vector<std::pair<double, std::uint64_t>> out;
  out.reserve(used_);
  for (const Slot& s : slots_)
    if (s.count) {
      double v;
      std::memcpy(&v, &s.bits, sizeof v);
      out.emplace_back(v, s.count);
    }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

ordered_json percentiles_json(std::vector<double> v) {
  Histogram h;
  for (double x : v) h.add(x);
  return histogram_percentiles_json(h);
}

ordered_json histogram_percentiles_json(const Histogram& hist) {
  const std::uint64_t n = hist.total();
  const auto h = hist.sorted();
  // Nearest rank: the smallest value with at least p% of the sample at or
  // below it; the values in order up to the rank's.
  auto at = [&](double p) -> ordered_json {
    if (n == 0) return nullptr;
    const auto rank =
        std::max<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(n))), 1);
    std::uint64_t seen = 0;
    for (const auto& [value, count] : h)
      if ((seen += count) >= rank) return value;
    return h.back().first;
  };
  return {{"count", n}, {"p50", at(50)}, {"p90", at(90)}, {"p99", at(99)}, {"max", at(100)}};
}

namespace {
// prepare_overhead's steps, not yet in time order.
OverheadSteps unsorted_steps(const OverheadInput& in) {
  OverheadSteps s;
  if (in.runs.empty()) return s;
  s.empty = false;
  s.w0 = kNever;
  std::array<std::vector<bool>, 2> ran;  // per type, by core: the engines present
  for (const auto& r : in.runs) {
    s.w0 = std::min(s.w0, r.start);
    s.w1 = std::max(s.w1, r.end);
    auto& seen = ran[static_cast<std::size_t>(r.type)];
    const auto core = static_cast<std::size_t>(r.core);
    if (core >= seen.size()) seen.resize(core + 1);
    if (!seen[core]) {
      seen[core] = true;
      ++s.cores[static_cast<std::size_t>(r.type)];
    }
  }
  s.steps.reserve(2 * in.runs.size() + 2 * in.tasks.size());
  auto add = [&](Time a, Time b, int counter) {
    a = std::clamp(a, s.w0, s.w1);
    b = std::clamp(b, s.w0, s.w1);
    if (b <= a) return;
    s.steps.push_back({a, counter, +1});
    s.steps.push_back({b, counter, -1});
  };
  for (const auto& r : in.runs) add(r.start, r.end, r.type);
  for (const auto& t : in.tasks)
    for (int ty = 0; ty < 2; ++ty)
      if (t.types & (1u << ty)) add(t.ready, t.dispatch, 2 + ty);
  return s;
}
}  // namespace

OverheadSteps prepare_overhead(const OverheadInput& in) {
  OverheadSteps s = unsorted_steps(in);
  // Only the time orders: the sweep applies every step of one time before it looks.
  sort_by_time(s.steps, s.w0, s.w1);
  return s;
}

Overhead sum_overhead(const OverheadSteps& s) {
  Overhead o;
  sweep_overhead(s, [&o](Time from, Time to, const OverheadLevels& l) {
    const Time length = to - from;
    for (int ty = 0; ty < 2; ++ty)
      if (l.over[static_cast<std::size_t>(ty)]) o.by_type[static_cast<std::size_t>(ty)] += length;
    if (l.all) o.all += length;
    if (l.has) o.has += length;
  });
  if (!s.empty) o.window = s.w1 - s.w0;
  return o;
}

void FiguresCollector::on_submitted(const Task& t, const SubmitRequest&, const std::vector<EdgeInfo>& edges) {
  if (sweep_) overhead_.on_submitted(t, edges);
}

std::uint32_t OverheadCollector::number(TaskId id) {
  const auto [n, fresh] = index_.insert(id);
  if (fresh) tasks_.emplace_back();
  return n;
}

void OverheadCollector::on_submitted(const Task& t, const std::vector<EdgeInfo>& edges) {
  steps_valid_ = false;
  const auto begin = static_cast<std::uint32_t>(preds_.size());
  for (const EdgeInfo& e : edges)
    if (e.pred != kNoTask && e.pred != t.id) preds_.push_back(number(e.pred));
  if (preds_.size() == begin) return;  // no producer: what a task of this id had stays
  std::sort(preds_.begin() + begin, preds_.end());
  preds_.erase(std::unique(preds_.begin() + begin, preds_.end()), preds_.end());
  TaskRec& r = tasks_[number(t.id)];
  r.preds_begin = begin;
  r.preds_end = static_cast<std::uint32_t>(preds_.size());
}

void OverheadCollector::on_block_finished(const Task& t, const BlockRecord& b) {
  if (b.end == kNever || b.end < b.start) return;
  steps_valid_ = false;
  runs_.push_back({b.start, b.end, b.core});
  TaskRec& r = tasks_[number(t.id)];
  r.dispatch = std::min(r.dispatch, b.dispatch);
  r.end = std::max(r.end, b.end);
  r.low_core = r.low_core < 0 ? b.core : std::min(r.low_core, b.core);
  r.high_core = std::max(r.high_core, b.core);
}

void FiguresCollector::on_retired(Task& t) { retired(t, t.block_times()); }

void FiguresCollector::retired_until(const Task& t) {
  for (const BlockRecord& r : t.blocks)  // in flight when the run stopped
    if (r.core >= 0 && r.start <= until_)
      busy_[static_cast<std::size_t>(type_of(r.core))] += span(r.start, std::min(r.end, until_));
}

void FiguresCollector::add_phase_slow(const SchedPhaseRecord& r) {
  ThreadPhases* p;
  if (r.thread >= 0) {
    phases_.resize(static_cast<std::size_t>(r.thread) + 1, ThreadPhases{});
    p = &phases_[static_cast<std::size_t>(r.thread)];
  } else {
    auto it = std::find_if(odd_phases_.begin(), odd_phases_.end(), [&](const auto& e) { return e.first >= r.thread; });
    if (it == odd_phases_.end() || it->first != r.thread) it = odd_phases_.insert(it, {r.thread, ThreadPhases{}});
    p = &it->second;
  }
  (*p)[static_cast<std::size_t>(r.kind)] += r.end - r.start;
}

void FiguresCollector::on_scope_sample(const ScopeSample& x) {
  RingPeak* q;
  if (x.ring >= 0) {
    const auto n = static_cast<std::size_t>(x.ring);
    if (n >= rings_.size()) rings_.resize(n + 1);
    q = &rings_[n];
  } else {
    q = &odd_rings_[x.ring];
  }
  RingPeak& p = *q;
  p.seen = true;
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
  in.tasks.reserve(tasks_.size());
  for (const TaskRec& rec : tasks_) {
    if (rec.low_core < 0) continue;  // no block ran
    Time ready = 0;
    bool any = false;
    for (std::uint32_t k = rec.preds_begin; k < rec.preds_end; ++k)
      if (const TaskRec& p = tasks_[preds_[k]]; p.low_core >= 0) {
        ready = std::max(ready, p.end);
        any = true;
      }
    const auto types = static_cast<std::uint8_t>((rec.low_core < clusters ? 1u : 0u) | (rec.high_core >= clusters ? 2u : 0u));
    in.tasks.push_back({any ? ready : rec.dispatch, rec.dispatch, types});
  }
  return in;
}

const OverheadSteps& OverheadCollector::steps(int clusters) const {
  if (!steps_valid_ || steps_clusters_ != clusters) {
    // prepare_overhead, with the input freed before the sort takes its
    // second array of steps (the run's peak memory is at this moment).
    steps_ = unsorted_steps(input(clusters));
    sort_by_time(steps_.steps, steps_.w0, steps_.w1);
    steps_clusters_ = clusters;
    steps_valid_ = true;
  }
  return steps_;
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
    const TimeSum busy = busy_[static_cast<std::size_t>(ty)];
    const TimeSum capacity = static_cast<TimeSum>(makespan) * static_cast<TimeSum>(counts[ty]);
    f["core_types"][kTypeNames[ty]] = {
        {"cores", counts[ty]},
        {"busy_ns", sum_to_ns(busy)},
        {"utilisation", capacity ? static_cast<double>(busy) / static_cast<double>(capacity) : 0.0}};
  }
  f["dispatch_to_start_ns"] = histogram_percentiles_json(dispatch_to_start_);
  f["ready_to_dispatch_ns"] = histogram_percentiles_json(ready_to_dispatch_);
  f["overhead"] = sweep_ ? overhead_json(sum_overhead(overhead_.steps(clusters_))) : ordered_json(nullptr);

  ordered_json threads = ordered_json::object();
  auto put_thread = [&](int thread, const ThreadPhases& p) {
    Time total = 0;
    for (std::size_t k = 0; k < kPhaseKinds; ++k) total += p[k];
    if (total == 0) return;  // no record with time
    ordered_json shares = ordered_json::object();
    for (std::size_t k = 0; k < kPhaseKinds; ++k)
      if (p[k] != 0) shares[sched_phase_name(static_cast<SchedPhase>(k))] = share(p[k], total);
    threads[std::to_string(thread)] = {{"phase_ns", to_ns(total)}, {"shares", shares}};
  };
  for (const auto& [thread, p] : odd_phases_) put_thread(thread, p);  // in increasing thread number
  for (std::size_t n = 0; n < phases_.size(); ++n) put_thread(static_cast<int>(n), phases_[n]);
  f["sched_phases"] = threads;

  ordered_json rings = ordered_json::object();
  auto put_ring = [&](int ring, const RingPeak& p) {
    if (p.seen)
      rings[std::to_string(ring)] = {{"task_slots", p.task_slots}, {"heap_bytes", p.heap_bytes}, {"dep_pool", p.dep_pool}};
  };
  for (const auto& [ring, p] : odd_rings_) put_ring(ring, p);
  for (std::size_t n = 0; n < rings_.size(); ++n) put_ring(static_cast<int>(n), rings_[n]);
  f["ring_peaks"] = rings;
  return f;
}

}  // namespace npusim::record
