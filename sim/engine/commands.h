// The subcommands that run one simulation, or check it without running:
// `npusim run`, `npusim check`, `npusim record` (docs/outputs.md). Each adds
// itself, its options and what runs it to npusim's command line.
#pragma once

namespace npusim::config {
class CommandLine;
}

namespace npusim::engine {

// npusim run TRACE [options]: simulate; outputs in --out DIR.
void add_run_command(config::CommandLine& cl);
// npusim check TRACE [--platform]: static checks only, no simulation.
void add_check_command(config::CommandLine& cl);
// npusim record SCENE -o TRACE: run a scene; write the trace of its operations.
void add_record_command(config::CommandLine& cl);

}  // namespace npusim::engine
