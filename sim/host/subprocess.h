// Running npusim itself in a child process: the sizing search (sizing.h) and
// `npusim barrier-cost` measure by simulating, and SystemC cannot restart a
// simulation within one process.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace npusim::host {

// The path of npusim's executable: the running one (/proc/self/exe), or the
// one set_self_exe named. The sizing search, sweep and barrier-cost run it,
// and the platforms and the scene runner are found beside it.
std::string self_exe();

// Names npusim's executable for a process that is not npusim (the Python
// module: python3 runs it; python/_npusim.cpp). "" = the running one again.
void set_self_exe(const std::string& path);

// Runs `npusim <args>` (no shell: each argument is passed as it is), its
// standard output and error discarded, and waits for it; an interruption of
// this process is forwarded to it (interrupt.h). Returns its exit status, or
// -1 if it could not be started or did not exit normally.
// `err_file`: where its standard error goes instead ("" = discarded).
int run_self(const std::vector<std::string>& args, const std::string& err_file = "");

// Runs `program <args>` (looked up on PATH) as run_self runs npusim.
int run_program(const std::string& program, const std::vector<std::string>& args, const std::string& err_file = "");

// Starts `npusim <args>` as run_self does, without waiting: its pid, or -1.
// The caller waits for it (wait_any) and tells interrupt.h about it.
pid_t spawn_self(const std::vector<std::string>& args, const std::string& err_file = "");

// Waits for any child to end: its pid and its wait status (WIFEXITED,
// WTERMSIG...); pid -1 when there is no child left.
std::pair<pid_t, int> wait_any();

}  // namespace npusim::host
