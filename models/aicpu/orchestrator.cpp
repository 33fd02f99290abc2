#include "models/aicpu/orchestrator.h"

#include <algorithm>

#include "models/common/errors.h"

namespace npusim {

namespace {
// The orchestrator's stack. The trace interpreter runs on this
// thread and compiles each top-level op of a streamed program when it
// reaches it (docs/trace-format.md, "How a trace is loaded"): a recursion of
// a few frames per nesting level of the op, bounded by the JSON nesting limit
// (256 levels: 126 nested scopes at most). SystemC's default, 320 KB, holds
// that in an optimised build but not under AddressSanitizer, whose frames are
// several times larger (65 nested scopes overflowed it). Untouched pages of
// the stack cost no memory.
constexpr std::size_t kOrchestratorStackBytes = std::size_t(8) << 20;
}  // namespace

OrchestratorThread::OrchestratorThread(sc_core::sc_module_name name, AicpuClock& clock, Runtime& rt,
                                       OpSource& source, SimObserver& obs, const Platform& platform,
                                       bool host_build_graph)
    : sc_core::sc_module(name), clock_(clock),
      clock_id_(clock.add(&OrchestratorThread::body, this, kOrchestratorStackBytes)), rt_(rt), source_(source),
      obs_(obs), platform_(platform), costs_(host_build_graph ? OrchCosts{} : platform.orch) {
}

void OrchestratorThread::sync(Time t) {
  if (t > now()) clock_.sleep(clock_id_, t, false);
}

// Until time t or a progress notification, whichever comes first.
void OrchestratorThread::sleep_or_progress(Time t) { clock_.sleep(clock_id_, t, true); }

void OrchestratorThread::fatal(ErrorCode code, const std::string& message, int ring) {
  rt_.latch_error(code, message, now(), ring);
}

void OrchestratorThread::body(void* self) { static_cast<OrchestratorThread*>(self)->orchestrate(); }

void OrchestratorThread::orchestrate() {
  sync(costs_.start);
  start_ = now();
  Time t = start_;
  rt_.begin_orchestration();
  OrchOp& op = op_;
  bool ok = true;
  try {
    while (ok && !rt_.has_orch_error() && source_.next(op)) {
      // The op's path (op.path_text()) stays until the next op is complete
      // (sources write it last), so it is read in place: no copy per op.
      op_kind_ = op.kind;
      switch (op.kind) {
        case OrchOp::Kind::ScopeBegin:
          t += costs_.scope_begin;
          sync(t);
          ok = rt_.scope_begin(op.mode, op.site, now());
          break;
        case OrchOp::Kind::ScopeEnd: {
          sync(t);
          std::size_t n = rt_.scope_end();
          t += static_cast<Time>(n) * costs_.scope_end_task;
          break;
        }
        case OrchOp::Kind::Alloc:
        case OrchOp::Kind::Submit:
        case OrchOp::Kind::Dummy:
          ok = do_submit(op, t);
          break;
        case OrchOp::Kind::Read:
        case OrchOp::Kind::Write:
          // Under host_build_graph a read or set is refused before it gets
          // here (sim/diagnose/checks.h StaticRules, run and check alike).
          ok = do_access(op, t);
          break;
        case OrchOp::Kind::Fatal:
          // rt_report_fatal (pto_orchestrator.cpp, orch_report_fatal_v): latched
          // at once; the device log line is "FATAL(code=N): message".
          sync(t);
          fatal(static_cast<ErrorCode>(op.fatal_code),
                "FATAL(code=" + std::to_string(op.fatal_code) + ")" +
                    (op.fatal_message.empty() ? std::string() : ": " + op.fatal_message));
          ok = false;
          break;
      }
    }
  } catch (const InputError&) {
    input_error_ = std::current_exception();
  }
  if (!input_error_ && !rt_.has_orch_error()) {
    sync(t);
    // The root scope closes when the orchestration function returns.
    std::size_t n = rt_.open_scopes().empty() ? 0 : rt_.open_scopes().front().tasks.size();
    rt_.end_orchestration();
    t += static_cast<Time>(n) * costs_.scope_end_task;
    sync(t);
    done_ = true;
  }
  end_ = now();
  if (!rt_.has_orch_error()) wait_ = OrchWait{};  // on a fatal, keep what it was waiting for
  if (on_finish_) on_finish_();
}

template <class Stage>
bool OrchestratorThread::run_stage(Stage&& stage, const std::string& path) {
  SubmitStatus st = stage();
  if (st.kind == SubmitStatus::Kind::Blocked && !wait_for_space(stage, st, path)) return false;
  return st.kind != SubmitStatus::Kind::Fatal && !rt_.has_orch_error();
}

bool OrchestratorThread::do_submit(const OrchOp& op, Time& t) {
  sync(t);
  const Time t0 = now();
  const bool alloc = op.kind == OrchOp::Kind::Alloc;
  if (alloc) {  // alloc_tensors: a kernel-less task whose args are its outputs
    alloc_req_.args = op.alloc_outputs;
    alloc_req_.path_ref = &op.path_text();
  }
  const SubmitRequest& req = alloc ? alloc_req_ : op.submit;
  sp_.reset();
  // Slot and heap, fanin discovery, fanin spill and tensormap room.
  auto prepare = [&] { return rt_.submit_prepare(req, sp_, alloc, now()); };
  if (!run_stage(prepare, op.path_text())) return false;
  // The submit's own work (§9): alloc, argument copy, lookups, wiring, inserts.
  Time cost = (alloc ? costs_.alloc_tensors : costs_.submit_base) +
              static_cast<Time>(sp_.work.args) * costs_.submit_arg +
              static_cast<Time>(sp_.work.lookups) * costs_.lookup +
              static_cast<Time>(sp_.work.lookup_entries) * costs_.lookup_entry +
              static_cast<Time>(sp_.wait_edges) * costs_.edge +
              static_cast<Time>(sp_.inserts) * costs_.insert;
  t = now() + cost;
  sync(t);
  // The wiring's dep-pool entries, reserved as the runtime does at the end of
  // the submit (orch_wire_live_fanin_task).
  auto wire = [&] { return rt_.submit_wire(sp_); };
  if (!run_stage(wire, op.path_text())) return false;
  rt_.submit_commit(req, sp_, now());
  t = std::max(t, now());
  Task& task = *sp_.task;
  // Tasks ready at submit are pushed by the orchestrator.
  t += sp_.work.ready_cost(platform_.sched);
  task.submit_start = t0;
  task.submit_end = t;
  OrchSubmitRecord rec;
  rec.submit_idx = task.submit_idx;
  rec.task_id = task.id;
  rec.kind = task.kind;
  rec.start = t0;
  rec.end = t;
  obs_.on_orch_submit(rec);
  if (!source_.deliver_task_args(task.id, task.args, task.arg_tags)) {
    rt_.outputs_of(task, outputs_);
    source_.deliver_task(task.id, outputs_);
  }
  return true;
}

namespace {
ErrorCode code_of(Resource r) {
  switch (r) {
    case Resource::Heap: return ErrorCode::HeapRingDeadlock;
    case Resource::TaskWindow: return ErrorCode::FlowControlDeadlock;
    case Resource::DepPool:
    case Resource::FaninSpill: return ErrorCode::DepPoolOverflow;
    case Resource::TensorMap: return ErrorCode::TensormapOverflow;
    case Resource::None: break;
  }
  return ErrorCode::None;
}

std::string banner(Resource r, int ring) {
  switch (r) {
    case Resource::Heap: return "FATAL: Task Allocator Deadlock - Heap Exhausted! ring=" + std::to_string(ring);
    case Resource::TaskWindow: return "FATAL: Task Allocator Deadlock - Task Ring Full! ring=" + std::to_string(ring);
    case Resource::DepPool: return "FATAL: Dependency Pool Deadlock Detected!";
    case Resource::FaninSpill: return "FATAL: Fanin Spill Pool Deadlock Detected!";
    case Resource::TensorMap: return "FATAL: TensorMap Entry Pool Deadlock Detected!";
    case Resource::None: break;
  }
  return "FATAL";
}
const char* const kStructural =
    " Provable head-of-line deadlock: the ring's reclaim head is pinned by an open scope";
}  // namespace

std::string OrchestratorThread::backstop_text() const {
  return " No reclaim progress for ~" +
         std::to_string(platform_.timeouts.alloc_no_progress / 1000000000ull) + " ms";
}

bool OrchestratorThread::wait_for_space(const std::function<SubmitStatus()>& retry, SubmitStatus st,
                                        const std::string& path) {
  const Time spin = costs_.spin;
  const Time check_period = std::max<Time>(1, 1024 * spin);  // structural test every 1024 spins
  const Time tb = now();
  auto marker = [&]() -> std::uint64_t {
    return st.blocked == Resource::TensorMap ? rt_.tensormap().freed_total()
                                             : rt_.ring(st.ring).tail();
  };
  std::uint64_t mark = marker();
  Time last_progress = tb;
  Time next_check = tb + check_period;
  wait_ = OrchWait{OrchWait::Kind::Space, st.blocked, st.ring, tb, path, kNoTask};
  // The structural test: the ring's reclaim head is pinned by a scope that is
  // still open. The task allocator and the dep pool run it
  // (PTO2TaskAllocator::alloc, PTO2DepListPool::ensure_space); the fanin spill
  // pool and the global tensormap pool have only the backstop
  // (PTO2FaninPool::ensure_space, ensure_tensormap_capacity).
  auto structural = [&] {
    return (st.blocked == Resource::TaskWindow || st.blocked == Resource::Heap ||
            st.blocked == Resource::DepPool) &&
           rt_.head_pinned_by_open_scope(st.ring);
  };
  // The backstop's clock starts at the first 1024-spin check without
  // progress and is read at every later one: it fires at the first check at
  // least `alloc_no_progress` after that anchor.
  const Time timeout = platform_.timeouts.alloc_no_progress;
  const Time backstop = check_period * (1 + (timeout + check_period - 1) / check_period);
  while (st.kind == SubmitStatus::Kind::Blocked) {
    const Time deadline = last_progress + backstop;
    // Nothing else is left to happen in the whole device: no reclaim can ever
    // come, the deadlock is provable now. Skip to the moment the device's
    // detector fires (the structural test, or else the backstop).
    if (!clock_.others_pending(clock_id_)) {
      const bool pinned = structural();
      sync(pinned ? next_check : deadline);
      fatal(code_of(st.blocked), banner(st.blocked, st.ring) + (pinned ? kStructural : backstop_text()), st.ring);
      return false;
    }
    const Time until = std::min(next_check, deadline);
    if (until > now()) sleep_or_progress(until);
    // The spin loop retries once per spin: progress is noticed on the next spin.
    if (spin > 0) {
      Time k = (now() - tb + spin - 1) / spin;
      sync(tb + k * spin);
    }
    st = retry();
    if (st.kind == SubmitStatus::Kind::Fatal) return false;
    if (st.kind == SubmitStatus::Kind::Done) break;
    wait_.resource = st.blocked;
    wait_.ring = st.ring;
    std::uint64_t m = marker();
    if (m != mark) {  // reclaim progressed: the spin counters start over
      mark = m;
      last_progress = now();
      next_check = last_progress + check_period;
      continue;
    }
    if (now() >= next_check) {
      if (structural()) {
        fatal(code_of(st.blocked), banner(st.blocked, st.ring) + kStructural, st.ring);
        return false;
      }
      next_check += check_period;
    }
    if (now() >= deadline) {
      fatal(code_of(st.blocked), banner(st.blocked, st.ring) + backstop_text(), st.ring);
      return false;
    }
  }
  wait_ = OrchWait{};
  return true;
}

// get_tensor_data (Read) and set_tensor_data (Write), pto_runtime2.cpp: spin
// until the tensor is ready, then one access, charged as one more spin.
bool OrchestratorThread::do_access(const OrchOp& op, Time& t) {
  sync(t);
  // Both wait for every producer of the tensor, one after the other: its
  // creator, then each writer the tensormap holds for it; a write also waits,
  // per producer, until its consumers are done (pto_runtime2.cpp
  // wait_for_tensor_ready, wait_for_consumers). Each wait spins on the slot
  // state and reads the clock every 1024 spins; it fails at the first such
  // check more than the timeout after that wait began.
  const bool write = op.kind == OrchOp::Kind::Write;
  rt_.read_producers(op.read_tensor, read_producers_);
  const Time poll = costs_.read_poll;
  const Time check_period = std::max<Time>(1, 1024 * poll);
  const Time timeout = platform_.timeouts.tensor_wait;
  const Time fires_after = check_period * (timeout / check_period + 1);
  for (TaskId producer : read_producers_) {
    for (int phase = 0; phase < (write ? 2 : 1); ++phase) {
      auto done = [&] { return phase == 0 ? rt_.producer_done(producer) : rt_.consumers_done(producer); };
      if (done()) continue;
      const Time t0 = now();
      const Time deadline = t0 + fires_after;
      wait_ = OrchWait{OrchWait::Kind::Read, Resource::None, 0, t0, op.path_text(), producer, phase == 1};
      while (!done()) {
        // An orchestrator fatal latched elsewhere ends the wait; a scheduler's
        // does not (wait_for_tensor_ready reads orch_error_code only).
        if (rt_.has_orch_error()) return false;
        if (now() >= deadline) {
          fatal(ErrorCode::TensorWaitTimeout, access_timeout_text(write, phase == 1, producer));
          return false;
        }
        sleep_or_progress(deadline);
        if (poll > 0) {
          Time k = (now() - t0 + poll - 1) / poll;
          sync(t0 + k * poll);
        }
      }
    }
  }
  wait_ = OrchWait{};
  t = now() + poll;
  sync(t);
  if (write)
    rt_.data().set(op.read_tensor.buffer, op.read_element, op.write_value);
  else
    source_.deliver_value(rt_.read(op.read_tensor, op.read_element));
  return true;
}

std::string OrchestratorThread::access_timeout_text(bool write, bool consumers, TaskId producer) const {
  return std::string("FATAL(code=8): ") + (write ? "set_tensor_data" : "get_tensor_data") + " timed out after " +
         std::to_string(platform_.timeouts.tensor_wait / 1000000000ull) + " ms waiting for " +
         (consumers ? "the consumers of task " : "task ") + task_display(producer);
}

}  // namespace npusim
