#include "sim/report/report_series.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include <zlib.h>

#include "models/common/errors.h"
#include "sim/json/json_read.h"
#include "sim/json/json_input.h"
#include "sim/report/page_text.h"
#include "sim/report/report_chart.h"
#include "sim/report/scope_stats_report.h"

namespace npusim::report {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A time in ns that is absent (an empty task_stats.csv field). Not named kNever:
// in a unity build this file shares a translation unit with writers whose
// kNever is models/common/time.h's Time (this name would shadow it).
constexpr double kNoTimeNs = std::numeric_limits<double>::quiet_NaN();
constexpr int kBins = 120;                                   // bins of every series over the makespan
constexpr std::uint64_t kMaxOutputBytes = std::uint64_t(1) << 30;  // an output's text, decompressed

// ---------------------------------------------------------------- inputs

// The outputs the series read, and how a user turns each on.
struct Needed {
  const char* file;
  const char* how;
};
constexpr Needed kTaskStats{"task_stats.csv", "written unless npusim run is given --no-task-stats"};
constexpr Needed kSwimlane{"chip_swimlane_records.json", "written at --swimlane-level 1 or more (default 3)"};
constexpr Needed kScopeStats{"scope_stats/scope_stats.jsonl", "written unless npusim run is given --no-scope-stats"};

std::string missing(const Needed& n) {
  return std::string("needs ") + n.file + " (or " + n.file + ".gz), which this run did not write: " + n.how;
}

// A `"123"` or 123 task id.
std::uint64_t id_of(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_string()) return std::stoull(v.get<std::string>());
  throw std::invalid_argument("not a task id");
}

// chip_swimlane_records.json: every block's kernel interval (ns from the
// first kernel start) on its core type, and each task's core type.
struct Blocks {
  std::vector<std::string> types;                  // core types, in name order
  std::vector<int> cores;                          // cores of each type
  std::vector<std::vector<Interval>> busy;         // per type
  std::map<std::uint64_t, std::size_t> task_type;  // task id -> type index
  double span = 0;                                 // first kernel start to last kernel end
};

Blocks parse_swimlane(const RunOutput& f) {
  const json doc = json_input::parse(f.text, f.path);
  Blocks b;
  try {
    const double freq = doc.at("metadata").at("clock_freq_hz").get<double>();
    std::vector<std::size_t> type_of_core;
    for (const json& t : doc.at("metadata").at("core_types")) {
      const std::string name = t.get<std::string>();
      auto it = std::lower_bound(b.types.begin(), b.types.end(), name);
      if (it == b.types.end() || *it != name) b.types.insert(it, name);
    }
    for (const json& t : doc.at("metadata").at("core_types"))
      type_of_core.push_back(static_cast<std::size_t>(
          std::lower_bound(b.types.begin(), b.types.end(), t.get<std::string>()) - b.types.begin()));
    b.cores.assign(b.types.size(), 0);
    for (std::size_t ty : type_of_core) ++b.cores[ty];
    b.busy.resize(b.types.size());
    // [core, task_id, token, start_cycles, end_cycles, receive_span]; the
    // counter's base is the first kernel start (as the runtime's reader does).
    const json& rows = doc.at("aicore_tasks");
    std::uint64_t base = std::numeric_limits<std::uint64_t>::max(), last = 0;
    for (const json& r : rows) {
      base = std::min(base, r.at(3).get<std::uint64_t>());
      last = std::max(last, r.at(4).get<std::uint64_t>());
    }
    const double ns_per_cycle = 1e9 / freq;
    for (const json& r : rows) {
      const std::size_t ty = type_of_core.at(r.at(0).get<std::size_t>());
      b.busy[ty].push_back({static_cast<double>(r.at(3).get<std::uint64_t>() - base) * ns_per_cycle,
                            static_cast<double>(r.at(4).get<std::uint64_t>() - base) * ns_per_cycle});
      b.task_type.emplace(id_of(r.at(1)), ty);
    }
    if (!rows.empty()) b.span = static_cast<double>(last - base) * ns_per_cycle;
  } catch (const std::exception& e) {
    throw InputError(f.path, "", std::string("not the chip-swimlane schema npusim writes (") + e.what() + ")");
  }
  return b;
}

// ---------------------------------------------------------------- charts

struct Series {
  std::string name;
  std::vector<double> bins;
  double scale = 1;  // a bin's value over `scale` is its height on the y axis
};

constexpr int kPlotLeft = 70, kPlotRight = kChartWidth - 20, kPlotTop = 10, kPlotHeight = 160;

// A step chart of `series` over [0, span): y from 0 to `y_max` (labelled
// with `y_unit`), the dashed line at `capacity` when it is > 0. Each series'
// bins are in its polyline's data-bins (3 decimals), with the span in ns
// (data-span-ns) and its scale (data-scale), for a reader or a test.
std::string step_chart(const std::string& id, const std::string& title, const std::vector<Series>& series,
                       double span, double y_max, Unit y_unit, double capacity) {
  std::vector<std::string> names;
  for (const Series& x : series) names.push_back(x.name);
  const std::vector<LegendSlot> legend = legend_layout(names, kPlotLeft, kChartWidth - 10);
  const int height = kPlotTop + kPlotHeight + 50 + (legend.empty() ? 0 : legend.back().row * 18);
  const double w = kPlotRight - kPlotLeft;
  auto ypx = [&](double v) { return kPlotTop + kPlotHeight * (1 - std::clamp(v / y_max, 0.0, 1.0)); };
  std::string s = svg_open(id, height, title);
  s += "<line x1=\"" + px(kPlotLeft) + "\" x2=\"" + px(kPlotLeft) + "\" y1=\"" + px(kPlotTop) + "\" y2=\"" +
       px(kPlotTop + kPlotHeight) + "\" stroke=\"#888\"/>\n<line x1=\"" + px(kPlotLeft) + "\" x2=\"" +
       px(kPlotRight) + "\" y1=\"" + px(kPlotTop + kPlotHeight) + "\" y2=\"" + px(kPlotTop + kPlotHeight) +
       "\" stroke=\"#888\"/>\n";
  for (double f : {0.0, 0.5, 1.0}) {
    s += svg_text(kPlotLeft - 6, ypx(f * y_max) + 4, human(f * y_max, y_unit), " text-anchor=\"end\"");
    s += svg_text(kPlotLeft + f * w, kPlotTop + kPlotHeight + 16, human(f * span, Unit::kNs),
                  f == 0 ? "" : f == 1 ? " text-anchor=\"end\"" : " text-anchor=\"middle\"");
  }
  if (capacity > 0)
    s += "<line class=\"capacity\" x1=\"" + px(kPlotLeft) + "\" x2=\"" + px(kPlotRight) + "\" y1=\"" +
         px(ypx(capacity)) + "\" y2=\"" + px(ypx(capacity)) + "\" stroke=\"#c00\" stroke-dasharray=\"4 3\"/>\n";
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& x = series[k];
    const std::size_t n = x.bins.size();
    std::string points, values;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string y = px(ypx(x.bins[i] / x.scale));
      points += (i ? " " : "") + px(kPlotLeft + w * static_cast<double>(i) / static_cast<double>(n)) + "," + y +
                " " + px(kPlotLeft + w * static_cast<double>(i + 1) / static_cast<double>(n)) + "," + y;
      values += (i ? " " : "") + fixed(x.bins[i], 3);
    }
    const char* colour = kPalette[k % 10];
    s += "<polyline class=\"series\" data-series=\"" + xml_escape(x.name) + "\" data-bins=\"" + values +
         "\" data-span-ns=\"" + fixed(span, 3) + "\" data-scale=\"" + fixed(x.scale, 3) + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
    const double lx = legend[k].x, ly = kPlotTop + kPlotHeight + 30 + legend[k].row * 18;
    s += "<rect class=\"legend\" x=\"" + px(lx) + "\" y=\"" + px(ly) + "\" width=\"12\" height=\"12\" fill=\"" +
         colour + "\"/>\n" + svg_text(lx + 16, ly + 11, x.name);
  }
  return s + "</svg>\n";
}

std::string section(const std::string& id, const std::string& heading, const std::string& intro,
                    const std::string& body) {
  return "<section id=\"" + id + "\">\n<h2>" + heading + "</h2>\n<p>" + intro + "</p>\n" + body + "</section>\n";
}

// ---------------------------------------------------------------- sections

// `makespan`: summary.json's makespan_ns (NaN if absent): greater than 0 with
// no finished block, the run failed with kernels still on their cores.
std::string utilisation_section(const std::optional<Blocks>& blocks, double makespan) {
  const char* id = "chart-utilisation-over-time";
  const std::string intro =
      "Busy cores of each type over the makespan (first kernel start to last kernel end), as a share of the "
      "type's cores: the mean over each of " + std::to_string(kBins) + " bins (chip_swimlane_records.json).";
  std::string body;
  if (!blocks)
    body = empty_chart(id, missing(kSwimlane));
  else if (blocks->span <= 0 && makespan > 0)  // the swimlane's schema holds finished blocks only
    body = empty_chart(id, "no kernel ended before progress stopped (the file holds finished blocks only)");
  else if (blocks->span <= 0)
    body = empty_chart(id, "no kernel ran: nothing to draw");
  else {
    std::vector<Series> series;
    for (std::size_t t = 0; t < blocks->types.size(); ++t)
      series.push_back({blocks->types[t] + " (" + std::to_string(blocks->cores[t]) + " cores)",
                        mean_cover(blocks->busy[t], 0, blocks->span, kBins), static_cast<double>(blocks->cores[t])});
    body = step_chart(id, "core-type utilisation over time", series, blocks->span, 1, Unit::kRatio, 1);
  }
  return section("utilisation-over-time", "Core-type utilisation over time", intro, body);
}

// Per ring, task slots and heap bytes held at each scope boundary against the
// ring's capacity: the plot of `npusim scope-stats` (scope_stats_report.h).
std::string ring_occupancy_section(const std::optional<RunOutput>& file) {
  const char* id = "chart-ring-occupancy";
  const std::string intro =
      "Per ring, the task slots and heap bytes held (head - tail) at each scope's begin and end "
      "(scope_stats/scope_stats.jsonl), as a share of the ring's capacity (its metadata line, the run's "
      "ring_task_window and ring_heap). The runtime's scope records carry no timestamps: the x axis is the "
      "records in the order the run wrote them, not time.";
  std::string body;
  if (!file)
    body = empty_chart(id, missing(kScopeStats));
  else
    body = scope_stats_svg(parse_scope_stats(file->text, file->path),
                           std::string(" class=\"chart\" id=\"") + id + "\"");
  return section("ring-occupancy", "Ring occupancy against capacity", intro, body);
}

// The window of the series from task_stats: the makespan, first kernel start to last kernel end.
std::pair<double, double> kernel_window(const std::vector<TaskRow>& rows) {
  double first = kNoTimeNs, last = kNoTimeNs;
  for (const TaskRow& r : rows) {
    if (!std::isnan(r.start)) first = std::isnan(first) ? r.start : std::min(first, r.start);
    if (!std::isnan(r.end)) last = std::isnan(last) ? r.end : std::max(last, r.end);
  }
  return {first, last};
}

// `makespan`: summary.json's makespan_ns (NaN if absent). A failed run's
// makespan runs to where progress stopped when a kernel was still on its core
// then (docs/failures.md), past the last kernel end task_stats.csv has (none,
// if no kernel ended): the window runs to it too.
std::string ready_queue_section(const std::optional<std::vector<TaskRow>>& rows, const std::optional<Blocks>& blocks,
                                double makespan) {
  const char* id = "chart-ready-queue";
  const std::string intro =
      "Tasks ready but not yet dispatched (from ready_ns to first_dispatch_ns of task_stats.csv) per core type "
      "(the type of the cores that ran the task, from chip_swimlane_records.json; all tasks together without it), "
      "over the makespan: the mean over each of " + std::to_string(kBins) + " bins.";
  std::string body;
  auto [first, last] = rows ? kernel_window(*rows) : std::pair<double, double>{kNoTimeNs, kNoTimeNs};
  if (!std::isnan(first) && makespan > 0 && (std::isnan(last) || first + makespan > last + 0.5))
    last = first + makespan;
  if (!rows)
    body = empty_chart(id, missing(kTaskStats));
  else if (std::isnan(first) || std::isnan(last) || last <= first)
    body = empty_chart(id, "no kernel ran: nothing to draw");
  else {
    std::vector<std::string> names = blocks ? blocks->types : std::vector<std::string>{"all"};
    std::vector<std::vector<Interval>> waiting(names.size());
    for (const TaskRow& r : *rows) {
      if (std::isnan(r.ready) || std::isnan(r.dispatch) || r.dispatch <= r.ready) continue;
      std::size_t k = 0;
      if (blocks) {
        auto it = blocks->task_type.find(r.id);
        if (it == blocks->task_type.end()) continue;
        k = it->second;
      }
      waiting[k].push_back({r.ready, r.dispatch});
    }
    std::vector<Series> series;
    double top = 0;
    for (std::size_t k = 0; k < names.size(); ++k) {
      series.push_back({names[k], mean_cover(waiting[k], first, last - first, kBins)});
      for (double v : series.back().bins) top = std::max(top, v);
    }
    body = step_chart(id, "ready-queue depth over time", series, last - first, std::max(2.0, 2 * std::ceil(top / 2)),
                      Unit::kCount, 0);
  }
  return section("ready-queue", "Ready-queue depth over time", intro, body);
}

// The parts of summary.json's critical_path, in the order the page lists them, with their colours.
struct PartStyle {
  const char* key;
  const char* label;
  const char* colour;
};
constexpr PartStyle kParts[] = {{"kernel", "kernel", "#4e79a7"},
                                {"producer_wait", "waiting for a producer", "#b07aa1"},
                                {"core_wait", "waiting for a core", "#f28e2b"},
                                {"sched_overhead", "scheduler overhead", "#9c9c9c"},
                                {"orchestrator", "orchestrator-bound", "#e15759"}};

const PartStyle* part_style(const std::string& key) {
  for (const PartStyle& p : kParts)
    if (key == p.key) return &p;
  return nullptr;
}

// A time of summary.json's critical_path: a finite number >= 0, else an input error.
double path_time(const json& v, const std::string& file, const std::string& where) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    throw InputError(file, where, "expected a time in ns >= 0, found " + v.dump());
  return v.get<double>();
}

std::string critical_path_section(const json& summary, const std::string& file) {
  const char* id = "chart-critical-path";
  const std::string intro =
      "From the last kernel end back to the first kernel start (the makespan), every interval attributed to "
      "one part: kernel time; waiting for a producer (its last kernel end to the task becoming ready); waiting "
      "for a core (ready while the core it then ran on was still busy); scheduler overhead (ready or core free "
      "to dispatch, dispatch or doorbell to kernel start, a dummy task's resolution); orchestrator-bound (the "
      "task became ready at its submit: the orchestrator had not reached it). summary.json's critical_path.";
  const json::json_pointer at_path("/critical_path");
  if (!summary.contains(at_path) || summary.at(at_path).is_null())
    return section("critical-path", "Critical path", intro,
                   empty_chart(id, "no critical path in summary.json: it needs the run's records (--swimlane-level "
                                   "1 or more, the default) and a kernel that started"));
  const json& cp = summary.at(at_path);
  std::vector<std::pair<const PartStyle*, double>> parts;
  double from = 0, to = 0, sum = 0;
  std::vector<const json*> steps;
  try {
    from = path_time(cp.at("from_ns"), file, "/critical_path/from_ns");
    to = path_time(cp.at("to_ns"), file, "/critical_path/to_ns");
    for (const PartStyle& p : kParts) {
      const double v = path_time(cp.at("parts_ns").at(p.key), file, std::string("/critical_path/parts_ns/") + p.key);
      parts.emplace_back(&p, v);
      sum += v;
    }
    for (const json& s : cp.at("steps")) steps.push_back(&s);
  } catch (const json::exception& e) {
    throw InputError(file, "/critical_path", std::string("expected npusim's critical_path (") + e.what() + ")");
  }
  const double span = to > from ? to - from : 0;
  const std::size_t n_tasks = cp.value("tasks", std::size_t{0}), omitted = cp.value("steps_omitted", std::size_t{0});
  auto share = [&](double v) { return span > 0 ? " (" + human(v / span, Unit::kRatio) + ")" : ""; };
  std::ostringstream o;
  const json::json_pointer mk("/makespan_ns");
  const double makespan = summary.contains(mk) && summary.at(mk).is_number() ? summary.at(mk).get<double>() : span;
  o << "<p id=\"path-length\">" << grouped(static_cast<long long>(n_tasks)) << (n_tasks == 1 ? " task" : " tasks");
  if (!steps.empty())
    o << " from " << xml_escape(steps.front()->value("task", "")) << " to " << xml_escape(steps.back()->value("task", ""));
  o << ": the path covers " << human(sum, Unit::kNs) << share(sum) << ", from " << human(from, Unit::kNs) << " to "
    << human(to, Unit::kNs) << ";";
  for (const auto& [p, v] : parts) o << " " << p->label << " " << human(v, Unit::kNs) << share(v) << ",";
  o.seekp(-1, std::ios_base::cur);
  o << "; makespan " << human(makespan, Unit::kNs) << ".</p>\n";
  // One stacked bar of the whole path, then a row per listed step.
  const int rows = static_cast<int>(steps.size());
  std::vector<std::string> labels;
  for (const PartStyle& p : kParts) labels.push_back(p.label);
  const std::vector<LegendSlot> legend = legend_layout(labels, 10, kChartWidth - 10);
  const double top = 44 + 18 * legend.back().row;  // the first step's row
  const int height = static_cast<int>(top) + rows * 18 + 10;
  o << svg_open(id, height, "critical path");
  double x = kLabelWidth;
  const double whole = span > 0 ? kBarArea / span : 0;
  o << svg_text(kLabelWidth - 8, 17, "whole path", " text-anchor=\"end\"");
  for (const auto& [p, v] : parts) {
    if (v <= 0) continue;
    o << "<rect class=\"bar part\" data-part=\"" << p->key << "\" x=\"" << px(x) << "\" y=\"5\" width=\""
      << px(v * whole) << "\" height=\"16\" fill=\"" << p->colour << "\"><title>" << p->label << " "
      << human(v, Unit::kNs) << share(v) << "</title></rect>\n";
    x += v * whole;
  }
  for (std::size_t i = 0; i < labels.size(); ++i)  // the legend, in rows that fit the chart
    o << "<rect class=\"legend\" x=\"" << px(legend[i].x) << "\" y=\"" << px(27 + 18 * legend[i].row)
      << "\" width=\"10\" height=\"10\" fill=\"" << kParts[i].colour << "\"/>\n"
      << svg_text(legend[i].x + 14, 36 + 18 * legend[i].row, labels[i]);
  // The listed steps' own time axis: from the first listed step's start to the path's end.
  double x0 = to;
  for (const json* s : steps) x0 = std::min(x0, path_time(s->at("from_ns"), file, "/critical_path/steps"));
  const double scale = to > x0 ? kBarArea / (to - x0) : 0;
  for (int i = 0; i < rows; ++i) {
    const json& s = *steps[static_cast<std::size_t>(i)];
    const double y = top + i * 18;
    const std::string kind = s.value("kind", "kernel");
    const std::string label = s.value("task", "") + " " + (kind == "kernel" ? s.value("kernel", "") : "(" + kind + ")");
    o << svg_text(kLabelWidth - 8, y + 12, label.size() > 26 ? label.substr(0, 25) + "\xe2\x80\xa6" : label,
                  " text-anchor=\"end\"");
    double kernel = 0;
    for (const json& g : s.at("segments")) {
      const std::string key = g.value("part", "");
      const PartStyle* p = part_style(key);
      const double a = path_time(g.at("from_ns"), file, "/critical_path/steps"),
                   b = path_time(g.at("to_ns"), file, "/critical_path/steps");
      if (key == "kernel") kernel += b - a;
      o << "<rect class=\"" << (key == "kernel" ? "bar" : "stall") << "\" data-part=\"" << xml_escape(key)
        << "\" x=\"" << px(kLabelWidth + (a - x0) * scale) << "\" y=\"" << px(y + 2) << "\" width=\""
        << px(std::max(0.5, (b - a) * scale)) << "\" height=\"12\" fill=\"" << (p ? p->colour : "#000")
        << "\"><title>" << xml_escape(s.value("task", "")) << " " << (p ? p->label : key) << " "
        << human(b - a, Unit::kNs) << "</title></rect>\n";
    }
    o << svg_text(kLabelWidth + kBarArea + 8, y + 12, human(kernel, Unit::kNs));
  }
  o << "</svg>\n";
  if (omitted)
    o << "<p class=\"note\">The path's first " << grouped(static_cast<long long>(omitted))
      << " tasks are not listed (summary.json lists the last " << steps.size() << ").</p>\n";
  o << "<table id=\"path-table\">\n<tr><th>task</th><th>kernel</th>";
  for (const PartStyle& p : kParts) o << "<th>" << p.label << "</th>";
  o << "<th>ends at</th></tr>\n";
  for (const json* s : steps) {
    std::map<std::string, double> by;
    for (const json& g : s->at("segments"))
      by[g.value("part", "")] += path_time(g.at("to_ns"), file, "/critical_path/steps") -
                                 path_time(g.at("from_ns"), file, "/critical_path/steps");
    o << "<tr><td>" << xml_escape(s->value("task", "")) << "</td><td>" << xml_escape(s->value("kernel", ""))
      << (s->value("kind", "kernel") == "kernel" ? "" : " (" + xml_escape(s->value("kind", "")) + ")") << "</td>";
    for (const PartStyle& p : kParts) o << "<td>" << (by.count(p.key) ? human(by[p.key], Unit::kNs) : "-") << "</td>";
    o << "<td>" << human(path_time(s->at("to_ns"), file, "/critical_path/steps"), Unit::kNs) << "</td></tr>\n";
  }
  o << "</table>\n";
  return section("critical-path", "Critical path", intro, o.str());
}

// ---------------------------------------------------------------- task_stats.csv

// RFC 4180 records of `text`, each passed to `on_record(fields, n)` as it
// ends (n counts from 1): fields, quotes doubled inside quoted fields. Not
// kept: task_stats.csv of a million tasks held as strings took over a
// gigabyte. A record past `max_fields` is passed as soon as it is (a line of
// 100 MB of commas was 100 million strings, 4.3 GB): it is malformed.
template <class F>
void for_each_csv_record(const std::string& text, std::size_t max_fields, F on_record) {
  std::vector<std::string> rec;
  std::string field;
  std::size_t n = 0;
  bool quoted = false, any = false;
  auto end_field = [&] {
    rec.push_back(std::move(field)), field.clear();
    if (rec.size() > max_fields) on_record(rec, n + 1);
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c != '"') field += c;
      else if (i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else quoted = false;
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      end_field(), any = true;
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      end_field();
      on_record(rec, ++n), rec.clear(), any = false;
    } else {
      field += c, any = true;
    }
  }
  if (any || !field.empty()) end_field(), on_record(rec, ++n);
}

}  // namespace

std::optional<RunOutput> read_run_output(const std::string& run_dir, const std::string& name,
                                         std::uint64_t max_bytes) {
  std::error_code ec;
  std::string path = run_dir + "/" + name;
  if (!fs::exists(path, ec) && fs::exists(path + ".gz", ec)) path += ".gz";
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError(path, "", "cannot open the file");
  json_input::note_input(path);
  RunOutput out{path, ""};
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    out.text.append(buf, static_cast<std::size_t>(n));
    if (out.text.size() > max_bytes) {
      gzclose(f);
      throw InputError(path, "", "larger than " + std::to_string(max_bytes >> 20) + " MiB: not read");
    }
  }
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw InputError(path, "", "cannot read the file (a damaged gzip file?)");
  return out;
}

std::vector<double> mean_cover(const std::vector<Interval>& intervals, double t0, double span, int bins) {
  std::vector<double> out(static_cast<std::size_t>(std::max(bins, 0)), 0.0);
  if (bins <= 0 || span <= 0) return out;
  const double width = span / bins;
  for (const Interval& iv : intervals) {
    const double a = std::max(iv.from, t0), b = std::min(iv.to, t0 + span);
    if (!(b > a)) continue;
    const int first = std::clamp(static_cast<int>((a - t0) / width), 0, bins - 1);
    const int last = std::clamp(static_cast<int>((b - t0) / width), 0, bins - 1);
    for (int i = first; i <= last; ++i) {
      const double lo = std::max(a, t0 + i * width), hi = std::min(b, t0 + (i + 1) * width);
      if (hi > lo) out[static_cast<std::size_t>(i)] += (hi - lo) / width;
    }
  }
  return out;
}

std::vector<TaskRow> parse_task_stats(const std::string& text, const std::string& file) {
  constexpr std::size_t kMaxColumns = 4096;  // task_stats.csv has 17
  std::vector<std::string> head;
  std::size_t c_id = 0, c_task = 0, c_kernel = 0, c_ready = 0, c_dispatch = 0, c_start = 0, c_end = 0, c_complete = 0;
  std::vector<TaskRow> rows;
  auto on_header = [&](std::vector<std::string>& rec) {
    if (rec.size() > kMaxColumns)
      throw InputError(file, "line 1", "expected task_stats.csv's header line, found more than " +
                                           std::to_string(kMaxColumns) + " columns");
    head = rec;
    auto column = [&](const char* name) {
      const auto it = std::find(head.begin(), head.end(), name);
      if (it == head.end()) throw InputError(file, "line 1", std::string("expected a column ") + name);
      return static_cast<std::size_t>(it - head.begin());
    };
    c_id = column("task_id"), c_task = column("task"), c_kernel = column("kernel"), c_ready = column("ready_ns"),
    c_dispatch = column("first_dispatch_ns"), c_start = column("first_start_ns"), c_end = column("last_end_ns"),
    c_complete = column("complete_ns");
  };
  auto on_row = [&](std::vector<std::string>& rec, std::size_t n) {
    const std::string where = "line " + std::to_string(n);
    if (rec.size() != head.size())
      throw InputError(file, where, "expected " + std::to_string(head.size()) + " fields, found " +
                                        (rec.size() > head.size() ? "more" : std::to_string(rec.size())));
    auto time = [&](std::size_t c) {
      if (rec[c].empty()) return kNoTimeNs;
      try {
        std::size_t used = 0;
        const double v = std::stod(rec[c], &used);
        if (used == rec[c].size() && std::isfinite(v) && v >= 0) return v;
      } catch (const std::exception&) {
      }
      throw InputError(file, where, "expected a time in ns in column " + head[c] + ", found \"" + rec[c] + "\"");
    };
    TaskRow r;
    try {
      r.id = std::stoull(rec[c_id]);
    } catch (const std::exception&) {
      throw InputError(file, where, "expected a task_id, found \"" + rec[c_id] + "\"");
    }
    r.task = std::move(rec[c_task]);
    r.kernel = std::move(rec[c_kernel]);
    r.ready = time(c_ready), r.dispatch = time(c_dispatch), r.start = time(c_start), r.end = time(c_end);
    r.complete = time(c_complete);
    rows.push_back(std::move(r));
  };
  for_each_csv_record(text, kMaxColumns, [&](std::vector<std::string>& rec, std::size_t n) {
    if (n == 1)
      on_header(rec);
    else
      on_row(rec, n);
  });
  if (head.empty()) throw InputError(file, "line 1", "expected task_stats.csv's header line");
  return rows;
}

std::string series_sections(const std::string& run_dir, const json& summary) {
  std::optional<std::vector<TaskRow>> rows;
  if (const auto f = read_run_output(run_dir, kTaskStats.file, kMaxOutputBytes))
    rows = parse_task_stats(f->text, f->path);
  std::optional<Blocks> blocks;
  if (const auto f = read_run_output(run_dir, kSwimlane.file, kMaxOutputBytes)) blocks = parse_swimlane(*f);
  const auto scopes = read_run_output(run_dir, kScopeStats.file, kMaxOutputBytes);
  const json::json_pointer mk("/makespan_ns");
  const double makespan = summary.contains(mk) && summary.at(mk).is_number() ? summary.at(mk).get<double>() : kNoTimeNs;
  return utilisation_section(blocks, makespan) + ready_queue_section(rows, blocks, makespan) + ring_occupancy_section(scopes) +
         critical_path_section(summary, run_dir + "/summary.json");
}

}  // namespace npusim::report
