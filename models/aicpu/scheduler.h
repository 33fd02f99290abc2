// One AICPU scheduler thread (SchedulerContext::resolve_and_dispatch, simpler's
// tensormap_and_ringbuffer scheduler_dispatch.cpp).
//
// The loop is modelled iteration by iteration with its real order (complete:
// serial COND polls of the running cores; drain; dummy; dispatch from the
// ready queues with the placement order of §5.6; early dispatch of gated
// blocks; release on idle iterations), each step charged from the platform's
// costs. The thread keeps local time and synchronises with the simulation
// only before it reads or changes shared state. Idle iterations are not
// simulated one by one: the thread computes the first iteration in which a
// poll would see something new, or waits for a wake-up (a task made ready,
// an early candidate, a drain, orchestration done, an error), and resumes on
// its iteration grid as if it had spun all along.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include <systemc>

#include "models/aicore/aicore.h"
#include "models/aicpu/aicpu_clock.h"
#include "models/common/platform.h"
#include "models/runtime/observer.h"
#include "models/runtime/runtime.h"

namespace npusim {

class SchedulerThread;

// A global sync-start drain in progress (scheduler_completion.cpp
// handle_drain_mode): every thread stops placing work; once all have
// acknowledged and the machine has enough idle cores of the cohort's shape,
// the coordinator (thread 0) lets every thread stage the cohort on its own
// cores, and reopens the gate when all have.
struct Drain {
  bool active = false;
  Task* task = nullptr;
  std::vector<char> acked;   // per thread: stopped placing
  Time since = 0;
  bool go = false;           // drain_stage_go: capacity found, staging released
  std::vector<char> staged;  // per thread: drain_stage_done_mask
  // A gated drain (an early sync-start candidate's, owns_early_sync_drain):
  // the capacity counts pending slots too, every block is staged gated, and
  // the running-slot cores staged (drain_running_staged) seed the rendezvous.
  bool gated = false;
  int running_staged = 0;
};

// What the scheduler threads share.
struct SchedContext {
  AicpuClock* clock = nullptr;  // the AICPU threads' order
  Runtime* rt = nullptr;
  AicoreComplex* cores = nullptr;
  SimObserver* obs = nullptr;
  const Platform* platform = nullptr;
  std::vector<SchedulerThread*> threads;  // the core-owning threads
  // host_build_graph's resolution thread (HbgLayout::ResolutionThread), else
  // null; `handoff[s]` is scheduler thread s's CompletedTaskQueue to it
  // (scheduler_context.h), `handoffs` counts pushes to wake it.
  SchedulerThread* resolver = nullptr;
  std::vector<std::deque<Task*>> handoff;
  std::uint64_t handoffs = 0;
  bool stop = false;  // emergency shutdown (a fatal was latched)
  // host_build_graph's boot barrier (aicpu_executor.cpp classify_arrived_,
  // runtime_init_ready_): every slice classified, and the moment the last
  // thread published runtime_init_ready_.
  bool boot_done = false;
  Time boot_end = 0;
  std::uint64_t blocks_dispatched = 0;  // logical blocks placed, all threads
  Drain drain;
  // Bumped at every wake-up of the threads: a thread that sees it changed
  // since its iteration began runs another iteration instead of sleeping.
  std::uint64_t epoch = 0;
  void wake_all();
};

class SchedulerThread : public sc_core::sc_module {
 public:
  // `resolver`: host_build_graph's resolution thread, owning no cores
  // (scheduler_dispatch.cpp run_resolution_thread); `num_threads` is the
  // number of core-owning threads either way.
  SchedulerThread(sc_core::sc_module_name name, int index, int num_threads, SchedContext& ctx,
                  bool resolver = false);

  const std::vector<int>& cores() const { return cores_; }
  const std::vector<int>& clusters() const { return clusters_; }
  bool resolver() const { return resolver_; }
  // The watchdog's last_progress_ts (read by the device log of a hang).
  Time last_progress() const { return last_progress_; }
  // The loop's last_progress_count: the runtime's completed count right after
  // this thread's last completion (scheduler_dispatch.cpp), for the stall dump.
  std::uint64_t last_progress_count() const { return last_progress_count_; }
  // Wakes the thread if it waits for a wake-up (a task made ready, a core's
  // timeline known, ...); lost otherwise, like an immediate notification.
  void wake_up() { ctx_.clock->wake(clock_id_); }
  // The current idle stretch, for the periodic stall dumps (read only by the
  // device log): the end of the latest idle iteration the loop simulated,
  // its idle_iterations count since the last progress, and the period of
  // the iterations it skips from there (0: none since the last progress).
  struct IdleGrid {
    Time end = 0;
    std::uint64_t count = 0;
    Time period = 0;
  };
  const IdleGrid& idle_grid() const { return idle_grid_; }

  // With every output off the phase records' only reader is the engine's
  // collectors: summary.json's figures sum each thread's phase spans per
  // kind, and the failure witness keeps the latest end of a record that
  // processed something. sum_phases() (before the simulation starts) has
  // the thread keep those two itself, read once after the run
  // (phase_sums), instead of building and sending each record (about 2.7
  // per task). Integer sums and a maximum: the same figures in any order.
  static constexpr std::size_t kPhaseKinds = static_cast<std::size_t>(SchedPhase::DrainPublish) + 1;
  struct PhaseSums {
    std::array<Time, kPhaseKinds> span{};  // per kind: the records' end - start, those with end > start
    Time last_work = 0;                    // the latest end of a record with tasks_processed > 0
  };
  void sum_phases() { sum_phases_ = true; }
  bool sums_phases() const { return sum_phases_; }
  const PhaseSums& phase_sums() const { return sums_; }
  int index() const { return index_; }

  // Statistics for the summary.
  Time first_dispatch() const { return first_dispatch_; }
  Time last_completion() const { return last_completion_; }
  int running_cores() const;

 private:
  struct Placement {
    Task* task;
    int core;
    int block;
    int lane;
  };

  static void body(void* self);  // the thread's function, run by the AICPU clock
  // Its stack: the loop's frames are shallow; the margin is for the
  // sanitizers' larger frames. Untouched pages cost no memory.
  static constexpr std::size_t kSchedulerStackBytes = std::size_t(1) << 20;
  void loop();
  // Inline: the loop calls it several times per iteration, mostly at a
  // time the thread has already reached.
  void sync(Time t) {
    if (t > now()) ctx_.clock->sleep(clock_id_, t, false);
  }
  // Until a wake-up, or (t != kNever) time t if that comes first.
  void sleep_for_wake(Time t) { ctx_.clock->sleep(clock_id_, t, true); }
  void count_completed(int n, Time t);
  // The loop's code runs only while the clock runs this thread (every
  // public member but body() leaves the present alone): the clock's present.
  Time now() const { return ctx_.clock->running_now(); }
  std::array<int, 3> queue_depths() const;

  // Swimlane records as the runtime's scheduler loop emits them
  // (scheduler_dispatch.cpp resolve_and_dispatch): complete, dummy and
  // dispatch records carry ready-queue snapshots, the start one being the
  // previous such record's end one; the others carry zeros.
  const std::array<int, 3>& shared_sample(bool fresh);
  // The fields every phase record carries: thread, kind, span, iteration, count.
  SchedPhaseRecord phase_record(SchedPhase kind, Time start, Time end, int processed) const;
  SchedPhaseRecord blank_record_;  // phase_record's start: every field as value-initialised but the thread
  // Inline: with the sums kept here (sum_phases) a record is two adds.
  void record(SchedPhase kind, Time start, Time end, int processed, TaskId task = kNoTask);
  void record_shared(SchedPhase kind, Time start, Time end, int processed, bool fresh);
  void send_record(SchedPhase kind, Time start, Time end, int processed, TaskId task);
  void send_record_shared(SchedPhase kind, Time start, Time end, int processed, bool fresh);
  void sum_phase(SchedPhase kind, Time start, Time end, int processed) {
    if (end > start) sums_.span[static_cast<std::size_t>(kind)] += end - start;
    if (processed > 0) sums_.last_work = std::max(sums_.last_work, end);
  }
  bool sum_phases_ = false;
  PhaseSums sums_;

  // Loop phases; each advances `t` and sets `progress` (the loop's
  // made_progress) when it did something.
  void complete_phase(Time& t, Time iteration_start, bool& progress);
  // host_build_graph's boot: waits for the graph, classifies this thread's
  // slice of it, then the barrier; `t` ends when dispatch may begin.
  void boot_scan(Time& t);
  int drain_phase(Time& t);
  void dummy_phase(Time& t, bool& progress);
  // The resolution thread's pass: every scheduler thread's handed-off tasks
  // in thread order, then the dummy queue until empty.
  void resolution_phase(Time& t, bool& progress);
  // What an idle iteration compares to notice a wake-up it was not waiting for.
  std::uint64_t wake_count() const;
  void dispatch_phase(Time& t, bool& progress);
  bool quiet(Time t, bool dummies);  // the iteration's remaining phases would do nothing
  bool early_work();  // early_dispatch_phase may stage something (drops stale early entries)
  int empty_tier_misses() const;  // dispatch_phase's pop misses on a tier with every queue empty
  void early_dispatch_phase(Time& t, bool& progress);
  void release_phase(Time& t, bool record_it);
  void defer_release(Task* task, Time& t);
  // Calls f(j) for each core cores_[j] the completion phase polls (running,
  // not parked), in cores_ order (per cluster AIC, AIV0, AIV1); j also
  // indexes the core's next_observable in the view (`obs`). Each core's bits
  // are read when the walk reaches it, so a core that f's work parks,
  // unparks or idles is seen as a loop over cores_ testing each would see it.
  // f returns whether anything may have changed since the walk last read the
  // bits (it polled a core, or synchronised, letting other processes run);
  // only then are the view's words read again, so a walk whose reads decode
  // nothing (most iterations, and every idle skip) reads them once per word.
  // The view keeps the polled cores as one bit per core in this order
  // (ClusterView::polled_cores, 63 cores a word): a bit scan a core.
  template <typename F>
  void for_each_polled(F&& f) const {
    using Word = ClusterSet::Word;
    const AicoreComplex::ClusterView& v = view();
    const int words = v.core_words();
    for (int i = 0; i < words; ++i) {
      Word p = v.polled_core_word(i);
      Word rest = ~Word{0};  // cores of word i not walked yet
      for (;;) {
        const Word w = p & rest;
        if (!w) break;
        const int b = __builtin_ctzll(w);
        rest = ~Word{0} << (b + 1);  // b < 63
        if (f(static_cast<std::size_t>(AicoreComplex::ClusterView::kCoresPerWord * i + b))) p = v.polled_core_word(i);
      }
    }
  }
  void finish_task(Task& task, Time& t);
  // Completes a task: fanout walk, ready pushes, doorbells; `fixed` is the
  // caller's own cost of the completion.
  void complete(Task& task, Time fixed, Time& t);
  // Rings the doorbells of an early-staged consumer, from `t`; returns the
  // time after them.
  Time ring_staged(Task& task, Time t);
  // try_early_dispatch_release: a consumer made ready by a completion rings
  // its staged cores; a sync-start cohort only at its rendezvous.
  Time release(Task& task, Time t);
  // A gated sync-start block promoted into a running slot: one more core
  // for the rendezvous, which may ring the cohort.
  void promoted(Task& task, Time& t);
  // After a sync-start cohort's staging: ring it if the rendezvous holds
  // (retry_sync_start_rendezvous_after_staging).
  void retry_rendezvous(Task& task, Time& t);
  // propagate_dispatch_fanin once a task is launch-visible.
  void propagate(Task& task, Time t);

  // Dispatch (scheduler_dispatch.cpp). The placement passes of one loop
  // iteration, in the runtime's staging order (run_staging_order): per tier,
  // MIX on idle clusters, AIC/AIV on idle cores unless MIX work remains, MIX
  // into pending slots unless a peer has an idle MIX cluster, AIC/AIV into
  // pending slots unless a peer has an idle core of the shape.
  enum class Stage : std::uint8_t { Idle, Pending };
  enum class MixPlacement : std::uint8_t { Running, Pending, Reject };
  // One dispatch_shape call: batch pops from one queue for one shape and
  // stage, each pop published with one barrier (flush).
  void dispatch_shape(Shape s, bool sync_tier, Stage stage, Time& t);
  // This thread's cores (AIC/AIV) that can take a block of `s` in `stage`,
  // in bit order (CoreTracker::get_dispatchable_cores), into `out` (cleared
  // first; the hot path passes a member buffer, so no allocation per call).
  void dispatchable(Shape s, Stage stage, std::vector<int>& out) const;
  std::vector<int> dispatchable(Shape s, Stage stage) const;
  int count_dispatchable(Shape s, Stage stage) const;  // AIC/AIV: how many dispatchable would list
  bool any_dispatchable(Shape s, Stage stage) const;
  // Word `i` of the owned clusters whose core of lane `lane` can take a block
  // in `stage` (idle, or running with its pending slot free) and is not
  // claimed in this pass.
  ClusterSet::Word free_word(int lane, Stage stage, int i) const;
  const AicoreComplex::ClusterView& view() const { return *view_; }
  bool any_running() const;  // running_cores() > 0
  // This thread's index of the cluster of one of its cores (clusters_ order).
  int local_cluster(int core) const { return ctx_.cores->map().cluster_of(core) / num_threads_; }
  bool taken(int core) const {
    const int k = local_cluster(core);
    return taken_[static_cast<std::size_t>(k >> 6)][ctx_.cores->map().lane_of(core)] >> (k & 63) & 1;
  }
  void set_taken(int core, bool on) {
    const int k = local_cluster(core);
    ClusterSet::Word& w = taken_[static_cast<std::size_t>(k >> 6)][ctx_.cores->map().lane_of(core)];
    const ClusterSet::Word b = ClusterSet::Word{1} << (k & 63);
    w = on ? (w | b) : (w & ~b);
  }
  // classify_mix_cluster: where a MIX block with lane `mask` can go on cluster `ci`.
  MixPlacement classify_mix(int ci, std::uint8_t mask) const;
  // has_idle_in_other_threads. A peer's idle bits change only in its own
  // polls and dispatches, and no peer runs until this thread sleeps on the
  // clock: the answers are kept until the clock's next hand-over.
  bool peer_has_idle(Shape s) const;
  // Plans block `block` of `task` on core `core` (a MIX block: its cluster's
  // used lanes) for the next flush: one payload each.
  // Returns the payloads built.
  int prepare(Task& task, int unit, int block, Time& t);
  void push_back(Task& task, bool early, Time& t);  // re-push to the tail of its queue
  // Writes the planned blocks: one barrier, one DATA_MAIN_BASE store each.
  void flush(bool gated, Time& t);

  // The stage order both dispatch and early dispatch follow.
  // `has_work(shape)`: false only when the shape's stages can do nothing
  // at all (an empty queue, no pop miss counted): they are then not called,
  // and no peer's idle cores are asked about for them.
  template <typename StageFn, typename ResidualFn, typename HasWorkFn>
  void staging_order(StageFn&& stage, ResidualFn&& residual_mix, HasWorkFn&& has_work);
  // One early_dispatch_shape call: candidates of one early queue staged gated
  // on this thread's units for the shape and stage; returns the blocks staged.
  int early_dispatch_shape(Shape s, Stage stage, Time& t);
  bool has_free_slot() const;  // an idle core or a free pending slot
  const Shape* aic_aiv_order() const;
  bool start_drain(Task* task, bool gated);  // enter_drain_mode: false if a drain is already active
  // Tier 0 of try_early_dispatch: an early sync-start candidate staged whole
  // on this thread's idle cores and pending slots if they hold it, else
  // through a gated drain. Returns the blocks staged.
  int early_sync_start(Task& task, Time& t);
  void claim(Task& task, int n, bool early, Time& t);
  void publish(bool gated, Time& t);
  // The drain (handle_drain_mode): this thread's share of the cohort staged
  // on its own idle units (stage_sync_start_cores), the units that can take
  // a block of the cohort now, and their count over every thread.
  struct Staged {
    int blocks = 0;
    int running_cores = 0;  // gated cores placed in a running slot
  };
  Staged stage_cohort(Task& task, bool gated, bool record_phases, Time& t);
  std::vector<int> idle_units(const Task& task) const;
  // count_available_blocks: units that can take a block of the cohort,
  // pending slots included for a gated cohort (a MIX block split core by core).
  int available_units(const Task& task, bool include_pending) const;
  int global_available_units(const Task& task, bool include_pending) const;
  std::vector<int> split_clusters(const Task& task) const;
  bool drain_has_work() const;

  // Idle skipping: the start of the first iteration after `T` (period `P`)
  // in which a poll could decode something new; `m` is set to the number of
  // iterations before it (P > 0 and a result other than kNever).
  Time next_event_iteration(Time T, Time P, Time& m) const;
  // What the completion phase's polls would see, as long as no core of this
  // thread changes (the view's version): with x_j the j-th polled core's
  // next_observable and off_j = loop + (j+1)*poll its poll's offset in an
  // iteration, `least` is the smallest max(x_j - off_j, 0) over the cores
  // with x_j known (kNever: none), `never` whether some core's x_j is not
  // known yet, `count` the polled cores. The poll of core j in an iteration
  // starting at T decodes something iff x_j <= T + off_j, i.e. iff its term
  // is <= T; so an iteration with least > T (and no unknown core) polls
  // nothing, and the first iteration that can decode something is that of
  // the least term. Left by a completion phase's walk that polled nothing,
  // or by the idle skip's own walk.
  struct PollSummary {
    std::uint64_t version = ~std::uint64_t{0};
    Time least = kNever;
    bool never = false;
    int count = 0;
  };
  const PollSummary& poll_summary() const;
  const PollSummary& summarize_polls() const;  // poll_summary's walk: polls_ taken anew
  mutable PollSummary polls_;
  // The no-progress watchdog: the end of the idle iteration (from `t`,
  // period `P`) at which it fires, kNever when it is not armed; and the latch.
  Time watchdog_iteration(Time t, Time P, Time budget) const;  // `budget`: scheduler_timeout's, fixed for the run
  void scheduler_timeout(Time at);

  int index_;
  int num_threads_;
  bool resolver_;
  bool releases_free() const;
  SchedContext& ctx_;
  const SchedCosts& costs_;
  int clock_id_;          // this thread in the AICPU clock
  std::vector<int> cores_;     // bit order: per owned cluster AIC, AIV0, AIV1
  std::vector<int> clusters_;  // owned clusters, in order

  std::vector<Task*> deferred_;
  std::vector<Placement> plan_;
  std::vector<FinishedBlock> done_;
  const AicoreComplex::ClusterView* view_ = nullptr;  // this thread's clusters' bits, kept by the cores
  // By word of local cluster indices, per lane: the core is claimed in this
  // dispatch pass (a word's three lanes side by side, as in the view).
  std::array<std::array<ClusterSet::Word, kNumLanes>, ClusterSet::kMaxClusters / 64> taken_{};
  // Scratch of dispatch_shape / early_dispatch_shape, kept across calls so
  // the per-iteration path allocates nothing (neither is re-entered).
  std::vector<int> units_, selected_;
  std::vector<Task*> batch_;
  std::vector<TaskId> early_batch_;  // early_dispatch_shape's pop: ids (Runtime::pop_early)
  bool entered_drain_ = false; // this dispatch phase started a sync-start drain
  // peer_has_idle's answers (bit: the shape), taken at the clock's
  // hand-over count `peer_idle_at_`.
  mutable std::uint64_t peer_idle_at_ = ~std::uint64_t{0};
  mutable std::uint8_t peer_idle_ = 0;
  // Swimlane counters (SchedChipSwimlaneCounters): pops since the thread
  // started and at the last dispatch record, subtasks prepared since the
  // last dispatch or early-dispatch record, the start of the next phase
  // record in this iteration, the ready-queue snapshots.
  std::uint64_t pop_hit_ = 0, pop_miss_ = 0, pop_hit_emitted_ = 0, pop_miss_emitted_ = 0;
  int phase_dispatch_count_ = 0;
  std::uint64_t idle_misses_ = 0;  // empty pops of the last idle iteration
  // Some observer reads the records' pop counts and queue snapshots
  // (SimObserver::reads_sched_detail, asked when the loop starts): without
  // one, pops are not counted and the snapshots are not taken.
  bool detail_ = true;
  Time phase_t0_ = 0;
  std::array<int, 3> phase_start_shared_{};
  std::array<int, 3> iter_shared_{};
  bool iter_sampled_ = false;
  std::uint64_t loop_iter_ = 0;
  Time last_progress_ = 0;          // the watchdog's last_progress_ts
  std::uint64_t progress_iter_ = 0; // loop_iter_ at the last progress
  std::uint64_t last_progress_count_ = 0;  // see last_progress_count()
  IdleGrid idle_grid_;
  Time first_dispatch_ = kNever;
  Time last_completion_ = 0;
  // The shortest completion walk that can span the 1 us of the device
  // counter a resolve record needs (0: any walk may).
  Time resolve_min_ = 0;
};

}  // namespace npusim
