#include "sim/engine/barrier_cost.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "models/common/errors.h"
#include "sim/config/run_options.h"
#include "sim/engine/interrupt.h"
#include "sim/engine/subprocess.h"
#include "sim/record/json_out.h"
#include "sim/platform/platform_loader.h"

namespace fs = std::filesystem;

namespace npusim::engine {

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
  const int rc = run_self({"run", trace.string(), "--platform", platform, "--out", (dir / "out").string(), "--quiet",
                           "--no-suggest", "--swimlane-level", "0", "--no-deps", "--no-scope-stats"});
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

std::string fmt(double ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", ns);
  return b;
}

void write_svg(std::ostream& o, const std::vector<Point>& pts, const std::string& platform) {
  const double W = 720, H = 420, L = 70, R = 20, T = 40, B = 50;
  double xmax = 1, ymax = 1;
  for (const Point& p : pts) {
    xmax = std::max(xmax, static_cast<double>(p.participants));
    ymax = std::max({ymax, p.soft_ns, p.hard_ns});
  }
  ymax *= 1.1;
  auto X = [&](double v) { return L + (W - L - R) * v / xmax; };
  auto Y = [&](double v) { return H - B - (H - T - B) * v / ymax; };
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c"};
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<text x=\"" << L << "\" y=\"20\" font-size=\"14\">Barrier cost on " << platform
    << ": last release after the last arrival (ns)</text>\n";
  o << "<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << W - R << "\" y2=\"" << H - B << "\" stroke=\"black\"/>\n";
  o << "<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\"" << H - B << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double v = ymax * i / 4;
    o << "<text x=\"" << L - 6 << "\" y=\"" << Y(v) + 4 << "\" text-anchor=\"end\">" << fmt(v) << "</text>\n";
  }
  o << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 12 << "\" text-anchor=\"middle\">participants</text>\n";
  std::vector<std::string> types;
  for (const Point& p : pts)
    if (std::find(types.begin(), types.end(), p.type) == types.end()) types.push_back(p.type);
  for (std::size_t k = 0; k < types.size(); ++k) {
    const char* c = colors[k % 3];
    std::string path;
    for (const Point& p : pts)
      if (p.type == types[k] && p.soft_ns >= 0) {
        path += (path.empty() ? "M" : " L") + fmt(X(p.participants)) + " " + fmt(Y(p.soft_ns));
        o << "<circle cx=\"" << X(p.participants) << "\" cy=\"" << Y(p.soft_ns) << "\" r=\"3\" fill=\"" << c << "\"/>\n";
      }
    o << "<path d=\"" << path << "\" fill=\"none\" stroke=\"" << c << "\"/>\n";
    for (const Point& p : pts)
      if (p.type == types[k] && p.hard_ns >= 0)
        o << "<rect x=\"" << X(p.participants) - 4 << "\" y=\"" << Y(p.hard_ns) - 4
          << "\" width=\"8\" height=\"8\" fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\"/>\n";
    o << "<text x=\"" << W - R - 190 << "\" y=\"" << T + 16 * k << "\" fill=\"" << c << "\">" << types[k]
      << ": SOFT (line) / HARD (square)</text>\n";
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
  record::OutFile csv, svg, html;
  if (!req.csv.empty()) csv.open(req.csv);
  if (!req.svg.empty()) svg.open(req.svg);
  if (!req.html.empty()) html.open(req.html);
  const fs::path dir = fs::temp_directory_path() / ("npusim-barrier-cost-" + std::to_string(::getpid()));
  const int cleanup = interrupt::remember(interrupt::Kind::Tree, dir.string());
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
  interrupt::forget(cleanup);

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
  if (!req.csv.empty()) {
    std::ostringstream o;
    o << "core_type,participants,soft_ns,hard_ns\n";
    for (const Point& pt : pts)
      o << pt.type << ',' << pt.participants << ',' << (pt.soft_ns >= 0 ? fmt(pt.soft_ns) : "") << ','
        << (pt.hard_ns >= 0 ? fmt(pt.hard_ns) : "") << "\n";
    csv.raw(o.str());
    csv.close();
  }
  if (!req.svg.empty()) {
    std::ostringstream o;
    write_svg(o, pts, p.name);
    svg.raw(o.str());
    svg.close();
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
    html.close();
  }
  return 0;
}

}  // namespace npusim::engine
