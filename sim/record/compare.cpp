#include "sim/record/compare.h"

#include <array>
#include <cmath>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <optional>

#include <nlohmann/json.hpp>

#include "sim/platform/json_input.h"

namespace npusim::record {
namespace {

using nlohmann::json;

constexpr std::array<const char*, 3> kMetrics = {"device_wall_ns", "makespan_ns",
                                                 "scheduling_window_ns"};

struct Summary {
  std::string status;  // "ok" or "error"
  std::array<std::optional<double>, kMetrics.size()> metrics;  // null only in an "error" summary
  json identity;       // what was run: trace, platform, run options (absent keys are not compared)
};

// What makes two summaries comparable: the same trace, platform and run
// options (the seed included: it changes sampled durations).
const char* const kIdentity[] = {"trace", "platform"};

std::string number_text(double v, const char* format = "%.15g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

Summary read_summary(const std::string& path) {
  json doc = json_input::read_file(path);
  if (!doc.is_object())
    throw InputError(path, "", "expected a summary.json object, found " + json_input::describe(doc));
  auto need = [&](const char* key) -> const json& {
    if (!doc.contains(key))
      throw InputError(path, json_input::child("", key),
                       std::string("missing key \"") + key + "\" (expected a summary.json written by npusim run)");
    return doc[key];
  };
  const json& version = need("npusim_summary");
  if (!version.is_number_integer() || version != 1)
    throw InputError(path, "/npusim_summary",
                     "expected 1 (the only summary format version), found " + json_input::describe(version));
  const json& status = need("status");
  if (!status.is_string() || (status != "ok" && status != "error"))
    throw InputError(path, "/status", "expected \"ok\" or \"error\", found " + json_input::describe(status));
  Summary s;
  s.status = status.get<std::string>();
  for (const char* k : kIdentity)
    if (doc.contains(k)) s.identity[k] = doc[k];
  if (doc.contains("run") && doc["run"].is_object()) s.identity["run"] = doc["run"];
  for (std::size_t i = 0; i < kMetrics.size(); ++i) {
    const json& v = need(kMetrics[i]);
    bool may_be_null = s.status == "error";
    if (v.is_null() && may_be_null) continue;
    if (!v.is_number() || v.get<double>() < 0)
      throw InputError(path, json_input::child("", kMetrics[i]),
                       std::string("expected a number >= 0") + (may_be_null ? " or null" : "") +
                           ", found " + json_input::describe(v));
    s.metrics[i] = v.get<double>();
  }
  return s;
}

// current > baseline x (1 + tol/100), evaluated without rounding the factor.
bool regressed(double baseline, double current, double tolerance_pct) {
  return (current - baseline) * 100.0 > tolerance_pct * baseline;
}

std::string delta_text(double baseline, double current) {
  if (baseline == 0) return current == 0 ? "+0.00%" : "n/a";
  const double pct = (current - baseline) / baseline * 100.0;
  // Beyond a million percent the digits say nothing: a power of ten does.
  return number_text(pct, std::fabs(pct) < 1e6 ? "%+.2f%%" : "%+.3g%%");
}

// "a summary of trace "b", the baseline's is of "a"" for the first key that
// differs, or "".
void check_same_run(const Summary& base, const Summary& cur, const std::string& current_path) {
  auto text = [](const json& v) { return v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump(); };
  for (const char* k : kIdentity) {
    if (!base.identity.contains(k) || !cur.identity.contains(k) || base.identity[k] == cur.identity[k]) continue;
    throw InputError(current_path, std::string("/") + k,
                     std::string("a summary of ") + k + " " + text(cur.identity[k]) + ", the baseline's is of " +
                         text(base.identity[k]) + ": --allow-different compares them anyway");
  }
  if (!base.identity.contains("run") || !cur.identity.contains("run")) return;
  const json& b = base.identity["run"];
  const json& c = cur.identity["run"];
  for (const auto& [key, value] : c.items()) {
    if (b.contains(key) && b[key] == value) continue;
    throw InputError(current_path, "/run/" + key,
                     "a summary of a run with " + key + " " + text(value) + ", the baseline's with " +
                         (b.contains(key) ? text(b[key]) : std::string("none")) +
                         ": --allow-different compares them anyway");
  }
}

void row(std::ostream& out, const std::string& metric, const std::string& baseline,
         const std::string& current, const std::string& delta, const std::string& verdict) {
  out << std::left << std::setw(22) << metric << std::right << std::setw(16) << baseline
      << std::setw(16) << current << std::setw(10) << delta << "  " << verdict << "\n";
}

}  // namespace

int compare_summaries(const std::string& baseline_path, const std::string& current_path,
                      double tolerance_pct, std::ostream& out, bool allow_different) {
  if (!std::isfinite(tolerance_pct) || tolerance_pct < 0)
    throw InputError("--tolerance", "", "expected a percentage >= 0, found " + number_text(tolerance_pct));
  Summary base = read_summary(baseline_path);
  Summary cur = read_summary(current_path);
  if (!allow_different) check_same_run(base, cur, current_path);
  bool status_regressed = base.status == "ok" && cur.status == "error";
  bool both_ok = base.status == "ok" && cur.status == "ok";

  row(out, "metric", "baseline", "current", "delta", "verdict");
  row(out, "status", base.status, cur.status, "", status_regressed ? "REGRESSION" : "ok");
  int regressions = 0;
  for (std::size_t i = 0; i < kMetrics.size(); ++i) {
    const auto& b = base.metrics[i];
    const auto& c = cur.metrics[i];
    std::string verdict = "n/a";
    if (both_ok) {
      bool worse = regressed(*b, *c, tolerance_pct);
      regressions += worse;
      verdict = worse ? "REGRESSION" : "ok";
    }
    row(out, kMetrics[i], b ? number_text(*b) : "null", c ? number_text(*c) : "null",
        b && c ? delta_text(*b, *c) : "", verdict);
  }
  if (regressions == 0 && !status_regressed) {
    out << "compare: OK\n";
    return 0;
  }
  out << "compare: REGRESSION (" << regressions << " metrics beyond +" << number_text(tolerance_pct)
      << "%" << (status_regressed ? ", status ok -> error" : "") << ")\n";
  return kCompareRegression;
}

}  // namespace npusim::record
