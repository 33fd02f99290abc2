// What the host and the device print when a run fails, byte for byte as the
// runtime prints it (each log line's text, without the logger's own
// "[file:line]" / timestamp prefix). Every function names the upstream code
// whose lines it reproduces; npusim's own explanation is elsewhere
// (diagnosis.cpp) and is never mixed into these lines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/chip/chip.h"

namespace npusim::diagnose {

// What the scheduler's no-progress watchdog records when it fires
// (SchedulerContext::classify_stall_reason, scheduler_cold_path.cpp): over the
// live tasks of every ring that have not completed, those on a core (the
// first in ring order is the stuck task, its lowest core the stuck core),
// those whose fanin is satisfied, and those still waiting; and the sub-class.
struct StallSnapshot {
  std::uint64_t completed = 0, total = 0;
  std::uint64_t running = 0, ready = 0, waiting = 0;
  bool orch_done = false;
  std::int64_t stuck_task_id = -1;  // raw id (ring << 32 | local)
  int stuck_core = -1;
  int detail = 0;             // PTO2_STALL_DETAIL_*
  std::string sub_class;      // stall_detail_name()
};
StallSnapshot classify_stall(Chip& chip);

// "Ring buffer sizes: ..." (resolve_arena_sizing in the runtime's
// host/runtime_maker.cpp, logged when the callable is bound; the hints of
// HEAP_RING_DEADLOCK refer to it as "the line above").
std::string ring_sizes_line(const RunConfig& c);

// ACL_LOG_ERROR_DETAIL(rc) (acl_error_log.h): "ACL error detail: ..." and
// "ACL error hint: ...", nothing for a code it does not characterise.
void acl_detail_lines(int rc, std::vector<std::string>& out);

// LOG_RUNTIME_FAILURE (src/common/runtime_status/error_log.h): the
// "PTO2 runtime failed:" line, then "error detail:" and "error hint:".
void runtime_failure_lines(int orch_error_code, int sched_error_code, std::vector<std::string>& out);

// The host's lines for a runtime fatal, in the order it prints them: the ring
// sizes at bind time; the stream sync failing with 507018 and its ACL
// annotation (DeviceRunnerBase::sync_stream_pair); then validate_runtime_impl's
// report, with the scheduler-timeout sub-class line for code 100
// (tensormap_and_ringbuffer). A host_build_graph orchestration fatal happens
// on the host before launch: no stream fails, and the runtime refuses to
// upload the graph (host_build_graph/host/runtime_maker.cpp).
// `host_orch_log`: for host_build_graph, the lines its orchestration printed
// on the host before it failed (device_log_lines composes them).
std::vector<std::string> host_failure_lines(Chip& chip, int orch_error_code, int sched_error_code,
                                            const StallSnapshot& stall,
                                            const std::vector<std::string>& host_orch_log = {});

// The device log lines the detector of `e` prints at the moment it latches,
// from the chip's state at that moment: the allocator's and the pools'
// deadlock banners (pto_ring_buffer.h/.cpp, ensure_tensormap_capacity), the
// scope-deadlock banner (check_scope_can_accept_task), the invalid-Arg
// banners of submit_task / submit_dummy_task, and report_fatal's
// "FATAL(code=N): ..." line (orch_report_fatal_v) with code 8's message from
// wait_for_tensor_ready.
std::vector<std::string> device_log_lines(Chip& chip, const LatchedError& e);

// handle_timeout_exit's "[STALL thread=N idle_iterations=K] TIMEOUT_EXIT ..."
// (scheduler_cold_path.cpp): host_build_graph's without, the tensormap
// runtime's with classify_stall_reason's fields, classified from the chip now.
std::string timeout_exit_line(Chip& chip, int thread, std::uint64_t idle_iterations);

// A hang with nothing left to happen, reported at `at` (the stall time plus
// the budget): the TIMEOUT_EXIT line of the thread the watchdog's global
// branch lets latch (resolve_and_dispatch, scheduler_dispatch.cpp: no thread
// owns a running task, the orchestration done, tasks unfinished); nothing
// when that branch cannot fire.
std::vector<std::string> global_watchdog_lines(Chip& chip, Time at);

// What a latching watchdog prints, COND registers read at `at` (the latch):
// the periodic stall dumps before it (periodic_dump_lines), then
// handle_timeout_exit's TIMEOUT_EXIT line of `thread` (an index in
// chip.schedulers()), then the stall snapshot with that thread's counts.
std::vector<std::string> watchdog_lines(Chip& chip, int thread, std::uint64_t idle_iterations, Time at);

// The periodic dumps of resolve_and_dispatch (scheduler_dispatch.cpp, both
// runtimes): each core-owning thread calls log_stall_diagnostics with its own
// idle count at every multiple of STALL_LOG_INTERVAL (480000) idle iterations.
// Appended to `out` in time order (a tie: the lower thread first), each from
// the chip's state at the latch; `latch`'s count is `latch_idle`, the others'
// are extrapolated on their idle grids to `at`. More than two rounds (a round:
// as many dumps as threads) print the first and last round with one
// "[npusim] ... N more periodic stall dumps ..." line between.
void periodic_dump_lines(Chip& chip, const SchedulerThread* latch, std::uint64_t latch_idle, Time at,
                         std::vector<std::string>& out);

// log_shutdown_stall_snapshot (scheduler_cold_path.cpp, both runtimes),
// appended to `out`: the "[SHUTDOWN_SNAPSHOT trigger_thread=N ...]" line, then
// log_stall_diagnostics for each core-owning thread in order (host_build_graph's
// resolution thread is none: active_sched_threads_ excludes it): thread 0's TASK
// lines over the live uncompleted tasks of every ring (at most 8 RUNNING, 8
// READY, 4 WAIT; host_build_graph names the fanin "fanin_met") and its SUMMARY,
// and each thread's CLUSTER lines (its first 8 clusters; a busy core whose COND
// register at `at` is not ACK carries the ANOMALY suffix). Every line carries
// the trigger's idle iterations; SUMMARY its last_progress_count.
void stall_snapshot_lines(Chip& chip, int trigger, std::uint64_t idle_iterations, std::uint64_t last_progress_count,
                          Time at, std::vector<std::string>& out);

// "rtMalloc failed: 207001 (size=N)" (MemoryAllocator::alloc) with its ACL
// annotation, and the runtime's "Failed to setup pooled static arena".
std::vector<std::string> rtmalloc_failure_lines(std::uint64_t size);

}  // namespace npusim::diagnose
