// Conformance of host_build_graph's boot with the runtime's source
// (hw-native-sys/simpler src/a2a3/runtime/host_build_graph/): the graph is
// built on the host, then every AICPU thread classifies a contiguous slice of
// the task ids (runtime/scheduler/scheduler_cold_path.cpp
// SchedulerContext::classify_partition) and no thread dispatches before the
// classify_arrived_ barrier (aicpu/aicpu_executor.cpp AicpuExecutor::run), so
// every root of the graph is in the ready queues at once; a queue it
// overfills latches READY_QUEUE_OVERFLOW (runtime/scheduler/pto_scheduler.h
// push_ready_routed, latch_ready_queue_overflow) before the first dispatch.
// Its queues hold PTO2_READY_QUEUE_SIZE entries (runtime/pto_runtime2_types.h,
// 8192), a build constant of the runtime.
#include "tests/catch.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli_support.h"
#include "tests/conformance/conf_sched_fixture.h"

using namespace npusim;
using conf::ConfSim;
using conf::at;
using conf::root_task;
namespace fs = std::filesystem;

namespace {

// A copy of a2a3.json whose host_build_graph ready queues hold `entries`.
std::string platform_with_queue(const std::string& name, std::uint64_t entries) {
  const fs::path dir = cli::scratch(name);
  fs::create_directories(dir);
  nlohmann::json p = cli::load(fs::path(NPUSIM_SOURCE_DIR) / "platforms" / "a2a3.json");
  p["limits"]["hbg_ready_queue_capacity"]["value"] = entries;
  const fs::path file = dir / "platform.json";
  std::ofstream(file) << p.dump();
  return file.string();
}

}  // namespace

// Upstream: scheduler_cold_path.cpp classify_partition (thread t of N takes
// [n*t/N, n*(t+1)/N); a ready task push_ready_routed, any other register_wake
// on classify_fanin_state's producer), aicpu_executor.cpp AicpuExecutor::run
// (classify_ready_, classify_arrived_, runtime_init_ready_: no dispatch
// before every slice is done). tiny: fanout_edge 10 ns (a classification),
// ready_push 0. 3 AICPU threads, 5 tasks: thread 0 classifies t0 (pushed at
// 10), thread 1 t1 (10) and t2 (20), the resolution thread t3 (10) and t4
// (registered on t1's wake list at 20). The AIV queue holds t0, t1, t3, t2:
// the threads' pushes interleaved by time (ties in thread order), not the
// submit order. The barrier ends at 20; thread 0 then pops t0 and t1 onto its
// AIVs 2 and 3, thread 1 pops t3 and t2 onto 4 and 5 (loop 10, pop 20, a
// payload of 100 each: published at 250, kernels start 1000 later).
TEST_CASE("host_build_graph boot scan: slices classified in parallel, no dispatch before the barrier",
          "[conformance]") {
  ConfSim s("hbg_boot_scan.json");
  REQUIRE(s.config.resolution_thread());
  s.run();
  REQUIRE(s.finished());
  // Pushed in time order, ties in thread order; e when b's completion
  // drained b's wake list.
  CHECK(s.obs.ready == std::vector<TaskId>{root_task(0), root_task(1), root_task(3), root_task(2), root_task(4)});
  for (const auto& p : s.obs.phases) CHECK(p.start >= at(20));
  const auto t0 = s.of_task(root_task(0)), t1 = s.of_task(root_task(1)), t2 = s.of_task(root_task(2)),
             t3 = s.of_task(root_task(3));
  REQUIRE(t0.size() == 1);
  REQUIRE(t1.size() == 1);
  REQUIRE(t2.size() == 1);
  REQUIRE(t3.size() == 1);
  CHECK(t0[0].core == 2);
  CHECK(t1[0].core == 3);
  CHECK(t3[0].core == 4);  // t3 was pushed before t2
  CHECK(t2[0].core == 5);
  CHECK(t0[0].start == at(1250));
}

// The same boot with a queue smaller than the graph's roots: paged attention
// Case1's task graph at batch 4 (256 QK tasks with no producer, all AIC) on a
// 128-entry queue. The device latches READY_QUEUE_OVERFLOW (104) in the boot
// scan, before any dispatch; the advice names PTO2_READY_QUEUE_SIZE and npusim's
// platform field, and re-running with it completes. With the task window too
// small as well, the advice chains: the whole graph's window first, then the
// queue, and both together complete.
TEST_CASE("host_build_graph boot scan: more roots than a ready queue holds is READY_QUEUE_OVERFLOW [cli]",
          "[conformance][cli][fatal]") {
  const std::string trace = "tests/conformance/traces/hbg_boot_pa_small.json --quiet --no-host-stats "
                            "--runtime host_build_graph --platform '";
  const std::string p128 = platform_with_queue("q128", 128);
  cli::RunResult r = cli::run_summary(trace + p128 + "'", "boot_q128");
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  const nlohmann::json& e = r.summary["error"];
  CHECK(e["name"] == "READY_QUEUE_OVERFLOW");
  CHECK(e["sched_error_code"] == 104);
  CHECK(e["orch_error_code"] == 0);
  CHECK(r.summary["tasks"]["submitted"] == 1028);  // 4 alloc_tensors, 4 x 64 x (QK, SF, PV, UP)
  CHECK(r.summary["tasks"]["completed"] == 4);     // the allocs, completed on the host
  CHECK(r.summary["makespan_ns"] == 0);            // no kernel ran
  const nlohmann::json& roots = e["diagnosis"]["boot_roots"];
  CHECK(roots["ready"] == nlohmann::json::array({256, 0, 0}));
  CHECK(roots["queue_size_needed"] == 256);
  CHECK(cli::has(r.err, "A runtime built with PTO2_READY_QUEUE_SIZE 256 gets this graph past its boot"));
  const nlohmann::json& en = e["diagnosis"]["enough"];
  REQUIRE(en.is_object());
  CHECK(en["field"] == "hbg_ready_queue_capacity");
  CHECK(en["from"] == 128);
  CHECK(en["to"] == 256);
  CHECK(en["outcome"] == "ok");
  const std::string p256 = platform_with_queue("q256", 256);
  cli::RunResult ok = cli::run_summary(trace + p256 + "'", "boot_q256");
  CHECK(ok.status == 0);
  CHECK(ok.summary["tasks"]["completed"] == 1028);

  cli::RunResult w = cli::run_summary(trace + p128 + "' --ring-task-window 512", "boot_q128_w512");
  CHECK(w.status == 1);
  REQUIRE(w.summary.is_object());
  CHECK(w.summary["error"]["name"] == "FLOW_CONTROL_DEADLOCK");
  CHECK(w.summary["makespan_ns"] == 0);  // refused on the host: nothing ran
  const nlohmann::json& wen = w.summary["error"]["diagnosis"]["enough"];
  REQUIRE(wen.is_object());
  CHECK(wen["field"] == "ring_task_window");
  CHECK(wen["to"] == 2048);
  CHECK(wen["outcome"] == "READY_QUEUE_OVERFLOW");
  REQUIRE(wen["then"].size() == 1);
  CHECK(wen["then"][0]["field"] == "hbg_ready_queue_capacity");
  CHECK(wen["then"][0]["to"] == 256);
  CHECK(wen["then"][0]["outcome"] == "ok");
  CHECK(wen["together"] ==
        "ring_task_window=[2048,512,512,512] (--ring-task-window 2048,512,512,512) and platform "
        "limits.hbg_ready_queue_capacity=256");
  cli::RunResult both = cli::run_summary(trace + p256 + "' --ring-task-window 2048,512,512,512", "boot_q256_w2048");
  CHECK(both.status == 0);
  CHECK(both.summary["tasks"]["completed"] == 1028);
}

// The shipped traces/paged_attention_case1.json under host_build_graph with
// the whole graph's window and heap (docs/model.md): its 16,384 QK tasks have
// no producer, so the boot scan overfills the 8192-entry AIC queue, on the
// device as in npusim.
TEST_CASE("host_build_graph boot scan: paged_attention Case1 overfills the AIC queue at boot [cli]",
          "[conformance][cli][fatal]") {
  cli::RunResult r = cli::run_summary(
      "traces/paged_attention_case1.json --quiet --no-host-stats --no-suggest --no-deps --no-task-stats "
      "--swimlane-level 0 --no-scope-stats --runtime host_build_graph --ring-task-window 131072 "
      "--ring-heap 536870912",
      "boot_case1");
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["error"]["name"] == "READY_QUEUE_OVERFLOW");
  CHECK(r.summary["tasks"]["submitted"] == 65792);
  CHECK(r.summary["makespan_ns"] == 0);
  CHECK(r.summary["error"]["diagnosis"]["boot_roots"]["ready"] == nlohmann::json::array({16384, 0, 0}));
  CHECK(r.summary["error"]["diagnosis"]["boot_roots"]["queue_size_needed"] == 16384);
}
