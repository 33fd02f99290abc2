// Running npusim itself in a child process: the sizing search (sizing.h) and
// `npusim barrier-cost` measure by simulating, and SystemC cannot restart a
// simulation within one process.
#pragma once

#include <string>
#include <vector>

namespace npusim::engine {

// The path of the running executable (/proc/self/exe).
std::string self_exe();

// Runs `npusim <args>` (no shell: each argument is passed as it is), its
// standard output and error discarded, and waits for it; an interruption of
// this process is forwarded to it (interrupt.h). Returns its exit status, or
// -1 if it could not be started or did not exit normally.
// `err_file`: where its standard error goes instead ("" = discarded).
int run_self(const std::vector<std::string>& args, const std::string& err_file = "");

}  // namespace npusim::engine
