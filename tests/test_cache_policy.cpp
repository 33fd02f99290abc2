// Cache policy (issue 17 items 2 and 3): set_cache_policy in a kernel scope,
// the per-load `cache` overriding it both ways, and the two toolchains of
// --cache-policy-lowering, end to end on the tiny platform. The behaviour is
// the seed page 000_*.txt, "让流式操作数绕过缓存": a scope-level declaration
// covers every load of the tensor in a pl.at(level=CORE_GROUP) / pl.spmd
// body, an explicit cache= on a load wins in both directions, a declaration
// on another scope is carried without effect, and today's toolchain accepts
// BYPASS with a warning and emits an ordinary cached read.
#include "tests/catch.h"

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// One AIV kernel: the activations (512 B, 2 L2 lines), the weights (2 KiB,
// the whole tiny L2: 8 lines of 256 B, 4 sets of 2 ways), the activations
// again. `w_cache` is the weight load's own `cache` ("" for none).
json policy_trace(const json& scope_body_policies, const std::string& level, const std::string& w_cache) {
  json w_load = {{"arg", 1}, {"bytes", 2048}};
  if (!w_cache.empty()) w_load["cache"] = w_cache;
  json kernel = {{"func_id", 0},
                 {"core", "aiv"},
                 {"body", json::array({{{"load", {{"arg", 0}, {"bytes", 512}}}},
                                       {{"load", w_load}},
                                       {{"load", {{"arg", 0}, {"bytes", 512}}}}})}};
  json body = scope_body_policies;
  // The declaration may follow the submit it covers: it is a statement of the scope's body.
  const json submit = {{"op", "submit"}, {"kernel", "MM"}, {"args", json::array({{{"in", "act"}}, {{"in", "w"}}})}};
  body.insert(body.begin(), submit);
  json scope = {{"op", "scope"}, {"body", body}};
  if (!level.empty()) scope["level"] = level;
  return {{"npusim_trace", 1},
          {"name", "cache_policy"},
          {"kernels", {{"MM", kernel}}},
          {"tensors", {{"act", {{"shape", {128}}, {"dtype", "fp32"}}}, {"w", {{"shape", {512}}, {"dtype", "fp32"}}}}},
          {"program", json::array({scope})}};
}

json policy(const std::string& tensor, const std::string& p) {
  return {{"op", "set_cache_policy"}, {"tensor", tensor}, {"policy", p}};
}

// The trace written to a fresh scratch file.
fs::path write_trace(const json& t, const std::string& name) {
  const fs::path dir = cli::scratch(name + "_trace");
  fs::create_directories(dir);
  const fs::path file = dir / "t.json";
  std::ofstream(file) << t.dump();
  return file;
}

cli::RunResult run(const json& t, const std::string& name, const std::string& lowering) {
  const fs::path file = write_trace(t, name);
  std::string args = "'" + file.string() + "' --platform tiny --quiet --swimlane-level 0 --no-deps --no-scope-stats";
  if (!lowering.empty()) args += " --cache-policy-lowering " + lowering;
  return cli::run_summary(args, name);
}

// Kernel MM's busy time, its L2 hits, and its cache_bypass_not_lowered warnings.
struct Outcome {
  double busy_ns;
  std::uint64_t hits, hbm;
  int not_lowered;
};
Outcome outcome(const cli::RunResult& r) {
  REQUIRE(r.status == 0);
  const json& k = r.summary["kernels"]["MM"];
  const json& by = r.summary["warnings"]["by_kind"];
  return {k["core_busy_ns"].get<double>(), k["l2_hits"].get<std::uint64_t>(), k["hbm_bytes"].get<std::uint64_t>(),
          by.contains("cache_bypass_not_lowered") ? by["cache_bypass_not_lowered"].get<int>() : 0};
}

// On tiny (hit 200, miss 300 ns; a core streams 64 B/ns, HBM 32 B/ns):
//  cached: act misses 300 + max(512/64, 512/32) = 316; w misses every line,
//  300 + max(32, 64) = 364, and fills both ways of every set, evicting act;
//  act again misses: 316. 996 ns, 0 hits, 512 + 2048 + 512 HBM bytes.
//  intended BYPASS on w: act 316; w from HBM, not allocated, 300 + 64 = 364;
//  act is still resident and hits: 200 + 512/64 = 208. 888 ns, 2 hits,
//  512 + 2048 HBM bytes.
constexpr double kCached = 316 + 364 + 316;
constexpr double kBypassed = 316 + 364 + 208;

}  // namespace

TEST_CASE("cache policy: intended BYPASS on streamed weights keeps the activations resident", "[cache_policy][cli]") {
  const json t = policy_trace(json::array({policy("w", "bypass")}), "core_group", "");
  const Outcome none = outcome(run(policy_trace(json::array(), "core_group", ""), "none", "intended"));
  CHECK(none.busy_ns == kCached);
  CHECK(none.hits == 0);
  CHECK(none.hbm == 512 + 2048 + 512);
  const cli::RunResult r = run(t, "intended", "intended");
  const Outcome o = outcome(r);
  CHECK(o.busy_ns == kBypassed);
  CHECK(o.hits == 2);  // the activations' re-read: both lines
  CHECK(o.hbm == 512 + 2048);
  CHECK(o.not_lowered == 0);
  CHECK(r.summary["run"]["cache_policy_lowering"] == "intended");
  // pl.spmd bodies lower too.
  CHECK(outcome(run(policy_trace(json::array({policy("w", "bypass")}), "spmd", ""), "spmd", "intended")).busy_ns == kBypassed);
}

TEST_CASE("cache policy: today's toolchain times BYPASS as a cached read and says so once", "[cache_policy][cli]") {
  const json t = policy_trace(json::array({policy("w", "bypass")}), "core_group", "");
  const cli::RunResult r = run(t, "today", "");  // the default
  const Outcome o = outcome(r);
  CHECK(o.busy_ns == kCached);
  CHECK(o.hits == 0);
  CHECK(o.not_lowered == 1);
  CHECK_FALSE(r.summary["run"].contains("cache_policy_lowering"));  // the default is not echoed
  const std::string first = r.summary["warnings"]["first"][0];
  CHECK(first.rfind("cache_bypass_not_lowered: kernel \"MM\" tensor \"w\" (first load: task r1t0, /kernels/MM/body/1): ", 0) == 0);
  CHECK(cli::has(first, "BYPASS accepted but lowered to a cached read by today's toolchain"));
  CHECK(outcome(run(t, "today_explicit", "today")).busy_ns == kCached);
  // No policy, today: the same time, no warning.
  const Outcome none = outcome(run(policy_trace(json::array(), "core_group", ""), "none_today", ""));
  CHECK(none.busy_ns == kCached);
  CHECK(none.not_lowered == 0);
}

TEST_CASE("cache policy: a load's own cache overrides the scope's both ways", "[cache_policy][cli]") {
  // The scope bypasses w, the load puts itself back on the cached path.
  CHECK(outcome(run(policy_trace(json::array({policy("w", "bypass")}), "core_group", "default"), "back", "intended")).busy_ns ==
        kCached);
  // The scope declares DEFAULT, the load bypasses.
  CHECK(outcome(run(policy_trace(json::array({policy("w", "default")}), "core_group", "bypass"), "out", "intended")).busy_ns ==
        kBypassed);
  // No declaration at all: the load's own bypass.
  CHECK(outcome(run(policy_trace(json::array(), "", "bypass"), "own", "intended")).busy_ns == kBypassed);
}

TEST_CASE("cache policy: a declaration outside a kernel scope is carried without effect", "[cache_policy][cli]") {
  // A runtime scope (pl.scope(), no level) and another pl.at level do not become kernels.
  for (const std::string level : {"", "host"}) {
    INFO(level);
    const Outcome o = outcome(run(policy_trace(json::array({policy("w", "bypass")}), level, ""), "carried", "intended"));
    CHECK(o.busy_ns == kCached);
    CHECK(o.not_lowered == 0);
  }
}

TEST_CASE("cache policy: bad declarations and options are input errors with their path", "[cache_policy][cli]") {
  auto error = [](const json& t, const std::string& lowering = "") {
    cli::RunResult r = run(t, "bad", lowering);
    CHECK(r.status == 2);
    return r.err;
  };
  CHECK(cli::has(error(policy_trace(json::array({policy("w", "stream")}), "core_group", "")),
                 "/program/0/body/1/policy: expected one of \"default\", \"bypass\", got \"stream\""));
  CHECK(cli::has(error(policy_trace(json::array({policy("nope", "bypass")}), "core_group", "")),
                 "/program/0/body/1/tensor: name \"nope\" is used before it is bound"));
  CHECK(cli::has(error(policy_trace(json::array({policy("w", "bypass"), policy("w", "default")}), "core_group", "")),
                 "/program/0/body/2/tensor: tensor \"w\" already has a cache policy in this scope (at /program/0/body/1)"));
  json in_for = policy_trace(json::array(), "core_group", "");
  in_for["program"][0]["body"].push_back(
      {{"op", "for"}, {"var", "i"}, {"to", 1}, {"body", json::array({policy("w", "bypass")})}});
  CHECK(cli::has(error(in_for), "/program/0/body/1/body/0: set_cache_policy must be a statement of a scope's own body"));
  CHECK(cli::has(error(policy_trace(json::array(), "Core-Group", "")), "/program/0/level: expected a level name in lower case"));
  CHECK(cli::has(error(policy_trace(json::array(), "core_group", ""), "later"),
                 "--cache-policy-lowering: cache_policy_lowering must be \"today\" or \"intended\", got later"));
}

namespace {

// traces/cache_bypass.json (docs/gm.md, "Example: streaming weights past the
// L2") run one way: `declared` keeps its set_cache_policy(W, BYPASS), else
// the declaration is removed; `lowering` is passed as given.
struct ExampleRun {
  cli::RunResult r;
  fs::path out;
};
ExampleRun run_example(bool declared, const std::string& lowering, const std::string& name) {
  json t = cli::load(fs::path(NPUSIM_SOURCE_DIR) / "traces/cache_bypass.json");
  json& body = t["program"][0]["body"];
  REQUIRE(body[0]["op"] == "set_cache_policy");
  if (!declared) body.erase(body.begin());
  const fs::path file = write_trace(t, name);
  ExampleRun x;
  static_cast<cli::Result&>(x.r) = cli::run("'" + file.string() + "' --quiet --no-host-stats --cache-policy-lowering " + lowering, name, x.out);
  REQUIRE(x.r.status == 0);
  x.r.summary = cli::load(x.out / "summary.json");
  return x;
}

}  // namespace

// Issue 17 item 4. The seed page (000_*.txt): "编译器会拒绝它能看见的那种情况
// （在作用域会写入的张量上声明 BYPASS 是错误）": BYPASS on a tensor the scope
// writes is an error; and mixing a cached write with a bypassed read of the
// same bytes is a coherency bug.
namespace {

// P stores 512 B of x (2 tiny L2 lines, 8 GM lines) at the root scope; a
// kernel scope bypasses x and y and submits C, which loads x (512 B) and y
// (256 B, never written). C depends on P through x.
json stale_trace() {
  json p = {{"func_id", 0}, {"core", "aiv"}, {"body", json::array({{{"store", {{"arg", 0}, {"bytes", 512}}}}})}};
  json c = {{"func_id", 1},
            {"core", "aiv"},
            {"body", json::array({{{"load", {{"arg", 0}, {"bytes", 512}}}}, {{"load", {{"arg", 1}, {"bytes", 256}}}}})}};
  json scope = {{"op", "scope"},
                {"level", "core_group"},
                {"body", json::array({policy("x", "bypass"), policy("y", "bypass"),
                                      {{"op", "submit"}, {"kernel", "C"}, {"args", json::array({{{"in", "x"}}, {{"in", "y"}}})}}})}};
  return {{"npusim_trace", 1},
          {"name", "bypass_stale"},
          {"kernels", {{"P", p}, {"C", c}}},
          {"tensors", {{"x", {{"shape", {128}}, {"dtype", "fp32"}}}, {"y", {{"shape", {64}}, {"dtype", "fp32"}}}}},
          {"program", json::array({{{"op", "submit"}, {"kernel", "P"}, {"args", json::array({{{"inout", "x"}}})}}, scope})}};
}

int kind_count(const cli::RunResult& r, const std::string& kind) {
  const json& by = r.summary["warnings"]["by_kind"];
  return by.contains(kind) ? by[kind].get<int>() : 0;
}

}  // namespace

TEST_CASE("cache policy example: streamed weights evict the activations unless BYPASS is lowered", "[cache_policy][cli][example]") {
  // a2a3 (platforms/a2a3.json gm): L2 192 MiB of 512 B lines, 16 ways
  // (24,576 sets); hit 284 ns, miss 484 ns; a core streams 32 B/ns, HBM
  // 1600 B/ns. MM loads x (256 KiB, 512 lines), W's first half (192 MiB =
  // the L2: 16 lines in every set), x again, W's second half, and stores y
  // (768 KiB, 1536 lines, allocated without a fetch).
  constexpr double x_miss = 484 + 262144 / 32;      // 8676: the port, not HBM (163.84 ns), bounds it
  constexpr double x_hit = 284 + 262144 / 32;       // 8476
  constexpr double w_half = 484 + 201326592 / 32;   // 6291940, cached or from HBM alike
  constexpr double y_store = 284 + 786432 / 32;     // 24860: fresh lines, no dirty victim
  constexpr double cached = x_miss + w_half + x_miss + w_half + y_store;
  constexpr double bypassed = x_miss + w_half + x_hit + w_half + y_store;
  STATIC_REQUIRE(cached == 12626092);
  STATIC_REQUIRE(bypassed == 12625892);

  const ExampleRun none = run_example(false, "today", "ex_none");
  const ExampleRun today = run_example(true, "today", "ex_today");
  const ExampleRun intended = run_example(true, "intended", "ex_intended");
  const json& kn = none.r.summary["kernels"]["MM"];
  const json& kt = today.r.summary["kernels"]["MM"];
  const json& ki = intended.r.summary["kernels"]["MM"];

  // No BYPASS: each W half fills all 16 ways of every set after x's last
  // use, so both reads of x miss: 0 of x's 1024 looked-up lines hit.
  CHECK(kn["core_busy_ns"] == cached);
  CHECK(kn["l2_lines"] == 512 + 393216 + 512 + 393216 + 1536);
  CHECK(kn["l2_hits"] == 0);
  CHECK(kn["hbm_bytes"] == 2 * 262144 + 402653184);
  CHECK(none.r.summary["warnings"]["count"] == 0);

  // Intended: W crosses HBM without allocating; x's second read hits all 512
  // lines (activation hit rate 512 / 1024 = 50%; the kernel's 512 / 2560
  // counts y's store too), 200 ns sooner, one read of x less from HBM.
  CHECK(ki["core_busy_ns"] == bypassed);
  CHECK(ki["l2_lines"] == 512 + 512 + 1536);
  CHECK(ki["l2_hits"] == 512);
  CHECK(ki["l2_hit_rate"] == 0.2);
  CHECK(ki["hbm_bytes"] == 262144 + 402653184);
  CHECK(intended.r.summary["gm"]["hbm_bytes"] == 262144 + 402653184);

  // Today: the declaration is accepted with one warning and the run is the
  // no-BYPASS run: the same kernel figures and byte-identical timing outputs
  // (but for the digest of the trace, another file, in the Perfetto metadata).
  for (const char* k : {"core_busy_ns", "l2_lines", "l2_hits", "l2_hit_rate", "hbm_bytes"}) CHECK(kt[k] == kn[k]);
  CHECK(today.r.summary["warnings"]["by_kind"]["cache_bypass_not_lowered"] == 1);
  CHECK(cli::has(today.r.err, "cache_bypass_not_lowered: kernel \"MM\" tensor \"W\""));
  for (const char* f : {"chip_swimlane_records.json", "task_stats.csv", "deps.json"}) {
    INFO(f);
    CHECK(cli::slurp(today.out / f) == cli::slurp(none.out / f));
  }
  json sw_none = cli::load(none.out / "merged_swimlane.json"), sw_today = cli::load(today.out / "merged_swimlane.json");
  CHECK(sw_today["otherData"]["trace_digest"] != sw_none["otherData"]["trace_digest"]);
  sw_none.erase("otherData");
  sw_today.erase("otherData");
  CHECK(sw_today == sw_none);
  json s_none = none.r.summary, s_today = today.r.summary;
  CHECK(s_today["provenance"]["platform_digest"] == s_none["provenance"]["platform_digest"]);
  for (json* s : {&s_none, &s_today}) {
    s->erase("warnings");
    s->erase("provenance");
  }
  CHECK(s_today == s_none);
}

TEST_CASE("the swimlane carries a task's L2 figures on its Worker View bars", "[cache_policy][perfetto][cli]") {
  // docs/outputs.md, "What merged_swimlane.json draws": l2_lines, l2_hits,
  // hbm_bytes on each bar of a task that met the L2, the summary's figures.
  auto bar_args = [](const fs::path& out) {
    std::vector<json> v;
    const json trace = cli::load(out / "merged_swimlane.json");  // named: a range-for over a temporary's member dangles
    for (const json& e : trace["traceEvents"])
      if (e.value("ph", "") == "X" && e.value("pid", 0) == 4 && e.value("cat", "") == "event") v.push_back(e["args"]);
    return v;
  };
  for (const bool intended : {false, true}) {
    INFO(intended);
    const ExampleRun x = run_example(true, intended ? "intended" : "today", intended ? "sl_intended" : "sl_today");
    const std::vector<json> bars = bar_args(x.out);
    REQUIRE(bars.size() == 1);
    const json& k = x.r.summary["kernels"]["MM"];
    CHECK(bars[0]["l2_lines"] == k["l2_lines"]);
    CHECK(bars[0]["l2_hits"] == k["l2_hits"]);
    CHECK(bars[0]["hbm_bytes"] == k["hbm_bytes"]);
    CHECK(bars[0]["l2_hits"] == (intended ? 512 : 0));
    CHECK(bars[0]["event-hint"] == "Task:r1t0, FuncId:0, CoreId:0");  // the converter's args stay
  }
  // No GM phases: no L2 args.
  fs::path out;
  REQUIRE(cli::run("traces/chain.json --quiet", "sl_chain", out).status == 0);
  const std::vector<json> bars = bar_args(out);
  REQUIRE_FALSE(bars.empty());
  for (const json& a : bars) CHECK_FALSE(a.contains("l2_lines"));
}

TEST_CASE("cache policy: BYPASS on a tensor the kernel scope writes is an input error", "[cache_policy][cli]") {
  // The scope's kernel takes act INOUT and the scope declares it BYPASS (after the submit).
  json t = policy_trace(json::array({policy("act", "bypass")}), "core_group", "");
  t["program"][0]["body"][0]["args"][0] = {{"inout", "act"}};
  const std::string decl =
      "at /program/0/body/1/policy: set_cache_policy BYPASS, but kernel \"MM\", submitted at /program/0/body/0 in the "
      "same kernel scope, writes tensor \"act\" as its INOUT argument 0 (/program/0/body/0/args/0): BYPASS on a tensor "
      "the scope writes is an error (the compiler's check: ";
  cli::RunResult r = run(t, "written", "intended");
  CHECK(r.status == 2);
  CHECK(cli::has(r.err, "npusim: error: "));
  CHECK(cli::has(r.err, "t.json: " + decl));
  CHECK(cli::has(r.err, "expected \"default\" (or no declaration) for a tensor the scope writes"));
  CHECK(r.summary.is_null());  // no partial output
  // npusim check rejects it too.
  const fs::path file = write_trace(t, "written_check");
  const cli::Result c = cli::npusim("check '" + file.string() + "' --platform tiny");
  CHECK(c.status == 2);
  CHECK(cli::has(c.err, decl));
  // A load's own cache "bypass" of an argument its kernel stores to, in a kernel scope.
  json s = policy_trace(json::array(), "core_group", "bypass");
  s["kernels"]["MM"]["body"].push_back({{"store", {{"arg", 1}, {"bytes", 64}}}});
  cli::RunResult l = run(s, "stored", "");
  CHECK(l.status == 2);
  CHECK(cli::has(l.err, "at /kernels/MM/body/1/load/cache: a load with cache \"bypass\" of argument 1, but kernel \"MM\", "
                        "submitted at /program/0/body/0 in the same kernel scope, writes tensor \"w\" by the store at "
                        "/kernels/MM/body/3 (argument 1, /program/0/body/0/args/1): BYPASS on a tensor the scope writes "
                        "is an error"));
  // BYPASS on a tensor only read: accepted (the other test cases), and a
  // written tensor's DEFAULT declaration is fine.
  json ok = policy_trace(json::array({policy("act", "default"), policy("w", "bypass")}), "core_group", "");
  ok["program"][0]["body"][0]["args"][0] = {{"inout", "act"}};
  CHECK(run(ok, "read_only", "intended").status == 0);
  // Outside a kernel scope the compiler's check does not apply: the per-load
  // bypass of a stored argument is the dynamic coherency_bypass_write
  // (traces/coherency/soft_handoff_bypass.json, tests/test_coherency.cpp).
  json root = policy_trace(json::array(), "", "bypass");
  root["kernels"]["MM"]["body"].push_back({{"store", {{"arg", 1}, {"bytes", 64}}}});
  CHECK(run(root, "root_scope", "").status == 0);
}

TEST_CASE("cache policy: an intended BYPASS read of bytes dirty in the L2 is a coherency report", "[cache_policy][cli]") {
  const json t = stale_trace();
  // intended: x's 2 L2 lines hold P's write, not written back: one report per
  // GM line of the read (8 of 64 B); y was never written: none.
  const cli::RunResult r = run(t, "stale_intended", "intended");
  REQUIRE(r.status == 0);
  CHECK(kind_count(r, "coherency_bypass_stale_read") == 8);
  CHECK(r.summary["warnings"]["count"] == 8);
  const std::string first = r.summary["warnings"]["first"][0];
  CHECK(first.rfind("coherency_bypass_stale_read: task r1t0 (C) block 0 on core ", 0) == 0);
  CHECK(cli::has(first, ": a cache \"bypass\" load reads line 0 of tensor \"x\" (GM 0x100000000), whose L2 line "
                        "(GM 0x100000000, 256 B) holds a write by task t0 not yet written back to HBM: the intended "
                        "lowering reads HBM directly and gets the bytes from before that write; missing: a cached "
                        "load (cache \"default\") of bytes written through the L2"));
  // today: the BYPASS read is a cached read and sees the L2: no report.
  const cli::RunResult today = run(t, "stale_today", "today");
  REQUIRE(today.status == 0);
  CHECK(kind_count(today, "coherency_bypass_stale_read") == 0);
  CHECK(kind_count(today, "cache_bypass_not_lowered") == 2);
  CHECK(today.summary["warnings"]["count"] == 2);
  // --strict-coherency makes it a device-side failure.
  const fs::path file = write_trace(t, "stale_strict");
  fs::path out;
  const cli::Result s = cli::run("'" + file.string() + "' --platform tiny --quiet --cache-policy-lowering intended "
                                 "--strict-coherency", "stale_strict", out);
  CHECK(s.status == 1);
  const json summary = cli::load(out / "summary.json");
  CHECK(summary["error"]["name"] == "COHERENCY_HAZARD");
  CHECK(summary["error"]["diagnosis"]["coherency_reports"] == 8);
  CHECK(cli::run("'" + file.string() + "' --platform tiny --quiet --strict-coherency", "stale_strict_today", out).status == 0);
  // Clean bytes: only y bypassed (x's declaration dropped): no report.
  json clean = t;
  clean["program"][1]["body"].erase(0);
  CHECK(kind_count(run(clean, "clean", "intended"), "coherency_bypass_stale_read") == 0);
}
