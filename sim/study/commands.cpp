#include "sim/study/commands.h"

#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "models/common/errors.h"
#include "sim/config/command_line.h"
#include "sim/config/run_options.h"
#include "sim/host/interrupt.h"
#include "sim/study/barrier_cost.h"
#include "sim/study/sweep.h"
#include "sim/study/worker.h"

namespace npusim::study {

namespace study_commands {

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) v.push_back(x);
  return v;
}

// barrier-cost's --core-type and --participants, checked before anything is measured.
void barrier_cost_lists(BarrierCostRequest& bc, const std::string& types, const std::string& parts) {
  bc.core_types = split_commas(types);
  for (const std::string& type : bc.core_types)
    if (type != "aiv" && type != "aic" && type != "mix")
      throw npusim::InputError(config::kCommandLine, "--core-type", "expected aiv, aic or mix, got \"" + type + "\"");
  for (const std::string& n : split_commas(parts)) {
    std::size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(n, &used);
    } catch (const std::exception&) {
    }
    if (v < 1 || used != n.size())
      throw npusim::InputError(config::kCommandLine, "--participants",
                               "expected positive integers, got \"" + n + "\"");
    bc.participants.push_back(v);
  }
}

// barrier-cost's values: the request and its lists as typed.
struct BarrierCostCommand {
  BarrierCostRequest req;
  std::string types = "aiv,aic,mix", parts;
};

}  // namespace study_commands

void add_barrier_cost_command(config::CommandLine& cl) {
  auto c = std::make_shared<study_commands::BarrierCostCommand>();
  CLI::App* cmd = cl.add("barrier-cost", "SOFT vs HARD syncall cost by participant count",
                         {{"--platform", "a platform name or file"},
                          {"--core-type", "aiv, aic or mix"},
                          {"--participants", "positive integers"},
                          {"--csv", "a CSV file to write"},
                          {"--svg", "an SVG file to write"},
                          {"--html", "an HTML file to write"}},
                         [c] {
                           study_commands::barrier_cost_lists(c->req, c->types, c->parts);
                           return barrier_cost(c->req, std::cout);
                         });
  cmd->add_option("--platform", c->req.platform, "platform name or path (default a2a3)");
  cmd->add_option("--core-type", c->types, "comma-separated core types: aiv, aic, mix (default all)");
  cmd->add_option("--participants", c->parts, "comma-separated participant counts (default powers of two and full)");
  cmd->add_option("--csv", c->req.csv, "also write the table as CSV");
  cmd->add_option("--svg", c->req.svg, "also write the plot as SVG");
  cmd->add_option("--html", c->req.html, "also write an HTML page with the plot and the table");
}

void add_worker_command(config::CommandLine& cl) {
  auto w = std::make_shared<WorkerRequest>();
  CLI::App* cmd = cl.add("worker", "run a worker's dispatches in order, with its single-slot arena cache",
                         {{"FILE", "a worker file"},
                          {"--out", "an output directory"},
                          {"--platform", "a platform name or file"},
                          {"--swimlane-level", "a chip swimlane level 0..4"}},
                         [w] { return run_worker(*w, std::cout, std::cerr); });
  cmd->add_option("FILE", w->file, "worker file (\"npusim_worker\": 1; docs/workers.md)")->required();
  cmd->add_option("--out", w->out_dir, "output directory (default npusim_out/<worker file name>)");
  cmd->add_option("--platform", w->platform, "platform name or path (default a2a3)");
  cmd->add_flag("-q,--quiet", w->quiet, "no summary on standard output");
  cmd->add_option("--swimlane-level", w->swimlane_level, "each dispatch's chip swimlane level 0..4 (default 3; 0 = off)")
      ->check(CLI::Range(0, 4));
  cmd->add_flag("--no-scope-stats", [w](std::int64_t) { w->scope_stats = false; }, "the dispatches write no scope_stats");
  cmd->add_flag("--no-deps", [w](std::int64_t) { w->deps = false; }, "the dispatches write no deps.json");
  cmd->add_flag("--no-task-stats", [w](std::int64_t) { w->task_stats = false; },
                "the dispatches write no task_stats.csv");
  cmd->add_flag("--no-suggest", [w](std::int64_t) { w->suggest = false; },
                "after a dispatch's capacity fatal, do not re-run to find the ring sizes that would have been enough");
}

void add_sweep_command(config::CommandLine& cl) {
  auto s = std::make_shared<SweepRequest>();
  CLI::App* cmd = cl.add("sweep", "run a trace, scene or worker file over a grid of run options and platform fields",
                         {{"INPUT", "a trace, scene or worker file"},
                          {"--grid", "NAME=V1,V2,..."},
                          {"--csv", "a CSV file to write"},
                          {"--platform", "a platform name or file"},
                          {"--jobs", "a number of points run at once"},
                          {"--scheduler", "a Dask distributed scheduler (tcp://HOST:PORT)"}},
                         [s] { return sweep(*s, std::cout, std::cerr); });
  cmd->add_option("INPUT", s->input, "trace, scene or worker file")->required();
  cmd->add_option("--grid", s->grid,
                  "NAME=V1,V2,...: a run option (ring_task_window, runtime, ...) or a platform field by its "
                  "JSON pointer (/sched/dispatch_task_ns); repeatable, points are the product")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("--csv", s->csv, "the table, one row per point (the plot: the same name, .svg)")->required();
  cmd->add_option("--platform", s->platform, "platform name or path (default a2a3)");
  cmd->add_option("--jobs", s->jobs, "points run at once (default: the number of processors)")
      ->check(CLI::Range(1, host::interrupt::kMaxChildren));
  cmd->add_option("--scheduler", s->scheduler,
                  "a Dask distributed scheduler (tcp://HOST:PORT): the points run as its tasks (docs/sweeps.md)");
  cmd->add_flag("-q,--quiet", s->quiet, "no summary line on standard output");
}

}  // namespace npusim::study
