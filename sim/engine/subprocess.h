// Running npusim itself in a child process: the sizing search (sizing.h) and
// `npusim barrier-cost` measure by simulating, and SystemC cannot restart a
// simulation within one process.
#pragma once

#include <string>

namespace npusim::engine {

// The path of the running executable (/proc/self/exe).
std::string self_exe();

// `s` quoted for /bin/sh.
std::string shell_quote(const std::string& s);

// Runs `npusim <args>` (args already quoted), output discarded; returns the
// exit status, or -1 if the child did not exit normally.
int run_self(const std::string& args);

}  // namespace npusim::engine
