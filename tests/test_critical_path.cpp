// summary.json's critical_path (sim/record/critical_path.h, docs/outputs.md
// "summary.json: critical_path"): the walk on hand-made tasks (each part
// checked to the picosecond), the path of traces/chain.json, and every
// example and fatal trace: parts that sum to makespan_ns, none negative, and
// a report page without NaN or a negative duration.
#include "tests/catch.h"

#include <filesystem>
#include <initializer_list>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/record/critical_path.h"
#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using npusim::kNever;
using npusim::Time;
using npusim::record::CriticalPath;
using npusim::record::PathPart;
using npusim::record::PathTask;
using npusim::record::PathTasks;
using npusim::record::walk_critical_path;

namespace {

// A hand-made task and its producers (indices into the list).
struct Made {
  PathTask task;
  std::vector<std::uint32_t> preds;
};

// A kernel task: submit, ready, release (dispatch), kernel [start, end), complete.
Made kernel_task(npusim::TaskId id, Time submit, Time ready, Time release, Time start, Time end, Time complete,
                 std::vector<std::uint32_t> preds = {}) {
  PathTask t;
  t.id = id;
  t.kernel = "K";
  t.submit = submit, t.ready = ready, t.release = release, t.start = start, t.end = end, t.complete = complete;
  return {t, std::move(preds)};
}

// Hand-made tasks as the collector keeps them: the list, and one pool of
// every task's producers (PathTask::preds_from, preds_to).
struct Tasks {
  std::vector<PathTask> list;
  std::vector<std::uint32_t> pool;
  Tasks(std::initializer_list<Made> made) {
    for (const Made& m : made) {
      list.push_back(m.task);
      list.back().preds_from = static_cast<std::uint32_t>(pool.size());
      pool.insert(pool.end(), m.preds.begin(), m.preds.end());
      list.back().preds_to = static_cast<std::uint32_t>(pool.size());
    }
  }
  PathTask& operator[](std::size_t i) { return list[i]; }
  operator PathTasks() const { return PathTasks(list, pool); }
};

Time part(const CriticalPath& p, PathPart k) { return p.parts[static_cast<std::size_t>(k)]; }

// Every step's segments tile [from, to] in order, and the parts add up to it.
void check_tiles(const CriticalPath& p) {
  Time at = p.from, sum = 0;
  for (const auto& s : p.steps)
    for (const auto& g : s.segments) {
      CHECK(g.from == at);
      CHECK(g.to > g.from);
      at = g.to;
    }
  if (!p.steps.empty()) CHECK(at == p.to);
  for (Time v : p.parts) sum += v;
  CHECK(sum == p.to - p.from);
}

}  // namespace

TEST_CASE("critical path: a producer and its consumer, each part to the picosecond", "[critical_path]") {
  // t0 runs [30, 100), completes at 105; t1 (consumes t0) ready at 110,
  // dispatched at 120, runs [130, 200). The makespan is [30, 200].
  Tasks tasks = {kernel_task(0, 0, 10, 20, 30, 100, 105), kernel_task(1, 5, 110, 120, 130, 200, 205, {0})};
  CriticalPath p = walk_critical_path(tasks, 30, 200);
  check_tiles(p);
  REQUIRE(p.steps.size() == 2);
  CHECK(p.steps[0].task == 0);
  CHECK(p.steps[1].task == 1);
  CHECK(part(p, PathPart::Kernel) == 70 + 70);
  CHECK(part(p, PathPart::ProducerWait) == 10);   // t0's end 100 to t1's ready 110
  CHECK(part(p, PathPart::SchedOverhead) == 20);  // ready 110 -> dispatch 120 -> start 130
  CHECK(part(p, PathPart::CoreWait) == 0);
  CHECK(part(p, PathPart::Orchestrator) == 0);    // t0's wait before 30 is outside the makespan

  // t1's core was busy until 125: ready 110 to 125 waits for the core, 125
  // to its dispatch at 128 and on to the start is the scheduler's.
  tasks[1].core_free = 125;
  tasks[1].release = 128;
  p = walk_critical_path(tasks, 30, 200);
  check_tiles(p);
  CHECK(part(p, PathPart::CoreWait) == 15);
  CHECK(part(p, PathPart::SchedOverhead) == 5);
  CHECK(part(p, PathPart::ProducerWait) == 10);

  // Dispatched at 112 to the core while it was still busy (until 125): the
  // block starts when the core is free; [110, 125) waits for the core, only
  // the launch [125, 130) is the scheduler's.
  tasks[1].release = 112;
  p = walk_critical_path(tasks, 30, 200);
  check_tiles(p);
  CHECK(part(p, PathPart::CoreWait) == 15);
  CHECK(part(p, PathPart::SchedOverhead) == 5);
}

TEST_CASE("critical path: a task submitted after its producer completed is orchestrator-bound", "[critical_path]") {
  // t1 is submitted at 150, long after t0 completed (105): it became ready at
  // its submit; the path ends there and [30, 150) is the orchestrator's.
  const Tasks tasks = {kernel_task(0, 0, 10, 20, 30, 100, 105), kernel_task(1, 150, 150, 160, 170, 200, 205, {0})};
  const CriticalPath p = walk_critical_path(tasks, 30, 200);
  check_tiles(p);
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].task == 1);
  CHECK(part(p, PathPart::Kernel) == 30);
  CHECK(part(p, PathPart::SchedOverhead) == 20);
  CHECK(part(p, PathPart::Orchestrator) == 120);
}

TEST_CASE("critical path: a dummy task between two kernels counts by its real moments", "[critical_path]") {
  // t0 [30, 100) completes at 105; dummy d1 (no kernel, consumes t0) ready at
  // 110, completes at 115; t2 (consumes d1) ready at 120, runs [130, 200).
  Made d;
  d.task.id = 1;
  d.task.kind = "dummy";
  d.task.submit = 2, d.task.ready = 110, d.task.complete = 115;
  d.preds = {0};
  const Tasks tasks = {kernel_task(0, 0, 10, 20, 30, 100, 105), d, kernel_task(2, 3, 120, 125, 130, 200, 205, {1})};
  const CriticalPath p = walk_critical_path(tasks, 30, 200);
  check_tiles(p);
  REQUIRE(p.steps.size() == 3);
  CHECK(p.steps[1].task == 1);
  CHECK(part(p, PathPart::Kernel) == 140);
  CHECK(part(p, PathPart::ProducerWait) == (120 - 115) + (110 - 100));
  CHECK(part(p, PathPart::SchedOverhead) == (130 - 120) + (115 - 110));
}

TEST_CASE("critical path: an early-staged block counts from its doorbell, not its early dispatch", "[critical_path]") {
  // t1's block was staged on its core at 50, before t0 ended; it became
  // ready at 104 and its doorbell rang at 106 (the release): never negative.
  const Tasks tasks = {kernel_task(0, 0, 10, 20, 30, 100, 102), kernel_task(1, 5, 104, 106, 108, 200, 205, {0})};
  const CriticalPath p = walk_critical_path(tasks, 30, 200);
  check_tiles(p);
  CHECK(part(p, PathPart::SchedOverhead) == 4);  // ready 104 -> doorbell 106 -> start 108
  CHECK(part(p, PathPart::ProducerWait) == 4);
}

TEST_CASE("critical path: a failed run's path ends at the stop, a kernel still running counts up to it", "[critical_path]") {
  // t1 started at 130 and was still running when the device stopped at 150.
  const Tasks tasks = {kernel_task(0, 0, 10, 20, 30, 100, 105), kernel_task(1, 5, 110, 120, 130, kNever, kNever, {0})};
  const CriticalPath p = walk_critical_path(tasks, 30, 150);
  check_tiles(p);
  CHECK(part(p, PathPart::Kernel) == 70 + 20);
  // No kernel started: the window (empty here) has no steps.
  const CriticalPath none = walk_critical_path({}, 30, 30);
  CHECK(none.steps.empty());
  CHECK(none.to == none.from);
}

TEST_CASE("critical path: traces/chain.json's path is the whole chain and tiles the makespan", "[critical_path][cli]") {
  // chain.json: MATMUL (5 us, aic) then 7 ADDs (2 us, aiv), each consuming the previous.
  const cli::RunResult r = cli::run_summary("traces/chain.json --quiet", "critical_chain");
  REQUIRE(r.status == 0);
  const json& cp = r.summary["critical_path"];
  REQUIRE(cp.is_object());
  CHECK(cp["tasks"] == 8);
  CHECK(cp["span_ns"] == r.summary["makespan_ns"]);
  CHECK(cp["parts_ns"]["kernel"].get<double>() == 5000 + 7 * 2000);
  CHECK(cp["parts_ns"]["orchestrator"].get<double>() == 0);
  REQUIRE(cp["steps"].size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(cp["steps"][i]["task"] == "t" + std::to_string(i));
    CHECK(cp["steps"][i]["kernel"] == (i ? "ADD" : "MATMUL"));
  }
  // --swimlane-level 0 keeps no records: no path.
  const cli::RunResult off = cli::run_summary("traces/chain.json --quiet --swimlane-level 0", "critical_chain_off");
  REQUIRE(off.status == 0);
  CHECK(off.summary["critical_path"].is_null());
}

// The traces of the acceptance: every example (traces/*.json, its
// subfolders of run traces) and every fatal one. bench_pa_1m and bench_pa_100k
// are left out (a million and 100,000 tasks: seconds each, with the report).
std::vector<std::string> path_traces() {
  std::vector<std::string> out;
  for (const char* dir : {"traces", "traces/barriers", "traces/coherency", "traces/fatal"})
    for (const auto& e : fs::directory_iterator(fs::path(NPUSIM_SOURCE_DIR) / dir)) {
      const std::string name = e.path().filename().string();
      if (e.path().extension() != ".json" || name.rfind("bench_pa_", 0) == 0) continue;
      out.push_back(std::string(dir) + "/" + name);
    }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("critical path: every example and fatal trace, its report has no nan or negative duration", "[critical_path][cli]") {
  const std::regex negative(R"(-[0-9][0-9,.]* (ns|us|ms|s)\b)");
  const std::regex nan_text(R"(\bnan\b)", std::regex::icase);
  int failed = 0;
  for (const std::string& trace : path_traces()) {
    INFO(trace);
    fs::path out;
    // --no-host-stats: no sizing re-run output matters here; --quiet: no progress line.
    const cli::Result r = cli::run(trace + " --quiet", "cp_" + fs::path(trace).stem().string(), out);
    REQUIRE((r.status == 0 || r.status == 1));
    failed += r.status == 1;
    const json s = cli::load(out / "summary.json");
    if (!s.contains("critical_path")) {  // the device failed before its first task: no figures either
      CHECK(s["status"] == "error");
      CHECK_FALSE(s.contains("figures"));
      continue;
    }
    const json& cp = s["critical_path"];
    if (s["makespan_ns"].get<double>() > 0 || !cp.is_null()) {
      REQUIRE(cp.is_object());
      double sum = 0;
      for (const auto& [k, v] : cp["parts_ns"].items()) {
        CHECK(v.get<double>() >= 0);
        sum += v.get<double>();
      }
      CHECK(std::abs(sum - s["makespan_ns"].get<double>()) <= 1.0);
      CHECK(cp["span_ns"] == s["makespan_ns"]);
      for (const json& step : cp["steps"])
        for (const json& g : step["segments"]) CHECK(g["to_ns"].get<double>() > g["from_ns"].get<double>());
    }
    const fs::path page = cli::scratch("cp_page.html");
    REQUIRE(cli::npusim("report '" + out.string() + "' -o '" + page.string() + "'").status == 0);
    const std::string html = cli::slurp(page);
    CHECK_FALSE(std::regex_search(html, nan_text));
    // A failed run whose kernels were still on their cores (hard_partial_16:
    // makespan 2775 ns, no block ended) did run kernels; its time series span
    // the makespan (the ready queue's was NaN, drawn as data-span-ns="nan").
    if (s["makespan_ns"].get<double>() > 0) CHECK_FALSE(cli::has(html, "no kernel ran"));
    std::smatch m;
    if (std::regex_search(html, m, negative)) FAIL_CHECK("a negative duration on the page: " << m.str());
    fs::remove_all(out);
  }
  CHECK(failed >= 10);  // the fatal traces and hard_partial_16 fail; their paths end at the stop
}
