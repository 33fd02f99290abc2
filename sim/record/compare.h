// `npusim compare BASELINE.json CURRENT.json [--tolerance PCT]`: compares two
// summary.json files (spec/cli-and-outputs.md) for timing regressions.
#pragma once

#include <ostream>
#include <string>

#include "models/common/errors.h"

namespace npusim::record {

// Exit status of a comparison that found a regression.
constexpr int kCompareRegression = 3;

// Compares device_wall_ns, makespan_ns and scheduling_window_ns. A metric
// regresses if current > baseline x (1 + tolerance_pct / 100); a status change
// from "ok" to "error" is a regression too. Metrics are compared only when both
// runs are "ok" (an "error" summary may give null for them).
//
// Prints a table (metric, baseline, current, delta %, verdict) and a last line
// `compare: OK` or `compare: REGRESSION (n metrics beyond +X%)`, to which
// `, status ok -> error` is appended when the status regressed.
// Returns 0 when OK, kCompareRegression on a regression. Throws InputError for
// a missing or unreadable file, a missing key or a value of the wrong type
// (naming the file and the key), and for a negative tolerance.
// Summaries of different runs (another trace, platform or run option, the
// seed included) are an InputError naming the first difference, unless
// `allow_different`.
int compare_summaries(const std::string& baseline_path, const std::string& current_path,
                      double tolerance_pct, std::ostream& out, bool allow_different = false);

}  // namespace npusim::record
