// `npusim scope-stats`: the summary's numbers on hand-written files (exact),
// pairing by depth, wedged scopes, malformed input, the plot; and the seed
// pages' claims (000, 004 §5) run end to end through the binary.
#include "tests/catch.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>


#include "models/common/errors.h"
#include "sim/report/scope_stats_report.h"
#include "tests/cli_support.h"

namespace fs = std::filesystem;
using namespace npusim::report;

namespace {

const std::string kSourceDir = NPUSIM_SOURCE_DIR;
const std::string kScopeStatsData = std::string(NPUSIM_TEST_DATA_DIR) + "/scope_stats";

using cli::slurp;

// This process's scratch directory for the files of these tests.
fs::path work_dir() {
  fs::path d = cli::scratch_root() / "scope_stats";
  fs::create_directories(d);
  return d;
}

// Simulates a trace (extra options appended) and returns its scope_stats.jsonl path.
fs::path simulate(const std::string& trace, const std::string& name, const std::string& options, int status = 0) {
  const fs::path out = work_dir() / name;
  fs::remove_all(out);
  cli::Result r = cli::npusim("run " + trace + " --out '" + out.string() + "' -q --swimlane-level 0 --no-deps " + options);
  INFO(trace << " " << options << "\n" << r.err);
  REQUIRE(r.status == status);
  return out / "scope_stats" / "scope_stats.jsonl";
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

std::string summary_of(const ScopeStatsReport& rep) {
  std::ostringstream s;
  print_scope_stats_summary(rep, s);
  return s.str();
}

void check_peak(const ScopeStatsPeak& p, std::uint64_t value, const std::string& site, std::size_t line) {
  INFO(site << " line " << line);
  CHECK(p.value == value);
  CHECK(p.site == site);
  CHECK(p.line == line);
}

}  // namespace

TEST_CASE("scope-stats: every peak of a hand-written file, exactly", "[scope_stats]") {
  // Labelled as the binary is given it, so the text compares with its output.
  ScopeStatsReport rep =
      parse_scope_stats(slurp(kScopeStatsData + "/nested.jsonl"), "tests/data/scope_stats/nested.jsonl");
  CHECK(rep.meta.version == 6);
  CHECK_FALSE(rep.meta.fatal);
  CHECK(rep.meta.capacity[kResHeap] == std::array<std::uint64_t, 4>{4096, 4096, 2048, 8192});
  CHECK(rep.records == 10);
  CHECK(rep.unmatched_ends == 0);
  CHECK(rep.wedged.empty());
  CHECK(rep.rings[0].scopes == 1);
  CHECK(rep.rings[3].scopes == 2);
  // Ring 3: two scopes at depth 3. The second begins with tail 2 / 2048 / 1.
  check_peak(rep.rings[3].high_water[kResTaskWindow], 7, "orch.cpp:30", 8);   // 9 - 2
  check_peak(rep.rings[3].live[kResTaskWindow], 6, "orch.cpp:30", 6);         // 6 - 0 (then 9 - 5 = 4)
  check_peak(rep.rings[3].high_water[kResHeap], 7168, "orch.cpp:30", 8);      // 9216 - 2048
  check_peak(rep.rings[3].live[kResHeap], 6144, "orch.cpp:30", 6);            // 6144 - 0 (then 4096)
  check_peak(rep.rings[3].high_water[kResDepPool], 4, "orch.cpp:30", 8);      // 5 - 1
  check_peak(rep.rings[3].live[kResDepPool], 2, "orch.cpp:30", 6);            // 3 - 1, tied at line 8: first kept
  check_peak(rep.rings[2].high_water[kResHeap], 2048, "orch.cpp:20", 9);
  check_peak(rep.rings[1].high_water[kResHeap], 512, "orch.cpp:10", 10);
  check_peak(rep.rings[0].high_water[kResTaskWindow], 0, "(unknown):0", 11);
  check_peak(rep.tensormap, 7, "orch.cpp:30", 8);
  // Ring 2's heap (2048 of 2048) is the constraint; ring 3's task window
  // (7 of 16, at most 15 live) is not. Two rings are high: no imbalance.
  CHECK(rep.is_constraint(kResHeap, 2));
  CHECK_FALSE(rep.is_constraint(kResHeap, 3));
  CHECK_FALSE(rep.is_constraint(kResTaskWindow, 3));
  CHECK(rep.imbalanced_ring(kResHeap) == -1);
  // The whole text, as the command prints it.
  CHECK(summary_of(rep) == slurp(kScopeStatsData + "/nested.summary.txt"));
}

TEST_CASE("scope-stats: an end closes the begin of its depth, as the seed's script pairs them", "[scope_stats]") {
  const std::string meta =
      R"({"version": 6, "fatal": false, "dropped": 0, "total": 6, "task_window_max": [16, 16, 16, 16], )"
      R"("heap_max": [4096, 4096, 4096, 4096], "dep_pool_max": [32, 32, 32, 32], "tensormap_max": 64})";
  auto rec = [](const char* site, const char* phase, int depth, int tail, int head) {
    int ring = depth < 3 ? depth : 3;
    return std::string("{\"site\": \"") + site + "\", \"phase\": \"" + phase + "\", \"depth\": " +
           std::to_string(depth) + ", \"ring\": " + std::to_string(ring) +
           ", \"task_window_start\": " + std::to_string(tail) + ", \"task_window_end\": " + std::to_string(head) +
           ", \"heap_start\": 0, \"heap_end\": 0, \"dep_pool_start\": 1, \"dep_pool_end\": 1, \"tensormap\": 0}\n";
  };
  // Depths 3 and 4 share ring 3: the depth-4 end pairs with the depth-4 begin
  // (tail 5), the depth-3 end with the depth-3 begin (tail 0), though the
  // sites differ and the end of depth 4 comes first.
  std::string text = meta + "\n" + rec("outer.cpp:1", "begin", 3, 0, 2) + rec("inner.cpp:2", "begin", 4, 5, 6) +
                     rec("inner.cpp:9", "end", 4, 6, 9) + rec("outer.cpp:1", "end", 3, 8, 12) +
                     rec("stray.cpp:3", "end", 2, 0, 1) + rec("outer.cpp:1", "begin", 3, 8, 12);
  ScopeStatsReport rep = parse_scope_stats(text, "pairs.jsonl");
  CHECK(rep.rings[3].scopes == 2);
  check_peak(rep.rings[3].high_water[kResTaskWindow], 12, "outer.cpp:1", 5);  // 12 - 0, not 12 - 5
  check_peak(rep.rings[3].live[kResTaskWindow], 4, "outer.cpp:1", 5);         // 9 - 6 = 3, then 12 - 8
  // Per site, the scopes are told apart by the site their end names.
  REQUIRE(rep.sites.size() == 2);
  CHECK(rep.sites[0].site == "inner.cpp:9");
  check_peak(rep.sites[0].peaks.high_water[kResTaskWindow], 4, "inner.cpp:9", 4);  // 9 - 5
  CHECK(rep.sites[1].site == "outer.cpp:1");
  check_peak(rep.sites[1].peaks.high_water[kResTaskWindow], 12, "outer.cpp:1", 5);
  CHECK(rep.unmatched_ends == 1);          // the depth-2 end had no begin
  CHECK(rep.rings[2].scopes == 0);
  REQUIRE(rep.wedged.size() == 1);         // the last begin never ended
  CHECK(rep.wedged[0].line == 7);
  std::string s = summary_of(rep);
  CHECK(s.find("  - unpaired: 1 end record(s) without a begin at their depth were skipped\n") != std::string::npos);
  CHECK(s.find("incomplete") == std::string::npos);  // total 6, 6 records
}

TEST_CASE("scope-stats: scopes with only a begin at the end of the file are where the run wedged", "[scope_stats]") {
  ScopeStatsReport rep = read_scope_stats(kScopeStatsData + "/wedged.jsonl");
  REQUIRE(rep.wedged.size() == 4);
  CHECK(rep.wedged[0].line == 2);
  CHECK(rep.wedged[1].line == 3);
  CHECK(rep.wedged[2].line == 7);
  CHECK(rep.wedged[3].site == "orch.cpp:30");
  CHECK(rep.wedged[3].depth == 3);
  CHECK(rep.wedged[3].ring == 3);
  CHECK(rep.unmatched_ends == 1);
  check_peak(rep.rings[2].high_water[kResHeap], 3072, "orch.cpp:20", 6);
  std::string s = summary_of(rep);
  CHECK(has_line(s, "  - wedged: 4 scope(s) have only a begin at the end of the file; the run wedged inside "
                    "(unknown):0 (depth 0, ring 0, line 2) > orch.cpp:10 (depth 1, ring 1, line 3) > "
                    "orch.cpp:20 (depth 2, ring 2, line 7) > orch.cpp:30 (depth 3, ring 3, line 8); the last "
                    "open site, orch.cpp:30 (ring 3), is where the ring filled"));
  CHECK(has_line(s, "  - fatal: a fatal was latched mid-run; records after it are diagnostic only"));
  CHECK(has_line(s, "  - dropped: 2 records were lost on the device; the peaks are lower bounds"));
  CHECK(s.find("incomplete") == std::string::npos);  // 9 total - 2 dropped = 7 records, all there
}

TEST_CASE("scope-stats: one ring near capacity while the others stay far below is the imbalance", "[scope_stats]") {
  ScopeStatsReport rep = read_scope_stats(kScopeStatsData + "/imbalance.jsonl");
  CHECK(rep.imbalanced_ring(kResHeap) == 3);           // 87.5% vs 12.5%, 6.25%, 0%
  CHECK(rep.imbalanced_ring(kResTaskWindow) == -1);    // ring 3 at 25%: not near capacity
  CHECK_FALSE(rep.is_constraint(kResHeap, 3));
  CHECK(has_line(summary_of(rep),
                 "  - imbalance: heap on ring 3 is at 87.5% of its capacity while rings 0, 1, 2 stay below 20%: "
                 "place scopes so the load spreads over the rings before growing any of them"));
}

TEST_CASE("scope-stats: malformed files name the file, the line and the expectation, and exit 2", "[scope_stats][cli]") {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kScopeStatsData + "/bad")) {
    if (e.path().extension() != ".jsonl") continue;
    ++n;
    const std::string rel = "tests/data/scope_stats/bad/" + e.path().filename().string();
    std::string expect = slurp(fs::path(e.path()).replace_extension(".expect"));
    INFO(rel);
    try {
      read_scope_stats(kSourceDir + "/" + rel);
      FAIL("no error");
    } catch (const npusim::InputError& err) {
      CHECK(err.path().rfind("line ", 0) == 0);
      CHECK(std::string(err.what()) + "\n" == kSourceDir + "/" + rel + ": " + expect);
    }
    cli::Result r = cli::npusim("scope-stats " + rel + " --html '" + (work_dir() / "bad.html").string() + "'");
    CHECK(r.status == 2);
    CHECK(r.err == "npusim: error: " + rel + ": " + expect);
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(work_dir() / "bad.html"));
  }
  CHECK(n >= 18);
  cli::Result r = cli::npusim("scope-stats tests/data/scope_stats/none.jsonl");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: tests/data/scope_stats/none.jsonl: cannot open file: No such file or directory\n");
}

TEST_CASE("scope-stats: --html and --svg write the same chart, self-contained and deterministic", "[scope_stats][cli]") {
  const fs::path d = work_dir();
  const std::string files = " --html '" + (d / "a.html").string() + "' --svg '" + (d / "a.svg").string() + "'";
  cli::Result r = cli::npusim("scope-stats tests/data/scope_stats/nested.jsonl" + files);
  REQUIRE(r.status == 0);
  CHECK(r.out == slurp(kScopeStatsData + "/nested.summary.txt"));  // the same text in-process and from the binary
  const std::string html = slurp(d / "a.html"), svg = slurp(d / "a.svg");
  REQUIRE(cli::npusim("scope-stats tests/data/scope_stats/nested.jsonl --html '" + (d / "b.html").string() + "' --svg '" +
              (d / "b.svg").string() + "'").status == 0);
  CHECK(slurp(d / "b.html") == html);
  CHECK(slurp(d / "b.svg") == svg);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(html.find(svg) != std::string::npos);  // the page inlines the chart
  for (const char* external : {"<script", "href=", "src=", "@import", "url("}) {
    INFO(external);
    CHECK(html.find(external) == std::string::npos);
  }
  CHECK(html.find("carry no timestamps") != std::string::npos);
  CHECK(svg.find(">capacity</text>") != std::string::npos);
  CHECK(svg.find(">peak heap high_water 100.0% at orch.cpp:20 (line 9)</text>") != std::string::npos);
  CHECK(svg.find(">peak task_window high_water 43.8% at orch.cpp:30 (line 8)</text>") != std::string::npos);
  CHECK(html.find("&lt;- the constraint") != std::string::npos);  // the summary, escaped
}

// Seed 000 "manual rebalancing" / "how to confirm: the peaks should spread
// over the rings instead of piling onto one".
TEST_CASE("scope-stats: placing the scopes by hand moves the peak from one ring to two", "[scope_stats][cli]") {
  fs::path autos = simulate("traces/rings_auto_scopes.json", "auto", "");
  fs::path manual = simulate("traces/manual_placement.json", "manual", "");
  cli::Result a = cli::npusim("scope-stats '" + autos.string() + "'"), m = cli::npusim("scope-stats '" + manual.string() + "'");
  REQUIRE(a.status == 0);
  REQUIRE(m.status == 0);
  CHECK(has_line(a.out, "  task_window  0 / 0 / 8 / 0   on ring 2"));
  CHECK(has_line(m.out, "  task_window  0 / 4 / 4 / 0   on rings 1, 2"));
  ScopeStatsReport ra = read_scope_stats(autos.string()), rm = read_scope_stats(manual.string());
  CHECK(ra.rings[2].scopes == 8);  // one AUTO scope per loop body
  CHECK(ra.rings[2].high_water[kResTaskWindow].value == 8);
  CHECK(rm.rings[1].high_water[kResTaskWindow].value == 4);
  CHECK(rm.rings[2].high_water[kResTaskWindow].value == 4);
  // On a window of 8 (at most 7 live), the auto version's ring 2 is the
  // constraint and the imbalance; the manual one fits.
  fs::path autos8 = simulate("traces/rings_auto_scopes.json", "auto8", "--ring-task-window 8");
  fs::path manual8 = simulate("traces/manual_placement.json", "manual8", "--ring-task-window 8");
  ScopeStatsReport ra8 = read_scope_stats(autos8.string()), rm8 = read_scope_stats(manual8.string());
  CHECK(ra8.is_constraint(kResTaskWindow, 2));
  CHECK(ra8.imbalanced_ring(kResTaskWindow) == 2);
  for (int r = 0; r < 4; ++r) CHECK_FALSE(rm8.is_constraint(kResTaskWindow, r));
  CHECK(rm8.imbalanced_ring(kResTaskWindow) == -1);
  cli::Result a8 = cli::npusim("scope-stats '" + autos8.string() + "'");
  CHECK(a8.out.find("  - the constraint: ring 2 task_window: the peak high_water 8 (100.0%) reaches the capacity 8") !=
        std::string::npos);
}

// Seed 004 §5: "on an oversized ring nothing is ever reclaimed and a scoped
// program reports the same frontier as an unscoped one - the scoping only
// shows its worth when the ring is tight enough to fill."
TEST_CASE("scope-stats: scoping lowers the high-water mark only on a ring tight enough to fill", "[scope_stats][cli]") {
  constexpr std::uint64_t kMiB = 1 << 20, kTight = 8 * kMiB, kBlock = 2 * kMiB, kAll = 16 * kBlock;
  const std::string tight = "--ring-heap 0,0," + std::to_string(kTight) + ",0";
  ScopeStatsReport scoped_big = read_scope_stats(simulate("tests/data/scope_stats/block_scoped.json", "sb", "").string());
  ScopeStatsReport unscoped_big = read_scope_stats(simulate("tests/data/scope_stats/block_unscoped.json", "ub", "").string());
  ScopeStatsReport scoped_tight = read_scope_stats(simulate("tests/data/scope_stats/block_scoped.json", "st", tight).string());
  fs::path wedged = simulate("tests/data/scope_stats/block_unscoped.json", "ut", tight, 1);

  // Oversized (256 MiB): both report the same frontier, every block's
  // intermediate (16 x 2 MiB). The unscoped program holds all of it at exit.
  // The scoped one's retired blocks would be seen reclaimed only through an
  // allocation after the watermark moved: the allocator refreshes the heap
  // tail at every allocation (pto_ring_buffer.h PTO2TaskAllocator::alloc ->
  // update_heap_tail), not when a task retires. Block 0 retires when MM0 is
  // released: ACT0 (core 26, scheduler thread 1) completes at 12.499 us, and
  // thread 1's deferred release of its producer runs in its next release
  // phase, 17.26-17.40 us, after the last allocation (MM15's intermediate,
  // submitted at 17.024 us). So the scoped run too exits with the whole
  // 32 MiB live in its view. (With the 195 ns COND read that release phase
  // ended at 17.02 us, 4 ns before the last allocation, which then saw
  // block 0 reclaimed.)
  CHECK(scoped_big.rings[2].high_water[kResHeap].value == kAll);
  CHECK(unscoped_big.rings[2].high_water[kResHeap].value == kAll);
  CHECK(scoped_big.rings[2].live[kResHeap].value == kAll);
  CHECK(unscoped_big.rings[2].live[kResHeap].value == kAll);
  // Tight (8 MiB): the scoped program's blocks are reclaimed as the ring
  // fills, so a block scope's high water is at most the ring plus the one
  // block it allocates (begin.tail >= begin.head - capacity).
  const ScopeStatsRingPeaks& st = scoped_tight.rings[2];
  CHECK(st.high_water[kResHeap].value >= kTight);
  CHECK(st.high_water[kResHeap].value <= kTight + kBlock);
  CHECK(st.high_water[kResHeap].value < kAll);
  CHECK(st.live[kResHeap].value <= kTight);
  CHECK(scoped_tight.is_constraint(kResHeap, 2));
  // The unscoped program cannot drain: it wedges inside its one scope.
  cli::Result u = cli::npusim("scope-stats '" + wedged.string() + "'");
  REQUIRE(u.status == 0);
  ScopeStatsReport ut = read_scope_stats(wedged.string());
  // HEAP_RING_DEADLOCK is latched by the allocator, not through report_fatal:
  // the header's fatal stays false (orch_report_fatal_v alone calls
  // scope_stats_on_fatal, pto_orchestrator.cpp); the wedge shows in the records.
  CHECK_FALSE(ut.meta.fatal);
  REQUIRE_FALSE(ut.wedged.empty());
  // A site that is not file:line is the file name at line 0, as the device
  // records a site (basename, ':', the line).
  CHECK(ut.wedged.back().site == "block_unscoped:blocks:0");
  CHECK(ut.wedged.back().ring == 2);
  CHECK(u.out.find("the last open site, block_unscoped:blocks:0 (ring 2), is where the ring filled") != std::string::npos);
}

// Seed 004 §2/§5: one long-lived allocation at the head of a ring pins every
// allocation behind it; moving it to an outer scope lets the ring stream.
TEST_CASE("scope-stats: a long-lived allocation at the head of ring 3 wedges a ring its hoisted version streams through",
          "[scope_stats][cli]") {
  const std::string ring3 = "--ring-heap 0,0,0,33554432";
  fs::path pinned = simulate("traces/rings_long_lived.json", "ll", ring3, 1);
  fs::path hoisted = simulate("tests/data/scope_stats/long_lived_hoisted.json", "llh", "");
  ScopeStatsReport p = read_scope_stats(pinned.string()), h = read_scope_stats(hoisted.string());
  REQUIRE_FALSE(p.wedged.empty());
  CHECK(p.wedged.back().site == "rings_long_lived:kv_block:0");
  CHECK(h.wedged.empty());
  CHECK(h.meta.capacity[kResHeap][3] == 33554432);
  CHECK(h.rings[3].high_water[kResHeap].value > 3 * 33554432ull);  // 4 heads x 100 MiB streamed through 32 MiB
  CHECK(h.rings[3].live[kResHeap].value <= 33554432);
  // At the trace's own 128 MiB it completes, but each head scope exits still
  // holding all 16 KV blocks' tiles (16 x 6.25 MiB) and the accumulator: the
  // reclaim could not pass the accumulator at the head of the FIFO.
  ScopeStatsReport own = read_scope_stats(simulate("traces/rings_long_lived.json", "ll128", "").string());
  auto site = [](const ScopeStatsReport& rep, const std::string& name) {
    for (const ScopeStatsSitePeaks& s : rep.sites)
      if (s.site == name) return s.peaks;
    FAIL("no site " << name);
    return ScopeStatsRingPeaks{};
  };
  CHECK(site(own, "rings_long_lived:head:0").live[kResHeap].value >= 16 * 6553600ull + 262144);
  CHECK(site(h, "long_lived_hoisted:head:0").live[kResHeap].value <= 33554432);
}

// Seed 000 "how to confirm: the new scope_stats.jsonl's metadata line shows
// the new sizes"; the command line replaces the trace's `run` field.
TEST_CASE("scope-stats: the metadata line reflects per-ring sizes from the trace and the command line", "[scope_stats][cli]") {
  ScopeStatsReport from_trace = read_scope_stats(simulate("traces/rings_scaled.json", "scaled", "").string());
  CHECK(from_trace.meta.capacity[kResTaskWindow] == std::array<std::uint64_t, 4>{8192, 16384, 131072, 524288});
  CHECK(from_trace.meta.capacity[kResHeap] ==
        std::array<std::uint64_t, 4>{134217728, 268435456, 268435456, 536870912});
  fs::path over = simulate("traces/rings_scaled.json", "scaled_cli",
                           "--ring-heap 0,0,2097152,0 --ring-dep-pool 0,0,0,128 --ring-task-window 64");
  ScopeStatsReport cli_sizes = read_scope_stats(over.string());
  CHECK(cli_sizes.meta.capacity[kResHeap] == std::array<std::uint64_t, 4>{268435456, 268435456, 2097152, 268435456});
  CHECK(cli_sizes.meta.capacity[kResDepPool] == std::array<std::uint64_t, 4>{16384, 16384, 16384, 128});
  CHECK(cli_sizes.meta.capacity[kResTaskWindow] == std::array<std::uint64_t, 4>{64, 64, 64, 64});
  cli::Result r = cli::npusim("scope-stats '" + over.string() + "'");
  CHECK(has_line(r.out, "  heap         268435456 (256.0 MiB) / 268435456 (256.0 MiB) / 2097152 (2.0 MiB) / "
                        "268435456 (256.0 MiB) bytes"));
  CHECK(has_line(r.out, "  dep_pool     16384 / 16384 / 16384 / 128 entries"));
  CHECK(has_line(r.out, "  task_window  64 / 64 / 64 / 64 slots"));
}
