// npusim: the command line (docs/outputs.md, "The command line"), a table of contents.
// Each subcommand is added by the folder of sim/ that answers its question,
// its options beside the code that runs it (docs/architecture.md, "sim/ by
// question"); this file adds them in the order `npusim --help` lists them,
// parses, and runs the one chosen.
#include <cstdlib>
#include <iostream>
#include <new>
#include <optional>

#include <systemc>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "models/common/errors.h"
#include "sim/config/command_line.h"
#include "sim/engine/commands.h"
#include "sim/engine/engine.h"
#include "sim/host/interrupt.h"
#include "sim/host/process.h"
#include "sim/import/commands.h"
#include "sim/record/big_array.h"
#include "sim/report/commands.h"
#include "sim/study/commands.h"

// Our own main (it takes precedence over libsystemc's): SystemC's copyright
// banner would otherwise go to stderr before sc_main runs.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  npusim::host::prepare_process();
  npusim::record::huge_pages::allow_heap_tuning();  // the process is npusim's: a run may tune malloc (big_array.h)
  npusim::host::interrupt::install();
  const int status = sc_core::sc_elab_and_sim(argc, argv);
#if defined(__SANITIZE_ADDRESS__)
  // The leak check, before static teardown (docs/testing.md, "Sanitizers").
  __lsan_do_leak_check();
#endif
  return status;
}

namespace {

using npusim::engine::kExitInputError;

// Runs `body`, turning what escapes it into npusim's exit statuses: an input
// error 2, host memory exhausted 2, anything else an internal error (4).
template <class F>
int with_exit_statuses(F body) {
  try {
    return body();
  } catch (const npusim::InputError& e) {
    std::cerr << "npusim: error: " << e.what() << "\n";
    return kExitInputError;
  } catch (const std::bad_alloc&) {
    npusim::host::report_out_of_memory(std::cerr);
    return kExitInputError;
  } catch (const std::exception& e) {  // SystemC's sc_report included
    if (npusim::out_of_memory()) {     // a bad_alloc inside a SystemC process
      npusim::host::report_out_of_memory(std::cerr);
      return kExitInputError;
    }
    std::cerr << "npusim: internal error: " << e.what() << "\n"
              << "npusim: this is a bug in npusim, not a result: please report it with the trace, the platform "
                 "and the command line\n";
    return npusim::engine::kExitInternalError;
  }
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  npusim::host::filter_standard_streams();
  npusim::config::CommandLine cl("npusim: a cycle-approximate simulator of the a2a3 NPU and its AICPU runtime",
                                 "npusim " NPUSIM_VERSION);  // CMake's project version
  npusim::engine::add_run_command(cl);           // simulate; outputs in --out DIR
  npusim::engine::add_check_command(cl);         // static checks only, no simulation
  npusim::engine::add_record_command(cl);        // run a scene; write the trace of its operations
  npusim::capture::add_import_command(cl);       // a device capture as a trace that replays it
  npusim::report::add_compare_command(cl);       // timing regression check of two summary.json
  npusim::report::add_scope_stats_command(cl);   // peaks per ring of a scope_stats.jsonl
  npusim::report::add_report_command(cl);        // a self-contained page of a run's figures and failure
  npusim::study::add_barrier_cost_command(cl);   // SOFT vs HARD syncall cost by participant count
  npusim::study::add_worker_command(cl);         // a worker's dispatches in order, with its arena cache
  npusim::study::add_sweep_command(cl);          // a run over a grid of options and platform fields
  if (std::optional<int> done = cl.parse(argc, argv)) return *done;
  return with_exit_statuses([&] { return cl.execute(); });
}
