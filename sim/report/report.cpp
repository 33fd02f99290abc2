#include "sim/report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include <zlib.h>

#include "models/common/errors.h"
#include "sim/json/json_read.h"
#include "sim/json/json_input.h"
#include "sim/report/page_text.h"
#include "sim/report/report_chart.h"
#include "sim/report/report_series.h"

namespace npusim::report {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// ---------------------------------------------------------------- numbers

// The value at a JSON pointer, or nullptr when any step is missing.
const json* at(const json& doc, const std::string& pointer) {
  const json::json_pointer p(pointer);
  return doc.contains(p) ? &doc.at(p) : nullptr;
}

// A summary number as the page shows it: a span with its pointer and exact
// value; "n/a" for null, "-" when the summary does not have it.
std::string num(const json& doc, const std::string& pointer, Unit unit) {
  const json* v = at(doc, pointer);
  if (!v) return "-";
  std::string text = v->is_number() ? human(v->get<double>(), unit) : v->is_null() ? "n/a" : v->dump();
  return "<span class=\"num\" data-key=\"" + xml_escape(pointer) + "\" data-value=\"" + xml_escape(v->dump()) +
         "\">" + xml_escape(text) + "</span>";
}

double number_or(const json* v, double fallback) { return v && v->is_number() ? v->get<double>() : fallback; }

std::string text_of(const json* v) {
  if (!v || v->is_null()) return "";
  return v->is_string() ? v->get<std::string>() : v->dump();
}

// A JSON pointer's reference token (RFC 6901).
std::string token(const std::string& key) { return json_input::pointer_join("", key); }

// ---------------------------------------------------------------- SVG

// One bar chart's rows: a label, a bar of `fraction` of the bar area (capped
// at the area; the capacity line marks 100% when `capacity_line`), and the
// value text at its right.
struct BarRow {
  std::string label, value, tip;
  double fraction = 0;
  bool alert = false;  // drawn in red (a ring near its capacity)
};

std::string bar_chart(const std::string& id, const std::string& title, const std::vector<BarRow>& rows,
                      bool capacity_line) {
  if (rows.empty()) return empty_chart(id, "no data in summary.json");
  const int height = static_cast<int>(rows.size()) * kRow + 12;
  std::string s = svg_open(id, height, title);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const BarRow& r = rows[i];
    const double y = 6 + static_cast<double>(i) * kRow;
    const double w = std::clamp(r.fraction, 0.0, 1.0) * kBarArea;
    s += svg_text(kLabelWidth - 8, y + 15, r.label, " text-anchor=\"end\"");
    s += std::string("<rect class=\"bar") + (r.alert ? " alert" : "") + "\" x=\"" + px(kLabelWidth) + "\" y=\"" +
         px(y + 3) + "\" width=\"" + px(std::max(w, 1.0)) + "\" height=\"16\" fill=\"" +
         (r.alert ? "#c00" : kPalette[0]) + "\"><title>" + xml_escape(r.tip) + "</title></rect>\n";
    s += svg_text(kLabelWidth + kBarArea + 8, y + 15, r.value);
  }
  if (capacity_line)
    s += "<line class=\"capacity\" x1=\"" + px(kLabelWidth + kBarArea) + "\" x2=\"" + px(kLabelWidth + kBarArea) +
         "\" y1=\"2\" y2=\"" + px(height - 4) + "\" stroke=\"#c00\" stroke-dasharray=\"4 3\"/>\n";
  s += "</svg>\n";
  return s;
}

// ---------------------------------------------------------------- sections

// A ring resource at this share of its capacity or more is a finding (and a red bar).
constexpr double kNearCapacity = 0.9;
// A core type busy this share of the makespan or more makes the run core-bound on it.
constexpr double kCoreBound = 0.9;

struct Resource {
  const char* peak;      // key in ring_peaks."R"
  const char* capacity;  // key in run (a list per ring)
  const char* label;
  Unit unit;
};
constexpr Resource kResources[] = {{"task_slots", "ring_task_window", "task slots", Unit::kCount},
                                   {"heap_bytes", "ring_heap", "heap", Unit::kBytes},
                                   {"dep_pool", "ring_dep_pool", "dep pool", Unit::kCount}};

// run.ring_task_window -> "ring-task-window", the option that sets it.
std::string option_name(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

// critical_path's part names as the page says them.
std::string part_label(const std::string& key) {
  if (key == "producer_wait") return "waiting for a producer";
  if (key == "core_wait") return "waiting for a core";
  if (key == "sched_overhead") return "scheduler overhead";
  if (key == "orchestrator") return "orchestrator-bound";
  return key;
}

// The verdict (status and the headline, or the failure's name and message)
// and the findings a reader needs first: rings near capacity, whether the
// run is scheduler-bound (the runtime's sched_overhead_analysis.py verdict,
// from figures.overhead.oh_has_overhead), core utilisation and what the
// critical path spent the makespan on.
std::string findings_section(const json& doc) {
  std::ostringstream o;
  const bool ok = text_of(at(doc, "/status")) == "ok";
  o << "<section id=\"findings\">\n<p id=\"verdict\" class=\"status-" << (ok ? "ok" : "error") << "\">";
  if (ok)
    o << "Completed: " << num(doc, "/tasks/completed", Unit::kCount) << " tasks, makespan "
      << num(doc, "/makespan_ns", Unit::kNs) << ", device wall " << num(doc, "/device_wall_ns", Unit::kNs) << ".";
  else
    o << "Failed: " << xml_escape(text_of(at(doc, "/error/name"))) << ": "
      << xml_escape(text_of(at(doc, "/error/message"))) << " (npusim's diagnosis below).";
  o << "</p>\n<h2>Findings</h2>\n<ul>\n";
  // Rings near capacity.
  int near = 0;
  const json* rings = at(doc, "/figures/ring_peaks");
  if (rings && rings->is_object())
    for (const auto& [r, v] : rings->items())
      for (const Resource& res : kResources) {
        const double peak = number_or(at(doc, "/figures/ring_peaks" + token(r) + "/" + res.peak), -1);
        const double cap = number_or(at(doc, std::string("/run/") + res.capacity + "/" + r), 0);
        if (cap <= 0 || peak < kNearCapacity * cap) continue;
        ++near;
        o << "<li class=\"finding alert\">ring " << xml_escape(r) << " " << res.label << " near capacity: peak "
          << human(peak, res.unit) << " of " << human(cap, res.unit) << " (" << human(peak / cap, Unit::kRatio)
          << "): a larger program or a smaller ring fails here (--" << option_name(res.capacity)
          << ", docs/rings.md)</li>\n";
      }
  if (near == 0 && rings && rings->is_object() && !rings->empty())
    o << "<li class=\"finding\">no ring above " << human(kNearCapacity, Unit::kRatio) << " of its capacity at a scope's begin or end (scope_stats samples)</li>\n";
  // Scheduler-bound or not, as the runtime's sched_overhead_analysis.py says it.
  if (const json* has = at(doc, "/figures/overhead/oh_has_overhead/pct"); has && has->is_number()) {
    const double pct = has->get<double>();
    const char* verdict = pct >= 25 ? "SCHEDULER-BOUND: a free core has ready, undispatched work for much of the "
                                      "makespan"
                          : pct >= 8 ? "PARTIALLY SCHEDULER-LIMITED: the rest is compute and dependency-limited "
                                       "parallelism"
                                     : "COMPUTE/DEPENDENCY-BOUND: little reducible scheduler overhead";
    o << "<li class=\"finding\" id=\"bound\">" << verdict << " (every working engine starved "
      << human(pct, Unit::kPct) << " of the window, oh_has_overhead; sched_overhead_analysis's verdict)</li>\n";
  }
  // Core utilisation.
  if (const json* types = at(doc, "/figures/core_types"); types && types->is_object() && !types->empty()) {
    // A core type busy kCoreBound of the makespan or more: the run is core-bound on it.
    std::vector<std::string> bound;
    o << "<li class=\"finding\" id=\"cores\">cores busy over the makespan:";
    for (const auto& [type, v] : types->items()) {
      const double u = number_or(at(doc, "/figures/core_types" + token(type) + "/utilisation"), 0);
      o << " " << xml_escape(type) << " " << human(u, Unit::kRatio);
      if (u >= kCoreBound) bound.push_back(type);
    }
    for (std::size_t i = 0; i < bound.size(); ++i)
      o << (i ? ", " : "; CORE-BOUND on ") << xml_escape(bound[i]);
    if (!bound.empty())
      o << " (busy " << human(kCoreBound, Unit::kRatio) << " of the makespan or more: more cores of that type, or "
        << "less work on them, is what shortens it)";
    o << "</li>\n";
  }
  // The critical path's largest part besides kernel time.
  if (const json* parts = at(doc, "/critical_path/parts_ns"); parts && parts->is_object()) {
    const double span = number_or(at(doc, "/critical_path/span_ns"), 0);
    std::string worst;
    double most = 0;
    for (const auto& [k, v] : parts->items())
      if (k != "kernel" && v.is_number() && v.get<double>() > most) most = v.get<double>(), worst = k;
    o << "<li class=\"finding\">critical path: kernel time "
      << human(span > 0 ? number_or(at(doc, "/critical_path/parts_ns/kernel"), 0) / span : 0, Unit::kRatio)
      << " of the makespan";
    if (!worst.empty())
      o << "; the largest other part " << xml_escape(part_label(worst)) << " " << human(most, Unit::kNs) << " ("
        << human(span > 0 ? most / span : 0, Unit::kRatio) << ")";
    o << " (section Critical path)</li>\n";
  }
  o << "</ul>\n</section>\n";
  return o.str();
}

std::string header_section(const json& doc) {
  std::ostringstream o;
  const std::string status = text_of(at(doc, "/status"));
  o << "<section id=\"run\">\n<h2>Run</h2>\n<table class=\"kv\">\n"
    << "<tr><th>trace</th><td>" << xml_escape(text_of(at(doc, "/trace"))) << "</td></tr>\n"
    << "<tr><th>platform</th><td>" << xml_escape(text_of(at(doc, "/platform"))) << "</td></tr>\n"
    << "<tr><th>runtime</th><td>" << xml_escape(text_of(at(doc, "/run/runtime"))) << "</td></tr>\n"
    << "<tr><th>status</th><td><span id=\"status\" class=\"status-" << xml_escape(status) << "\">"
    << xml_escape(status) << "</span></td></tr>\n"
    << "<tr><th>device wall</th><td>" << num(doc, "/device_wall_ns", Unit::kNs) << "</td></tr>\n"
    << "<tr><th>makespan</th><td>" << num(doc, "/makespan_ns", Unit::kNs) << "</td></tr>\n"
    << "<tr><th>scheduling window</th><td>" << num(doc, "/scheduling_window_ns", Unit::kNs) << "</td></tr>\n"
    << "<tr><th>tasks submitted / completed</th><td>" << num(doc, "/tasks/submitted", Unit::kCount) << " / "
    << num(doc, "/tasks/completed", Unit::kCount) << "</td></tr>\n"
    << "<tr><th>blocks dispatched</th><td>" << num(doc, "/tasks/blocks_dispatched", Unit::kCount) << "</td></tr>\n"
    << "<tr><th>AICPU threads (schedulers)</th><td>" << num(doc, "/run/aicpu_thread_num", Unit::kCount) << " ("
    << num(doc, "/run/sched_threads", Unit::kCount) << ")</td></tr>\n"
    << "</table>\n</section>\n";
  return o.str();
}

std::string core_types_section(const json& doc) {
  std::vector<BarRow> rows;
  const json* types = at(doc, "/figures/core_types");
  if (types && types->is_object())
    for (const auto& [type, v] : types->items()) {
      const std::string p = "/figures/core_types" + token(type);
      rows.push_back({type + " (" + text_of(at(doc, p + "/cores")) + " cores)",
                      human(number_or(at(doc, p + "/utilisation"), 0), Unit::kRatio),
                      type + ": busy " + human(number_or(at(doc, p + "/busy_ns"), 0), Unit::kNs),
                      number_or(at(doc, p + "/utilisation"), 0)});
    }
  std::ostringstream o;
  o << "<section id=\"core-types\">\n<h2>Core-type utilisation</h2>\n"
    << "<p>Kernel time of every block on a core of the type over cores x makespan.</p>\n"
    << bar_chart("chart-core-utilisation", "core-type utilisation", rows, true);
  if (types && types->is_object()) {
    o << "<table>\n<tr><th>type</th><th>cores</th><th>busy</th><th>utilisation</th></tr>\n";
    for (const auto& [type, v] : types->items()) {
      const std::string p = "/figures/core_types" + token(type);
      o << "<tr><td>" << xml_escape(type) << "</td><td>" << num(doc, p + "/cores", Unit::kCount) << "</td><td>"
        << num(doc, p + "/busy_ns", Unit::kNs) << "</td><td>" << num(doc, p + "/utilisation", Unit::kRatio)
        << "</td></tr>\n";
    }
    o << "</table>\n";
  }
  o << "</section>\n";
  return o.str();
}

// One stacked bar per scheduler thread, a segment per phase kind.
std::string sched_phases_section(const json& doc) {
  const json* threads = at(doc, "/figures/sched_phases");
  std::vector<std::string> kinds;  // every kind, in name order (one colour each)
  if (threads && threads->is_object())
    for (const auto& [t, v] : threads->items())
      if (v.contains("shares") && v["shares"].is_object())
        for (const auto& [k, share] : v["shares"].items())
          if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  std::sort(kinds.begin(), kinds.end());
  auto colour = [&](const std::string& k) {
    const auto i = static_cast<std::size_t>(std::find(kinds.begin(), kinds.end(), k) - kinds.begin());
    return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
  };
  std::ostringstream o;
  o << "<section id=\"sched-phases\">\n<h2>Scheduler phase split per thread</h2>\n"
    << "<p>Each scheduler thread's phase records: the share of each phase kind in the time they cover.</p>\n";
  if (!threads || !threads->is_object() || threads->empty() || kinds.empty()) {
    o << empty_chart("chart-sched-phases", "no scheduler phase records in summary.json") << "</section>\n";
    return o.str();
  }
  const int rows = static_cast<int>(threads->size());
  const std::vector<LegendSlot> legend = legend_layout(kinds, 10, kChartWidth - 10);
  const int height = rows * kRow + 24 + (legend.back().row + 1) * 18;
  o << svg_open("chart-sched-phases", height, "scheduler phase split per thread");
  int row = 0;
  for (const auto& [t, v] : threads->items()) {
    const double y = 6 + row++ * kRow;
    const std::string p = "/figures/sched_phases" + token(t);
    o << svg_text(kLabelWidth - 8, y + 15, "thread " + t, " text-anchor=\"end\"");
    double x = kLabelWidth;
    for (const std::string& k : kinds) {
      const double share = number_or(at(doc, p + "/shares" + token(k)), 0);
      if (share <= 0) continue;
      const double w = share * kBarArea;
      o << "<rect class=\"bar seg\" x=\"" << px(x) << "\" y=\"" << px(y + 3) << "\" width=\"" << px(w)
        << "\" height=\"16\" fill=\"" << colour(k) << "\"><title>thread " << xml_escape(t) << " " << xml_escape(k)
        << ": " << human(share, Unit::kRatio) << "</title></rect>\n";
      x += w;
    }
    o << svg_text(kLabelWidth + kBarArea + 8, y + 15, human(number_or(at(doc, p + "/phase_ns"), 0), Unit::kNs));
  }
  for (std::size_t i = 0; i < kinds.size(); ++i) {  // the legend, in rows that fit the chart
    const double lx = legend[i].x, ly = 6 + rows * kRow + 10 + legend[i].row * 18;
    o << "<rect class=\"legend\" x=\"" << px(lx) << "\" y=\"" << px(ly) << "\" width=\"12\" height=\"12\" fill=\""
      << colour(kinds[i]) << "\"/>\n"
      << svg_text(lx + 16, ly + 11, kinds[i]);
  }
  o << "</svg>\n<table>\n<tr><th>thread</th><th>phase time</th>";
  for (const std::string& k : kinds) o << "<th>" << xml_escape(k) << "</th>";
  o << "</tr>\n";
  for (const auto& [t, v] : threads->items()) {
    const std::string p = "/figures/sched_phases" + token(t);
    o << "<tr><td>" << xml_escape(t) << "</td><td>" << num(doc, p + "/phase_ns", Unit::kNs) << "</td>";
    for (const std::string& k : kinds) o << "<td>" << num(doc, p + "/shares" + token(k), Unit::kRatio) << "</td>";
    o << "</tr>\n";
  }
  o << "</table>\n</section>\n";
  return o.str();
}

// Per ring the scopes sampled: each resource's peak against the ring's size.
std::string ring_peaks_section(const json& doc) {
  const json* rings = at(doc, "/figures/ring_peaks");
  std::vector<BarRow> rows;
  std::ostringstream table;
  table << "<table>\n<tr><th>ring</th><th>resource</th><th>peak</th><th>capacity</th><th>of capacity</th></tr>\n";
  if (rings && rings->is_object())
    for (const auto& [r, v] : rings->items())
      for (const Resource& res : kResources) {
        const std::string peak_p = "/figures/ring_peaks" + token(r) + "/" + res.peak;
        const std::string cap_p = std::string("/run/") + res.capacity + "/" + r;
        const json* peak = at(doc, peak_p);
        if (!peak) continue;
        const double cap = number_or(at(doc, cap_p), 0);
        const double fraction = cap > 0 ? number_or(peak, 0) / cap : 0;
        const std::string of = cap > 0 ? human(fraction, Unit::kRatio) : "capacity unknown";
        rows.push_back({"ring " + r + " " + res.label, of,
                        "peak " + human(number_or(peak, 0), res.unit) + " of " + human(cap, res.unit), fraction,
                        fraction >= kNearCapacity});
        table << "<tr><td>" << xml_escape(r) << "</td><td>" << res.label << "</td><td>"
              << num(doc, peak_p, res.unit) << "</td><td>" << num(doc, cap_p, res.unit) << "</td><td>" << of
              << "</td></tr>\n";
      }
  table << "</table>\n";
  std::ostringstream o;
  o << "<section id=\"ring-peaks\">\n<h2>Ring peaks against capacity</h2>\n"
    << "<p>The most of each ring's task slots, heap bytes and dep-pool entries in use at a scope's begin or end "
       "(scope_stats), over the ring's size in this run; the dashed line is the capacity, a bar at "
    << human(kNearCapacity, Unit::kRatio) << " of it or more is red.</p>\n"
    << bar_chart("chart-ring-peaks", "ring peaks against capacity", rows, true);
  if (!rows.empty()) o << table.str();
  o << "</section>\n";
  return o.str();
}

constexpr std::size_t kTopKernels = 10;

std::string top_kernels_section(const json& doc) {
  std::vector<std::pair<double, std::string>> kernels;  // (core_busy_ns, name)
  const json* all = at(doc, "/kernels");
  if (all && all->is_object())
    for (const auto& [name, v] : all->items())
      kernels.emplace_back(number_or(at(doc, "/kernels" + token(name) + "/core_busy_ns"), 0), name);
  // Most core time first; ties by name (deterministic).
  std::sort(kernels.begin(), kernels.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  const std::size_t total = kernels.size();
  if (kernels.size() > kTopKernels) kernels.resize(kTopKernels);
  const double top = kernels.empty() ? 0 : kernels.front().first;
  std::vector<BarRow> rows;
  for (const auto& [busy, name] : kernels)
    rows.push_back({name, human(busy, Unit::kNs), name + ": " + human(busy, Unit::kNs), top > 0 ? busy / top : 0});
  std::ostringstream o;
  o << "<section id=\"top-kernels\">\n<h2>Top kernels by core time</h2>\n"
    << "<p>Kernel time summed over every block of the kernel's tasks (core_busy_ns); the "
    << kernels.size() << " largest of " << total << ".</p>\n"
    << bar_chart("chart-top-kernels", "top kernels by core time", rows, false);
  if (!kernels.empty()) {
    o << "<table>\n<tr><th>kernel</th><th>core time</th><th>tasks</th><th>blocks</th><th>dispatch ops</th></tr>\n";
    for (const auto& [busy, name] : kernels) {
      const std::string p = "/kernels" + token(name);
      o << "<tr><td>" << xml_escape(name) << "</td><td>" << num(doc, p + "/core_busy_ns", Unit::kNs) << "</td><td>"
        << num(doc, p + "/tasks", Unit::kCount) << "</td><td>" << num(doc, p + "/blocks", Unit::kCount)
        << "</td><td>" << num(doc, p + "/dispatch_ops", Unit::kCount) << "</td></tr>\n";
    }
    o << "</table>\n";
  }
  o << "</section>\n";
  return o.str();
}

// Dispatch latencies and the idle-core-with-ready-work overhead: tables.
std::string latency_section(const json& doc) {
  std::ostringstream o;
  o << "<section id=\"latency\">\n<h2>Dispatch latency and overhead</h2>\n"
    << "<table>\n<tr><th></th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>\n";
  for (const char* key : {"dispatch_to_start_ns", "ready_to_dispatch_ns"}) {
    const std::string p = std::string("/figures/") + key;
    o << "<tr><td>" << key << "</td><td>" << num(doc, p + "/count", Unit::kCount) << "</td>";
    for (const char* q : {"/p50", "/p90", "/p99", "/max"}) o << "<td>" << num(doc, p + q, Unit::kNs) << "</td>";
    o << "</tr>\n";
  }
  o << "</table>\n<p>Overhead window " << num(doc, "/figures/overhead/window_ns", Unit::kNs)
    << " (first block start to last block end).</p>\n"
    << "<table>\n<tr><th>idle core with ready work</th><th>time</th><th>of window</th></tr>\n";
  for (const char* key : {"oh_aic_overhead", "oh_aiv_overhead", "oh_all_overhead", "oh_has_overhead"}) {
    const std::string p = std::string("/figures/overhead/") + key;
    o << "<tr><td>" << key << "</td><td>" << num(doc, p + "/ns", Unit::kNs) << "</td><td>"
      << num(doc, p + "/pct", Unit::kPct) << "</td></tr>\n";
  }
  o << "</table>\n</section>\n";
  return o.str();
}

// A list of lines (or one text) as a <pre>.
std::string lines_block(const json* v, const std::string& id) {
  std::string text;
  if (v && v->is_array())
    for (const json& line : *v) text += text_of(&line) + "\n";
  else
    text = v && v->is_object() ? v->dump(2) : text_of(v);
  if (text.empty()) return "<p id=\"" + id + "\" class=\"none\">(none)</p>\n";
  return "<pre id=\"" + id + "\">" + xml_escape(text) + "</pre>\n";
}

// The failure: what npusim found first (its diagnosis and the sizes that
// would have been enough), then the runtime's report (message, hint, codes),
// then the host and device logs folded.
std::string failure_section(const json& doc) {
  const json* error = at(doc, "/error");
  if (!error || error->is_null()) return "";
  std::ostringstream o;
  o << "<section id=\"failure\">\n<h2>Failure: <span id=\"error-name\">" << xml_escape(text_of(at(doc, "/error/name")))
    << "</span></h2>\n<p id=\"error-message\">" << xml_escape(text_of(at(doc, "/error/message"))) << "</p>\n"
    << "<h3>npusim diagnosis</h3>\n" << lines_block(at(doc, "/error/diagnosis/explanation"), "diagnosis");
  if (const json* enough = at(doc, "/error/diagnosis/enough/option"))
    o << "<p id=\"enough\">Sizes that would have been enough: <code>" << xml_escape(text_of(enough))
      << "</code></p>\n";
  o << "<h3>The runtime's report</h3>\n<table class=\"kv\">\n";
  for (const char* key : {"hint", "detector"})
    o << "<tr><th>" << key << "</th><td>" << xml_escape(text_of(at(doc, std::string("/error/") + key)))
      << "</td></tr>\n";
  for (const char* key : {"orch_error_code", "sched_error_code", "host_code"})
    o << "<tr><th>" << key << "</th><td>" << num(doc, std::string("/error/") + key, Unit::kCode) << "</td></tr>\n";
  for (const char* key : {"stall_time_ns", "detector_since_ns", "device_time_ns"})
    o << "<tr><th>" << key << "</th><td>" << num(doc, std::string("/error/") + key, Unit::kNs) << "</td></tr>\n";
  auto lines = [&](const char* pointer) {
    const json* v = at(doc, pointer);
    return v && v->is_array() ? std::to_string(v->size()) + " lines" : std::string("none");
  };
  o << "</table>\n<details><summary>Host log (" << lines("/error/host_log") << ")</summary>\n"
    << lines_block(at(doc, "/error/host_log"), "host-log") << "</details>\n"
    << "<details><summary>Device log, AICPU (" << lines("/error/device_log") << ")</summary>\n"
    << lines_block(at(doc, "/error/device_log"), "device-log") << "</details>\n";
  if (const json* diagnosis = at(doc, "/error/diagnosis"))
    o << "<details><summary>the whole diagnosis (error.diagnosis)</summary>\n<pre>" << xml_escape(diagnosis->dump(2))
      << "</pre></details>\n";
  o << "</section>\n";
  return o.str();
}

const char kStyle[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:820px;color:#222}\n"
    "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}\n"
    "table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid "
    "#eee}\n"
    "td .num{font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "#sched-phases table{display:block;overflow-x:auto}\n"
    "svg.chart{display:block;margin:8px 0;font-size:12px;max-width:100%;height:auto}\n"
    "pre{background:#f6f6f6;padding:8px;overflow-x:auto;white-space:pre-wrap}\n"
    ".status-ok{color:#1a7f37;font-weight:bold}.status-error{color:#c00;font-weight:bold}\n"
    "#failure{border-left:4px solid #c00;padding-left:12px}\n"
    "#findings{border:1px solid #ccc;background:#fafafa;padding:4px 14px;margin-top:12px}\n"
    "#findings h2{font-size:16px;margin-top:8px}#verdict{font-size:16px}.finding.alert{color:#c00}\n"
    "details summary{cursor:pointer;color:#555}\n";

// The one script: a script error is written into the page (so a headless
// browser's DOM dump shows it), and the charts drawn are counted.
const char kErrorHook[] =
    "<script>window.onerror=function(m){document.documentElement.setAttribute('data-script-error',String(m));};"
    "</script>\n";
const char kChartCount[] =
    "<script>document.documentElement.setAttribute('data-charts-drawn',"
    "String(document.querySelectorAll('svg.chart').length));</script>\n";

}  // namespace

std::string report_html(const json& summary, const std::string& title, const std::string& series) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>npusim report: "
    << xml_escape(title) << "</title>\n<style>\n"
    << kStyle << "</style>\n" << kErrorHook << "</head>\n<body>\n<h1>npusim report: " << xml_escape(title)
    << "</h1>\n"
    << findings_section(summary) << failure_section(summary) << header_section(summary)
    << core_types_section(summary) << series
    << sched_phases_section(summary) << ring_peaks_section(summary) << top_kernels_section(summary)
    << latency_section(summary) << kChartCount << "</body>\n</html>\n";
  return o.str();
}

json read_run_summary(const std::string& run_dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(run_dir, ec);
  if (!fs::exists(st))
    throw InputError(run_dir, "", "no such folder (expected the --out folder of an npusim run)");
  if (!fs::is_directory(st))
    throw InputError(run_dir, "", "is not a folder (expected the --out folder of an npusim run)");
  const std::optional<RunOutput> file = read_run_output(run_dir, "summary.json", json_input::kMaxFileBytes);
  if (!file) {
    const std::string summary_path = (fs::path(run_dir) / "summary.json").string();
    if (fs::exists(fs::symlink_status(summary_path, ec)))  // there, but a folder or a device
      throw InputError(summary_path, "", json_input::not_a_regular_file(summary_path, "JSON file"));
    throw InputError(run_dir, "",
                     "no summary.json in this folder (expected the --out folder of an npusim run, which always "
                     "writes one)");
  }
  const std::string& path = file->path;
  json doc = json_input::parse(file->text, path);
  if (!doc.is_object() || !doc.contains("npusim_summary") || doc["npusim_summary"] != 1)
    throw InputError(path, doc.is_object() ? "/npusim_summary" : "",
                     "expected a summary.json written by npusim run (\"npusim_summary\": 1)");
  return doc;
}

int report_command(const std::string& run_dir, const std::string& out_path, std::ostream& out) {
  const json summary = read_run_summary(run_dir);
  // The run's folder holds only what npusim run wrote (docs/outputs.md): a
  // page there would make the next run into it refuse the folder.
  std::error_code ec;
  if (fs::weakly_canonical(fs::absolute(out_path), ec).parent_path() == fs::weakly_canonical(run_dir, ec))
    throw InputError(out_path, "",
                     "the page would go inside the run's folder, which holds only what npusim run writes (a "
                     "later run into it would refuse the folder): write it elsewhere");
  // The page is named after the trace the run simulated.
  const json* trace = at(summary, "/trace");
  write_file(out_path, report_html(summary, trace && trace->is_string() ? trace->get<std::string>() : run_dir,
                                   series_sections(run_dir, summary)));
  out << "npusim report: wrote " << out_path << "\n";
  return 0;
}

}  // namespace npusim::report
