#include "sim/diagnose/diagnosis_texts.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace npusim::diagnose {

namespace {

// printf into a std::string, as the runtime's LOG_ERROR formats its lines.
std::string fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* format, ...) {
  va_list a;
  va_start(a, format);
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, format, a);
  va_end(a);
  return buf;
}

const char* const kRule = "========================================";
const char* const kDocs = ". See docs/troubleshooting/device-error-codes.md";

template <class T>
std::string ring_array(const std::array<T, kNumRings>& v) {  // format_ring_array
  std::string s = "[";
  for (int r = 0; r < kNumRings; ++r) s += (r ? ", " : "") + std::to_string(v[r]);
  return s + "]";
}

int state_code(TaskState s) {  // PTO2TaskState
  switch (s) {
    case TaskState::Pending: return 0;
    case TaskState::Completed: return 1;
    case TaskState::Consumed: return 2;
  }
  return 0;
}

// "  Head task N: state=S, consumers=R/F, scope_released=B" for the ring's
// reclaim head. With no live task the head slot is the next one to be
// taken: never used (zeroed) on a fresh ring, else reset after its CONSUMED
// occupant (state stays CONSUMED, no consumers, scope bit clear).
std::string head_task_line(Ring& g) {
  const std::int64_t head = static_cast<std::int64_t>(g.tail());
  int state = g.tail() == 0 ? 0 : 2;
  std::uint32_t fc = 0, rc = 0;
  if (g.live()) {
    const Task& h = g.slot(g.tail());
    state = state_code(h.state);
    fc = h.fanout_count;
    rc = h.fanout_refcount;
  }
  return fmt("  Head task %" PRId64 ": state=%d, consumers=%u/%u, scope_released=%d", head, state,
             rc & ~kFanoutScopeBit, fc & ~kFanoutScopeBit, (rc & kFanoutScopeBit) ? 1 : 0);
}

// The structural verdict the allocator and the dep-list pool print when the
// reclaim head is the oldest task of an open scope on the ring.
void head_of_line_lines(std::int64_t last_alive, std::vector<std::string>& out) {
  out.push_back(fmt("Head task %" PRId64 " is the oldest task owned by an open scope on this ring ->", last_alive));
  out.push_back("no open scope can end while the orchestrator is blocked here.");
  out.push_back("Provable head-of-line deadlock.");
}

std::uint64_t heap_used_bytes(Ring& g) {  // PTO2TaskAllocator::heap_used_bytes
  const std::uint64_t size = g.heap_capacity();
  return size == 0 ? 0 : (g.heap_top() + size - g.heap_tail()) % size;
}

std::uint64_t heap_available(Ring& g) {  // PTO2TaskAllocator::heap_available
  const std::uint64_t top = g.heap_top(), tail = g.heap_tail(), size = g.heap_capacity();
  if (top == tail) return size;
  if (top >= tail) return std::max(size - top, tail);
  return tail - top;
}

double percent(std::uint64_t part, std::uint64_t whole) { return whole ? 100.0 * part / whole : 0.0; }

// PTO2TaskAllocator::report_deadlock (pto_ring_buffer.h).
void allocator_banner(const Platform& p, Ring& g, bool heap_blocked, bool scope_gated, std::uint64_t requested,
                      std::vector<std::string>& out) {
  const unsigned r = static_cast<unsigned>(g.index());
  const std::int64_t current = static_cast<std::int64_t>(g.head()), last_alive = static_cast<std::int64_t>(g.tail());
  const std::int64_t active = current - last_alive, window = static_cast<std::int64_t>(g.window());
  out.push_back(kRule);
  out.push_back(fmt("FATAL: Task Allocator Deadlock - %s! ring=%u", heap_blocked ? "Heap Exhausted" : "Task Ring Full", r));
  out.push_back(kRule);
  if (scope_gated) {
    head_of_line_lines(last_alive, out);
  } else {
    out.push_back(fmt("No reclaim progress for ~%" PRIu64 " ms (%" PRIu64 " cycles wall clock).",
                      static_cast<std::uint64_t>(p.timeouts.alloc_no_progress / 1000000000ull),
                      static_cast<std::uint64_t>(p.sys_cnt(p.timeouts.alloc_no_progress) - p.topo.sys_cnt_base)));
  }
  out.push_back(fmt("  Task ring %u: current=%" PRId64 ", last_alive=%" PRId64 ", active=%" PRId64 "/%" PRId64 " (%.1f%%)",
                    r, current, last_alive, active, window, 100.0 * active / window));
  out.push_back(fmt("  Heap ring %u: top=%" PRIu64 ", tail=%" PRIu64 ", size=%" PRIu64 ", used=%" PRIu64
                    ", available=%" PRIu64,
                    r, g.heap_top(), g.heap_tail(), g.heap_capacity(), heap_used_bytes(g), heap_available(g)));
  if (heap_blocked) out.push_back(fmt("  Requested:  %" PRIu64 " bytes", requested));
  out.push_back(head_task_line(g));
  out.push_back("Solution:");
  if (scope_gated) {
    out.push_back("  The live-set retained behind this open-scope head cannot fit in the ring. Either:");
    out.push_back("  1. Split scopes / reduce the live-set retained behind that head, or");
    out.push_back("  2. Size the ring for the peak live-set retained behind the oldest open-scope task.");
  } else {
    if (heap_blocked)
      out.push_back(fmt("  Increase heap (current: %" PRIu64 "); env PTO2_RING_HEAP=<bytes> (e.g. %" PRIu64 ")",
                        g.heap_capacity(), g.heap_capacity() * 2));
    else
      out.push_back(fmt("  Increase task window (current: %" PRId64 "); env PTO2_RING_TASK_WINDOW=<pow2> (e.g. %" PRId64 ")",
                        window, active * 2));
    out.push_back("  If one increase completes, it was under-provisioned; otherwise debug the stuck head consumer.");
  }
  out.push_back(kRule);
}

// The linear counters of a pool, as the dep-list and fanin-spill pools print them.
struct PoolState {
  std::uint64_t capacity, top, tail, high_water;
};

void pool_lines(const PoolState& s, std::uint64_t needed, std::int64_t last_alive, std::int64_t current,
                std::vector<std::string>& out) {
  const std::uint64_t used = s.top - s.tail;
  out.push_back(fmt("  - Pool used:     %" PRIu64 " / %" PRIu64 " (%.1f%%)", used, s.capacity, percent(used, s.capacity)));
  out.push_back(fmt("  - Pool top:      %" PRIu64 " (linear)", s.top));
  out.push_back(fmt("  - Pool tail:     %" PRIu64 " (linear)", s.tail));
  out.push_back(fmt("  - High water:    %" PRIu64, s.high_water));
  out.push_back(fmt("  - Needed:        %" PRIu64 " entries", needed));
  out.push_back(fmt("  - last_task_alive: %" PRId64 " (stuck here)", last_alive));
  out.push_back(fmt("  - current_task:    %" PRId64, current));
  out.push_back(fmt("  - In-flight tasks: %" PRId64, current - last_alive));
}

// Both pools' "Solution:" (both are sized by PTO2_RING_DEP_POOL): twice the high water.
void pool_solution_lines(const char* pool, const PoolState& s, std::vector<std::string>& out) {
  out.push_back("Solution:");
  out.push_back(fmt("  Increase %s capacity (current: %" PRIu64 ", recommended: %" PRIu64 ")", pool, s.capacity,
                    s.high_water * 2));
  out.push_back("  Compile-time: PTO2_DEP_LIST_POOL_SIZE in pto_runtime2_types.h");
  out.push_back(fmt("  Runtime env:  PTO2_RING_DEP_POOL=%" PRIu64, s.high_water * 2));
  out.push_back(kRule);
}

// PTO2DepListPool::report_deadlock (pto_ring_buffer.cpp).
void dep_pool_banner(Ring& g, std::uint64_t needed, bool scope_gated, std::vector<std::string>& out) {
  const std::int64_t last_alive = static_cast<std::int64_t>(g.tail());
  out.push_back(kRule);
  out.push_back("FATAL: Dependency Pool Deadlock Detected!");
  out.push_back(kRule);
  if (scope_gated) {
    head_of_line_lines(last_alive, out);
  } else {
    out.push_back("DepListPool cannot reclaim space after ~500 ms (no progress).");
  }
  const PoolState s{g.dep_pool_capacity(), g.dep_top(), g.dep_tail(), g.dep_high_water()};
  pool_lines(s, needed, last_alive, static_cast<std::int64_t>(g.head()), out);
  out.push_back(head_task_line(g));
  pool_solution_lines("dep pool", s, out);
}

// PTO2FaninPool::ensure_space's backstop (pto_ring_buffer.cpp). The runtime
// asks for one entry per spilled edge.
void fanin_spill_banner(Ring& g, std::vector<std::string>& out) {
  out.push_back(kRule);
  out.push_back("FATAL: Fanin Spill Pool Deadlock Detected!");
  out.push_back(kRule);
  out.push_back("Fanin spill pool cannot reclaim space after ~500 ms (no progress).");
  // append_fanin_or_fail takes the spill entries one edge at a time
  // (ensure_space(ring, 1), then alloc): the blocked task has filled the pool
  // before it waits for one more entry. npusim admits the task's spill whole,
  // so the pool is shown as the device's is at that point.
  const std::uint64_t cap = g.dep_pool_capacity();
  const std::uint64_t taken = cap > g.spill_used() ? cap - g.spill_used() : 0;
  const PoolState s{cap, g.spill_top() + taken, g.spill_tail(), std::max(g.spill_high_water(), cap)};
  pool_lines(s, 1, static_cast<std::int64_t>(g.tail()), static_cast<std::int64_t>(g.head()), out);
  out.push_back("Diagnosis:");
  out.push_back("  last_task_alive is not advancing, so fanin spill pool tail");
  out.push_back("  cannot reclaim. Check TaskRing diagnostics for root cause.");
  pool_solution_lines("fanin spill pool", s, out);
}

// host_build_graph's capacity banners, printed on the host while it builds
// the graph (nothing is reclaimed then, so the first shortage is the verdict):
// the task allocator's (PTO2TaskAllocator::report_capacity_exhausted,
// host_build_graph/runtime/pto_ring_buffer.h), the fanin cap's
// (append_fanin_or_fail) and the tensormap's (ensure_tensormap_capacity, both
// host_build_graph/runtime/orchestrator_core/pto_orchestrator.cpp).
void whole_graph_banner(ErrorCode code, Runtime& rt, int ring, std::uint64_t requested, std::uint64_t tm_needed,
                        std::vector<std::string>& out) {
  Ring& g = rt.ring(ring);
  out.push_back(kRule);
  switch (code) {
    case ErrorCode::HeapRingDeadlock:
    case ErrorCode::FlowControlDeadlock: {
      const bool heap = code == ErrorCode::HeapRingDeadlock;
      const std::uint64_t used = g.heap_used(), size = g.heap_capacity();
      const std::int64_t window = static_cast<std::int64_t>(g.window());
      out.push_back(heap ? "FATAL: Graph Heap Exhausted!" : "FATAL: Task Window Exhausted!");
      out.push_back(kRule);
      out.push_back("The whole graph must fit the configured ring; nothing is reclaimed mid-run.");
      out.push_back(fmt("  Task window: used=%" PRId64 "/%" PRId64, static_cast<std::int64_t>(g.head()), window));
      out.push_back(fmt("  Graph heap:  used=%" PRIu64 "/%" PRIu64 ", available=%" PRIu64, used, size, size - used));
      out.push_back(fmt("  Requested:   %" PRIu64 " bytes + 1 task slot", requested));
      out.push_back("Solution:");
      if (heap)
        out.push_back(fmt("  Increase heap (current: %" PRIu64 "); env PTO2_RING_HEAP=<pow2> (e.g. %" PRIu64 ")", size,
                          size * 2));
      else
        out.push_back(fmt("  Increase task window (current: %" PRId64 "); env PTO2_RING_TASK_WINDOW=<pow2> (e.g. %" PRId64
                          ")",
                          window, window * 2));
      break;
    }
    case ErrorCode::DepPoolOverflow: {
      const int cap = static_cast<int>(Runtime::kWholeGraphMaxFanin);
      out.push_back("FATAL: Fanin Capacity Exhausted!");
      out.push_back(kRule);
      out.push_back("HBG stores every producer dependency in the consumer task's fanin region.");
      out.push_back(fmt("  Fanin:     used=%d/%d", cap, cap));
      out.push_back(fmt("  Requested: at least %d distinct producer dependencies", cap + 1));
      out.push_back("Solution:");
      out.push_back(fmt("  Reduce the task fanin to at most PTO2_MAX_FANIN=%d.", cap));
      out.push_back("  HBG has no dependency spill pool; PTO2_RING_DEP_POOL does not apply.");
      break;
    }
    default: {
      const std::uint64_t used = rt.tensormap().in_use(), cap = rt.tensormap().capacity();
      out.push_back("FATAL: TensorMap Entry Pool Exhausted!");
      out.push_back(kRule);
      out.push_back("Device completion does not reclaim HBG TensorMap entries.");
      out.push_back(fmt("  - Pool used:   %" PRIu64 " / %" PRIu64, used, cap));
      out.push_back(fmt("  - Free:        %" PRIu64 " entries", cap - used));
      out.push_back(fmt("  - Needed:      %" PRIu64 " entries", tm_needed));
      out.push_back("Solution:");
      out.push_back(fmt("  Increase PTO2_TENSORMAP_POOL_SIZE (current: %" PRIu64 ").", cap));
      break;
    }
  }
  out.push_back(kRule);
}

// ensure_tensormap_capacity's backstop (pto_orchestrator.cpp).
void tensormap_banner(Runtime& rt, std::uint64_t needed, std::vector<std::string>& out) {
  std::int64_t alive_sum = 0;
  for (int r = 0; r < kNumRings; ++r) alive_sum += static_cast<std::int64_t>(rt.ring(r).tail());
  out.push_back(kRule);
  out.push_back("FATAL: TensorMap Entry Pool Deadlock Detected!");
  out.push_back(kRule);
  out.push_back("TensorMap entry pool freed no entries for ~500 ms while a task waits.");
  out.push_back(fmt("  - Pool used:   %" PRIu64 " / %" PRIu64, rt.tensormap().in_use(), rt.tensormap().capacity()));
  out.push_back(fmt("  - Needed:      %" PRIu64 " entries", needed));
  out.push_back(fmt("  - last_task_alive (sum across rings): %" PRId64, alive_sum));
  out.push_back("Diagnosis:");
  out.push_back("  No retiring task is freeing tensormap entries (last_task_alive may");
  out.push_back("  still move on rings with no registered outputs). Check TaskRing");
  out.push_back("  diagnostics for the stalled producer.");
  out.push_back("Solution:");
  out.push_back(fmt("  Increase PTO2_TENSORMAP_POOL_SIZE (current: %" PRIu64 ").", rt.tensormap().capacity()));
  out.push_back(kRule);
}

// check_scope_can_accept_task (pto_orchestrator.cpp).
void scope_deadlock_banner(Runtime& rt, int ring, std::vector<std::string>& out) {
  const Runtime::ScopeInfo& s = rt.open_scopes().back();
  Ring& g = rt.ring(ring);
  const std::uint64_t count = s.tasks.size(), window = g.window();
  out.push_back(kRule);
  out.push_back(fmt("FATAL: Scope Deadlock Detected! (ring %d)", ring));
  out.push_back(kRule);
  out.push_back(fmt("Tasks in current scope (%" PRIu64 ") >= task_window_size (%" PRIu64 ").", count, window));
  out.push_back(fmt("  scope_depth:        %d", s.depth + 1));  // scope_stack_top + 1; the root scope is top 0
  out.push_back(fmt("  ring_id:            %d", ring));
  out.push_back(fmt("  scope_task_count:   %" PRIu64, count));
  out.push_back(fmt("  active_tasks:       %" PRIu64 " / %" PRIu64, g.live(), window));
  out.push_back("Root Cause:");
  out.push_back("  Tasks within a scope hold a fanout_count reference that is only");
  out.push_back("  released at scope_end. When scope task count >= window_size,");
  out.push_back("  no slots can be reclaimed -> deadlock.");
  out.push_back("Solution:");
  out.push_back("  1. Reduce tasks per scope (use batching/unroll)");
  out.push_back(fmt("  2. Increase task window (current: %" PRIu64 ")", window));
  out.push_back("     Compile-time: PTO2_TASK_WINDOW_SIZE in pto_runtime2_types.h");
  out.push_back("     Runtime env:  PTO2_RING_TASK_WINDOW=<power-of-2>");
  out.push_back("  3. Split work across multiple scopes");
  out.push_back(kRule);
}

// submit_task / submit_dummy_task rejecting an Arg that carries an error
// (pto_orchestrator.cpp); the Arg builder refuses the tensor past the cap
// with "Too many tensor args (max N)" (pto_types.h), so it holds N.
void invalid_arg_banner(bool dummy, const Platform& p, std::vector<std::string>& out) {
  out.push_back(kRule);
  out.push_back(dummy ? "FATAL: Invalid Arg in submit_dummy_task!" : "FATAL: Invalid Arg Detected!");
  out.push_back(kRule);
  out.push_back(fmt("Error: Too many tensor args (max %d)", p.limits.max_tensor_args));
  out.push_back(fmt("  tensor_count: %d, scalar_count: %d", p.limits.max_tensor_args, 0));
  if (!dummy) out.push_back("This is a bug in the orchestration code.");
  out.push_back(kRule);
}

}  // namespace

StallSnapshot classify_stall(Chip& chip) {
  Runtime& rt = chip.runtime();
  const AicoreComplex& cores = chip.cores();
  StallSnapshot s;
  for (int r = 0; r < kNumRings; ++r) {
    Ring& g = rt.ring(r);
    for (std::uint64_t l = g.tail(); l < g.head(); ++l) {
      const Task& t = g.slot(l);
      if (t.state != TaskState::Pending) continue;
      int core = -1;
      for (int c = 0; c < cores.map().total() && core < 0; ++c)
        if (cores.running_task(c) == &t) core = c;
      if (core >= 0) {
        if (s.running++ == 0) {
          s.stuck_task_id = static_cast<std::int64_t>(t.id);
          s.stuck_core = core;
        }
      } else if (t.is_ready()) {
        ++s.ready;
      } else {
        ++s.waiting;
      }
    }
  }
  s.completed = rt.completed();
  s.orch_done = rt.orchestration_done();
  // total_tasks_ is published by on_orchestration_done (scheduler_cold_path.cpp):
  // 0 while the orchestration still runs.
  s.total = s.orch_done ? rt.total_submitted() : 0;
  const StallDetail d = classify_stall_detail(s.running, s.ready, s.waiting, s.orch_done);
  s.detail = d.detail;
  s.sub_class = d.name;
  return s;
}

std::string ring_sizes_line(const RunConfig& c) {
  if (c.runtime == RuntimeKind::HostBuildGraph)
    return "Ring buffer sizes: task_window=" + ring_array(c.task_window) + " heap=" + ring_array(c.heap);
  return "Ring buffer sizes: task_window=" + ring_array(c.task_window) + " heap=" + ring_array(c.heap) +
         " dep_pool=" + ring_array(c.dep_pool);
}

void acl_detail_lines(int rc, std::vector<std::string>& out) {
  const AclErrorInfo* a = acl_error_info(rc);
  if (!a) return;
  out.push_back(fmt("ACL error detail: %d %s - %s", rc, a->name, a->description));
  if (a->hint) out.push_back(std::string("ACL error hint: ") + a->hint + kDocs);
}

void runtime_failure_lines(int orch, int sched, std::vector<std::string>& out) {
  const int code = orch ? orch : sched;  // latched_error_code
  out.push_back(fmt("PTO2 runtime failed: orch_error_code=%d sched_error_code=%d runtime_status=%d", orch, sched, -code));
  const ErrorInfo& e = error_info(static_cast<ErrorCode>(code));
  if (code == 0 || e.code != static_cast<ErrorCode>(code) || e.description[0] == '\0') return;
  out.push_back(fmt("error detail: %s=%d %s - %s", orch ? "orch_error_code" : "sched_error_code", code, e.name,
                    e.description));
  if (e.hint[0] != '\0') out.push_back(std::string("error hint: ") + e.hint + kDocs);
}

std::vector<std::string> host_failure_lines(Chip& chip, int orch, int sched, const StallSnapshot& stall,
                                            const std::vector<std::string>& host_orch_log) {
  const RunConfig& c = chip.config();
  const bool hbg = c.runtime == RuntimeKind::HostBuildGraph;
  std::vector<std::string> out{ring_sizes_line(c)};
  if (hbg && orch) {  // host orchestration failed before launch
    out.insert(out.end(), host_orch_log.begin(), host_orch_log.end());
    runtime_failure_lines(orch, sched, out);
    // run_host_orchestration: the graph's heap bump pointer (heap_used_bytes
    // of host_build_graph's allocator: its top, nothing is reclaimed).
    out.push_back(fmt("host-orch: refusing to upload an incomplete graph after %" PRIu64 " heap bytes",
                      chip.runtime().ring(0).heap_used()));
    return out;
  }
  out.push_back(fmt("aclrtSynchronizeStreamWithTimeout (AICPU) failed: %d", kAclAicpuException));
  acl_detail_lines(kAclAicpuException, out);
  // No code latched (an AICPU assert aborted the process): runtime_status is
  // 0 and the host prints no runtime-failure lines.
  if (orch || sched) runtime_failure_lines(orch, sched, out);
  if (!hbg && sched == static_cast<int>(ErrorCode::SchedulerTimeout))
    out.push_back(fmt("PTO2 scheduler timeout sub_class=%s (detail=%d) completed=%" PRIu64 "/%" PRIu64
                      " running=%" PRIu64 " ready=%" PRIu64 " waiting=%" PRIu64 " orch_done=%d stuck_task_id=%" PRId64
                      " stuck_core=%d",
                      stall.sub_class.c_str(), stall.detail, stall.completed, stall.total, stall.running, stall.ready,
                      stall.waiting, stall.orch_done ? 1 : 0, stall.stuck_task_id, stall.stuck_core));
  return out;
}

std::vector<std::string> device_log_lines(Chip& chip, const LatchedError& e) {
  Runtime& rt = chip.runtime();
  const Platform& p = chip.platform();
  const OrchestratorThread& orch = chip.orchestrator();
  const OrchWait& w = orch.waiting();
  const SubmitProgress& sp = orch.pending_submit();
  std::vector<std::string> out;
  const int code = static_cast<int>(e.code);
  switch (e.code) {
    case ErrorCode::HeapRingDeadlock:
    case ErrorCode::FlowControlDeadlock:
    case ErrorCode::DepPoolOverflow:
    case ErrorCode::TensormapOverflow:
      if (rt.config().runtime == RuntimeKind::HostBuildGraph) {
        whole_graph_banner(e.code, rt, e.ring >= 0 ? e.ring : 0, sp.heap_bytes, sp.inserts, out);
        break;
      }
      if (w.kind != OrchWait::Kind::Space) break;
      switch (w.resource) {
        case Resource::Heap:
        case Resource::TaskWindow:
          allocator_banner(p, rt.ring(w.ring), w.resource == Resource::Heap, rt.head_pinned_by_open_scope(w.ring),
                           sp.heap_bytes, out);
          break;
        case Resource::DepPool:
          dep_pool_banner(rt.ring(w.ring), sp.wait_edges, rt.head_pinned_by_open_scope(w.ring), out);
          break;
        case Resource::FaninSpill:
          fanin_spill_banner(rt.ring(w.ring), out);
          break;
        case Resource::TensorMap:
          tensormap_banner(rt, sp.inserts, out);
          break;
        case Resource::None:
          break;
      }
      break;
    case ErrorCode::ScopeDeadlock:
      scope_deadlock_banner(rt, e.ring >= 0 ? e.ring : rt.open_scopes().back().ring, out);
      break;
    case ErrorCode::TensorWaitTimeout:
      // wait_for_tensor_ready's report_fatal, for the producer still not completed.
      // get_tensor_data / set_tensor_data: the producer not completed, or
      // (set_tensor_data) its consumers not done.
      out.push_back(fmt(w.consumers ? "FATAL(code=8): Timeout (%" PRIu64
                                      " cycles): consumers of producer (ring=%d, local=%d) not done"
                                    : "FATAL(code=8): Timeout (%" PRIu64
                                      " cycles): producer (ring=%d, local=%d) not completed",
                        p.sys_cnt(p.timeouts.tensor_wait) - p.topo.sys_cnt_base, task_ring(w.task),
                        static_cast<int>(task_local(w.task))));
      break;
    case ErrorCode::SchedulerTimeout:
      // handle_timeout_exit (scheduler_cold_path.cpp): the latching thread's
      // LOG_ERROR with the stall classified at that moment, then the
      // log_shutdown_stall_snapshot dump (watchdog_lines).
      if (e.thread >= 0) {
        const std::vector<std::string> lines = watchdog_lines(chip, e.thread, e.idle_iterations, e.time);
        out.insert(out.end(), lines.begin(), lines.end());
      }
      break;
    case ErrorCode::AicpuAssert:
      // The AICPU aborted on an assert: the device printed the assertion.
      out.push_back(e.message);
      break;
    case ErrorCode::InvalidArgs:
      // Too many tensor args: the Arg carries the builder's error. submit_task
      // and submit_dummy_task print a banner; alloc_tensors reports it.
      if (!via_report_fatal(e.code, e.message)) {
        invalid_arg_banner(orch.op_kind() == OrchOp::Kind::Dummy, p, out);
        break;
      }
      [[fallthrough]];
    default:
      // report_fatal (orch_report_fatal_v): "FATAL(code=N): message"; an
      // rt_report_fatal op's message is that line already.
      if (e.message.rfind("FATAL(code=", 0) == 0)
        out.push_back(e.message);
      else if (via_report_fatal(e.code, e.message))
        out.push_back(fmt("FATAL(code=%d): %s", code, e.message.c_str()));
      break;
  }
  return out;
}

std::string timeout_exit_line(Chip& chip, int thread, std::uint64_t idle_iterations) {
  const int idle = static_cast<int>(std::min<std::uint64_t>(idle_iterations, INT32_MAX));  // int32_t upstream
  // host_build_graph's handle_timeout_exit (host_build_graph scheduler_cold_path.cpp)
  // prints the iterations only; the tensormap runtime's adds classify_stall_reason's fields.
  if (chip.config().runtime == RuntimeKind::HostBuildGraph)
    return fmt("[STALL thread=%d idle_iterations=%d] TIMEOUT_EXIT after_idle_iterations=%d", thread, idle, idle);
  const StallSnapshot st = classify_stall(chip);
  return fmt("[STALL thread=%d idle_iterations=%d] TIMEOUT_EXIT after_idle_iterations=%d sub_class=%s "
             "completed=%" PRIu64 "/%" PRIu64 " running=%" PRIu64 " ready=%" PRIu64 " waiting=%" PRIu64
             " orch_done=%d stuck_task_id=%" PRId64 " stuck_core=%d",
             thread, idle, idle, st.sub_class.c_str(), st.completed, st.total, st.running, st.ready, st.waiting,
             st.orch_done ? 1 : 0, st.stuck_task_id, st.stuck_core);
}

std::vector<std::string> global_watchdog_lines(Chip& chip, Time at) {
  // resolve_and_dispatch's global branch: no thread owns a running task,
  // total_tasks_ > 0 (published when the orchestration is done) and
  // completed_tasks_ < total_tasks_. Otherwise no scheduler latches.
  Runtime& rt = chip.runtime();
  const std::uint64_t total = rt.orchestration_done() ? rt.total_submitted() : 0;
  if (total == 0 || rt.completed() >= total) return {};
  // The latching thread: the core-owning scheduler whose last progress is
  // the latest (the first of them on a tie); `at` is its last progress plus
  // the budget, and it latches at the end of its first idle iteration past
  // it (loop cost only: nothing is running, no core is polled).
  const SchedulerThread* latch = nullptr;
  int index = -1;
  const auto& scheds = chip.schedulers();
  for (std::size_t i = 0; i < scheds.size(); ++i) {
    const SchedulerThread& s = *scheds[i];
    if (s.resolver()) continue;
    if (!latch || s.last_progress() > latch->last_progress()) {
      latch = &s;
      index = static_cast<int>(i);
    }
  }
  if (!latch || at < latch->last_progress()) return {};
  const Time P = chip.platform().sched.loop;
  const std::uint64_t idle = P ? (at - latch->last_progress()) / P + 1 : 1;
  return watchdog_lines(chip, index, idle, at);
}

namespace {

// STALL_LOG_INTERVAL / STALL_DUMP_READY_MAX / STALL_DUMP_WAIT_MAX /
// STALL_DUMP_CORE_MAX (scheduler_types.h, both runtimes).
constexpr std::uint64_t kStallLogInterval = 480000;
constexpr int kStallDumpReadyMax = 8;
constexpr int kStallDumpWaitMax = 4;
constexpr int kStallDumpCoreMax = 8;

// The task's kernel_id[subslot]: the lane's func_id where the lane is active, else -1.
int subslot_kernel(const Task& t, int lane) {
  if (!t.kernel || !((t.active_mask >> lane) & 1u)) return -1;
  return t.kernel->lane_func_id(lane);
}

// running_subslot of a core running `t`: a MIX block's lane; a single-core
// AIC block AIC; a single-core AIV block AIV0 on either AIV core
// (scheduler_dispatch.cpp dispatches AIV with PTO2SubtaskSlot::AIV0).
int running_subslot(const CoreMap& m, const Task& t, int core) {
  if (t.shape == Shape::MIX) return m.lane_of(core);
  return m.kind(core) == CoreKind::AIC ? kLaneAic : kLaneAiv0;
}

const char* subslot_name(int lane) { return lane == kLaneAic ? "aic" : lane == kLaneAiv0 ? "aiv0" : "aiv1"; }

// format_core_status (scheduler_cold_path.cpp): a busy core's COND register
// read at `at`. ACK is the healthy case; anything else (the block's FIN not
// yet polled, or a block not yet ACKed: COND still holds the previous
// block's FIN or the idle value) gets the ANOMALY suffix with the tokens.
std::string core_status(const AicoreComplex& cores, int core, Time at) {
  const Task* t = cores.running_task(core);
  if (cores.idle(core) || !t) return fmt("core%d(idle)", core);
  const int kernel = subslot_kernel(*t, running_subslot(cores.map(), *t, core));
  const std::int64_t id = static_cast<std::int64_t>(t->id);
  const AicoreComplex::CondValue cond = cores.cond_at(core, at);
  if (!cond.fin) return fmt("core%d(busy kernel=%d task=%" PRId64 " cond_reg_state=ack)", core, kernel, id);
  return fmt("core%d(busy kernel=%d task=%" PRId64 " cond_reg_state=fin ANOMALY cond_tok=%d running_tok=%d "
             "pending_tok=%d)",
             core, kernel, id, static_cast<int>(cond.token), cores.running_token(core), cores.pending_token(core));
}

// active_sched_threads_: the core-owning threads (host_build_graph's
// resolution thread owns none and has no stall diagnostics).
std::vector<const SchedulerThread*> core_owning_threads(Chip& chip) {
  std::vector<const SchedulerThread*> threads;
  for (const auto& s : chip.schedulers())
    if (!s->resolver()) threads.push_back(s.get());
  return threads;
}

// log_stall_diagnostics (scheduler_cold_path.cpp, both runtimes) for thread
// `th` of `threads`, from the chip's state now, COND registers read at `at`.
void stall_diagnostics_lines(Chip& chip, const std::vector<const SchedulerThread*>& threads, int th,
                             std::uint64_t idle_iterations, std::uint64_t last_progress_count, Time at,
                             std::vector<std::string>& out) {
  const int idle = static_cast<int>(std::min<std::uint64_t>(idle_iterations, INT32_MAX));  // int32_t upstream
  const bool hbg = chip.config().runtime == RuntimeKind::HostBuildGraph;
  Runtime& rt = chip.runtime();
  const AicoreComplex& cores = chip.cores();
  const CoreMap& m = cores.map();
  const int nthreads = static_cast<int>(threads.size());
  const std::string prefix = fmt("[STALL thread=%d idle_iterations=%d]", th, idle);
  // Thread 0 scans the rings (TASK lines, SUMMARY).
  if (th == 0) {
    const char* fanin_name = hbg ? "fanin_met" : "fanin_refcount";
    int ready = 0, waiting = 0, running = 0;
    std::uint64_t submitted = 0;
    for (int r = 0; r < kNumRings; ++r) {
      Ring& g = rt.ring(r);
      submitted += g.head();
      for (std::uint64_t l = g.tail(); l < g.head(); ++l) {
        const Task& t = g.slot(l);
        if (t.state != TaskState::Pending) continue;
        const std::string kernels = fmt("kernels=[aic:%d aiv0:%d aiv1:%d]", subslot_kernel(t, kLaneAic),
                                        subslot_kernel(t, kLaneAiv0), subslot_kernel(t, kLaneAiv1));
        // host_build_graph recounts met/total over the raw producers (no
        // fanin_refcount); npusim's counts carry the submit's own reference.
        const std::uint32_t base = t.fanin_count - std::min<std::uint32_t>(t.fanin_count, t.fanin.size());
        const std::string fanin =
            hbg ? fmt("%s=%u/%zu", fanin_name, t.fanin_refcount - std::min(t.fanin_refcount, base), t.fanin.size())
                : fmt("%s=%u/%u", fanin_name, t.fanin_refcount, t.fanin_count);
        const std::int64_t id = static_cast<std::int64_t>(t.id);
        // RUNNING is read from the cores (running_on, 192 bytes, filled
        // while 32 remain), the owner being the first such core's thread.
        std::string on;
        int owner = -1;
        for (int c = 0; c < m.total() && on.size() + 32 < 192; ++c) {
          if (cores.running_task(c) != &t) continue;
          if (owner < 0) owner = m.thread_of(c, nthreads);
          on += fmt("%score=%d(%s)", on.empty() ? "" : " ", c, subslot_name(running_subslot(m, t, c)));
        }
        // The counts go on past the caps; the lines stop at them.
        if (owner >= 0) {
          if (++running > kStallDumpReadyMax) continue;
          out.push_back(fmt("%s TASK ring=%d task_id=%" PRId64 " state=RUNNING %s %s running_on=[owner_thread=%d cores=[%s]]",
                            prefix.c_str(), r, id, fanin.c_str(), kernels.c_str(), owner, on.c_str()));
        } else if (t.fanin_refcount >= t.fanin_count) {
          if (++ready > kStallDumpReadyMax) continue;
          out.push_back(fmt("%s TASK ring=%d task_id=%" PRId64 " state=READY   %s %s", prefix.c_str(), r, id,
                            fanin.c_str(), kernels.c_str()));
        } else {
          if (++waiting > kStallDumpWaitMax) continue;
          out.push_back(fmt("%s TASK ring=%d task_id=%" PRId64 " state=WAIT    %s %s missing_deps=%d", prefix.c_str(), r,
                            id, fanin.c_str(), kernels.c_str(),
                            static_cast<int>(t.fanin_count) - static_cast<int>(t.fanin_refcount)));
        }
      }
    }
    // task_count: total_tasks_, published when the orchestration is done.
    const std::uint64_t total = rt.orchestration_done() && rt.total_submitted() > 0 ? rt.total_submitted() : submitted;
    out.push_back(fmt("%s SUMMARY completed=%" PRIu64 "/%" PRIu64 " last_progress_iteration=%" PRIu64
                      " scan_ready=%d scan_waiting=%d scan_running=%d",
                      prefix.c_str(), rt.completed(), total, last_progress_count, ready, waiting, running));
  }
  // Every thread: a CLUSTER line per owned cluster, the first 8 (cluster_id
  // = local index * active_sched_threads_ + thread: the cluster's own index).
  const std::vector<int>& owned = threads[static_cast<std::size_t>(th)]->clusters();
  for (std::size_t k = 0; k < owned.size() && k < static_cast<std::size_t>(kStallDumpCoreMax); ++k) {
    const int ci = owned[k];
    out.push_back(fmt("%s CLUSTER cluster_id=%d aic=%s aiv0=%s aiv1=%s", prefix.c_str(), ci,
                      core_status(cores, m.aic(ci), at).c_str(), core_status(cores, m.aiv0(ci), at).c_str(),
                      core_status(cores, m.aiv1(ci), at).c_str()));
  }
}

// Whether thread `i` of `threads` prints a stall dump: thread 0 always (it
// scans the rings), a thread past 0 only for the clusters it owns (the
// orchestrator's, turned scheduler, owns none and prints nothing).
bool prints_dump(const std::vector<const SchedulerThread*>& threads, std::size_t i) {
  return i == 0 || !threads[i]->clusters().empty();
}

// One periodic dump: thread `thread` at its idle iteration `count`, ending at `time`.
struct PeriodicDump {
  Time time;
  int thread;
  std::uint64_t count;
};

// The periodic dumps printed before the latch (resolve_and_dispatch: every
// STALL_LOG_INTERVAL idle iterations of a thread, log_stall_diagnostics with
// its own count): for each core-owning thread, each multiple of the interval
// up to its count at `at` (the latching thread: `latch_idle`), timed on the
// thread's idle grid; in time order, the lower thread first on a tie.
std::vector<PeriodicDump> periodic_dumps(const std::vector<const SchedulerThread*>& threads, const SchedulerThread* latch,
                                         std::uint64_t latch_idle, Time at) {
  std::vector<PeriodicDump> dumps;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (!prints_dump(threads, i)) continue;
    const SchedulerThread::IdleGrid& g = threads[i]->idle_grid();
    std::uint64_t n = g.count;
    if (threads[i] == latch)
      n = latch_idle;
    else if (g.period > 0 && at >= g.end)
      n += (at - g.end) / g.period;
    for (std::uint64_t k = kStallLogInterval; k <= n; k += kStallLogInterval) {
      // Iteration k ends (k - count) periods from the grid's iteration.
      const Time t = k >= g.count ? g.end + (k - g.count) * g.period : g.end - std::min(g.end, (g.count - k) * g.period);
      dumps.push_back(PeriodicDump{std::min(t, at), static_cast<int>(i), k});
    }
  }
  std::stable_sort(dumps.begin(), dumps.end(),
                   [](const PeriodicDump& a, const PeriodicDump& b) { return a.time < b.time; });
  return dumps;
}

}  // namespace

std::vector<std::string> watchdog_lines(Chip& chip, int thread, std::uint64_t idle_iterations, Time at) {
  std::vector<std::string> out;
  const auto& scheds = chip.schedulers();
  const SchedulerThread* latch =
      thread >= 0 && static_cast<std::size_t>(thread) < scheds.size() ? scheds[thread].get() : nullptr;
  periodic_dump_lines(chip, latch, idle_iterations, at, out);
  // handle_timeout_exit: its TIMEOUT_EXIT line, then (the first fatal wins the
  // emergency shutdown) log_shutdown_stall_snapshot with the trigger's counts.
  out.push_back(timeout_exit_line(chip, thread, idle_iterations));
  stall_snapshot_lines(chip, thread, idle_iterations, latch ? latch->last_progress_count() : 0, at, out);
  return out;
}

void periodic_dump_lines(Chip& chip, const SchedulerThread* latch, std::uint64_t latch_idle, Time at,
                         std::vector<std::string>& out) {
  const std::vector<const SchedulerThread*> threads = core_owning_threads(chip);
  const std::vector<PeriodicDump> dumps = periodic_dumps(threads, latch, latch_idle, at);
  // Capped as a round at each end: the first and the last dump of as many
  // dumps as there are threads that print, the ones between counted on one line.
  std::size_t keep = 0;
  for (std::size_t i = 0; i < threads.size(); ++i) keep += prints_dump(threads, i);
  for (std::size_t d = 0; d < dumps.size(); ++d) {
    if (dumps.size() > 2 * keep && d == keep) {
      out.push_back(fmt("[npusim] ... %zu more periodic stall dumps (every %" PRIu64
                        " idle iterations of each scheduler thread) not shown",
                        dumps.size() - 2 * keep, kStallLogInterval));
      d = dumps.size() - keep;
    }
    const PeriodicDump& p = dumps[d];
    stall_diagnostics_lines(chip, threads, p.thread, p.count, threads[static_cast<std::size_t>(p.thread)]->last_progress_count(),
                            at, out);
  }
}

void stall_snapshot_lines(Chip& chip, int trigger, std::uint64_t idle_iterations, std::uint64_t last_progress_count,
                          Time at, std::vector<std::string>& out) {
  const int idle = static_cast<int>(std::min<std::uint64_t>(idle_iterations, INT32_MAX));  // int32_t upstream
  out.push_back(fmt("[SHUTDOWN_SNAPSHOT trigger_thread=%d reason=scheduler_timeout idle_iterations=%d] "
                    "dumping all scheduler threads before emergency shutdown",
                    trigger, idle));
  // log_stall_diagnostics for each of the active_sched_threads_ threads,
  // with the trigger's counts.
  const std::vector<const SchedulerThread*> threads = core_owning_threads(chip);
  for (int th = 0; th < static_cast<int>(threads.size()); ++th)
    stall_diagnostics_lines(chip, threads, th, idle_iterations, last_progress_count, at, out);
}

std::vector<std::string> rtmalloc_failure_lines(std::uint64_t size) {
  std::vector<std::string> out{fmt("rtMalloc failed: %d (size=%" PRIu64 ")", kAclMemoryAllocation, size)};
  acl_detail_lines(kAclMemoryAllocation, out);
  out.push_back("Failed to setup pooled static arena");
  return out;
}

}  // namespace npusim::diagnose
