// The options that shape a simulation as text (`npusim run`'s and `npusim
// record`'s command line, and the Python module's keyword arguments: python/),
// validated and turned into a RunRequest by one function, so both refuse a
// value with the same InputError (file "command line", path the option).
#pragma once

#include <string>

#include "sim/engine/engine.h"

namespace npusim::engine {

// The text of the options that shape a simulation, as typed (validated by
// to_options); empty: not given (a blank value given is refused first:
// config::CommandLine, sim/config/command_line.h).
struct SimText {
  std::string rtw, rh, rdp, runtime, seed, threads, max_tasks, max_output, layout, sched_timeout, compress, lowering;
};


// Command-line values -> RunRequest (its RunOptions, caps and compression),
// with the trace format's validation. InputError naming the option.
void to_options(RunRequest& req, const SimText& t);

}  // namespace npusim::engine
