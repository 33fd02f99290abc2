// The Catch2 runner, started from sc_main (libsystemc provides main()).
#define CATCH_CONFIG_RUNNER
#include "tests/catch.h"
#include <cstdlib>
#include <utility>
#include <systemc>

#include <fcntl.h>
#include <unistd.h>

#include "tests/cli_support.h"

namespace {

// With NPUSIM_TEST_RAN_LOG set, each test case appends its name to that file
// as it starts (one write() of one line, O_APPEND: safe under ctest -j).
// tests/ran_once.sh then checks that every test case ran exactly once: a ctest
// entry that matches no test case (a name split at a ';') or two entries that
// run the same case are caught there (docs/testing.md).
struct RanLog : Catch::TestEventListenerBase {
  // (v2 constructs it from a ReporterConfig, v3 from an IConfig*; under v3,
  // tests/catch.h names v3's EventListenerBase so.)
  template <typename... Args>
  explicit RanLog(Args&&... args) : Catch::TestEventListenerBase(std::forward<Args>(args)...) {}
  void testCaseStarting(Catch::TestCaseInfo const& info) override {
    const char* path = std::getenv("NPUSIM_TEST_RAN_LOG");
    if (!path || !*path) return;
    const std::string line = info.name + "\n";
    const int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || ::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      std::fprintf(stderr, "cannot append to NPUSIM_TEST_RAN_LOG=%s\n", path);
      std::abort();
    }
    ::close(fd);
  }
};
CATCH_REGISTER_LISTENER(RanLog)

}  // namespace

// Our own main (it takes precedence over libsystemc's): SystemC's copyright
// banner would otherwise go to stderr before sc_main runs.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[]) {
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  const int failed = Catch::Session().run(argc, argv);
  if (failed == 0) {
    std::error_code ec;
    std::filesystem::remove_all(cli::scratch_root(), ec);
  }
  return failed;
}
