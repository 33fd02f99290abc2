#include "sim/record/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/config/run_options.h"
#include "sim/config/suggest.h"
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
  json figures;        // the `figures` object, null when the summary has none (an older npusim)
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
  if (doc.contains("run")) {  // the run options, compared key by key: a list or a number would compare as none
    if (!doc["run"].is_object())
      throw InputError(path, "/run", "expected an object (the run options), found " + json_input::describe(doc["run"]));
    s.identity["run"] = doc["run"];
  }
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
  if (doc.contains("figures")) {
    if (!doc["figures"].is_object())
      throw InputError(path, "/figures", "expected an object, found " + json_input::describe(doc["figures"]));
    s.figures = doc["figures"];
  }
  return s;
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
  // An option only the baseline names differs as much as one only the current names.
  for (const auto& [key, value] : b.items()) {
    if (c.contains(key)) continue;
    throw InputError(current_path, "/run/" + key,
                     "a summary of a run with no " + key + ", the baseline's with " + text(value) +
                         ": --allow-different compares them anyway");
  }
}

// Which way a figure gets worse.
enum class Bad { up, down, either };

// The tolerance of the figures a pattern names: dotted segments, `*` matching
// any one segment, matching a name's leading segments. The pattern with the
// most segments wins. No tolerance: the figure is reported, never a
// regression (unless --tolerance-for gives it one). docs/outputs.md, "compare".
struct Rule {
  const char* pattern;
  Bad bad;
  std::optional<double> tolerance_pct;
};

constexpr double kTimes = -1;  // placeholder: --tolerance

const Rule kRules[] = {
    {"device_wall_ns", Bad::up, kTimes},
    {"makespan_ns", Bad::up, kTimes},
    {"scheduling_window_ns", Bad::up, kTimes},
    {"figures.core_types.*.cores", Bad::either, std::nullopt},
    {"figures.core_types.*.busy_ns", Bad::up, 5},
    {"figures.core_types.*.utilisation", Bad::down, 5},
    {"figures.dispatch_to_start_ns", Bad::up, 10},
    {"figures.dispatch_to_start_ns.count", Bad::either, std::nullopt},
    {"figures.ready_to_dispatch_ns", Bad::up, 10},
    {"figures.ready_to_dispatch_ns.count", Bad::either, std::nullopt},
    {"figures.overhead.window_ns", Bad::up, 5},
    {"figures.overhead", Bad::up, 10},
    {"figures.sched_phases.*.phase_ns", Bad::up, 10},
    {"figures.sched_phases.*.shares", Bad::either, std::nullopt},
    {"figures.ring_peaks", Bad::up, 10},
};

std::vector<std::string> segments(const std::string& name) {
  std::vector<std::string> out;
  std::istringstream in(name);
  for (std::string s; std::getline(in, s, '.');) out.push_back(s);
  return out;
}

// NAME is `prefix` or lies under it.
bool under(const std::string& name, const std::string& prefix) {
  return name.compare(0, prefix.size(), prefix) == 0 && (name.size() == prefix.size() || name[prefix.size()] == '.');
}

struct Tolerance {
  Bad bad = Bad::either;
  std::optional<double> pct;
};

class Tolerances {
 public:
  Tolerances(double times_pct, const std::vector<std::string>& overrides, const std::set<std::string>& known)
      : times_pct_(times_pct) {
    for (const std::string& text : overrides) parse(text, known);
  }

  Tolerance of(const std::string& name) const {
    Tolerance t;
    const auto parts = segments(name);
    std::size_t best = 0;
    for (const Rule& r : kRules) {
      const auto pattern = segments(r.pattern);
      if (pattern.size() <= best || pattern.size() > parts.size()) continue;
      if (!std::equal(pattern.begin(), pattern.end(), parts.begin(),
                      [](const std::string& p, const std::string& n) { return p == "*" || p == n; }))
        continue;
      best = pattern.size();
      t.bad = r.bad;
      t.pct = r.tolerance_pct == kTimes ? std::optional<double>(times_pct_) : r.tolerance_pct;
    }
    std::size_t longest = 0;
    for (const auto& [prefix, pct] : overrides_)
      if (under(name, prefix) && prefix.size() >= longest) {
        longest = prefix.size();
        t.pct = pct;
      }
    return t;
  }

 private:
  void parse(const std::string& text, const std::set<std::string>& known) {
    auto eq = text.rfind('=');
    auto bad = [&](const std::string& what) { return InputError(config::kCommandLine, "--tolerance-for", what); };
    if (eq == std::string::npos || eq == 0)
      throw bad("expected NAME=PERCENT (a figure's dotted name or a prefix of it), found \"" + text + "\"");
    const std::string name = text.substr(0, eq), value = text.substr(eq + 1);
    double pct = -1;
    std::size_t used = 0;
    try {
      pct = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size() || !std::isfinite(pct) || pct < 0)
      throw bad("expected a percentage >= 0 after \"" + name + "=\", found \"" + value + "\"");
    if (!known.count(name)) {
      std::string near = config::closest(name, std::vector<std::string>(known.begin(), known.end()));
      throw bad("unknown figure \"" + name + "\"" + (near.empty() ? std::string(" (see docs/outputs.md, compare)")
                                                              : "; did you mean \"" + near + "\"?"));
    }
    overrides_.emplace_back(name, pct);
  }

  double times_pct_ = 0;
  std::vector<std::pair<std::string, double>> overrides_;
};

// Every dotted name in `v` (and each prefix of it) under `name`.
void add_names(const std::string& name, const json& v, std::set<std::string>& names) {
  names.insert(name);
  if (v.is_object())
    for (const auto& [key, child] : v.items()) add_names(name + "." + key, child, names);
}

// The names --tolerance-for may give: those of both summaries and of the table.
std::set<std::string> known_names(const Summary& base, const Summary& cur) {
  std::set<std::string> names;
  for (const Summary* s : {&base, &cur})
    if (!s->figures.is_null()) add_names("figures", s->figures, names);
  for (const Rule& r : kRules)
    if (std::string(r.pattern).find('*') == std::string::npos)
      for (std::string p = r.pattern;; p = p.substr(0, p.rfind('.'))) {
        names.insert(p);
        if (p.find('.') == std::string::npos) break;
      }
  return names;
}

// One compared figure: a leaf of either summary, or the top of a subtree
// only one of them has (`base` or `cur` then null).
struct Figure {
  std::string name;
  const json* base;
  const json* cur;
};

void pair_figures(const std::string& name, const json* b, const json* c, std::vector<Figure>& out) {
  if (b && c && b->is_object() && c->is_object()) {
    std::set<std::string> keys;
    for (const auto& item : b->items()) keys.insert(item.key());
    for (const auto& item : c->items()) keys.insert(item.key());
    for (const std::string& k : keys)
      pair_figures(name + "." + k, b->contains(k) ? &(*b)[k] : nullptr, c->contains(k) ? &(*c)[k] : nullptr, out);
    return;
  }
  out.push_back({name, b, c});
}

std::string percent_text(double pct) { return number_text(pct, "%.15g") + "%"; }

struct Row {
  std::string name, baseline, current, delta, delta_pct, verdict;
};

struct Verdict {
  bool moved = false;
  bool regression = false;
  std::string text;
};

// The verdict on a number that went from b to c.
Verdict judge(double b, double c, const Tolerance& t) {
  Verdict v;
  v.moved = b != c;
  if (!v.moved) return {false, false, "ok"};
  const bool worse = t.bad == Bad::either || (t.bad == Bad::up ? c > b : c < b);
  const char* sign = t.bad == Bad::either ? "+/-" : t.bad == Bad::up ? "+" : "-";
  if (!worse) return {true, false, "improvement"};
  if (!t.pct) return {true, false, "changed"};
  // beyond b x (1 +- tol/100), evaluated without rounding the factor
  v.regression = std::fabs(c - b) * 100.0 > *t.pct * std::fabs(b);
  v.text = (v.regression ? "REGRESSION > " : "changed <= ") + std::string(sign) + percent_text(*t.pct);
  return v;
}

Row number_row(const std::string& name, std::optional<double> b, std::optional<double> c) {
  return {name, b ? number_text(*b, "%.12g") : "null", c ? number_text(*c, "%.12g") : "null",
          b && c ? number_text(*c - *b, "%+.6g") : "", b && c ? delta_text(*b, *c) : "", ""};
}

void print(std::ostream& out, const std::vector<Row>& rows) {
  std::size_t width = 22;
  for (const Row& r : rows) width = std::max(width, r.name.size() + 2);
  for (const Row& r : rows)
    out << std::left << std::setw(int(width)) << r.name << std::right << std::setw(15) << r.baseline
        << std::setw(15) << r.current << std::setw(11) << r.delta << std::setw(9) << r.delta_pct << "  "
        << r.verdict << "\n";
}

std::string plural(std::size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

void flatten_numbers(const std::string& name, const json& v, std::vector<std::pair<std::string, double>>& out) {
  if (v.is_number()) {
    out.emplace_back(name, v.get<double>());
  } else if (v.is_object()) {
    for (const auto& [key, child] : v.items()) flatten_numbers(name + "." + key, child, out);
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) flatten_numbers(name + "." + std::to_string(i), v[i], out);
  }
}

int compare_summaries(const std::string& baseline_path, const std::string& current_path,
                      const CompareOptions& options, std::ostream& out) {
  if (!std::isfinite(options.tolerance_pct) || options.tolerance_pct < 0)
    throw InputError(config::kCommandLine, "--tolerance", "expected a percentage >= 0, found " + number_text(options.tolerance_pct));
  Summary base = read_summary(baseline_path);
  Summary cur = read_summary(current_path);
  if (!options.allow_different) check_same_run(base, cur, current_path);
  const Tolerances tolerances(options.tolerance_pct, options.tolerance_for, known_names(base, cur));
  const bool status_regressed = base.status == "ok" && cur.status == "error";
  const bool both_ok = base.status == "ok" && cur.status == "ok";

  std::vector<Row> rows = {{"figure", "baseline", "current", "delta", "delta %", "verdict"},
                           {"status", base.status, cur.status, "", "", status_regressed ? "REGRESSION" : "ok"}};
  std::vector<std::string> regressed, moved;
  auto count = [&](const std::string& name, const Verdict& v) {
    if (v.regression) regressed.push_back(name);
    if (v.moved) moved.push_back(name);
  };
  // The times: always shown.
  for (std::size_t i = 0; i < kMetrics.size(); ++i) {
    Row r = number_row(kMetrics[i], base.metrics[i], cur.metrics[i]);
    r.verdict = "n/a";
    if (both_ok) {
      Verdict v = judge(*base.metrics[i], *cur.metrics[i], tolerances.of(kMetrics[i]));
      count(kMetrics[i], v);
      r.verdict = v.text;
    }
    rows.push_back(r);
  }
  // The figures: those that moved.
  std::vector<Figure> figures;
  if (both_ok && !(base.figures.is_null() && cur.figures.is_null()))
    pair_figures("figures", base.figures.is_null() ? nullptr : &base.figures,
                 cur.figures.is_null() ? nullptr : &cur.figures, figures);
  for (const Figure& f : figures) {
    if (!f.base || !f.cur) {
      const json& present = f.base ? *f.base : *f.cur;
      std::string text = present.is_object() ? "present" : present.dump();
      rows.push_back({f.name, f.base ? text : "absent", f.cur ? text : "absent", "", "",
                      f.base ? "only in the baseline" : "only in the current"});
      moved.push_back(f.name);
    } else if (f.base->is_number() && f.cur->is_number()) {
      Verdict v = judge(f.base->get<double>(), f.cur->get<double>(), tolerances.of(f.name));
      if (!v.moved) continue;
      count(f.name, v);
      Row r = number_row(f.name, f.base->get<double>(), f.cur->get<double>());
      r.verdict = v.text;
      rows.push_back(r);
    } else if (*f.base != *f.cur) {  // null (an empty sample's percentile), or a kind changed
      rows.push_back({f.name, f.base->dump(), f.cur->dump(), "", "", "changed"});
      moved.push_back(f.name);
    }
  }
  print(out, rows);

  if (regressed.empty() && !status_regressed) {
    out << "compare: OK";
    if (!moved.empty()) out << " (" << plural(moved.size(), "figure") << " moved, none beyond tolerance)";
    out << "\n";
    return 0;
  }
  out << "compare: REGRESSION (";
  if (!regressed.empty()) out << plural(regressed.size(), "figure") << " beyond tolerance";
  // The first few names; their rows say the rest.
  constexpr std::size_t kNamed = 3;
  for (std::size_t i = 0; i < std::min(regressed.size(), kNamed); ++i) out << (i ? ", " : ": ") << regressed[i];
  if (regressed.size() > kNamed) out << " and " << regressed.size() - kNamed << " more";
  out << (status_regressed ? regressed.empty() ? "status ok -> error" : "; status ok -> error" : "") << ")\n";
  return kCompareRegression;
}

}  // namespace npusim::record
