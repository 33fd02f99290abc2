#include "sim/host/subprocess.h"

#include <cerrno>
#include <filesystem>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include "sim/host/interrupt.h"

extern char** environ;

namespace npusim::host {

namespace {
std::string& exe_override() {
  static std::string path;
  return path;
}
}  // namespace

void set_self_exe(const std::string& path) { exe_override() = path; }

std::string self_exe() {
  if (!exe_override().empty()) return exe_override();
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("npusim") : p.string();
}

namespace {

// Starts `exe <args>` with standard input and output on /dev/null; `search`:
// look `exe` up on PATH.
pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const std::string& err_file, bool search) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.empty() ? "/dev/null" : err_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = (search ? posix_spawnp : posix_spawn)(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

int exit_status(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

// Waits for `pid`, which gets this process's interruption.
int wait_for(pid_t pid) {
  if (pid < 0) return -1;
  interrupt::set_child(pid);
  int status = 0;
  pid_t w;
  while ((w = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  interrupt::set_child(0);
  if (w != pid) return -1;
  return exit_status(status);
}

}  // namespace

pid_t spawn_self(const std::vector<std::string>& args, const std::string& err_file) {
  return spawn(self_exe(), args, err_file, false);
}

int run_program(const std::string& program, const std::vector<std::string>& args, const std::string& err_file) {
  return wait_for(spawn(program, args, err_file, true));
}

std::pair<pid_t, int> wait_any() {
  int status = 0;
  pid_t w;
  while ((w = ::waitpid(-1, &status, 0)) < 0 && errno == EINTR) {
  }
  return {w, status};
}

int run_self(const std::vector<std::string>& args, const std::string& err_file) {
  return wait_for(spawn_self(args, err_file));
}

}  // namespace npusim::host
