// `npusim compare BASELINE.json CURRENT.json [--tolerance PCT]
// [--tolerance-for NAME=PCT]... [--allow-different]`: compares two
// summary.json files (spec/cli-and-outputs.md) figure by figure
// (docs/outputs.md, "compare").
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/common/errors.h"

namespace npusim::record {

// Exit status of a comparison that found a regression.
constexpr int kCompareRegression = 3;

struct CompareOptions {
  // The tolerance of the three times (device_wall_ns, makespan_ns,
  // scheduling_window_ns), percent of the baseline.
  double tolerance_pct = 0;
  // "NAME=PCT": the tolerance of every figure whose dotted name is NAME or
  // starts with NAME + "." (the longest NAME wins); overrides the table.
  std::vector<std::string> tolerance_for;
  // Compare summaries of different traces, platforms or run options.
  bool allow_different = false;
};

// Compares the three times and every number under `figures`, each named by
// its dotted path (figures.core_types.aic.utilisation), against the
// tolerance of its name (the table in docs/outputs.md): a figure regresses
// when it moved in its bad direction (a time growing, utilisation falling;
// for a figure without one, either way) by more than its tolerance, a
// percentage of the baseline. A status change from "ok" to "error" is a
// regression too. Figures are compared only when both runs are "ok".
//
// Prints a table of the times and of every figure that moved (baseline,
// current, delta, delta %, verdict), then `compare: OK...` or
// `compare: REGRESSION (n figures beyond tolerance: NAMES...)`.
// Returns 0 when OK, kCompareRegression on a regression. Throws InputError
// for a missing or unreadable file, a missing key or a value of the wrong
// type (naming the file and the key), a negative tolerance, a malformed or
// unknown --tolerance-for (with the closest known name), and, unless
// `allow_different`, for summaries of different runs (another trace,
// platform or run option, the seed included), naming the first difference.
// Every number in `v` named by its dotted path under `name`
// ("figures.core_types.aic.utilisation"; an array's entries by their
// index), in document order; null, strings and booleans are left out.
// The columns of `npusim sweep` (docs/sweeps.md).
void flatten_numbers(const std::string& name, const nlohmann::json& v,
                     std::vector<std::pair<std::string, double>>& out);

int compare_summaries(const std::string& baseline_path, const std::string& current_path,
                      const CompareOptions& options, std::ostream& out);

}  // namespace npusim::record
