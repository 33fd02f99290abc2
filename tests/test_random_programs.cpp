// Random valid programs through the whole simulator: every run terminates,
// a program with no barrier in it never hangs (no SCHEDULER_TIMEOUT), on
// a2a3 every task completes, and no task starts before its producers have
// completed. The generator mixes what the scheduler has separate paths for:
// AIC/AIV/MIX shapes, SPMD with and without sync_start (cohorts wider than
// one scheduler thread go through the global drain), early resolve,
// predicates, dummy tasks, allocs, nested auto and manual scopes, explicit
// deps, and 2 to 4 AICPU threads.
//
// The seeds are fixed, so a failure is reproducible: the test prints the
// seed and writes the program to the scratch directory. NPUSIM_RANDOM_PROGRAMS
// sets how many programs per platform (default 40) for a longer soak.
#include "tests/catch.h"

#include <cstdlib>
#include <map>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Limits {
  int clusters, aiv;  // sync-start limits: AIC/MIX blocks <= clusters, AIV <= AIV cores
};

class ProgramGen {
 public:
  ProgramGen(unsigned seed, Limits lim, int max_tasks) : rng_(seed), lim_(lim), max_tasks_(max_tasks) {}

  json make() {
    json t;
    t["npusim_trace"] = 1;
    t["name"] = "random";
    t["kernels"] = {
        {"A", {{"func_id", 0}, {"core", "aic"}, {"duration", {{"ns", 3000}}}}},
        {"V", {{"func_id", 1}, {"core", "aiv"}, {"duration", {{"mean_ns", 1500}, {"sigma_ns", 400}}}}},
        {"M", {{"func_id", 2}, {"core", "mix"},
               {"lanes", {{"aic", {{"duration", {{"ns", 2500}}}}}, {"aiv", {{"duration", {{"ns", 2000}}}}}}}}},
        {"W", {{"func_id", 3}, {"core", "mix"},
               {"lanes", {{"aiv0", {{"duration", {{"ns", 900}}}}}, {"aiv1", {{"duration", {{"ns", 1200}}}}}}}}},
        {"S", {{"func_id", 4}, {"core", "aiv"},
               {"body", {{{"compute", {{"ns", 500}}}}, {{"store", {{"arg", 0}, {"bytes", 256}}}}, {{"fence", json::object()}}}}}},
    };
    t["tensors"] = {{"gate", {{"shape", {1}}, {"dtype", "int32"}, {"data", {pick(0, 2)}}}}};
    for (int i = 0; i < 4; ++i) t["tensors"]["x" + std::to_string(i)] = {{"shape", {128, 64}}, {"dtype", "fp32"}};
    t["program"] = body(0, false);
    while (tasks_ < max_tasks_ / 2) {  // a short first draw: add more at the root
      json more = body(0, false);
      for (auto& op : more) t["program"].push_back(op);
    }
    return t;
  }

  int tasks() const { return tasks_; }
  int wide_cohorts() const { return wide_cohorts_; }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(int percent) { return pick(0, 99) < percent; }

  json view() {  // a row slice of a 128 x 64 external tensor
    const int rows = 16 * pick(1, 4);
    const int row0 = 16 * pick(0, (128 - rows) / 16);
    return {{"offset", {row0, 0}}, {"shape", {rows, 64}}};
  }

  json arg() {
    // An earlier output (by variable), or a view of an external tensor.
    if (!outs_.empty() && chance(40)) {
      json a;
      a[chance(70) ? "in" : "inout"] = outs_[static_cast<std::size_t>(pick(0, static_cast<int>(outs_.size()) - 1))];
      return a;
    }
    static const char* tags[] = {"in", "inout", "out_existing", "no_dep"};
    const std::string x = "x" + std::to_string(pick(0, 3));
    json a = view();
    a[tags[pick(0, 3)]] = x;
    if (chance(5)) a["manual_dep"] = true;
    return a;
  }

  json submit() {
    static const char* ks[] = {"A", "V", "M", "W", "S"};
    const std::string k = ks[pick(0, 4)];
    json op = {{"op", "submit"}, {"kernel", k}};
    json args = json::array();
    const int nargs = pick(1, 3);
    for (int i = 0; i < nargs; ++i) args.push_back(arg());
    if (chance(50)) {
      const std::string o = "o" + std::to_string(outs_.size());
      args.push_back({{"out", o}, {"shape", {16, 64}}, {"dtype", "fp32"}});
      outs_.push_back(o);
    }
    op["args"] = args;
    const bool sync = chance(15);
    const int limit = k == "V" || k == "S" ? lim_.aiv : lim_.clusters;
    int blocks = chance(60) ? 1 : pick(2, sync ? limit : 3 * limit);
    if (sync && blocks < 2) blocks = 2;
    if (blocks > 1) op["block_num"] = blocks;
    if (sync) op["sync_start"] = true;
    wide_cohorts_ += sync && blocks > limit / 3;  // wider than one of 3 threads' share: a drain
    if (chance(30)) op["early_resolve"] = true;
    if (chance(8)) {
      static const char* cmps[] = {"==", "!=", ">", "<", ">=", "<="};
      op["predicate"] = {{"tensor", "gate"}, {"index", {0}}, {"cmp", cmps[pick(0, 5)]}, {"value", pick(0, 2)}};
    }
    add_deps(op);
    return op;
  }

  void add_deps(json& op) {
    const int n = ids_.empty() ? 0 : pick(0, 2);
    std::set<std::string> deps;
    for (int i = 0; i < n; ++i) deps.insert(ids_[static_cast<std::size_t>(pick(0, static_cast<int>(ids_.size()) - 1))]);
    if (!deps.empty()) op["deps"] = deps;
    const std::string id = "t" + std::to_string(ids_.size());
    op["id"] = id;
    ids_.push_back(id);
  }

  json body(int depth, bool manual) {
    json ops = json::array();
    const int n = pick(2, 12);
    for (int i = 0; i < n && tasks_ < max_tasks_; ++i) {
      const int r = pick(0, 99);
      if (r < 70) {
        ops.push_back(submit());
        ++tasks_;
      } else if (r < 78) {
        json op = {{"op", "dummy"}};
        add_deps(op);
        ops.push_back(op);
        ++tasks_;
      } else if (r < 84) {
        const std::string o = "o" + std::to_string(outs_.size());
        ops.push_back({{"op", "alloc"}, {"outputs", {{{"bind", o}, {"shape", {16, 64}}, {"dtype", "fp32"}}}}});
        outs_.push_back(o);
        ++tasks_;
      } else if (depth < 5) {
        const bool m = manual || chance(25);  // no auto scope inside a manual one
        json s = {{"op", "scope"}, {"site", "random:" + std::to_string(depth + 1)}};
        if (m) s["mode"] = "manual";
        s["body"] = body(depth + 1, m);
        ops.push_back(s);
      }
    }
    return ops;
  }

  std::mt19937 rng_;
  Limits lim_;
  int max_tasks_;
  int tasks_ = 0, wide_cohorts_ = 0;
  std::vector<std::string> ids_, outs_;
};

int programs_per_platform() {
  const char* e = std::getenv("NPUSIM_RANDOM_PROGRAMS");
  return e && std::atoi(e) > 0 ? std::atoi(e) : 40;
}

// Runs one random program; returns the summary (exit status checked here).
json run_random(unsigned seed, const std::string& platform, Limits lim, int max_tasks, fs::path& out,
                int* wide_cohorts = nullptr) {
  ProgramGen g(seed, lim, max_tasks);
  json prog = g.make();
  if (wide_cohorts) *wide_cohorts += g.wide_cohorts();
  fs::path file = cli::scratch("random_" + std::to_string(seed) + "_" + platform + ".json");
  fs::create_directories(file.parent_path());
  std::ofstream(file) << prog.dump(1);
  const int threads = 2 + static_cast<int>(seed % 3);
  INFO("seed " << seed << " on " << platform << ", " << threads << " AICPU threads, program " << file.string());
  cli::Result r = cli::run("'" + file.string() + "' --platform " + platform + " --aicpu-thread-num " +
                               std::to_string(threads) + " --seed " + std::to_string(seed) + " --quiet --no-suggest",
                           "random_out", out);
  INFO(r.err);
  REQUIRE((r.status == 0 || r.status == 1));  // never 2 (the program is valid), never a crash
  json s = cli::load(out / "summary.json");
  if (r.status == 1) {
    // No barrier in these programs: a hang would be a model bug.
    CHECK(s["error"]["name"] != "SCHEDULER_TIMEOUT");
  } else {
    CHECK(s["tasks"]["completed"] == s["tasks"]["submitted"]);
  }
  return s;
}

// The default run (40 seeds per platform, in two halves of 20 so that each
// test case stays well under ctest's timeout in the sanitized build) is
// pinned: on a2a3 the edges checked and the drains reached, on tiny the
// outcome of every seed. NPUSIM_RANDOM_PROGRAMS=N runs N per platform instead
// (a soak), with the general checks only.
constexpr int kDefaultPrograms = 40;

// a2a3, per half: kernel-to-kernel edges checked, and sync_start cohorts
// wider than one scheduler thread's share (they go through the drain).
struct A2a3Counts {
  int edges_checked, wide_cohorts;
};
constexpr A2a3Counts kA2a3Counts[2] = {{6196, 140}, {6105, 144}};

// Tiny (2 clusters, 64-slot rings, dep pool 64, tensormap 256): capacity
// fatals are legitimate results, a SCHEDULER_TIMEOUT never is. Each seed's
// outcome, "ok" or the fatal's name: a model change that moves one is a bug
// or a rule change, to be recorded here with the reason. 16 of the 40 run
// clean, 24 end in DEP_POOL_OVERFLOW. Until the dep pool followed
// pto_orchestrator.cpp and pto_ring_buffer.h (every entry usable, no entry for
// a producer already completed when its consumer is wired), 25 of them ended
// in a false DEP_POOL_OVERFLOW; then 39 ran clean and seed 2017 (six nested
// scopes) filled the deepest ring's task window (FLOW_CONTROL_DEADLOCK). Then
// the wiring's decision followed submit_task_common STEP 6 (a submit that
// found a producer still running waits in PTO2DepListPool::ensure_space for
// one entry per WAIT edge, and a producer completing meanwhile no longer
// releases it): 24 seeds, 2017 included, now fill a ring's 64-entry dep pool
// before 64 of its tasks retired (PTO2_DEP_POOL_CLEANUP_INTERVAL), so nothing
// can be reclaimed (checked on 2001: ring 3, 63 of 64 in use, 4 needed, 25
// retired; 2017 fails there before its window fills, and with 128 entries
// goes on to its FLOW_CONTROL_DEADLOCK).
const std::map<unsigned, std::string> kTinyOutcomes = {
    {2000, "ok"},
    {2001, "DEP_POOL_OVERFLOW"},
    {2002, "DEP_POOL_OVERFLOW"},
    {2003, "DEP_POOL_OVERFLOW"},
    {2004, "DEP_POOL_OVERFLOW"},
    {2005, "DEP_POOL_OVERFLOW"},
    {2006, "DEP_POOL_OVERFLOW"},
    {2007, "ok"},
    {2008, "DEP_POOL_OVERFLOW"},
    {2009, "ok"},
    {2010, "DEP_POOL_OVERFLOW"},
    {2011, "DEP_POOL_OVERFLOW"},
    {2012, "DEP_POOL_OVERFLOW"},
    {2013, "DEP_POOL_OVERFLOW"},
    {2014, "DEP_POOL_OVERFLOW"},
    {2015, "DEP_POOL_OVERFLOW"},
    {2016, "DEP_POOL_OVERFLOW"},
    {2017, "DEP_POOL_OVERFLOW"},
    {2018, "DEP_POOL_OVERFLOW"},
    {2019, "ok"},
    {2020, "ok"},
    {2021, "ok"},
    {2022, "DEP_POOL_OVERFLOW"},
    {2023, "DEP_POOL_OVERFLOW"},
    {2024, "ok"},
    {2025, "DEP_POOL_OVERFLOW"},
    {2026, "DEP_POOL_OVERFLOW"},
    {2027, "DEP_POOL_OVERFLOW"},
    {2028, "ok"},
    {2029, "ok"},
    {2030, "ok"},
    {2031, "ok"},
    {2032, "ok"},
    {2033, "ok"},
    {2034, "DEP_POOL_OVERFLOW"},
    {2035, "ok"},
    {2036, "ok"},
    {2037, "DEP_POOL_OVERFLOW"},
    {2038, "DEP_POOL_OVERFLOW"},
    {2039, "DEP_POOL_OVERFLOW"},
};

// The first or second half of this run's programs per platform: [first, end).
std::pair<int, int> half(int which) {
  const int n = programs_per_platform();
  return which == 0 ? std::make_pair(0, n / 2) : std::make_pair(n / 2, n);
}

void a2a3_programs(int which) {
  const auto [first, end] = half(which);
  int cohorts = 0, checked = 0;
  for (int i = first; i < end; ++i) {
    const unsigned seed = 1000 + static_cast<unsigned>(i);
    fs::path out;
    json s = run_random(seed, "a2a3", Limits{24, 48}, 300, out, &cohorts);
    INFO("seed " << seed);
    REQUIRE(s["status"] == "ok");  // a2a3's rings are far larger than these programs
    // Every edge: the consumer's first kernel start is after the producer's
    // last AICPU-observed finish.
    json deps = cli::load(out / "deps.json");
    cli::TaskTimes times = cli::task_times(cli::load(out / "chip_swimlane_records.json"));
    for (const auto& e : deps["edges"]) {
      const std::string pred = e["pred"], succ = e["succ"];
      if (!times.finish.count(pred) || !times.start.count(succ)) continue;  // alloc, dummy, predicate false
      INFO(pred << " -> " << succ);
      CHECK(times.start[succ] > times.finish[pred]);
      ++checked;
    }
  }
  if (programs_per_platform() == kDefaultPrograms) {
    CHECK(checked == kA2a3Counts[which].edges_checked);
    CHECK(cohorts == kA2a3Counts[which].wide_cohorts);
  } else {
    CHECK(checked > 10 * (end - first));
    CHECK((cohorts > 0 || end == first));
  }
}

void tiny_programs(int which) {
  const auto [first, end] = half(which);
  std::map<unsigned, std::string> outcomes;
  std::string table;  // this run's outcomes, to record after a deliberate change
  for (int i = first; i < end; ++i) {
    const unsigned seed = 2000 + static_cast<unsigned>(i);
    fs::path out;
    json s = run_random(seed, "tiny", Limits{2, 4}, 120, out);
    outcomes[seed] = s["status"] == "ok" ? "ok" : s["error"]["name"].get<std::string>();
    table += "    {" + std::to_string(seed) + ", \"" + outcomes[seed] + "\"},\n";
  }
  INFO("this run's outcomes:\n" << table);
  for (const auto& [seed, outcome] : outcomes) {
    auto it = kTinyOutcomes.find(seed);
    if (it == kTinyOutcomes.end()) continue;  // beyond the recorded seeds (a longer soak)
    INFO("seed " << seed);
    CHECK(outcome == it->second);
  }
}

}  // namespace

TEST_CASE("random programs terminate, complete on a2a3 and honour every edge (first half)", "[random]") {
  a2a3_programs(0);
}

TEST_CASE("random programs terminate, complete on a2a3 and honour every edge (second half)", "[random]") {
  a2a3_programs(1);
}

TEST_CASE("random programs on the tiny platform terminate, never hang and end as recorded (first half)", "[random]") {
  tiny_programs(0);
}

TEST_CASE("random programs on the tiny platform terminate, never hang and end as recorded (second half)", "[random]") {
  tiny_programs(1);
}
