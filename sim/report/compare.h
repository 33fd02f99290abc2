// `npusim compare BASELINE CURRENT [--tolerance PCT] [--tolerance-for
// NAME=PCT]... [--gate times|all] [--ring-threshold PCT] [--format F]
// [--allow-different]`: compares two summary.json files (or run folders,
// spec/cli-and-outputs.md) figure by figure (docs/outputs.md, "compare").
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/common/errors.h"

namespace npusim::report {

// Exit status of a comparison that found a regression.
constexpr int kCompareRegression = 3;

// What `compare` prints (--format).
enum class CompareFormat { text, json, markdown, junit };

// What may fail the comparison (--gate): the status, device_wall_ns and
// makespan_ns only, or every figure with a tolerance too.
enum class CompareGate { times, all };

struct CompareOptions {
  // The tolerance of the three times (device_wall_ns, makespan_ns,
  // scheduling_window_ns), percent of the baseline.
  double tolerance_pct = 0;
  // "NAME=PCT": the tolerance of every figure whose dotted name is NAME or
  // starts with NAME + "." (the longest NAME wins); overrides the table and
  // makes those figures gate, whatever --gate says.
  std::vector<std::string> tolerance_for;
  // Compare summaries of different traces, platforms or run options.
  bool allow_different = false;
  CompareGate gate = CompareGate::times;
  // A ring peak regresses (when figures gate) when it grew and now holds
  // more than this share of the ring's capacity, percent.
  double ring_threshold_pct = 80;
  CompareFormat format = CompareFormat::text;
};

// "5", "5%" or "5 %" -> 5: a percentage >= 0 given to `option`; InputError
// (command line, the option) otherwise.
double parse_percentage(const std::string& text, const std::string& option);

// "text", "json", "markdown", "junit"; InputError for another.
CompareFormat parse_compare_format(const std::string& text);
// "times", "all"; InputError for another.
CompareGate parse_compare_gate(const std::string& text);

// A summary.json, or a run folder (the --out of npusim run): its summary.json.
std::string summary_path(const std::string& path);

// Every number in `v` named by its dotted path under `name`
// ("figures.core_types.aic.utilisation"; an array's entries by their
// index), in document order; null, strings and booleans are left out.
// The columns of `npusim sweep` (docs/sweeps.md).
void flatten_numbers(const std::string& name, const nlohmann::json& v,
                     std::vector<std::pair<std::string, double>>& out);

// Compares the three times and every number under `figures`, each named by
// its dotted path (figures.core_types.aic.utilisation), against the
// tolerance of its name (the table in docs/outputs.md): a figure is beyond
// it when it moved in its bad direction (a time growing, utilisation
// falling; for a figure without one, either way) by more than its
// tolerance, a percentage of the baseline; a ring peak when it grew past
// ring_threshold_pct of the ring's capacity. Beyond is a regression for
// device_wall_ns and makespan_ns, for the others when `gate` is all, and for
// those --tolerance-for names; otherwise it is reported. A status change from "ok" to "error" is a
// regression too. Figures are compared only when both runs are "ok". A
// different npusim version, trace digest or platform digest (summary.json's
// `provenance`) is reported as a note.
//
// Prints (in `format`) the times and every figure that moved (baseline,
// current, unit, delta, delta %, verdict), the notes, then `compare: OK...`
// or `compare: REGRESSION (n figures beyond tolerance: NAMES...)`.
// Returns 0 when OK, kCompareRegression on a regression. Either path may be
// a run folder (summary_path). Throws InputError for a missing or
// unreadable file, a missing key or a value of the wrong type (naming the
// file and the key), a negative tolerance, a malformed or
// unknown --tolerance-for (with the closest known name), and, unless
// `allow_different`, for summaries of different runs (another trace,
// platform or run option, the seed included), naming the first difference.
int compare_summaries(const std::string& baseline_path, const std::string& current_path,
                      const CompareOptions& options, std::ostream& out);

}  // namespace npusim::report
