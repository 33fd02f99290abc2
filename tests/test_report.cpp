// `npusim report` (docs/outputs.md, "npusim report"): the page from a
// hand-written summary (numbers, scale of the bars, escaping, determinism),
// a summary.json.gz read as the plain one, and the input errors. The page in
// a browser: tests/report/report_browser.py (ctest report:browser).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "models/common/errors.h"
#include "sim/record/report.h"
#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using npusim::record::report_html;

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

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

}  // namespace

TEST_CASE("report: the page shows summary.json's numbers, with their pointers, and bars to scale", "[report]") {
  const std::string page = report_html(hand_summary(), "t<1>");
  CHECK(has(page, "<title>npusim report: t&lt;1&gt;</title>"));  // escaped
  CHECK(has(page, R"(data-key="/device_wall_ns" data-value="1234567.0">1,234,567 ns</span>)"));
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

TEST_CASE("report: summary.json.gz is read as the plain summary", "[report][cli]") {
  const fs::path dir = cli::scratch("report_gz");
  fs::create_directories(dir);
  const std::string text = hand_summary().dump(2);
  gzFile f = gzopen((dir / "summary.json.gz").c_str(), "wb");
  REQUIRE(f);
  REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  gzclose(f);
  CHECK(npusim::record::read_run_summary(dir.string()) == hand_summary());
  const fs::path page = cli::scratch("report_gz.html");
  const cli::Result r = cli::npusim("report '" + dir.string() + "' -o '" + page.string() + "'");
  CHECK(r.status == 0);
  CHECK(cli::slurp(page) == report_html(hand_summary(), "t<1>"));
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
  write(dir / "summary.json", "{\"status\": \"ok\"}");
  r = report(dir, page);
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (dir / "summary.json").string() +
                     ": at /npusim_summary: expected a summary.json written by npusim run (\"npusim_summary\": 1)\n");
  write(dir / "summary.json", hand_summary().dump());
  r = report(dir, dir / "report.html");  // inside the run's folder
  CHECK(r.status == 2);
  CHECK(cli::has(r.err, "the page would go inside the run's folder"));
  CHECK_FALSE(fs::exists(page));
  CHECK_FALSE(fs::exists(dir / "report.html"));
  r = report(dir, page);
  CHECK(r.status == 0);
  CHECK(r.out == "npusim report: wrote " + page.string() + "\n");
}
