// The AICPU clock running ahead of the SystemC kernel (temporal decoupling,
// docs/architecture.md "The AICPU clock: who runs on which clock"): it cuts
// the kernel's rounds and changes no output byte.
#include <cstdlib>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/catch.h"
#include "tests/cli_support.h"
#include "tests/source_scan.h"

namespace test_aicpu_clock {

namespace fs = std::filesystem;

// `npusim run trace` with every output and --no-host-stats, lock-step (each
// AICPU due time waits on the kernel) or running ahead.
cli::Result run_clocked(const std::string& trace, const fs::path& out, bool lockstep) {
  if (lockstep) ::setenv("NPUSIM_AICPU_LOCKSTEP", "1", 1);
  cli::Result r = cli::npusim("run " + trace + " --no-host-stats --no-suggest --swimlane-level 4 --out '" + out.string() + "'");
  ::unsetenv("NPUSIM_AICPU_LOCKSTEP");
  return r;
}

std::uint64_t rounds_of(const std::string& trace, const std::string& name, bool lockstep) {
  if (lockstep) ::setenv("NPUSIM_AICPU_LOCKSTEP", "1", 1);
  cli::RunResult r = cli::run_summary(trace + " --quiet", name);
  ::unsetenv("NPUSIM_AICPU_LOCKSTEP");
  REQUIRE(r.status == 0);
  return r.summary["sim"]["systemc_deltas"].get<std::uint64_t>();
}

}  // namespace test_aicpu_clock

TEST_CASE("the AICPU clock running ahead of the kernel writes the same bytes as lock-step", "[aicpu][clock]") {
  using namespace test_aicpu_clock;
  // Compute-only kernels (the block's timeline known at dispatch), FFTS
  // barriers whose cores wait in the AICore complex's queue (a hard sync
  // that deadlocks among them), cross-core pipes, gated doorbells, rings;
  // GM and L2 phases (qwen3_decode, cache_bypass); the runtime's fatals that
  // the AICPU's own timers decide (a ring deadlock's backstop, a tensor
  // wait's timeout, the scheduler's watchdog), where the device's failure
  // text (stderr) must match too.
  const std::vector<std::string> traces = {
      "traces/fanout_fanin.json",           "traces/barriers/hard_pending_48.json", "traces/barriers/soft_16.json",
      "traces/barriers/hard_partial_16.json", "traces/mix_pipeline_1slot.json",      "traces/gated_1.json",
      "traces/rings_streaming.json",         "traces/spmd.json",                     "traces/qwen3_decode.json",
      "traces/cache_bypass.json",            "traces/fatal/heap_ring_deadlock.json", "traces/fatal/tensor_wait_timeout.json",
      "traces/fatal/watchdog_over.json",     "traces/fatal/scope_deadlock.json"};
  for (const std::string& t : traces) {
    INFO(t);
    const fs::path a = cli::scratch("clock_lockstep"), b = cli::scratch("clock_ahead");
    const cli::Result ra = run_clocked(t, a, true), rb = run_clocked(t, b, false);
    CHECK(ra.status == rb.status);
    CHECK(ra.err == rb.err);
    int files = 0;
    for (const auto& e : fs::recursive_directory_iterator(a)) {
      if (!e.is_regular_file()) continue;
      ++files;
      const fs::path rel = fs::relative(e.path(), a);
      INFO(rel.string());
      REQUIRE(fs::exists(b / rel));
      CHECK(cli::slurp(e.path()) == cli::slurp(b / rel));
    }
    int files_b = 0;
    for (const auto& e : fs::recursive_directory_iterator(b)) files_b += e.is_regular_file() ? 1 : 0;
    CHECK(files == files_b);
    CHECK(files >= 5);
  }
}

TEST_CASE("running ahead: a compute-only program takes two kernel rounds, lock-step one per AICPU wake-up time", "[aicpu][clock]") {
  using namespace test_aicpu_clock;
  // fanout_fanin's kernels are compute only: every block's timeline is laid
  // out at dispatch, so the AICore complex's queue stays empty and the clock
  // never has to wait on the kernel. Two rounds remain: the start (the
  // clock's first thread at time 0) and, once every thread waits for a
  // wake-up that cannot come, the kernel's catch-up to the clock's time
  // before it runs out of events.
  CHECK(rounds_of("traces/fanout_fanin.json", "clock_rounds_ahead", false) == 2);
  // Lock-step: one round per distinct time at which an AICPU thread runs.
  CHECK(rounds_of("traces/fanout_fanin.json", "clock_rounds_lockstep", true) == 87);
}

namespace test_aicpu_clock {

// Each line of `text` (comments dropped) that reads the SystemC kernel's
// time or activity.
std::vector<int> kernel_time_reads(const std::string& text) {
  static const std::regex read(R"re(\bsc_(time_stamp|delta_count|pending_activity|time_to_pending_activity)\s*\()re");
  std::vector<int> lines;
  source_scan::for_each_code_line(text, [&](int n, const std::string&, const std::string& code) {
    if (std::regex_search(code, read)) lines.push_back(n);
  });
  return lines;
}

}  // namespace test_aicpu_clock

TEST_CASE("only the AICPU clock and the SC_METHODs read the kernel's time", "[aicpu][clock]") {
  using namespace test_aicpu_clock;
  // While the AICPU clock runs ahead the kernel's time lags the model's, so
  // code an AICPU thread calls reads model_present() (models/common/present.h)
  // or is given its time; the kernel's own time is read only where that is
  // the point: the clock and the present themselves, the SC_METHODs that
  // schedule relative to the kernel (AicoreComplex::schedule/process,
  // Fabric::post/process), and the engine's statistics and time-limit check
  // after sc_start returns.
  const std::set<std::string> allowed = {"models/aicpu/aicpu_clock.h", "models/aicpu/aicpu_clock.cpp",
                                         "models/common/present.h",    "models/aicore/aicore.cpp",
                                         "models/interconnect/fabric.cpp", "sim/engine/engine.cpp"};
  std::vector<std::string> found;
  std::set<std::string> readers;
  for (const source_scan::Source& f : source_scan::sources_under({"models", "sim", "python"})) {
    const std::vector<int> lines = kernel_time_reads(f.text);
    if (!lines.empty()) readers.insert(f.path);
    if (allowed.count(f.path)) continue;
    for (int n : lines) found.push_back(f.path + ":" + std::to_string(n));
  }
  INFO(source_scan::listed(found));
  CHECK(found.empty());
  CHECK(readers == allowed);  // each allowed reader still reads it (the list is not stale)
  // The scanner sees each form and skips comments.
  CHECK(kernel_time_reads("a\n  Time t = sc_core::sc_time_stamp().value();\n// sc_time_stamp()\nsc_delta_count ();\n") ==
        std::vector<int>{2, 4});
}
