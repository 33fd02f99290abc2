#include "sim/report/scope_stats_report.h"
#include "sim/report/page_text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/common/errors.h"
#include "sim/json/json_read.h"
#include "sim/json/json_util.h"
#include "sim/json/json_input.h"

namespace npusim::report {
namespace {

using nlohmann::json;

constexpr const char* kResourceNames[kScopeStatsResources] = {"task_window", "heap", "dep_pool"};
constexpr const char* kCapacityKeys[kScopeStatsResources] = {"task_window_max", "heap_max", "dep_pool_max"};
constexpr const char* kStartKeys[kScopeStatsResources] = {"task_window_start", "heap_start", "dep_pool_start"};
constexpr const char* kEndKeys[kScopeStatsResources] = {"task_window_end", "heap_end", "dep_pool_end"};
constexpr const char* kUnits[kScopeStatsResources] = {"slots", "bytes", "entries"};

constexpr double kNearCapacityPct = 80.0;  // imbalance: one ring at least this full...
constexpr double kFarBelowPct = 20.0;      // ...while every other ring stays below this

// ---------------------------------------------------------------- reading

std::string line_path(std::size_t line) { return "line " + std::to_string(line); }

// Field access on one line's object, with "line N" as the path.
class LineReader {
 public:
  LineReader(const json& obj, const std::string& file, std::size_t line)
      : obj_(obj), file_(file), line_(line) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(file_, line_path(line_), message);
  }
  const json& need(const char* key, const char* what) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) fail(std::string("missing key \"") + key + "\" (expected " + what + ")");
    return *it;
  }
  [[noreturn]] void wrong(const char* key, const char* expected, const json& v) const {
    fail(std::string("key \"") + key + "\": expected " + expected + ", found " + json_input::describe(v));
  }
  std::uint64_t uint(const char* key, const char* what, std::uint64_t min = 0) const {
    const json& v = need(key, what);
    std::uint64_t u = 0;
    if (!json_input::json_uint64(v, u) || u < min)
      wrong(key, min ? "an integer >= 1" : "an integer >= 0", v);
    return u;
  }
  bool boolean(const char* key, const char* what) const {
    const json& v = need(key, what);
    if (!v.is_boolean()) wrong(key, "true or false", v);
    return v.get<bool>();
  }
  std::string string(const char* key, const char* what) const {
    const json& v = need(key, what);
    if (!v.is_string()) wrong(key, "a string", v);
    return v.get<std::string>();
  }
  std::array<std::uint64_t, kScopeStatsRings> ring_array(const char* key, const char* what) const {
    const json& v = need(key, what);
    if (!v.is_array() || v.size() != kScopeStatsRings) wrong(key, "a list of 4 integers >= 1 (one per ring)", v);
    std::array<std::uint64_t, kScopeStatsRings> out{};
    for (int r = 0; r < kScopeStatsRings; ++r)
      if (!json_input::json_uint64(v[r], out[r]) || out[r] == 0)
        fail(std::string("key \"") + key + "\" entry " + std::to_string(r) +
             ": expected an integer >= 1, found " + json_input::describe(v[r]));
    return out;
  }

 private:
  const json& obj_;
  const std::string& file_;
  std::size_t line_;
};

json parse_line(const std::string& text, const std::string& file, std::size_t line, const char* what) {
  if (text.find_first_not_of(" \t\r") == std::string::npos)
    throw InputError(file, line_path(line), std::string("expected ") + what + ", found an empty line");
  json v;
  try {
    v = json_input::parse(text, file);
  } catch (const InputError& e) {  // the parser's path and position are within the line
    std::string message = e.message();
    const std::string within = " at line 1, column ";
    if (auto at = message.find(within); at != std::string::npos) message.replace(at, within.size(), " at column ");
    throw InputError(file, line_path(line) + e.path(), message);
  }
  if (!v.is_object())
    throw InputError(file, line_path(line), std::string("expected ") + what + ", found " + json_input::describe(v));
  return v;
}

constexpr const char* kMetaWhat = "the metadata line of a scope_stats.jsonl";
constexpr const char* kRecordWhat = "a scope record";

ScopeStatsMeta read_meta(const json& obj, const std::string& file) {
  LineReader in(obj, file, 1);
  ScopeStatsMeta m;
  const json& version = in.need("version", kMetaWhat);
  if (!version.is_number_integer() || version != 6)
    in.wrong("version", "6 (this reader knows schema version 6; version 5 heap counters wrap)", version);
  m.version = 6;
  m.fatal = in.boolean("fatal", kMetaWhat);
  m.dropped = in.uint("dropped", kMetaWhat);
  m.total = in.uint("total", kMetaWhat);
  for (int k = 0; k < kScopeStatsResources; ++k) m.capacity[k] = in.ring_array(kCapacityKeys[k], kMetaWhat);
  m.tensormap_max = in.uint("tensormap_max", kMetaWhat, 1);
  return m;
}

struct Record {
  std::string site;
  bool begin = true;
  int depth = 0, ring = 0;
  std::array<std::uint64_t, kScopeStatsResources> start{}, end{};
  std::uint64_t tensormap = 0;
  std::size_t line = 0;
};

Record read_record(const json& obj, const std::string& file, std::size_t line) {
  LineReader in(obj, file, line);
  Record r;
  r.line = line;
  r.site = in.string("site", kRecordWhat);
  const json& phase = in.need("phase", kRecordWhat);
  if (!phase.is_string() || (phase != "begin" && phase != "end")) in.wrong("phase", "\"begin\" or \"end\"", phase);
  r.begin = phase == "begin";
  std::uint64_t depth = in.uint("depth", kRecordWhat);
  if (depth > 1000) in.wrong("depth", "an integer in [0, 1000]", obj["depth"]);
  r.depth = static_cast<int>(depth);
  std::uint64_t ring = in.uint("ring", kRecordWhat);
  if (ring >= kScopeStatsRings) in.wrong("ring", "a ring index in [0, 3]", obj["ring"]);
  r.ring = static_cast<int>(ring);
  for (int k = 0; k < kScopeStatsResources; ++k) {
    r.start[k] = in.uint(kStartKeys[k], kRecordWhat);
    r.end[k] = in.uint(kEndKeys[k], kRecordWhat);
    if (r.end[k] < r.start[k])
      in.fail(std::string(kEndKeys[k]) + " " + std::to_string(r.end[k]) + " is below " + kStartKeys[k] + " " +
              std::to_string(r.start[k]) + " (expected head >= tail)");
  }
  r.tensormap = in.uint("tensormap", kRecordWhat);
  return r;
}

void raise(ScopeStatsPeak& peak, std::uint64_t value, const Record& at) {
  if (peak.line != 0 && value <= peak.value) return;
  peak.value = value;
  peak.site = at.site;
  peak.line = at.line;
}

// Pairs `end` with the `begin` of its depth and folds the scope into the
// peaks of its ring and of its site (`site_index`: (ring, site) -> sites[i]).
void close_scope(ScopeStatsReport& rep, std::map<std::pair<int, std::string>, std::size_t>& site_index,
                 const Record& b, const Record& e) {
  if (e.ring != b.ring)
    throw InputError(rep.file, line_path(e.line),
                     "ring " + std::to_string(e.ring) + " differs from ring " + std::to_string(b.ring) +
                         " of its begin at line " + std::to_string(b.line) + " (expected the same ring)");
  auto [at, added] = site_index.try_emplace({e.ring, e.site}, rep.sites.size());
  if (added) rep.sites.push_back(ScopeStatsSitePeaks{e.ring, e.site, {}});
  ScopeStatsRingPeaks& ring = rep.rings[e.ring];
  ScopeStatsRingPeaks& site = rep.sites[at->second].peaks;
  ++ring.scopes;
  ++site.scopes;
  for (int k = 0; k < kScopeStatsResources; ++k) {
    if (e.end[k] < b.start[k])
      throw InputError(rep.file, line_path(e.line),
                       std::string(kEndKeys[k]) + " " + std::to_string(e.end[k]) + " is below " + kStartKeys[k] +
                           " " + std::to_string(b.start[k]) + " of its begin at line " + std::to_string(b.line) +
                           " (expected counters that never go back)");
    for (ScopeStatsRingPeaks* peaks : {&ring, &site}) {
      raise(peaks->high_water[k], e.end[k] - b.start[k], e);
      raise(peaks->live[k], e.end[k] - e.start[k], e);
    }
  }
}

// ---------------------------------------------------------------- formatting

std::string fixed1(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string pct_text(std::uint64_t value, std::uint64_t cap) {
  if (cap == 0) return "n/a";
  double p = 100.0 * static_cast<double>(value) / static_cast<double>(cap);
  if (value > 0 && p < 0.05) return "<0.1%";
  return fixed1(p) + "%";
}

std::string bytes_text(std::uint64_t v) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double x = static_cast<double>(v);
  int u = 0;
  while (x >= 1024.0 && u < 4) {
    x /= 1024.0;
    ++u;
  }
  return u == 0 ? std::to_string(v) + " B" : fixed1(x) + " " + units[u];
}

std::string value_text(int resource, std::uint64_t v) {
  std::string s = std::to_string(v);
  if (resource == kResHeap && v >= 1024) s += " (" + bytes_text(v) + ")";
  return s;
}

std::string site_text(const ScopeStatsPeak& p) {
  if (p.value == 0) return "-";
  return p.site + " (line " + std::to_string(p.line) + ")";
}

std::string rings_list(const std::vector<int>& rings) {
  std::string s;
  for (std::size_t i = 0; i < rings.size(); ++i) s += (i ? ", " : "") + std::to_string(rings[i]);
  return s;
}

// One line per (ring, site): its closed scopes and, per resource, the peak
// high_water / live_at_exit over them.
void print_sites(const ScopeStatsReport& rep, std::ostream& out) {
  if (rep.sites.empty()) return;
  std::size_t width = 4;
  for (const ScopeStatsSitePeaks& s : rep.sites) width = std::max(width, s.site.size());
  auto pair = [](int k, const ScopeStatsRingPeaks& p) {
    if (k == kResHeap) return bytes_text(p.high_water[k].value) + " / " + bytes_text(p.live[k].value);
    return std::to_string(p.high_water[k].value) + " / " + std::to_string(p.live[k].value);
  };
  out << "\nper site: closed scopes; peak high_water / live_at_exit\n";
  out << "  " << std::left << std::setw(6) << "ring" << std::setw(static_cast<int>(width) + 2) << "site"
      << std::setw(8) << "scopes" << std::setw(14) << "task_window" << std::setw(26) << "heap" << "dep_pool\n";
  for (const ScopeStatsSitePeaks& s : rep.sites)
    out << "  " << std::setw(6) << s.ring << std::setw(static_cast<int>(width) + 2) << s.site << std::setw(8)
        << s.peaks.scopes << std::setw(14) << pair(kResTaskWindow, s.peaks) << std::setw(26)
        << pair(kResHeap, s.peaks) << pair(kResDepPool, s.peaks) << "\n";
  out << std::right;
}

}  // namespace

std::uint64_t ScopeStatsReport::usable(int resource, int ring) const {
  std::uint64_t cap = meta.capacity[resource][ring];
  // window-1 live slots (PTO2TaskAllocator::alloc); every heap byte and every
  // dep-pool entry (PTO2DepListPool::alloc fails only at used >= capacity).
  return resource == kResTaskWindow ? cap - 1 : cap;
}

bool ScopeStatsReport::is_constraint(int resource, int ring) const {
  return rings[ring].scopes > 0 && rings[ring].high_water[resource].value >= usable(resource, ring);
}

int ScopeStatsReport::imbalanced_ring(int resource) const {
  int full = -1;
  for (int r = 0; r < kScopeStatsRings; ++r) {
    double p = 100.0 * static_cast<double>(rings[r].high_water[resource].value) /
               static_cast<double>(meta.capacity[resource][r]);
    if (p >= kNearCapacityPct) {
      if (full >= 0) return -1;
      full = r;
    } else if (p >= kFarBelowPct) {
      return -1;
    }
  }
  return full;
}

namespace {

// Reads the lines of `in` (a scope_stats.jsonl); `file` labels errors.
ScopeStatsReport parse_lines(std::istream& in, const std::string& file) {
  ScopeStatsReport rep;
  rep.file = file;
  std::map<int, Record> open;  // depth -> its begin
  std::map<std::pair<int, std::string>, std::size_t> site_index;
  std::size_t line = 0;
  // A record is a few hundred bytes: a line beyond kMaxLine is not one (and
  // /dev/zero has no line end at all), so reading stops there.
  constexpr std::size_t kMaxLine = 1 << 16;
  auto next_line = [&](std::string& one) {
    one.clear();
    for (int c; (c = in.get()) != std::char_traits<char>::eof();) {
      if (c == '\n') return true;
      if (one.size() >= kMaxLine)
        throw InputError(file, "", "line " + std::to_string(line + 1) + " is longer than " +
                                       std::to_string(kMaxLine) + " bytes: not a scope_stats.jsonl");
      one += static_cast<char>(c);
    }
    return !one.empty();
  };
  for (std::string one; next_line(one);) {
    ++line;
    if (line == 1) {
      rep.meta = read_meta(parse_line(one, file, line, kMetaWhat), file);
      continue;
    }
    Record r = read_record(parse_line(one, file, line, kRecordWhat), file, line);
    const std::uint64_t index = rep.records++;
    raise(rep.tensormap, r.tensormap, r);
    rep.points[r.ring].push_back(ScopeStatsPoint{index, r.end[kResTaskWindow] - r.start[kResTaskWindow],
                                                 r.end[kResHeap] - r.start[kResHeap]});
    if (r.begin) {
      open[r.depth] = std::move(r);
      continue;
    }
    auto it = open.find(r.depth);
    if (it == open.end()) {
      ++rep.unmatched_ends;
      continue;
    }
    close_scope(rep, site_index, it->second, r);
    open.erase(it);
  }
  if (in.bad()) throw InputError(file, "", std::string("cannot read the file: ") + std::strerror(errno));
  if (line == 0) throw InputError(file, line_path(1), std::string("expected ") + kMetaWhat + ", found an empty file");
  for (const auto& [depth, b] : open) rep.wedged.push_back(ScopeStatsOpenScope{b.site, depth, b.ring, b.line});
  std::stable_sort(rep.sites.begin(), rep.sites.end(),
                   [](const ScopeStatsSitePeaks& a, const ScopeStatsSitePeaks& b) { return a.ring < b.ring; });
  return rep;
}

}  // namespace

ScopeStatsReport parse_scope_stats(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  return parse_lines(in, file);
}

ScopeStatsReport read_scope_stats(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path, "", "is a folder, not a scope_stats.jsonl");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open file: ") + std::strerror(errno));
  json_input::note_input(path);
  return parse_lines(in, path);
}

// ---------------------------------------------------------------- summary

void print_scope_stats_summary(const ScopeStatsReport& rep, std::ostream& out) {
  const ScopeStatsMeta& m = rep.meta;
  out << "scope_stats: " << rep.file << "\n";
  out << "metadata: version " << m.version << ", fatal " << (m.fatal ? "true" : "false") << ", dropped "
      << m.dropped << ", total " << m.total << "; " << rep.records << " records read\n";
  out << "capacities (ring 0 / 1 / 2 / 3):\n";
  for (int k = 0; k < kScopeStatsResources; ++k) {
    out << "  " << std::left << std::setw(13) << kResourceNames[k] << std::right;
    for (int r = 0; r < kScopeStatsRings; ++r) out << (r ? " / " : "") << value_text(k, m.capacity[k][r]);
    out << " " << kUnits[k] << "\n";
  }
  out << "  " << std::left << std::setw(13) << "tensormap" << std::right << m.tensormap_max
      << " entries (one global table)\n";

  for (int r = 0; r < kScopeStatsRings; ++r) {
    const ScopeStatsRingPeaks& ring = rep.rings[r];
    out << "\nring " << r << ": ";
    if (ring.scopes == 0) {
      out << "no scope closed on this ring\n";
      continue;
    }
    out << ring.scopes << (ring.scopes == 1 ? " scope" : " scopes") << "\n";
    out << "  " << std::left << std::setw(13) << "resource" << std::setw(14) << "metric" << std::setw(26)
        << "peak" << std::setw(8) << "of cap" << "site of the peak\n";
    for (int k = 0; k < kScopeStatsResources; ++k) {
      for (int which = 0; which < 2; ++which) {
        const ScopeStatsPeak& p = which == 0 ? ring.high_water[k] : ring.live[k];
        out << "  " << std::setw(13) << (which == 0 ? kResourceNames[k] : "") << std::setw(14)
            << (which == 0 ? "high_water" : "live_at_exit") << std::setw(26) << value_text(k, p.value)
            << std::setw(8) << pct_text(p.value, m.capacity[k][r]) << site_text(p);
        if (which == 0 && rep.is_constraint(k, r)) out << "  <- the constraint";
        out << "\n";
      }
    }
    out << std::right;
  }

  print_sites(rep, out);

  out << "\npeak high_water by ring (0 / 1 / 2 / 3):\n";
  for (int k = 0; k < kScopeStatsResources; ++k) {
    std::vector<int> used;
    out << "  " << std::left << std::setw(13) << kResourceNames[k] << std::right;
    for (int r = 0; r < kScopeStatsRings; ++r) {
      out << (r ? " / " : "") << rep.rings[r].high_water[k].value;
      if (rep.rings[r].high_water[k].value) used.push_back(r);
    }
    if (used.empty()) out << "   unused\n";
    else out << "   on ring" << (used.size() > 1 ? "s " : " ") << rings_list(used) << "\n";
  }
  out << "tensormap: peak " << rep.tensormap.value << " of " << m.tensormap_max << " entries ("
      << pct_text(rep.tensormap.value, m.tensormap_max) << ")";
  if (rep.tensormap.value) out << " at " << site_text(rep.tensormap);
  out << "\n";

  std::vector<std::string> findings;
  for (int r = 0; r < kScopeStatsRings; ++r)
    for (int k = 0; k < kScopeStatsResources; ++k) {
      if (!rep.is_constraint(k, r)) continue;
      const ScopeStatsRingPeaks& ring = rep.rings[r];
      std::string f = "the constraint: ring " + std::to_string(r) + " " + kResourceNames[k] +
                      ": the peak high_water " + std::to_string(ring.high_water[k].value) + " (" +
                      pct_text(ring.high_water[k].value, m.capacity[k][r]) + ") reaches the capacity " +
                      std::to_string(m.capacity[k][r]) + " at " + site_text(ring.high_water[k]);
      if (ring.high_water[k].value > m.capacity[k][r])
        f += "; more than the ring holds, so it filled and reclaimed inside that scope: the scope streams "
             "(live_at_exit peaks at " + pct_text(ring.live[k].value, m.capacity[k][r]) + ")";
      findings.push_back(f);
    }
  for (int k = 0; k < kScopeStatsResources; ++k) {
    int full = rep.imbalanced_ring(k);
    if (full < 0) continue;
    std::vector<int> others;
    for (int r = 0; r < kScopeStatsRings; ++r)
      if (r != full) others.push_back(r);
    findings.push_back("imbalance: " + std::string(kResourceNames[k]) + " on ring " + std::to_string(full) + " is at " +
                       pct_text(rep.rings[full].high_water[k].value, m.capacity[k][full]) +
                       " of its capacity while rings " + rings_list(others) + " stay below " +
                       std::to_string(static_cast<int>(kFarBelowPct)) +
                       "%: place scopes so the load spreads over the rings before growing any of them");
  }
  if (!rep.wedged.empty()) {
    std::string f = "wedged: " + std::to_string(rep.wedged.size()) +
                    " scope(s) have only a begin at the end of the file; the run wedged inside ";
    for (std::size_t i = 0; i < rep.wedged.size(); ++i) {
      const ScopeStatsOpenScope& w = rep.wedged[i];
      f += (i ? " > " : "") + w.site + " (depth " + std::to_string(w.depth) + ", ring " + std::to_string(w.ring) +
           ", line " + std::to_string(w.line) + ")";
    }
    f += "; the last open site, " + rep.wedged.back().site + " (ring " + std::to_string(rep.wedged.back().ring) +
         "), is where the ring filled";
    findings.push_back(f);
  }
  if (m.fatal) findings.push_back("fatal: a fatal was latched mid-run; records after it are diagnostic only");
  if (m.dropped)
    findings.push_back("dropped: " + std::to_string(m.dropped) +
                       " records were lost on the device; the peaks are lower bounds");
  if (m.total >= m.dropped && m.total - m.dropped != rep.records)
    findings.push_back("incomplete: the metadata counts " + std::to_string(m.total - m.dropped) +
                       " records (total - dropped) but the file has " + std::to_string(rep.records));
  if (rep.unmatched_ends)
    findings.push_back("unpaired: " + std::to_string(rep.unmatched_ends) +
                       " end record(s) without a begin at their depth were skipped");
  out << "\nfindings:\n";
  if (findings.empty()) out << "  none\n";
  for (const std::string& f : findings) out << "  - " << f << "\n";
}

// ---------------------------------------------------------------- plot

namespace {

constexpr double kWidth = 960, kLeft = 64, kRight = 24, kTop = 72, kPanel = 150, kPanelGap = 64;
constexpr const char* kTaskColor = "#1f77b4";
constexpr const char* kHeapColor = "#d62728";

struct Scale {
  double x0, x1, y0, y1;  // pixel box of the panel's plot area
  double xmax, ymax;      // data ranges (x from 0, y from 0 %)
  double x(double i) const { return xmax <= 0 ? (x0 + x1) / 2 : x0 + (x1 - x0) * i / xmax; }
  double y(double pct) const { return y1 - (y1 - y0) * pct / ymax; }
};

double pct(std::uint64_t v, std::uint64_t cap) {
  return cap ? 100.0 * static_cast<double>(v) / static_cast<double>(cap) : 0.0;
}

// The ring's points, at most one per pixel column (the column's maxima).
std::vector<ScopeStatsPoint> thin(const std::vector<ScopeStatsPoint>& pts, const Scale& s) {
  const std::size_t columns = static_cast<std::size_t>(s.x1 - s.x0);
  if (pts.size() <= 2 * columns) return pts;
  std::vector<ScopeStatsPoint> out;
  long last = -1;
  for (const ScopeStatsPoint& p : pts) {
    long col = static_cast<long>(s.x(static_cast<double>(p.index)) - s.x0);
    if (col != last) {
      out.push_back(p);
      last = col;
      continue;
    }
    out.back().task_slots = std::max(out.back().task_slots, p.task_slots);
    out.back().heap_bytes = std::max(out.back().heap_bytes, p.heap_bytes);
  }
  return out;
}

void polyline(std::ostringstream& o, const std::vector<ScopeStatsPoint>& pts, const Scale& s, bool heap,
              std::uint64_t cap, const char* color) {
  if (pts.size() == 1) {
    const ScopeStatsPoint& p = pts[0];
    o << "<circle cx=\"" << fixed1(s.x(static_cast<double>(p.index))) << "\" cy=\""
      << fixed1(s.y(pct(heap ? p.heap_bytes : p.task_slots, cap))) << "\" r=\"2.5\" fill=\"" << color << "\"/>\n";
    return;
  }
  o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\" points=\"";
  for (std::size_t i = 0; i < pts.size(); ++i)
    o << (i ? " " : "") << fixed1(s.x(static_cast<double>(pts[i].index))) << ","
      << fixed1(s.y(pct(heap ? pts[i].heap_bytes : pts[i].task_slots, cap)));
  o << "\"/>\n";
}

void text(std::ostringstream& o, double x, double y, const std::string& s, const char* extra = "") {
  o << "<text x=\"" << fixed1(x) << "\" y=\"" << fixed1(y) << "\"" << extra << ">" << xml_escape(s) << "</text>\n";
}

void line(std::ostringstream& o, double x1, double y1, double x2, double y2, const char* style) {
  o << "<line x1=\"" << fixed1(x1) << "\" y1=\"" << fixed1(y1) << "\" x2=\"" << fixed1(x2) << "\" y2=\""
    << fixed1(y2) << "\" " << style << "/>\n";
}

// Marks the record where the peak high-water of `resource` was reached; the
// label goes `dy` below the mark, kept within [lo, hi] of the plot area (the
// task label above the heap label when both marks sit on the same record).
void annotate_peak(std::ostringstream& o, const ScopeStatsReport& rep, int r, int resource, const Scale& s,
                   double dy, double lo, double hi, const char* color) {
  const ScopeStatsPeak& p = rep.rings[r].high_water[resource];
  if (p.value == 0) return;
  const std::uint64_t index = p.line - 2;  // records start on line 2
  std::uint64_t occupancy = 0;
  for (const ScopeStatsPoint& q : rep.points[r])
    if (q.index == index) occupancy = resource == kResHeap ? q.heap_bytes : q.task_slots;
  const std::uint64_t cap = rep.meta.capacity[resource][r];
  const double cx = s.x(static_cast<double>(index)), cy = s.y(pct(occupancy, cap));
  o << "<circle cx=\"" << fixed1(cx) << "\" cy=\"" << fixed1(cy) << "\" r=\"4\" fill=\"none\" stroke=\"" << color
    << "\" stroke-width=\"1.5\"/>\n";
  const bool right_half = cx > (s.x0 + s.x1) / 2;
  std::string label = std::string("peak ") + kResourceNames[resource] + " high_water " + pct_text(p.value, cap) +
                      " at " + p.site + " (line " + std::to_string(p.line) + ")";
  std::string anchor = std::string(" font-size=\"11\" fill=\"") + color + "\" text-anchor=\"" +
                       (right_half ? "end" : "start") + "\"";
  text(o, cx + (right_half ? -8 : 8), std::clamp(cy + dy, s.y0 + lo, s.y1 - hi), label, anchor.c_str());
}

void panel(std::ostringstream& o, const ScopeStatsReport& rep, int r, double top) {
  const ScopeStatsMeta& m = rep.meta;
  double ymax = 100;
  for (const ScopeStatsPoint& p : rep.points[r])
    ymax = std::max({ymax, pct(p.task_slots, m.capacity[kResTaskWindow][r]), pct(p.heap_bytes, m.capacity[kResHeap][r])});
  ymax = std::ceil(ymax / 25.0) * 25.0;
  Scale s{kLeft, kWidth - kRight, top, top + kPanel,
          rep.records > 1 ? static_cast<double>(rep.records - 1) : 0.0, ymax};
  text(o, kLeft, top - 10,
       "ring " + std::to_string(r) + ": task window " + std::to_string(m.capacity[kResTaskWindow][r]) +
           " slots, heap " + bytes_text(m.capacity[kResHeap][r]) + ", " + std::to_string(rep.points[r].size()) +
           " records",
       " font-size=\"13\" font-weight=\"bold\"");
  o << "<rect x=\"" << fixed1(s.x0) << "\" y=\"" << fixed1(s.y0) << "\" width=\"" << fixed1(s.x1 - s.x0)
    << "\" height=\"" << fixed1(s.y1 - s.y0) << "\" fill=\"#fafafa\" stroke=\"#999\"/>\n";
  for (double g = 0; g <= ymax; g += 25) {
    if (g > 0 && g != 100) line(o, s.x0, s.y(g), s.x1, s.y(g), "stroke=\"#e4e4e4\"");
    text(o, s.x0 - 6, s.y(g) + 4, std::to_string(static_cast<int>(g)) + "%",
         " font-size=\"10\" text-anchor=\"end\"");
  }
  line(o, s.x0, s.y(100), s.x1, s.y(100), "stroke=\"#000\" stroke-dasharray=\"6,3\"");
  text(o, s.x1 - 4, s.y(100) - 4, "capacity", " font-size=\"10\" text-anchor=\"end\"");
  text(o, s.x0, s.y1 + 14, "0", " font-size=\"10\" text-anchor=\"middle\"");
  text(o, s.x1, s.y1 + 14, std::to_string(rep.records ? rep.records - 1 : 0), " font-size=\"10\" text-anchor=\"middle\"");
  text(o, (s.x0 + s.x1) / 2, s.y1 + 14, "record index", " font-size=\"10\" text-anchor=\"middle\" fill=\"#555\"");
  if (rep.points[r].empty()) {
    text(o, (s.x0 + s.x1) / 2, (s.y0 + s.y1) / 2, "no scope on this ring", " font-size=\"12\" text-anchor=\"middle\" fill=\"#777\"");
    return;
  }
  std::vector<ScopeStatsPoint> pts = thin(rep.points[r], s);
  polyline(o, pts, s, false, m.capacity[kResTaskWindow][r], kTaskColor);
  polyline(o, pts, s, true, m.capacity[kResHeap][r], kHeapColor);
  annotate_peak(o, rep, r, kResTaskWindow, s, -8, 10, 18, kTaskColor);
  annotate_peak(o, rep, r, kResHeap, s, 14, 24, 4, kHeapColor);
  for (const ScopeStatsOpenScope& w : rep.wedged) {
    if (w.ring != r) continue;
    double x = s.x(static_cast<double>(w.line - 2));
    line(o, x, s.y0, x, s.y1, "stroke=\"#b00\" stroke-dasharray=\"2,2\"");
    text(o, x - 4, s.y0 + 12, "wedged inside " + w.site, " font-size=\"11\" fill=\"#b00\" text-anchor=\"end\"");
  }
}

}  // namespace

std::string scope_stats_svg(const ScopeStatsReport& rep, const std::string& svg_attrs) {
  const double height = kTop + kScopeStatsRings * (kPanel + kPanelGap) + 10;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\"" << svg_attrs << " width=\"" << kWidth << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << kWidth << " " << height << "\" font-family=\"sans-serif\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  text(o, kLeft, 20, "scope_stats: occupancy (head - tail) at each scope boundary, % of the ring's capacity",
       " font-size=\"14\" font-weight=\"bold\"");
  text(o, kLeft, 38,
       "x = record index in file order (the runtime's records carry no timestamps); "
       "columns thinned to their maxima when dense",
       " font-size=\"11\" fill=\"#555\"");
  o << "<rect x=\"" << kLeft << "\" y=\"51\" width=\"12\" height=\"3\" fill=\"" << kTaskColor << "\"/>\n";
  text(o, kLeft + 16, 56, "task slots", " font-size=\"11\"");
  o << "<rect x=\"" << kLeft + 90 << "\" y=\"51\" width=\"12\" height=\"3\" fill=\"" << kHeapColor << "\"/>\n";
  text(o, kLeft + 106, 56, "heap bytes", " font-size=\"11\"");
  text(o, kLeft + 180, 56, "circle: the record where the ring's peak high_water was reached (its scope's end)",
       " font-size=\"11\" fill=\"#555\"");
  for (int r = 0; r < kScopeStatsRings; ++r) panel(o, rep, r, kTop + 24 + r * (kPanel + kPanelGap));
  o << "</svg>\n";
  return o.str();
}

std::string scope_stats_html(const ScopeStatsReport& rep) {
  std::ostringstream summary;
  print_scope_stats_summary(rep, summary);
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>scope_stats: "
    << xml_escape(rep.file) << "</title>\n"
    << "<style>body{font-family:sans-serif;margin:24px;color:#222}"
       "pre{background:#f6f6f6;padding:12px;overflow-x:auto}</style>\n</head>\n<body>\n"
    << "<h1>scope_stats</h1>\n<p>" << xml_escape(rep.file) << "</p>\n"
    << "<p>Per ring: task slots and heap bytes held (head - tail) at each scope boundary, as a percentage "
       "of the ring's capacity from the metadata line. The x axis is the record index in file order: the "
       "runtime's scope records carry no timestamps, so distance on it is not time.</p>\n"
    << scope_stats_svg(rep) << "<h2>Summary</h2>\n<pre>" << xml_escape(summary.str()) << "</pre>\n"
    << "</body>\n</html>\n";
  return o.str();
}

int scope_stats_command(const std::string& path, const std::string& html_path, const std::string& svg_path,
                        std::ostream& out) {
  ScopeStatsReport rep = read_scope_stats(path);
  if (!html_path.empty()) write_file(html_path, scope_stats_html(rep));
  if (!svg_path.empty()) write_file(svg_path, scope_stats_svg(rep));
  print_scope_stats_summary(rep, out);
  return 0;
}

}  // namespace npusim::report
