// npusim worker (docs/workers.md): the single-slot arena cache of seed page
// 003 ("Arena prewarm and the single-slot cache"), the worker file's
// validation, and worker_summary.json. The cache key is the runtime's: the
// resolved task_window / heap / dep_pool of every ring (simpler
// src/a2a3/runtime/tensormap_and_ringbuffer/host/runtime_maker.cpp,
// make_prebuilt_runtime_arena_cache_probe), one slot overwritten by every
// build (build_and_cache_prebuilt_arena).
#include "tests/catch.h"

#include <sstream>

#include "models/runtime/arena_cache.h"
#include "tests/cli_support.h"

using cli::has;
using cli::json;
namespace fs = std::filesystem;

namespace {

npusim::ArenaKey window(std::uint64_t w0, std::uint64_t w1, std::uint64_t w2, std::uint64_t w3) {
  npusim::ArenaKey k;
  k.task_window = {w0, w1, w2, w3};
  k.heap = {1024, 1024, 1024, 1024};
  k.dep_pool = {16, 16, 16, 16};
  return k;
}

struct WorkerRun {
  cli::Result r;
  fs::path out;
  json summary;
};

WorkerRun worker(const std::string& file, const std::string& name) {
  WorkerRun w;
  w.out = cli::scratch(name);
  w.r = cli::npusim("worker tests/data/worker/" + file + " --out '" + w.out.string() + "'");
  if (fs::exists(w.out / "worker_summary.json")) w.summary = cli::load(w.out / "worker_summary.json");
  return w;
}

std::vector<std::string> arenas(const json& s) {
  std::vector<std::string> v;
  for (const json& d : s["dispatches"]) v.push_back(d["arena"]);
  return v;
}

bool has_advice(const json& s, const std::string& kind) {
  for (const json& a : s["advice"])
    if (a["kind"] == kind) return true;
  return false;
}

}  // namespace

TEST_CASE("arena slot: prewarm, hit, miss overwrites the one slot", "[worker]") {
  npusim::ArenaSlot slot;
  slot.prewarm(window(256, 256, 256, 256));
  CHECK(slot.use(window(256, 256, 256, 256)) == npusim::ArenaOutcome::Prewarmed);
  CHECK(slot.use(window(256, 256, 256, 256)) == npusim::ArenaOutcome::Hit);
  CHECK(slot.use(window(64, 64, 64, 64)) == npusim::ArenaOutcome::Miss);
  // The slot holds one vector: going back to the first one rebuilds.
  CHECK(slot.use(window(256, 256, 256, 256)) == npusim::ArenaOutcome::Miss);
  CHECK(slot.builds() == 3);
  // A per-ring list is one key: rings differing in one entry are another key.
  CHECK(slot.use(window(256, 256, 256, 128)) == npusim::ArenaOutcome::Miss);
  CHECK(slot.use(window(256, 256, 256, 128)) == npusim::ArenaOutcome::Hit);
}

TEST_CASE("arena slot: a prewarm the first dispatch does not use is wasted", "[worker]") {
  npusim::ArenaSlot slot;
  slot.prewarm(window(256, 256, 256, 256));
  CHECK(slot.use(window(64, 64, 64, 64)) == npusim::ArenaOutcome::Miss);
  CHECK(slot.use(window(256, 256, 256, 256)) == npusim::ArenaOutcome::Miss);  // overwritten: no longer there
}

TEST_CASE("worker: the seed's example: prepare with prefill, the decode dispatch misses and rebuilds", "[worker][cli]") {
  WorkerRun w = worker("seed_example.json", "w_seed");
  REQUIRE(w.r.status == 0);
  const json& s = w.summary;
  CHECK(s["npusim_worker_summary"] == 1);
  CHECK(s["prepare"]["source"] == "prepare");
  CHECK(s["prepare"]["sizes"]["ring_task_window"] == json({256, 256, 256, 256}));
  CHECK(arenas(s) == std::vector<std::string>{"prewarmed", "miss"});
  const json& prefill = s["dispatches"][0];
  const json& decode = s["dispatches"][1];
  CHECK(prefill["arena_build_ns"] == 0);
  CHECK(decode["arena_build_ns"] == 800000000);  // platform limits.arena_build_ns (seed: ~800 ms)
  CHECK(decode["repeat"] == 3);
  CHECK(decode["repeat_arena"] == "hit");        // later decode steps find the arena the first one built
  CHECK(decode["sizes"]["ring_task_window"] == json({64, 64, 64, 64}));
  // Each dispatch (L3, one chip) is an npusim run with its own outputs; its
  // time is the chip's plus the host's L3 dispatch (interconnect.host_dispatch_ns, 43300 on a2a3).
  const json run0 = cli::load(w.out / "dispatch_0" / "chip_0" / "summary.json");
  const json run1 = cli::load(w.out / "dispatch_1" / "chip_0" / "summary.json");
  CHECK(run0["run"]["ring_task_window"] == json({256, 256, 256, 256}));
  CHECK(run1["run"]["ring_task_window"] == json({64, 64, 64, 64}));
  const std::uint64_t wall0 = run0["device_wall_ns"].get<std::uint64_t>() + 43300,
                      wall1 = run1["device_wall_ns"].get<std::uint64_t>() + 43300;
  CHECK(prefill["host_dispatch_ns"] == 43300);
  CHECK(prefill["device_wall_ns"] == wall0);
  CHECK(decode["device_wall_ns"] == wall1);
  CHECK(decode["device_wall_total_ns"] == 3 * wall1);
  CHECK(s["totals"]["arena_builds"] == 1);
  CHECK(s["totals"]["host_visible_ns"] == 800000000 + wall0 + 3 * wall1);
  // The one size that serves both: the per-ring maximum (the prefill window).
  REQUIRE(has_advice(s, "one_size"));
  CHECK_FALSE(has_advice(s, "prewarm_first"));
  CHECK(has(w.r.out, "dispatch 1 x3: arena miss (build 800 ms)"));
  // Only ring_* apply on L3; the seed example's config has nothing else.
  CHECK(s["warnings"].empty());
}

TEST_CASE("worker: alternating sizes rebuild on every switch, a list and its scalar being one key", "[worker][cli]") {
  WorkerRun w = worker("alternating.json", "w_alt");
  REQUIRE(w.r.status == 0);
  const json& s = w.summary;
  // L2 with no prepare prewarms the runtime's defaults (16384 slots), which
  // the first dispatch does not use: wasted, and every switch rebuilds.
  CHECK(s["prepare"]["source"] == "runtime_defaults");
  CHECK(arenas(s) == std::vector<std::string>{"miss", "miss", "miss", "miss"});
  CHECK(s["totals"]["arena_builds"] == 4);
  CHECK(s["totals"]["arena_build_ns"] == 3200000000ull);
  REQUIRE(has_advice(s, "alternating_sizes"));
  for (const json& a : s["advice"])
    if (a["kind"] == "alternating_sizes") CHECK(a["rebuilds"] == 2);  // 128 (as a list) and 64 (as a scalar) again
  CHECK(has_advice(s, "prewarm_first"));
  for (const json& a : s["advice"])
    if (a["kind"] == "one_size") CHECK(a["sizes"]["ring_task_window"] == json({128, 128, 128, 128}));
}

TEST_CASE("worker: a per-ring list prepared is one key, an explicit default the same key", "[worker][cli]") {
  WorkerRun w = worker("list_key.json", "w_list");
  REQUIRE(w.r.status == 0);
  const json& s = w.summary;
  CHECK(s["prepare"]["sizes"]["ring_task_window"] == json({256, 128, 64, 16384}));
  CHECK(arenas(s) == std::vector<std::string>{"prewarmed", "hit", "miss"});
  CHECK(s["dispatches"][0]["repeat_arena"] == "hit");
  CHECK(s["totals"]["arena_builds"] == 1);
}

TEST_CASE("worker: a distributed dispatch applies only ring_* fields, the others warned", "[worker][cli]") {
  fs::path dir = cli::scratch("w_l3_in");
  fs::create_directories(dir);
  fs::copy_file(fs::path(NPUSIM_SOURCE_DIR) / "traces/chain.json", dir / "chain.json");
  std::ofstream(dir / "w.json") << R"({"npusim_worker": 1, "worker": {"kind": "distributed", "chips": 2},
    "prepare": {"ring_task_window": 64, "seed": 3},
    "dispatches": [{"trace": "chain.json", "config": {"ring_task_window": 64, "aicpu_thread_num": 2, "seed": 7}}]})";
  fs::path out = cli::scratch("w_l3");
  cli::Result r = cli::npusim("worker '" + (dir / "w.json").string() + "' --out '" + out.string() + "'");
  REQUIRE(r.status == 0);
  CHECK(has(r.err, "w.json: at /dispatches/0/config/aicpu_thread_num: ignored: a distributed (L3) dispatch applies "
                   "only the ring_* fields"));
  CHECK(has(r.err, "at /dispatches/0/config/seed: ignored"));
  CHECK(has(r.err, "at /prepare/seed: ignored"));
  const json run = cli::load(out / "dispatch_0" / "chip_0" / "summary.json");
  CHECK(run["run"]["aicpu_thread_num"] == 4);  // not 2: ignored on L3
  CHECK(run["run"]["seed"] == 0);
  CHECK(run["run"]["ring_task_window"] == json({64, 64, 64, 64}));
  const json s = cli::load(out / "worker_summary.json");
  CHECK(s["worker"]["chips"] == 2);
  CHECK(s["dispatches"][0]["arena"] == "prewarmed");
  CHECK(s["warnings"].size() == 3);
}

TEST_CASE("worker: bad worker files exit 2 naming the file and JSON pointer, nothing written", "[worker][cli]") {
  fs::path dir = cli::scratch("w_bad_in");
  fs::create_directories(dir);
  fs::copy_file(fs::path(NPUSIM_SOURCE_DIR) / "traces/chain.json", dir / "chain.json");
  const std::string head = R"({"npusim_worker": 1, "worker": {"kind": "chip"}, )";
  struct Case {
    std::string text, expected;
  } cases[] = {
      {R"({"npusim_worker": 2, "worker": {"kind": "chip"}, "dispatches": []})",
       "at /npusim_worker: expected \"npusim_worker\": 1"},
      {R"({"npusim_worker": 1, "worker": {"kind": "gpu"}, "dispatches": [{"trace": "chain.json"}]})",
       "at /worker/kind: expected \"chip\""},
      {R"({"npusim_worker": 1, "worker": {"kind": "chip", "chips": 2}, "dispatches": [{"trace": "chain.json"}]})",
       "at /worker/chips: a chip worker drives one chip"},
      {R"({"npusim_worker": 1, "worker": {"kind": "chip", "aicpu_thread_num": 9}, "dispatches": [{"trace": "chain.json"}]})",
       "at /worker/aicpu_thread_num: aicpu_thread_num must be 0 (auto) or in range [2, 4], got 9"},
      {head + R"("dispatches": []})", "at /dispatches: expected a non-empty list of dispatches"},
      {head + R"("dispatches": [{"trace": "nope.json"}]})", "at /dispatches/0/trace: no file \"nope.json\""},
      {head + R"("dispatches": [{"trace": "chain.json", "scene": "chain.json"}]})",
       "at /dispatches/0: expected exactly one of \"trace\" and \"scene\""},
      {head + R"("dispatches": [{"trace": "chain.json", "config": {"ring_heap": 1000}}]})",
       "at /dispatches/0/config/ring_heap: ring_heap must be >= 1024 (bytes per ring), got 1000"},
      {head + R"("prepare": {"ring_task_window": 3}, "dispatches": [{"trace": "chain.json"}]})",
       "at /prepare/ring_task_window: ring_task_window must be a power of 2 >= 4"},
      {head + R"("dispatches": [{"trace": "chain.json", "repeat": 0}]})",
       "at /dispatches/0/repeat: expected an integer in [1, 1000000000], got 0"},
      {head + R"("dispatches": [{"trace": "chain.json", "repaet": 2}]})",
       "at /dispatches/0/repaet: unknown key \"repaet\""},
  };
  int i = 0;
  for (const Case& c : cases) {
    INFO(c.text);
    const fs::path file = dir / ("w" + std::to_string(i++) + ".json");
    std::ofstream(file) << c.text;
    const fs::path out = cli::scratch("w_bad_out");
    cli::Result r = cli::npusim("worker '" + file.string() + "' --out '" + out.string() + "'");
    CHECK(r.status == 2);
    CHECK(has(r.err, "npusim: error: " + file.string() + ": " + c.expected));
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("worker: a dispatch whose trace is invalid leaves nothing written", "[worker][cli]") {
  fs::path dir = cli::scratch("w_badtrace_in");
  fs::create_directories(dir);
  fs::copy_file(fs::path(NPUSIM_SOURCE_DIR) / "traces/chain.json", dir / "chain.json");
  std::ofstream(dir / "bad.json") << R"({"npusim_trace": 1, "name": "bad", "kernels": {}, "program": [{"op": "nope"}]})";
  std::ofstream(dir / "w.json") << R"({"npusim_worker": 1, "worker": {"kind": "chip"},
    "dispatches": [{"trace": "chain.json"}, {"trace": "bad.json"}]})";
  fs::path out = cli::scratch("w_badtrace");
  cli::Result r = cli::npusim("worker '" + (dir / "w.json").string() + "' --out '" + out.string() + "'");
  CHECK(r.status == 2);
  CHECK(has(r.err, "bad.json: at /program/0"));
  CHECK_FALSE(fs::exists(out));
}

namespace {

// The first line of a chip's scope_stats.jsonl: the run's metadata.
json scope_stats_meta(const fs::path& chip) {
  std::istringstream in(cli::slurp(chip / "scope_stats" / "scope_stats.jsonl"));
  std::string line;
  std::getline(in, line);
  return json::parse(line);
}

}  // namespace

TEST_CASE("worker: an L3 dispatch runs every chip in one simulation with the dispatch's rings", "[worker][cli]") {
  // chips 2, one trace per chip: chip 0 runs traces/chain.json, chip 1 the
  // two-task trace of tests/data/worker (a smaller program). On tiny, chain
  // with a 64-slot window runs 29700 ns (test_sweep.cpp, "the same point by
  // hand"); the chips share nothing yet (no peer phases), so each chip's
  // device time is its own run's, and the dispatch's is the slowest chip's
  // plus interconnect.host_dispatch_ns (tiny: 1000): 29700 + 1000 = 30700.
  const fs::path out = cli::scratch("w_l3_chips");
  const cli::Result r =
      cli::npusim("worker tests/data/worker/l3_two_chips.json --platform tiny --out '" + out.string() + "'");
  REQUIRE(r.status == 0);
  const json s = cli::load(out / "worker_summary.json");
  CHECK(s["worker"]["chips_simulated"] == 2);
  const json& d = s["dispatches"][0];
  CHECK(d["chip_device_wall_ns"][0] == 29700);
  CHECK(d["host_dispatch_ns"] == 1000);
  CHECK(d["device_wall_ns"] == 30700);
  CHECK(d["device_wall_total_ns"] == 30700);
  // The chip 1 program alone, as npusim run sees it, takes what chip 1 took.
  fs::path one;
  REQUIRE(cli::run("tests/data/worker/two_tasks.json --platform tiny --ring-task-window 64 -q", "w_l3_one", one).status == 0);
  CHECK(d["chip_device_wall_ns"][1] == cli::load(one / "summary.json")["device_wall_ns"]);
  CHECK(d["chip_device_wall_ns"][1] < d["chip_device_wall_ns"][0]);
  // The ring overrides apply to every chip: each chip's scope_stats says so.
  for (const char* chip : {"chip_0", "chip_1"}) {
    INFO(chip);
    const json meta = scope_stats_meta(out / "dispatch_0" / chip);
    CHECK(meta["task_window_max"] == json({64, 64, 64, 64}));
    CHECK(meta["heap_max"] == json({524288, 524288, 524288, 524288}));
    CHECK(cli::load(out / "dispatch_0" / chip / "summary.json")["run"]["ring_heap"] ==
          json({524288, 524288, 524288, 524288}));
  }
}

TEST_CASE("worker: an L3 dispatch's chips are checked against the platform's node", "[worker][cli]") {
  fs::path dir = cli::scratch("w_l3_big_in");
  fs::create_directories(dir);
  fs::copy_file(fs::path(NPUSIM_SOURCE_DIR) / "traces/chain.json", dir / "chain.json");
  std::ofstream(dir / "w.json") << R"({"npusim_worker": 1, "worker": {"kind": "distributed", "chips": 9},
    "dispatches": [{"trace": "chain.json"}]})";
  std::ofstream(dir / "w2.json") << R"({"npusim_worker": 1, "worker": {"kind": "distributed", "chips": 2},
    "dispatches": [{"trace": ["chain.json"]}]})";
  const fs::path out = cli::scratch("w_l3_big");
  cli::Result r = cli::npusim("worker '" + (dir / "w.json").string() + "' --out '" + out.string() + "'");
  CHECK(r.status == 2);
  CHECK(has(r.err, "w.json: at /worker/chips: expected at most 8 chips: the platform's interconnect joins that many "
                   "in one node (interconnect.chips_per_node), got 9"));
  r = cli::npusim("worker '" + (dir / "w2.json").string() + "' --out '" + out.string() + "'");
  CHECK(r.status == 2);
  CHECK(has(r.err, "w2.json: at /dispatches/0/trace: expected one trace per chip: a list of 2 (worker.chips)"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("worker: a second run into the worker's own output folder replaces it, and a foreign file deep in it is refused",
          "[worker][cli]") {
  // Before: the manifest kept only entries of one or two components and the
  // check read one subfolder deep, so dispatch_0/chip_0 (L3) and
  // dispatch_0/scope_stats (chip worker) were "not written by npusim": every
  // rerun into the same --out exited 2.
  for (const char* file : {"seed_example.json", "alternating.json"}) {
    CAPTURE(file);
    WorkerRun first = worker(file, "w_again");
    REQUIRE(first.r.status == 0);
    const cli::Result again =
        cli::npusim(std::string("worker tests/data/worker/") + file + " --out '" + first.out.string() + "' -q");
    CHECK(again.status == 0);
    CHECK(again.err.empty());
    CHECK(fs::exists(first.out / "worker_summary.json"));
    // The current folder is filled in place (it cannot be swapped): the same.
    const fs::path here = first.out;
    const cli::Result in_place = cli::npusim_in(here, std::string("worker '") + NPUSIM_SOURCE_DIR +
                                                          "/tests/data/worker/" + file + "' --out . -q");
    CHECK(in_place.status == 0);
    CHECK(in_place.err.empty());
    CHECK(fs::exists(here / "dispatch_0" / ".npusim_outputs"));
    // A file npusim did not write, however deep in a folder it did, is still refused.
    const fs::path deep = first.out / "dispatch_0" / (std::string(file) == "seed_example.json" ? "chip_0" : "scope_stats");
    std::ofstream(deep / "mine.txt") << "x";
    const cli::Result refused =
        cli::npusim(std::string("worker tests/data/worker/") + file + " --out '" + first.out.string() + "' -q");
    CHECK(refused.status == 2);
    CHECK(has(refused.err, "mine.txt\", which npusim did not write"));
    CHECK(fs::exists(deep / "mine.txt"));
    fs::remove_all(first.out);
  }
}

TEST_CASE("worker: totals past 2^64 ns are exit 2 naming the dispatch, never wrapped", "[worker][cli][hardening]") {
  // Before: a dispatch of a 20 s device wall repeated 10^9 times gave
  // device_wall_total_ns 20000000...0 modulo 2^64 with status ok (and the
  // sweep's CSV copied it). 20 s x 10^9 = 2e19 ns > 2^64 - 1 = 1.8e19.
  const fs::path dir = cli::scratch("w_wrap_in");
  cli::write_file(dir / "long.json", R"({"npusim_trace": 1, "name": "long", "run": {"scheduler_timeout_ms": 30000},
    "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 20000000000}}},
    "program": [{"op": "submit", "kernel": "K"}]})");
  const std::string head = R"({"npusim_worker": 1, "worker": {"kind": "chip"}, "dispatches": [{"trace": "long.json", "repeat": )";
  cli::write_file(dir / "w.json", head + "1000000000}]}");
  const fs::path out = cli::scratch("w_wrap_out");
  cli::Result r = cli::npusim("worker " + cli::quoted(dir / "w.json") + " --out " + cli::quoted(out));
  CHECK(r.status == 2);
  CHECK(has(r.err, "npusim: error: " + (dir / "w.json").string() +
                       ": at /dispatches/0/repeat: the dispatch's device time, 1000000000 x device_wall "));
  CHECK(has(r.err, " passes 2^64 ns (about 584 years), beyond what npusim adds up exactly: lower the repeat or "
                   "split the worker file\n"));
  CHECK_FALSE(fs::exists(out));
  // 10^8 repeats fit: the totals are exact products and sums.
  cli::write_file(dir / "w.json", head + "100000000}]}");
  r = cli::npusim("worker " + cli::quoted(dir / "w.json") + " --out " + cli::quoted(out));
  REQUIRE(r.status == 0);
  const json s = cli::load(out / "worker_summary.json");
  const std::uint64_t wall = s["dispatches"][0]["device_wall_ns"].get<std::uint64_t>();
  CHECK(wall > 20000000000ull);
  CHECK(s["dispatches"][0]["device_wall_total_ns"].get<std::uint64_t>() == wall * 100000000ull);
  CHECK(s["totals"]["device_wall_ns"].get<std::uint64_t>() == wall * 100000000ull);
  CHECK(s["totals"]["host_visible_ns"].get<std::uint64_t>() ==
        wall * 100000000ull + s["totals"]["arena_build_ns"].get<std::uint64_t>());
}
