// `npusim compare`: summary.json regression checks (sim/report/compare).
#include "tests/catch.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/json/json_input.h"
#include "sim/report/compare.h"
#include "tests/cli_support.h"
#include "tests/test_paths.h"

using namespace npusim;
using nlohmann::json;
using report::compare_summaries;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& name) { return std::string(NPUSIM_TEST_DATA_DIR) + "/platform/" + name; }

// The columns are as wide as their widest cell, two spaces apart (before,
// fixed widths ran long numbers together: 0.05209726498450.0529637973582).
const std::string kHeader = "figure                baseline  current  unit  delta  delta %  verdict\n";
const std::string kStatusOk = "status                      ok       ok                        ok\n";
// compare_base.json's times against themselves.
const std::string kTimesUnchanged =
    "device_wall_ns          100000   100000  ns       +0   +0.00%  ok\n"
    "makespan_ns              90000    90000  ns       +0   +0.00%  ok\n"
    "scheduling_window_ns     50000    50000  ns       +0   +0.00%  ok\n";
// The test summaries predate provenance.
const std::string kNoProvenance =
    "note: neither summary records its provenance (written by an older npusim): npusim versions and digests unknown\n";

struct CompareResult {
  int status;
  std::string out;
};

// A file of tests/data/platform, or an absolute path as is.
std::string resolve(const std::string& name) { return name.rfind('/', 0) == 0 ? name : data(name); }

CompareResult compare(const std::string& baseline, const std::string& current, double tolerance = 0,
                      std::vector<std::string> tolerance_for = {},
                      report::CompareGate gate = report::CompareGate::times) {
  std::ostringstream out;
  report::CompareOptions options;
  options.tolerance_pct = tolerance;
  options.tolerance_for = std::move(tolerance_for);
  options.gate = gate;
  int status = compare_summaries(resolve(baseline), resolve(current), options, out);
  return {status, out.str()};
}

CompareResult compare_all(const std::string& baseline, const std::string& current) {
  return compare(baseline, current, 0, {}, report::CompareGate::all);
}

std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of('\n');
  auto begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

InputError compare_error(const std::string& baseline, const std::string& current, double tolerance = 0) {
  try {
    compare(baseline, current, tolerance);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  throw std::logic_error("unreachable");
}

// compare_base.json with one key replaced, written to a temp file; returns its path.
std::string base_with(const std::string& key, const json& value) {
  json doc = json_input::read_file(data("compare_base.json"));
  doc[key] = value;
  fs::path p = fs::temp_directory_path() / ("npusim_test_compare_" + key + "_" + std::to_string(::getpid()) + ".json");
  std::ofstream(p) << doc.dump(2);
  return p.string();
}

}  // namespace

TEST_CASE("compare: identical summaries are OK", "[compare]") {
  CompareResult r = compare("compare_base.json", "compare_base.json");
  CHECK(r.status == 0);
  CHECK(r.out ==
        kHeader + kStatusOk + kTimesUnchanged + kNoProvenance +
        "compare: OK\n");
}

TEST_CASE("compare: a slower metric is a regression", "[compare]") {
  CompareResult r = compare("compare_base.json", "compare_slower.json");
  CHECK(r.status == report::kCompareRegression);
  CHECK(r.out ==
        "figure                baseline  current  unit   delta  delta %  verdict\n"
        "status                      ok       ok                         ok\n"
        "device_wall_ns          100000   101000  ns     +1000   +1.00%  REGRESSION > +0%\n"
        "makespan_ns              90000    90000  ns        +0   +0.00%  ok\n"
        "scheduling_window_ns     50000  49000.5  ns    -999.5   -2.00%  improvement\n" +
        kNoProvenance + "compare: REGRESSION (1 figure beyond tolerance: device_wall_ns)\n");

  // The other way round: faster is never a regression. scheduling_window_ns
  // (the longest scheduler thread's span) growing is reported by default
  // (it jumps when the last completion moves to another thread), and gates
  // with --gate all.
  r = compare("compare_slower.json", "compare_base.json");
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("device_wall_ns          101000   100000  ns     -1000   -0.99%  improvement\n"));
  CHECK_THAT(r.out, Catch::Contains("scheduling_window_ns   49000.5    50000  ns    +999.5   +2.04%  beyond +0%, not gated\n"));
  CHECK(last_line(r.out) == "compare: OK (2 figures moved, 1 beyond tolerance but not gated: --gate all gates them)");
  r = compare_all("compare_slower.json", "compare_base.json");
  CHECK(r.status == report::kCompareRegression);
  CHECK_THAT(r.out, Catch::Contains("scheduling_window_ns   49000.5    50000  ns    +999.5   +2.04%  REGRESSION > +0%\n"));
  CHECK(last_line(r.out) == "compare: REGRESSION (1 figure beyond tolerance: scheduling_window_ns)");
}

TEST_CASE("compare: tolerance in percent, exactly at the limit is OK", "[compare]") {
  CompareResult ok = compare("compare_base.json", "compare_slower.json", 1);
  CHECK(ok.status == 0);
  CHECK_THAT(ok.out, Catch::Contains("device_wall_ns          100000   101000  ns     +1000   +1.00%  changed <= +1%\n"));
  CHECK(last_line(ok.out) == "compare: OK (2 figures moved, none beyond tolerance)");
  CHECK(compare("compare_base.json", "compare_slower.json", 5).status == 0);
  CompareResult r = compare("compare_base.json", "compare_slower.json", 0.5);
  CHECK(r.status == report::kCompareRegression);
  CHECK(last_line(r.out) == "compare: REGRESSION (1 figure beyond tolerance: device_wall_ns)");
  CHECK_THAT(r.out, Catch::Contains("device_wall_ns          100000   101000  ns     +1000   +1.00%  REGRESSION > +0.5%\n"));

  // A zero baseline: any increase regresses, whatever the tolerance.
  std::string zero = base_with("makespan_ns", 0);
  r = compare(zero, "compare_base.json", 50);
  CHECK(r.status == report::kCompareRegression);
  CHECK_THAT(r.out, Catch::Contains("makespan_ns                  0    90000  ns    +90000      n/a  REGRESSION > +50%\n"));
  fs::remove(zero);
}

TEST_CASE("compare: ok to error is a regression, error to ok is not", "[compare]") {
  CompareResult r = compare("compare_base.json", "compare_error.json");
  CHECK(r.status == report::kCompareRegression);
  CHECK(r.out ==
        "figure                baseline  current  unit   delta  delta %  verdict\n"
        "status                      ok    error                         REGRESSION\n"
        "device_wall_ns          100000    20000  ns    -80000  -80.00%  n/a\n"
        "makespan_ns              90000     null  ns                     n/a\n"
        "scheduling_window_ns     50000     null  ns                     n/a\n" +
        kNoProvenance + "compare: REGRESSION (status ok -> error)\n");

  r = compare("compare_error.json", "compare_base.json");
  CHECK(r.status == 0);
  CHECK(last_line(r.out) == "compare: OK");
  CHECK(compare("compare_error.json", "compare_error.json").status == 0);
}

TEST_CASE("compare: bad or incomplete summaries are input errors", "[compare]") {
  InputError e = compare_error("compare_base.json", "compare_missing_key.json");
  CHECK(e.file() == data("compare_missing_key.json"));
  CHECK(e.path() == "/scheduling_window_ns");
  CHECK(e.message() == "missing key \"scheduling_window_ns\" (expected a summary.json written by npusim run)");

  e = compare_error("no_such_summary.json", "compare_base.json");
  CHECK(e.file() == data("no_such_summary.json"));
  CHECK(e.message() == "file not found");

  e = compare_error("bad_syntax.json", "compare_base.json");
  CHECK(e.file() == data("bad_syntax.json"));
  CHECK_THAT(e.message(), Catch::StartsWith("invalid JSON: "));

  std::string status = base_with("status", "failed");
  e = compare_error(status, "compare_base.json");
  CHECK(e.file() == status);
  CHECK(e.path() == "/status");
  CHECK(e.message() == "expected \"ok\" or \"error\", found string \"failed\"");
  fs::remove(status);

  // null is allowed only in an "error" summary.
  std::string null_metric = base_with("makespan_ns", nullptr);
  e = compare_error("compare_base.json", null_metric);
  CHECK(e.file() == null_metric);
  CHECK(e.path() == "/makespan_ns");
  CHECK(e.message() == "expected a number >= 0, found null");
  fs::remove(null_metric);

  // A "run" that is not an object compared as no run options (exit 0 beside
  // a summary of other options); now an input error.
  std::string run_list = base_with("run", json::array({1}));
  e = compare_error("compare_base.json", run_list);
  CHECK(e.file() == run_list);
  CHECK(e.path() == "/run");
  CHECK(e.message() == "expected an object (the run options), found a list of 1");
  fs::remove(run_list);

  e = compare_error("compare_base.json", "compare_base.json", -1);
  CHECK(e.file() == "command line");
  CHECK(e.path() == "--tolerance");
  CHECK(e.message() == "expected a percentage >= 0, found -1");
}

// compare_figures_base.json -> compare_figures_moved.json, hand-checked
// against the default table (docs/outputs.md, "compare"): utilisation is
// worse falling (aic -10% beyond 5%; aiv +5% an improvement), percentiles
// and overhead growing (p99 +20% beyond 10%, oh_aic +5% within 10%); busy
// time (an input), a latency's max (one sample), counts and shares are
// reported with no tolerance; the ring peak has no capacity to be judged
// against (no `run` in these summaries); a null percentile (an empty
// sample) that got a value is a change, and a ring only the current run
// sampled is named once. By default only the times gate: the two figures
// beyond their tolerance are reported; --gate all fails on them.
TEST_CASE("compare: every figure that moved, with its tolerance", "[compare]") {
  // The table, with the verdicts of the two figures beyond their tolerance.
  auto table = [](const std::string& utilisation, const std::string& p99) {
    return "figure                                  baseline  current  unit      delta  delta %  verdict\n"
           "status                                        ok       ok                            ok\n"
           "device_wall_ns                            100000   100000  ns           +0   +0.00%  ok\n"
           "makespan_ns                                90000    90000  ns           +0   +0.00%  ok\n"
           "scheduling_window_ns                       50000    50000  ns           +0   +0.00%  ok\n"
           "figures.core_types.aic.busy_ns             40000    41000  ns        +1000   +2.50%  changed\n"
           "figures.core_types.aic.utilisation           0.5     0.45  fraction  -0.05  -10.00%  " + utilisation + "\n"
           "figures.core_types.aiv.utilisation           0.2     0.21  fraction  +0.01   +5.00%  improvement\n"
           "figures.dispatch_to_start_ns.count            10       11  count        +1  +10.00%  changed\n"
           "figures.dispatch_to_start_ns.max             300      360  ns          +60  +20.00%  changed\n"
           "figures.dispatch_to_start_ns.p99             300      360  ns          +60  +20.00%  " + p99 + "\n"
           "figures.overhead.oh_aic_overhead.ns         8000     8400  ns         +400   +5.00%  changed <= +10%\n"
           "figures.overhead.oh_aic_overhead.pct          10     10.5  %          +0.5   +5.00%  changed <= +10%\n"
           "figures.ready_to_dispatch_ns.count             0        1  count        +1      n/a  changed\n"
           "figures.ready_to_dispatch_ns.max            null       50  ns                        changed\n"
           "figures.ready_to_dispatch_ns.p50            null       50  ns                        changed\n"
           "figures.ready_to_dispatch_ns.p90            null       50  ns                        changed\n"
           "figures.ready_to_dispatch_ns.p99            null       50  ns                        changed\n"
           "figures.ring_peaks.0.task_slots                8        9  slots        +1  +12.50%  changed\n"
           "figures.ring_peaks.1                      absent  present                            only in the current\n"
           "figures.sched_phases.0.shares.complete       0.5      0.6  fraction   +0.1  +20.00%  changed\n"
           "figures.sched_phases.0.shares.dispatch       0.5      0.4  fraction   -0.1  -20.00%  changed\n" +
           kNoProvenance;
  };
  CompareResult r = compare("compare_figures_base.json", "compare_figures_moved.json");
  CHECK(r.status == 0);
  CHECK(r.out == table("beyond -5%, not gated", "beyond +10%, not gated") +
                     "compare: OK (17 figures moved, 2 beyond tolerance but not gated: --gate all gates them)\n");
  r = compare_all("compare_figures_base.json", "compare_figures_moved.json");
  CHECK(r.status == report::kCompareRegression);
  CHECK(r.out == table("REGRESSION > -5%", "REGRESSION > +10%") +
                     "compare: REGRESSION (2 figures beyond tolerance: figures.core_types.aic.utilisation, "
                     "figures.dispatch_to_start_ns.p99)\n");

  // Nothing moved, nothing printed but the times.
  r = compare_all("compare_figures_moved.json", "compare_figures_moved.json");
  CHECK(r.status == 0);
  CHECK(r.out.find("figures.") == std::string::npos);
  CHECK(last_line(r.out) == "compare: OK");
}

TEST_CASE("compare: --tolerance-for overrides the table by name or prefix", "[compare]") {
  // A prefix covers every figure under it; the longest NAME wins; at the
  // limit is within (aic utilisation -10% against 10%, p99 +20% against 20%).
  CompareResult r = compare("compare_figures_base.json", "compare_figures_moved.json", 0,
                     {"figures.ring_peaks=20", "figures.core_types.aic=10", "figures.dispatch_to_start_ns=50",
                      "figures.dispatch_to_start_ns.p99=20"});
  CHECK(r.status == 0);
  // Every figure under a NAME given gates: the busy time and the max too.
  CHECK_THAT(r.out, Catch::Contains(
      "figures.core_types.aic.busy_ns             40000    41000  ns        +1000   +2.50%  changed <= +10%\n"
      "figures.core_types.aic.utilisation           0.5     0.45  fraction  -0.05  -10.00%  changed <= -10%\n"
      "figures.core_types.aiv.utilisation           0.2     0.21  fraction  +0.01   +5.00%  improvement\n"
      "figures.dispatch_to_start_ns.count            10       11  count        +1  +10.00%  changed <= +/-50%\n"
      "figures.dispatch_to_start_ns.max             300      360  ns          +60  +20.00%  changed <= +50%\n"
      "figures.dispatch_to_start_ns.p99             300      360  ns          +60  +20.00%  changed <= +20%\n"));
  CHECK_THAT(r.out, Catch::Contains(
      "figures.ring_peaks.0.task_slots                8        9  slots        +1  +12.50%  changed <= +20%\n"));
  CHECK(last_line(r.out) == "compare: OK (17 figures moved, none beyond tolerance)");

  // A tolerance on a figure reported either way makes it a gate: the count
  // changing at all regresses, and from a zero baseline (ready_to_dispatch_ns
  // had no sample) any growth is beyond any tolerance. The times take theirs
  // from a name too.
  r = compare("compare_figures_base.json", "compare_figures_moved.json", 0,
              {"figures=100", "figures.dispatch_to_start_ns.count=0"});
  CHECK(r.status == report::kCompareRegression);
  CHECK_THAT(r.out, Catch::Contains(
      "figures.dispatch_to_start_ns.count            10       11  count        +1  +10.00%  REGRESSION > +/-0%\n"));
  CHECK_THAT(r.out, Catch::Contains(
      "figures.ready_to_dispatch_ns.count             0        1  count        +1      n/a  REGRESSION > +/-100%\n"));
  CHECK(last_line(r.out) == "compare: REGRESSION (2 figures beyond tolerance: figures.dispatch_to_start_ns.count, "
                            "figures.ready_to_dispatch_ns.count)");
  r = compare("compare_base.json", "compare_slower.json", 0, {"device_wall_ns=1", "scheduling_window_ns=0"});
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("device_wall_ns          100000   101000  ns     +1000   +1.00%  changed <= +1%\n"));

  // Unknown or malformed: exit 2 before anything is printed.
  std::ostringstream out;
  report::CompareOptions bad;
  auto error_of = [&](const std::string& text) {
    bad.tolerance_for = {text};
    try {
      compare_summaries(data("compare_figures_base.json"), data("compare_figures_moved.json"), bad, out);
    } catch (const InputError& err) {
      CHECK(err.file() == "command line");
      CHECK(err.path() == "--tolerance-for");
      return err.message();
    }
    FAIL("expected an InputError for " << text);
    return std::string();
  };
  CHECK(error_of("figures.ring_peak=5") == "unknown figure \"figures.ring_peak\"; did you mean \"figures.ring_peaks\"?");
  CHECK(error_of("figures.core_types.aic.utilization=5") ==
        "unknown figure \"figures.core_types.aic.utilization\"; did you mean \"figures.core_types.aic.utilisation\"?");
  CHECK(error_of("nothing_like_it=5") == "unknown figure \"nothing_like_it\" (see docs/outputs.md, compare)");
  CHECK(error_of("figures.ring_peaks") ==
        "expected NAME=PERCENT (a figure's dotted name or a prefix of it), found \"figures.ring_peaks\"");
  CHECK(error_of("figures.ring_peaks=-1") == "expected a percentage >= 0 after \"figures.ring_peaks=\", found \"-1\"");
  CHECK(error_of("figures.ring_peaks=5%%") == "expected a percentage >= 0 after \"figures.ring_peaks=\", found \"5%%\"");
  CHECK(error_of("figures.ring_peaks=%") == "expected a percentage >= 0 after \"figures.ring_peaks=\", found \"%\"");
  CHECK(out.str().empty());
}

TEST_CASE("compare: a summary without figures (an older npusim) is reported, not an error", "[compare]") {
  CompareResult r = compare("compare_base.json", "compare_figures_base.json");
  CHECK(r.status == 0);
  CHECK(r.out ==
        "figure                baseline  current  unit  delta  delta %  verdict\n"
        "status                      ok       ok                        ok\n"
        "device_wall_ns          100000   100000  ns       +0   +0.00%  ok\n"
        "makespan_ns              90000    90000  ns       +0   +0.00%  ok\n"
        "scheduling_window_ns     50000    50000  ns       +0   +0.00%  ok\n"
        "figures                 absent  present                        only in the current\n" +
        kNoProvenance + "compare: OK (1 figure moved, none beyond tolerance)\n");
  r = compare("compare_figures_moved.json", "compare_slower.json");
  CHECK(r.status == report::kCompareRegression);
  CHECK_THAT(r.out, Catch::Contains(
      "figures                present   absent                         only in the baseline\n"));
  CHECK(last_line(r.out) == "compare: REGRESSION (1 figure beyond tolerance: device_wall_ns)");

  // Not an object: an input error naming the key.
  std::string bad = base_with("figures", 3);
  InputError e = compare_error("compare_base.json", bad);
  CHECK(e.path() == "/figures");
  CHECK(e.message() == "expected an object, found number 3");
  fs::remove(bad);
}

TEST_CASE("npusim compare: --tolerance-for repeats, exit 3 on a regression, 2 on a bad name", "[compare][cli]") {
  const std::string d = "tests/data/platform/";
  const std::string files = d + "compare_figures_base.json " + d + "compare_figures_moved.json";
  cli::Result r = cli::npusim("compare " + files);
  CHECK(r.status == 0);  // only the times gate by default
  CHECK(r.err.empty());
  r = cli::npusim("compare " + files + " --gate all");
  CHECK(r.status == 3);
  CHECK(r.err.empty());
  r = cli::npusim("compare --tolerance-for figures.ring_peaks=20 --tolerance-for figures.core_types.aic=10 "
                  "--tolerance-for=figures.dispatch_to_start_ns=20 " + files);
  CHECK(r.status == 0);
  CHECK(last_line(r.out) == "compare: OK (17 figures moved, none beyond tolerance)");
  r = cli::npusim("compare " + files + " --tolerance-for figures.ring_peak=20");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "npusim: error: command line: at --tolerance-for: unknown figure \"figures.ring_peak\"; "
                 "did you mean \"figures.ring_peaks\"?\n");
  r = cli::npusim("compare " + d + "no_such.json " + d + "compare_figures_moved.json");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + d + "no_such.json: file not found\n");
}
