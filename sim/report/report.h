// `npusim report RUN_DIR -o report.html`: the page a person opens after a
// run (issue 14, docs/outputs.md "npusim report"). One self-contained HTML
// file: inline CSS, inline SVG charts, one small inline script (it records a
// script error, if any, and the number of charts drawn, for the browser
// test); nothing is fetched.
//
// From RUN_DIR/summary.json (or summary.json.gz): the run's
// header, core-type utilisation, the scheduler phase split per thread, ring
// peaks against the run's ring sizes, the top kernels by core time, the
// latency and overhead figures, and the failure with the device's logs and
// npusim's diagnosis when the status is not ok. Every number the page shows
// from the summary carries its JSON pointer and the exact value
// (`data-key`, `data-value`), so a reader or a test can check it. The time
// series and the critical path come from the run's other outputs
// (report_series.h).
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace npusim::report {

// The page for a parsed summary.json; `title` names the run (its folder);
// `series` is the time-series and critical-path sections from the run's
// other outputs (series_sections, report_series.h), placed after the
// core-type totals. Deterministic.
std::string report_html(const nlohmann::json& summary, const std::string& title, const std::string& series = "");

// RUN_DIR's summary.json (plain, or summary.json.gz), parsed. InputError when
// the folder is missing, holds no summary, or the summary is not npusim's.
nlohmann::json read_run_summary(const std::string& run_dir);

// The subcommand: writes the page to `out_path`, says so on `out`.
// Returns 0; throws InputError (exit 2, nothing written).
int report_command(const std::string& run_dir, const std::string& out_path, std::ostream& out);

}  // namespace npusim::report
