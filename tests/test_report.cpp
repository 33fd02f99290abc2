// `npusim report` (docs/outputs.md, "npusim report"): the page from a
// hand-written summary (numbers, scale of the bars, escaping, determinism),
// a summary.json.gz read as the plain one, and the input errors. The page in
// a browser: tests/report/report_browser.py (ctest report:browser).
#include "tests/catch.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "models/common/errors.h"
#include "sim/report/report.h"
#include "sim/report/report_chart.h"
#include "sim/report/report_series.h"
#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using npusim::report::report_html;

namespace {

json hand_summary() {
  return json::parse(R"({
    "npusim_summary": 1, "trace": "t<1>", "platform": "a2a3", "status": "ok",
    "device_wall_ns": 1234567.0, "makespan_ns": 1000.5, "scheduling_window_ns": 900.0,
    "tasks": {"submitted": 3, "completed": 3, "blocks_dispatched": 4},
    "error": null,
    "run": {"runtime": "tensormap_and_ringbuffer", "ring_task_window": [16, 16], "ring_heap": [4096, 4096],
            "ring_dep_pool": [8, 8]},
    "kernels": {"A": {"core_busy_ns": 300.0, "tasks": 1}, "B": {"core_busy_ns": 600.0, "tasks": 2}},
    "figures": {
      "core_types": {"aic": {"cores": 2, "busy_ns": 500.0, "utilisation": 0.25}},
      "sched_phases": {"0": {"phase_ns": 100.0, "shares": {"complete": 0.75, "dispatch": 0.25}}},
      "ring_peaks": {"1": {"task_slots": 4, "heap_bytes": 4096, "dep_pool": 2}}
    }})");
}

using cli::has;

}  // namespace

TEST_CASE("report: the page shows summary.json's numbers, with their pointers, and bars to scale", "[report]") {
  const std::string page = report_html(hand_summary(), "t<1>");
  CHECK(has(page, "<title>npusim report: t&lt;1&gt;</title>"));  // escaped
  // Times in the unit that keeps them short (ns below 10 us, us, ms, s), 3 decimals above ns.
  CHECK(has(page, R"(data-key="/device_wall_ns" data-value="1234567.0">1,234.567 us</span>)"));
  CHECK(has(page, R"(data-key="/makespan_ns" data-value="1000.5">1000.500 ns</span>)"));
  CHECK(has(page, R"(data-key="/figures/core_types/aic/utilisation" data-value="0.25">25.00%</span>)"));
  CHECK(has(page, R"(data-key="/figures/sched_phases/0/shares/complete" data-value="0.75">75.00%</span>)"));
  // Bar area 440 px: utilisation 0.25 -> 110 px; complete 0.75 -> 330 px then dispatch from x = 170 + 330.
  CHECK(has(page, R"(<rect class="bar" x="170.0" y="9.0" width="110.0")"));
  CHECK(has(page, R"(<rect class="bar seg" x="170.0" y="9.0" width="330.0")"));
  CHECK(has(page, R"(<rect class="bar seg" x="500.0" y="9.0" width="110.0")"));
  // Ring 1's peaks against run.ring_*[1]: 4 of 16 slots, the whole heap, 2 of 8 entries.
  CHECK(has(page, R"(data-key="/run/ring_heap/1" data-value="4096">4,096 B</span></td><td>100.00%)"));
  CHECK(has(page, R"(data-key="/run/ring_task_window/1" data-value="16">16</span></td><td>25.00%)"));
  // Top kernels: B (600) before A (300), B's bar full width, A's half.
  CHECK(page.find("data-key=\"/kernels/B/core_busy_ns\"") < page.find("data-key=\"/kernels/A/core_busy_ns\""));
  CHECK(has(page, R"(width="440.0" height="16" fill="#4e79a7"><title>B: 600 ns)"));
  CHECK(has(page, R"(width="220.0" height="16" fill="#4e79a7"><title>A: 300 ns)"));
  CHECK(has(page, "(core_busy_ns); the 2 largest of 2.</p>"));
  CHECK_FALSE(has(page, "id=\"failure\""));
  CHECK(page == report_html(hand_summary(), "t<1>"));  // deterministic
}

TEST_CASE("report: a failed run's page shows the error, both logs and the diagnosis", "[report]") {
  json s = hand_summary();
  s["status"] = "error";
  s["error"] = json::parse(R"J({"name": "HEAP_RING_DEADLOCK", "orch_error_code": 2, "message": "m",
    "host_log": ["h1", "h<2>"], "device_log": [], "diagnosis": {"explanation": ["e1", "e2"],
    "enough": {"option": "ring_heap=[2048] (--ring-heap 2048)"}}})J");
  s.erase("figures");
  const std::string page = report_html(s, "t");
  CHECK(has(page, "<span id=\"error-name\">HEAP_RING_DEADLOCK</span>"));
  CHECK(has(page, "<pre id=\"host-log\">h1\nh&lt;2&gt;\n</pre>"));
  CHECK(has(page, "<p id=\"device-log\" class=\"none\">(none)</p>"));
  CHECK(has(page, "<pre id=\"diagnosis\">e1\ne2\n</pre>"));
  CHECK(has(page, "<code>ring_heap=[2048] (--ring-heap 2048)</code>"));
  CHECK(has(page, R"(data-key="/error/orch_error_code" data-value="2">2</span>)"));
  // No figures: the charts say so instead of drawing bars.
  CHECK(has(page, "id=\"chart-core-utilisation\""));
  CHECK(has(page, "<text x=\"10.0\" y=\"24.0\" class=\"empty\">no data in summary.json</text>"));
  CHECK(has(page, "class=\"empty\">no scheduler phase records in summary.json</text>"));
}

TEST_CASE("report: the verdict, the findings and the diagnosis come before the logs", "[report]") {
  json s = hand_summary();
  s["status"] = "error";
  s["error"] = json::parse(R"J({"name": "HEAP_RING_DEADLOCK", "orch_error_code": 2, "host_code": 507018,
    "message": "m", "host_log": ["h1"], "device_log": ["d1", "d2"], "diagnosis": {"explanation": ["e1"]},
    "device_time_ns": 832849241.961})J");
  s["figures"]["overhead"] = json::parse(R"({"oh_has_overhead": {"ns": 300.0, "pct": 30.0}})");
  const std::string page = report_html(s, "t");
  const auto at = [&](const std::string& what) { return page.find(what); };
  CHECK(has(page, "<p id=\"verdict\" class=\"status-error\">Failed: HEAP_RING_DEADLOCK: m (npusim's diagnosis below).</p>"));
  CHECK(at("id=\"verdict\"") < at("id=\"findings\"") + 100);
  CHECK(at("id=\"findings\"") < at("id=\"diagnosis\""));
  CHECK(at("id=\"diagnosis\"") < at("id=\"host-log\""));
  CHECK(at("id=\"host-log\"") < at("id=\"device-log\""));
  CHECK(at("id=\"diagnosis\"") < at("id=\"run\""));
  // The logs are folded, with their line counts.
  CHECK(has(page, "<details><summary>Device log, AICPU (2 lines)</summary>\n<pre id=\"device-log\">d1\nd2\n</pre>"));
  // Codes as codes; a time at ms scale in ms.
  CHECK(has(page, R"(data-key="/error/host_code" data-value="507018">507018</span>)"));
  CHECK(has(page, R"(data-key="/error/device_time_ns" data-value="832849241.961">832.849 ms</span>)"));
  // Findings: ring 1's heap at 100% of its capacity (red, in the box and the
  // chart), scheduler-bound as sched_overhead_analysis.py says it (>= 25%).
  CHECK(has(page, "<li class=\"finding alert\">ring 1 heap near capacity: peak 4,096 B of 4,096 B (100.00%): a "
                  "larger program or a smaller ring fails here (--ring-heap, docs/rings.md)</li>"));
  CHECK_FALSE(has(page, "ring 1 task slots near capacity"));  // 4 of 16
  CHECK(has(page, R"(<rect class="bar alert" x="170.0")"));
  CHECK(has(page, "<li class=\"finding\" id=\"bound\">SCHEDULER-BOUND: a free core has ready, undispatched work "
                  "for much of the makespan (every working engine starved 30.00% of the window"));
  // aic busy 25%: not core-bound; at 90% it is.
  CHECK(has(page, "<li class=\"finding\" id=\"cores\">cores busy over the makespan: aic 25.00%</li>"));
  s["figures"]["core_types"]["aic"]["utilisation"] = 0.9;
  CHECK(has(report_html(s, "t"), "id=\"cores\">cores busy over the makespan: aic 90.00%; CORE-BOUND on aic (busy "
                                 "90.00% of the makespan or more"));
    // The critical path's kernel share and its largest other part.
  s["critical_path"] = json::parse(R"({"span_ns": 1000.0, "parts_ns": {"kernel": 600.0, "sched_overhead": 50.0,
      "core_wait": 300.0, "producer_wait": 50.0, "orchestrator": 0.0}})");
  CHECK(has(report_html(s, "t"), "<li class=\"finding\">critical path: kernel time 60.00% of the makespan; the "
                                 "largest other part waiting for a core 300 ns (30.00%)"));
  s["figures"]["overhead"]["oh_has_overhead"]["pct"] = 8.0;
  CHECK(has(report_html(s, "t"), "id=\"bound\">PARTIALLY SCHEDULER-LIMITED"));
  s["figures"]["overhead"]["oh_has_overhead"]["pct"] = 7.99;
  CHECK(has(report_html(s, "t"), "id=\"bound\">COMPUTE/DEPENDENCY-BOUND"));
}

TEST_CASE("report: times read in ns, us, ms or s with separators", "[report]") {
  using npusim::report::human;
  using npusim::report::Unit;
  CHECK(human(0, Unit::kNs) == "0 ns");
  CHECK(human(9999, Unit::kNs) == "9,999 ns");
  CHECK(human(12.5, Unit::kNs) == "12.500 ns");
  CHECK(human(10000, Unit::kNs) == "10.000 us");
  CHECK(human(50419, Unit::kNs) == "50.419 us");
  CHECK(human(9999999, Unit::kNs) == "9,999.999 us");
  CHECK(human(35427102, Unit::kNs) == "35.427 ms");
  CHECK(human(832849241.961, Unit::kNs) == "832.849 ms");
  CHECK(human(12345678901, Unit::kNs) == "12.346 s");
  CHECK(human(1e13, Unit::kNs) == "10,000.000 s");
  CHECK(human(507018, Unit::kCode) == "507018");
  CHECK(human(507018, Unit::kCount) == "507,018");
  CHECK(human(std::nan(""), Unit::kNs) == "n/a");
}

TEST_CASE("report: a legend wraps into rows that fit the chart", "[report]") {
  using npusim::report::legend_layout;
  // Each entry takes 30 px and 7 px a character: 100 px for a 10-character label.
  const auto l = legend_layout({"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc", "d"}, 10, 260);
  REQUIRE(l.size() == 4);
  CHECK(l[0].x == 10);
  CHECK(l[0].row == 0);
  CHECK(l[1].x == 110);
  CHECK(l[1].row == 0);
  CHECK(l[2].x == 10);  // 210 + 100 > 260: the next row
  CHECK(l[2].row == 1);
  CHECK(l[3].x == 110);
  CHECK(l[3].row == 1);
  // An entry wider than the chart gets a row of its own, never an empty one before it.
  const auto wide = legend_layout({std::string(100, 'x')}, 10, 260);
  CHECK(wide[0].row == 0);
}

TEST_CASE("report: summary.json.gz is read as the plain summary", "[report][cli]") {
  const fs::path dir = cli::scratch("report_gz");
  fs::create_directories(dir);
  const std::string text = hand_summary().dump(2);
  gzFile f = gzopen((dir / "summary.json.gz").c_str(), "wb");
  REQUIRE(f);
  REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  gzclose(f);
  CHECK(npusim::report::read_run_summary(dir.string()) == hand_summary());
  const fs::path page = cli::scratch("report_gz.html");
  const cli::Result r = cli::npusim("report '" + dir.string() + "' -o '" + page.string() + "'");
  CHECK(r.status == 0);
  // The page: the summary's sections and the series, which say what they need.
  CHECK(cli::slurp(page) ==
        report_html(hand_summary(), "t<1>", npusim::report::series_sections(dir.string(), hand_summary())));
  CHECK(cli::has(cli::slurp(page), "needs task_stats.csv"));
}

TEST_CASE("report: input errors are exit 2 with the folder named, nothing written", "[report][cli]") {
  const fs::path page = cli::scratch("report_err.html");
  const fs::path dir = cli::scratch("report_err");
  fs::create_directories(dir);
  auto report = [&](const fs::path& d, const fs::path& out) {
    return cli::npusim("report '" + d.string() + "' -o '" + out.string() + "'");
  };
  cli::Result r = report(dir / "missing", page);
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (dir / "missing").string() +
                     ": no such folder (expected the --out folder of an npusim run)\n");
  r = report(dir, page);
  CHECK(r.status == 2);
  CHECK(cli::has(r.err, (dir).string() + ": no summary.json in this folder"));
  // A summary.json that is a folder is named as such (was "no summary.json in this folder").
  fs::create_directories(dir / "summary.json");
  r = report(dir, page);
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (dir / "summary.json").string() + ": is a folder, not a JSON file\n");
  fs::remove(dir / "summary.json");
  cli::write_file(dir / "summary.json", "{\"status\": \"ok\"}");
  r = report(dir, page);
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (dir / "summary.json").string() +
                     ": at /npusim_summary: expected a summary.json written by npusim run (\"npusim_summary\": 1)\n");
  cli::write_file(dir / "summary.json", hand_summary().dump());
  r = report(dir, dir / "report.html");  // inside the run's folder
  CHECK(r.status == 2);
  CHECK(cli::has(r.err, "the page would go inside the run's folder"));
  CHECK_FALSE(fs::exists(page));
  CHECK_FALSE(fs::exists(dir / "report.html"));
  r = report(dir, page);
  CHECK(r.status == 0);
  CHECK(r.out == "npusim report: wrote " + page.string() + "\n");
}

// ---------------------------------------------------------------- series (report_series.h)

using npusim::report::Interval;
using npusim::report::mean_cover;
using npusim::report::parse_task_stats;
using npusim::report::series_sections;

namespace {

// "v v v ..." as a polyline's data-bins: `n` times `v`.
std::string repeated(const std::string& v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? " " : "") + v;
  return s;
}

// A hand-made run: t0 A on the cube core 0 [100, 700), t2 C on vector core 2
// [200, 400), t1 B on vector core 1 [740, 1300) consuming t0 and t2. The
// makespan is 1200 ns, so the 120 bins are 10 ns each. Swimlane counter at
// 1 GHz (one cycle a ns), base 1,000,000.
fs::path hand_run(const std::string& name) {
  const fs::path dir = cli::scratch(name);
  fs::create_directories(dir);
  cli::write_file(dir / "summary.json", hand_summary().dump());
  cli::write_file(dir / "task_stats.csv",
        "task_id,task,kind,kernel,func_id,ring,block_num,dispatch_ops,staged_blocks,submit_ns,ready_ns,"
        "first_dispatch_ns,first_release_ns,first_start_ns,last_start_ns,last_end_ns,complete_ns\n"
        "0,t0,kernel,A,0,0,1,1,0,10,50,80,80,100,100,700,702\n"
        "2,t2,kernel,\"C, \"\"odd\"\"\",2,0,1,1,0,30,150,160,160,200,200,400,402\n"
        "1,t1,kernel,B,1,0,1,1,0,20,705,725,725,740,740,1300,1302\n");
  cli::write_file(dir / "chip_swimlane_records.json",
        R"({"chip_swimlane_level": 1, "metadata": {"clock_freq_hz": 1000000000, "num_cores": 3,
            "core_types": ["aic", "aiv", "aiv"]},
            "aicore_tasks": [[0, 0, 1, 1000100, 1000700, 0], [2, 2, 1, 1000200, 1000400, 0],
                             [1, 1, 1, 1000740, 1001300, 0]], "aicpu_tasks": []})");
  cli::write_file(dir / "deps.json", R"({"tasks": [], "tensors": [], "edges": [{"pred": "0", "succ": "1", "arg": 0},
                                {"pred": "2", "succ": "1", "arg": 1}]})");
  fs::create_directories(dir / "scope_stats");
  cli::write_file(dir / "scope_stats" / "scope_stats.jsonl",
        R"({"version": 6, "fatal": false, "dropped": 0, "total": 2, "task_window_max": [16, 16, 16, 16], )"
        R"("heap_max": [4096, 4096, 4096, 4096], "dep_pool_max": [8, 8, 8, 8], "tensormap_max": 64})"
        "\n"
        R"({"site": "s:1", "phase": "begin", "depth": 0, "ring": 0, "task_window_start": 0, "task_window_end": 0, )"
        R"("heap_start": 0, "heap_end": 0, "dep_pool_start": 1, "dep_pool_end": 1, "tensormap": 0})"
        "\n"
        R"({"site": "s:1", "phase": "end", "depth": 0, "ring": 0, "task_window_start": 0, "task_window_end": 3, )"
        R"("heap_start": 0, "heap_end": 1024, "dep_pool_start": 1, "dep_pool_end": 2, "tensormap": 1})"
        "\n");
  return dir;
}

}  // namespace

TEST_CASE("report series: mean_cover is the time-weighted count per bin", "[report]") {
  // [0, 15) and [5, 10) over [0, 20) in 4 bins of 5.
  CHECK(mean_cover({{0, 15}, {5, 10}}, 0, 20, 4) == std::vector<double>{1, 2, 1, 0});
  // Clipped to the window [10, 30); half a bin covered is 0.5.
  CHECK(mean_cover({{0, 12.5}, {27.5, 40}}, 10, 20, 4) == std::vector<double>{0.5, 0, 0, 0.5});
  CHECK(mean_cover({{3, 3}}, 0, 20, 2) == std::vector<double>{0, 0});  // empty interval
}

TEST_CASE("report series: a hand-made run's bins and critical path", "[report]") {
  const fs::path dir = hand_run("report_series");
  const std::string s = series_sections(dir.string(), hand_summary());
  // Utilisation: the cube core busy in bins 0..59 ([100, 700)); vector cores
  // in bins 10..29 (t2) and 64..119 (t1), one core of two.
  CHECK(has(s, R"X(data-series="aic (1 cores)" data-bins=")X" + repeated("1.000", 60) + " " + repeated("0.000", 60)));
  CHECK(has(s, R"X(data-series="aiv (2 cores)" data-bins=")X" + repeated("0.000", 10) + " " + repeated("1.000", 20) +
                   " " + repeated("0.000", 34) + " " + repeated("1.000", 56) + "\""));
  // Ready queue: t2 waits [150, 160) = bin 5; t1 waits [705, 725) = half of
  // bin 60, bin 61, half of bin 62; t0's wait is before the makespan.
  CHECK(has(s, R"(data-series="aic" data-bins=")" + repeated("0.000", 120) + "\""));
  CHECK(has(s, R"(data-series="aiv" data-bins=")" + repeated("0.000", 5) + " 1.000 " + repeated("0.000", 54) +
                   " 0.500 1.000 0.500 " + repeated("0.000", 57) + "\""));
  // Critical path: the hand summary has none (a run at --swimlane-level 0).
  CHECK(has(s, "class=\"empty\">no critical path in summary.json: it needs the run&apos;s records"));
  // With summary.json's critical_path: t0 A [100, 700), t1 B waits for it
  // 5 ns, 35 ns of scheduler overhead, runs [740, 1300).
  json with_path = hand_summary();
  with_path["makespan_ns"] = 1200.0;
  with_path["critical_path"] = json::parse(R"({"from_ns": 100.0, "to_ns": 1300.0, "span_ns": 1200.0, "tasks": 2,
      "parts_ns": {"kernel": 1160.0, "sched_overhead": 35.0, "core_wait": 0.0, "producer_wait": 5.0,
                   "orchestrator": 0.0},
      "steps_omitted": 0,
      "steps": [{"task": "t0", "task_id": 0, "kind": "kernel", "kernel": "A", "from_ns": 100.0, "to_ns": 700.0,
                 "segments": [{"part": "kernel", "from_ns": 100.0, "to_ns": 700.0}]},
                {"task": "t1", "task_id": 1, "kind": "kernel", "kernel": "B", "from_ns": 700.0, "to_ns": 1300.0,
                 "segments": [{"part": "producer_wait", "from_ns": 700.0, "to_ns": 705.0},
                              {"part": "sched_overhead", "from_ns": 705.0, "to_ns": 740.0},
                              {"part": "kernel", "from_ns": 740.0, "to_ns": 1300.0}]}]})");
  const std::string q = series_sections(dir.string(), with_path);
  CHECK(has(q, "<p id=\"path-length\">2 tasks from t0 to t1: the path covers 1,200 ns (100.00%), from 100 ns to "
               "1,300 ns; kernel 1,160 ns (96.67%), waiting for a producer 5 ns (0.42%), waiting for a core 0 ns "
               "(0.00%), scheduler overhead 35 ns (2.92%), orchestrator-bound 0 ns (0.00%); makespan 1,200 ns.</p>"));
  CHECK(has(q, "<tr><td>t1</td><td>B</td><td>560 ns</td><td>5 ns</td><td>-</td><td>35 ns</td><td>-</td>"
               "<td>1,300 ns</td></tr>"));
  // Bar area 440 px over the listed steps [100, 1300): t1's kernel from x = 170 + 640 * 440 / 1200.
  CHECK(has(q, R"(<rect class="bar" data-part="kernel" x="404.7" y="64.0" width="205.3")"));
  // A malformed time is an input error naming the summary and the pointer.
  with_path["critical_path"]["parts_ns"]["kernel"] = -1.0;
  CHECK_THROWS_WITH(series_sections(dir.string(), with_path),
                    Catch::Contains("/critical_path/parts_ns/kernel: expected a time in ns >= 0, found -1.0"));
  // Ring occupancy: the scope-stats plot of the run's records, as a chart of the page.
  CHECK(has(s, R"(<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="chart-ring-occupancy" width="960")"));
  CHECK(has(s, "ring 0: task window 16 slots, heap "));
  CHECK(s == series_sections(dir.string(), hand_summary()));  // deterministic

  // The quoted kernel name is read whole.
  const auto rows = parse_task_stats(cli::slurp(dir / "task_stats.csv"), "task_stats.csv");
  REQUIRE(rows.size() == 3);
  CHECK(rows[1].kernel == "C, \"odd\"");

  // Without the swimlane and deps.json: the charts say what they need; the
  // ready queue counts every task together.
  fs::remove(dir / "chip_swimlane_records.json");
  fs::remove(dir / "deps.json");
  fs::remove_all(dir / "scope_stats");
  const std::string t = series_sections(dir.string(), hand_summary());
  CHECK(has(t, "class=\"empty\">needs chip_swimlane_records.json (or chip_swimlane_records.json.gz), which this run "
               "did not write: written at --swimlane-level 1 or more (default 3)</text>"));
  CHECK(has(t, "class=\"empty\">needs scope_stats/scope_stats.jsonl (or scope_stats/scope_stats.jsonl.gz), which "
               "this run did not write: written unless npusim run is given --no-scope-stats</text>"));
  CHECK(has(t, R"(data-series="all" data-bins=")" + repeated("0.000", 5) + " 1.000 "));
  fs::remove(dir / "task_stats.csv");
  CHECK(has(series_sections(dir.string(), hand_summary()),
            "needs task_stats.csv (or task_stats.csv.gz), which this run did not write: written unless npusim run is "
            "given --no-task-stats"));
}

TEST_CASE("report series: a malformed task_stats.csv is an input error naming the line", "[report]") {
  CHECK_THROWS_WITH(parse_task_stats("task_id,task\n1,t1\n", "f.csv"), Catch::Contains("expected a column kernel"));
  const std::string head =
      "task_id,task,kernel,ready_ns,first_dispatch_ns,first_start_ns,last_end_ns,complete_ns\n";
  CHECK_THROWS_WITH(parse_task_stats(head + "1,t1,A,1,2,3,x,5\n", "f.csv"),
                    Catch::Contains("expected a time in ns in column last_end_ns, found \"x\""));
  CHECK_THROWS_WITH(parse_task_stats(head + "1,t1,A,1\n", "f.csv"), Catch::Contains("expected 8 fields, found 4"));
  // Before, nan, inf and negative times were taken (and drawn).
  for (const char* t : {"nan", "inf", "-5", "1e400"})
    CHECK_THROWS_WITH(parse_task_stats(head + "1,t1,A,1,2,3," + t + ",5\n", "f.csv"),
                      Catch::Contains("line 2: expected a time in ns in column last_end_ns, found \"" +
                                      std::string(t) + "\""));
  // A record of 10 million commas was 10 million strings (a 100 MB line took
  // 4.3 GB and 28 s): now refused once it has more fields than the header.
  const std::string commas(10'000'000, ',');
  CHECK_THROWS_WITH(parse_task_stats(head + "1,t1,A,1,2,3,4,5\n" + commas + "\n", "f.csv"),
                    Catch::Contains("f.csv: at line 3: expected 8 fields, found more"));
  CHECK_THROWS_WITH(parse_task_stats(commas + "\n", "f.csv"),
                    Catch::Contains("at line 1: expected task_stats.csv's header line, found more than 4096 columns"));
  CHECK_THROWS_WITH(parse_task_stats("", "f.csv"), Catch::Contains("expected task_stats.csv's header line"));
  CHECK(parse_task_stats(head + "1,t1,A,1,2,3,,5\n", "f.csv").size() == 1);
}

TEST_CASE("report series: a --compress gzip run's outputs are read as the plain ones", "[report][cli]") {
  fs::path plain, packed;
  REQUIRE(cli::run("traces/chain.json --quiet", "report_chain_plain", plain).status == 0);
  REQUIRE(cli::run("traces/chain.json --quiet --compress gzip", "report_chain_gz", packed).status == 0);
  REQUIRE(fs::exists(packed / "task_stats.csv.gz"));
  REQUIRE(fs::exists(packed / "deps.json.gz"));
  const json summary = cli::load(plain / "summary.json");
  const std::string s = series_sections(packed.string(), summary);
  CHECK(s == series_sections(plain.string(), summary));
  CHECK(has(s, "<p id=\"path-length\">8 tasks from t0 to t7: the path covers "));
  CHECK_FALSE(has(s, "class=\"empty\""));
}
