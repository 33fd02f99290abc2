// HARD and SOFT syncall end to end: the partial HARD launch that deadlocks
// (507018) and its diagnosis, the full-occupancy one that runs, `npusim check`
// on both, and `npusim barrier-cost`.
#include "tests/catch.h"

#include <set>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using cli::has;

}  // namespace

TEST_CASE("a HARD syncall on 16 AIV blocks without sync_start deadlocks with 507018 and says why", "[barrier]") {
  cli::RunResult r = cli::run_summary("traces/barriers/hard_partial_16.json --quiet", "partial");
  CHECK(r.status == 1);
  const json& e = r.summary["error"];
  CHECK(e["name"] == "SCHEDULER_TIMEOUT");
  CHECK(e["sched_error_code"] == 100);
  CHECK(e["host_code"] == 507018);
  CHECK(e["sub_class"] == "S1:running-stalled");
  // The watchdog (scheduler_dispatch.cpp, the idle branch) reads the clock at
  // the end of each idle iteration of thread 0 (loop 40 + 16 COND polls x 100
  // = 1640 ns) and fires at the first more than 10 s after its last
  // progress: 1640 x (floor(1e10 / 1640) + 1) = 1e10 + 40 ns later.
  CHECK(e["device_time_ns"].get<double>() - e["detector_since_ns"].get<double>() == 1e10 + 40);
  // Thread 0's last progress is its dispatch at 2.624 us; progress stopped
  // when the last of the 16 blocks reached the barrier, 5 ns apart from
  // 7.126 us (the 16th at 7.201 us).
  CHECK(e["detector_since_ns"] == 2624.0);
  CHECK(e["stall_time_ns"] == 7201.0);
  CHECK(r.summary["device_wall_ns"] == 7201.0);
  // The first kernel start (4.426 us) to the stop: the blocks never end.
  CHECK(r.summary["makespan_ns"] == 7201.0 - 4426.0);
  const json& b = e["diagnosis"]["barriers"];
  REQUIRE(b.size() == 1);
  CHECK(b[0]["core_type"] == "AIV");
  CHECK(b[0]["participants"] == 48);
  CHECK(b[0]["arrived"].size() == 16);
  CHECK(b[0]["tasks"][0]["block_num"] == 16);
  CHECK(b[0]["tasks"][0]["sync_start"] == false);
  // Every block and every core of the barrier's type accounted for.
  CHECK(b[0]["tasks"][0]["placed"] == 16);
  CHECK(b[0]["tasks"][0]["at_barrier"] == 16);
  CHECK(b[0]["tasks"][0]["in_pending_slot"] == 0);
  CHECK(b[0]["tasks"][0]["finished"] == 0);
  CHECK(b[0]["tasks"][0]["not_placed"] == 0);
  CHECK(b[0]["cores"] == json{{"arrived", 16}, {"idle", 32}, {"busy", 0}});
  CHECK(has(r.err, "16 block(s) placed (16 at the barrier, 0 finished), 0 not placed yet"));
  CHECK(has(r.err, "of the 48 physical AIV cores, 16 arrived and 32 did not: 32 idle, 0 running other work"));
  CHECK(has(r.err, "progress stopped at 7.201 us of simulated time; the device reports it at 10000002.664 us "
                   "(scheduler no-progress timeout (10000 ms), counting from 2.624 us)"));
  CHECK(has(r.err, "PTO2 scheduler timeout sub_class=S1:running-stalled"));
  CHECK(has(r.err, "16 core(s) ["));
  CHECK(has(r.err, "wait at a HARD syncall (FFTS, core_type AIV)"));
  CHECK(has(r.err, "32 physical AIV cores run no block of it"));
  CHECK(has(r.err, "with sync_start=True"));
  CHECK(has(r.err, "mode=\"soft\""));
}

TEST_CASE("a HARD syncall whose last 2 blocks sit in the pending slots of cores at the barrier", "[barrier]") {
  // hard_pending_48: 16 LONG blocks (50 us) hold the 16 AIV cores of
  // scheduler thread 0 (clusters 0, 3, .., 21) when the 48 BAR blocks are
  // dispatched without sync_start; threads 1 and 2 put 32 on their idle
  // cores, which reach the barrier. The 16 left go into pending slots (the
  // runtime's second slot per core), each into one of the popping thread's
  // own busy cores (run_staging_order, scheduler_dispatch.cpp): thread 0
  // stages 14 behind LONG's blocks, one at a time; thread 1, whose cores are
  // all at the barrier, reaches its own pending stage meanwhile and takes
  // the last 2, into cores 32 and 33 (cluster 4). The 14 start when LONG
  // ends and arrive; the 2 can start only when their cores leave the
  // barrier, which waits for them.
  cli::RunResult r = cli::run_summary("traces/barriers/hard_pending_48.json --quiet --no-suggest", "pending48");
  CHECK(r.status == 1);
  const json& e = r.summary["error"];
  CHECK(e["name"] == "SCHEDULER_TIMEOUT");
  const json& b = e["diagnosis"]["barriers"];
  REQUIRE(b.size() == 1);
  REQUIRE(b[0]["tasks"].size() == 1);
  const json& t = b[0]["tasks"][0];
  CHECK(t["placed"] == 48);
  CHECK(t["at_barrier"] == 46);
  CHECK(t["in_pending_slot"] == 2);
  CHECK(t["staged"] == 0);
  CHECK(t["running"] == 0);
  CHECK(t["finished"] == 0);
  CHECK(t["not_placed"] == 0);
  CHECK(t["at_barrier"].get<int>() + t["in_pending_slot"].get<int>() + t["finished"].get<int>() == t["placed"]);
  CHECK(t["pending_slot_cores"] == json{32, 33});
  CHECK(b[0]["cores"] == json{{"arrived", 46}, {"idle", 2}, {"busy", 0}});
  CHECK(has(r.err, "48 block(s) placed (46 at the barrier, 2 in the pending slot of a core stuck at the barrier, "
                   "0 finished), 0 not placed yet"));
  CHECK(has(r.err, "2 block(s) were dispatched into the pending slot of cores [32,33], behind "
                   "blocks now stuck at the barrier"));
  CHECK(has(r.err, "of the 48 physical AIV cores, 46 arrived and 2 did not: 2 idle, 0 running other work"));
  // One set of times: thread 2's last progress is its dispatch of 16 BAR
  // blocks, ending at 3.128 us (threads 0 and 1 progress later), so its
  // watchdog fires first: its idle iteration polls its 16 cores at the
  // barrier, 40 + 16 x 100 = 1640 ns, and the first iteration end more than
  // 10 s on is 1640 x (floor(1e10 / 1640) + 1) = 1e10 + 40 ns later. LONG
  // completed at 56.782 us on thread 0 and that thread's release ran to
  // 59.032 us: progress stopped then, after every completion.
  CHECK(e["detector_since_ns"] == 3128.0);
  CHECK(e["stall_time_ns"] == 59032.0);
  CHECK(e["device_time_ns"] == 3128.0 + 1e10 + 40);
  CHECK(r.summary["device_wall_ns"] == 59032.0);
  CHECK(r.summary["makespan_ns"] == 59032.0 - 4426.0);  // LONG's first start to the stop
  CHECK(has(r.err, "progress stopped at 59.032 us of simulated time; the device reports it at 10000003.168 us "
                   "(scheduler no-progress timeout (10000 ms), counting from 3.128 us)"));
}

TEST_CASE("a HARD mix syncall on 8 MIX blocks waits for every cluster's three cores", "[barrier]") {
  // A MIX kernel (AIC + both AIVs) whose lanes meet at a HARD syncall of
  // core_type mix (PTO-ISA SyncAll.hpp: the AIVs flag their AIC, the AICs'
  // FFTS barrier, the AIC flags its AIVs): the barrier spans all 24 clusters
  // x 3 cores = 72 physical cores (FftsBarrier::note_arrival: AIC cores x (1
  // + the kernel's AIV lanes)); 8 blocks bring 24, the other 48 never come.
  const fs::path dir = cli::scratch("mixbar");
  fs::create_directories(dir);
  std::ofstream(dir / "mixbar.json") << R"({"npusim_trace": 1, "name": "hard_mix_partial_8",
    "kernels": {"BAR": {"func_id": 0, "core": "mix", "lanes": {
      "aic": {"body": [{"compute": {"ns": 2000}}, {"syncall": {"mode": "hard", "core_type": "mix"}}, {"compute": {"ns": 1000}}]},
      "aiv": {"body": [{"compute": {"ns": 2000}}, {"syncall": {"mode": "hard", "core_type": "mix"}}, {"compute": {"ns": 1000}}]}}}},
    "program": [{"op": "submit", "kernel": "BAR", "block_num": 8, "sync_start": false, "args": []}]})";
  cli::RunResult r = cli::run_summary("'" + (dir / "mixbar.json").string() + "' --quiet", "mixbar_out");
  CHECK(r.status == 1);
  const json& e = r.summary["error"];
  CHECK(e["name"] == "SCHEDULER_TIMEOUT");
  const json& b = e["diagnosis"]["barriers"];
  REQUIRE(b.size() == 1);
  CHECK(b[0]["core_type"] == "MIX (AIC+AIV)");
  CHECK(b[0]["participants"] == 72);
  CHECK(b[0]["arrived"].size() == 24);
  CHECK(has(r.err, "the FFTS barrier releases only when all 72 physical MIX (AIC+AIV) cores arrive, and 48 never will"));
  CHECK(has(r.err, "48 physical MIX (AIC+AIV) cores run no block of it"));
  CHECK(has(r.err, "block_num 24"));
}

TEST_CASE("the same kernel on 48 AIV blocks with sync_start completes", "[barrier]") {
  cli::RunResult r = cli::run_summary("traces/barriers/hard_full_48.json --quiet", "full");
  CHECK(r.status == 0);
  CHECK(r.summary["status"] == "ok");
  CHECK(r.summary["tasks"]["blocks_dispatched"] == 48);
}

TEST_CASE("npusim check flags the partial HARD launch and passes the full one", "[barrier]") {
  cli::Result bad = cli::npusim("check traces/barriers/hard_partial_16.json");
  CHECK(bad.status == 1);
  CHECK(has(bad.err, "npusim check: traces/barriers/hard_partial_16.json: at /program/0: error [HardSyncallOccupancy]: "
                     "hard pl.system.syncall(core_type=aiv) in kernel BAR requires the SPMD launch to fill all 48 AIV "
                     "cores (one block per physical core, pl.system.available_aiv_count()), but the launch has 16 "
                     "blocks. Use mode=\"soft\" (GM-polling) for partial occupancy.\n"));
  CHECK(has(bad.err, "requires the SPMD launch to set sync_start=True so all blocks are co-resident at the FFTS barrier"));
  CHECK(has(bad.out, "failed (1 submits, 1 kernels, 2 error(s), 0 warning(s))"));
  cli::Result good = cli::npusim("check traces/barriers/hard_full_48.json");
  CHECK(good.status == 0);
  CHECK(good.err.empty());
  CHECK(has(good.out, "ok (1 submits"));
}

TEST_CASE("barrier-cost gives HARD the FFTS release at full occupancy and a deadlock below it", "[barrier]") {
  cli::Result r = cli::npusim("barrier-cost --core-type aiv --participants 16,48");
  REQUIRE(r.status == 0);
  CHECK(has(r.out, "aiv                 16"));
  CHECK(has(r.out, "deadlock (507018): waits for all 48"));
  CHECK(has(r.out, "aiv                 48"));
  CHECK(has(r.out, "  500.0\n"));  // ffts.barrier_release_ns on a2a3
}

TEST_CASE("SOFT syncall among 16 blocks completes at partial occupancy", "[barrier]") {
  cli::RunResult r = cli::run_summary("traces/barriers/soft_16.json --quiet", "soft");
  CHECK(r.status == 0);
  CHECK(r.summary["status"] == "ok");
  CHECK(r.summary["tasks"]["blocks_dispatched"] == 16);
  CHECK(cli::npusim("check traces/barriers/soft_16.json").status == 0);
}

TEST_CASE("barrier-cost: SOFT rises with the participants, HARD is the FFTS release", "[barrier]") {
  fs::path csv = cli::scratch("barrier.csv");
  cli::Result r = cli::npusim("barrier-cost --core-type aiv --participants 2,8,16,48 --csv '" + csv.string() + "'");
  REQUIRE(r.status == 0);
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  CHECK(line == "core_type,participants,soft_ns,hard_ns,hard_note");
  std::vector<double> soft;
  std::string hard48;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    f.resize(5);
    soft.push_back(std::stod(f[2]));
    if (f[1] == "48") hard48 = f[3];
    // An empty HARD cell says why: below full occupancy the FFTS barrier never completes.
    CHECK(f[4] == (f[1] == "48" ? "" : "deadlock (507018): waits for all 48"));
    CHECK(f[3].empty() == (f[1] != "48"));
  }
  // PTO-ISA's SYNCALL_SOFT_ATOMIC_BARRIER (include/pto/common/syncall_soft.hpp;
  // docs/barriers.md, whose table these are): the last of N participants
  // arriving together is released 100 (dsb) + 284 (ld_dev) + 50 (dcci) + 284
  // (its atomic add) + 64 (N - 1) (the adds before it) + 100 (dcci, dsb) + 284
  // (one poll) + 100 (dsb) = 1202 + 64 (N - 1) after the first arrival; the
  // sync-start blocks start 5 ns apart (one DATA_MAIN_BASE store each), so
  // after the last arrival: 1202 + 59 (N - 1), up to 16. The 48 go through
  // the drain, whose three threads stage 16 blocks each in parallel
  // (scheduler_cold_path.cpp stage_sync_start_cores): the last arrives 91 ns
  // after the first, 1202 + 64 x 47 - 91 = 4119.
  CHECK(soft == std::vector<double>{1261.0, 1615.0, 2087.0, 4119.0});
  CHECK(hard48 == "500.0");
}

namespace {
// The numbers in `svg` of elements whose text follows `class="KIND"`.
std::vector<double> tick_values(const std::string& svg, const std::string& kind) {
  std::vector<double> v;
  const std::string key = "class=\"" + kind + "\"";
  for (std::size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
    const std::size_t gt = svg.find('>', at);
    v.push_back(std::stod(svg.substr(gt + 1, svg.find('<', gt) - gt - 1)));
  }
  return v;
}

// Ticks 0, s, 2s, ... with s one of 1, 2, 5 times a power of ten.
bool round_ticks(const std::vector<double>& t) {
  if (t.size() < 2 || t[0] != 0) return false;
  const double s = t[1];
  double m = s;
  while (m >= 10) m /= 10;
  if (m != 1 && m != 2 && m != 5) return false;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i] != s * static_cast<double>(i)) return false;
  return true;
}

// The value of attribute `name` in the first element after `from`.
double attr(const std::string& svg, std::size_t from, const std::string& name) {
  const std::size_t at = svg.find(" " + name + "=\"", from) + name.size() + 3;
  return std::stod(svg.substr(at, svg.find('"', at) - at));
}
}  // namespace

TEST_CASE("barrier-cost plot: round ticks on both axes, one marker per series, legend clear of the data",
          "[barrier]") {
  const fs::path svg_file = cli::scratch("barrier.svg");
  cli::Result r = cli::npusim("barrier-cost --core-type aiv,aic --participants 16,24 --svg '" + svg_file.string() + "'");
  REQUIRE(r.status == 0);
  const std::string svg = cli::slurp(svg_file);
  const std::vector<double> y = tick_values(svg, "ytick"), x = tick_values(svg, "xtick");
  CHECK(round_ticks(y));
  CHECK(round_ticks(x));
  CHECK(x.back() >= 24);
  CHECK(x.size() <= 9);
  CHECK(y.size() <= 7);
  // Each series (type x SOFT/HARD) draws its own marker: shape and fill differ.
  std::set<std::string> looks;
  int series = 0;
  double data_right = 0;
  for (std::size_t at = svg.find("data-series=\""); at != std::string::npos; at = svg.find("data-series=\"", at + 1)) {
    const std::size_t end = svg.find("</g>", at);
    const std::size_t mk = svg.find('<', svg.find('>', at));
    if (mk >= end) continue;  // a series with no point (aiv HARD: no full launch)
    ++series;
    const std::string tag = svg.substr(mk + 1, svg.find(' ', mk) - mk - 1);
    const bool hollow = svg.find("fill=\"white\"", mk) < svg.find('>', mk);
    const std::string d = tag == "path" ? svg.substr(mk, svg.find('>', mk) - mk).substr(0, 40) : "";
    looks.insert(tag + (hollow ? " hollow" : " filled") + (tag == "path" ? std::to_string(std::count(d.begin(), d.end(), 'L')) : ""));
    for (std::size_t c = svg.find("cx=\"", at); c < end; c = svg.find("cx=\"", c + 1))
      data_right = std::max(data_right, attr(svg, c - 1, "cx"));
  }
  CHECK(series == 3);  // aiv SOFT, aic SOFT, aic HARD (24 is the full AIC count)
  CHECK(looks.size() == 3);
  const double legend_left = attr(svg, svg.find("<g class=\"legend\">"), "x");
  CHECK(data_right > 0);
  CHECK(legend_left > data_right + 10);
  CHECK(legend_left > attr(svg, svg.find("<g class=\"axes\""), "x2"));  // right of the plot area
}
