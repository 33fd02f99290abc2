// The time series and the critical path of `npusim report` (docs/outputs.md
// "npusim report"). The series are read from the run's outputs beside
// summary.json: task_stats.csv (milestones per task) and
// chip_swimlane_records.json (every block's core and kernel time), each plain
// or NAME.gz (--compress) or absent (turned off: the chart says which output
// it needs and how to turn it on). The critical path is summary.json's own
// (critical_path, sim/record/critical_path.h).
//
// Series are binned over the makespan (first kernel start to last kernel end,
// as summary.json's makespan_ns): each bin holds the time-weighted mean of
// the count (busy cores, ready tasks) over the bin, so the sum of a
// utilisation series' bins times the bin width is the busy time summary.json
// reports (to the swimlane's 20 ns counter resolution).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::report {

// One output of a run, read whole: the file's path and its (decompressed) text.
struct RunOutput {
  std::string path, text;
};

// RUN_DIR/NAME or RUN_DIR/NAME.gz read whole (zlib takes both); nullopt when
// neither exists. InputError (naming the file) when it cannot be read or its
// text exceeds `max_bytes`.
std::optional<RunOutput> read_run_output(const std::string& run_dir, const std::string& name,
                                         std::uint64_t max_bytes);

// A half-open time interval [from, to) in ns.
struct Interval {
  double from = 0, to = 0;
};

// For `bins` equal bins of [t0, t0 + span): the time-weighted mean number of
// `intervals` covering the bin (clipped to the window).
std::vector<double> mean_cover(const std::vector<Interval>& intervals, double t0, double span, int bins);

// One task of task_stats.csv; a time that never came is NaN.
struct TaskRow {
  std::uint64_t id = 0;
  std::string task, kernel;
  double ready = 0, dispatch = 0, start = 0, end = 0, complete = 0;
};

// task_stats.csv's rows (RFC 4180, columns by header name). InputError
// (file, "line N", ...) on a malformed file.
std::vector<TaskRow> parse_task_stats(const std::string& text, const std::string& file);

// The page's sections drawn from those outputs (HTML with inline SVG).
std::string series_sections(const std::string& run_dir, const nlohmann::json& summary);

}  // namespace npusim::report
