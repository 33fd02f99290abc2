#include "sim/engine/engine.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <type_traits>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <systemc>

#include "models/chip/chip.h"
#include "sim/json/json_util.h"
#include "sim/config/run_options.h"
#include "sim/diagnose/checks.h"
#include "sim/diagnose/diagnosis.h"
#include "sim/engine/output_dir.h"
#include "sim/engine/sanitizer_stack.h"
#include "sim/diagnose/sizing.h"
#include "sim/engine/watch.h"
#include "sim/json/json_input.h"
#include "sim/platform/platform_loader.h"
#include "sim/record/big_array.h"
#include "sim/record/critical_path.h"
#include "sim/record/figures.h"
#include "sim/record/json_out.h"
#include "sim/record/whole_file.h"
#include "sim/record/provenance.h"
#include "sim/record/writer.h"
#include "sim/scene/record.h"
#include "sim/scene/scene.h"
#include "sim/trace/trace.h"

namespace fs = std::filesystem;

namespace npusim::engine {

namespace {

struct Loaded {
  Platform platform;
  trace::Trace trace;
  RunConfig config;
  RunOptions options;  // the program's run block with the command line's options
  std::shared_ptr<const std::string> text;  // the trace or scene as read (the sizing re-runs of a trace read it again)
  std::string platform_text;     // platform.json: the platform file as parsed, canonical (sorted keys)
  record::Provenance provenance;  // the version and the digests of the trace and of platform_text
};

void load_rest(Loaded& l, const RunRequest& req, bool for_check);

// `for_check` (check): the program's ops are compiled as the dry run reaches
// them, and trace::finish_checks keeps the first load-time error first; no
// provenance (check writes nothing).
Loaded load(const RunRequest& req, bool for_check = false) {
  Loaded l;
  l.platform = platform::load_platform(req.platform, &l.platform_text);  // and its canonical text
  l.trace = scene::load_program(req.trace_path, &l.text, !for_check);
  try {
    load_rest(l, req, for_check);
  } catch (const InputError&) {
    trace::finish_checks(l.trace, nullptr);
    throw;
  }
  return l;
}

void load_rest(Loaded& l, const RunRequest& req, bool for_check) {
  config::check_against(req.cli, l.platform, config::kCommandLine);  // command-line values name their option
  l.options = config::merge(l.trace.run, req.cli);
  l.config = config::resolve(l.options, l.platform, l.trace.file);
  l.config.swimlane_level = req.swimlane_level;
  l.config.scope_stats = req.scope_stats && l.config.runtime == RuntimeKind::TensormapRingbuffer;
  l.config.deps = req.deps;
  // The platform's digest is that of its canonical text (load_platform's:
  // key order and white space do not change it, a changed value does;
  // docs/outputs.md, "Provenance").
  if (!for_check)
    l.provenance = {record::npusim_version(), record::digest(*l.text), record::digest(l.platform_text)};
}

// Counts what the summary needs, and the hazards npusim found.
class SummaryStats : public SimObserver {
 public:
  static constexpr std::size_t kKeep = 100;  // warnings kept verbatim
  static constexpr std::uint32_t kHooks = hook::Warning | hook::Retired | hook::L2Access | hook::Completed;
  std::uint32_t hooks() const override { return kHooks; }
  bool reads_edges() const override { return false; }
  void on_warning(const std::string& kind, const std::string& message) override {
    ++warnings_by_kind[kind];
    ++warning_count;
    if (warnings.size() < kKeep) warnings.push_back(kind + ": " + message);
    if (kind.rfind("coherency_", 0) == 0) {
      ++coherency_count;
      if (coherency.size() < kKeep) coherency.push_back(kind + ": " + message);
    }
  }
  std::vector<std::string> coherency;  // the GM model's coherency reports (docs/gm.md)
  std::uint64_t coherency_count = 0;
  std::map<std::string, std::uint64_t> warnings_by_kind;
  std::vector<std::string> warnings;
  std::uint64_t warning_count = 0;

  // Per kernel: what its tasks cost the runtime and the cores.
  struct KernelStats {
    int func_id = 0;
    std::uint64_t tasks = 0, blocks = 0, dispatch_ops = 0, staged_blocks = 0, predicated_skip = 0;
    TimeSum core_busy = 0;  // over every block of the kernel: may pass 2^64 ps
    std::uint64_t l2_lines = 0, l2_hits = 0, hbm_bytes = 0;  // its loads and stores through the L2
  };
  std::map<std::string, KernelStats> kernels;
  std::uint64_t dispatch_ops = 0;
  Time until = kNever;  // a failed run: progress stopped
  // The entry of a kernel's name, found by its definition (which lives as
  // long as the trace): one name lookup per distinct kernel instead of a
  // string-keyed std::map lookup per task (the map's nodes stay where they are).
  // The first few definitions seen are also in a short list searched first
  // (a trace has a handful of kernels; the hash-map lookup per retired task
  // was a third of this observer's work).
  KernelStats& kernel_stats(const KernelDef* def) {
    for (std::size_t i = 0; i < recent_n_; ++i)
      if (recent_[i].first == def) return *recent_[i].second;
    return kernel_stats_slow(def);
  }
  KernelStats& kernel_stats_slow(const KernelDef* def) {
    auto [it, added] = by_def_.try_emplace(def, nullptr);
    if (added) {
      it->second = &kernels[def->name];
      if (recent_n_ < recent_.size()) recent_[recent_n_++] = {def, it->second};
    }
    return *it->second;
  }
  std::unordered_map<const KernelDef*, KernelStats*> by_def_;
  std::array<std::pair<const KernelDef*, KernelStats*>, 8> recent_{};
  std::size_t recent_n_ = 0;
  void on_retired(Task& t) override { retired(t, nullptr); }
  // on_retired with the task's block times (t.block_times(until)) at hand
  // if `b` is not null.
  void retired(const Task& t, const BlockTimes* b) {
    dispatch_ops += static_cast<std::uint64_t>(t.dispatch_ops);
    if (!t.kernel) return;
    KernelStats& k = kernel_stats(t.kernel);
    k.func_id = t.kernel->func_id;
    ++k.tasks;
    k.blocks += static_cast<std::uint64_t>(t.block_num);
    k.dispatch_ops += static_cast<std::uint64_t>(t.dispatch_ops);
    k.staged_blocks += static_cast<std::uint64_t>(t.staged_blocks);
    if (t.predicate_false) ++k.predicated_skip;
    k.core_busy += b ? b->busy : t.block_times(until).busy;
  }
  void on_l2_access(const Task& t, std::uint64_t lines, std::uint64_t hits, std::uint64_t hbm) override {
    hbm_bytes += hbm;
    if (!t.kernel) return;
    KernelStats& k = kernel_stats(t.kernel);
    k.func_id = t.kernel->func_id;
    k.l2_lines += lines;
    k.l2_hits += hits;
    k.hbm_bytes += hbm;
  }
  std::uint64_t hbm_bytes = 0;
  void on_completed(Task& t) override {
    if (t.kind == TaskKind::Alloc) last_alloc = std::max(last_alloc, t.complete_time);
  }
  Time last_alloc = 0;
};

// Wall-clock time since the run began (host measurements only).
class Stopwatch {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

// What a run found: the outcome, the times and counts of the summary, the
// hazards the run counted, and the files its writers staged.
struct Result {
  bool ok = false;
  std::unique_ptr<diagnose::Failure> failure;  // null when ok
  Time device_wall = 0, makespan = 0, sched_window = 0;
  std::uint64_t submitted = 0, completed = 0;
  nlohmann::ordered_json tasks;           // summary.json's `tasks`
  std::unique_ptr<SummaryStats> stats;    // null when the device failed before the first task
  nlohmann::ordered_json figures;         // summary.json's `figures` (null with stats)
  nlohmann::ordered_json critical_path;   // summary.json's `critical_path` (null without records)
  std::vector<std::string> files;         // staged by the writers, relative to the staging directory
  std::string recorded;                   // npusim record: the trace of the operations performed
  std::vector<diagnose::Finding> findings;  // npusim check's verifiers on the kernels and the launches made
};

// The resolved platform, saved beside the outputs (its digest is summary.json's).
constexpr const char* kPlatformFile = "platform.json";

// summary.json's `static_checks`: what `npusim check` would say of the
// program, the first kKeep findings verbatim.
nlohmann::ordered_json findings_json(const std::vector<diagnose::Finding>& findings) {
  constexpr std::size_t kKeep = 100;
  std::uint64_t errors = 0;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const diagnose::Finding& f : findings) {
    errors += f.error;
    if (list.size() < kKeep)
      list.push_back({{"rule", f.rule}, {"severity", f.error ? "error" : "warning"}, {"path", f.path},
                      {"message", f.message}});
  }
  return {{"errors", errors}, {"warnings", findings.size() - errors}, {"findings", list}};
}

// summary.json (cli-and-outputs.md), in the spec's key order.
nlohmann::ordered_json summary_json(const Loaded& l, const Result& r) {
  nlohmann::ordered_json s;
  s["npusim_summary"] = 1;
  s["trace"] = l.trace.name;
  s["platform"] = l.platform.name;
  s["status"] = r.ok ? "ok" : "error";
  s["device_wall_ns"] = to_ns(r.device_wall);
  s["makespan_ns"] = to_ns(r.makespan);
  s["scheduling_window_ns"] = to_ns(r.sched_window);
  s["tasks"] = r.tasks;
  s["error"] = r.failure ? nlohmann::ordered_json(r.failure->to_json()) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json& run = s["run"];
  run["runtime"] = runtime_name(l.config.runtime);
  if (l.config.runtime == RuntimeKind::HostBuildGraph) run["hbg_layout"] = hbg_layout_name(l.config.hbg_layout);
  if (l.config.cache_policy_lowering != CacheLowering::Today)
    run["cache_policy_lowering"] = cache_lowering_name(l.config.cache_policy_lowering);
  run["aicpu_thread_num"] = l.config.aicpu_thread_num;
  run["sched_threads"] = l.config.sched_threads;
  run["ring_task_window"] = l.config.task_window;
  run["ring_heap"] = l.config.heap;
  run["ring_dep_pool"] = l.config.dep_pool;
  run["tensormap_pool"] = l.config.tensormap_pool;
  run["seed"] = l.config.seed;
  s["sim"] = {{"seed", l.config.seed}};
  s["provenance"] = {{"npusim_version", l.provenance.version},
                     {"trace_digest", l.provenance.trace_digest},
                     {"platform_digest", l.provenance.platform_digest},
                     {"platform_file", kPlatformFile}};
  s["static_checks"] = findings_json(r.findings);
  if (!r.stats) return s;
  nlohmann::ordered_json kernels = nlohmann::ordered_json::object();
  for (const auto& [name, k] : r.stats->kernels)
    kernels[name] = {{"func_id", k.func_id},         {"tasks", k.tasks},
                     {"blocks", k.blocks},           {"dispatch_ops", k.dispatch_ops},
                     {"staged_blocks", k.staged_blocks}, {"predicated_skip", k.predicated_skip},
                     {"core_busy_ns", sum_to_ns(k.core_busy)},
                     {"l2_lines", k.l2_lines},       {"l2_hits", k.l2_hits},
                     {"l2_hit_rate", k.l2_lines ? nlohmann::ordered_json(static_cast<double>(k.l2_hits) /
                                                                          static_cast<double>(k.l2_lines))
                                                : nlohmann::ordered_json(nullptr)},
                     {"hbm_bytes", k.hbm_bytes}};
  s["kernels"] = kernels;
  s["gm"] = {{"hbm_bytes", r.stats->hbm_bytes}};
  s["warnings"] = {{"count", r.stats->warning_count},
                   {"by_kind", r.stats->warnings_by_kind},
                   {"first", r.stats->warnings}};
  s["figures"] = r.figures;
  s["critical_path"] = r.critical_path;
  return s;
}

// Host measurements: the only part of the outputs that varies run to run.
void add_host_stats(nlohmann::ordered_json& s, double wall, std::uint64_t tasks) {
  s["sim"]["wall_seconds"] = wall;
  s["sim"]["tasks_per_second"] = wall > 0 ? static_cast<double>(tasks) / wall : 0.0;
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  s["sim"]["peak_rss_mb"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
  // The SystemC kernel's evaluation rounds (delta cycles) over the run: each
  // process wake-up at a new time is one, so per task this is the kernel's
  // share of the host cost in units of tools/floor_systemc.cpp's floor.
  s["sim"]["systemc_deltas"] = static_cast<std::uint64_t>(sc_core::sc_delta_count());
}

// npusim's own failure under --strict-coherency: the device would not stop,
// it would compute with stale data (docs/gm.md).
diagnose::Failure coherency_failure(const std::vector<std::string>& reports, std::uint64_t count) {
  diagnose::Failure f;
  f.name = "COHERENCY_HAZARD";
  f.host_code = 0;
  f.message = std::to_string(count) + " coherency report(s): a read could see stale data on silicon";
  f.hint = "add the missing fence / cacheinvalid each report names (docs/gm.md)";
  f.detector = "npusim coherency check (--strict-coherency)";
  f.host_log.push_back("npusim: COHERENCY_HAZARD (not a device error: the device would run on with stale data): " +
                       f.message);
  f.diagnosis_lines = reports;
  if (count > reports.size())
    f.diagnosis_lines.push_back(std::to_string(count - reports.size()) + " more in summary.json's warnings count");
  f.diagnosis["coherency_reports"] = count;
  return f;
}

// ---- the steps of `run` ----------------------------------------------------

// --out, or npusim_out/<trace name> with the name made a safe file name.
std::string output_dir(const RunRequest& req, const Loaded& l) {
  return req.out_dir.empty() ? "npusim_out/" + file_component(l.trace.name) : req.out_dir;
}

// The runtime's arena is allocated before anything runs (rtMalloc): a run
// whose arena does not fit fails there, before the first task.
std::optional<Result> arena_failed(const Loaded& l) {
  if (diagnose::arena_bytes(l.platform, l.config) <= l.platform.topo.device_memory_bytes) return std::nullopt;
  Result r;
  r.failure = std::make_unique<diagnose::Failure>(diagnose::arena_failure(l.platform, l.config));
  r.tasks = {{"submitted", 0}, {"completed", 0}, {"blocks_dispatched", 0},
             {"predicated_skip", 0}, {"dummy", 0}, {"alloc", 0}};
  return r;
}

// The cores whose block waits for ever when the device stops, each with
// its wait as the swimlane names it.
std::vector<record::StuckWait> stuck_waits(const Chip& chip) {
  std::vector<record::StuckWait> out;
  const auto episodes = chip.ffts().open_episodes();
  const auto soft = chip.gm().open_soft_barriers();
  std::vector<PeerPort::OpenWait> flags;
  if (chip.port()) flags = chip.port()->open_waits();
  const auto pipe_waits = chip.pipes().open_waits();
  auto has = [](const std::vector<int>& v, int c) { return std::find(v.begin(), v.end(), c) != v.end(); };
  for (const AicoreComplex::Waiting& w : chip.cores().waiting_cores()) {
    record::StuckWait s{w.core, w.task->id, w.block, w.since, "doorbell", "doorbell"};
    if (w.phase) {
      s.kind = wait_kind_name(wait_kind_of(w.phase->kind));
      s.what = phase_key(w.phase->kind);
    }
    if (w.phase && w.phase->kind == PhaseKind::Syncall) {
      for (const auto& e : episodes)
        if (has(e.arrived, w.core))
          s.what = "syncall (HARD) " + std::to_string(e.counted) + "/" + std::to_string(e.participants) + " arrived";
      for (const auto& b : soft)
        if (has(b.arrived, w.core))
          s.what = "syncall (SOFT) " + std::to_string(b.arrived.size()) + "/" + std::to_string(b.used_cores) + " arrived";
    }
    for (const auto& pw : pipe_waits)
      if (pw.core == w.core)
        s.what = pw.op + " " + (pw.pipe.empty() ? std::string("pipe") : "pipe \"" + pw.pipe + "\"") + " tile " +
                 std::to_string(pw.tile);
    for (const auto& f : flags)
      if (f.core == w.core) {
        s.kind = "flag";
        s.what = "flag " + std::to_string(f.flag) + " " + std::to_string(f.value) + "/" + std::to_string(f.count) +
                 " arrived";
      }
    out.push_back(std::move(s));
  }
  return out;
}

// The observers every run has, the summary's counters, the figures and the
// failure witness, as one sink of the fan-out: each of their hooks reaches
// them in that order by direct calls (the witness's inline), where each was
// a virtual call from the fan-out's loop; a scheduler phase record, ~2.7 per
// task, is read by two of them. They do not read each other, so a
// collector the fan-out calls between them before (the critical path's)
// now comes after them. The run's watch (its caps and progress line) comes
// last here for the hooks no writer reads (take_watch): it is then the
// last sink of those hooks, where the fan-out called it, and the hooks
// that only the collectors and the watch read (a block finished, a task
// completed, with every output off) go to one sink, a direct call, where
// the fan-out walked a list of two. With no other sink reading any event
// (every output off) the chip calls this sink itself, no fan-out between
// (Writers::observer), and the scheduler threads sum their phase records
// for the figures and the witness (SchedulerThread::sum_phases).
class Collectors : public SimObserver {
 public:
  Collectors(SummaryStats& s, record::FiguresCollector& f, diagnose::FailureWitness& w)
      : s_(&s), f_(f), w_(w), figures_hooks_(f.hooks()) {}
  // The witness's hooks, called below by name: it overrides no other (one it
  // came to override would not be called from here, so the build says so).
  static constexpr std::uint32_t kWitnessHooks = diagnose::FailureWitness::kHooks;
  static_assert(kWitnessHooks == (hook::Error | hook::SchedPhase | hook::OrchSubmit));
  template <class A, class B>
  static constexpr bool same = std::is_same_v<A, B>;
  using W = diagnose::FailureWitness;
  static_assert(same<decltype(&W::on_submitted), decltype(&RuntimeHooks::on_submitted)> &&
                    same<decltype(&W::on_ready), decltype(&RuntimeHooks::on_ready)> &&
                    same<decltype(&W::on_early_candidate), decltype(&RuntimeHooks::on_early_candidate)> &&
                    same<decltype(&W::on_completed), decltype(&RuntimeHooks::on_completed)> &&
                    same<decltype(&W::on_retired), decltype(&RuntimeHooks::on_retired)> &&
                    same<decltype(&W::on_ring_progress), decltype(&RuntimeHooks::on_ring_progress)> &&
                    same<decltype(&W::on_scope_sample), decltype(&RuntimeHooks::on_scope_sample)> &&
                    same<decltype(&W::on_warning), decltype(&RuntimeHooks::on_warning)> &&
                    same<decltype(&W::on_block_finished), decltype(&SimObserver::on_block_finished)> &&
                    same<decltype(&W::on_core_wait), decltype(&SimObserver::on_core_wait)> &&
                    same<decltype(&W::on_l2_access), decltype(&SimObserver::on_l2_access)>,
                "FailureWitness overrides a hook outside its kHooks: add it there and call it from Collectors");
  std::uint32_t hooks() const override { return stats_hooks_ | figures_hooks_ | kWitnessHooks | watch_hooks_; }
  // Of the collectors, only the figures' overhead sweep reads edges.
  bool reads_edges() const override { return f_.reads_edges(); }
  // The watch's hooks in `mask` (of RunWatch::kHooks) are called from here,
  // after the collectors'; asked before this is added to a fan-out.
  void take_watch(RunWatch* w, std::uint32_t mask) {
    watch_ = w;
    watch_hooks_ = w ? mask & RunWatch::kHooks : 0u;
  }

  void on_submitted(const Task& t, const SubmitRequest& q, const std::vector<EdgeInfo>& e) override {
    if (stats_hooks_ & hook::Submitted) s_->SummaryStats::on_submitted(t, q, e);
    if (figures(hook::Submitted)) f_.record::FiguresCollector::on_submitted(t, q, e);
    if (watch_hooks_ & hook::Submitted) watch_->RunWatch::on_submitted(t, q, e);
  }
  void on_completed(Task& t) override {
    if (stats_hooks_ & hook::Completed) s_->SummaryStats::on_completed(t);
    if (figures(hook::Completed)) f_.record::FiguresCollector::on_completed(t);
    if (watch_hooks_ & hook::Completed) watch_->RunWatch::on_completed(t);
  }
  // Both read the task's block times (those of a run that did not stop:
  // the summary's and the figures' are then the same), taken once here and
  // without a copy when no block is in flight (a task retires with its
  // blocks finished; each copied the 100-byte sum).
  void on_retired(Task& t) override {
    if ((stats_hooks_ & hook::Retired) && figures(hook::Retired) && s_->until == kNever && f_.stopped_at() == kNever) {
      BlockTimes scratch;
      const BlockTimes& b = t.block_times(scratch);
      s_->SummaryStats::retired(t, &b);
      f_.record::FiguresCollector::retired(t, b);
      return;
    }
    if (stats_hooks_ & hook::Retired) s_->SummaryStats::on_retired(t);
    if (figures(hook::Retired)) f_.record::FiguresCollector::on_retired(t);
  }
  void on_scope_sample(const ScopeSample& x) override {
    if (stats_hooks_ & hook::ScopeSample) s_->SummaryStats::on_scope_sample(x);
    if (figures(hook::ScopeSample)) f_.record::FiguresCollector::on_scope_sample(x);
  }
  void on_error(const LatchedError& e) override {
    if (stats_hooks_ & hook::Error) s_->SummaryStats::on_error(e);
    if (figures(hook::Error)) f_.record::FiguresCollector::on_error(e);
    w_.diagnose::FailureWitness::on_error(e);
  }
  void on_warning(const std::string& k, const std::string& m) override {
    if (stats_hooks_ & hook::Warning) s_->SummaryStats::on_warning(k, m);
    if (figures(hook::Warning)) f_.record::FiguresCollector::on_warning(k, m);
  }
  void on_block_finished(const Task& t, const BlockRecord& b) override {
    if (stats_hooks_ & hook::BlockFinished) s_->SummaryStats::on_block_finished(t, b);
    if (figures(hook::BlockFinished)) f_.record::FiguresCollector::on_block_finished(t, b);
    if (watch_hooks_ & hook::BlockFinished) watch_->RunWatch::on_block_finished(t, b);
  }
  void on_sched_phase(const SchedPhaseRecord& r) override {
    if (stats_hooks_ & hook::SchedPhase) s_->SummaryStats::on_sched_phase(r);
    if (figures(hook::SchedPhase)) f_.record::FiguresCollector::on_sched_phase(r);
    w_.diagnose::FailureWitness::on_sched_phase(r);
  }
  void on_orch_submit(const OrchSubmitRecord& r) override {
    if (stats_hooks_ & hook::OrchSubmit) s_->SummaryStats::on_orch_submit(r);
    if (figures(hook::OrchSubmit)) f_.record::FiguresCollector::on_orch_submit(r);
    w_.diagnose::FailureWitness::on_orch_submit(r);
  }
  void on_l2_access(const Task& t, std::uint64_t n, std::uint64_t h, std::uint64_t b) override {
    if (stats_hooks_ & hook::L2Access) s_->SummaryStats::on_l2_access(t, n, h, b);
    if (figures(hook::L2Access)) f_.record::FiguresCollector::on_l2_access(t, n, h, b);
  }
  // Neither reads the other hooks (ready, early candidate, ring progress,
  // core wait): hooks() leaves them out, so these defaults are never called.
  static_assert((hook::Ready | hook::EarlyCandidate | hook::RingProgress | hook::CoreWait) ==
                (hook::All & ~(hook::Submitted | hook::Completed | hook::Retired | hook::ScopeSample | hook::Error |
                               hook::Warning | hook::BlockFinished | hook::SchedPhase | hook::OrchSubmit |
                               hook::L2Access)));

 private:
  SummaryStats* s_;
  record::FiguresCollector& f_;
  diagnose::FailureWitness& w_;
  // The summary's hooks and most of the figures' are known here: their
  // tests fold away (a register test per collector per event).
  static constexpr std::uint32_t stats_hooks_ = SummaryStats::kHooks;
  static constexpr std::uint32_t kFiguresAlways = record::FiguresCollector::kHooks;
  std::uint32_t figures_hooks_;
  bool figures(std::uint32_t bit) const { return (kFiguresAlways & bit) || (figures_hooks_ & bit); }
  RunWatch* watch_ = nullptr;
  std::uint32_t watch_hooks_ = 0;
};

// The output writers the request asks for, fed with the summary's counters.
class Writers {
 public:
  // The fan-out's sinks in order: the collectors, the critical path, the
  // writers, the run's `watch` (last: the collectors call it for the hooks
  // none of the others reads, see Collectors).
  Writers(const RunRequest& req, const Loaded& l, const std::string& dir, RunWatch* watch)
      : stats_(std::make_unique<SummaryStats>()),
        // The overhead sweep keeps every block and task, as the swimlane
        // does; the runtime's analysis reads the same profiling records.
        figures_(l.platform.topo.clusters, req.outputs && l.config.swimlane_level > 0) {
    // The critical path keeps every task and block too: with the same records.
    if (req.outputs && l.config.swimlane_level > 0) path_ = std::make_unique<record::CriticalPathCollector>();
    if (req.outputs) add_writers(req, l, dir);  // else npusim record: only the recorded trace is written
    std::uint32_t others = path_ ? path_->hooks() : 0u;
    for (auto& w : writers_) others |= w->hooks();
    collectors_.take_watch(watch, RunWatch::kHooks & ~others);
    // The collectors read the phase records only for sums (the figures'
    // per-thread phase times, the witness's last work): with no other
    // reader the scheduler threads keep them (SchedulerThread::sum_phases).
    phases_summed_ = !(others & hook::SchedPhase);
    // No other sink reads any event (every output off: the name map reads
    // none, the watch's hooks go through the collectors): the chip calls
    // the collectors directly, without the fan-out's list test per event.
    // They answer reads_edges and reads_sched_detail as the fan-out would
    // (the other sinks, writers and the watch, read neither).
    collectors_only_ = others == 0;
    fanout_.add(&collectors_);  // stats_, figures_, witness_ (and the watch)
    fanout_.add(path_.get());
    for (auto& w : writers_) fanout_.add(w.get());
    if (watch) fanout_.add(watch, RunWatch::kHooks & others);
  }
  void add_writers(const RunRequest& req, const Loaded& l, const std::string& dir) {
    if (l.config.swimlane_level > 0) {
      writers_.push_back(record::make_chip_swimlane_writer(dir, l.config.swimlane_level, req.gzip_level));
      writers_.push_back(
          record::make_perfetto_writer(dir, l.config.swimlane_level, req.gzip_level, figures_.overhead()));
    }
    if (l.config.deps) writers_.push_back(record::make_deps_writer(dir, req.gzip_level));
    if (l.config.scope_stats) writers_.push_back(record::make_scope_stats_writer(dir, req.gzip_level));
    writers_.push_back(record::make_name_map_writer(dir));
    if (req.task_stats) writers_.push_back(record::make_task_stats_writer(dir, req.gzip_level));
  }
  SimObserver& observer() { return collectors_only_ ? static_cast<SimObserver&>(collectors_) : fanout_; }
  bool phases_summed() const { return phases_summed_; }
  // The sums the scheduler threads kept, to the figures and the witness as
  // their records would have brought them (before anything reads either).
  void take_phase_sums(const Chip& chip) {
    for (const auto& s : chip.schedulers()) {
      if (!s->sums_phases()) continue;
      figures_.add_phase_sums(s->index(), s->phase_sums().span);
      witness_.note_last_work(s->phase_sums().last_work);
    }
  }
  SummaryStats& stats() { return *stats_; }
  diagnose::FailureWitness& witness() { return witness_; }
  std::unique_ptr<SummaryStats> take_stats() { return std::move(stats_); }
  // summary.json's `figures` over the run's makespan.
  nlohmann::ordered_json figures(const Platform& p, Time makespan) const {
    return figures_.to_json(makespan, p.topo.clusters, p.topo.total_cores() - p.topo.clusters);
  }

  // summary.json's `critical_path` over the makespan [w0, w1]; null without the records.
  nlohmann::ordered_json critical_path(Time w0, Time w1) const {
    return path_ ? path_->to_json(w0, w1) : nlohmann::ordered_json(nullptr);
  }

  // A failed run: when progress stopped, the fatal that stopped it and the
  // cores left waiting; the summary's per-kernel busy time counts a block
  // still on its core up to the stop, as its swimlane bar does.
  void device_stopped(const diagnose::Failure& f, const Chip& chip) {
    const record::DeviceStop stop{f.stall_time, f.device_time, f.detector_since, f.name, f.message, f.detector,
                                  stuck_waits(chip)};
    stats_->until = f.stall_time;
    figures_.stop_at(f.stall_time);
    for (auto& w : writers_) w->on_device_stop(stop);
  }

  // Each writer writes its final files; returns their paths.
  std::vector<std::string> finish(const Loaded& l) {
    record::RunInfo info;
    info.platform = &l.platform;
    info.config = &l.config;
    info.trace_name = l.trace.name;
    info.trace_file_name = file_component(l.trace.name);
    info.provenance = l.provenance;
    info.kernels = l.trace.all_kernels();  // with those a scene's program defined while it ran
    info.sched_threads = l.config.sched_threads;
    info.orchestrator_thread = l.config.runtime == RuntimeKind::HostBuildGraph ? -1 : l.config.aicpu_thread_num - 1;
    std::vector<std::string> files;
    for (auto& w : writers_) {
      w->finish(info);
      for (const std::string& f : w->files()) files.push_back(f);
    }
    return files;
  }

 private:
  std::unique_ptr<SummaryStats> stats_;
  record::FiguresCollector figures_;
  std::unique_ptr<record::CriticalPathCollector> path_;
  diagnose::FailureWitness witness_;  // the chip's state at the latch, for the device log
  Collectors collectors_{*stats_, figures_, witness_};
  std::vector<std::unique_ptr<record::OutputWriter>> writers_;
  ObserverFanout fanout_;
  bool phases_summed_ = false;
  bool collectors_only_ = false;
};

// An input error raised inside the model (the orchestrator's host_build_graph
// read check) has no file name: it is the trace's; the path is exact.
void rethrow_model_input_error(Chip& chip, const Loaded& l) {
  std::exception_ptr ie = chip.orchestrator().input_error();
  if (!ie) return;
  try {
    std::rethrow_exception(ie);
  } catch (const InputError& e) {
    throw InputError(e.file().empty() ? l.trace.file : e.file(), e.path(), e.message());
  }
}

// A run that was stopped before its end (a cap, a failed write) or would
// have run past the simulated-time limit is no result: exit 2, nothing written.
void check_stopped(const RunWatch& watch, Writers& writers, const Loaded& l) {
  if (record::write_failed()) writers.finish(l);  // throws the IoError that names the file
  if (!watch.stopped().empty()) throw InputError(l.trace.file, "", watch.stopped() + ": stopped, nothing written");
  if (sc_core::sc_pending_activity())
    throw InputError(l.trace.file, "",
                     "the simulation reached npusim's simulated-time limit of 10^15 ns (about 11.6 days of device "
                     "time; beyond it npusim's picosecond clock could wrap): stopped, nothing written");
}

// Tasks still live at the end are handed to the writers once, in ring order.
void retire_live_tasks(Runtime& rt, SimObserver& observer) {
  for (int r = 0; r < kNumRings; ++r) {
    Ring& g = rt.ring(r);
    for (std::uint64_t local = g.tail(); local < g.head(); ++local) observer.on_retired(g.slot(local));
  }
}

// The failure of a finished simulation, explained (--strict-coherency turns
// coherency reports into one); null when it ran to its end.
std::unique_ptr<diagnose::Failure> failure_of(const RunRequest& req, Chip& chip, const SummaryStats& stats,
                                              const diagnose::FailureWitness& witness) {
  Runtime& rt = chip.runtime();
  std::unique_ptr<diagnose::Failure> f;
  if (!rt.finished() || rt.has_error()) f = std::make_unique<diagnose::Failure>(diagnose::diagnose(chip, &witness));
  if (req.strict_coherency && stats.coherency_count) {
    if (!f)
      f = std::make_unique<diagnose::Failure>(coherency_failure(stats.coherency, stats.coherency_count));
    else
      f->diagnosis_lines.push_back("also " + std::to_string(stats.coherency_count) +
                                   " coherency report(s) (--strict-coherency; see the warnings)");
  }
  return f;
}

// Whether a block had started on its core by `t` and not ended by then.
bool on_a_core_at(Runtime& rt, Time t) {
  for (int r = 0; r < kNumRings; ++r) {
    Ring& g = rt.ring(r);
    for (std::uint64_t local = g.tail(); local < g.head(); ++local)
      for (const BlockRecord& b : g.slot(local).blocks)
        if (b.core >= 0 && b.start <= t && (b.end == kNever || b.end > t)) return true;
  }
  return false;
}

// The outcome of a finished simulation: ok or its failure, and the times.
Result outcome(Chip& chip, const SummaryStats& stats, std::unique_ptr<diagnose::Failure> failure) {
  Runtime& rt = chip.runtime();
  Result r;
  r.failure = std::move(failure);
  r.ok = !r.failure;

  const Time orch_start = chip.orchestrator().start_time();
  Time last_completion = stats.last_alloc;
  for (const auto& s : chip.schedulers()) {
    last_completion = std::max(last_completion, s->last_completion());
    if (s->first_dispatch() != kNever && s->last_completion() > s->first_dispatch())
      r.sched_window = std::max(r.sched_window, s->last_completion() - s->first_dispatch());
  }
  // A failed run ends when progress stopped (docs/failures.md, "When it
  // stopped"): after every completion; a kernel still on its core then (at
  // a barrier, or computing) counts up to it, so makespan never exceeds
  // device_wall and is not 0 when a kernel ran.
  const Time end = r.ok ? last_completion : r.failure->stall_time;
  r.device_wall = span(orch_start, end);
  const AicoreComplex& cores = chip.cores();
  const Time last_end = r.ok ? cores.last_end() : on_a_core_at(rt, end) ? end : std::min(cores.last_end(), end);
  r.makespan = cores.first_start() == kNever || cores.first_start() > end ? 0 : span(cores.first_start(), last_end);
  r.submitted = rt.total_submitted();
  r.completed = rt.completed();
  r.tasks = {{"submitted", rt.total_submitted()},
             {"completed", rt.completed()},
             {"blocks_dispatched", chip.blocks_dispatched()},
             {"predicated_skip", rt.predicated_skips()},
             {"dummy", rt.dummy_tasks()},
             {"alloc", rt.alloc_tasks()},
             {"dispatch_ops", stats.dispatch_ops}};
  return r;
}

// One chip of a simulation: its writers, its program and the chip model,
// built before the simulation starts.
class ChipSim {
 public:
  ChipSim(const RunRequest& req, Loaded& l, const std::string& staging_dir, const std::string& name, RunWatch& watch)
      : l_(l), writers_(req, l, staging_dir, &watch), rules_(l.platform, l.config, l.trace.file) {
    SummaryStats& stats = writers_.stats();
    scene::set_hooks(l.trace, {[&stats](const std::string& kind, const std::string& msg) { stats.on_warning(kind, msg); }});
    // npusim check's rules on every operation the orchestrator takes (checks.h).
    program_ = diagnose::ruled(trace::make_source(l.trace, data_, l.platform, l.config), rules_);
    if (!req.record_path.empty()) {  // npusim record: the operations as the program performs them
      recorder_ = std::make_unique<scene::Recorder>(l.trace, data_, l.options);
      program_ = scene::recording(std::move(program_), *recorder_);
    }
    chip_ = std::make_unique<Chip>(name.c_str(), l.platform, l.config, *program_, data_, &writers_.observer());
    writers_.witness().watch(*chip_);
    if (writers_.phases_summed())
      for (const auto& s : chip_->schedulers()) s->sum_phases();
  }

  Chip& chip() { return *chip_; }

  // After the simulation: the chip's outcome, its writers' files staged.
  Result finish(const RunRequest& req, const RunWatch& watch) {
    Chip& chip = *chip_;
    writers_.take_phase_sums(chip);
    rethrow_model_input_error(chip, l_);
    check_stopped(watch, writers_, l_);
    std::unique_ptr<diagnose::Failure> failure = failure_of(req, chip, writers_.stats(), writers_.witness());
    if (!chip.runtime().finished() || chip.runtime().has_error())  // the device stopped (not a coherency report)
      writers_.device_stopped(*failure, chip);  // before the tasks still running are drawn
    retire_live_tasks(chip.runtime(), writers_.observer());
    Result r = outcome(chip, writers_.stats(), std::move(failure));
    r.files = writers_.finish(l_);
    r.stats = writers_.take_stats();
    r.figures = writers_.figures(l_.platform, r.makespan);
    const Time first_start = chip.cores().first_start();
    if (first_start != kNever) r.critical_path = writers_.critical_path(first_start, first_start + r.makespan);
    r.findings = rules_.findings(l_.trace.all_kernels());
    if (recorder_) r.recorded = recorder_->trace_json();
    return r;
  }

 private:
  Loaded& l_;
  Writers writers_;
  diagnose::StaticRules rules_;
  DataStore data_;
  std::unique_ptr<OpSource> program_;
  std::unique_ptr<scene::Recorder> recorder_;
  std::unique_ptr<Chip> chip_;
};

// Builds one chip per program (each with its writers staging into its
// folder), runs the one simulation to its end (every chip finished, failed,
// or a hang diagnosed), and stages each chip's files. A chip whose arena
// does not fit fails before anything runs; so do all of them (one config).
std::vector<Result> simulate_chips(const RunRequest& req, const std::vector<Loaded*>& chips,
                                   const std::vector<std::string>& staging_dirs) {
  std::vector<Result> results;
  for (const Loaded* l : chips)
    if (std::optional<Result> failed = arena_failed(*l)) {  // no chip runs: each reports the first failure
      for (std::size_t i = 0; i < chips.size(); ++i) {
        Result r;
        r.failure = std::make_unique<diagnose::Failure>(*failed->failure);
        r.tasks = failed->tasks;
        results.push_back(std::move(r));
      }
      return results;
    }
  RunWatch watch({req.max_tasks, req.max_output, req.progress && !req.quiet}, STDERR_FILENO);
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  std::vector<std::unique_ptr<ChipSim>> sims;
  for (std::size_t i = 0; i < chips.size(); ++i)
    sims.push_back(std::make_unique<ChipSim>(req, *chips[i], staging_dirs[i],
                                             chips.size() == 1 ? "chip" : "chip_" + std::to_string(i), watch));
  std::unique_ptr<Fabric> fabric;  // several chips: the node's links, each chip on its port
  if (chips.size() > 1) {
    fabric = std::make_unique<Fabric>("interconnect", chips.front()->platform.interconnect, static_cast<int>(chips.size()));
    for (std::size_t i = 0; i < sims.size(); ++i) sims[i]->chip().attach(fabric->port(static_cast<int>(i)));
  }
  sc_core::sc_start(sc_core::sc_time::from_value(kTimeLimit), sc_core::SC_EXIT_ON_STARVATION);
  sanitizer_back_on_main_stack();  // before anything throws on the main stack
  watch.clear_progress();
  for (auto& sim : sims) results.push_back(sim->finish(req, watch));
  return results;
}

// One chip: builds it, its program and the writers, runs the simulation.
Result simulate(const RunRequest& req, Loaded& l, const std::string& staging_dir) {
  std::vector<Result> r = simulate_chips(req, {&l}, {staging_dir});
  return std::move(r.front());
}

// After a capacity fatal: the sizes that would have been enough, found by
// re-running the program (sizing.h) in a folder inside the staging folder.
void suggest_sizes(const RunRequest& req, const Loaded& l, Result& r, const OutputDir& dir) {
  if (!r.stats || !r.failure || !req.suggest) return;
  diagnose::Failure& f = *r.failure;
  diagnose::SizingRequest sr;
  sr.trace_text = l.text.get();
  if (scene::scene_of(l.trace)) sr.scene_file = req.trace_path;  // re-run from its file (sizing.h)
  sr.platform = &l.platform;
  sr.config = l.config;
  sr.submitted = r.submitted;
  sr.max_tasks = req.max_tasks;
  sr.work_dir = dir.staging() + "/.sizing";
  const diagnose::SizingResult s = search_sizes(sr, f);
  std::error_code ec;
  fs::remove_all(sr.work_dir, ec);
  switch (s.kind) {
    case diagnose::SizingResult::Kind::NotCapacity:
      break;
    case diagnose::SizingResult::Kind::Found:
      f.diagnosis["enough"] = s.suggestion.to_json();
      f.diagnosis_lines.push_back("sizes that would have been enough: " + s.suggestion.describe());
      break;
    case diagnose::SizingResult::Kind::Exhausted:
      f.diagnosis_lines.push_back("no " + f.size_field + " up to " + std::to_string(s.limit) + " (" + s.limit_why +
                                  ") gets this program past the failure: the program itself must change (split the "
                                  "scope, move the submission to another ring, shrink the intermediates)");
      break;
    case diagnose::SizingResult::Kind::Stopped:
      f.diagnosis_lines.push_back("no sizes to suggest: " + s.reason);
      break;
  }
}

// summary.json beside the writers' files in `staging` (a chip's folder);
// returns the files, relative to `staging`, and adds their bytes to `bytes`.
std::vector<std::string> stage_outputs(const RunRequest& req, const Loaded& l, const Result& r, const Stopwatch& wall,
                                       const std::string& staging, std::uint64_t& bytes) {
  nlohmann::ordered_json s = summary_json(l, r);
  if (req.host_stats) add_host_stats(s, wall.seconds(), r.submitted);
  record::write_whole(staging + "/summary.json", s.dump(2) + "\n");
  record::write_whole(staging + "/" + kPlatformFile, l.platform_text);
  // The cap counts every file, summary.json included: a run too small for
  // the watch's periodic check is held to it here.
  const std::string cap = output_cap_reached(req.max_output, record::bytes_written(), r.submitted);
  if (!cap.empty()) throw InputError(l.trace.file, "", cap + ": stopped, nothing written");
  std::vector<std::string> files = r.files;
  files.push_back("summary.json");
  files.push_back(kPlatformFile);
  for (const std::string& f : files) {
    std::error_code ec;
    const std::uintmax_t n = fs::file_size(staging + "/" + f, ec);
    if (!ec) bytes += n;
  }
  return files;
}

// summary.json beside the writers' files, then all of them moved into the
// output directory together. Returns the bytes of the files, all together.
std::uint64_t write_outputs(const RunRequest& req, const Loaded& l, const Result& r, const Stopwatch& wall,
                            OutputDir& dir) {
  std::uint64_t bytes = 0;
  dir.commit(stage_outputs(req, l, r, wall, dir.staging(), bytes));
  return bytes;
}

// Warnings, the failure (as the device says it, then npusim's diagnosis) and
// the one-paragraph summary.
void report(const RunRequest& req, const Loaded& l, const Result& r, const std::string& out_dir,
            std::uint64_t out_bytes, std::ostream& out, std::ostream& err) {
  if (r.stats) {
    constexpr std::size_t kPrinted = 20;
    for (std::size_t i = 0; i < r.stats->warnings.size() && i < kPrinted; ++i)
      err << "npusim: warning: " << r.stats->warnings[i] << "\n";
    if (r.stats->warning_count > kPrinted)
      err << "npusim: " << (r.stats->warning_count - kPrinted) << " more warning(s) in summary.json\n";
  }
  if (r.failure) diagnose::print_failure(*r.failure, err);
  if (req.quiet) return;
  out << "npusim: " << l.trace.name << " on " << l.platform.name << " (" << runtime_name(l.config.runtime) << ", "
      << l.config.aicpu_thread_num << " AICPU threads)\n";
  out << "status " << (r.ok ? "ok" : "error") << ": " << r.completed << "/" << r.submitted
      << " tasks completed, device_wall " << us_text(r.device_wall) << ", makespan " << us_text(r.makespan) << "\n";
  if (r.failure) out << "error: " << r.failure->name << " (host code " << r.failure->host_code << ")\n";
  if (req.outputs)
    out << "outputs in " << out_dir << "/ (" << bytes_text(out_bytes) << (req.gzip_level ? ", gzip" : "") << ")\n";
}

// The checks of `npusim check` on what the run launched: each finding a
// warning on `err` (and in summary.json); under --strict, a finding `check`
// calls an error refuses the run (exit 2, nothing written).
void report_static_checks(const RunRequest& req, const Loaded& l, const Result& r, std::ostream& err) {
  std::size_t errors = 0;
  for (const diagnose::Finding& f : r.findings) {
    errors += f.error;
    err << "npusim: " << (req.strict && f.error ? "error" : "warning") << ": " << l.trace.file << ": at " << f.path
        << ": [" << f.rule << "] " << f.message
        << (f.error && !req.strict ? " (npusim check fails on this; run --strict refuses it)" : "") << "\n";
  }
  if (req.strict && errors)
    throw InputError(l.trace.file, "",
                     std::to_string(errors) + " static check error(s) above (--strict): the run is refused, nothing written");
}

}  // namespace

void check_runnable(const std::string& text, const Platform& platform, const std::string& origin,
                    const std::string& made_by) {
  const std::string produced = "the trace " + made_by + " would write";
  try {
    trace::Trace t = trace::parse_trace(text, produced, "trace");
    const RunConfig config = config::resolve(t.run, platform, produced);
    diagnose::StaticRules::cross_chip(t, 1);
    DataStore data;
    diagnose::StaticRules rules(platform, config, produced);
    auto program = trace::make_source(t, data, platform, config);
    std::vector<diagnose::Finding> stops;
    diagnose::dry_run(*program, data, platform, rules, stops);
  } catch (const InputError& e) {
    throw InputError(origin, "",
                     "cannot be made into a trace npusim run accepts (nothing written): " + produced + " is refused" +
                         (e.path().empty() ? "" : " at " + e.path()) + ": " + e.message());
  }
}

// The per-task output files' blocks and collectors fault the heap in page
// by page; with them on, the heap goes on huge pages before the run
// allocates (big_array.h). Without them there are few faults to save, and
// whole 2 MB pages would add their rounding to the peak memory of a run
// whose memory follows the live window. The room is 64 MB and the budget
// of the scratch parts held in memory (OutFile::hold_in_memory: without it
// their chunks past the marked room faulted in by 4 KB pages, 6,000 faults
// in a paged_attention_case1 run).
static void heap_for_outputs(const RunRequest& req) {
  if (req.outputs && (req.swimlane_level > 0 || req.deps || req.scope_stats || req.task_stats))
    record::huge_pages::heap_on_huge_pages((std::size_t{64} << 20) + record::OutFile::kHoldBudget);
}

int run(const RunRequest& req, std::ostream& out, std::ostream& err) {
  const Stopwatch wall;
  heap_for_outputs(req);
  try {
    Loaded l = load(req);                                       // the platform, the trace or scene, the configuration
    diagnose::StaticRules::cross_chip(l.trace, 1);              // one chip: no peer to reach
    OutputDir dir(output_dir(req, l));                          // checked and locked before simulating
    Result r = simulate(req, l, dir.staging());                 // build the chip, run it to its end
    report_static_checks(req, l, r, err);                       // npusim check's findings: warnings, or exit 2 (--strict)
    suggest_sizes(req, l, r, dir);                              // after a capacity fatal: what would have been enough
    const std::uint64_t bytes = write_outputs(req, l, r, wall, dir);  // summary.json and the writers' files, swapped in whole
    report(req, l, r, dir.given(), bytes, out, err);            // warnings, the failure, the summary line
    return r.ok ? kExitOk : kExitDeviceFailure;
  } catch (const InputError& e) {
    if (req.throw_input_errors) throw;
    err << "npusim: error: " << OutputDir::shown(e.what()) << "\n";
    return kExitInputError;
  }
}

int run_chips(const ChipsRequest& req, std::vector<ChipOutcome>& chips, std::ostream& err) {
  const Stopwatch wall;
  heap_for_outputs(req.run);
  try {
    std::vector<Loaded> loaded(req.traces.size());             // each chip's platform, program and configuration
    std::vector<Loaded*> each;
    for (std::size_t i = 0; i < req.traces.size(); ++i) {
      RunRequest one = req.run;
      one.trace_path = req.traces[i];
      loaded[i] = load(one);
      each.push_back(&loaded[i]);
    }
    const int per_node = loaded.front().platform.interconnect.chips_per_node;
    if (static_cast<int>(req.traces.size()) > per_node)
      throw InputError(loaded.front().platform.path, "/interconnect/chips_per_node/value",
                       "an L3 dispatch of " + std::to_string(req.traces.size()) + " chips needs that many chips in "
                       "one node; the platform's full mesh joins " + std::to_string(per_node));
    for (const Loaded& l : loaded)
      diagnose::StaticRules::cross_chip(l.trace, static_cast<int>(loaded.size()));  // peers inside the dispatch
    OutputDir dir(req.run.out_dir);                             // checked and locked before simulating
    std::vector<std::string> folders;
    for (std::size_t i = 0; i < loaded.size(); ++i) {
      folders.push_back(dir.staging() + "/" + chip_folder(static_cast<int>(i)));
      fs::create_directories(folders.back());
    }
    std::vector<Result> results = simulate_chips(req.run, each, folders);  // every chip in one simulation
    std::vector<std::string> files;
    std::uint64_t bytes = 0;
    chips.clear();
    for (std::size_t i = 0; i < results.size(); ++i) {          // each chip's outputs in its folder
      for (const std::string& f : stage_outputs(req.run, loaded[i], results[i], wall, folders[i], bytes))
        files.push_back(chip_folder(static_cast<int>(i)) + "/" + f);
      ChipOutcome c;
      c.ok = results[i].ok;
      c.device_wall = results[i].device_wall;
      if (results[i].failure) c.error = results[i].failure->name;
      chips.push_back(c);
      if (results[i].failure) {
        err << "npusim: chip " << i << ":\n";
        diagnose::print_failure(*results[i].failure, err);
      }
    }
    dir.commit(files);                                          // all chips' outputs swapped in whole
    for (const ChipOutcome& c : chips)
      if (!c.ok) return kExitDeviceFailure;
    return kExitOk;
  } catch (const InputError& e) {
    err << "npusim: error: " << OutputDir::shown(e.what()) << "\n";
    return kExitInputError;
  }
}

int record(const RunRequest& req, std::ostream& out, std::ostream& err) {
  try {
    Loaded l = load(req);                                       // the platform, the scene, the configuration
    if (!scene::scene_of(l.trace))
      throw InputError(req.trace_path, "", "npusim record takes a scene (\"npusim_scene\"): a trace is its own record");
    Result r = simulate(req, l, "");                            // run it, recording its operations
    check_runnable(r.recorded, l.platform, req.trace_path, "npusim record");  // a trace run accepts, or nothing
    record::write_whole(req.record_path, r.recorded);           // the trace, whole or not at all
    report(req, l, r, "", 0, out, err);                         // warnings, the failure, the summary line
    if (!req.quiet) out << "recorded trace in " << req.record_path << "\n";
    return r.ok ? kExitOk : kExitDeviceFailure;
  } catch (const InputError& e) {
    err << "npusim: error: " << e.what() << "\n";
    return kExitInputError;
  }
}

int check(const RunRequest& req, std::ostream& out, std::ostream& err) {
  Loaded l;
  std::uint64_t tasks = 0;
  std::vector<diagnose::Finding> findings;
  try {
    l = load(req, true);
    DataStore data;
    std::unique_ptr<OpSource> program;
    try {
      diagnose::StaticRules::cross_chip(l.trace, 1);  // as run: one chip, no peer to reach
      diagnose::StaticRules rules(l.platform, l.config, l.trace.file);
      program = trace::make_source(l.trace, data, l.platform, l.config);
      std::vector<diagnose::Finding> stops;  // the device's own stops the dry run met
      tasks = diagnose::dry_run(*program, data, l.platform, rules, stops);
      findings = rules.findings(l.trace.all_kernels());
      findings.insert(findings.end(), stops.begin(), stops.end());
    } catch (const InputError&) {
      trace::finish_checks(l.trace, program.get());  // an op not reached may hold an earlier error
      throw;
    }
    trace::finish_checks(l.trace, program.get());
  } catch (const InputError& e) {
    if (req.throw_input_errors) throw;
    err << "npusim: error: " << e.what() << "\n";
    return kExitInputError;
  }
  int errors = 0;
  for (const diagnose::Finding& f : findings) {
    errors += f.error;
    err << "npusim check: " << l.trace.file << ": at " << f.path << ": " << (f.error ? "error" : "warning") << " ["
        << f.rule << "]: " << f.message << "\n";
  }
  if (!req.quiet)
    out << "npusim check: " << l.trace.name << ": " << (errors ? "failed" : "ok") << " (" << tasks << " submits, "
        << l.trace.kernels.size() << " kernels, " << errors << " error(s), " << findings.size() - errors
        << " warning(s))\n";
  return errors ? kExitDeviceFailure : kExitOk;
}

}  // namespace npusim::engine
