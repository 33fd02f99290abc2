// One set of run-level times after a failure (docs/failures.md, "When it
// stopped"): error.stall_time_ns (progress stopped) comes after every
// completion and every milestone of task_stats.csv, device_wall_ns ends
// there, makespan_ns is not 0 when a kernel ran, and task_stats.csv writes
// a moment that never came as an empty field, never as 0.
#include "tests/catch.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// task_stats.csv as rows of column -> field (no field of these runs is quoted).
std::vector<std::map<std::string, std::string>> failure_rows(const fs::path& file) {
  std::istringstream in(cli::slurp(file));
  std::string line;
  std::vector<std::string> head;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> v;
    std::string f;
    std::istringstream s(l);
    while (std::getline(s, f, ',')) v.push_back(f);
    if (!l.empty() && l.back() == ',') v.push_back("");
    return v;
  };
  std::getline(in, line);
  head = split(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(line);
    REQUIRE(f.size() == head.size());
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < f.size(); ++i) row[head[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

constexpr double kMissing = -1;
double milestone(const std::map<std::string, std::string>& row, const std::string& column) {
  const std::string& v = row.at(column);
  return v.empty() ? kMissing : std::stod(v);
}

const char* const kMilestones[] = {"submit_ns",      "ready_ns",      "first_dispatch_ns", "first_release_ns",
                              "first_start_ns", "last_start_ns", "last_end_ns",       "complete_ns"};

}  // namespace

TEST_CASE("after every failure the run's times agree with each other and with task_stats.csv", "[fatal][cli]") {
  std::vector<fs::path> traces;
  const fs::path root(NPUSIM_SOURCE_DIR);
  for (const auto& e : fs::directory_iterator(root / "traces/fatal")) traces.push_back(e.path());
  traces.push_back(root / "traces/barriers/hard_partial_16.json");
  traces.push_back(root / "traces/barriers/hard_pending_48.json");
  std::sort(traces.begin(), traces.end());
  for (const fs::path& p : traces) {
    INFO(p.filename().string());
    fs::path dir;
    REQUIRE(cli::run("'" + p.string() + "' --quiet --no-suggest", "times", dir).status == 1);
    const json s = cli::load(dir / "summary.json");
    const json& e = s["error"];
    const double stall = e["stall_time_ns"], since = e["detector_since_ns"], device = e["device_time_ns"];
    const double wall = s["device_wall_ns"], makespan = s["makespan_ns"];
    CHECK(since <= stall);
    CHECK(wall == stall);  // the orchestration starts at 0
    CHECK(makespan <= wall);
    CHECK(makespan >= 0);
    double first_start = std::numeric_limits<double>::max();
    bool started = false, on_a_core = false;
    for (const auto& row : failure_rows(dir / "task_stats.csv")) {
      INFO(row.at("task"));
      for (const char* c : kMilestones) {
        CHECK(row.at(c) != "0");  // missing is empty, never 0
        CHECK(milestone(row, c) <= stall);  // nothing after progress stopped
      }
      const double fs_ = milestone(row, "first_start_ns"), ls = milestone(row, "last_start_ns"), le = milestone(row, "last_end_ns");
      const double fd = milestone(row, "first_dispatch_ns"), done = milestone(row, "complete_ns");
      if (fs_ != kMissing) {
        started = true;
        first_start = std::min(first_start, fs_);
        CHECK(fd != kMissing);
        CHECK(fd <= fs_);
        if (le == kMissing && done == kMissing) on_a_core = true;
      }
      if (ls != kMissing) CHECK((fs_ != kMissing && fs_ <= ls));
      if (le != kMissing) CHECK((ls != kMissing && ls <= le));
      if (done != kMissing && row.at("kind") == "kernel" && row.at("dispatch_ops") != "0") CHECK(le != kMissing);
    }
    // A kernel ran: the makespan is not 0; one still on its core counts to the stop.
    CHECK(started == (makespan > 0));
    if (started) CHECK(makespan <= stall - first_start);
    if (on_a_core) CHECK(makespan == stall - first_start);
    // The core time of the kernels is the core types' (a block still on its
    // core counts up to the stop in both).
    double kernels = 0;
    for (const auto& [name, k] : s["kernels"].items()) kernels += k["core_busy_ns"].get<double>();
    CHECK(kernels == Approx(s["figures"]["core_types"]["aic"]["busy_ns"].get<double>() +
                            s["figures"]["core_types"]["aiv"]["busy_ns"].get<double>()).margin(1e-6));
    // The detector fires at or after the stop, unless work went on past its latch.
    if (device < stall) CHECK(e["name"] == "SCOPE_DEADLOCK");
  }
}

TEST_CASE("task_stats.csv of a HARD deadlock: started blocks, none ended, no zeros", "[fatal][cli]") {
  // hard_pending_48: BAR's first block started at 4.930 us; 2 of its 48
  // never did (they sit in pending slots of cores at the barrier), none
  // ended: last_start_ns, last_end_ns and complete_ns are empty. LONG's row
  // is complete: its 16 blocks start 5 ns apart from 4.426 us, the last ends
  // 50 us after its start at 4.501 us, and the task completes at 56.782 us
  // (thread 0's completion phase, which polls its 16 running cores at 100 ns
  // each, reaches the last block's FIN). Before, BAR's first_start_ns was 0
  // beside a last_start_ns.
  fs::path dir;
  REQUIRE(cli::run("traces/barriers/hard_pending_48.json --quiet --no-suggest", "pending48_ts", dir).status == 1);
  const auto rows = failure_rows(dir / "task_stats.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("task") == "t0");
  CHECK(milestone(rows[0], "first_start_ns") == 4426);
  CHECK(milestone(rows[0], "last_end_ns") == 54501);
  CHECK(milestone(rows[0], "complete_ns") == 56782);
  CHECK(rows[1].at("task") == "t1");
  CHECK(milestone(rows[1], "first_dispatch_ns") == 3048);
  CHECK(milestone(rows[1], "first_start_ns") == 4930);
  CHECK(rows[1].at("last_start_ns").empty());
  CHECK(rows[1].at("last_end_ns").empty());
  CHECK(rows[1].at("complete_ns").empty());
}
