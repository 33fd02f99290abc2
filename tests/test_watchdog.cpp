// The scheduler's no-progress watchdog (issue 11 item 2), from
// scheduler_dispatch.cpp SchedulerContext::resolve_and_dispatch (the idle
// branch: at the end of an iteration without progress, a thread whose
// self_owns_running_task() holds and whose clock is more than
// scheduler_timeout_cycles past last_progress_ts calls handle_timeout_exit),
// scheduler_cold_path.cpp handle_timeout_exit (the TIMEOUT_EXIT line, code 100
// latched with its stall classification), and the budget:
// PLATFORM_SCHEDULER_TIMEOUT_MS (spin_hint.h, 10 s) overridden per run by
// SIMPLER_SCHEDULER_TIMEOUT_MS (runtime_timeout_config.h), here
// run.scheduler_timeout_ms / --scheduler-timeout-ms.
//
// The hand-checked numbers (platforms/a2a3.json): thread 0 dispatches the one
// task in the iteration that ends at 809 ns (its last progress); the next,
// idle, iteration is loop 40 + one COND poll 100 = 140 ns (the loop's own work,
// then one read of each running core's COND: scheduler_completion.cpp
// check_running_cores_for_completion) and ends at 949 ns;
// idle iterations then end every 140 ns. With a 2 s budget the watchdog fires
// at the first iteration end past 809 + 2e9 ns:
// 949 + 140 x (floor((2000000809 - 949) / 140) + 1) = 2000000909 ns, the
// 14,285,715th idle iteration. The kernel starts at 2686 ns and its FIN is
// visible 80 ns (fin_notice) after it ends; the poll of the watchdog's
// iteration reads at 2000000909 ns, so a kernel of up to
// 2000000909 - 80 - 2686 = 1999998143 ns completes, one ns more is a hang.
#include "tests/catch.h"

#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

using nlohmann::json;
using cli::has;
namespace fs = std::filesystem;

namespace {

cli::RunResult run(const std::string& args, const char* name) {
  return cli::run_summary(args + " --quiet --no-host-stats", name);
}

// The index of the TIMEOUT_EXIT line in a device log (the periodic dumps come first).
std::size_t exit_line(const json& log) {
  for (std::size_t i = 0; i < log.size(); ++i)
    if (log[i].get<std::string>().find("] TIMEOUT_EXIT ") != std::string::npos) return i;
  return log.size();
}

const char kOverExit[] =
    "[STALL thread=0 idle_iterations=14285715] TIMEOUT_EXIT after_idle_iterations=14285715 "
    "sub_class=S1:running-stalled completed=0/1 running=1 ready=0 waiting=0 orch_done=1 stuck_task_id=0 stuck_core=0";
const char kOverSubClass[] =
    "PTO2 scheduler timeout sub_class=S1:running-stalled (detail=1) completed=0/1 running=1 ready=0 waiting=0 "
    "orch_done=1 stuck_task_id=0 stuck_core=0";

}  // namespace

TEST_CASE("watchdog: a kernel 1 ns past the budget is SCHEDULER_TIMEOUT S1 at 2000000909 ns", "[watchdog][cli]") {
  cli::RunResult r = run("traces/fatal/watchdog_over.json", "wd_over");
  REQUIRE(r.summary.is_object());
  CHECK(r.status == 1);
  const json& e = r.summary["error"];
  CHECK(e["name"] == "SCHEDULER_TIMEOUT");
  CHECK(e["sched_error_code"] == 100);
  CHECK(e["orch_error_code"] == 0);
  CHECK(e["host_code"] == 507018);
  CHECK(e["sub_class"] == "S1:running-stalled");
  CHECK(e["detector"] == "scheduler no-progress timeout (2000 ms)");
  CHECK(e["detector_since_ns"] == 809.0);
  CHECK(e["device_time_ns"] == 2000000909.0);
  // Progress stopped when the kernel ended, 1 ns past the budget, before the
  // watchdog's iteration read the clock.
  CHECK(e["stall_time_ns"] == 2000000830.0);
  // The periodic dumps (resolve_and_dispatch, scheduler_dispatch.cpp: each
  // thread's log_stall_diagnostics every STALL_LOG_INTERVAL = 480000 idle
  // iterations, scheduler_types.h): threads 1 and 2 own no running core, so
  // their idle iteration is the loop's 40 ns from the start: 50,000,024 by
  // 2000000909 ns, 104 dumps each (8 CLUSTER lines); thread 0's 14285715
  // give 29 (TASK, SUMMARY, 8 CLUSTER), at 809 + 140 k ns, later than the
  // others' first. 237 dumps: npusim prints the first and the last 3 (one
  // round each) and one line for the 231 between. Then handle_timeout_exit's
  // line and the stall snapshot (2 + TASK + SUMMARY + 3 threads x 8 clusters).
  const json& log = e["device_log"];
  REQUIRE(log.size() == 6 * 8 + 1 + 28);
  CHECK(log[0] == "[STALL thread=1 idle_iterations=480000] CLUSTER cluster_id=1 aic=core1(idle) aiv0=core26(idle) "
                  "aiv1=core27(idle)");
  CHECK(log[8] == "[STALL thread=2 idle_iterations=480000] CLUSTER cluster_id=2 aic=core2(idle) aiv0=core28(idle) "
                  "aiv1=core29(idle)");
  CHECK(log[16] == "[STALL thread=1 idle_iterations=960000] CLUSTER cluster_id=1 aic=core1(idle) aiv0=core26(idle) "
                   "aiv1=core27(idle)");
  CHECK(log[24] == "[npusim] ... 231 more periodic stall dumps (every 480000 idle iterations of each scheduler "
                   "thread) not shown");
  CHECK(log[25].get<std::string>().rfind("[STALL thread=2 idle_iterations=49440000] CLUSTER cluster_id=2 ", 0) == 0);
  CHECK(log[41] == "[STALL thread=2 idle_iterations=49920000] CLUSTER cluster_id=2 aic=core2(idle) aiv0=core28(idle) "
                   "aiv1=core29(idle)");
  CHECK(log[48] == "[STALL thread=2 idle_iterations=49920000] CLUSTER cluster_id=23 aic=core23(idle) "
                   "aiv0=core70(idle) aiv1=core71(idle)");
  CHECK(log[49] == kOverExit);
  CHECK(e["message"] == kOverSubClass);
  // The host's report (validate_runtime_impl, runtime_maker.cpp): the
  // runtime-failure lines, then the sub-class line.
  CHECK(has(r.err, "PTO2 runtime failed: orch_error_code=0 sched_error_code=100 runtime_status=-100\n"
                   "error detail: sched_error_code=100 SCHEDULER_TIMEOUT - "));
  CHECK(has(r.err, std::string(kOverSubClass) + "\n"));
  CHECK(has(r.err, "device log (AICPU), each line without the logger's prefix:\n[STALL thread=1 idle_iterations=480000] "
                   "CLUSTER cluster_id=1 "));
  CHECK(has(r.err, std::string("\n") + kOverExit + "\n[SHUTDOWN_SNAPSHOT trigger_thread=0 "));
  CHECK(r.summary["tasks"]["completed"] == 0);
}

TEST_CASE("watchdog: host_build_graph's TIMEOUT_EXIT line has no sub-class fields", "[watchdog][cli]") {
  // host_build_graph scheduler_cold_path.cpp handle_timeout_exit: LOG_ERROR
  // "[STALL thread=%d idle_iterations=%d] TIMEOUT_EXIT after_idle_iterations=%d"
  // and nothing more (no classify_stall_reason in that runtime).
  cli::RunResult r = run("traces/fatal/watchdog_over.json --runtime host_build_graph", "wd_over_hbg");
  REQUIRE(r.summary.is_object());
  CHECK(r.status == 1);
  const json& e = r.summary["error"];
  CHECK(e["name"] == "SCHEDULER_TIMEOUT");
  // Then log_shutdown_stall_snapshot (host_build_graph scheduler_cold_path.cpp):
  // the SHUTDOWN_SNAPSHOT line, thread 0's TASK (fanin_met over the raw
  // producers: none) and SUMMARY, and log_stall_diagnostics' CLUSTER lines of
  // each of the 3 threads' 8 clusters (cluster_id = cli * 3 + thread).
  // Before them the same periodic dumps as the tensormap runtime's (49 lines,
  // test above). The resolution thread (run_resolution_thread,
  // host_build_graph scheduler_dispatch.cpp) keeps no idle_iterations and
  // never calls log_stall_diagnostics, and the snapshot's loop covers
  // active_sched_threads_ = aicpu_thread_num_ - 1 threads: no line of thread 3.
  const json& all = e["device_log"];
  REQUIRE(all.size() == 49 + 2 + 2 + 24);
  for (const auto& l : all) CHECK(l.get<std::string>().find("thread=3") == std::string::npos);
  const json log(all.begin() + 49, all.end());
  CHECK(log[0] == "[STALL thread=0 idle_iterations=14285715] TIMEOUT_EXIT after_idle_iterations=14285715");
  CHECK(log[1] == "[SHUTDOWN_SNAPSHOT trigger_thread=0 reason=scheduler_timeout idle_iterations=14285715] "
                  "dumping all scheduler threads before emergency shutdown");
  CHECK(log[2] == "[STALL thread=0 idle_iterations=14285715] TASK ring=0 task_id=0 state=RUNNING fanin_met=0/0 "
                  "kernels=[aic:0 aiv0:-1 aiv1:-1] running_on=[owner_thread=0 cores=[core=0(aic)]]");
  CHECK(log[3] == "[STALL thread=0 idle_iterations=14285715] SUMMARY completed=0/1 last_progress_iteration=0 "
                  "scan_ready=0 scan_waiting=0 scan_running=1");
  CHECK(log[4] == "[STALL thread=0 idle_iterations=14285715] CLUSTER cluster_id=0 aic=core0(busy kernel=0 task=0 "
                  "cond_reg_state=ack) aiv0=core24(idle) aiv1=core25(idle)");
  CHECK(log[5] == "[STALL thread=0 idle_iterations=14285715] CLUSTER cluster_id=3 aic=core3(idle) aiv0=core30(idle) "
                  "aiv1=core31(idle)");
  CHECK(log[12] == "[STALL thread=1 idle_iterations=14285715] CLUSTER cluster_id=1 aic=core1(idle) aiv0=core26(idle) "
                   "aiv1=core27(idle)");
  CHECK(log[27] == "[STALL thread=2 idle_iterations=14285715] CLUSTER cluster_id=23 aic=core23(idle) "
                   "aiv0=core70(idle) aiv1=core71(idle)");
}

TEST_CASE("watchdog: a kernel that ends in time for the watchdog iteration's poll completes", "[watchdog][cli]") {
  cli::RunResult r = run("tests/data/watchdog_under.json", "wd_under");
  REQUIRE(r.summary.is_object());
  CHECK(r.status == 0);
  CHECK(r.summary["status"] == "ok");
  CHECK(r.summary["tasks"]["completed"] == 1);
  // FIN visible at 2000000829 + 80: the poll that reads at 2000000909 sees it.
  CHECK(r.summary["device_wall_ns"].get<double>() > 2000000909.0);
}

TEST_CASE("watchdog: --scheduler-timeout-ms overrides the trace and the platform", "[watchdog][cli]") {
  // 3 s: the 1,999,998,144 ns kernel is no longer a hang.
  cli::RunResult r = run("traces/fatal/watchdog_over.json --scheduler-timeout-ms 3000", "wd_cli");
  CHECK(r.status == 0);
  // 1 s: the platform's default (10 s) and the trace's 2 s are both overridden.
  cli::RunResult s = run("tests/data/watchdog_under.json --scheduler-timeout-ms 1000", "wd_cli1");
  CHECK(s.status == 1);
  CHECK(s.summary["error"]["detector"] == "scheduler no-progress timeout (1000 ms)");
  // runtime_timeout_config.h parses the value as an integer in [1, INT32_MAX].
  for (const char* bad : {"0", "2147483648", "-1", "1.5"}) {
    INFO(bad);
    cli::RunResult b = run(std::string("tests/data/watchdog_under.json --scheduler-timeout-ms ") + bad, "wd_bad");
    CHECK(b.status == 2);
    CHECK(has(b.err, "--scheduler-timeout-ms: scheduler_timeout_ms must be an integer in [1, INT32_MAX] (ms), got " +
                         std::string(bad)));
  }
}

// Which timeout fires first when the orchestrator reads the output of a
// kernel that never ends: the watchdog at the platform's 10 s, before
// wait_for_tensor_ready's 15 s (pto_runtime2.cpp); upstream's
// tensor_wait_timeout case (tests/st/runtime_fatal_codes/
// test_runtime_fatal_codes.py) raises the watchdog to 30 s to get the other
// order (test_fatal.cpp, traces/fatal/tensor_wait_timeout.json). The task is
// an AIV one: core 24, thread 0's first AIV core; one polled core, so the
// same 140 ns grid: 809 + 140 x (floor(1e10 / 140) + 1) = 10000000889 ns.
// The orchestration is not done: total_tasks_ is still 0
// (on_orchestration_done publishes it), so "completed=0/0".
TEST_CASE("watchdog: at 10 s it fires before a 15 s get_tensor_data wait", "[watchdog][cli]") {
  cli::RunResult r = run("traces/fatal/watchdog_before_tensor_wait.json", "wd_order");
  REQUIRE(r.summary.is_object());
  CHECK(r.status == 1);
  const json& e = r.summary["error"];
  CHECK(e["sched_error_code"] == 100);
  CHECK(e["sub_class"] == "S1:running-stalled");
  CHECK(e["device_log"][exit_line(e["device_log"])] ==
        "[STALL thread=0 idle_iterations=71428572] TIMEOUT_EXIT after_idle_iterations=71428572 "
        "sub_class=S1:running-stalled completed=0/0 running=1 ready=0 waiting=0 orch_done=0 stuck_task_id=0 "
        "stuck_core=24");
  CHECK(e["diagnosis"]["explanation"][0] ==
        "the scheduler latched SCHEDULER_TIMEOUT (100) first, at 10000000.889 us, by its scheduler no-progress "
        "timeout (10000 ms), and the schedulers stopped; the orchestrator's waits break only on an orchestrator "
        "error, so it went on until TENSOR_WAIT_TIMEOUT at 15000064.220 us, and the host reports that code "
        "(runtime_status prefers orch_error_code)");
}

// The two latches of the shared-memory header (pto_shared_memory.h
// orch_error_code, sched_error_code): wait_for_tensor_ready
// (pto_runtime2.cpp) breaks its wait only on an orchestrator error, not on
// the scheduler's code 100, and the emergency shutdown
// (scheduler_cold_path.cpp check_idle_fatal_error) stops the schedulers, not
// the orchestrator thread: the wait goes on and latches code 8 at its own
// timeout, and the host reports runtime_status=-8 (runtime_status_from_error_codes
// prefers the orchestrator's code) with sched_error_code=100 and the
// scheduler's sub-class line. The read began at 220 ns (detector_since_ns, as
// in test_fatal's tensor_wait_timeout); it reads the clock every 1024 polls
// of 100 ns and fails at the first read past 15 s:
// 220 + 102400 x (floor(15e9 / 102400) + 1) = 15000064220 ns.
TEST_CASE("watchdog: the orchestrator's wait still latches code 8 after the watchdog", "[watchdog][cli]") {
  cli::RunResult r = run("traces/fatal/watchdog_before_tensor_wait.json", "wd_order2");
  REQUIRE(r.summary.is_object());
  const json& e = r.summary["error"];
  CHECK(e["name"] == "TENSOR_WAIT_TIMEOUT");
  CHECK(e["orch_error_code"] == 8);
  CHECK(e["sched_error_code"] == 100);
  CHECK(e["detector_since_ns"] == 220.0);
  CHECK(e["device_time_ns"] == 15000064220.0);
  // The watchdog's TIMEOUT_EXIT line and its stall snapshot first, then the
  // orchestrator's FATAL line when its wait times out.
  CHECK(e["device_log"][exit_line(e["device_log"]) + 1].get<std::string>().rfind("[SHUTDOWN_SNAPSHOT trigger_thread=0 ",
                                                                                0) == 0);
  CHECK(e["device_log"].back() == "FATAL(code=8): Timeout (750000000 cycles): producer (ring=0, local=0) not completed");
  CHECK(has(r.err, "PTO2 runtime failed: orch_error_code=8 sched_error_code=100 runtime_status=-8\n"));
  CHECK(has(r.err,
            "PTO2 scheduler timeout sub_class=S1:running-stalled (detail=1) completed=0/0 running=1 ready=0 "
            "waiting=0 orch_done=0 stuck_task_id=0 stuck_core=24\n"));
}

// A full ready queue loses a task (pto_scheduler.h PTO2ReadyQueue::push
// returns false and push_ready_routed does not check it): on tiny with room
// for 4 entries, the 6 consumers of one producer become ready in its fanout
// walk, newest first (wire_fanin_task prepends to fanout_head), so t6..t3
// are queued and run, t2 and t1 are lost; nothing is left to run and the
// scheduler's watchdog reports the hang (the global branch: no running task,
// the orchestration done, tasks unfinished). The device says nothing of the
// lost tasks; npusim's warning and diagnosis name them.
TEST_CASE("a full ready queue loses tasks and the run hangs until the watchdog", "[watchdog][cli]") {
  const fs::path dir = cli::scratch("rq_full_in");
  fs::create_directories(dir);
  json plat = json::parse(std::ifstream(std::string(NPUSIM_SOURCE_DIR) + "/platforms/tiny.json"));
  plat["name"] = "tiny_rq4";
  plat["limits"]["ready_queue_capacity"]["value"] = 4;
  std::ofstream(dir / "p.json") << plat.dump();
  json program = json::array({{{"op", "submit"}, {"kernel", "K"}, {"args", {{{"out", "x"}, {"shape", {16}}, {"dtype", "fp32"}}}}}});
  for (int i = 0; i < 6; ++i)
    program.push_back({{"op", "submit"}, {"kernel", "K"}, {"args", {{{"in", "x"}}}}});
  const json trace = {{"npusim_trace", 1},
                      {"name", "ready_queue_full"},
                      {"kernels", {{"K", {{"func_id", 0}, {"core", "aiv"}, {"duration", {{"ns", 1000}}}}}}},
                      {"program", program}};
  std::ofstream(dir / "t.json") << trace.dump();
  cli::RunResult r = run("'" + (dir / "t.json").string() + "' --platform '" + (dir / "p.json").string() + "'", "rq_full");
  REQUIRE(r.summary.is_object());
  CHECK(r.status == 1);
  const json& e = r.summary["error"];
  CHECK(e["name"] == "SCHEDULER_TIMEOUT");
  CHECK(r.summary["tasks"]["completed"] == 5);
  CHECK(r.summary["warnings"]["by_kind"]["ready_queue_overflow"] == 1);
  CHECK(e["diagnosis"]["dropped_ready"] == json::array({"t2", "t1"}));
  CHECK(has(r.err, "2 task(s) were lost to a full ready queue (4 entries, limits.ready_queue_capacity): t2, t1;"));
  // Nothing runs and the orchestration is done with 5/7 completed: the
  // watchdog's global branch (scheduler_dispatch.cpp resolve_and_dispatch,
  // !self_owns && total_tasks_ > 0 && completed_tasks_ < total_tasks_ &&
  // no_thread_owns_running_task) latches, and handle_timeout_exit
  // (tensormap_and_ringbuffer scheduler_cold_path.cpp) prints its line with
  // classify_stall_reason's fields: t1 and t2 have their fanin met and are on
  // no core (ready, S3).
  // no core is polled, so an idle iteration is the loop's 10 ns (tiny.json):
  // the thread latches at its (10 s / 10 ns + 1)th idle iteration past its
  // last progress; K = floor((5200 + 1e10 - last progress) / 10) + 1, the
  // thread's last progress 30 to 39 ns before the stall time (5200 ns, the
  // last event).
  CHECK(e["stall_time_ns"] == 5200.0);
  // Before the latch, each thread's periodic dumps (resolve_and_dispatch,
  // scheduler_dispatch.cpp: every 480000 of its ~1e9 idle iterations, 2083
  // each; thread 1's last progress is earlier, so it dumps first in each
  // round; thread 2, the orchestrator's turned scheduler, owns no cluster and
  // prints nothing in log_stall_diagnostics): the first and the last round
  // of 2 shown, the 4162 between counted.
  const json& all = e["device_log"];
  REQUIRE(exit_line(all) == 11);
  CHECK(all[0] == "[STALL thread=1 idle_iterations=480000] CLUSTER cluster_id=1 aic=core1(idle) aiv0=core4(idle) "
                  "aiv1=core5(idle)");
  CHECK(all[1] == "[STALL thread=0 idle_iterations=480000] TASK ring=0 task_id=1 state=READY   fanin_refcount=2/2 "
                  "kernels=[aic:-1 aiv0:0 aiv1:-1]");
  CHECK(all[5] == "[npusim] ... 4162 more periodic stall dumps (every 480000 idle iterations of each scheduler "
                  "thread) not shown");
  CHECK(all[6] == "[STALL thread=1 idle_iterations=999840000] CLUSTER cluster_id=1 aic=core1(idle) aiv0=core4(idle) "
                  "aiv1=core5(idle)");
  CHECK(all[9] == "[STALL thread=0 idle_iterations=999840000] SUMMARY completed=5/7 last_progress_iteration=5 "
                  "scan_ready=2 scan_waiting=0 scan_running=0");
  const json tail(all.end() - 7, all.end());
  CHECK(tail ==
        json::array({"[STALL thread=0 idle_iterations=1000000004] TIMEOUT_EXIT after_idle_iterations=1000000004 "
                     "sub_class=S3:ready-but-all-idle completed=5/7 running=0 ready=2 waiting=0 orch_done=1 "
                     "stuck_task_id=-1 stuck_core=-1",
                     // log_shutdown_stall_snapshot (tensormap_and_ringbuffer
                     // scheduler_cold_path.cpp): thread 0 scans the ring (t1, t2
                     // ready, fanin_refcount with the submit's reference), its
                     // SUMMARY (last_progress_count: 5 completed at its last
                     // completion), then one CLUSTER line per thread (tiny: 2 clusters).
                     "[SHUTDOWN_SNAPSHOT trigger_thread=0 reason=scheduler_timeout idle_iterations=1000000004] "
                     "dumping all scheduler threads before emergency shutdown",
                     "[STALL thread=0 idle_iterations=1000000004] TASK ring=0 task_id=1 state=READY   "
                     "fanin_refcount=2/2 kernels=[aic:-1 aiv0:0 aiv1:-1]",
                     "[STALL thread=0 idle_iterations=1000000004] TASK ring=0 task_id=2 state=READY   "
                     "fanin_refcount=2/2 kernels=[aic:-1 aiv0:0 aiv1:-1]",
                     "[STALL thread=0 idle_iterations=1000000004] SUMMARY completed=5/7 last_progress_iteration=5 "
                     "scan_ready=2 scan_waiting=0 scan_running=0",
                     "[STALL thread=0 idle_iterations=1000000004] CLUSTER cluster_id=0 aic=core0(idle) "
                     "aiv0=core2(idle) aiv1=core3(idle)",
                     "[STALL thread=1 idle_iterations=1000000004] CLUSTER cluster_id=1 aic=core1(idle) "
                     "aiv0=core4(idle) aiv1=core5(idle)"}));

  // host_build_graph checks the push (its pto_scheduler.h push_ready_routed,
  // latch_ready_queue_overflow): with its queue at 4 entries the first failed
  // push latches READY_QUEUE_OVERFLOW (104) in sched_error_code (the walk goes
  // on, the latch stays the first) and the run stops; no watchdog. The
  // consumers wait on t0's wake list in the order the boot scan registered
  // them (scheduler_cold_path.cpp classify_partition; 4 AICPU threads, slices
  // [t0], [t1, t2], [t3, t4], [t5, t6], 10 ns a task): t1, t3, t5 at 10 ns,
  // t2, t4, t6 at 20. Drained newest first: t6, t4, t2, t5 fill the queue,
  // t3's push fails first, then t1's.
  plat["limits"]["hbg_ready_queue_capacity"]["value"] = 4;
  std::ofstream(dir / "p_hbg.json") << plat.dump();
  cli::RunResult h = run("'" + (dir / "t.json").string() + "' --platform '" + (dir / "p_hbg.json").string() +
                             "' --runtime host_build_graph",
                         "rq_full_hbg");
  REQUIRE(h.summary.is_object());
  CHECK(h.status == 1);
  CHECK(h.summary["error"]["name"] == "READY_QUEUE_OVERFLOW");
  CHECK(h.summary["error"]["sched_error_code"] == 104);
  CHECK(h.summary["error"]["orch_error_code"] == 0);
  CHECK(h.summary["error"]["diagnosis"]["dropped_ready"] == json::array({"t3", "t1"}));
  CHECK(has(h.err, "PTO2 runtime failed: orch_error_code=0 sched_error_code=104 runtime_status=-104\n"));
}

// The caps of log_stall_diagnostics (tensormap_and_ringbuffer
// scheduler_cold_path.cpp; STALL_DUMP_READY_MAX 8, STALL_DUMP_WAIT_MAX 4,
// STALL_DUMP_CORE_MAX 8 in scheduler_types.h): the loops count every task
// (scan_*) but print at most 8 RUNNING, 8 READY and 4 WAIT lines, and at most
// the thread's first 8 clusters. With one scheduler thread (2 AICPU threads)
// owning all 24 clusters, 60 independent 2 ms AIC tasks and 5 consumers of
// the first under a 1 ms watchdog: 24 run (t0..t23), 36 are READY (24 in
// the pending slots, running_slot_state being only the running one, and 12
// queued), 5 WAIT on t0.
TEST_CASE("watchdog: the stall dump stops at 8 RUNNING, 8 READY, 4 WAIT and 8 clusters", "[watchdog][cli]") {
  const fs::path dir = cli::scratch("caps_in");
  fs::create_directories(dir);
  json program = json::array();
  for (int i = 0; i < 60; ++i)
    program.push_back({{"op", "submit"}, {"kernel", "K"},
                       {"args", {{{"out", "x" + std::to_string(i)}, {"shape", {1}}, {"dtype", "int32"}}}}});
  for (int i = 0; i < 5; ++i)
    program.push_back({{"op", "submit"}, {"kernel", "K"},
                       {"args", {{{"in", "x0"}}, {{"out", "y" + std::to_string(i)}, {"shape", {1}}, {"dtype", "int32"}}}}});
  const json trace = {{"npusim_trace", 1}, {"name", "stall_caps"}, {"run", {{"scheduler_timeout_ms", 1}}},
                      {"kernels", {{"K", {{"func_id", 0}, {"core", "aic"}, {"duration", {{"ns", 2000000}}}}}}},
                      {"program", program}};
  std::ofstream(dir / "t.json") << trace.dump();
  cli::RunResult r = run("'" + (dir / "t.json").string() + "' --aicpu-thread-num 2", "stall_caps");
  REQUIRE(r.summary.is_object());
  const json& log = r.summary["error"]["device_log"];
  const std::size_t x = exit_line(log);
  REQUIRE(log.size() == x + 2 + 8 + 8 + 4 + 1 + 8);
  // Each idle iteration polls the 24 running cores, 40 + 24 x 100 = 2440 ns;
  // the 1 ms budget from the last dispatch passes in the 410th (1e6 / 2440 = 409.8).
  const std::string p = "[STALL thread=0 idle_iterations=410] ";
  for (int i = 0; i < 8; ++i) {
    INFO(i);
    CHECK(log[x + 2 + i] == p + "TASK ring=0 task_id=" + std::to_string(i) +
                                " state=RUNNING fanin_refcount=1/1 kernels=[aic:0 aiv0:-1 aiv1:-1] running_on=[owner_thread=0 "
                                "cores=[core=" + std::to_string(i) + "(aic)]]");
    CHECK(log[x + 10 + i] == p + "TASK ring=0 task_id=" + std::to_string(24 + i) +
                                 " state=READY   fanin_refcount=1/1 kernels=[aic:0 aiv0:-1 aiv1:-1]");
    CHECK(log[x + 23 + i] == p + "CLUSTER cluster_id=" + std::to_string(i) + " aic=core" + std::to_string(i) +
                                 "(busy kernel=0 task=" + std::to_string(i) + " cond_reg_state=ack) aiv0=core" +
                                 std::to_string(24 + 2 * i) + "(idle) aiv1=core" + std::to_string(25 + 2 * i) + "(idle)");
  }
  for (int i = 0; i < 4; ++i)
    CHECK(log[x + 18 + i] == p + "TASK ring=0 task_id=" + std::to_string(60 + i) +
                                 " state=WAIT    fanin_refcount=1/2 kernels=[aic:0 aiv0:-1 aiv1:-1] missing_deps=1");
  CHECK(log[x + 22] == p + "SUMMARY completed=0/65 last_progress_iteration=0 scan_ready=36 scan_waiting=5 "
                           "scan_running=24");
}

// format_core_status's ANOMALY (tensormap_and_ringbuffer
// scheduler_cold_path.cpp): a busy core whose COND register does not read
// ACK. An early-dispatched consumer (its producer allow_early_resolve) is
// staged gated on thread 1's core 26 and spins on its doorbell before it
// ACKs (aicore_executor.cpp writes ACK after the task starts): COND still
// holds AICORE_IDLE_VALUE (FIN, id 0x7FFFFFFF, platform_config.h) while the
// AICPU's running slot holds token 1 and no pending token (-1). The
// producer's core is running its kernel: ack.
TEST_CASE("watchdog: a staged core that has not ACKed reads cond_reg_state=fin ANOMALY", "[watchdog][cli]") {
  const fs::path dir = cli::scratch("anomaly_in");
  fs::create_directories(dir);
  const json trace = {
      {"npusim_trace", 1}, {"name", "anomaly"}, {"run", {{"scheduler_timeout_ms", 2000}}},
      {"kernels", {{"LONG", {{"func_id", 0}, {"core", "aic"}, {"duration", {{"ns", 1999998144}}}}},
                   {"NEXT", {{"func_id", 1}, {"core", "aiv"}, {"duration", {{"ns", 1000}}}}}}},
      {"program", json::array({{{"op", "submit"}, {"kernel", "LONG"}, {"early_resolve", true},
                                {"args", {{{"out", "x"}, {"shape", {1}}, {"dtype", "int32"}}}}},
                               {{"op", "submit"}, {"kernel", "NEXT"},
                                {"args", {{{"in", "x"}}, {{"out", "y"}, {"shape", {1}}, {"dtype", "int32"}}}}}})}};
  std::ofstream(dir / "t.json") << trace.dump();
  cli::RunResult r = run("'" + (dir / "t.json").string() + "'", "anomaly");
  REQUIRE(r.summary.is_object());
  const json& log = r.summary["error"]["device_log"];
  const std::size_t x = exit_line(log);
  REQUIRE(log.size() == x + 29);
  CHECK(log[x + 3] == "[STALL thread=0 idle_iterations=14285715] TASK ring=0 task_id=1 state=RUNNING fanin_refcount=1/2 "
                      "kernels=[aic:-1 aiv0:1 aiv1:-1] running_on=[owner_thread=1 cores=[core=26(aiv0)]]");
  CHECK(log[x + 5] == "[STALL thread=0 idle_iterations=14285715] CLUSTER cluster_id=0 aic=core0(busy kernel=0 task=0 "
                      "cond_reg_state=ack) aiv0=core24(idle) aiv1=core25(idle)");
  CHECK(log[x + 13] == "[STALL thread=1 idle_iterations=14285715] CLUSTER cluster_id=1 aic=core1(idle) aiv0=core26(busy "
                       "kernel=1 task=1 cond_reg_state=fin ANOMALY cond_tok=2147483647 running_tok=1 pending_tok=-1) "
                       "aiv1=core27(idle)");
}
