#include "sim/engine/subprocess.h"

#include <cerrno>
#include <filesystem>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include "sim/engine/interrupt.h"

extern char** environ;

namespace npusim::engine {

std::string self_exe() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("npusim") : p.string();
}

pid_t spawn_self(const std::vector<std::string>& args, const std::string& err_file) {
  const std::string exe = self_exe();
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
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

namespace {
int exit_status(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
}  // namespace

std::pair<pid_t, int> wait_any() {
  int status = 0;
  pid_t w;
  while ((w = ::waitpid(-1, &status, 0)) < 0 && errno == EINTR) {
  }
  return {w, status};
}

int run_self(const std::vector<std::string>& args, const std::string& err_file) {
  const pid_t pid = spawn_self(args, err_file);
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

}  // namespace npusim::engine
