#include "sim/engine/subprocess.h"

#include <cstdlib>
#include <filesystem>

#include <sys/wait.h>

namespace npusim::engine {

std::string self_exe() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("npusim") : p.string();
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int run_self(const std::string& args) {
  const std::string cmd = shell_quote(self_exe()) + " " + args + " >/dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace npusim::engine
