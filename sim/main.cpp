// npusim: the command line (cli-and-outputs.md).
//
//   npusim run TRACE [options]        simulate; outputs in --out DIR
//   npusim check TRACE [--platform]   static checks only, no simulation
//   npusim record SCENE -o TRACE      run a scene; write the trace of its operations
//   npusim import DIR -o TRACE        a device capture as a trace that replays it
//   npusim compare BASELINE CURRENT   timing regression check of two summary.json
//   npusim scope-stats FILE           peaks per ring of a scope_stats.jsonl [--html F] [--svg F]
#include <iostream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <new>

#include <sys/resource.h>
#include <unistd.h>
#include <cstdlib>
#include <systemc>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "models/common/errors.h"
#include "sim/config/run_options.h"
#include "sim/engine/barrier_cost.h"
#include "sim/engine/engine.h"
#include "sim/engine/interrupt.h"
#include "sim/record/compare.h"
#include "sim/record/scope_stats_report.h"
#include "sim/scene/import.h"

namespace {

using npusim::engine::kExitInputError;

// The options that shape a simulation (run and record).
void add_sim_options(CLI::App* cmd, npusim::engine::RunRequest& req, std::string& rtw, std::string& rh,
                     std::string& rdp, std::string& runtime, std::string& seed, std::string& threads,
                     std::string& max_tasks, std::string& layout, std::string& sched_timeout) {
  cmd->add_option("--platform", req.platform, "platform name in platforms/ or a path (default a2a3)");
  cmd->add_option("--seed", seed, "seed for sampled kernel durations");
  cmd->add_option("--aicpu-thread-num", threads, "AICPU threads: 0 (platform default) or 2..4");
  cmd->add_option("--runtime", runtime, "tensormap_and_ringbuffer | host_build_graph");
  cmd->add_option("--hbg-layout", layout,
                  "host_build_graph AICPU threads: resolution_thread (default: the last one resolves, owning no "
                  "cores) | all_schedule (every thread owns cores)");
  cmd->add_option("--ring-task-window", rtw, "task slots per ring: N or N0,N1,N2,N3 (0 = default)");
  cmd->add_option("--ring-heap", rh, "heap bytes per ring: N or N0,N1,N2,N3 (0 = default)");
  cmd->add_option("--ring-dep-pool", rdp, "dep-pool entries per ring: N or N0,N1,N2,N3 (0 = default)");
  cmd->add_option("--scheduler-timeout-ms", sched_timeout,
                  "the AICPU scheduler's no-progress watchdog in ms (SIMPLER_SCHEDULER_TIMEOUT_MS; default: the "
                  "platform's)");
  cmd->add_option("--max-tasks", max_tasks, "stop with exit 2 (nothing written) once more tasks are submitted");
  cmd->add_flag("--progress", req.progress,
                "a progress line on standard error (tasks, simulated time, bytes written); the default on a terminal");
}

void add_run_options(CLI::App* cmd, npusim::engine::RunRequest& req, std::string& rtw,
                     std::string& rh, std::string& rdp, std::string& runtime, std::string& seed,
                     std::string& threads, std::string& max_tasks, std::string& max_output, std::string& layout,
                     std::string& sched_timeout) {
  cmd->add_option("TRACE", req.trace_path, "trace or scene file (- = a trace on standard input)")->required();
  add_sim_options(cmd, req, rtw, rh, rdp, runtime, seed, threads, max_tasks, layout, sched_timeout);
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
  cmd->add_flag("--no-host-stats", [&req](std::int64_t) { req.host_stats = false; },
                "leave wall-clock figures out of summary.json (byte-identical outputs)");
  cmd->add_option("--max-output", max_output,
                  "stop with exit 2 (nothing written) once more bytes are written: N, or N with K, M, G or T (x1024)");
}

// "--max-output": N, or N followed by K, M, G or T (powers of 1024).
std::uint64_t parse_size(const std::string& text, const char* option) {
  std::uint64_t v = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text[i] - '0', &v)) i = text.size() + 1;
  int shift = 0;
  if (i + 1 == text.size()) {
    const char u = static_cast<char>(text[i] & ~0x20);
    shift = u == 'K' ? 10 : u == 'M' ? 20 : u == 'G' ? 30 : u == 'T' ? 40 : -1;
    ++i;
  }
  if (i == 0 || i != text.size() || shift < 0 || (shift && v > (UINT64_MAX >> shift)) || v == 0)
    throw npusim::InputError(npusim::config::kCommandLine, option,
                             "expected a positive number of bytes (N, or N followed by K, M, G or T), got \"" + text +
                                 "\"");
  return v << shift;
}

// Command-line values -> RunOptions, with the trace format's validation.
void to_options(npusim::engine::RunRequest& req, const std::string& rtw, const std::string& rh,
                const std::string& rdp, const std::string& runtime, const std::string& seed,
                const std::string& threads, const std::string& max_tasks, const std::string& max_output,
                const std::string& layout, const std::string& sched_timeout) {
  if (!max_tasks.empty()) {
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = max_tasks[0] == '-' ? 0 : std::stoull(max_tasks, &used);
    } catch (const std::exception&) {
    }
    if (v == 0 || used != max_tasks.size())
      throw npusim::InputError(npusim::config::kCommandLine, "--max-tasks",
                               "expected a positive integer, got \"" + max_tasks + "\"");
    req.max_tasks = v;
  }
  if (!max_output.empty()) req.max_output = parse_size(max_output, "--max-output");
  namespace cfg = npusim::config;
  if (!rtw.empty()) req.cli.ring_task_window = cfg::parse_ring_cli(rtw, "ring_task_window");
  if (!rh.empty()) req.cli.ring_heap = cfg::parse_ring_cli(rh, "ring_heap");
  if (!rdp.empty()) req.cli.ring_dep_pool = cfg::parse_ring_cli(rdp, "ring_dep_pool");
  if (!runtime.empty()) req.cli.runtime = cfg::parse_runtime_cli(runtime);
  if (!layout.empty()) req.cli.hbg_layout = cfg::parse_hbg_layout_cli(layout);
  if (!seed.empty()) req.cli.seed = cfg::parse_seed_cli(seed);
  if (!threads.empty()) req.cli.aicpu_thread_num = cfg::parse_thread_num_cli(threads);
  if (!sched_timeout.empty()) req.cli.scheduler_timeout_ms = cfg::parse_scheduler_timeout_cli(sched_timeout);
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

// Memory kept for the way out when an allocation fails (messages, cleanup).
char* g_reserve = nullptr;

// The first failed allocation frees the reserve and fails: the reserve is
// for the way out (unwinding, the message), not for going on.
void on_out_of_memory() {
  npusim::out_of_memory() = true;
  if (g_reserve) {
    std::free(g_reserve);
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

// Our own main (it takes precedence over libsystemc's): SystemC's copyright
// banner would otherwise go to stderr before sc_main runs.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  g_reserve = static_cast<char*>(std::malloc(16u << 20));
  std::set_new_handler(on_out_of_memory);
  npusim::engine::interrupt::install();
  const int status = sc_core::sc_elab_and_sim(argc, argv);
#if defined(__SANITIZE_ADDRESS__)
  // The leak check, before static teardown (docs/testing.md, "Sanitizers").
  __lsan_do_leak_check();
#endif
  return status;
}

int sc_main(int argc, char* argv[]) {
  // Never destroyed: the standard streams are flushed after every static
  // destructor has run (ios_base::Init), and must not reach a destroyed buffer.
  static PrintableBuf* out_filter = new PrintableBuf(std::cout.rdbuf());
  static PrintableBuf* err_filter = new PrintableBuf(std::cerr.rdbuf());
  std::cout.rdbuf(out_filter);
  std::cerr.rdbuf(err_filter);
  CLI::App app{"npusim: a cycle-approximate simulator of the a2a3 NPU and its AICPU runtime"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "npusim " NPUSIM_VERSION);  // CMake's project version
  npusim::engine::RunRequest req;
  std::string rtw, rh, rdp, runtime;
  std::string seed, threads;  // empty: not given (CLI11 refuses an empty value)
  std::string max_tasks, max_output, layout, sched_timeout;

  CLI::App* run = app.add_subcommand("run", "simulate a trace or a scene");
  add_run_options(run, req, rtw, rh, rdp, runtime, seed, threads, max_tasks, max_output, layout, sched_timeout);
  CLI::App* check = app.add_subcommand("check", "check a trace or a scene without simulating");
  check->add_option("TRACE", req.trace_path, "trace or scene file (- = a trace on standard input)")->required();
  check->add_option("--platform", req.platform, "platform name or path");
  check->add_flag("-q,--quiet", req.quiet, "no output on success");

  CLI::App* record = app.add_subcommand("record", "run a scene and write the trace of the operations it performed");
  record->add_option("SCENE", req.trace_path, "scene file")->required();
  record->add_option("-o,--output", req.record_path, "the trace to write")->required();
  add_sim_options(record, req, rtw, rh, rdp, runtime, seed, threads, max_tasks, layout, sched_timeout);
  record->add_flag("-q,--quiet", req.quiet, "no summary on standard output");

  CLI::App* import = app.add_subcommand("import", "turn a device capture into a trace that replays it");
  std::string capture_dir, import_out, import_name;
  import->add_option("CAPTURE_DIR", capture_dir, "deps.json, chip_swimlane_records.json, name_map_*.json, "
                                                 "scope_stats/ (optional)")->required();
  import->add_option("-o,--output", import_out, "the trace to write")->required();
  import->add_option("--name", import_name, "the trace's name (default: the name map's orchestrator_name)");

  CLI::App* compare = app.add_subcommand("compare", "compare two summary.json files");
  std::string base, cur;
  double tolerance = 0;
  compare->add_option("BASELINE", base, "baseline summary.json")->required();
  compare->add_option("CURRENT", cur, "current summary.json")->required();
  compare->add_option("--tolerance", tolerance, "allowed slowdown in percent (default 0)");
  bool allow_different = false;
  compare->add_flag("--allow-different", allow_different,
                    "compare summaries of different traces, platforms or run options (refused otherwise: exit 2)");

  CLI::App* stats = app.add_subcommand("scope-stats", "summarise a scope_stats.jsonl: peaks per ring, wedged scopes");
  std::string stats_file, stats_html, stats_svg;
  stats->add_option("FILE", stats_file, "scope_stats/scope_stats.jsonl of a run")->required();
  stats->add_option("--html", stats_html, "also write a self-contained HTML page with the occupancy plot");
  stats->add_option("--svg", stats_svg, "also write the occupancy plot as one SVG");

  CLI::App* bcost = app.add_subcommand("barrier-cost", "SOFT vs HARD syncall cost by participant count");
  npusim::engine::BarrierCostRequest bc;
  std::string bc_types = "aiv,aic,mix", bc_parts;
  bcost->add_option("--platform", bc.platform, "platform name or path (default a2a3)");
  bcost->add_option("--core-type", bc_types, "comma-separated core types: aiv, aic, mix (default all)");
  bcost->add_option("--participants", bc_parts, "comma-separated participant counts (default powers of two and full)");
  bcost->add_option("--csv", bc.csv, "also write the table as CSV");
  bcost->add_option("--svg", bc.svg, "also write the plot as SVG");
  bcost->add_option("--html", bc.html, "also write an HTML page with the plot and the table");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitInputError;
  }
  try {
    if (*run) {
      to_options(req, rtw, rh, rdp, runtime, seed, threads, max_tasks, max_output, layout, sched_timeout);
      req.progress = req.progress || ::isatty(STDERR_FILENO) == 1;
      return npusim::engine::run(req, std::cout, std::cerr);
    }
    if (*check) return npusim::engine::check(req, std::cout, std::cerr);
    if (*record) {
      to_options(req, rtw, rh, rdp, runtime, seed, threads, max_tasks, max_output, layout, sched_timeout);
      req.progress = req.progress || ::isatty(STDERR_FILENO) == 1;
      req.outputs = false;
      req.suggest = false;
      return npusim::engine::record(req, std::cout, std::cerr);
    }
    if (*import) {
      npusim::scene::import_to_file(capture_dir, import_out, import_name);
      return 0;
    }
    if (*compare) return npusim::record::compare_summaries(base, cur, tolerance, std::cout, allow_different);
    if (*bcost) {
      auto split = [](const std::string& s) {
        std::vector<std::string> v;
        std::stringstream ss(s);
        for (std::string x; std::getline(ss, x, ',');) v.push_back(x);
        return v;
      };
      bc.core_types = split(bc_types);
      for (const std::string& type : bc.core_types)
        if (type != "aiv" && type != "aic" && type != "mix")
          throw npusim::InputError(npusim::config::kCommandLine, "--core-type",
                                   "expected aiv, aic or mix, got \"" + type + "\"");
      for (const std::string& n : split(bc_parts)) {
        std::size_t used = 0;
        int v = -1;
        try {
          v = std::stoi(n, &used);
        } catch (const std::exception&) {
        }
        if (v < 1 || used != n.size())
          throw npusim::InputError(npusim::config::kCommandLine, "--participants", "expected positive integers, got \"" + n + "\"");
        bc.participants.push_back(v);
      }
      return npusim::engine::barrier_cost(bc, std::cout);
    }
    if (*stats) return npusim::record::scope_stats_command(stats_file, stats_html, stats_svg, std::cout);
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
  return kExitInputError;
}
