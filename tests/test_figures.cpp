// summary.json's `figures` (sim/record/figures, docs/outputs.md): the
// idle-core-with-ready-work overhead as the runtime's scheduler-overhead
// analysis defines it (simpler_setup/tools/sched_overhead_analysis.py,
// compute_overhead; docs/dfx/sched-overhead-model.md), percentiles, and the
// figures of a real run.
#include "tests/catch.h"

#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/record/figures.h"
#include "tests/cli_support.h"

using namespace npusim;
using record::OverheadInput;
namespace fs = std::filesystem;

TEST_CASE("overhead: an idle core with ready, undispatched work, per engine and for the system", "[figures]") {
  // One AIC core (0) and one AIV core (30). AIC runs [0,10) and [14,20);
  // the second AIC task is ready at 10 (its producer's end) and dispatched at
  // 12: AIC overhead [10,12). AIV runs [0,4) and [8,20); its second task is
  // ready at 4, dispatched at 6: AIV overhead [4,6). A MIX task ready at 10,
  // dispatched at 11 counts for both engines: [10,11) is overhead for both.
  OverheadInput in;
  in.runs = {{ns(0), ns(10), 0, 0}, {ns(14), ns(20), 0, 0}, {ns(0), ns(4), 1, 30}, {ns(8), ns(20), 1, 30}};
  in.tasks = {{ns(10), ns(12), 1}, {ns(4), ns(6), 2}, {ns(10), ns(11), 3}};
  const record::Overhead o = record::compute_overhead(in);
  CHECK(o.window == ns(20));
  CHECK(o.by_type[0] == ns(2));  // [10,12)
  CHECK(o.by_type[1] == ns(2));  // [4,6); at [10,11) the AIV core is busy: not overhead
  CHECK(o.all == ns(0));         // never both engines at once
  // has: every engine with ready work is idle: [4,6) (AIV alone has work),
  // [11,12) (AIC alone has work); [10,11) both have work, AIV is busy.
  CHECK(o.has == ns(3));
}

TEST_CASE("overhead: a task whose producers never ran is ready at its own dispatch", "[figures]") {
  OverheadInput in;
  in.runs = {{ns(5), ns(9), 0, 0}};
  in.tasks = {{ns(5), ns(5), 1}};  // ready == dispatch: no window
  const record::Overhead o = record::compute_overhead(in);
  CHECK(o.window == ns(4));
  CHECK(o.by_type[0] == 0);
  CHECK(o.has == 0);
  CHECK(record::compute_overhead({}).window == 0);
}

namespace {
BlockRecord block(int core, Time dispatch, Time start, Time end) {
  BlockRecord b;
  b.core = core;
  b.dispatch = dispatch;
  b.start = start;
  b.end = end;
  return b;
}
EdgeInfo edge_from(TaskId pred) {
  EdgeInfo e;
  e.pred = pred;
  return e;
}
}  // namespace

TEST_CASE("overhead collector: a task is ready at its producers' last end, and a re-submit keeps what ran", "[figures]") {
  // Cluster count 1: core 0 is the AIC, cores 1.. AIV. Task 1 runs on the AIC
  // [0,10); task 2 (producers 1 and 9, which never runs) is dispatched at 12
  // to the AIV, runs [13,20); task 3 has only itself and no producer.
  record::OverheadCollector c;
  Task t1, t2, t3;
  t1.id = 1;
  t2.id = 2;
  t3.id = 3;
  c.on_submitted(t1, {});
  c.on_submitted(t2, {edge_from(1), edge_from(9), edge_from(1), edge_from(kNoTask)});
  c.on_submitted(t3, {edge_from(3)});
  c.on_block_finished(t1, block(0, ns(0), ns(0), ns(10)));
  c.on_block_finished(t2, block(1, ns(12), ns(13), ns(20)));
  c.on_block_finished(t3, block(0, ns(0), ns(5), kNever));  // never ended: not a run
  OverheadInput in = c.input(1);
  REQUIRE(in.runs.size() == 2);
  REQUIRE(in.tasks.size() == 2);  // tasks with a block that ran, in first-seen order
  CHECK(in.tasks[0].ready == ns(0));  // no producer ran: ready at its own dispatch
  CHECK(in.tasks[0].types == 1);
  CHECK(in.tasks[1].ready == ns(10));  // task 1's end; task 9 never ran
  CHECK(in.tasks[1].dispatch == ns(12));
  CHECK(in.tasks[1].types == 2);
  CHECK(record::sum_overhead(c.steps(1)).by_type[1] == ns(2));  // [10,12): the AIV idle, task 2 ready
  // A second submit of id 2 with no producer keeps the first one's; a new
  // block record rebuilds the prepared sweep.
  c.on_submitted(t2, {});
  c.on_block_finished(t2, block(2, ns(14), ns(15), ns(22)));
  in = c.input(1);
  CHECK(in.tasks[1].ready == ns(10));
  CHECK(in.tasks[1].dispatch == ns(12));
  CHECK(c.steps(1).w1 == ns(22));
  CHECK(c.steps(1).cores[1] == 2);
}

TEST_CASE("percentiles are nearest-rank", "[figures]") {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  CHECK(record::percentiles_json(v).dump() == R"({"count":100,"p50":50.0,"p90":90.0,"p99":99.0,"max":100.0})");
  CHECK(record::percentiles_json({7.0, 3.0}).dump() == R"({"count":2,"p50":3.0,"p90":7.0,"p99":7.0,"max":7.0})");
  CHECK(record::percentiles_json({}).dump() == R"({"count":0,"p50":null,"p90":null,"p99":null,"max":null})");
}

TEST_CASE("histogram counts by value and gives the values in order", "[figures]") {
  record::Histogram h;
  // 300 distinct values (the table grows past its first 64 slots), added
  // in a scrambled order, value v added v times.
  for (int i = 0; i < 300; ++i) {
    const int v = (i * 7) % 300 + 1;
    h.add(static_cast<double>(v) / 4.0, static_cast<std::uint64_t>(v));
  }
  h.add(-0.0);
  h.add(0.0, 2);  // -0.0 and 0.0: one value
  CHECK(h.distinct() == 301);
  CHECK(h.total() == 300u * 301u / 2u + 3u);
  const auto s = h.sorted();
  REQUIRE(s.size() == 301);
  CHECK(s[0].first == 0.0);
  CHECK(!std::signbit(s[0].first));
  CHECK(s[0].second == 3);
  CHECK(s[1].first == 0.25);
  CHECK(s[1].second == 1);
  CHECK(s[300].first == 75.0);
  CHECK(s[300].second == 300);
  for (std::size_t i = 1; i < s.size(); ++i) CHECK(s[i - 1].first < s[i].first);
  // Nearest rank over 45,153 samples: p50 is the smallest value with 22,577
  // samples at or below it: values 1..v/4 hold v(v+1)/2 + 3 (the zeros):
  // v = 212 gives 22,581 (v = 211, 22,369).
  CHECK(record::histogram_percentiles_json(h).dump() ==
        R"({"count":45153,"p50":53.0,"p90":71.25,"p99":74.75,"max":75.0})");
}

TEST_CASE("figures of the mix trace", "[figures]") {
  fs::path dir;
  cli::Result r = cli::run("traces/mix.json --quiet", "figures_mix", dir);
  REQUIRE(r.status == 0);
  const nlohmann::json f = cli::load(dir / "summary.json")["figures"];
  // 216 us of AIC kernel time on 24 cores over a 44.88 us makespan (PREP's
  // start at 2.886 us to POST's end at 47.766 us, task_stats.csv).
  CHECK(f["core_types"]["aic"]["busy_ns"] == 216000.0);
  CHECK(f["core_types"]["aic"]["utilisation"] == Approx(216000.0 / (24 * 44880.0)));
  CHECK(f["core_types"]["aiv"]["cores"] == 48);
  // The runtime's sched_overhead_analysis counts the time a ready task of a
  // type waits with no core of it running. AIC: PREP ends at 5.886 us, ATTN
  // (ready when PREP completes) is first dispatched at 9.024 us: 3138 ns,
  // 7.0 %. AIV adds ATTN's last end (38.621 us) to POST's first dispatch
  // (41.884 us), 3263 ns: 6401 ns, 14.3 %. all = AIC's, has = AIV's. (With
  // the 195 ns COND read they were 3258 and 8761 ns.)
  CHECK(f["overhead"]["window_ns"] == 44880.0);
  CHECK(f["overhead"]["oh_aic_overhead"]["ns"] == 3138.0);
  CHECK(f["overhead"]["oh_aiv_overhead"]["ns"] == 6401.0);
  CHECK(f["overhead"]["oh_all_overhead"]["ns"] == 3138.0);
  CHECK(f["overhead"]["oh_has_overhead"]["ns"] == 6401.0);
  CHECK(f["dispatch_to_start_ns"]["count"] == 26);
  CHECK(f["ready_to_dispatch_ns"]["count"] == 3);
  double sum = 0;
  for (const auto& [kind, s] : f["sched_phases"]["1"]["shares"].items()) sum += s.get<double>();
  CHECK(sum == Approx(1.0));
  CHECK(f["ring_peaks"]["0"]["task_slots"] == 3);
}

// The overhead sweep keeps every block and task (as the swimlane's records
// do); without the swimlane the figure is null and the run's memory does not
// grow with the task count. Everything else is the same.
TEST_CASE("figures without the swimlane: overhead null, the rest unchanged", "[figures]") {
  fs::path on, off;
  REQUIRE(cli::run("traces/mix.json --quiet", "figures_mix_on", on).status == 0);
  REQUIRE(cli::run("traces/mix.json --quiet --swimlane-level 0", "figures_mix_off", off).status == 0);
  nlohmann::json a = cli::load(on / "summary.json")["figures"];
  const nlohmann::json b = cli::load(off / "summary.json")["figures"];
  CHECK(b["overhead"].is_null());
  CHECK(a["overhead"].is_object());
  a["overhead"] = nullptr;
  CHECK(a == b);
}

// With every output off the scheduler threads sum their own phase records
// (SchedulerThread::sum_phases) instead of sending them to the figures and
// the failure witness: the same rules written twice (a span counts when it
// has time; the last work is the latest end of a record that processed
// something). The figures and a failed run's stall time must not tell the
// two apart.
TEST_CASE("every output off: the threads' own phase sums give the figures and stall time the records give", "[figures]") {
  const std::string off = " --quiet --swimlane-level 0 --no-deps --no-scope-stats --no-task-stats";
  for (const char* trace : {"traces/mix.json", "traces/pa_10k.json"}) {
    INFO(trace);
    const cli::RunResult a = cli::run_summary(std::string(trace) + " --quiet", "phase_sums_on");
    const cli::RunResult b = cli::run_summary(trace + off, "phase_sums_off");
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    CHECK(a.summary["figures"]["sched_phases"].size() == 3);
    CHECK(a.summary["figures"]["sched_phases"] == b.summary["figures"]["sched_phases"]);
    nlohmann::json fa = a.summary["figures"], fb = b.summary["figures"];
    fa["overhead"] = nullptr;  // needs the swimlane's records
    CHECK(fa == fb);
  }
  // Failed runs: the stall time is the latest work the witness saw (without
  // the threads' last work flow_control_deadlock and hard_pending_48 would
  // stop earlier with every output off).
  for (const char* trace : {"traces/fatal/flow_control_deadlock.json", "traces/fatal/scope_deadlock.json",
                            "traces/fatal/watchdog_over.json", "traces/barriers/hard_pending_48.json"}) {
    INFO(trace);
    const cli::RunResult a = cli::run_summary(std::string(trace) + " --quiet", "phase_sums_fail_on");
    const cli::RunResult b = cli::run_summary(trace + off, "phase_sums_fail_off");
    REQUIRE(a.status == 1);
    REQUIRE(b.status == 1);
    CHECK(a.summary["error"]["stall_time_ns"].get<double>() > 0);
    CHECK(a.summary["error"]["stall_time_ns"] == b.summary["error"]["stall_time_ns"]);
    CHECK(a.summary["figures"]["sched_phases"] == b.summary["figures"]["sched_phases"]);
  }
}
