// npusim sweep (docs/sweeps.md): a trace over the product of a grid of run
// options and platform fields, one CSV row per point in grid order, each
// point an `npusim run` in a child process whose failure is a row, not the
// end of the sweep.
#include <catch2/catch.hpp>

#include "tests/cli_support.h"

using cli::has;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) v.push_back(l);
  return v;
}

// The first `n` cells of a CSV line (no quoted cells in these).
std::string first_cells(const std::string& line, int n) {
  std::size_t at = 0;
  for (int i = 0; i < n && at != std::string::npos; ++i) at = line.find(',', at + (i ? 1 : 0));
  return line.substr(0, at);
}

// chain.json (8 tasks, each consuming the last one's output) on tiny, over
// dispatch_task_ns x ring_task_window.
const char* const kGrid = "sweep traces/chain.json --platform tiny --grid /sched/dispatch_task_ns=10,100,1000 "
                          "--grid ring_task_window=4,64";

}  // namespace

TEST_CASE("sweep: one row per point in grid order, the figures of each point's run", "[sweep][cli]") {
  const fs::path csv = cli::scratch("sweep") / "chain.csv";
  fs::create_directories(csv.parent_path());
  const cli::Result r = cli::npusim(std::string(kGrid) + " --jobs 2 --csv '" + csv.string() + "'");
  REQUIRE(r.status == 0);
  CHECK(has(r.out, "npusim sweep: 6 points, 3 ok, 3 not ok"));
  const std::vector<std::string> rows = lines_of(cli::slurp(csv));
  REQUIRE(rows.size() == 7);
  CHECK(first_cells(rows[0], 9) ==
        "/sched/dispatch_task_ns,ring_task_window,status,exit_code,error,device_wall_ns,makespan_ns,"
        "scheduling_window_ns,tasks.alloc");
  CHECK(has(rows[0], ",tasks.completed,"));
  CHECK(has(rows[0], ",figures.core_types.aic.utilisation,"));
  // With the window of 64 the chain completes: its 8 dispatch operations are
  // each on the critical path (every task waits for the one before), so each
  // ns of sched.dispatch_task_ns adds 8 ns to tiny's 29700 (dispatch_task_ns 0).
  // With a window of 4 the 4th submit of the one scope is SCOPE_DEADLOCK
  // (the runtime's scope check at submit; docs/rings.md): exit 1, a row.
  CHECK(first_cells(rows[1], 6) == "10,4,error,1,SCOPE_DEADLOCK,600");
  CHECK(first_cells(rows[2], 6) == "10,64,ok,0,,29780");
  CHECK(first_cells(rows[3], 6) == "100,4,error,1,SCOPE_DEADLOCK,600");
  CHECK(first_cells(rows[4], 6) == "100,64,ok,0,,30500");
  CHECK(first_cells(rows[5], 6) == "1000,4,error,1,SCOPE_DEADLOCK,600");
  CHECK(first_cells(rows[6], 6) == "1000,64,ok,0,,37700");

  // The row is the run's summary: the same point by hand gives the same figures.
  fs::path out;
  const cli::Result one = cli::run("traces/chain.json --platform tiny --ring-task-window 64 -q", "sweep_one", out);
  REQUIRE(one.status == 0);
  CHECK(cli::load(out / "summary.json")["device_wall_ns"] == 29700.0);

  // Deterministic whatever the completion order.
  const fs::path serial = csv.parent_path() / "serial.csv";
  REQUIRE(cli::npusim(std::string(kGrid) + " --jobs 1 -q --csv '" + serial.string() + "'").status == 0);
  CHECK(cli::slurp(serial) == cli::slurp(csv));

  // The plot next to the CSV: one series per ring_task_window, the failed
  // points gaps (the window of 4 has no line at all), the others a marker each.
  const std::string svg = cli::slurp(csv.parent_path() / "chain.svg");
  CHECK(has(svg, "data-series=\"ring_task_window=4\">"));
  CHECK(has(svg, "data-series=\"ring_task_window=64\">"));
  const std::string s64 = svg.substr(svg.find("data-series=\"ring_task_window=64\""));
  std::size_t circles = 0;
  for (std::size_t at = 0; (at = s64.find("<circle", at)) != std::string::npos; ++at) ++circles;
  CHECK(circles == 3);
  const std::string s4 = svg.substr(svg.find("data-series=\"ring_task_window=4\""));
  CHECK(s4.find("<circle") > s4.find("</g>"));
}

TEST_CASE("sweep: a four-ring list in brackets is one value", "[sweep][cli]") {
  const fs::path csv = cli::scratch("sweep_list") / "l.csv";
  fs::create_directories(csv.parent_path());
  const cli::Result r = cli::npusim(
      "sweep traces/chain.json --platform tiny --grid 'ring_task_window=[64,4,4,4],[4,4,4,4]' -q --csv '" +
      csv.string() + "'");
  REQUIRE(r.status == 0);
  const std::vector<std::string> rows = lines_of(cli::slurp(csv));
  REQUIRE(rows.size() == 3);
  // A cell holding commas is quoted; only ring 0's window matters to chain.json.
  CHECK(rows[1].rfind("\"[64,4,4,4]\",ok,0,,29700,28140,", 0) == 0);
  CHECK(rows[2].rfind("\"[4,4,4,4]\",error,1,SCOPE_DEADLOCK,600,", 0) == 0);
}

TEST_CASE("sweep: an unknown name, pointer or value is exit 2 before anything runs", "[sweep][cli][hardening]") {
  const fs::path dir = cli::scratch("sweep_bad");
  fs::create_directories(dir);
  const std::string csv = " --csv '" + (dir / "bad.csv").string() + "'";
  const std::pair<const char*, const char*> cases[] = {
      {"ring_task_windw=4,8", "unknown run option \"ring_task_windw\"; did you mean \"ring_task_window\"?"},
      {"/sched/dispatch_tsk_ns=4",
       "the platform has no field \"/sched/dispatch_tsk_ns\"; did you mean \"/sched/dispatch_task_ns\"?"},
      {"ring_task_window=64,5", "ring_task_window must be a power of 2 >= 4, got 5"},
      {"aicpu_thread_num=2,8", "aicpu_thread_num must be 0 (auto) or in range [2, 4], got 8"},
      {"/sched/dispatch_task_ns=-5", "--grid point 1: at /sched/dispatch_task_ns/value: expected a time in ns"},
      {"seed", "expected NAME=V1,V2,..., got \"seed\""},
  };
  for (const auto& [grid, message] : cases) {
    const cli::Result r = cli::npusim(std::string("sweep traces/chain.json --platform tiny --grid ") + grid + csv);
    INFO(grid);
    CHECK(r.status == 2);
    CHECK(has(r.err, message));
  }
  CHECK_FALSE(fs::exists(dir / "bad.csv"));
  CHECK_FALSE(fs::exists(dir / "bad.svg"));
}
