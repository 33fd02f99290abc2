// The subcommand that turns a device capture into a trace: `npusim import`.
// It adds itself, its options and what runs it to npusim's command line.
#pragma once

namespace npusim::config {
class CommandLine;
}

namespace npusim::capture {

// npusim import DIR -o TRACE: a device capture as a trace that replays it.
void add_import_command(config::CommandLine& cl);

}  // namespace npusim::capture
