// The Catch2 runner, started from sc_main (libsystemc provides main()).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>
#include <systemc>

// Our own main (it takes precedence over libsystemc's): SystemC's copyright
// banner would otherwise go to stderr before sc_main runs.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[]) {
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  return Catch::Session().run(argc, argv);
}
