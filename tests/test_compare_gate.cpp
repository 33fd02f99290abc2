// `npusim compare` as a CI gate (docs/outputs.md, "compare" and "A CI
// gate"): the times gate and the figures are reported, ring peaks against
// capacity, the formats, run folders, percentages, provenance notes, and
// docs/examples/ci_gate.sh on +0.5 % and +2 % changes.
#include "tests/catch.h"

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/compare.h"
#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using cli::has;

namespace {

// traces/chain.json with its MATMUL (the first of the 8 tasks in a row)
// 60 us long, plus `extra_ns`: a program whose device_wall (92,247 ns) a
// slower kernel moves by fractions of a percent.
fs::path chain_60us(const std::string& name, int extra_ns) {
  json t = cli::load(std::string(NPUSIM_SOURCE_DIR) + "/traces/chain.json");
  t["kernels"]["MATMUL"]["duration"]["ns"] = 60000 + extra_ns;
  const fs::path p = cli::scratch(name) / "chain_60us.json";
  cli::write_file(p, t.dump(1));
  return p;
}

}  // namespace

TEST_CASE("compare reports a platform edited under the same name, a changed trace and version", "[compare][provenance]") {
  // The acceptance case: a2a3.json with one cost changed, still named a2a3.
  json plat = cli::load(std::string(NPUSIM_SOURCE_DIR) + "/platforms/a2a3.json");
  REQUIRE(plat["name"] == "a2a3");
  REQUIRE(plat.contains(nlohmann::json::json_pointer("/sched/dispatch_task_ns/value")));
  plat[nlohmann::json::json_pointer("/sched/dispatch_task_ns/value")] =
      plat[nlohmann::json::json_pointer("/sched/dispatch_task_ns/value")].get<double>() + 100;
  const fs::path edited = cli::scratch("edited_platform") / "a2a3.json";
  cli::write_file(edited, plat.dump(2));
  fs::path base, cur;
  REQUIRE(cli::run("traces/chain.json --quiet --no-host-stats", "edit_base", base).status == 0);
  REQUIRE(cli::run("traces/chain.json --quiet --no-host-stats --platform " + cli::quoted(edited), "edit_cur", cur).status ==
          0);
  const json bp = cli::load(base / "summary.json")["provenance"], cp = cli::load(cur / "summary.json")["provenance"];
  REQUIRE(bp["platform_digest"] != cp["platform_digest"]);
  cli::Result r = cli::npusim("compare " + cli::quoted(base) + " " + cli::quoted(cur) + " --tolerance 100%");
  CHECK(r.status == 0);
  CHECK(has(r.out, "note: platform \"a2a3\" differs from the baseline's, under the same name: platform_digest " +
                       bp["platform_digest"].get<std::string>() + " -> " + cp["platform_digest"].get<std::string>() +
                       " (the platform.json beside each summary holds its values)\n"));
  CHECK(!has(r.out, "note: trace"));
  r = cli::npusim("compare " + cli::quoted(base) + " " + cli::quoted(cur) + " --tolerance 100% --format json");
  const json j = json::parse(r.out);
  CHECK(j["provenance"]["platform_digest"] ==
        json{{"baseline", bp["platform_digest"]}, {"current", cp["platform_digest"]}, {"same", false}});
  CHECK(j["provenance"]["trace_digest"]["same"] == true);
  CHECK(j["provenance"]["npusim_version"]["same"] == true);

  // A summary of another npusim version, and one written before provenance existed.
  json older = cli::load(base / "summary.json");
  older["provenance"]["npusim_version"] = "0.0.1";
  const fs::path older_file = cli::scratch("older") / "summary.json";
  cli::write_file(older_file, older.dump(2));
  r = cli::npusim("compare " + cli::quoted(older_file) + " " + cli::quoted(base));
  CHECK(r.status == 0);
  CHECK(has(r.out, "note: npusim version differs: 0.0.1 -> " + bp["npusim_version"].get<std::string>()));
  older.erase("provenance");
  cli::write_file(older_file, older.dump(2));
  r = cli::npusim("compare " + cli::quoted(older_file) + " " + cli::quoted(base));
  CHECK(r.status == 0);
  CHECK(has(r.out, "note: the baseline summary records no provenance (written by an older npusim): its npusim "
                   "version and digests are unknown\n"));
}

TEST_CASE("the CI gate script passes at +0.5 % within --tolerance 1 and fails at +2 %", "[compare][cli]") {
  // device_wall does not follow a kernel's duration ns for ns: the
  // scheduler sees a completion at its next poll, so it moves in steps (a
  // MATMUL 400 ns longer: +494 ns; 1,760 ns longer: +1,894 ns, as run with
  // the 100 ns COND read; 320 and 1,740 ns, the extras used with the 195 ns
  // read, now move it +280 and +1,680 ns, out of their bands). The
  // test checks each run's move is in the band it stands for, then the gate.
  const fs::path dir = cli::scratch("ci_gate");
  const std::string base = (dir / "base").string();
  REQUIRE(cli::npusim("run " + cli::quoted(chain_60us("ci_base", 0)) + " --out '" + base + "' --quiet --no-host-stats")
              .status == 0);
  const double base_wall = cli::load(base + "/summary.json")["device_wall_ns"].get<double>();
  auto gate = [&](const fs::path& trace, const std::string& name) {
    return cli::sh("OUT='" + (dir / name).string() + "' docs/examples/ci_gate.sh '" + trace.string() + "' '" + base +
                   "/summary.json' 1");
  };
  auto moved_pct = [&](const std::string& name) {
    return (cli::load(dir / name / "summary.json")["device_wall_ns"].get<double>() - base_wall) / base_wall * 100;
  };
  // Unchanged: the same summary, byte for byte, and no figure moved.
  cli::Result same = gate(chain_60us("ci_same", 0), "same");
  CHECK(same.status == 0);
  CHECK(cli::lines_of(same.out).back() == "compare: OK");
  CHECK(cli::slurp(dir / "same" / "summary.json") == cli::slurp(base + "/summary.json"));
  CHECK(has(cli::slurp(dir / "same.junit.xml"), "tests=\"3\" failures=\"0\""));

  // About +0.5 %: within 1 %, a pass; the trace's change is noted.
  cli::Result half = gate(chain_60us("ci_half", 400), "half");
  const double half_pct = moved_pct("half");
  CHECK(half_pct > 0.4);
  CHECK(half_pct < 0.6);
  CHECK(half.status == 0);
  CHECK(has(half.out, "changed <= +1%\n"));
  CHECK(has(half.out, "note: trace \"chain\" differs from the baseline's: trace_digest "));
  CHECK(has(cli::lines_of(half.out).back(), "compare: OK ("));
  CHECK(has(cli::slurp(dir / "half.junit.xml"), "tests=\"3\" failures=\"0\""));

  // About +2 %: beyond 1 %, exit 3, and the JUnit report has the failure.
  cli::Result two = gate(chain_60us("ci_two", 1760), "two");
  const double two_pct = moved_pct("two");
  CHECK(two_pct >= 2.0);
  CHECK(two_pct < 2.1);
  CHECK(two.status == 3);
  CHECK(has(two.out, "REGRESSION > +1%\n"));
  CHECK(cli::lines_of(two.out).back() == "compare: REGRESSION (2 figures beyond tolerance: device_wall_ns, makespan_ns)");
  const std::string junit = cli::slurp(dir / "two.junit.xml");
  CHECK(has(junit, "tests=\"3\" failures=\"2\""));
  CHECK(has(junit, "<testcase classname=\"npusim.compare\" name=\"device_wall_ns\">\n"
                   "      <failure type=\"regression\" message=\"device_wall_ns: 92247 -&gt; 94141 ns (+2.05%), "
                   "REGRESSION &gt; +1%\"/>"));
}

namespace {

// tests/data/platform/compare_figures_base.json with a `run` (ring 0 of 16
// task slots, 4096 heap bytes, 8 dep-pool entries) and ring 0's peaks set.
fs::path ring_summary(const std::string& name, int slots, int heap, int dep) {
  json s = cli::load(std::string(NPUSIM_TEST_DATA_DIR) + "/platform/compare_figures_base.json");
  s["run"] = {{"ring_task_window", {16, 16, 16, 16}}, {"ring_heap", {4096, 4096, 4096, 4096}},
              {"ring_dep_pool", {8, 8, 8, 8}}};
  s["figures"]["ring_peaks"]["0"] = {{"task_slots", slots}, {"heap_bytes", heap}, {"dep_pool", dep}};
  const fs::path p = cli::scratch("rings_" + name) / "summary.json";
  cli::write_file(p, s.dump(2));
  return p;
}

}  // namespace

TEST_CASE("compare judges a ring peak against its capacity, not its growth", "[compare]") {
  // Baseline: 8 of 16 slots (50 %), 512 of 4096 heap bytes (12.5 %), 4 of 8
  // dep-pool entries (50 %). Current: 12 slots (75 %, +50 % growth but under
  // 80 %), 1024 heap bytes (25 %, +100 %), 7 entries (87.5 %, past 80 %).
  const fs::path base = ring_summary("base", 8, 512, 4), cur = ring_summary("cur", 12, 1024, 7);
  const std::string files = cli::quoted(base) + " " + cli::quoted(cur);
  cli::Result r = cli::npusim("compare " + files);
  CHECK(r.status == 0);
  CHECK(has(r.out, "figures.ring_peaks.0.dep_pool           4        7  entries     +3   +75.00%  "
                   "87.5% of capacity > 80%, not gated\n"));
  CHECK(has(r.out, "figures.ring_peaks.0.heap_bytes       512     1024  bytes     +512  +100.00%  changed, 25% of capacity\n"));
  CHECK(has(r.out, "figures.ring_peaks.0.task_slots         8       12  slots       +4   +50.00%  changed, 75% of capacity\n"));
  r = cli::npusim("compare " + files + " --gate all");
  CHECK(r.status == 3);
  CHECK(has(r.out, "  REGRESSION 87.5% of capacity > 80%\n"));
  CHECK(cli::lines_of(r.out).back() ==
        "compare: REGRESSION (1 figure beyond tolerance: figures.ring_peaks.0.dep_pool)");
  // The threshold is an option; 70 % puts the task slots past it too.
  r = cli::npusim("compare " + files + " --gate all --ring-threshold 70%");
  CHECK(r.status == 3);
  CHECK(has(r.out, "slots       +4   +50.00%  REGRESSION 75% of capacity > 70%\n"));
  CHECK(has(cli::lines_of(r.out).back(), "(2 figures beyond tolerance: "));
  // A peak that stayed past the threshold did not move: not a regression.
  r = cli::npusim("compare " + cli::quoted(cur) + " " + cli::quoted(cur) + " --gate all");
  CHECK(r.status == 0);
  // --tolerance-for judges against the baseline again.
  r = cli::npusim("compare " + files + " --tolerance-for figures.ring_peaks.0.heap_bytes=50");
  CHECK(r.status == 3);
  CHECK(has(r.out, "bytes     +512  +100.00%  REGRESSION > +50%\n"));
  // JSON names the capacity.
  r = cli::npusim("compare " + files + " --format json");
  const json j = json::parse(r.out);
  bool seen = false;
  for (const json& row : j["rows"])
    if (row["name"] == "figures.ring_peaks.0.dep_pool") {
      seen = true;
      CHECK(row["capacity"] == 8.0);
      CHECK(row["gates"] == false);
      CHECK(row["unit"] == "entries");
    }
  CHECK(seen);
}

TEST_CASE("compare takes run folders, 5% as a tolerance, and prints json, markdown or junit", "[compare][cli]") {
  const std::string d = "tests/data/platform/";
  // A run folder is read for its summary.json.
  const fs::path folder = cli::scratch("run_folder");
  cli::write_file(folder / "summary.json", cli::slurp(std::string(NPUSIM_TEST_DATA_DIR) + "/platform/compare_slower.json"));
  cli::Result r = cli::npusim("compare " + d + "compare_base.json " + cli::quoted(folder) + " --tolerance 1%");
  CHECK(r.status == 0);
  CHECK(has(r.out, "device_wall_ns          100000   101000  ns     +1000   +1.00%  changed <= +1%\n"));
  CHECK(cli::npusim("compare " + d + "compare_base.json " + cli::quoted(folder) + " --tolerance '0.5 %'").status == 3);
  CHECK(cli::npusim("compare " + d + "compare_base.json " + cli::quoted(folder) + " --tolerance 1").status == 0);
  // Bad values: the option, the value and what was expected.
  const std::pair<std::string, std::string> bad[] = {
      {"--tolerance 5%%", "at --tolerance: expected a percentage >= 0 (5 or 5%), found \"5%%\""},
      {"--tolerance=-1%", "at --tolerance: expected a percentage >= 0 (5 or 5%), found \"-1%\""},
      {"--ring-threshold 101", "at --ring-threshold: expected a share of capacity in percent, 0 to 100, found 101"},
      {"--format xml", "at --format: expected text, json, markdown or junit, found \"xml\""},
      {"--gate figures", "at --gate: expected times (the status, device_wall_ns and makespan_ns) or all (every "
                         "figure with a tolerance too), found \"figures\""},
      {"--format ''", "at --format: expected text, json, markdown or junit, got \"\""},
  };
  for (const auto& [option, message] : bad) {
    INFO(option);
    r = cli::npusim("compare " + d + "compare_base.json " + d + "compare_slower.json " + option);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "npusim: error: command line: " + message + "\n");
  }

  const std::string files = d + "compare_base.json " + d + "compare_slower.json";
  r = cli::npusim("compare " + files + " --format json");
  CHECK(r.status == 3);
  const json j = json::parse(r.out);
  CHECK(j["npusim_compare"] == 1);
  CHECK(j["verdict"] == "regression");
  CHECK(j["summary"] == "compare: REGRESSION (1 figure beyond tolerance: device_wall_ns)");
  CHECK(j["regressions"] == json::array({"device_wall_ns"}));
  CHECK(j["gate"] == "times");
  CHECK(j["rows"][1] == json{{"name", "device_wall_ns"},
                             {"unit", "ns"},
                             {"baseline", 100000.0},
                             {"current", 101000.0},
                             {"delta", 1000.0},
                             {"delta_pct", 1.0},
                             {"verdict", "REGRESSION > +0%"},
                             {"gates", true},
                             {"regression", true},
                             {"tolerance_pct", 0.0}});
  CHECK(j["rows"][3]["name"] == "scheduling_window_ns");
  CHECK(j["rows"][3]["gates"] == false);
  CHECK(j["rows"][3]["delta"] == -999.5);

  r = cli::npusim("compare " + files + " --format markdown");
  CHECK(r.status == 3);
  CHECK(has(r.out, "| figure | baseline | current | unit | delta | delta % | verdict |\n"
                   "| --- | ---: | ---: | --- | ---: | ---: | --- |\n"
                   "| `status` | ok | ok |  |  |  | ok |\n"
                   "| `device_wall_ns` | 100000 | 101000 | ns | +1000 | +1.00% | **REGRESSION > +0%** |\n"));
  CHECK(cli::lines_of(r.out).back() == "**compare: REGRESSION (1 figure beyond tolerance: device_wall_ns)**");

  r = cli::npusim("compare " + files + " --format junit");
  CHECK(r.status == 3);
  CHECK(has(r.out, "<testsuites name=\"npusim compare\" tests=\"3\" failures=\"1\">\n"));
  CHECK(has(r.out, "    <testcase classname=\"npusim.compare\" name=\"status\"/>\n"
                   "    <testcase classname=\"npusim.compare\" name=\"device_wall_ns\">\n"
                   "      <failure type=\"regression\" message=\"device_wall_ns: 100000 -&gt; 101000 ns (+1.00%), "
                   "REGRESSION &gt; +0%\"/>\n"
                   "    </testcase>\n"
                   "    <testcase classname=\"npusim.compare\" name=\"makespan_ns\"/>\n"
                   "    <system-out>figure  "));
  CHECK(!has(r.out, "name=\"scheduling_window_ns\""));  // reported, not a gate
}
