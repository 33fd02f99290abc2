// npusim sweep (docs/sweeps.md): a trace over the product of a grid of run
// options and platform fields, one CSV row per point in grid order, each
// point an `npusim run` in a child process whose failure is a row, not the
// end of the sweep.
#include "tests/catch.h"

#include "tests/cli_support.h"

using cli::has;
namespace fs = std::filesystem;

namespace {

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
  const std::vector<std::string> rows = cli::lines_of(cli::slurp(csv));
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
  // Its device_wall ends where progress stopped (docs/failures.md, "When it
  // stopped"): the latch at 600 ns, or, with a 1000 ns dispatch, the
  // scheduler's dispatch that was under way then and ends at 1320 ns.
  CHECK(first_cells(rows[1], 6) == "10,4,error,1,SCOPE_DEADLOCK,600");
  CHECK(first_cells(rows[2], 6) == "10,64,ok,0,,29780");
  CHECK(first_cells(rows[3], 6) == "100,4,error,1,SCOPE_DEADLOCK,600");
  CHECK(first_cells(rows[4], 6) == "100,64,ok,0,,30500");
  CHECK(first_cells(rows[5], 6) == "1000,4,error,1,SCOPE_DEADLOCK,1320");
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
  const std::vector<std::string> rows = cli::lines_of(cli::slurp(csv));
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
      // A run option's value names the --grid value it is about, not an
      // option that was never on the command line.
      {"'ring_task_window=[64,4,4,4'", "command line: at --grid: \"ring_task_window=[64,4,4,4\": ring_task_window "},
      {"ring_heap=4096,1000", "command line: at --grid: \"ring_heap=1000\": ring_heap must be >= 1024"},
  };
  for (const auto& [grid, message] : cases) {
    const cli::Result r = cli::npusim(std::string("sweep traces/chain.json --platform tiny --grid ") + grid + csv);
    INFO(grid);
    CHECK(r.status == 2);
    CHECK(has(r.err, message));
    CHECK_FALSE(has(r.err, "at --ring"));
  }
  CHECK_FALSE(fs::exists(dir / "bad.csv"));
  CHECK_FALSE(fs::exists(dir / "bad.svg"));
}

TEST_CASE("sweep: an INPUT that is not a file is exit 2 before any point runs", "[sweep][cli][hardening]") {
  // Before: a missing INPUT or a folder was exit 0, every point "failed";
  // /dev/zero was read whole in search of "npusim_worker" (memory without end).
  const fs::path dir = cli::scratch("sweep_input");
  fs::create_directories(dir);
  const std::string csv = " --csv '" + (dir / "in.csv").string() + "'";
  const std::pair<std::string, std::string> cases[] = {
      {"traces/nosuch.json", "traces/nosuch.json: file not found"},
      {"traces", "traces: is a folder, not a trace, scene or worker file"},
      {"/dev/zero", "/dev/zero: is a character device, not a trace, scene or worker file"},
  };
  for (const auto& [input, message] : cases) {
    INFO(input);
    if (input == "/dev/zero" && !fs::exists(input)) {  // a machine's /dev may lack it
      WARN("/dev/zero is missing here: not checked");
      continue;
    }
    const cli::Result r = cli::npusim("sweep " + input + " --platform tiny --grid seed=1,2" + csv);
    CHECK(r.status == 2);
    CHECK(r.err == "npusim: error: " + message + "\n");
  }
  CHECK(fs::is_empty(dir));
}

TEST_CASE("sweep: a grid of more than 10000 points is exit 2 before any point is built", "[sweep][cli][hardening]") {
  // Before: three axes of 1,000 values (a 6 kB command line) built 10^9
  // points in memory, 2.7 GB after 20 s and growing; now refused at once.
  const fs::path dir = cli::scratch("sweep_huge");
  fs::create_directories(dir);
  std::string thousand;
  for (int i = 0; i < 1000; ++i) thousand += (i ? "," : "") + std::to_string(i + 1);
  const cli::Result r = cli::npusim("sweep traces/chain.json --platform tiny --grid seed=" + thousand +
                                    " --grid /sched/loop_ns=" + thousand + " --grid /sched/wmb_ns=" + thousand +
                                    " --csv '" + (dir / "huge.csv").string() + "'");
  CHECK(r.status == 2);
  CHECK(has(r.err, "npusim: error: command line: at --grid: expected at most 10000 points, got a grid of "
                   "1000 x 1000 x 1000 values (split the sweep)"));
  CHECK_FALSE(fs::exists(dir / "huge.csv"));
  // Just beyond the limit (10000 points, e.g. 100 x 100, would run).
  std::string hundred;
  for (int i = 0; i < 100; ++i) hundred += (i ? "," : "") + std::to_string(i + 1);
  const cli::Result one_more = cli::npusim("sweep traces/chain.json --platform tiny --grid seed=" + hundred +
                                           ",101 --grid /sched/loop_ns=" + hundred + " --csv '" +
                                           (dir / "huge.csv").string() + "'");
  CHECK(one_more.status == 2);
  CHECK(has(one_more.err, "got a grid of 101 x 100 values"));
}

// A worker file as INPUT (docs/sweeps.md, "Worker files"): each point is
// `npusim worker` on the point's copy of the file, its row the worker
// summary's totals and per-dispatch figures. sweep_chip.json prepares a task
// window of 64, then runs chain.json (29700 ns on tiny) once and twice more at
// 64. tiny's arena build is 800 ms (limits.arena_build_ns, the seed's ~800 ms).
TEST_CASE("sweep: a worker file over its own fields and a run option", "[sweep][worker][cli]") {
  const fs::path csv = cli::scratch("sweep_worker") / "w.csv";
  fs::create_directories(csv.parent_path());
  const std::string cmd = "sweep tests/data/worker/sweep_chip.json --platform tiny --grid "
                          "'worker:/prepare/ring_task_window=64,128' --grid ring_task_window=64,4";
  const cli::Result r = cli::npusim(cmd + " --jobs 2 --csv '" + csv.string() + "'");
  REQUIRE(r.status == 0);
  CHECK(has(r.out, "npusim sweep: 4 points, 2 ok, 2 not ok"));
  const std::vector<std::string> rows = cli::lines_of(cli::slurp(csv));
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] ==
        "worker:/prepare/ring_task_window,ring_task_window,status,exit_code,error,totals.host_visible_ns,"
        "totals.device_wall_ns,totals.arena_builds,totals.arena_build_ns,totals.setup_arena_build_ns,"
        "dispatches.0.arena_build_ns,dispatches.0.device_wall_ns,dispatches.1.arena_build_ns,"
        "dispatches.1.device_wall_ns");
  // Prepared at 64: the first dispatch uses the prewarmed arena, the second
  // (and its repeat) hits: no build in the loop, 3 x 29700 of device time.
  CHECK(rows[1] == "64,64,ok,0,,89100,89100,0,0,800000000,0,29700,0,29700");
  // The run option applies to every dispatch (as on npusim run's command
  // line): a window of 4 misses the prewarmed 64 (one build), and chain.json's
  // 4th submit in its one scope is SCOPE_DEADLOCK after 600 ns (exit 1); the
  // second dispatch does not run, so its cells are empty.
  CHECK(rows[2] == "64,4,error,1,SCOPE_DEADLOCK,800000600,600,1,800000000,800000000,800000000,600,,");
  // Prepared at 128: the prewarm is wasted, the first dispatch builds the
  // arena for 64 and the second hits it.
  CHECK(rows[3] == "128,64,ok,0,,800089100,89100,1,800000000,800000000,800000000,29700,0,29700");
  CHECK(rows[4] == "128,4,error,1,SCOPE_DEADLOCK,800000600,600,1,800000000,800000000,800000000,600,,");

  // The row is the worker summary: the file as it is (the first point) by hand.
  const fs::path by_hand = csv.parent_path() / "by_hand";
  REQUIRE(cli::npusim("worker tests/data/worker/sweep_chip.json --platform tiny -q --out '" + by_hand.string() + "'")
              .status == 0);
  const cli::json totals = cli::load(by_hand / "worker_summary.json")["totals"];
  CHECK(totals["host_visible_ns"] == 89100);
  CHECK(totals["arena_builds"] == 0);

  // The plot is the loop's host-visible time.
  CHECK(has(cli::slurp(csv.parent_path() / "w.svg"), ">totals.host_visible_ns</text>"));
  // Each point runs its own copy of the file from a scratch folder, its
  // programs still those named relative to the original's folder.
  // Deterministic whatever the completion order.
  const fs::path serial = csv.parent_path() / "serial.csv";
  REQUIRE(cli::npusim(cmd + " --jobs 1 -q --csv '" + serial.string() + "'").status == 0);
  CHECK(cli::slurp(serial) == cli::slurp(csv));
}

TEST_CASE("sweep: a bad worker file field or option is exit 2 before anything runs", "[sweep][worker][cli][hardening]") {
  const fs::path dir = cli::scratch("sweep_worker_bad");
  fs::create_directories(dir);
  const std::string csv = " --csv '" + (dir / "bad.csv").string() + "'";
  const std::pair<const char*, const char*> cases[] = {
      {"sweep_chip.json --grid worker:/prepar/ring_heap=2048",
       "the worker file has no field \"/prepar/ring_heap\"; did you mean \"worker:/prepare/ring_heap\"?"},
      {"sweep_chip.json --grid worker:/dispatches/2/repeat=2",
       "the worker file has no field \"/dispatches/2/repeat\"; did you mean \"worker:/dispatches/1/repeat\"?"},
      {"sweep_chip.json --grid worker:/prepare/ring_heap=4096,1000",
       "--grid point 2 of tests/data/worker/sweep_chip.json: at /prepare/ring_heap: ring_heap must be >= 1024 "
       "(bytes per ring), got 1000"},
      {"sweep_chip.json --grid worker:/dispatches/1/repeat=0",
       "at /dispatches/1/repeat: expected an integer in [1, 1000000000], got 0"},
      {"sweep_chip.json --grid ring_task_windw=4", "did you mean \"ring_task_window\"?"},
      {"seed_example.json --grid runtime=host_build_graph",
       "\"runtime\" does not apply to a distributed worker's dispatches"},
      {"seed_example.json --grid worker:/worker/chips=2,9",
       "--grid point 2 of tests/data/worker/seed_example.json: at /worker/chips: expected at most 8 chips"},
  };
  for (const auto& [grid, message] : cases) {
    const cli::Result r = cli::npusim(std::string("sweep tests/data/worker/") + grid + " --platform tiny" + csv);
    INFO(grid);
    CHECK(r.status == 2);
    CHECK(has(r.err, message));
  }
  // A worker file's field names a worker file's field only.
  const cli::Result t = cli::npusim("sweep traces/chain.json --platform tiny --grid worker:/prepare/ring_heap=2048" + csv);
  CHECK(t.status == 2);
  CHECK(has(t.err, "\"worker:/prepare/ring_heap\" names a field of a worker file, and INPUT is not one"));
  CHECK_FALSE(fs::exists(dir / "bad.csv"));
  CHECK_FALSE(fs::exists(dir / "bad.svg"));
}
