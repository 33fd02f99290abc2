#include "sim/engine/commands.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include <unistd.h>

#include "sim/config/command_line.h"
#include "sim/engine/cli_options.h"
#include "sim/engine/engine.h"

namespace npusim::engine {

static_assert(config::kExitUsageError == kExitInputError, "a usage error is an input error");

namespace engine_commands {

// What run's and record's values are: the request and the options as typed.
struct SimCommand {
  RunRequest req;
  SimText text;
};

// The options that shape a simulation (run and record).
void add_sim_options(CLI::App* cmd, RunRequest& req, SimText& t) {
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

// What a blank value of a simulation option should have been.
config::Expectations sim_expectations() {
  return {
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
  };
}

void add_run_options(CLI::App* cmd, RunRequest& req, SimText& t) {
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
                  "none (the default) | gzip (level 1, the fastest) | gzip:LEVEL (1..9, 9 the smallest): the large "
                  "outputs as NAME.gz (docs/outputs.md)");
}

}  // namespace engine_commands

void add_run_command(config::CommandLine& cl) {
  auto c = std::make_shared<engine_commands::SimCommand>();
  config::Expectations expects = engine_commands::sim_expectations();
  expects.insert({
      {"TRACE", "a trace or scene file (- = a trace on standard input)"},
      {"--out", "an output directory"},
      {"--swimlane-level", "a chip swimlane level 0..4"},
      {"--max-output", "a positive number of bytes (N, or N followed by K, M, G or T)"},
      {"--compress", "none, gzip or gzip:LEVEL with LEVEL 1..9"},
  });
  CLI::App* cmd = cl.add("run", "simulate a trace or a scene", std::move(expects), [c] {
    to_options(c->req, c->text);
    c->req.progress = c->req.progress || ::isatty(STDERR_FILENO) == 1;
    return run(c->req, std::cout, std::cerr);
  });
  engine_commands::add_run_options(cmd, c->req, c->text);
}

void add_check_command(config::CommandLine& cl) {
  auto req = std::make_shared<RunRequest>();
  CLI::App* cmd = cl.add("check", "check a trace or a scene without simulating",
                         {{"TRACE", "a trace or scene file (- = a trace on standard input)"},
                          {"--platform", "a platform name or file"}},
                         [req] { return check(*req, std::cout, std::cerr); });
  cmd->add_option("TRACE", req->trace_path, "trace or scene file (- = a trace on standard input)")->required();
  cmd->add_option("--platform", req->platform, "platform name or path");
  cmd->add_flag("-q,--quiet", req->quiet, "no output on success");
}

void add_record_command(config::CommandLine& cl) {
  auto c = std::make_shared<engine_commands::SimCommand>();
  config::Expectations expects = engine_commands::sim_expectations();
  expects.insert({{"SCENE", "a scene file"}, {"--output", "the trace to write"}});
  CLI::App* cmd = cl.add("record", "run a scene and write the trace of the operations it performed",
                         std::move(expects), [c] {
                           to_options(c->req, c->text);
                           c->req.progress = c->req.progress || ::isatty(STDERR_FILENO) == 1;
                           c->req.outputs = false;
                           c->req.suggest = false;
                           return record(c->req, std::cout, std::cerr);
                         });
  cmd->add_option("SCENE", c->req.trace_path, "scene file")->required();
  cmd->add_option("-o,--output", c->req.record_path, "the trace to write")->required();
  engine_commands::add_sim_options(cmd, c->req, c->text);
  cmd->add_flag("-q,--quiet", c->req.quiet, "no summary on standard output");
}

}  // namespace npusim::engine
