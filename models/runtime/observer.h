// What the models report as they run: the runtime's graph events (through
// RuntimeHooks) and the timing events of threads and cores. Output writers
// (sim/record) implement this; a writer that is off is simply not attached.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/common/time.h"
#include "models/runtime/runtime.h"
#include "models/runtime/task.h"

namespace npusim {

// Scheduler phase kinds, as the runtime's chip-swimlane records name them.
enum class SchedPhase : std::uint8_t {
  Complete, AsyncPoll, Dispatch, Release, Dummy, EarlyDispatch, Drain, DummyTask, PredicatedSkip,
  Resolve, DrainPrepare, DrainPublish
};

inline const char* sched_phase_name(SchedPhase k) {
  switch (k) {
    case SchedPhase::Complete: return "complete";
    case SchedPhase::AsyncPoll: return "async_poll";
    case SchedPhase::Dispatch: return "dispatch";
    case SchedPhase::Release: return "release";
    case SchedPhase::Dummy: return "dummy";
    case SchedPhase::EarlyDispatch: return "early_dispatch";
    case SchedPhase::Drain: return "drain";
    case SchedPhase::DummyTask: return "dummy_task";
    case SchedPhase::PredicatedSkip: return "predicated_skip";
    case SchedPhase::Resolve: return "resolve";
    case SchedPhase::DrainPrepare: return "drain_prepare";
    case SchedPhase::DrainPublish: return "drain_publish";
  }
  return "?";
}

// What a core waited for inside a block.
enum class WaitKind : std::uint8_t { Doorbell, Push, Pop, Syncall, Memory };

inline const char* wait_kind_name(WaitKind k) {
  switch (k) {
    case WaitKind::Doorbell: return "doorbell";
    case WaitKind::Push: return "push";
    case WaitKind::Pop: return "pop";
    case WaitKind::Syncall: return "syncall";
    case WaitKind::Memory: return "memory";
  }
  return "?";
}

inline WaitKind wait_kind_of(PhaseKind k) {
  switch (k) {
    case PhaseKind::Push: return WaitKind::Push;
    case PhaseKind::Pop: return WaitKind::Pop;
    case PhaseKind::Syncall: return WaitKind::Syncall;
    default: return WaitKind::Memory;
  }
}

// One record of a scheduler thread's phase, as the runtime's collector
// stores it (chip_swimlane_collector_aicpu.cpp): the ready-queue depth
// snapshots are those of the complete, dummy and dispatch records; every
// other kind carries zeros.
struct SchedPhaseRecord {
  int thread = 0;
  SchedPhase kind = SchedPhase::Complete;
  Time start = 0, end = 0;
  std::uint64_t loop_iter = 0;
  int tasks_processed = 0;
  std::uint64_t pop_hit = 0, pop_miss = 0;  // dispatch only: pops since the last dispatch record
  TaskId task_id = kNoTask;                 // dummy_task / predicated_skip only
  std::array<int, 3> shared_at_start{};
  std::array<int, 3> shared_at_end{};
};

struct OrchSubmitRecord {
  std::uint64_t submit_idx = 0;
  TaskId task_id = kNoTask;
  TaskKind kind = TaskKind::Kernel;
  Time start = 0, end = 0;
};

// The hooks an observer reads, one bit each (SimObserver::hooks): the
// fan-out calls an observer only for the hooks it lists.
namespace hook {
enum : std::uint32_t {
  Submitted = 1u << 0, Ready = 1u << 1, EarlyCandidate = 1u << 2, Completed = 1u << 3, Retired = 1u << 4,
  RingProgress = 1u << 5, ScopeSample = 1u << 6, Error = 1u << 7, Warning = 1u << 8, BlockFinished = 1u << 9,
  SchedPhase = 1u << 10, OrchSubmit = 1u << 11, CoreWait = 1u << 12, L2Access = 1u << 13,
  All = (1u << 14) - 1
};
}  // namespace hook

class SimObserver : public RuntimeHooks {
 public:
  // A block (one sub-task on one core) whose FIN the AICPU observed.
  virtual void on_block_finished(const Task&, const BlockRecord&) {}
  virtual void on_sched_phase(const SchedPhaseRecord&) {}
  // Whether this observer reads a phase record's detail: the dispatch
  // records' pop counts (pop_hit, pop_miss), the ready-queue snapshots
  // (shared_at_start, shared_at_end) and the loop-exit dispatch record that
  // only carries the last pop counts. Asked once, when the scheduler threads
  // start; an observer attached later is not asked. With no reader the
  // scheduler does not count its pops (an idle iteration's empty pops were
  // a sixth of its own work per task with every output off) and leaves
  // those fields zero; every other field and record is as before. An
  // observer that overrides on_sched_phase and reads any of them says so.
  virtual bool reads_sched_detail() const { return false; }
  // The hooks this observer overrides (hook:: bits), asked once when it is
  // added to a fan-out, which then calls it for those only. The default is
  // every hook; an observer that names its hooks must name each one it
  // overrides (the observers that stay on with every output off do: most
  // events of a run are read by none of them, and each was a virtual call
  // per observer).
  virtual std::uint32_t hooks() const { return hook::All; }
  virtual void on_orch_submit(const OrchSubmitRecord&) {}
  // A core spent [start, end) waiting on something outside it inside a block
  // (a doorbell, a cross-core slot, a barrier, a contended GM line).
  virtual void on_core_wait(int /*core*/, const Task&, int /*block*/, WaitKind, Time /*start*/, Time /*end*/) {}
  // A load or store of the task met the L2: `lines` L2 lines, `hits` of them
  // resident, `hbm_bytes` moved over the HBM link for it (fills, write-backs).
  virtual void on_l2_access(const Task&, std::uint64_t /*lines*/, std::uint64_t /*hits*/, std::uint64_t /*hbm_bytes*/) {}
};

// Forwards every event to several observers, in the order they were added:
// each hook to the observers that read it (their `hooks()`, or the mask
// given to `add`), so an event no observer reads costs one empty-list test.
class ObserverFanout : public SimObserver {
 public:
  void add(SimObserver* o) { if (o) add(o, o->hooks()); }
  // `o` for the hooks in `mask` only: for an observer whose class does not
  // name its hooks itself.
  void add(SimObserver* o, std::uint32_t mask) {
    if (!o) return;
    sinks_.push_back(o);
    for (std::size_t k = 0; k < kHooks; ++k)
      if (mask & (1u << k)) {
        by_hook_[k].push_back(o);
        only_[k] = by_hook_[k].size() == 1 ? o : nullptr;
      }
  }
  bool empty() const { return sinks_.empty(); }

  // Each hook through fan() (below): with the list's loop inline, the test
  // paid the loop's register saves, ~20 instructions for an event no
  // observer reads.
  void on_submitted(const Task& t, const SubmitRequest& q, const std::vector<EdgeInfo>& e) override {
    fan(hook::Submitted, [&](SimObserver* s) { s->on_submitted(t, q, e); });
  }
  void on_ready(Task& t) override {
    fan(hook::Ready, [&](SimObserver* s) { s->on_ready(t); });
  }
  void on_early_candidate(Task& t) override {
    fan(hook::EarlyCandidate, [&](SimObserver* s) { s->on_early_candidate(t); });
  }
  void on_completed(Task& t) override {
    fan(hook::Completed, [&](SimObserver* s) { s->on_completed(t); });
  }
  void on_retired(Task& t) override {
    fan(hook::Retired, [&](SimObserver* s) { s->on_retired(t); });
  }
  void on_ring_progress(int r) override {
    fan(hook::RingProgress, [&](SimObserver* s) { s->on_ring_progress(r); });
  }
  void on_scope_sample(const ScopeSample& x) override {
    fan(hook::ScopeSample, [&](SimObserver* s) { s->on_scope_sample(x); });
  }
  void on_error(const LatchedError& e) override {
    fan(hook::Error, [&](SimObserver* s) { s->on_error(e); });
  }
  void on_warning(const std::string& k, const std::string& m) override {
    fan(hook::Warning, [&](SimObserver* s) { s->on_warning(k, m); });
  }
  void on_block_finished(const Task& t, const BlockRecord& b) override {
    fan(hook::BlockFinished, [&](SimObserver* s) { s->on_block_finished(t, b); });
  }
  void on_sched_phase(const SchedPhaseRecord& r) override {
    fan(hook::SchedPhase, [&](SimObserver* s) { s->on_sched_phase(r); });
  }
  bool reads_sched_detail() const override {
    for (auto* s : sinks_)
      if (s->reads_sched_detail()) return true;
    return false;
  }
  bool reads_edges() const override {
    for (auto* s : sinks_)
      if (s->reads_edges()) return true;
    return false;
  }
  void on_orch_submit(const OrchSubmitRecord& r) override {
    fan(hook::OrchSubmit, [&](SimObserver* s) { s->on_orch_submit(r); });
  }
  void on_core_wait(int c, const Task& t, int b, WaitKind k, Time s0, Time s1) override {
    fan(hook::CoreWait, [&](SimObserver* s) { s->on_core_wait(c, t, b, k, s0, s1); });
  }
  void on_l2_access(const Task& t, std::uint64_t n, std::uint64_t h, std::uint64_t b) override {
    fan(hook::L2Access, [&](SimObserver* s) { s->on_l2_access(t, n, h, b); });
  }

 private:
  static constexpr std::size_t kHooks = 14;
  static_assert(hook::All == (1u << kHooks) - 1);
  static constexpr std::size_t index(std::uint32_t bit) { return static_cast<std::size_t>(__builtin_ctz(bit)); }
  bool has(std::uint32_t bit) const { return !by_hook_[index(bit)].empty(); }
  SimObserver* only(std::uint32_t bit) const { return only_[index(bit)]; }
  // The calls take the lambda (its captured references) by value: in
  // registers, so the one-observer path builds nothing on the stack.
  template <class Call>
  __attribute__((noinline)) void each(std::uint32_t bit, Call call) {
    for (SimObserver* s : by_hook_[index(bit)]) call(s);
  }
  // One hook's event: its one observer called straight away (a tail call),
  // or the test of a longer list inline and its calls out of line.
  template <class Call>
  __attribute__((always_inline)) void fan(std::uint32_t bit, Call call) {
    if (SimObserver* s = only(bit)) return call(s);
    if (has(bit)) each(bit, call);
  }
  std::vector<SimObserver*> sinks_;
  std::array<std::vector<SimObserver*>, kHooks> by_hook_;
  std::array<SimObserver*, kHooks> only_{};  // the hook's one observer, when it has exactly one
};

}  // namespace npusim
