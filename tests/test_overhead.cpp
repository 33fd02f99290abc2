// The runtime-overhead techniques of seed page 002, each shown the way the
// page says to confirm it, on the example traces (docs/overhead.md):
// SPMD vs per-block tasks, predicates, early resolve, mix kernels.
#include "tests/catch.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using cli::load;

// Runs a trace; returns its output directory.
fs::path run(const std::string& name) {
  fs::path dir;
  cli::Result r = cli::run("traces/" + name + ".json --quiet", name, dir);
  REQUIRE(r.status == 0);
  return dir;
}

// Worker View bars (pid 4, cat "event") per task id: the core lanes they occupy.
std::map<std::uint64_t, std::vector<json>> bars(const json& perfetto) {
  std::map<std::uint64_t, std::vector<json>> out;
  for (const auto& e : perfetto["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 4 && e.value("cat", "") == "event") out[e["args"]["taskId"]].push_back(e);
  return out;
}

double num(const json& s, const char* key) { return s[key].get<double>(); }

}  // namespace

TEST_CASE("SPMD vs per-block tasks: same work, one dispatch instead of four, shorter, one task on four lanes", "[overhead]") {
  fs::path pb = run("per_block_tasks"), sp = run("spmd_blocks");
  json spb = load(pb / "summary.json"), ssp = load(sp / "summary.json");
  CHECK(ssp["kernels"]["ADD"]["blocks"] == spb["kernels"]["ADD"]["blocks"]);  // same work: 4 blocks
  CHECK(spb["tasks"]["dispatch_ops"] == 4);
  CHECK(ssp["tasks"]["dispatch_ops"] == 1);
  CHECK(num(ssp, "device_wall_ns") < num(spb, "device_wall_ns"));
  CHECK(load(sp / "deps.json")["tasks"].size() == 1);  // deps.json: N nodes collapse into one
  auto b = bars(load(sp / "merged_swimlane.json"));
  REQUIRE(b.size() == 1);
  std::set<int> lanes;
  for (const auto& e : b.begin()->second) lanes.insert(e["tid"].get<int>());
  CHECK(lanes.size() == 4);  // one task on several core lanes
  CHECK(b.begin()->second.front()["name"] == "ADD_spmd(t0)");
}

TEST_CASE("a false predicate retires the task without a core lane and its consumer still runs", "[overhead]") {
  fs::path g0 = run("gated_0"), g1 = run("gated_1");
  json s0 = load(g0 / "summary.json"), s1 = load(g1 / "summary.json");
  CHECK(s0["tasks"]["predicated_skip"] == 1);
  CHECK(s1["tasks"]["predicated_skip"] == 0);
  CHECK(s0["tasks"]["completed"] == 3);
  // Worker bars: gate 0 -> MUL (4 blocks) and NEXT; gate 1 -> BUMP (4 blocks) too.
  auto count = [](const json& perfetto, const std::string& prefix) {
    int n = 0;
    for (const auto& [id, evs] : bars(perfetto))
      for (const auto& e : evs)
        if (e["name"].get<std::string>().rfind(prefix, 0) == 0) ++n;
    return n;
  };
  json p0 = load(g0 / "merged_swimlane.json"), p1 = load(g1 / "merged_swimlane.json");
  CHECK(count(p0, "BUMP") == 0);
  CHECK(count(p1, "BUMP") == 4);
  CHECK(count(p0, "NEXT") == 1);  // its consumer unlocks as when it runs
  CHECK(count(p1, "NEXT") == 1);
  bool marker = false;  // retired on the scheduler's AICPU lane, predicated_pass false
  for (const auto& e : p0["traceEvents"])
    if (e.contains("args") && e["args"].contains("predicated_pass") && e["args"]["predicated_pass"] == false) marker = true;
  CHECK(marker);
  CHECK(num(s0, "device_wall_ns") < num(s1, "device_wall_ns"));
}

TEST_CASE("early resolve shrinks the pickup gap on a chain and leaves tasks and edges unchanged", "[overhead]") {
  fs::path on = run("early_resolve"), off = run("early_resolve_off");
  json son = load(on / "summary.json"), soff = load(off / "summary.json");
  CHECK(son["tasks"]["submitted"] == soff["tasks"]["submitted"]);
  CHECK(son["kernels"]["STEP"]["staged_blocks"] == 15);  // every consumer of the chain was pre-staged
  CHECK(soff["kernels"]["STEP"]["staged_blocks"] == 0);
  // Graph shape: the same edges.
  auto edges = [](const json& d) {
    std::multiset<std::tuple<std::string, std::string, std::string>> es;
    for (const auto& e : d["edges"])
      es.insert({e["pred"].get<std::string>(), e["succ"].get<std::string>(), e["source"].get<std::string>()});
    return es;
  };
  CHECK(edges(load(on / "deps.json")) == edges(load(off / "deps.json")));
  // The gap from a producer's end to its consumer's start, along the chain,
  // and the consumer's release-to-start (its doorbell, or its dispatch).
  auto gaps = [](const fs::path& dir, double& end_to_start, double& release_to_start) {
    std::ifstream in(dir / "task_stats.csv");
    std::string line;
    std::getline(in, line);
    std::vector<std::vector<std::string>> rows;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::stringstream ss(line);
      std::string x;
      while (std::getline(ss, x, ',')) f.push_back(x);
      rows.push_back(f);
    }
    // columns: ... 11 first_dispatch 12 first_release 13 first_start 14 last_start 15 last_end
    end_to_start = release_to_start = 0;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      end_to_start += std::stod(rows[i][13]) - std::stod(rows[i - 1][15]);
      release_to_start += std::stod(rows[i][13]) - std::stod(rows[i][12]);
    }
    end_to_start /= static_cast<double>(rows.size() - 1);
    release_to_start /= static_cast<double>(rows.size() - 1);
  };
  double on_gap, on_rel, off_gap, off_rel;
  gaps(on, on_gap, on_rel);
  gaps(off, off_gap, off_rel);
  CHECK(on_gap < off_gap / 2);
  CHECK(on_rel < off_rel);
  CHECK(num(son, "device_wall_ns") < num(soff, "device_wall_ns"));
  bool doorbell_flow = false;
  const json pon = load(on / "merged_swimlane.json");  // (not a temporary: the loop keeps a reference)
  for (const auto& e : pon["traceEvents"])
    if (e.value("name", "") == "doorbell") doorbell_flow = true;
  CHECK(doorbell_flow);
}

TEST_CASE("a mix kernel is one bar with overlapping lanes, shorter than cube then vector, and stalls on too few slots", "[overhead]") {
  fs::path mix = run("mix_pipeline"), one = run("mix_pipeline_1slot"), two = run("cube_then_vector");
  json smix = load(mix / "summary.json"), stwo = load(two / "summary.json");
  CHECK(smix["tasks"]["dispatch_ops"] == 1);
  CHECK(stwo["tasks"]["dispatch_ops"] == 2);
  CHECK(num(smix, "device_wall_ns") < num(stwo, "device_wall_ns"));
  // One task whose AIC and AIV bars overlap in time.
  auto b = bars(load(mix / "merged_swimlane.json"));
  REQUIRE(b.size() == 1);
  const auto& evs = b.begin()->second;
  REQUIRE(evs.size() == 3);  // AIC + AIV0 + AIV1 of one cluster
  double aic_end = 0, aiv_start = 1e18;
  for (const auto& e : evs) {
    const double s = e["ts"].get<double>(), f = s + e["dur"].get<double>();
    if (e["tid"].get<int>() < 10000 + 10 * 24) aic_end = f;
    else aiv_start = std::min(aiv_start, s);
  }
  CHECK(aiv_start < aic_end);
  // The two-task version: the vector task starts after the cube task ends.
  auto b2 = bars(load(two / "merged_swimlane.json"));
  REQUIRE(b2.size() == 2);
  double cube_end = 0, vec_start = 1e18;
  for (const auto& [task, bar_events] : b2)
    for (const auto& e : bar_events) {
      const double s = e["ts"].get<double>(), f = s + e["dur"].get<double>();
      if (e["tid"].get<int>() < 10000 + 10 * 24) cube_end = std::max(cube_end, f);
      else vec_start = std::min(vec_start, s);
    }
  REQUIRE(cube_end > 0);
  REQUIRE(vec_start < 1e18);
  CHECK(vec_start >= cube_end);
  // Too few slots: the cube's pushes stall between tiles. Either way the cube
  // ends at the AIVs' last free (the pipe's destructor, ~TPipe in PTO-ISA's
  // TPush.hpp, is the AIC's last "push" slice); before it, with 8 slots
  // (SyncPeriod 4) no push of the 8 tiles waits for a credit, with one slot
  // every push after the first waits for both AIVs' free of the tile before.
  auto push_time = [](const fs::path& dir) {
    std::map<int, std::vector<std::pair<double, double>>> by_lane;  // tid -> (ts, dur)
    const json p = load(dir / "merged_swimlane.json");
    for (const auto& e : p["traceEvents"])
      if (e.value("cat", "") == "stall" && e["args"]["wait"] == "push")
        by_lane[e["tid"].get<int>()].emplace_back(e["ts"].get<double>(), e["dur"].get<double>());
    double t = 0;
    for (auto& [tid, slices] : by_lane) {
      std::sort(slices.begin(), slices.end());
      for (std::size_t i = 0; i + 1 < slices.size(); ++i) t += slices[i].second;  // all but the drain
    }
    return t;
  };
  // a2a3: a 16 KiB TSTORE is 284 + 16384/32 = 796 ns; 8 of them with 8 slots.
  CHECK(push_time(mix) == Approx(8 * 0.796));
  // One slot: the AIVs' pace (load 540 + add 2000 per tile) is slower than
  // the cube's (1500 + 796), so pushes 5, 6, 7 wait 216 + 244 + 244 ns.
  CHECK(push_time(one) == Approx(7.072));
}
