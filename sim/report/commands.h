// The subcommands that read finished outputs: `npusim compare`, `npusim
// scope-stats`, `npusim report`. Each adds itself, its options and what runs
// it to npusim's command line.
#pragma once

namespace npusim::config {
class CommandLine;
}

namespace npusim::report {

// npusim compare BASELINE CURRENT: timing regression check of two summary.json.
void add_compare_command(config::CommandLine& cl);
// npusim scope-stats FILE [--html F] [--svg F]: peaks per ring of a scope_stats.jsonl.
void add_scope_stats_command(config::CommandLine& cl);
// npusim report RUN_DIR -o F.html: a self-contained page of a run's figures and failure (docs/outputs.md).
void add_report_command(config::CommandLine& cl);

}  // namespace npusim::report
