// The subcommands that ask over many runs: `npusim barrier-cost`, `npusim
// worker`, `npusim sweep`. Each adds itself, its options and what runs it to
// npusim's command line.
#pragma once

namespace npusim::config {
class CommandLine;
}

namespace npusim::study {

// npusim barrier-cost [--core-type T,..] [--participants N,..]: SOFT vs HARD syncall cost.
void add_barrier_cost_command(config::CommandLine& cl);
// npusim worker FILE --out DIR: a worker's dispatches in order, with its arena cache (docs/workers.md).
void add_worker_command(config::CommandLine& cl);
// npusim sweep INPUT --grid N=V,... --csv F: a run over a grid of options and platform fields (docs/sweeps.md).
void add_sweep_command(config::CommandLine& cl);

}  // namespace npusim::study
