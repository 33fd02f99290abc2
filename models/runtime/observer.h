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
  virtual void on_orch_submit(const OrchSubmitRecord&) {}
  // A core spent [start, end) waiting on something outside it inside a block
  // (a doorbell, a cross-core slot, a barrier, a contended GM line).
  virtual void on_core_wait(int /*core*/, const Task&, int /*block*/, WaitKind, Time /*start*/, Time /*end*/) {}
  // A load or store of the task met the L2: `lines` L2 lines, `hits` of them
  // resident, `hbm_bytes` moved over the HBM link for it (fills, write-backs).
  virtual void on_l2_access(const Task&, std::uint64_t /*lines*/, std::uint64_t /*hits*/, std::uint64_t /*hbm_bytes*/) {}
};

// Forwards every event to several observers, in order.
class ObserverFanout : public SimObserver {
 public:
  void add(SimObserver* o) { if (o) sinks_.push_back(o); }
  bool empty() const { return sinks_.empty(); }

  void on_submitted(const Task& t, const SubmitRequest& q, const std::vector<EdgeInfo>& e) override {
    for (auto* s : sinks_) s->on_submitted(t, q, e);
  }
  void on_ready(Task& t) override { for (auto* s : sinks_) s->on_ready(t); }
  void on_early_candidate(Task& t) override { for (auto* s : sinks_) s->on_early_candidate(t); }
  void on_completed(Task& t) override { for (auto* s : sinks_) s->on_completed(t); }
  void on_retired(Task& t) override { for (auto* s : sinks_) s->on_retired(t); }
  void on_ring_progress(int r) override { for (auto* s : sinks_) s->on_ring_progress(r); }
  void on_scope_sample(const ScopeSample& x) override { for (auto* s : sinks_) s->on_scope_sample(x); }
  void on_error(const LatchedError& e) override { for (auto* s : sinks_) s->on_error(e); }
  void on_warning(const std::string& k, const std::string& m) override { for (auto* s : sinks_) s->on_warning(k, m); }
  void on_block_finished(const Task& t, const BlockRecord& b) override { for (auto* s : sinks_) s->on_block_finished(t, b); }
  void on_sched_phase(const SchedPhaseRecord& r) override { for (auto* s : sinks_) s->on_sched_phase(r); }
  bool reads_sched_detail() const override {
    for (auto* s : sinks_)
      if (s->reads_sched_detail()) return true;
    return false;
  }
  void on_orch_submit(const OrchSubmitRecord& r) override { for (auto* s : sinks_) s->on_orch_submit(r); }
  void on_core_wait(int c, const Task& t, int b, WaitKind k, Time s0, Time s1) override {
    for (auto* s : sinks_) s->on_core_wait(c, t, b, k, s0, s1);
  }
  void on_l2_access(const Task& t, std::uint64_t n, std::uint64_t h, std::uint64_t b) override {
    for (auto* s : sinks_) s->on_l2_access(t, n, h, b);
  }

 private:
  std::vector<SimObserver*> sinks_;
};

}  // namespace npusim
