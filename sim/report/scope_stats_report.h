// `npusim scope-stats FILE [--html OUT.html] [--svg OUT.svg]`: a summary of a
// scope_stats.jsonl (simpler docs/dfx/scope-stats.md, schema version 6), the
// numbers the seed page 004 §5 computes with its pairing script, plus a plot.
//
// Pairing follows that script: an `end` record closes the `begin` of the same
// depth (an `end` without one is skipped and counted). For each closed scope,
// on its ring and for each resource R of task window / heap / dep pool:
//   scope_high_water = end.R_end - begin.R_start   (not capped: a streaming
//                                                   scope can exceed the ring)
//   real_occupancy   = end.R_end - end.R_start     (what is held at exit)
// The summary gives per ring and resource the peak of each and its site, as a
// percentage of the ring's capacity from the metadata line; the same peaks per
// site (so a peak can be attributed to a scope site); the peak of the
// global tensormap over every record; the metadata (version, fatal, dropped,
// capacities); and these findings:
//   - the constraint: a ring whose peak high-water reaches the most the
//     resource can hold (task window: window-1 live slots; heap: its bytes;
//     dep pool: every entry, PTO2DepListPool being full at used >=
//     capacity); a dep pool can also fail below it (docs/rings.md); a peak
//     above the capacity means the ring filled and reclaimed inside the
//     scope: the scope streams;
//   - imbalance: one ring at >= 80% of its capacity in a resource while every
//     other ring stays below 20% (seed 000's "one ring near capacity, the
//     rest far below": rebalance scopes before growing any ring);
//   - wedged: scopes with only a `begin` at the end of the file (the run
//     wedged inside them; the innermost one is where the ring filled);
//   - fatal / dropped, as the seed reads them.
//
// Malformed input throws InputError(file, "line N", expectation). Keys the
// reader does not use are ignored (the schema may grow).
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace npusim::report {

constexpr int kScopeStatsRings = 4;
constexpr int kScopeStatsResources = 3;  // task window, heap, dep pool
enum ScopeStatsResource { kResTaskWindow = 0, kResHeap = 1, kResDepPool = 2 };

struct ScopeStatsMeta {
  std::uint64_t version = 0;
  bool fatal = false;
  std::uint64_t dropped = 0, total = 0;
  // [resource][ring]: task_window_max, heap_max, dep_pool_max
  std::array<std::array<std::uint64_t, kScopeStatsRings>, kScopeStatsResources> capacity{};
  std::uint64_t tensormap_max = 0;
};

// The peak of one metric and the record where it was reached (the `end`
// record of the scope; line 0 and an empty site when no scope was seen).
struct ScopeStatsPeak {
  std::uint64_t value = 0;
  std::string site;
  std::size_t line = 0;
};

struct ScopeStatsRingPeaks {
  std::size_t scopes = 0;  // closed (paired) scopes on this ring
  std::array<ScopeStatsPeak, kScopeStatsResources> high_water, live;
};

// The same peaks over the scopes of one site on one ring.
struct ScopeStatsSitePeaks {
  int ring = 0;
  std::string site;  // as its `end` records name it
  ScopeStatsRingPeaks peaks;
};

// One record as the plot needs it: its index among the records (0-based, file
// order) and what its ring held at that boundary (head - tail).
struct ScopeStatsPoint {
  std::uint64_t index = 0;
  std::uint64_t task_slots = 0, heap_bytes = 0;
};

struct ScopeStatsOpenScope {
  std::string site;
  int depth = 0, ring = 0;
  std::size_t line = 0;
};

struct ScopeStatsReport {
  std::string file;
  ScopeStatsMeta meta;
  std::size_t records = 0;         // record lines read (the metadata line excluded)
  std::size_t unmatched_ends = 0;  // `end` records without a `begin` at their depth
  std::array<ScopeStatsRingPeaks, kScopeStatsRings> rings;
  std::vector<ScopeStatsSitePeaks> sites;  // by ring, then in the order they first closed
  ScopeStatsPeak tensormap;        // over every record
  std::vector<ScopeStatsOpenScope> wedged;  // open at the end of the file, outermost first
  std::array<std::vector<ScopeStatsPoint>, kScopeStatsRings> points;  // per ring, file order

  // Capacity usable by the resource on a ring (see the file comment).
  std::uint64_t usable(int resource, int ring) const;
  bool is_constraint(int resource, int ring) const;
  // The ring that is imbalanced in `resource`, or -1.
  int imbalanced_ring(int resource) const;
};

// Parses the text of a scope_stats.jsonl; `file` labels errors.
ScopeStatsReport parse_scope_stats(const std::string& text, const std::string& file);
// Reads a file (InputError if it cannot be read) and parses it.
ScopeStatsReport read_scope_stats(const std::string& path);

// The text summary (deterministic).
void print_scope_stats_summary(const ScopeStatsReport& report, std::ostream& out);
// The plot: per ring, task slots and heap bytes held at each scope boundary as
// a percentage of the ring's capacity, x = record index; capacity line and the
// site of the peak high-water annotated. Deterministic. `svg_attrs` are
// extra attributes of the <svg> element (npusim report gives it its class
// and id).
std::string scope_stats_svg(const ScopeStatsReport& report, const std::string& svg_attrs = "");
// A self-contained page: the summary and the same chart inline, no scripts.
std::string scope_stats_html(const ScopeStatsReport& report);

// The subcommand: prints the summary to `out`, writes the HTML / SVG files
// when their paths are not empty. Returns 0; throws InputError.
int scope_stats_command(const std::string& path, const std::string& html_path,
                        const std::string& svg_path, std::ostream& out);

}  // namespace npusim::report
