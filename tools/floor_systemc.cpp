// npusim-floor-sc: what one SystemC timed wait costs on this machine, the
// floor under any model whose processes keep time with the kernel
// (docs/architecture.md, "The SystemC floor"; tools/bench.sh prints it).
//
// THREADS SC_THREADs (default 4: an orchestrator and three scheduler threads,
// as npusim runs the bench traces) each wait a fixed period in a loop, the
// periods chosen so that their wake-ups almost never fall on the same time
// stamp: every wait is then one time step of the kernel (timed-event queue
// insert and extract, one evaluation round, a context switch in and out),
// which is what npusim's waits are (summary.json's sim.systemc_deltas counts
// them). Nothing else runs: no allocation, no model.
//
//   npusim-floor-sc [THREADS] [WAITS]        (defaults 4 and 5,000,000)
// prints the waits, the kernel's evaluation rounds (sc_delta_count), the CPU
// seconds and the CPU nanoseconds per wait.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <vector>

#include <systemc>

namespace {

std::uint64_t g_waits = 0;
std::uint64_t g_limit = 0;

struct Waiter : sc_core::sc_module {
  std::uint64_t period;
  SC_HAS_PROCESS(Waiter);
  Waiter(sc_core::sc_module_name name, std::uint64_t period_ps) : sc_core::sc_module(name), period(period_ps) {
    SC_THREAD(run);
  }
  void run() {
    const sc_core::sc_time dt = sc_core::sc_time::from_value(period);
    for (;;) {
      if (++g_waits >= g_limit) sc_core::sc_stop();
      wait(dt);
    }
  }
};

}  // namespace

int sc_main(int argc, char** argv) {
  const long threads = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 4;
  const long long waits = argc > 2 ? std::strtoll(argv[2], nullptr, 10) : 5000000;
  if (threads < 1 || threads > 64 || waits < 1) {
    std::fprintf(stderr, "npusim-floor-sc: usage: npusim-floor-sc [THREADS 1..64] [WAITS > 0]\n");
    return 2;
  }
  g_limit = static_cast<std::uint64_t>(waits);
  std::vector<std::unique_ptr<Waiter>> waiters;
  // Periods 997 + 13k time units: pairwise distinct, so coinciding wake-ups are rare.
  for (long k = 0; k < threads; ++k)
    waiters.push_back(std::make_unique<Waiter>(sc_core::sc_gen_unique_name("waiter"), 997 + 13 * k));
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  const std::clock_t cpu0 = std::clock();
  sc_core::sc_start();
  const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  std::printf("floor-sc: %ld threads  %" PRIu64 " waits  %" PRIu64 " evaluation rounds  cpu %.4f s  %.1f ns per wait (cpu)\n",
              threads, g_waits, static_cast<std::uint64_t>(sc_core::sc_delta_count()), cpu,
              cpu * 1e9 / static_cast<double>(g_waits));
  return 0;
}

// SystemC's own main prints its banner before sc_main runs; this one asks it not to.
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
