#include "sim/report/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/config/run_options.h"
#include "sim/config/suggest.h"
#include "sim/json/json_input.h"
#include "sim/report/page_text.h"

namespace npusim::report {
namespace {

using nlohmann::json;

constexpr std::array<const char*, 3> kMetrics = {"device_wall_ns", "makespan_ns",
                                                 "scheduling_window_ns"};

struct Summary {
  std::string status;  // "ok" or "error"
  std::array<std::optional<double>, kMetrics.size()> metrics;  // null only in an "error" summary
  json identity;       // what was run: trace, platform, run options (absent keys are not compared)
  json figures;        // the `figures` object, null when the summary has none (an older npusim)
  json provenance;     // the `provenance` object, null when the summary has none (an older npusim)
  json run;            // the run options (ring capacities), null when absent
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
      throw InputError(path, json_input::pointer_join("", key),
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
    s.run = doc["run"];
  }
  if (doc.contains("provenance")) {
    const json& p = doc["provenance"];
    if (!p.is_object())
      throw InputError(path, "/provenance", "expected an object, found " + json_input::describe(p));
    for (const char* key : {"npusim_version", "trace_digest", "platform_digest"})
      if (p.contains(key) && !p[key].is_string())
        throw InputError(path, json_input::pointer_join("/provenance", key),
                         "expected a string, found " + json_input::describe(p[key]));
    s.provenance = p;
  }
  for (std::size_t i = 0; i < kMetrics.size(); ++i) {
    const json& v = need(kMetrics[i]);
    bool may_be_null = s.status == "error";
    if (v.is_null() && may_be_null) continue;
    if (!v.is_number() || v.get<double>() < 0)
      throw InputError(path, json_input::pointer_join("", kMetrics[i]),
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


// "+2.50%" of the baseline; "n/a" from a baseline of 0.
std::string delta_pct_text(double baseline, double current) {
  if (baseline == 0) return current == 0 ? "+0.00%" : "n/a";
  const double pct = (current - baseline) / baseline * 100.0;
  // Beyond a million percent the digits say nothing: a power of ten does.
  return number_text(pct, std::fabs(pct) < 1e6 ? "%+.2f%%" : "%+.3g%%");
}

// A value as the table shows it: a whole number without decimals, another
// to 6 significant digits (the JSON format keeps every digit).
std::string show(double v, bool sign = false) {
  if (std::fabs(v) < 1e15 && v == std::floor(v)) return number_text(v, sign ? "%+.0f" : "%.0f");
  return number_text(v, sign ? "%+.6g" : "%.6g");
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
// regression (unless --tolerance-for gives it one). `capacity`: judged
// against the ring's capacity, not the baseline. docs/outputs.md, "compare".
struct Rule {
  const char* pattern;
  Bad bad;
  std::optional<double> tolerance_pct;
  bool capacity = false;
};

constexpr double kTimes = -1;  // placeholder: --tolerance

const Rule kRules[] = {
    {"device_wall_ns", Bad::up, kTimes},
    {"makespan_ns", Bad::up, kTimes},
    {"scheduling_window_ns", Bad::up, kTimes},
    {"figures.core_types.*.cores", Bad::either, std::nullopt},
    // The kernels' own durations summed: an input of the schedule, not a result.
    {"figures.core_types.*.busy_ns", Bad::up, std::nullopt},
    {"figures.core_types.*.utilisation", Bad::down, 5},
    // Latencies are judged at their percentiles: the max is one sample.
    {"figures.dispatch_to_start_ns", Bad::up, 10},
    {"figures.dispatch_to_start_ns.count", Bad::either, std::nullopt},
    {"figures.dispatch_to_start_ns.max", Bad::up, std::nullopt},
    {"figures.ready_to_dispatch_ns", Bad::up, 10},
    {"figures.ready_to_dispatch_ns.count", Bad::either, std::nullopt},
    {"figures.ready_to_dispatch_ns.max", Bad::up, std::nullopt},
    {"figures.overhead.window_ns", Bad::up, 5},
    {"figures.overhead", Bad::up, 10},
    {"figures.sched_phases.*.phase_ns", Bad::up, 10},
    {"figures.sched_phases.*.shares", Bad::either, std::nullopt},
    {"figures.ring_peaks", Bad::up, std::nullopt, true},
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

// What gates by default: the span of the whole program and of its kernels.
// scheduling_window_ns, the longest scheduler thread's span, is reported:
// it jumps when the last completion lands on another thread (+4.9 % on a
// change that moved device_wall_ns by +0.56 %).
bool gates_by_default(const std::string& name) { return name == "device_wall_ns" || name == "makespan_ns"; }

struct Tolerance {
  Bad bad = Bad::either;
  std::optional<double> pct;
  bool capacity = false;  // judged against the ring's capacity
  bool gated = false;     // beyond it is a regression, not only reported
};

// A percentage >= 0: "5", "5%", "5 %", "0.5"; nullopt for anything else.
std::optional<double> percentage(std::string text) {
  auto trim = [](std::string& t) {
    const auto b = t.find_first_not_of(" \t");
    const auto e = t.find_last_not_of(" \t");
    t = b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
  };
  trim(text);
  if (!text.empty() && text.back() == '%') {
    text.pop_back();
    trim(text);
  }
  double pct = -1;
  std::size_t used = 0;
  try {
    pct = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(pct) || pct < 0) return std::nullopt;
  return pct;
}

class Tolerances {
 public:
  Tolerances(double times_pct, bool gate_all, const std::vector<std::string>& overrides,
             const std::set<std::string>& known)
      : times_pct_(times_pct), gate_all_(gate_all) {
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
      t.capacity = r.capacity;
    }
    t.gated = gates_by_default(name) || gate_all_;
    std::size_t longest = 0;
    for (const auto& [prefix, pct] : overrides_)
      if (under(name, prefix) && prefix.size() >= longest) {
        longest = prefix.size();
        t.pct = pct;
        t.capacity = false;
        t.gated = true;
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
    const std::optional<double> pct = percentage(value);
    if (!pct) throw bad("expected a percentage >= 0 after \"" + name + "=\", found \"" + value + "\"");
    if (!known.count(name)) {
      std::string near = config::closest(name, std::vector<std::string>(known.begin(), known.end()));
      throw bad("unknown figure \"" + name + "\"" + (near.empty() ? std::string(" (see docs/outputs.md, compare)")
                                                              : "; did you mean \"" + near + "\"?"));
    }
    overrides_.emplace_back(name, *pct);
  }

  double times_pct_ = 0;
  bool gate_all_ = false;
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

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The unit of a figure, from its name (docs/outputs.md, "compare").
std::string unit_of(const std::string& name) {
  const auto parts = segments(name);
  const std::string& last = parts.back();
  const std::string parent = parts.size() > 1 ? parts[parts.size() - 2] : "";
  if (last == "count") return "count";
  if (last == "cores") return "cores";
  if (last == "task_slots") return "slots";
  if (last == "heap_bytes") return "bytes";
  if (last == "dep_pool") return "entries";
  if (last == "pct") return "%";
  if (last == "utilisation" || parent == "shares") return "fraction";
  if (last == "ns" || ends_with(last, "_ns") || ends_with(parent, "_ns")) return "ns";
  return "";
}

// The capacity a ring peak is measured against: the run's size of that
// ring's resource (figures.ring_peaks.R.task_slots: run.ring_task_window[R]).
std::optional<double> capacity_of(const std::string& name, const json& run) {
  const auto parts = segments(name);
  if (parts.size() != 4 || !run.is_object()) return std::nullopt;
  const std::string key = parts[3] == "task_slots"   ? "ring_task_window"
                          : parts[3] == "heap_bytes" ? "ring_heap"
                          : parts[3] == "dep_pool"   ? "ring_dep_pool"
                                                     : "";
  if (key.empty() || !run.contains(key)) return std::nullopt;
  const json& sizes = run[key];
  std::size_t ring = 0;
  try {
    ring = std::stoul(parts[2]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const json* v = sizes.is_array() ? (ring < sizes.size() ? &sizes[ring] : nullptr) : &sizes;
  if (!v || !v->is_number() || v->get<double>() <= 0) return std::nullopt;
  return v->get<double>();
}

std::string percent_text(double pct) { return number_text(pct, "%.15g") + "%"; }

// One line of the table.
struct Row {
  std::string name, unit;
  json base, cur;  // numbers, null, a status, or "absent" / "present" for a subtree only one summary has
  std::string verdict;
  bool gates = false;       // may fail the comparison
  bool moved = false;
  bool beyond = false;      // beyond its tolerance (a regression when it gates)
  bool regression = false;
  std::optional<double> tolerance_pct, capacity;
};

// The verdict on a number that went from b to c.
void judge(Row& row, double b, double c, const Tolerance& t, const json& run, double threshold) {
  row.gates = t.gated && (t.pct || t.capacity);
  row.tolerance_pct = t.pct;
  row.moved = b != c;
  row.verdict = "ok";
  if (!row.moved) return;
  const bool worse = t.bad == Bad::either || (t.bad == Bad::up ? c > b : c < b);
  const char* sign = t.bad == Bad::either ? "+/-" : t.bad == Bad::up ? "+" : "-";
  if (!worse) {
    row.verdict = "improvement";
    return;
  }
  const std::string reported = row.gates ? "" : ", not gated";
  if (t.capacity) {
    row.capacity = capacity_of(row.name, run);
    if (!row.capacity) {
      row.verdict = "changed";
      return;
    }
    const double share = c / *row.capacity * 100.0;
    row.beyond = c * 100.0 > threshold * *row.capacity;
    const std::string of = number_text(share, "%.3g") + "% of capacity";
    row.verdict = row.beyond ? (row.gates ? "REGRESSION " : "") + of + " > " + percent_text(threshold) + reported
                             : "changed, " + of;
  } else if (!t.pct) {
    row.verdict = "changed";
    return;
  } else {
    // beyond b x (1 +- tol/100), evaluated without rounding the factor
    row.beyond = std::fabs(c - b) * 100.0 > *t.pct * std::fabs(b);
    row.verdict = row.beyond ? (row.gates ? "REGRESSION > " : "beyond ") + std::string(sign) + percent_text(*t.pct) + reported
                             : "changed <= " + std::string(sign) + percent_text(*t.pct);
  }
  row.regression = row.beyond && row.gates;
}

Row number_row(const std::string& name, std::optional<double> b, std::optional<double> c) {
  Row r;
  r.name = name;
  r.unit = unit_of(name);
  r.base = b ? json(*b) : json(nullptr);
  r.cur = c ? json(*c) : json(nullptr);
  return r;
}

std::string plural(std::size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

// The provenance of both summaries side by side, and a note for each difference.
struct ProvenanceCheck {
  json fields = json::object();  // name -> {baseline, current, same}
  std::vector<std::string> notes;
};

ProvenanceCheck check_provenance(const Summary& base, const Summary& cur) {
  ProvenanceCheck pc;
  auto value = [](const Summary& s, const char* key) {
    return s.provenance.is_object() && s.provenance.contains(key) ? s.provenance[key] : json(nullptr);
  };
  for (const char* key : {"npusim_version", "trace_digest", "platform_digest"}) {
    const json b = value(base, key), c = value(cur, key);
    pc.fields[key] = {{"baseline", b}, {"current", c},
                      {"same", b.is_null() || c.is_null() ? json(nullptr) : json(b == c)}};
  }
  if (base.provenance.is_null() && cur.provenance.is_null())
    pc.notes.push_back("neither summary records its provenance (written by an older npusim): npusim versions and "
                       "digests unknown");
  else
    for (const auto& [s, which] : {std::pair{&base, "baseline"}, std::pair{&cur, "current"}})
      if (s->provenance.is_null())
        pc.notes.push_back(std::string("the ") + which +
                           " summary records no provenance (written by an older npusim): its npusim version and "
                           "digests are unknown");
  auto differs = [&](const char* key) {
    const json& f = pc.fields[key];
    return f["same"] == false;
  };
  auto name_of = [](const Summary& s, const char* key) {
    return s.identity.contains(key) && s.identity[key].is_string() ? "\"" + s.identity[key].get<std::string>() + "\" "
                                                                    : std::string();
  };
  auto from_to = [&](const char* key) {
    return pc.fields[key]["baseline"].get<std::string>() + " -> " + pc.fields[key]["current"].get<std::string>();
  };
  if (differs("npusim_version"))
    pc.notes.push_back("npusim version differs: " + from_to("npusim_version") +
                       " (a model change moves times without any input changing)");
  if (differs("trace_digest"))
    pc.notes.push_back("trace " + name_of(cur, "trace") + "differs from the baseline's: trace_digest " +
                       from_to("trace_digest"));
  if (differs("platform_digest"))
    pc.notes.push_back("platform " + name_of(cur, "platform") +
                       "differs from the baseline's, under the same name: platform_digest " + from_to("platform_digest") +
                       " (the platform.json beside each summary holds its values)");
  return pc;
}

// What was compared and what came of it, for every format.
struct Outcome {
  std::vector<Row> rows;
  std::vector<std::string> regressed;  // figure names, table order
  bool status_regressed = false;
  std::size_t moved = 0, beyond_not_gated = 0;
  ProvenanceCheck provenance;
  bool regression() const { return status_regressed || !regressed.empty(); }
  // The last line: compare: OK... / compare: REGRESSION (...).
  std::string verdict() const {
    std::ostringstream out;
    if (!regression()) {
      out << "compare: OK";
      if (moved && beyond_not_gated)
        out << " (" << plural(moved, "figure") << " moved, " << beyond_not_gated
            << " beyond tolerance but not gated: --gate all gates them)";
      else if (moved)
        out << " (" << plural(moved, "figure") << " moved, none beyond tolerance)";
      return out.str();
    }
    out << "compare: REGRESSION (";
    if (!regressed.empty()) out << plural(regressed.size(), "figure") << " beyond tolerance";
    // The first few names; their rows say the rest.
    constexpr std::size_t kNamed = 3;
    for (std::size_t i = 0; i < std::min(regressed.size(), kNamed); ++i) out << (i ? ", " : ": ") << regressed[i];
    if (regressed.size() > kNamed) out << " and " << regressed.size() - kNamed << " more";
    out << (status_regressed ? regressed.empty() ? "status ok -> error" : "; status ok -> error" : "") << ")";
    return out.str();
  }
};

// The cells of a row as the table shows them.
std::array<std::string, 7> cells(const Row& r) {
  auto value = [](const json& v) {
    return v.is_number() ? show(v.get<double>()) : v.is_string() ? v.get<std::string>() : v.dump();
  };
  std::string delta, pct;
  if (r.base.is_number() && r.cur.is_number()) {
    const double b = r.base.get<double>(), c = r.cur.get<double>();
    delta = show(c - b, true);
    pct = delta_pct_text(b, c);
  }
  return {r.name, value(r.base), value(r.cur), r.unit, delta, pct, r.verdict};
}

const std::array<std::string, 7> kHeader = {"figure", "baseline", "current", "unit", "delta", "delta %", "verdict"};

// Aligned columns, two spaces apart: names and words to the left, numbers to the right.
std::string text_table(const std::vector<Row>& rows) {
  std::vector<std::array<std::string, 7>> lines = {kHeader};
  for (const Row& r : rows) lines.push_back(cells(r));
  std::array<std::size_t, 7> width{};
  for (const auto& l : lines)
    for (std::size_t i = 0; i < l.size(); ++i) width[i] = std::max(width[i], l[i].size());
  constexpr std::array<bool, 7> kRight = {false, true, true, false, true, true, false};
  std::ostringstream out;
  for (const auto& l : lines) {
    std::string line;
    for (std::size_t i = 0; i < l.size(); ++i) {
      const std::string pad(width[i] - l[i].size(), ' ');
      line += (i ? "  " : "") + (kRight[i] ? pad + l[i] : l[i] + (i + 1 < l.size() ? pad : ""));
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << "\n";
  }
  return out.str();
}

void print_text(std::ostream& out, const Outcome& o) {
  out << text_table(o.rows);
  for (const std::string& n : o.provenance.notes) out << "note: " << n << "\n";
  out << o.verdict() << "\n";
}

void print_markdown(std::ostream& out, const Outcome& o) {
  auto esc = [](const std::string& s) {
    std::string t;
    for (char ch : s) t += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return t;
  };
  out << "| figure | baseline | current | unit | delta | delta % | verdict |\n"
      << "| --- | ---: | ---: | --- | ---: | ---: | --- |\n";
  for (const Row& r : o.rows) {
    const auto c = cells(r);
    out << "|";
    for (std::size_t i = 0; i < c.size(); ++i)
      out << " " << (i == 0 ? "`" + esc(c[i]) + "`" : i == 6 && r.regression ? "**" + esc(c[i]) + "**" : esc(c[i]))
          << " |";
    out << "\n";
  }
  out << "\n";
  for (const std::string& n : o.provenance.notes) out << "- note: " << esc(n) << "\n";
  if (!o.provenance.notes.empty()) out << "\n";
  out << "**" << o.verdict() << "**\n";
}

// One test case per row that gates (the status, the times, the figures
// --gate all or --tolerance-for gate); the whole table in system-out.
void print_junit(std::ostream& out, const Outcome& o, const std::string& base_path, const std::string& cur_path) {
  std::size_t tests = 0, failures = 0;
  for (const Row& r : o.rows)
    if (r.gates) {
      ++tests;
      failures += r.regression;
    }
  const std::string counts = "tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\"";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"npusim compare\" " << counts << ">\n"
      << "  <testsuite name=\"npusim compare\" " << counts << " errors=\"0\" skipped=\"0\">\n"
      << "    <properties>\n"
      << "      <property name=\"baseline\" value=\"" << xml_escape(base_path) << "\"/>\n"
      << "      <property name=\"current\" value=\"" << xml_escape(cur_path) << "\"/>\n";
  for (const std::string& n : o.provenance.notes) out << "      <property name=\"note\" value=\"" << xml_escape(n) << "\"/>\n";
  out << "    </properties>\n";
  for (const Row& r : o.rows) {
    if (!r.gates) continue;
    out << "    <testcase classname=\"npusim.compare\" name=\"" << xml_escape(r.name) << "\"";
    if (!r.regression) {
      out << "/>\n";
      continue;
    }
    const auto c = cells(r);
    const std::string what = r.name + ": " + c[1] + " -> " + c[2] + (c[3].empty() ? "" : " " + c[3]) +
                             (c[5].empty() ? "" : " (" + c[5] + ")") + ", " + r.verdict;
    out << ">\n      <failure type=\"regression\" message=\"" << xml_escape(what) << "\"/>\n    </testcase>\n";
  }
  std::ostringstream text;
  print_text(text, o);
  out << "    <system-out>" << xml_escape(text.str()) << "</system-out>\n  </testsuite>\n</testsuites>\n";
}

void print_json(std::ostream& out, const Outcome& o, const std::string& base_path, const std::string& cur_path,
                const CompareOptions& options) {
  using ojson = nlohmann::ordered_json;
  ojson rows = ojson::array();
  for (const Row& r : o.rows) {
    ojson row = {{"name", r.name}, {"unit", r.unit}, {"baseline", ojson(r.base)}, {"current", ojson(r.cur)}};
    if (r.base.is_number() && r.cur.is_number()) {
      const double b = r.base.get<double>(), c = r.cur.get<double>();
      row["delta"] = c - b;
      row["delta_pct"] = b != 0 ? ojson((c - b) / b * 100.0) : ojson(nullptr);
    } else {
      row["delta"] = nullptr;
      row["delta_pct"] = nullptr;
    }
    row["verdict"] = r.verdict;
    row["gates"] = r.gates;
    row["regression"] = r.regression;
    row["tolerance_pct"] = r.tolerance_pct ? ojson(*r.tolerance_pct) : ojson(nullptr);
    if (r.capacity) row["capacity"] = *r.capacity;
    rows.push_back(row);
  }
  ojson doc = {{"npusim_compare", 1},
              {"verdict", o.regression() ? "regression" : "ok"},
              {"summary", o.verdict()},
              {"baseline", base_path},
              {"current", cur_path},
              {"gate", options.gate == CompareGate::all ? "all" : "times"},
              {"tolerance_pct", options.tolerance_pct},
              {"ring_threshold_pct", options.ring_threshold_pct},
              {"regressions", o.regressed},
              {"status_regression", o.status_regressed},
              {"provenance", ojson(o.provenance.fields)},
              {"notes", o.provenance.notes},
              {"rows", rows}};
  out << doc.dump(2) << "\n";
}

}  // namespace

double parse_percentage(const std::string& text, const std::string& option) {
  const std::optional<double> pct = percentage(text);
  if (!pct)
    throw InputError(config::kCommandLine, option, "expected a percentage >= 0 (5 or 5%), found \"" + text + "\"");
  return *pct;
}

CompareFormat parse_compare_format(const std::string& text) {
  if (text == "text") return CompareFormat::text;
  if (text == "json") return CompareFormat::json;
  if (text == "markdown") return CompareFormat::markdown;
  if (text == "junit") return CompareFormat::junit;
  throw InputError(config::kCommandLine, "--format", "expected text, json, markdown or junit, found \"" + text + "\"");
}

CompareGate parse_compare_gate(const std::string& text) {
  if (text == "times") return CompareGate::times;
  if (text == "all") return CompareGate::all;
  throw InputError(config::kCommandLine, "--gate",
                   "expected times (the status, device_wall_ns and makespan_ns) or all (every figure with a "
                   "tolerance too), found \"" + text + "\"");
}

std::string summary_path(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return path;
  const std::string file = (std::filesystem::path(path) / "summary.json").string();
  if (!std::filesystem::exists(file, ec))
    throw InputError(path, "", "is a folder with no summary.json: expected a summary.json or the --out folder of "
                               "npusim run");
  return file;
}

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
  if (!(options.ring_threshold_pct >= 0 && options.ring_threshold_pct <= 100))
    throw InputError(config::kCommandLine, "--ring-threshold",
                     "expected a share of capacity in percent, 0 to 100, found " + number_text(options.ring_threshold_pct));
  Summary base = read_summary(summary_path(baseline_path));
  Summary cur = read_summary(summary_path(current_path));
  if (!options.allow_different) check_same_run(base, cur, current_path);
  const Tolerances tolerances(options.tolerance_pct, options.gate == CompareGate::all, options.tolerance_for,
                              known_names(base, cur));
  const bool both_ok = base.status == "ok" && cur.status == "ok";

  Outcome o;
  o.status_regressed = base.status == "ok" && cur.status == "error";
  Row status;
  status.name = "status";
  status.base = base.status;
  status.cur = cur.status;
  status.verdict = o.status_regressed ? "REGRESSION" : "ok";
  status.gates = true;
  status.regression = o.status_regressed;
  o.rows.push_back(status);
  auto count = [&](const Row& r) {
    if (r.regression) o.regressed.push_back(r.name);
    if (r.beyond && !r.gates) ++o.beyond_not_gated;
    if (r.moved) ++o.moved;
  };
  // The times: always shown.
  for (std::size_t i = 0; i < kMetrics.size(); ++i) {
    Row r = number_row(kMetrics[i], base.metrics[i], cur.metrics[i]);
    r.verdict = "n/a";
    r.gates = tolerances.of(kMetrics[i]).gated;
    if (both_ok) {
      judge(r, *base.metrics[i], *cur.metrics[i], tolerances.of(kMetrics[i]), cur.run, options.ring_threshold_pct);
      count(r);
    }
    o.rows.push_back(r);
  }
  // The figures: those that moved.
  std::vector<Figure> figures;
  if (both_ok && !(base.figures.is_null() && cur.figures.is_null()))
    pair_figures("figures", base.figures.is_null() ? nullptr : &base.figures,
                 cur.figures.is_null() ? nullptr : &cur.figures, figures);
  for (const Figure& f : figures) {
    if (!f.base || !f.cur) {
      const json& present = f.base ? *f.base : *f.cur;
      const json text = present.is_object() ? json("present") : present;
      Row r;
      r.name = f.name;
      r.unit = present.is_object() ? "" : unit_of(f.name);
      r.base = f.base ? text : json("absent");
      r.cur = f.cur ? text : json("absent");
      r.verdict = f.base ? "only in the baseline" : "only in the current";
      r.moved = true;
      count(r);
      o.rows.push_back(r);
    } else if (f.base->is_number() && f.cur->is_number()) {
      Row r = number_row(f.name, f.base->get<double>(), f.cur->get<double>());
      judge(r, f.base->get<double>(), f.cur->get<double>(), tolerances.of(f.name), cur.run, options.ring_threshold_pct);
      if (!r.moved) continue;
      count(r);
      o.rows.push_back(r);
    } else if (*f.base != *f.cur) {  // null (an empty sample's percentile), or a kind changed
      Row r;
      r.name = f.name;
      r.unit = unit_of(f.name);
      r.base = *f.base;
      r.cur = *f.cur;
      r.verdict = "changed";
      r.moved = true;
      count(r);
      o.rows.push_back(r);
    }
  }
  o.provenance = check_provenance(base, cur);

  switch (options.format) {
    case CompareFormat::text: print_text(out, o); break;
    case CompareFormat::markdown: print_markdown(out, o); break;
    case CompareFormat::junit: print_junit(out, o, baseline_path, current_path); break;
    case CompareFormat::json: print_json(out, o, baseline_path, current_path, options); break;
  }
  return o.regression() ? kCompareRegression : 0;
}

}  // namespace npusim::report
