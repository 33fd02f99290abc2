// The time series and the critical path of `npusim report` (issue 14 item 4,
// docs/outputs.md "npusim report"), read from the run's outputs beside
// summary.json: task_stats.csv (milestones per task), chip_swimlane_records.json
// (every block's core and kernel time) and deps.json (edges). Each may be
// NAME.gz (--compress) or absent (turned off): a chart whose output is
// missing says which output it needs and how to turn it on.
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

namespace npusim::record {

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

// One task on the critical path, in time order.
struct PathStep {
  std::size_t row = 0;  // index into the task rows
  double wait_ns = 0;   // its producer's end (the path's previous step) to its ready time
  double queue_ns = 0;  // ready to first dispatch
  double launch_ns = 0; // first dispatch to first kernel start
  double run_ns = 0;    // first kernel start to last kernel end
};

// The critical path: from the task whose last kernel ends last, back through
// the producer (deps.json edges, pred -> succ) that ended last, ties to the
// lower task id. Tasks without kernel time are skipped as ends.
std::vector<PathStep> critical_path(const std::vector<TaskRow>& rows,
                                    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& edges);

// The page's sections drawn from those outputs (HTML with inline SVG).
std::string series_sections(const std::string& run_dir, const nlohmann::json& summary);

}  // namespace npusim::record
