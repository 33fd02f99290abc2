// The Catch2 runner, started from sc_main (libsystemc provides main()).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>
#include <systemc>

#include "tests/cli_support.h"

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
