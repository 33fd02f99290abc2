// npusim: the command line (cli-and-outputs.md).
//
//   npusim run TRACE [options]        simulate; outputs in --out DIR
//   npusim check TRACE [--platform]   static checks only, no simulation
//   npusim record SCENE -o TRACE      run a scene; write the trace of its operations
//   npusim import DIR -o TRACE        a device capture as a trace that replays it
//   npusim compare BASELINE CURRENT   timing regression check of two summary.json
//   npusim report RUN_DIR -o F.html   a self-contained page of a run's figures and failure (docs/outputs.md)
//   npusim scope-stats FILE           peaks per ring of a scope_stats.jsonl [--html F] [--svg F]
//   npusim worker FILE --out DIR      a worker's dispatches in order, with its arena cache (docs/workers.md)
//   npusim sweep INPUT --grid N=V,... --csv F   a run over a grid of options and platform fields (docs/sweeps.md)
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <new>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <systemc>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "models/common/errors.h"
#include "sim/config/run_options.h"
#include "sim/study/barrier_cost.h"
#include "sim/engine/cli_options.h"
#include "sim/engine/engine.h"
#include "sim/host/interrupt.h"
#include "sim/study/sweep.h"
#include "sim/study/worker.h"
#include "sim/report/compare.h"
#include "sim/report/report.h"
#include "sim/report/scope_stats_report.h"
#include "sim/import/import.h"
#include "sim/config/suggest.h"

namespace {

using npusim::engine::kExitInputError;
using npusim::engine::SimText;
using npusim::engine::to_options;
namespace cfg = npusim::config;

// The options that shape a simulation (run and record).
void add_sim_options(CLI::App* cmd, npusim::engine::RunRequest& req, SimText& t) {
  cmd->add_option("--platform", req.platform, "platform name in platforms/ or a path (default a2a3)");
  cmd->add_option("--seed", t.seed, "seed for sampled kernel durations");
  cmd->add_option("--aicpu-thread-num", t.threads, "AICPU threads: 0 (platform default) or 2..4");
  cmd->add_option("--runtime", t.runtime, "tensormap_and_ringbuffer | host_build_graph");
  cmd->add_option("--hbg-layout", t.layout,
                  "host_build_graph AICPU threads: resolution_thread (default: the last one resolves, owning no "
                  "cores) | all_schedule (every thread owns cores)");
  cmd->add_option("--cache-policy-lowering", t.lowering,
                  "how BYPASS cache policies lower: today (default: accepted, warned, a cached read) | intended "
                  "(the load reads HBM directly and does not allocate in the L2)");
  cmd->add_option("--scheduler-timeout-ms", t.sched_timeout,
                  "the AICPU scheduler's no-progress watchdog in ms (SIMPLER_SCHEDULER_TIMEOUT_MS; default: the "
                  "platform's)");
  cmd->add_option("--ring-task-window", t.rtw, "task slots per ring: N or N0,N1,N2,N3 (0 = default)");
  cmd->add_option("--ring-heap", t.rh, "heap bytes per ring: N or N0,N1,N2,N3 (0 = default)");
  cmd->add_option("--ring-dep-pool", t.rdp, "dep-pool entries per ring: N or N0,N1,N2,N3 (0 = default)");
  cmd->add_option("--max-tasks", t.max_tasks, "stop with exit 2 (nothing written) once more tasks are submitted");
  cmd->add_flag("--progress", req.progress,
                "a progress line on standard error (tasks, simulated time, bytes written); the default on a terminal");
}

void add_run_options(CLI::App* cmd, npusim::engine::RunRequest& req, SimText& t) {
  cmd->add_option("TRACE", req.trace_path, "trace or scene file (- = a trace on standard input)")->required();
  add_sim_options(cmd, req, t);
  cmd->add_option("--out", req.out_dir, "output directory (default npusim_out/<trace name>)");
  cmd->add_option("--swimlane-level", req.swimlane_level, "chip swimlane level 0..4 (default 3; 0 = off)")
      ->check(CLI::Range(0, 4));
  cmd->add_flag("--no-scope-stats", [&req](std::int64_t) { req.scope_stats = false; }, "do not write scope_stats");
  cmd->add_flag("--no-deps", [&req](std::int64_t) { req.deps = false; }, "do not write deps.json");
  cmd->add_flag("--no-task-stats", [&req](std::int64_t) { req.task_stats = false; }, "do not write task_stats.csv");
  cmd->add_flag("-q,--quiet", req.quiet, "no summary on standard output");
  cmd->add_flag("--no-suggest", [&req](std::int64_t) { req.suggest = false; },
                "after a capacity fatal, do not re-run to find the ring sizes that would have been enough");
  cmd->add_flag("--strict-coherency", req.strict_coherency,
                "a coherency report (a read that could see stale data) fails the run: exit 1, COHERENCY_HAZARD");
  cmd->add_flag("--strict", req.strict,
                "a finding npusim check calls an error (a launch PyPTO's verifiers reject) refuses the run: exit 2, "
                "nothing written (otherwise a warning)");
  cmd->add_flag("--no-host-stats", [&req](std::int64_t) { req.host_stats = false; },
                "leave wall-clock figures out of summary.json (byte-identical outputs)");
  cmd->add_option("--max-output", t.max_output,
                  "stop with exit 2 (nothing written) once more bytes are written: N, or N with K, M, G or T (x1024)");
  cmd->add_option("--compress", t.compress,
                  "none | gzip | gzip:LEVEL (1 fastest .. 9 smallest, default 6): the large outputs as NAME.gz "
                  "(docs/outputs.md)");
}

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) v.push_back(x);
  return v;
}

// barrier-cost's --core-type and --participants, checked before anything is measured.
void barrier_cost_lists(npusim::engine::BarrierCostRequest& bc, const std::string& types, const std::string& parts) {
  bc.core_types = split_commas(types);
  for (const std::string& type : bc.core_types)
    if (type != "aiv" && type != "aic" && type != "mix")
      throw npusim::InputError(cfg::kCommandLine, "--core-type", "expected aiv, aic or mix, got \"" + type + "\"");
  for (const std::string& n : split_commas(parts)) {
    std::size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(n, &used);
    } catch (const std::exception&) {
    }
    if (v < 1 || used != n.size())
      throw npusim::InputError(cfg::kCommandLine, "--participants", "expected positive integers, got \"" + n + "\"");
    bc.participants.push_back(v);
  }
}

}  // namespace

// What npusim prints goes through this filter: names from a trace (kernels,
// scope sites, the trace's name) may hold control characters, and an escape
// sequence must not reach the terminal (or a CI log shown in one). Control
// characters other than newline and tab are printed as \xHH.
class PrintableBuf : public std::streambuf {
 public:
  explicit PrintableBuf(std::streambuf* to) : to_(to) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const unsigned char b = static_cast<unsigned char>(traits_type::to_char_type(c));
    if ((b >= 0x20 && b != 0x7f) || b == '\n' || b == '\t') return to_->sputc(static_cast<char>(b));
    static const char kHex[] = "0123456789abcdef";
    const char esc[4] = {'\\', 'x', kHex[b >> 4], kHex[b & 15]};
    return to_->sputn(esc, 4) == 4 ? c : traits_type::eof();
  }
  int sync() override { return to_->pubsync(); }

 private:
  std::streambuf* to_;
};

// Address space kept for the way out when an allocation fails (messages,
// cleanup): 16 MB mapped and never touched, so it costs no memory. Mapped
// directly, not malloc'd: LeakSanitizer reads every heap block a pointer
// reaches at exit, and reading 16 MB of untouched pages cost each npusim run
// under ASan 4,096 page faults, about a third of its start-up and exit.
constexpr std::size_t kReserveBytes = 16u << 20;
void* g_reserve = nullptr;

void keep_reserve() {
  void* p = ::mmap(nullptr, kReserveBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_reserve = p == MAP_FAILED ? nullptr : p;
}

// The first failed allocation gives the reserve back and fails: the reserve
// is for the way out (unwinding, the message), not for going on.
void on_out_of_memory() {
  npusim::out_of_memory() = true;
  if (g_reserve) {
    ::munmap(g_reserve, kReserveBytes);
    g_reserve = nullptr;
  }
  throw std::bad_alloc();
}

int out_of_memory_exit() {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  std::cerr << "npusim: error: out of host memory (peak " << ru.ru_maxrss / 1024
            << " MB): the run needs more memory than this process may use; nothing written "
               "(docs/outputs.md, \"Limits\", says what grows with a trace)\n";
  return kExitInputError;
}

// SystemC 2.3.4 allocates and zero-fills a 3 MB scratch heap when it is
// loaded (sc_core::sc_temp_heap, sc_byte_heap::initialize(0x300000), for the
// temporaries of sc_dt concatenations, which npusim never forms): 3 MB of
// every run's peak memory for nothing. MADV_DONTNEED gives its whole pages
// back; private anonymous pages read as zero when next touched, so the heap
// stays exactly as SystemC left it (zero-filled) should anything use it.
void release_systemc_scratch_heap() {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto* heap = &sc_core::sc_temp_heap;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(heap->m_bgn_p) + page - 1) & ~(page - 1);
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(heap->m_end_p) & ~(page - 1);
  if (heap->m_bgn_p && end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// Our own main (it takes precedence over libsystemc's): SystemC's copyright
// banner would otherwise go to stderr before sc_main runs.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  release_systemc_scratch_heap();
  keep_reserve();
  std::set_new_handler(on_out_of_memory);
  npusim::engine::interrupt::install();
  const int status = sc_core::sc_elab_and_sim(argc, argv);
#if defined(__SANITIZE_ADDRESS__)
  // The leak check, before static teardown (docs/testing.md, "Sanitizers").
  __lsan_do_leak_check();
#endif
  return status;
}

namespace {

// The command line: every subcommand, its options and the values they fill.
class CommandLine {
 public:
  CommandLine();
  // Parses argv; a status when npusim is done (help, version, a usage error).
  std::optional<int> parse(int argc, char* argv[]);
  // Runs the subcommand that was chosen.
  int execute();

 private:
  std::optional<int> usage_error(const std::string& message, const CLI::App* sub);
  std::optional<int> unexpected(const CLI::App& sub);
  std::optional<int> blank_value(const CLI::App& sub);

  CLI::App app_{"npusim: a cycle-approximate simulator of the a2a3 NPU and its AICPU runtime"};
  npusim::engine::RunRequest req_;
  SimText sim_;
  std::string capture_dir_, import_out_, import_name_;
  std::string base_, cur_;
  npusim::record::CompareOptions compare_opts_;
  struct {
    std::string tolerance, gate, ring_threshold, format;
  } compare_text_;  // parsed by compare_options()
  npusim::record::CompareOptions& compare_options();
  std::string stats_file_, stats_html_, stats_svg_;
  std::string report_dir_, report_out_;
  npusim::engine::BarrierCostRequest bc_;
  std::string bc_types_ = "aiv,aic,mix", bc_parts_;
  npusim::engine::WorkerRequest worker_;
  npusim::engine::SweepRequest sweep_;
  CLI::App *run_, *check_, *record_, *import_, *compare_, *stats_, *report_, *bcost_, *worker_cmd_, *sweep_cmd_;
};

CommandLine::CommandLine() {
  app_.name("npusim");
  app_.require_subcommand(1);
  app_.set_version_flag("--version", "npusim " NPUSIM_VERSION);  // CMake's project version

  run_ = app_.add_subcommand("run", "simulate a trace or a scene");
  add_run_options(run_, req_, sim_);

  check_ = app_.add_subcommand("check", "check a trace or a scene without simulating");
  check_->add_option("TRACE", req_.trace_path, "trace or scene file (- = a trace on standard input)")->required();
  check_->add_option("--platform", req_.platform, "platform name or path");
  check_->add_flag("-q,--quiet", req_.quiet, "no output on success");

  record_ = app_.add_subcommand("record", "run a scene and write the trace of the operations it performed");
  record_->add_option("SCENE", req_.trace_path, "scene file")->required();
  record_->add_option("-o,--output", req_.record_path, "the trace to write")->required();
  add_sim_options(record_, req_, sim_);
  record_->add_flag("-q,--quiet", req_.quiet, "no summary on standard output");

  import_ = app_.add_subcommand("import", "turn a device capture into a trace that replays it");
  import_->add_option("CAPTURE_DIR", capture_dir_, "deps.json, chip_swimlane_records.json, name_map_*.json, "
                                                   "scope_stats/ (optional)")->required();
  import_->add_option("-o,--output", import_out_, "the trace to write")->required();
  import_->add_option("--name", import_name_, "the trace's name (default: the name map's orchestrator_name)");

  compare_ = app_.add_subcommand("compare", "compare two summary.json files");
  compare_->add_option("BASELINE", base_, "baseline summary.json, or a run folder (npusim run's --out)")->required();
  compare_->add_option("CURRENT", cur_, "current summary.json, or a run folder")->required();
  compare_->add_option("--tolerance", compare_text_.tolerance,
                       "allowed slowdown of the times in percent: 1 or 1% (default 0)");
  compare_->add_option("--tolerance-for", compare_opts_.tolerance_for,
                       "NAME=PCT: the tolerance of a figure or of the figures under a dotted prefix; those figures "
                       "gate (repeatable)")
      ->allow_extra_args(false);
  compare_->add_option("--gate", compare_text_.gate,
                       "times (default: the status, device_wall_ns and makespan_ns fail the comparison, the other "
                       "figures are reported) | all (every figure beyond its tolerance fails it too)");
  compare_->add_option("--ring-threshold", compare_text_.ring_threshold,
                       "a ring peak is beyond when it grew past this share of the ring's capacity (default 80%)");
  compare_->add_option("--format", compare_text_.format, "text (default) | json | markdown | junit");
  compare_->add_flag("--allow-different", compare_opts_.allow_different,
                     "compare summaries of different traces, platforms or run options (refused otherwise: exit 2)");

  stats_ = app_.add_subcommand("scope-stats", "summarise a scope_stats.jsonl: peaks per ring, wedged scopes");
  stats_->add_option("FILE", stats_file_, "scope_stats/scope_stats.jsonl of a run")->required();
  stats_->add_option("--html", stats_html_, "also write a self-contained HTML page with the occupancy plot");
  stats_->add_option("--svg", stats_svg_, "also write the occupancy plot as one SVG");

  report_ = app_.add_subcommand("report", "a self-contained HTML page of a run: figures, charts, the failure");
  report_->add_option("RUN_DIR", report_dir_, "the --out folder of npusim run (reads its summary.json)")->required();
  report_->add_option("-o,--output", report_out_, "the page to write (keep it outside RUN_DIR)")->required();

  bcost_ = app_.add_subcommand("barrier-cost", "SOFT vs HARD syncall cost by participant count");
  bcost_->add_option("--platform", bc_.platform, "platform name or path (default a2a3)");
  bcost_->add_option("--core-type", bc_types_, "comma-separated core types: aiv, aic, mix (default all)");
  bcost_->add_option("--participants", bc_parts_, "comma-separated participant counts (default powers of two and full)");
  bcost_->add_option("--csv", bc_.csv, "also write the table as CSV");
  bcost_->add_option("--svg", bc_.svg, "also write the plot as SVG");
  bcost_->add_option("--html", bc_.html, "also write an HTML page with the plot and the table");

  worker_cmd_ = app_.add_subcommand("worker", "run a worker's dispatches in order, with its single-slot arena cache");
  worker_cmd_->add_option("FILE", worker_.file, "worker file (\"npusim_worker\": 1; docs/workers.md)")->required();
  worker_cmd_->add_option("--out", worker_.out_dir, "output directory (default npusim_out/<worker file name>)");
  worker_cmd_->add_option("--platform", worker_.platform, "platform name or path (default a2a3)");
  worker_cmd_->add_flag("-q,--quiet", worker_.quiet, "no summary on standard output");
  worker_cmd_->add_option("--swimlane-level", worker_.swimlane_level,
                          "each dispatch's chip swimlane level 0..4 (default 3; 0 = off)")
      ->check(CLI::Range(0, 4));
  worker_cmd_->add_flag("--no-scope-stats", [this](std::int64_t) { worker_.scope_stats = false; },
                        "the dispatches write no scope_stats");
  worker_cmd_->add_flag("--no-deps", [this](std::int64_t) { worker_.deps = false; }, "the dispatches write no deps.json");
  worker_cmd_->add_flag("--no-task-stats", [this](std::int64_t) { worker_.task_stats = false; },
                        "the dispatches write no task_stats.csv");
  worker_cmd_->add_flag("--no-suggest", [this](std::int64_t) { worker_.suggest = false; },
                        "after a dispatch's capacity fatal, do not re-run to find the ring sizes that would have been enough");

  sweep_cmd_ = app_.add_subcommand("sweep", "run a trace, scene or worker file over a grid of run options and platform fields");
  sweep_cmd_->add_option("INPUT", sweep_.input, "trace, scene or worker file")->required();
  sweep_cmd_->add_option("--grid", sweep_.grid,
                         "NAME=V1,V2,...: a run option (ring_task_window, runtime, ...) or a platform field by its "
                         "JSON pointer (/sched/dispatch_task_ns); repeatable, points are the product")
      ->required()
      ->allow_extra_args(false);
  sweep_cmd_->add_option("--csv", sweep_.csv, "the table, one row per point (the plot: the same name, .svg)")
      ->required();
  sweep_cmd_->add_option("--platform", sweep_.platform, "platform name or path (default a2a3)");
  sweep_cmd_->add_option("--jobs", sweep_.jobs, "points run at once (default: the number of processors)")
      ->check(CLI::Range(1, npusim::engine::interrupt::kMaxChildren));
  sweep_cmd_->add_option("--scheduler", sweep_.scheduler,
                         "a Dask distributed scheduler (tcp://HOST:PORT): the points run as its tasks (docs/sweeps.md)");
  sweep_cmd_->add_flag("-q,--quiet", sweep_.quiet, "no summary line on standard output");

  // Unknown options and arguments are collected, not refused by CLI11, so
  // that the message can say what was probably meant (unexpected()).
  for (CLI::App* sub : app_.get_subcommands({})) sub->allow_extras();
}

// "npusim: error: MESSAGE", then where to read the usage.
std::optional<int> CommandLine::usage_error(const std::string& message, const CLI::App* sub) {
  std::cerr << "npusim: error: " << message << "\n"
            << "npusim: see 'npusim " << (sub ? sub->get_name() + " " : std::string()) << "--help'\n";
  return kExitInputError;
}

// The first argument the subcommand did not take: an option it does not
// have (with the closest one it has), or one argument too many.
std::optional<int> CommandLine::unexpected(const CLI::App& sub) {
  const std::vector<std::string> extra = sub.remaining();
  if (extra.empty()) return std::nullopt;
  const std::string& arg = extra.front();
  const std::string where = " for 'npusim " + sub.get_name() + "'";
  if (arg.size() < 2 || arg[0] != '-')
    return usage_error("unexpected argument '" + arg + "'" + where, &sub);
  const std::string name = arg.substr(0, arg.find('='));
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  const std::string guess = npusim::config::closest(name, names);
  return usage_error("unknown option '" + name + "'" + where + (guess.empty() ? "" : "; did you mean '" + guess + "'?"),
                     &sub);
}

// What a value of `option` (of subcommand `sub`) should be, for the message
// about a blank one; the wording of the option's other errors where it has them.
std::string expectation(const std::string& sub, const std::string& option) {
  static const std::map<std::string, std::string> kByOption = {
      {"--platform", "a platform name or file"},
      {"--seed", "a non-negative integer"},
      {"--aicpu-thread-num", "0 (auto) or an integer >= 2"},
      {"--runtime", "\"tensormap_and_ringbuffer\" or \"host_build_graph\""},
      {"--hbg-layout", "\"resolution_thread\" or \"all_schedule\""},
      {"--cache-policy-lowering", "\"today\" or \"intended\""},
      {"--scheduler-timeout-ms", "an integer in [1, INT32_MAX] (ms)"},
      {"--ring-task-window", "N or N0,N1,N2,N3"},
      {"--ring-heap", "N or N0,N1,N2,N3"},
      {"--ring-dep-pool", "N or N0,N1,N2,N3"},
      {"--max-tasks", "a positive integer"},
      {"--max-output", "a positive number of bytes (N, or N followed by K, M, G or T)"},
      {"--compress", "none, gzip or gzip:LEVEL with LEVEL 1..9"},
      {"--swimlane-level", "a chip swimlane level 0..4"},
      {"--out", "an output directory"},
      {"--name", "a trace name"},
      {"--tolerance", "a percentage >= 0"},
      {"--tolerance-for", "NAME=PCT"},
      {"--gate", "times or all"},
      {"--ring-threshold", "a percentage of capacity"},
      {"--format", "text, json, markdown or junit"},
      {"--html", "an HTML file to write"},
      {"--svg", "an SVG file to write"},
      {"--csv", "a CSV file to write"},
      {"--core-type", "aiv, aic or mix"},
      {"--participants", "positive integers"},
      {"--grid", "NAME=V1,V2,..."},
      {"--jobs", "a number of points run at once"},
      {"--scheduler", "a Dask distributed scheduler (tcp://HOST:PORT)"},
      {"TRACE", "a trace or scene file (- = a trace on standard input)"},
      {"SCENE", "a scene file"},
      {"CAPTURE_DIR", "a device capture folder"},
      {"BASELINE", "a summary.json file or a run folder"},
      {"CURRENT", "a summary.json file or a run folder"},
      {"RUN_DIR", "the --out folder of npusim run"},
      {"INPUT", "a trace, scene or worker file"},
  };
  if (option == "--output") return sub == "report" ? "the page to write" : "the trace to write";
  if (option == "FILE") return sub == "worker" ? "a worker file" : "a scope_stats.jsonl file";
  auto it = kByOption.find(option);
  return it == kByOption.end() ? "a value" : it->second;
}

// A value that is empty or only blanks where a path, number or name is
// expected: CLI11 would take it as the default (a number's 0, a path not
// given) and the command would go on as if the option had not been there.
std::optional<int> CommandLine::blank_value(const CLI::App& sub) {
  for (const CLI::Option* o : sub.get_options()) {
    if (o->get_expected_min() == 0) continue;  // a flag
    for (const std::string& v : o->results()) {
      if (v.find_first_not_of(" \t\n\r\f\v") != std::string::npos) continue;
      const std::string name = o->get_name();
      std::cerr << "npusim: error: "
                << npusim::InputError::format(cfg::kCommandLine, name,
                                              "expected " + expectation(sub.get_name(), name) + ", got \"" + v + "\"")
                << "\n";
      return kExitInputError;
    }
  }
  return std::nullopt;
}

std::optional<int> CommandLine::parse(int argc, char* argv[]) {
  if (argc < 2) {  // run bare: the usage
    std::cerr << app_.help();
    return kExitInputError;
  }
  std::vector<std::string> commands;
  for (const CLI::App* sub : app_.get_subcommands({})) commands.push_back(sub->get_name());
  const std::string first = argv[1];
  if (first.empty() || first[0] != '-') {
    if (std::find(commands.begin(), commands.end(), first) == commands.end()) {
      const std::string guess = npusim::config::closest(first, commands);
      std::string list;
      for (const std::string& c : commands) list += (list.empty() ? "" : ", ") + c;
      return usage_error("unknown command '" + first + "'" +
                             (guess.empty() ? "" : "; did you mean '" + guess + "'?") + " (commands: " + list + ")",
                         nullptr);
    }
  }
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app_.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::vector<CLI::App*> chosen = app_.get_subcommands();
    if (chosen.empty() && first[0] == '-') {  // npusim has no options of its own but these
      const std::string name = first.substr(0, first.find('='));
      const std::string guess = npusim::config::closest(name, {"--help", "--version"});
      return usage_error("unknown option '" + name + "'" + (guess.empty() ? "" : "; did you mean '" + guess + "'?"),
                         nullptr);
    }
    const CLI::App* sub = chosen.empty() ? nullptr : chosen.front();
    if (sub) {  // an unknown option, then a blank value, come before what CLI11 complains of
      if (auto status = unexpected(*sub); status) return status;
      if (auto status = blank_value(*sub); status) return status;
    }
    return usage_error(e.what(), sub);
  }
  for (const CLI::App* sub : app_.get_subcommands())
    if (auto status = unexpected(*sub); status) return status;
  for (const CLI::App* sub : app_.get_subcommands())
    if (auto status = blank_value(*sub); status) return status;
  return std::nullopt;
}

// compare's options as typed -> CompareOptions ("5%" and "5" alike).
npusim::record::CompareOptions& CommandLine::compare_options() {
  namespace rec = npusim::record;
  if (!compare_text_.tolerance.empty())
    compare_opts_.tolerance_pct = rec::parse_percentage(compare_text_.tolerance, "--tolerance");
  if (!compare_text_.ring_threshold.empty())
    compare_opts_.ring_threshold_pct = rec::parse_percentage(compare_text_.ring_threshold, "--ring-threshold");
  if (!compare_text_.gate.empty()) compare_opts_.gate = rec::parse_compare_gate(compare_text_.gate);
  if (!compare_text_.format.empty()) compare_opts_.format = rec::parse_compare_format(compare_text_.format);
  return compare_opts_;
}

int CommandLine::execute() {
  if (*run_) {
    to_options(req_, sim_);
    req_.progress = req_.progress || ::isatty(STDERR_FILENO) == 1;
    return npusim::engine::run(req_, std::cout, std::cerr);
  }
  if (*check_) return npusim::engine::check(req_, std::cout, std::cerr);
  if (*record_) {
    to_options(req_, sim_);
    req_.progress = req_.progress || ::isatty(STDERR_FILENO) == 1;
    req_.outputs = false;
    req_.suggest = false;
    return npusim::engine::record(req_, std::cout, std::cerr);
  }
  if (*import_) {
    npusim::scene::import_to_file(capture_dir_, import_out_, import_name_);
    return 0;
  }
  if (*compare_) return npusim::record::compare_summaries(base_, cur_, compare_options(), std::cout);
  if (*bcost_) {
    barrier_cost_lists(bc_, bc_types_, bc_parts_);
    return npusim::engine::barrier_cost(bc_, std::cout);
  }
  if (*worker_cmd_) return npusim::engine::run_worker(worker_, std::cout, std::cerr);
  if (*sweep_cmd_) return npusim::engine::sweep(sweep_, std::cout, std::cerr);
  if (*report_) return npusim::record::report_command(report_dir_, report_out_, std::cout);
  if (*stats_) return npusim::record::scope_stats_command(stats_file_, stats_html_, stats_svg_, std::cout);
  return kExitInputError;
}

// Runs `body`, turning what escapes it into npusim's exit statuses: an input
// error 2, host memory exhausted 2, anything else an internal error (4).
template <class F>
int with_exit_statuses(F body) {
  try {
    return body();
  } catch (const npusim::InputError& e) {
    std::cerr << "npusim: error: " << e.what() << "\n";
    return kExitInputError;
  } catch (const std::bad_alloc&) {
    return out_of_memory_exit();
  } catch (const std::exception& e) {  // SystemC's sc_report included
    if (npusim::out_of_memory()) return out_of_memory_exit();  // a bad_alloc inside a SystemC process
    std::cerr << "npusim: internal error: " << e.what() << "\n"
              << "npusim: this is a bug in npusim, not a result: please report it with the trace, the platform "
                 "and the command line\n";
    return npusim::engine::kExitInternalError;
  }
}

// Every character npusim prints goes through a PrintableBuf. The filters are
// never destroyed: the standard streams are flushed after every static
// destructor has run (ios_base::Init), and must not reach a destroyed buffer.
void filter_standard_streams() {
  static PrintableBuf* out_filter = new PrintableBuf(std::cout.rdbuf());
  static PrintableBuf* err_filter = new PrintableBuf(std::cerr.rdbuf());
  std::cout.rdbuf(out_filter);
  std::cerr.rdbuf(err_filter);
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  filter_standard_streams();
  CommandLine cmd;
  if (std::optional<int> done = cmd.parse(argc, argv)) return *done;
  return with_exit_statuses([&] { return cmd.execute(); });
}
