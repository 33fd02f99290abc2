#include "sim/study/barrier_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "models/common/errors.h"
#include "sim/config/run_options.h"
#include "sim/host/interrupt.h"
#include "sim/host/subprocess.h"
#include "sim/record/json_out.h"
#include "sim/report/plot.h"
#include "sim/record/whole_file.h"
#include "sim/platform/platform_loader.h"

namespace fs = std::filesystem;

namespace npusim::study {

namespace {

struct Point {
  std::string type;
  int participants = 0;
  double soft_ns = -1;     // -1: did not complete
  double hard_ns = -1;
  std::string hard_note;   // why there is no HARD figure
};

// A kernel that is only the barrier, launched on `blocks` blocks with sync_start.
std::string barrier_trace(const std::string& type, int blocks, int used, bool hard) {
  nlohmann::json sc = {{"mode", hard ? "hard" : "soft"}, {"core_type", type}};
  if (!hard) {
    sc["workspace_arg"] = 0;
    sc["used_cores"] = used;
  }
  nlohmann::json body = nlohmann::json::array({{{"syncall", sc}}});
  nlohmann::json kernel = {{"func_id", 0}, {"core", type}};
  if (type == "mix")
    kernel["lanes"] = {{"aic", {{"body", body}}}, {"aiv", {{"body", body}}}};
  else
    kernel["body"] = body;
  nlohmann::json t = {{"npusim_trace", 1},
                      {"name", "barrier"},
                      {"kernels", {{"BARRIER", kernel}}},
                      {"tensors", {{"ws", {{"shape", {16}}, {"dtype", "int32"}}}}},
                      {"program", {{{"op", "submit"}, {"kernel", "BARRIER"}, {"block_num", blocks},
                                    {"sync_start", blocks > 1}, {"args", {{{"inout", "ws"}}}}}}}};
  return t.dump();
}

// Runs the trace; the barrier's cost is the last release after the last
// arrival (the task's last block end minus its last block start).
double measure(const std::string& platform, const std::string& trace_text, const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path trace = dir / "barrier.json";
  std::ofstream(trace) << trace_text;
  const int rc = host::run_self({"run", trace.string(), "--platform", platform, "--out", (dir / "out").string(),
                                 "--quiet", "--no-suggest", "--swimlane-level", "0", "--no-deps", "--no-scope-stats"});
  if (rc != 0) return rc == 1 ? -1 : -2;  // -1: the run failed (a hang); -2: it could not run
  std::ifstream in(dir / "out" / "task_stats.csv");
  std::string header, row;
  if (!std::getline(in, header) || !std::getline(in, row)) return -1;
  auto split = [](const std::string& s) {
    std::vector<std::string> v;
    std::stringstream ss(s);
    for (std::string x; std::getline(ss, x, ',');) v.push_back(x);
    return v;
  };
  const std::vector<std::string> names = split(header), values = split(row);
  auto col = [&](const char* n) {
    for (std::size_t i = 0; i < names.size() && i < values.size(); ++i)
      if (names[i] == n) return std::stod(values[i]);
    return -1.0;
  };
  return col("last_end_ns") - col("last_start_ns");
}

using report::plot::fmt;
using report::plot::round_ticks;
using report::plot::tick_text;

// One marker: a circle, a triangle or a diamond per core type; filled for
// SOFT, hollow for HARD.
void marker(std::ostream& o, std::size_t type, bool hard, double x, double y, const char* color) {
  const std::string paint = hard ? "fill=\"white\" stroke=\"" + std::string(color) + "\" stroke-width=\"2\""
                                 : "fill=\"" + std::string(color) + "\"";
  switch (type % 3) {
    case 0:
      o << "<circle cx=\"" << fmt(x) << "\" cy=\"" << fmt(y) << "\" r=\"4\" " << paint << "/>\n";
      break;
    case 1:
      o << "<path d=\"M" << fmt(x) << " " << fmt(y - 5) << " L" << fmt(x + 5) << " " << fmt(y + 4) << " L"
        << fmt(x - 5) << " " << fmt(y + 4) << " Z\" " << paint << "/>\n";
      break;
    default:
      o << "<path d=\"M" << fmt(x) << " " << fmt(y - 5) << " L" << fmt(x + 5) << " " << fmt(y) << " L" << fmt(x)
        << " " << fmt(y + 5) << " L" << fmt(x - 5) << " " << fmt(y) << " Z\" " << paint << "/>\n";
  }
}

// The plot: participants across, ns up, both axes ticked at round values;
// per core type a colour and a marker shape, SOFT a solid line through
// filled markers, HARD hollow markers on a dashed line; the legend to the
// right of the plot area, clear of the data (docs/barriers.md).
void write_svg(std::ostream& o, const std::vector<Point>& pts, const std::string& platform) {
  const double W = 860, H = 440, L = 80, T = 40, B = 60, legend_w = 200, R = legend_w + 30;
  double xmax = 1, ymax = 1;
  for (const Point& p : pts) {
    xmax = std::max(xmax, static_cast<double>(p.participants));
    ymax = std::max({ymax, p.soft_ns, p.hard_ns});
  }
  const std::vector<double> xt = round_ticks(xmax, 8), yt = round_ticks(ymax, 6);
  const double xtop = xt.back(), ytop = yt.back();
  auto X = [&](double v) { return L + (W - L - R) * v / xtop; };
  auto Y = [&](double v) { return H - B - (H - T - B) * v / ytop; };
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c"};
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<text x=\"" << L << "\" y=\"20\" font-size=\"14\">Barrier cost on " << platform
    << ": last release after the last arrival</text>\n";
  o << "<g class=\"axes\" stroke=\"black\">\n";
  o << "<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << X(xtop) << "\" y2=\"" << H - B << "\"/>\n";
  o << "<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\"" << H - B << "\"/>\n";
  o << "</g>\n";
  for (double v : yt) {
    o << "<line class=\"grid\" x1=\"" << L << "\" y1=\"" << fmt(Y(v)) << "\" x2=\"" << fmt(X(xtop)) << "\" y2=\""
      << fmt(Y(v)) << "\" stroke=\"#ddd\"/>\n";
    o << "<text class=\"ytick\" x=\"" << L - 8 << "\" y=\"" << fmt(Y(v) + 4) << "\" text-anchor=\"end\">"
      << tick_text(v) << "</text>\n";
  }
  for (double v : xt) {
    o << "<line x1=\"" << fmt(X(v)) << "\" y1=\"" << H - B << "\" x2=\"" << fmt(X(v)) << "\" y2=\"" << H - B + 5
      << "\" stroke=\"black\"/>\n";
    o << "<text class=\"xtick\" x=\"" << fmt(X(v)) << "\" y=\"" << H - B + 18 << "\" text-anchor=\"middle\">"
      << tick_text(v) << "</text>\n";
  }
  o << "<text x=\"" << fmt(X(xtop / 2)) << "\" y=\"" << H - 14 << "\" text-anchor=\"middle\">participants (cores)</text>\n";
  o << "<text x=\"18\" y=\"" << (T + H - B) / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 "
    << (T + H - B) / 2 << ")\">ns after the last arrival</text>\n";
  std::vector<std::string> types;
  for (const Point& p : pts)
    if (std::find(types.begin(), types.end(), p.type) == types.end()) types.push_back(p.type);
  const double lx = W - legend_w;
  o << "<g class=\"legend\">\n<rect x=\"" << lx - 10 << "\" y=\"" << T - 14 << "\" width=\"" << legend_w
    << "\" height=\"" << 36 * types.size() + 10 << "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (std::size_t k = 0; k < types.size(); ++k) {
    const char* c = colors[k % 3];
    for (int hard = 0; hard < 2; ++hard) {
      const double y = T + 36 * k + 18 * hard;
      o << "<line x1=\"" << lx << "\" y1=\"" << y - 4 << "\" x2=\"" << lx + 24 << "\" y2=\"" << y - 4 << "\" stroke=\""
        << c << "\"" << (hard ? " stroke-dasharray=\"4 3\"" : "") << "/>\n";
      marker(o, k, hard, lx + 12, y - 4, c);
      o << "<text x=\"" << lx + 32 << "\" y=\"" << y << "\">" << types[k] << (hard ? " HARD" : " SOFT") << "</text>\n";
    }
  }
  o << "</g>\n";
  for (std::size_t k = 0; k < types.size(); ++k) {
    const char* c = colors[k % 3];
    for (int hard = 0; hard < 2; ++hard) {
      std::string path;
      o << "<g class=\"series\" data-series=\"" << types[k] << (hard ? " HARD" : " SOFT") << "\">\n";
      for (const Point& p : pts) {
        const double v = hard ? p.hard_ns : p.soft_ns;
        if (p.type != types[k] || v < 0) continue;
        path += (path.empty() ? "M" : " L") + fmt(X(p.participants)) + " " + fmt(Y(v));
        marker(o, k, hard, X(p.participants), Y(v), c);
      }
      if (!path.empty())
        o << "<path d=\"" << path << "\" fill=\"none\" stroke=\"" << c << "\""
          << (hard ? " stroke-dasharray=\"4 3\"" : "") << "/>\n";
      o << "</g>\n";
    }
  }
  o << "</svg>\n";
}

// The participant counts to measure per core type: the request's that the
// type can take, or by default powers of two and the full count. A type left
// with none is an input error (an empty table says nothing).
std::vector<std::pair<std::string, std::vector<int>>> counts(const BarrierCostRequest& req, const Platform& p) {
  std::vector<std::pair<std::string, std::vector<int>>> all;
  for (const std::string& type : req.core_types) {
    // Participants are cores: for a mix barrier each block is one cluster's 3 cores.
    const int per_block = type == "mix" ? 3 : 1;
    const int full = type == "aiv" ? p.topo.aiv_cores() : type == "aic" ? p.topo.aic_cores() : p.topo.total_cores();
    std::vector<int> ns;
    if (req.participants.empty()) {
      for (int n = per_block * 2; n <= full; n *= 2) ns.push_back(n);
      if (std::find(ns.begin(), ns.end(), full) == ns.end()) ns.push_back(full);
    }
    for (int n : req.participants)
      if (n >= per_block && n <= full && n % per_block == 0) ns.push_back(n);
    if (ns.empty()) {
      std::string got;
      for (int n : req.participants) got += (got.empty() ? "" : ",") + std::to_string(n);
      throw InputError(config::kCommandLine, "--participants",
                       "no participant count to measure: " + type + " takes " +
                           (per_block == 1 ? "1 to " + std::to_string(full)
                                           : "multiples of 3 from 3 to " + std::to_string(full)) +
                           " participants, got " + got);
    }
    all.emplace_back(type, ns);
  }
  return all;
}

}  // namespace

int barrier_cost(const BarrierCostRequest& req, std::ostream& out) {
  const Platform p = platform::load_platform(req.platform);
  const auto plan = counts(req, p);
  // The extra outputs are created before measuring: a path that cannot be
  // written is an error before any simulation (a write error at the end).
  record::WholeFile csv, svg, html;
  if (!req.csv.empty()) csv.open_whole(req.csv);
  if (!req.svg.empty()) svg.open_whole(req.svg);
  if (!req.html.empty()) html.open_whole(req.html);
  const fs::path dir = fs::temp_directory_path() / ("npusim-barrier-cost-" + std::to_string(::getpid()));
  const int cleanup = host::interrupt::remember(host::interrupt::Kind::Tree, dir.string());
  std::vector<Point> pts;
  for (const auto& [type, ns] : plan) {
    const int per_block = type == "mix" ? 3 : 1;
    const int full = type == "aiv" ? p.topo.aiv_cores() : type == "aic" ? p.topo.aic_cores() : p.topo.total_cores();
    for (int n : ns) {
      Point pt;
      pt.type = type;
      pt.participants = n;
      const int blocks = n / per_block;
      pt.soft_ns = measure(req.platform, barrier_trace(type, blocks, n, false), dir);
      if (n == full)
        pt.hard_ns = measure(req.platform, barrier_trace(type, blocks, n, true), dir);
      else
        pt.hard_note = "deadlock (507018): waits for all " + std::to_string(full);
      pts.push_back(pt);
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  host::interrupt::forget(cleanup);

  if (!req.csv.empty()) {
    std::ostringstream o;
    // hard_note says why a HARD cell is empty (no comma in it).
    o << "core_type,participants,soft_ns,hard_ns,hard_note\n";
    for (const Point& pt : pts)
      o << pt.type << ',' << pt.participants << ',' << (pt.soft_ns >= 0 ? fmt(pt.soft_ns) : "") << ','
        << (pt.hard_ns >= 0 ? fmt(pt.hard_ns) : "") << ',' << pt.hard_note << "\n";
    csv.raw(o.str());
  }
  if (!req.svg.empty()) {
    std::ostringstream o;
    write_svg(o, pts, p.name);
    svg.raw(o.str());
  }
  if (!req.html.empty()) {
    std::ostringstream o;
    o << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>npusim barrier-cost</title></head><body>\n";
    o << "<h1>SOFT vs HARD syncall on " << p.name << "</h1>\n";
    write_svg(o, pts, p.name);
    o << "<table border=\"1\" cellpadding=\"4\"><tr><th>core type</th><th>participants</th><th>SOFT ns</th><th>HARD ns</th></tr>\n";
    for (const Point& pt : pts)
      o << "<tr><td>" << pt.type << "</td><td>" << pt.participants << "</td><td>"
        << (pt.soft_ns >= 0 ? fmt(pt.soft_ns) : "hang") << "</td><td>"
        << (pt.hard_ns >= 0 ? fmt(pt.hard_ns) : pt.hard_note) << "</td></tr>\n";
    o << "</table>\n<p>HARD: the FFTS barrier, ffts.barrier_release_ns after the last arrival (mix: plus the "
         "AIC/AIV flags), only with full occupancy. SOFT: PTO-ISA's atomic counter, one add per participant applied "
         "one at a time, then polling (see docs/barriers.md).</p>\n</body></html>\n";
    html.raw(o.str());
  }
  record::WholeFile::commit_together({&csv, &svg, &html});  // the files first: a write error prints no table
  out << "npusim barrier-cost on " << p.name << ": time from the last participant's arrival to the last release\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-9s %12s %12s  %s\n", "core_type", "participants", "SOFT_ns", "HARD_ns");
  out << line;
  for (const Point& pt : pts) {
    std::snprintf(line, sizeof line, "%-9s %12d %12s  %s\n", pt.type.c_str(), pt.participants,
                  pt.soft_ns >= 0 ? fmt(pt.soft_ns).c_str() : pt.soft_ns == -1 ? "hang" : "error", pt.hard_ns >= 0 ? fmt(pt.hard_ns).c_str() : pt.hard_note.c_str());
    out << line;
  }
  out << "model (PTO-ISA a2a3 SyncAll.hpp, syncall_soft.hpp): SOFT = dsb, ld_dev of the counter, dcci, an atomic add "
         "(a GM round trip; the adds to one counter applied gm.line_serialize_ns apart), dcci, dsb, then polls "
         "(ld_dev, gm.line_latency_ns each) until the count reaches the next multiple of used_cores, dsb; HARD = the "
         "FFTS mode-0 barrier over every physical core of the type, ffts.barrier_release_ns after the last arrival "
         "(mix: each AIC first waits for its AIVs' flag and then flags them, ffts.flag_ns each way), valid only with "
         "every physical core of the type taking part (docs/barriers.md)\n";
  return 0;
}

}  // namespace npusim::study
