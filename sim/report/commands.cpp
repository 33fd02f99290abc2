#include "sim/report/commands.h"

#include <iostream>
#include <memory>
#include <string>

#include "sim/config/command_line.h"
#include "sim/report/compare.h"
#include "sim/report/report.h"
#include "sim/report/scope_stats_report.h"

namespace npusim::report {

namespace report_commands {

// compare's values: the two summaries, the options and those typed as text.
struct CompareCommand {
  std::string base, cur;
  CompareOptions opts;
  std::string tolerance, gate, ring_threshold, format;  // parsed by options()

  // The options as typed -> CompareOptions ("5%" and "5" alike).
  CompareOptions& options() {
    if (!tolerance.empty()) opts.tolerance_pct = parse_percentage(tolerance, "--tolerance");
    if (!ring_threshold.empty()) opts.ring_threshold_pct = parse_percentage(ring_threshold, "--ring-threshold");
    if (!gate.empty()) opts.gate = parse_compare_gate(gate);
    if (!format.empty()) opts.format = parse_compare_format(format);
    return opts;
  }
};

struct ScopeStatsCommand {
  std::string file, html, svg;
};

struct ReportCommand {
  std::string dir, out;
};

}  // namespace report_commands

void add_compare_command(config::CommandLine& cl) {
  auto c = std::make_shared<report_commands::CompareCommand>();
  CLI::App* cmd = cl.add("compare", "compare two summary.json files",
                         {{"BASELINE", "a summary.json file or a run folder"},
                          {"CURRENT", "a summary.json file or a run folder"},
                          {"--tolerance", "a percentage >= 0"},
                          {"--tolerance-for", "NAME=PCT"},
                          {"--gate", "times or all"},
                          {"--ring-threshold", "a percentage of capacity"},
                          {"--format", "text, json, markdown or junit"}},
                         [c] { return compare_summaries(c->base, c->cur, c->options(), std::cout); });
  cmd->add_option("BASELINE", c->base, "baseline summary.json, or a run folder (npusim run's --out)")->required();
  cmd->add_option("CURRENT", c->cur, "current summary.json, or a run folder")->required();
  cmd->add_option("--tolerance", c->tolerance, "allowed slowdown of the times in percent: 1 or 1% (default 0)");
  cmd->add_option("--tolerance-for", c->opts.tolerance_for,
                  "NAME=PCT: the tolerance of a figure or of the figures under a dotted prefix; those figures "
                  "gate (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--gate", c->gate,
                  "times (default: the status, device_wall_ns and makespan_ns fail the comparison, the other "
                  "figures are reported) | all (every figure beyond its tolerance fails it too)");
  cmd->add_option("--ring-threshold", c->ring_threshold,
                  "a ring peak is beyond when it grew past this share of the ring's capacity (default 80%)");
  cmd->add_option("--format", c->format, "text (default) | json | markdown | junit");
  cmd->add_flag("--allow-different", c->opts.allow_different,
                "compare summaries of different traces, platforms or run options (refused otherwise: exit 2)");
}

void add_scope_stats_command(config::CommandLine& cl) {
  auto c = std::make_shared<report_commands::ScopeStatsCommand>();
  CLI::App* cmd = cl.add("scope-stats", "summarise a scope_stats.jsonl: peaks per ring, wedged scopes",
                         {{"FILE", "a scope_stats.jsonl file"},
                          {"--html", "an HTML file to write"},
                          {"--svg", "an SVG file to write"}},
                         [c] { return scope_stats_command(c->file, c->html, c->svg, std::cout); });
  cmd->add_option("FILE", c->file, "scope_stats/scope_stats.jsonl of a run")->required();
  cmd->add_option("--html", c->html, "also write a self-contained HTML page with the occupancy plot");
  cmd->add_option("--svg", c->svg, "also write the occupancy plot as one SVG");
}

void add_report_command(config::CommandLine& cl) {
  auto c = std::make_shared<report_commands::ReportCommand>();
  CLI::App* cmd = cl.add("report", "a self-contained HTML page of a run: figures, charts, the failure",
                         {{"RUN_DIR", "the --out folder of npusim run"}, {"--output", "the page to write"}},
                         [c] { return report_command(c->dir, c->out, std::cout); });
  cmd->add_option("RUN_DIR", c->dir, "the --out folder of npusim run (reads its summary.json)")->required();
  cmd->add_option("-o,--output", c->out, "the page to write (keep it outside RUN_DIR)")->required();
}

}  // namespace npusim::report
