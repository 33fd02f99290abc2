// Coherency checking end to end: runs the npusim binary on the hand-off
// traces of traces/coherency/ (the seed page's SOFT-barrier exchange done
// right and with one step missing each) and checks that each wrong version
// reports exactly its hazard, the right one nothing, and that
// --strict-coherency turns a report into a device-side failure.
#include "tests/catch.h"

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// `npusim run traces/coherency/<trace>.json` and its summary.
cli::RunResult npusim_run(const std::string& trace, const std::string& extra = "") {
  return cli::run_summary(
      "traces/coherency/" + trace + ".json --quiet --swimlane-level 0 --no-deps --no-scope-stats " + extra, trace);
}

struct Expect {
  const char* trace;
  const char* kind;
  std::set<int> lines;  // line indices within buf's view
  const char* missing;
};

}  // namespace

TEST_CASE("the SOFT-barrier hand-off done right reports nothing", "[coherency][cli]") {
  cli::RunResult r = npusim_run("soft_handoff_ok");
  json& summary = r.summary;
  REQUIRE(r.status == 0);
  CHECK(summary["status"] == "ok");
  CHECK(summary["warnings"]["count"] == 0);
  CHECK(r.err.find("coherency") == std::string::npos);
  // Strict mode changes nothing when there is nothing to report.
  CHECK(npusim_run("soft_handoff_ok", "--strict-coherency").status == 0);
}

TEST_CASE("each hand-off with a missing step reports exactly its hazard", "[coherency][cli]") {
  const Expect cases[] = {
      {"soft_handoff_no_fence", "coherency_unfenced_read", {0, 1, 2, 3}, "missing: fence on core "},
      {"soft_handoff_no_invalidate", "coherency_stale_read", {0, 1, 2, 3},
       "missing: cacheinvalid of this line (or cacheinvalid \"all\")"},
      {"soft_handoff_region_invalidate", "coherency_partial_invalidate", {1, 2, 3}, "missing: cacheinvalid \"all\""},
      {"soft_handoff_bypass", "coherency_bypass_write", {0, 1, 2, 3}, "missing: a cached load (cache \"default\")"},
  };
  for (const Expect& e : cases) {
    INFO(e.trace);
    cli::RunResult r = npusim_run(e.trace);
    json& summary = r.summary;
    REQUIRE(r.status == 0);  // a hazard is a warning unless --strict-coherency
    CHECK(summary["status"] == "ok");
    const json& w = summary["warnings"];
    // A bypass load also meets today's toolchain, which lowers it to a cached
    // read: one cache_bypass_not_lowered per (kernel, tensor) besides the hazard.
    const bool bypass = std::string(e.kind) == "coherency_bypass_write";
    json by_kind = json{{e.kind, e.lines.size()}};
    if (bypass) by_kind["cache_bypass_not_lowered"] = 1;
    CHECK(w["count"] == e.lines.size() + (bypass ? 1 : 0));
    CHECK(w["by_kind"] == by_kind);
    std::set<int> lines;
    for (const auto& msg : w["first"]) {
      const std::string m = msg.get<std::string>();
      if (m.rfind("cache_bypass_not_lowered: ", 0) == 0) continue;
      CHECK(m.rfind(std::string(e.kind) + ": task t0 (EXCHANGE) block ", 0) == 0);
      CHECK(m.find(e.missing) != std::string::npos);
      for (int l = 0; l < 4; ++l)
        if (m.find("reads line " + std::to_string(l) + " of tensor \"buf\" (GM 0x") != std::string::npos) lines.insert(l);
    }
    CHECK(lines == e.lines);
    CHECK(r.err.find("npusim: warning: " + std::string(e.kind)) != std::string::npos);
  }
}

TEST_CASE("strict coherency (--strict-coherency) makes a coherency report a device-side failure", "[coherency][cli]") {
  cli::RunResult r = npusim_run("soft_handoff_no_fence", "--strict-coherency");
  json& summary = r.summary;
  CHECK(r.status == 1);
  CHECK(summary["status"] == "error");
  const json& e = summary["error"];
  CHECK(e["name"] == "COHERENCY_HAZARD");
  CHECK(e["host_code"] == 0);
  CHECK(e["diagnosis"]["coherency_reports"] == 4);
  REQUIRE(e["diagnosis"]["explanation"].size() == 4);
  for (const auto& line : e["diagnosis"]["explanation"])
    CHECK(line.get<std::string>().rfind("coherency_unfenced_read: task t0 (EXCHANGE)", 0) == 0);
  CHECK(r.err.find("COHERENCY_HAZARD") != std::string::npos);
  // The run itself completed: every task did.
  CHECK(summary["tasks"]["completed"] == summary["tasks"]["submitted"]);
}

// Mirrors SYNCALL_SOFT_POLL (PTO-ISA include/pto/common/syncall_soft.hpp): the poll
// loop breaks after SYNCALL_SOFT_MAX_POLL_ITERATIONS (include/pto/common/type.hpp).
TEST_CASE("a SOFT syncall that can never gather used_cores gives up polling and warns", "[coherency][cli]") {
  cli::RunResult r = npusim_run("soft_barrier_timeout", "--no-suggest");
  CHECK(r.status == 0);  // the device runs on: nothing fails
  CHECK(r.summary["status"] == "ok");
  const json& w = r.summary["warnings"];
  CHECK(w["by_kind"] == json{{"coherency_syncall_timeout", 1}});
  CHECK(w["first"][0].get<std::string>().find("used_cores=3) gave up at ") != std::string::npos);
  // 1,000,000 polls of one GM load (284 ns on a2a3) after the 1 us of compute.
  CHECK(r.summary["device_wall_ns"].get<double>() > 284e6);
  CHECK(r.summary["device_wall_ns"].get<double>() < 284e6 + 10e3);
  cli::RunResult strict = npusim_run("soft_barrier_timeout", "--no-suggest --strict-coherency");
  CHECK(strict.status == 1);
  CHECK(strict.summary["error"]["name"] == "COHERENCY_HAZARD");
}
