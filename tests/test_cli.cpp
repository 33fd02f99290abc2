// The command line end to end: runs the npusim binary on the example traces
// and on malformed inputs, and checks exit statuses, messages, output files,
// golden timing baselines and the dependency edges in the outputs.
#include "tests/catch.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kSrc = NPUSIM_SOURCE_DIR;
using cli::load;
using cli::Result;
using cli::scratch;
using cli::slurp;

// Example traces small enough for the test suite.
std::vector<std::string> examples() {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(kSrc + "/traces")) {
    std::string n = e.path().stem().string();
    if (e.path().extension() != ".json" || n.rfind("bench_", 0) == 0 || n == "paged_attention_case1") continue;
    v.push_back(n);
  }
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("malformed traces exit 2 with the file, the JSON path and the expectation", "[cli]") {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kSrc + "/tests/data/bad")) {
    if (e.path().extension() != ".json") continue;
    ++n;
    std::string rel = "tests/data/bad/" + e.path().filename().string();
    fs::path out = scratch("bad");
    Result r = cli::npusim("run " + rel + " --out '" + out.string() + "'");
    std::string expect = slurp(fs::path(e.path()).replace_extension(".expect"));
    INFO(rel);
    CHECK(r.status == 2);
    CHECK(r.err == "npusim: error: " + rel + ": " + expect);
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(out));  // no partial output
  }
  CHECK(n >= 16);
}

TEST_CASE("bad command-line options exit 2 and name the option", "[cli]") {
  Result r = cli::npusim("run traces/chain.json --ring-heap 1000 --out /dev/null/x");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: command line: at --ring-heap: ring_heap must be >= 1024 "
                 "(bytes per ring), got 1000\n");
  r = cli::npusim("run traces/chain.json --ring-task-window 4,4,4 --out /dev/null/x");
  CHECK(r.status == 2);
  CHECK(r.err.find("ring_task_window must have exactly 4 entries") != std::string::npos);
  r = cli::npusim("run traces/chain.json --platform nosuch");
  CHECK(r.status == 2);
  CHECK(r.err.find("nosuch") != std::string::npos);
  r = cli::npusim("run traces/nosuch.json");
  CHECK(r.status == 2);
  r = cli::npusim("frobnicate");
  CHECK(r.status == 2);
  // -1 is a value like any other, not "not given"; seeds cover 64 bits exactly.
  r = cli::npusim("run traces/chain.json --seed -1 --out /dev/null/x");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: command line: at --seed: seed must be a non-negative integer, got -1\n");
  r = cli::npusim("run traces/chain.json --seed 18446744073709551616 --out /dev/null/x");
  CHECK(r.status == 2);
  r = cli::npusim("run traces/chain.json --aicpu-thread-num -1 --out /dev/null/x");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: command line: at --aicpu-thread-num: aicpu_thread_num must be 0 (auto) or in "
                 "range [2, 4], got -1\n");
  r = cli::npusim("run traces/chain.json --aicpu-thread-num 3x --out /dev/null/x");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: command line: at --aicpu-thread-num: aicpu_thread_num must be 0 (auto) or an "
                 "integer >= 2, got 3x\n");
  // barrier-cost checks its options before it measures anything.
  r = cli::npusim("barrier-cost --core-type aiv,bogus");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "npusim: error: command line: at --core-type: expected aiv, aic or mix, got \"bogus\"\n");
  fs::path out = scratch("max_seed");
  r = cli::npusim("run traces/chain.json --quiet --seed 18446744073709551615 --out '" + out.string() + "'");
  REQUIRE(r.status == 0);
  CHECK(load(out / "summary.json")["run"]["seed"] == 18446744073709551615ull);
}

TEST_CASE("an empty or blank option value is exit 2 naming the option, never the default", "[cli][hardening]") {
  // Before, CLI11 took "" as not given: --out "" wrote into npusim_out/,
  // compare --tolerance "" compared at 0 %, --jobs "" ran one point at a time.
  const fs::path dir = scratch("blank_values");
  fs::create_directories(dir);
  const std::string csv = (dir / "s.csv").string();
  const std::pair<std::string, std::string> cases[] = {
      {"run traces/chain.json --out ''", "--out: expected an output directory"},
      {"run traces/chain.json --out ' '", "--out: expected an output directory"},
      {"run traces/chain.json --platform ''", "--platform: expected a platform name or file"},
      {"run traces/chain.json --seed ''", "--seed: expected a non-negative integer"},
      {"run traces/chain.json --max-tasks ''", "--max-tasks: expected a positive integer"},
      {"run traces/chain.json --max-output ''",
       "--max-output: expected a positive number of bytes (N, or N followed by K, M, G or T)"},
      {"run traces/chain.json --compress ''", "--compress: expected none, gzip or gzip:LEVEL with LEVEL 1..9"},
      {"run traces/chain.json --swimlane-level ''", "--swimlane-level: expected a chip swimlane level 0..4"},
      {"run traces/chain.json --ring-heap ''", "--ring-heap: expected N or N0,N1,N2,N3"},
      {"run traces/chain.json --runtime ''",
       "--runtime: expected \"tensormap_and_ringbuffer\" or \"host_build_graph\""},
      {"run ''", "TRACE: expected a trace or scene file (- = a trace on standard input)"},
      {"check traces/chain.json --platform '\t'", "--platform: expected a platform name or file"},
      {"record tests/data/scene/chain.json -o ''", "--output: expected the trace to write"},
      {"import tests/data/capture/chain -o " + (dir / "t.json").string() + " --name ''", "--name: expected a trace name"},
      {"compare traces/golden/chain.summary.json traces/golden/chain.summary.json --tolerance ''",
       "--tolerance: expected a percentage >= 0"},
      {"compare traces/golden/chain.summary.json traces/golden/chain.summary.json --tolerance-for ''",
       "--tolerance-for: expected NAME=PCT"},
      {"scope-stats tests/data/scope_stats/nested.jsonl --svg ''", "--svg: expected an SVG file to write"},
      {"report " + dir.string() + " -o ''", "--output: expected the page to write"},
      {"barrier-cost --participants ''", "--participants: expected positive integers"},
      {"barrier-cost --core-type ''", "--core-type: expected aiv, aic or mix"},
      {"worker tests/data/worker/seed_example.json --out ''", "--out: expected an output directory"},
      {"sweep traces/chain.json --grid seed=1 --csv '' ", "--csv: expected a CSV file to write"},
      {"sweep traces/chain.json --grid seed=1 --csv " + csv + " --jobs ''",
       "--jobs: expected a number of points run at once"},
      {"sweep traces/chain.json --grid seed=1 --csv " + csv + " --scheduler ''",
       "--scheduler: expected a Dask distributed scheduler (tcp://HOST:PORT)"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    const Result r = cli::npusim(args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(cli::has(r.err, "npusim: error: command line: at " + message + ", got \""));
  }
  CHECK(cli::npusim("run traces/chain.json --out ''").err ==
        "npusim: error: command line: at --out: expected an output directory, got \"\"\n");
  CHECK(fs::is_empty(dir));
}

TEST_CASE("every example runs with status ok, writes every output and matches its golden timing", "[cli]") {
  for (const std::string& name : examples()) {
    INFO(name);
    fs::path out = scratch(name);
    Result r = cli::npusim("run traces/" + name + ".json --out '" + out.string() + "'");
    REQUIRE(r.status == 0);
    for (const char* f : {"summary.json", "chip_swimlane_records.json", "merged_swimlane.json", "deps.json"})
      CHECK(fs::exists(out / f));
    CHECK(fs::exists(out / ("name_map_" + name + ".json")));
    json s = load(out / "summary.json");
    // scope_stats exists for the tensormap_and_ringbuffer runtime only.
    CHECK(fs::exists(out / "scope_stats/scope_stats.jsonl") == (s["run"]["runtime"] == "tensormap_and_ringbuffer"));
    json g = load(kSrc + "/traces/golden/" + name + ".summary.json");
    CHECK(s["status"] == "ok");
    for (const char* k : {"device_wall_ns", "makespan_ns", "scheduling_window_ns", "tasks", "run"})
      CHECK(s[k] == g[k]);
    // `npusim compare` agrees.
    Result c = cli::npusim("compare traces/golden/" + name + ".summary.json '" + (out / "summary.json").string() + "'");
    CHECK(c.status == 0);
  }
}

TEST_CASE("no task starts before its producers complete, on every example", "[cli]") {
  // Per trace, the edges of deps.json between two tasks that both ran on a
  // core (checked here), and those with an end that never did: an
  // alloc_tensors producer (completed inline) or a task whose predicate was
  // false (retired through the dummy queue). Recorded from runs: only the
  // dependency rules and dep_gen replay's (one creator edge per producer,
  // edges to retired producers kept) change them, and a new example needs its
  // line. By hand:
  // chain, 8 tasks in a row: 7; fanout_fanin: 16 creator edges out of
  // PRODUCE, 16 tensormap edges into REDUCE; gated_0: both explicit edges
  // touch BUMP, whose predicate (gate > 0) is false; war: w1 -> r, w1 -> w2.
  struct Edges {
    int checked, off_core;
  };
  const std::map<std::string, Edges> expected = {
      {"traces/bgemm_case0.json", {750, 0}},
      {"traces/cache_bypass.json", {0, 0}},
      {"traces/chain.json", {7, 0}},
      {"traces/cube_then_vector.json", {1, 0}},
      {"traces/early_resolve.json", {15, 0}},
      {"traces/early_resolve_off.json", {15, 0}},
      {"traces/fanout_fanin.json", {32, 0}},
      {"traces/gated_0.json", {0, 2}},
      {"traces/gated_1.json", {2, 0}},
      {"traces/manual_placement.json", {4, 0}},
      {"traces/mix.json", {2, 0}},
      {"traces/mix_pipeline.json", {0, 0}},
      {"traces/mix_pipeline_1slot.json", {0, 0}},
      {"traces/mix_pipe_both.json", {0, 0}},
      {"traces/mix_three_pipes.json", {0, 0}},
      {"traces/pa_10k.json", {19812, 2496}},
      {"traces/pa_unroll_case1.json", {1024, 0}},
      {"traces/per_block_tasks.json", {0, 0}},
      {"traces/qwen3_decode.json", {17522, 6001}},
      {"traces/rings_auto_scopes.json", {4, 0}},
      {"traces/rings_deep_nest.json", {316, 0}},
      {"traces/rings_long_lived.json", {326, 68}},
      {"traces/rings_scaled.json", {0, 0}},
      {"traces/rings_streaming.json", {318, 0}},
      {"traces/spmd.json", {2, 0}},
      {"traces/spmd_blocks.json", {0, 0}},
      {"tests/data/cli/war.json", {2, 0}},
      {"tests/data/cli/explicit.json", {1, 0}},
  };
  std::vector<std::string> traces;
  for (const std::string& n : examples()) traces.push_back("traces/" + n + ".json");
  traces.push_back("tests/data/cli/war.json");
  traces.push_back("tests/data/cli/explicit.json");
  for (const std::string& t : traces) {
    INFO(t);
    fs::path out = scratch("edges");
    REQUIRE(cli::npusim("run " + t + " --out '" + out.string() + "'").status == 0);
    json deps = load(out / "deps.json");
    cli::TaskTimes times = cli::task_times(load(out / "chip_swimlane_records.json"));
    int checked = 0, off_core = 0;
    for (const auto& e : deps["edges"]) {
      std::string pred = e["pred"], succ = e["succ"];
      if (!times.finish.count(pred) || !times.start.count(succ)) {
        ++off_core;
        continue;
      }
      CHECK(times.start[succ] > times.finish[pred]);
      ++checked;
    }
    INFO("actual: {\"" << t << "\", {" << checked << ", " << off_core << "}},");
    REQUIRE(expected.count(t));
    CHECK(checked == expected.at(t).checked);
    CHECK(off_core == expected.at(t).off_core);
  }
}

TEST_CASE("deps.json names each edge's source: creator, tensormap, explicit", "[cli]") {
  auto edges_of = [](const std::string& trace) {
    fs::path out = scratch("deps");
    REQUIRE(cli::npusim("run " + trace + " --out '" + out.string() + "'").status == 0);
    json d = load(out / "deps.json");
    std::multiset<std::tuple<std::string, std::string, std::string>> es;
    for (const auto& e : d["edges"])
      es.insert({e["pred"].get<std::string>(), e["succ"].get<std::string>(), e["source"].get<std::string>()});
    return std::make_pair(d, es);
  };
  SECTION("fan-out by creator edges, fan-in by tensormap edges") {
    auto [d, es] = edges_of("traces/fanout_fanin.json");
    int creator = 0, tensormap = 0;
    for (const auto& [p, s, src] : es) {
      if (src == "creator") ++creator;
      if (src == "tensormap") ++tensormap;
    }
    CHECK(creator == 16);    // PRODUCE -> each WORK through `a`
    CHECK(tensormap == 16);  // each WORK's write of `parts` -> REDUCE
    CHECK(d["tasks"].size() == 18);
  }
  SECTION("an INPUT reader creates no WAR edge") {
    auto [d, es] = edges_of("tests/data/cli/war.json");
    const std::string w1 = d["tasks"][0]["task_id"], r = d["tasks"][1]["task_id"], w2 = d["tasks"][2]["task_id"];
    CHECK(es.size() == 2);
    CHECK(es.count({w1, r, "tensormap"}) == 1);
    CHECK(es.count({w1, w2, "tensormap"}) == 1);
    CHECK(es.count({r, w2, "tensormap"}) == 0);
  }
  SECTION("a manual scope keeps only explicit edges") {
    auto [d, es] = edges_of("tests/data/cli/explicit.json");
    const std::string a = d["tasks"][0]["task_id"], b = d["tasks"][1]["task_id"];
    CHECK(es.size() == 1);
    CHECK(es.count({a, b, "explicit"}) == 1);
    CHECK(d["tasks"][0]["scope"] == "manual");
  }
}

TEST_CASE("a 10000-task trace finishes with status ok", "[cli]") {
  fs::path out = scratch("pa10k");
  Result r = cli::npusim("run traces/pa_10k.json --out '" + out.string() + "' --quiet");
  REQUIRE(r.status == 0);
  json s = load(out / "summary.json");
  CHECK(s["status"] == "ok");
  CHECK(s["tasks"]["submitted"] == 10023);
  CHECK(s["tasks"]["completed"] == 10023);
  CHECK(s["tasks"]["alloc"] == 39);
}

TEST_CASE("the qwen3 decode reproduces the example's task and block counts", "[cli]") {
  fs::path out = scratch("qwen3");
  Result r = cli::npusim("run traces/qwen3_decode.json --out '" + out.string() + "' --quiet --swimlane-level 0 --no-deps");
  REQUIRE(r.status == 0);
  json s = load(out / "summary.json");
  CHECK(s["status"] == "ok");
  // 11,085 tasks without the allocs (40 x 277 + 5), 11,166 submissions with them.
  CHECK(s["tasks"]["submitted"] == 11166);
  CHECK(s["tasks"]["alloc"] == 81);
  CHECK(s["tasks"]["dummy"] == 40 * 12 + 1);
  // Block executions: 15,960 cube and 3,248 vector starts, as on silicon
  // (a MIX block is one AIC and two AIV starts).
  json t = load(kSrc + "/traces/qwen3_decode.json");
  long cube = 0, vector = 0;
  for (auto& [name, k] : s["kernels"].items()) {
    const long blocks = k["blocks"].get<long>();
    const std::string core = t["kernels"][name]["core"];
    cube += core == "aiv" ? 0 : blocks;
    vector += core == "aic" ? 0 : core == "mix" ? 2 * blocks : blocks;
  }
  CHECK(cube == 15960);
  CHECK(vector == 3248);
  CHECK(s["kernels"]["attention"]["tasks"] == 40);
}

TEST_CASE("host_build_graph: a resolution thread, all_schedule as an option, orchestration costs nothing", "[cli]") {
  fs::path a = scratch("hbg"), b = scratch("trb"), c = scratch("hbg_all");
  REQUIRE(cli::npusim("run traces/fanout_fanin.json --runtime host_build_graph --out '" + a.string() + "'").status == 0);
  REQUIRE(cli::npusim("run traces/fanout_fanin.json --out '" + b.string() + "'").status == 0);
  REQUIRE(cli::npusim("run traces/fanout_fanin.json --runtime host_build_graph --hbg-layout all_schedule --out '" +
                 c.string() + "'").status == 0);
  json sa = load(a / "summary.json"), sb = load(b / "summary.json"), sc = load(c / "summary.json");
  CHECK(sa["run"]["hbg_layout"] == "resolution_thread");
  CHECK(sa["run"]["sched_threads"] == 3);
  CHECK(sb["run"]["sched_threads"] == 3);
  CHECK_FALSE(sb["run"].contains("hbg_layout"));
  CHECK(sc["run"]["hbg_layout"] == "all_schedule");
  CHECK(sc["run"]["sched_threads"] == 4);
  Result bad = cli::npusim("run traces/fanout_fanin.json --runtime host_build_graph --hbg-layout 3s1p --out /dev/null/x");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--hbg-layout: hbg_layout must be \"resolution_thread\" or \"all_schedule\", got 3s1p") !=
        std::string::npos);
  CHECK(sa["device_wall_ns"].get<double>() < sb["device_wall_ns"].get<double>());
  CHECK_FALSE(fs::exists(a / "scope_stats"));  // scope_stats is T&R only
  json sw = load(a / "chip_swimlane_records.json");
  CHECK(sw["aicpu_orchestrator_phases"].is_null());
  // No release phase in host_build_graph, in either layout: no
  // on_task_release under polling and no deferred producer release
  // (scheduler_completion.cpp, before and after the resolution thread); the
  // tensormap runtime releases in its idle iterations.
  auto releases = [](const json& records) {
    int n = 0;
    for (const json& thread : records["aicpu_scheduler_phases"])
      for (const json& r : thread) n += r["kind"] == "release";
    return n;
  };
  CHECK(releases(sw) == 0);
  CHECK(releases(load(c / "chip_swimlane_records.json")) == 0);
  CHECK(releases(load(b / "chip_swimlane_records.json")) > 0);
}

TEST_CASE("the same run twice gives byte-identical outputs", "[cli]") {
  // Traces that exercise SPMD, MIX pipelines, predicates, early resolve,
  // sync-start drains and barriers.
  for (const char* t : {"traces/fanout_fanin.json", "traces/spmd.json", "traces/mix_pipeline.json",
                        "traces/gated_0.json", "traces/early_resolve.json", "traces/barriers/hard_full_48.json"}) {
    INFO(t);
    fs::path a = scratch("det_a"), b = scratch("det_b");
    for (const auto& d : {a, b})
      REQUIRE(cli::npusim(std::string("run ") + t + " --no-host-stats --swimlane-level 4 --out '" + d.string() + "'").status == 0);
    int files = 0;
    for (const auto& e : fs::recursive_directory_iterator(a)) {
      if (!e.is_regular_file()) continue;
      ++files;
      fs::path rel = fs::relative(e.path(), a);
      INFO(rel.string());
      CHECK(slurp(e.path()) == slurp(b / rel));
    }
    CHECK(files >= 7);
  }
}

TEST_CASE("summary.json's host measurements (wall, rate, peak memory, SystemC rounds) and --no-host-stats without them", "[cli]") {
  cli::RunResult a = cli::run_summary("traces/fanout_fanin.json --quiet", "host_a");
  cli::RunResult b = cli::run_summary("traces/fanout_fanin.json --quiet", "host_b");
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  const json& s = a.summary["sim"];
  CHECK(s["wall_seconds"].get<double>() > 0);
  CHECK(s["tasks_per_second"].get<double>() > 0);
  CHECK(s["peak_rss_mb"].get<double>() > 0);
  // The kernel's evaluation rounds: a count of the model's kernel waits, not
  // a host measurement that varies: the same run gives the same count
  // (tools/bench.sh multiplies it by npusim-floor-sc's cost of one wait).
  // This program's kernels are compute only, so the AICPU clock runs ahead
  // of the kernel throughout: the start and the final catch-up, 2 rounds
  // (tests/test_aicpu_clock.cpp).
  const std::uint64_t rounds = s["systemc_deltas"].get<std::uint64_t>();
  CHECK(rounds == 2);
  CHECK(rounds == b.summary["sim"]["systemc_deltas"].get<std::uint64_t>());
  cli::RunResult c = cli::run_summary("traces/fanout_fanin.json --quiet --no-host-stats", "host_c");
  REQUIRE(c.status == 0);
  CHECK(c.summary["sim"] == json{{"seed", 0}});
}

TEST_CASE("a different seed changes sampled durations only", "[cli]") {
  fs::path a = scratch("seed_1"), b = scratch("seed_2");
  REQUIRE(cli::npusim("run traces/fanout_fanin.json --no-host-stats --seed 1 --out '" + a.string() + "'").status == 0);
  REQUIRE(cli::npusim("run traces/fanout_fanin.json --no-host-stats --seed 2 --out '" + b.string() + "'").status == 0);
  // The graph is the same.
  CHECK(slurp(a / "deps.json") == slurp(b / "deps.json"));
  // Kernel durations: PRODUCE and REDUCE are fixed, WORK is sampled (mean/sigma).
  auto durations = [](const fs::path& dir) {
    std::map<std::string, std::vector<std::int64_t>> by_kernel;
    json names = load(dir / "name_map_fanout_fanin.json")["callable_id_to_name"];
    json deps = load(dir / "deps.json");
    std::map<std::string, std::string> kernel_of;  // task id -> kernel name
    for (const auto& t : deps["tasks"]) {
      int fid = -1;
      for (const auto& k : t["kernel_ids"])
        if (k.get<int>() >= 0) fid = k.get<int>();
      kernel_of[t["task_id"].get<std::string>()] = names[std::to_string(fid)].get<std::string>();
    }
    const json sw = load(dir / "chip_swimlane_records.json");  // kept: the loop refers into it
    for (const auto& r : sw["aicore_tasks"])
      by_kernel[kernel_of[std::to_string(r[1].get<std::uint64_t>())]].push_back(r[4].get<std::int64_t>() - r[3].get<std::int64_t>());
    return by_kernel;
  };
  auto da = durations(a), db = durations(b);
  CHECK(da["PRODUCE"] == db["PRODUCE"]);
  CHECK(da["REDUCE"] == db["REDUCE"]);
  CHECK(da["WORK"].size() == 16);
  CHECK(da["WORK"] != db["WORK"]);
}

TEST_CASE("a 100000-task run with scope_stats on loses no records", "[cli]") {
  fs::path out = scratch("ss100k");
  REQUIRE(cli::npusim("run traces/bench_pa_100k.json --quiet --swimlane-level 0 --no-deps --no-task-stats --out '" +
                 out.string() + "'").status == 0);
  std::ifstream in(out / "scope_stats/scope_stats.jsonl");
  std::string line;
  REQUIRE(std::getline(in, line));
  json meta = json::parse(line);
  std::uint64_t records = 0;
  while (std::getline(in, line)) ++records;
  CHECK(meta["dropped"] == 0);
  CHECK(meta["fatal"] == false);
  CHECK(meta["total"] == records);
  // A begin and an end for the root scope, 390 batch scopes and 390 x 64 block scopes.
  CHECK(records == 2 * (1 + 390 + 390 * 64));
}

TEST_CASE("a kernel phase that leaves its argument's view is reported once", "[cli]") {
  fs::path out;
  Result r = cli::run("tests/data/cli/out_of_view.json --quiet", "oov", out);
  CHECK(r.status == 0);
  CHECK(r.err == "npusim: warning: phase_out_of_view: phase /kernels/K/body/0 of kernel K (task t0 block 0) "
                 "touches bytes [0, 8192) of argument 0, whose view has 4096 bytes\n");
  json s = load(out / "summary.json");
  CHECK(s["warnings"]["by_kind"]["phase_out_of_view"] == 1);
}
