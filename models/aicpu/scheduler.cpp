#include "models/aicpu/scheduler.h"

#include <algorithm>

namespace npusim {

void SchedContext::wake_all() {
  ++epoch;
  for (SchedulerThread* t : threads) t->wake_up();
  if (resolver) resolver->wake_up();
}

SchedulerThread::SchedulerThread(sc_core::sc_module_name name, int index, int num_threads,
                                 SchedContext& ctx, bool resolver)
    : sc_core::sc_module(name), index_(index), num_threads_(num_threads), resolver_(resolver), ctx_(ctx),
      costs_(ctx.platform->sched), clock_id_(ctx.clock->add(&SchedulerThread::body, this, kSchedulerStackBytes)) {
  const CoreMap& m = ctx_.cores->map();
  // Cluster-granular round robin: cluster ci belongs to core-owning thread
  // ci % n (§1; host_build_graph scheduler_cold_path.cpp
  // assign_cores_to_threads); the resolution thread owns none.
  for (int ci = index_; !resolver_ && ci < m.clusters; ci += num_threads_) {
    clusters_.push_back(ci);
    cores_.push_back(m.aic(ci));
    cores_.push_back(m.aiv0(ci));
    cores_.push_back(m.aiv1(ci));
  }
  for (int c : cores_) ctx_.cores->set_wake(c, [](void* self) { static_cast<SchedulerThread*>(self)->wake_up(); }, this);
  // complete's resolve record needs sys_cnt(t) - sys_cnt(t0) >= N ticks (N =
  // freq / 1e6). sys_cnt(t) - sys_cnt(t0) < (t - t0) * freq / 1e12 + 1, so a
  // walk with (t - t0) * freq <= (N - 1) * 1e12 spans fewer than N ticks.
  // N = 0 (a counter under 1 MHz): every walk is recorded.
  const std::uint64_t freq = ctx.platform->topo.sys_cnt_freq_hz, ticks = freq / 1000000;
  if (ticks > 0)
    resolve_min_ = static_cast<Time>(static_cast<unsigned __int128>(ticks - 1) * 1000000000000ull / freq) + 1;
  view_ = &ctx_.cores->add_view(clusters_);
  blank_record_.thread = index_;
}

int SchedulerThread::running_cores() const {
  int n = 0;
  const AicoreComplex::ClusterView& v = view();
  for (int l = 0; l < kNumLanes; ++l)
    for (int i = 0; i < v.words(); ++i) n += ClusterSet::count(~v.idle(l, i) & v.valid(i));
  return n;
}

inline bool SchedulerThread::any_running() const {
  const AicoreComplex::ClusterView& v = view();
  for (int i = 0; i < v.words(); ++i) {
    const AicoreComplex::ClusterView::Group& w = v.group(i);
    if (~(w.idle[kLaneAic] & w.idle[kLaneAiv0] & w.idle[kLaneAiv1]) & w.valid) return true;
  }
  return false;
}

std::array<int, 3> SchedulerThread::queue_depths() const {
  std::array<int, 3> d{};
  for (int s = 0; s < 3; ++s) {
    std::size_t n = ctx_.rt->queue_size(static_cast<Shape>(s), false) +
                    ctx_.rt->queue_size(static_cast<Shape>(s), true);
    d[s] = static_cast<int>(std::min<std::size_t>(n, 32767));  // int16-clamped
  }
  return d;
}

const std::array<int, 3>& SchedulerThread::shared_sample(bool fresh) {
  // One sample per iteration (get_or_sample_shared), re-taken after a phase
  // that pushed ready tasks (capture_phase_end_fresh).
  if (fresh || !iter_sampled_) {
    iter_shared_ = queue_depths();
    iter_sampled_ = true;
  }
  return iter_shared_;
}

__attribute__((always_inline)) inline SchedPhaseRecord SchedulerThread::phase_record(SchedPhase kind, Time start, Time end, int processed) const {
  // A copy of the blank record (its thread set), not a value-initialised
  // one: GCC clears an 88-byte record with `rep stos`, whose start-up cost
  // was most of a record's (record_shared 1.6 % of the 1M run's CPU).
  SchedPhaseRecord r = blank_record_;
  r.kind = kind;
  r.start = start;
  r.end = end;
  r.loop_iter = loop_iter_;
  r.tasks_processed = processed;
  return r;
}

__attribute__((always_inline)) inline void SchedulerThread::record(SchedPhase kind, Time start, Time end,
                                                                  int processed, TaskId task) {
  if (sum_phases_)
    sum_phase(kind, start, end, processed);
  else
    send_record(kind, start, end, processed, task);
}

__attribute__((always_inline)) inline void SchedulerThread::record_shared(SchedPhase kind, Time start, Time end,
                                                                         int processed, bool fresh) {
  if (sum_phases_)
    sum_phase(kind, start, end, processed);
  else
    send_record_shared(kind, start, end, processed, fresh);
}

void SchedulerThread::send_record(SchedPhase kind, Time start, Time end, int processed, TaskId task) {
  SchedPhaseRecord r = phase_record(kind, start, end, processed);
  r.task_id = task;
  ctx_.obs->on_sched_phase(r);
}

void SchedulerThread::send_record_shared(SchedPhase kind, Time start, Time end, int processed, bool fresh) {
  SchedPhaseRecord r = phase_record(kind, start, end, processed);
  if (!detail_) {  // no observer reads the snapshots or the pop counts
    ctx_.obs->on_sched_phase(r);
    return;
  }
  r.shared_at_start = phase_start_shared_;
  r.shared_at_end = shared_sample(fresh);
  phase_start_shared_ = r.shared_at_end;
  if (kind == SchedPhase::Dispatch) {
    r.pop_hit = pop_hit_ - pop_hit_emitted_;
    r.pop_miss = pop_miss_ - pop_miss_emitted_;
    pop_hit_emitted_ = pop_hit_;
    pop_miss_emitted_ = pop_miss_;
  }
  ctx_.obs->on_sched_phase(r);
}

// ------------------------------------------------------------------ the loop

__attribute__((always_inline)) inline std::uint64_t SchedulerThread::wake_count() const {
  return resolver_ ? ctx_.epoch + ctx_.handoffs : ctx_.epoch;
}

// host_build_graph's boot (aicpu/aicpu_executor.cpp AicpuExecutor::run;
// runtime/scheduler/scheduler_cold_path.cpp classify_partition): the graph is
// built on the host before the device runs (npusim: the orchestrator, at no
// cost). Every AICPU thread, the resolution thread included, classifies its
// contiguous slice [n*i/N, n*(i+1)/N) of the n task ids in id order (a task
// completed on the host skipped; a ready one pushed; any other registered on
// a producer's wake list), then arrives at classify_arrived_; the last thread
// waits for every arrival and publishes runtime_init_ready_, which the others
// spin on. No thread dispatches before the whole graph is classified, so all
// its roots are in the ready queues at once, and a queue they overfill
// latches READY_QUEUE_OVERFLOW before any dispatch. Each classified task
// costs `fanout_edge` (the fanin scan and the wake-list CAS, the cost npusim
// charges a wake re-registration; an assumption: no measured classify cost
// exists), a pushed one its `ready_push` after; the spin on the barrier flag
// is free. The N slices run concurrently; thread 0's process plays them all,
// each push or registration at its own thread's simulated time (ties in
// thread order), so the queues interleave the slices as the threads' timing
// does. The others wait for the barrier.
void SchedulerThread::boot_scan(Time& t) {
  Runtime& rt = *ctx_.rt;
  while (!rt.orchestration_done() && !ctx_.stop) sleep_for_wake(kNever);
  t = std::max(t, now());
  if (index_ == 0 && !ctx_.stop) {
    const std::uint64_t N = ctx_.threads.size() + (ctx_.resolver ? 1 : 0);
    const std::uint64_t n = rt.ring(0).head();
    struct Slice {
      std::uint64_t next, end;
      Time t;
    };
    std::vector<Slice> slices;
    for (std::uint64_t i = 0; i < N; ++i) slices.push_back({n * i / N, n * (i + 1) / N, t});
    for (;;) {
      // The slice whose next classification comes first (ties: lowest thread).
      Slice* first = nullptr;
      for (Slice& sl : slices) {
        while (sl.next < sl.end) {  // completed on the host: skipped at no cost
          const Task* task = rt.ring(0).find(sl.next);
          if (task && task->state == TaskState::Pending) break;
          ++sl.next;
        }
        if (sl.next < sl.end && (!first || sl.t + costs_.fanout_edge < first->t + costs_.fanout_edge)) first = &sl;
      }
      if (!first || ctx_.stop) break;
      first->t += costs_.fanout_edge;  // classify_fanin_state, and register_wake's CAS
      sync(first->t);
      SubmitWork w;
      rt.boot_classify(first->next++, now(), w);
      first->t += w.ready_cost(costs_);
    }
    Time end = t;
    for (const Slice& sl : slices) end = std::max(end, sl.t);
    if (!ctx_.stop) {  // a latch in the scan (READY_QUEUE_OVERFLOW) ends the run in it
      sync(end);
      ctx_.boot_done = true;
      ctx_.boot_end = now();
      ctx_.wake_all();
    }
  }
  while (!ctx_.boot_done && !ctx_.stop) sleep_for_wake(kNever);
  t = std::max(t, now());
}

void SchedulerThread::body(void* self) { static_cast<SchedulerThread*>(self)->loop(); }

void SchedulerThread::loop() {
  Time t = now();
  detail_ = ctx_.obs->reads_sched_detail();
  if (ctx_.rt->config().runtime == RuntimeKind::HostBuildGraph) boot_scan(t);
  phase_start_shared_ = queue_depths();
  last_progress_ = t;  // the watchdog's budget starts with the thread
  // Fixed for the run: the watchdog's budget, and whether this thread drains
  // dummies (with a resolution thread, dummies are its work:
  // run_resolution_thread).
  const Time budget = npusim::scheduler_timeout(ctx_.rt->config(), *ctx_.platform);
  const bool dummies = !ctx_.resolver && index_ < ctx_.platform->topo.dummy_threads;
  for (;;) {
    const Time T = t;  // this iteration's start
    const std::uint64_t seen_epoch = wake_count();
    ++loop_iter_;
    iter_sampled_ = false;
    phase_t0_ = T;
    t += costs_.loop;
    bool running = any_running();
    if (!running) {
      sync(t);
      if (ctx_.stop || ctx_.rt->has_error() || ctx_.rt->finished()) break;
      running = any_running();
    }
    bool progress = false;
    if (running) {
      complete_phase(t, T, progress);
      phase_t0_ = t;
    }
    if (ctx_.stop) break;
    if (resolver_) {
      resolution_phase(t, progress);
      if (progress) continue;
    } else if (ctx_.drain.active) {
      // A sync-start drain skips the rest of the iteration.
      if (drain_phase(t)) continue;
    } else {
      const std::uint64_t misses = pop_miss_;
      if (!progress && quiet(t, dummies)) {
        // Nothing to pop anywhere (most idle iterations): what the three
        // phases below come to, without their walks.
        entered_drain_ = false;
        if (detail_) pop_miss_ += 2 * static_cast<std::uint64_t>(empty_tier_misses());
      } else {
        if (dummies) dummy_phase(t, progress);
        dispatch_phase(t, progress);
        early_dispatch_phase(t, progress);
      }
      if (progress) {
        last_progress_ = t;
        progress_iter_ = loop_iter_;
        idle_grid_ = IdleGrid{t, 0, 0};
        continue;
      }
      // No progress: release deferred tasks (their producer pins), then idle.
      if (!deferred_.empty()) release_phase(t, true);
      idle_misses_ = pop_miss_ - misses;  // empty pops of an idle iteration
    }
    // The drain has work for this thread: the coordinator with every thread
    // acknowledged checks capacity, a thread released to stage stages (a
    // peer's notification may have come while this thread was not waiting).
    if (!resolver_ && ctx_.drain.active && drain_has_work()) continue;
    // Idle: skip to the first iteration that can see something new, or to
    // the iteration that notices a wake-up. Each skipped iteration polls the
    // same cores and pops the same empty queues.
    // The polled cores are those the summary counted (the same walk over the
    // same bits, kept while the view's version holds; the idle skip below
    // reads the summary anyway): no count over the view's words here.
    const Time P = costs_.loop + static_cast<Time>(poll_summary().count) * costs_.poll_cond;
    idle_grid_ = IdleGrid{t, loop_iter_ - progress_iter_, P};
    // Catch up with simulated time first: a wake-up (work made available,
    // a core's timeline becoming known) notified while this thread was not
    // waiting for it is then seen here, not lost.
    sync(t);
    if (wake_count() != seen_epoch) continue;
    Time next_m = 0;  // the iterations from t to `next`
    const Time next = next_event_iteration(t, P, next_m);
    // The watchdog fires in the first idle iteration ending after its limit:
    // never before `next` if `next` is not past the limit, and then only
    // `next` matters below (no division for the iteration it would fire in).
    const bool before_limit = next != kNever && budget != 0 && next <= last_progress_ + budget;
    const Time fire = before_limit ? kNever : watchdog_iteration(t, P, budget);
    const Time until = std::min(next, fire);
    if (until == kNever)
      sleep_for_wake(kNever);
    else if (until > now())
      sleep_for_wake(until);
    // The watchdog's iteration ends before any poll could see a FIN.
    if (fire <= next && now() >= fire) {
      loop_iter_ += P ? (fire - t) / P : 0;
      scheduler_timeout(fire);
      break;
    }
    const Time x = now();
    Time skipped = 0;
    if (P == 0) {  // a zero-cost loop: iterations are instantaneous
      t = x;
    } else if (next != kNever && x >= next) {
      skipped = next_m;  // (next - t) / P
      t = next;
    } else {
      // Woken at x: the dispatch check of iteration m lies at t + m*P + P (the
      // end of an idle iteration); resume at the first one not before x.
      Time m = x > t + P ? (x - t - P + P - 1) / P : 0;
      if (next != kNever && t + m * P > next) m = (next - t) / P;
      skipped = m;
      t = t + m * P;
    }
    loop_iter_ += skipped;
    if (!ctx_.drain.active && detail_) pop_miss_ += skipped * idle_misses_;
  }
  // Loop exit, whichever path left the loop (resolve_and_dispatch,
  // scheduler_dispatch.cpp): first the tasks still on the deferred list are
  // released, newest first and without a release record (the in-loop release
  // runs only on an iteration without progress, and the last completion is
  // followed by the exit test, not by one); their on_task_release
  // (pto_scheduler.h) drops the producers' pins and runs each task's own
  // check_and_handle_consumed, so the run's last tasks retire and the ring's
  // tail reaches its head. Then the pops since the last dispatch record go
  // into a zero-length dispatch record, so the records' pop counts add up to
  // the thread's (written only for an observer that reads the counts).
  t = std::max(t, now());
  release_phase(t, false);
  if (detail_ && (pop_hit_ != pop_hit_emitted_ || pop_miss_ != pop_miss_emitted_))
    record_shared(SchedPhase::Dispatch, now(), now(), 0, false);
}

// `n` completions published at `t` (completed_tasks_.fetch_add in
// scheduler_dispatch.cpp resolve_and_dispatch: after the whole completion
// check, a dummy's after its retire). The one that completes the run wakes
// every thread: an idle peer spinning on its empty queues sees the count at
// its next iteration (handle_orchestrator_exit, scheduler_cold_path.cpp) and
// leaves its loop. host_build_graph's resolution thread wakes them itself.
void SchedulerThread::count_completed(int n, Time t) {
  if (n == 0 || ctx_.resolver || !ctx_.rt->finished()) return;
  sync(t);
  ctx_.wake_all();
}

// The no-progress watchdog (scheduler_dispatch.cpp resolve_and_dispatch, the
// idle branch): at the end of each iteration without progress the thread
// reads the clock; more than the budget after its last progress, a thread
// that owns a running task (self_owns_running_task: a core's running slot
// held) latches SCHEDULER_TIMEOUT. A thread that owns none only refreshes its
// budget, so it can latch only through the global branch (no thread owns a
// running task, the orchestration done, tasks unfinished), which the engine
// reports when the simulation runs out of events. During a drain the loop
// never reaches the check.
Time SchedulerThread::watchdog_iteration(Time t, Time P, Time budget) const {
  if (budget == 0 || ctx_.drain.active || !any_running()) return kNever;
  const Time limit = last_progress_ + budget;  // fires once the clock is past it
  if (t > limit) return t;
  if (P == 0) return limit + 1;
  return t + ((limit - t) / P + 1) * P;  // idle iterations end at t, t + P, ...
}

// handle_timeout_exit (scheduler_cold_path.cpp): latch code 100 (the first
// latch wins) and shut down; the engine classifies the stall from the chip's
// state at this moment.
void SchedulerThread::scheduler_timeout(Time at) {
  LatchedError e;
  e.code = ErrorCode::SchedulerTimeout;
  e.by_scheduler = true;
  e.time = at;
  e.thread = index_;
  e.idle_iterations = loop_iter_ - progress_iter_;
  e.since = last_progress_;
  ctx_.rt->latch_error(e);
}

// The check inline (the idle skip asks twice per idle iteration, nearly
// always of an unchanged view), the walk out of line.
__attribute__((always_inline)) inline const SchedulerThread::PollSummary& SchedulerThread::poll_summary() const {
  return polls_.version == view().version ? polls_ : summarize_polls();
}

const SchedulerThread::PollSummary& SchedulerThread::summarize_polls() const {
  PollSummary p;
  p.version = view().version;
  const Time* obs = view().obs.data();
  for_each_polled([&](std::size_t j) {
    const Time x = obs[j];
    const Time offset = costs_.loop + static_cast<Time>(p.count + 1) * costs_.poll_cond;
    ++p.count;
    if (x == kNever)
      p.never = true;
    else
      p.least = std::min(p.least, x > offset ? x - offset : 0);
    return false;
  });
  polls_ = p;
  return polls_;
}

Time SchedulerThread::next_event_iteration(Time T, Time P, Time& m_out) const {
  // Iteration m >= 0 starts at T + m*P; its j-th poll returns at
  // T + m*P + loop + (j+1)*poll.
  if (P == 0) {
    Time best = kNever;
    const Time* obs = view().obs.data();
    for_each_polled([&](std::size_t j) {
      const Time x = obs[j];
      if (x != kNever) best = std::min(best, std::max(T, x));
      return false;
    });
    return best;
  }
  // Core j's first iteration is m_j = ceil((x_j - off_j - T) / P), or 0
  // when x_j - off_j <= T: non-decreasing in x_j - off_j, so the earliest
  // is that of the least term (poll_summary), clamped at T. One division
  // per call instead of one per polled core, and no walk while this
  // thread's cores are as the last walk saw them.
  const PollSummary& ps = poll_summary();
  if (ps.least == kNever) return kNever;
  const Time key = std::max(T, ps.least);
  m_out = key > T ? (key - T + P - 1) / P : 0;
  return T + m_out * P;
}

// An iteration whose dummy, dispatch and early-dispatch phases find nothing
// to do, read at `t` (their reads, after the same catch-up): no dummy (for a
// thread that drains them), every ready queue of both tiers empty (each tier
// then counts empty_tier_misses), and no early work it could stage (a stale
// early entry is dropped here as early_dispatch_phase's check drops it); and
// no dispatch record pending (the dispatch phase would write it).
__attribute__((always_inline)) inline bool SchedulerThread::quiet(Time t, bool dummies) {
  sync(t);
  const Runtime& rt = *ctx_.rt;
  if (phase_dispatch_count_ != 0 || (dummies && rt.dummy_queue_size() != 0) || rt.any_ready()) return false;
  return !early_work();
}

// early_dispatch_phase's gate: every normal ready queue empty, an early
// candidate queued (stale front entries dropped), a free slot to stage on.
__attribute__((always_inline)) inline bool SchedulerThread::early_work() {
  return !ctx_.rt->any_ready() && ctx_.rt->any_early() && has_free_slot();
}

// --------------------------------------------------------------- complete

void SchedulerThread::complete_phase(Time& t, Time iteration_start, bool& progress) {
  // This thread's cores unchanged since a walk that saw every poll decode
  // nothing, and none due in this iteration either (poll_summary): the
  // polls only cost their reads. (The loop calls this with t at
  // iteration_start + loop, where the summary's offsets count from.)
  if (polls_.version == view().version && !polls_.never &&
      (polls_.least == kNever || polls_.least > iteration_start)) {
    t += static_cast<Time>(polls_.count) * costs_.poll_cond;
    return;
  }
  int fins = 0;
  int tasks = 0;  // completed_this_turn
  // The walk leaves the summary of what it saw (poll_summary's, as a walk
  // after it would take it) when it polled nothing, or when its polls only
  // moved cores that stay polled (an ACK read: the pending block promoted or
  // the running one's ACK seen, no FIN): such a read changes only that
  // core's state (AicoreComplex::poll), so its term is taken after the read
  // and every other term and position stands. The idle skip that follows
  // (most ACK reads end an iteration without progress) then needs no walk of
  // its own. A FIN, a promotion or a catch-up (other threads run) leaves no
  // summary.
  PollSummary seen;
  bool summary_ok = true;
  // Cores parked on a gated (early-dispatched) block are not polled.
  const Time* obs = view().obs.data();  // the cores' next_observable, kept with their bits
  for_each_polled([&](std::size_t j) {
    t += costs_.poll_cond;
    const Time x = obs[j];
    const Time offset = costs_.loop + static_cast<Time>(seen.count + 1) * costs_.poll_cond;
    ++seen.count;
    // A core whose timeline is not known yet may finish before this read.
    if (x == kNever) {
      sync(t);
      summary_ok = false;
    } else if (x > t) {
      seen.least = std::min(seen.least, x - offset);  // x > t >= offset
      return false;  // the read decodes nothing new (next_observable): no FIN, no ACK, the core still running
    }
    const int c = cores_[j];
    done_.clear();
    FinishedBlock up{nullptr, -1};
    ctx_.cores->poll(c, t, done_, &up);
    if (summary_ok) {
      if (!done_.empty() || up.task || ctx_.drain.active || ctx_.cores->idle(c) || ctx_.cores->parked(c)) {
        summary_ok = false;
      } else {
        const Time y = obs[j];  // as poll_summary reads it (the poll stored it)
        if (y == kNever)
          seen.never = true;
        else
          seen.least = std::min(seen.least, y > offset ? y - offset : 0);
      }
    }
    // A drain waits for idle cores: tell its leader.
    if (ctx_.drain.active && ctx_.cores->idle(c) && index_ != 0) ctx_.wake_all();
    for (const FinishedBlock& f : done_) {
      ++fins;  // a finished task or a sub-block retire (phase_complete_count + phase_subretire_count)
      BlockRecord& rec = f.task->blocks[f.record];
      rec.finish = t;
      ctx_.obs->on_block_finished(*f.task, rec);
      f.task->block_finished(f.record);
      // An SPMD task's blocks may finish on several threads, each running
      // ahead of the kernel's time: decrement its counter at this thread's
      // time, so the last decrement in simulated time completes the task.
      if (f.task->block_num > 1) sync(t);
      if (ctx_.rt->subtask_finished(*f.task)) {
        finish_task(*f.task, t);
        ++tasks;
      } else
        t += costs_.complete_subtask;
    }
    // A gated sync-start block promoted after the running FIN was completed
    // (check_running_cores_for_completion: complete, then promote).
    if (up.task && up.task->sync_start && !up.task->launched) promoted(*up.task, t);
    return true;
  });
  if (summary_ok) {
    seen.version = view().version;  // after the walk's own reads
    polls_ = seen;
  }
  if (fins == 0) return;
  count_completed(tasks, t);
  progress = true;
  // The record spans the iteration up to here; newly ready tasks were pushed.
  record_shared(SchedPhase::Complete, iteration_start, t, fins, true);
}

void SchedulerThread::finish_task(Task& task, Time& t) {
  if (ctx_.resolver && !resolver_) {
    // host_build_graph scheduler_completion.cpp (3S+1P): a scheduler thread
    // hands the finished task to the resolution thread, one push onto its
    // CompletedTaskQueue, and neither resolves nor releases it.
    t += costs_.ready_push;
    sync(t);
    ctx_.handoff[static_cast<std::size_t>(index_)].push_back(&task);
    ++ctx_.handoffs;
    ctx_.resolver->wake_up();
    return;
  }
  complete(task, costs_.complete_task, t);
  if (releases_free()) {
    ctx_.rt->release_task(task);
    return;
  }
  defer_release(&task, t);
}

// host_build_graph releases nothing under polling: no on_task_release
// (pto_scheduler.h) and "no deferred producer-release step" after a
// completion or a dummy (scheduler_completion.cpp, scheduler_dispatch.cpp's
// dummy drain; in the all-schedule layout before the resolution thread, as
// after it). The model's release bookkeeping is then done at once, free, and
// no release phase runs.
bool SchedulerThread::releases_free() const { return ctx_.rt->config().runtime == RuntimeKind::HostBuildGraph; }

void SchedulerThread::complete(Task& task, Time fixed, Time& t) {
  sync(t);  // completion is visible to other threads from this moment
  const Time t0 = t;
  SubmitWork w;
  const int visited = ctx_.rt->complete_task(task, t, w);
  last_progress_count_ = ctx_.rt->completed();
  // on_task_complete (pto_scheduler.h): the fixed part (lock, mark
  // completed), then the fanout walk, one edge at a time; a staged consumer
  // made ready has its doorbells rung the moment the walk reaches it.
  Time bells = 0;  // doorbell stores and barriers so far in the walk
  for (const SubmitWork::Released& r : w.released) {
    const Time reached = t0 + fixed + static_cast<Time>(r.edges) * costs_.fanout_edge +
                         SubmitWork::ready_cost(costs_, r.ready_pushes, r.predicate_evals) + bells;
    bells += release(*r.task, reached) - reached;
  }
  t += fixed + static_cast<Time>(visited) * costs_.fanout_edge + w.ready_cost(costs_) + bells;
  // The released consumers' own propagation runs after the walk (the
  // EarlyDispatchReleaseSink).
  for (const SubmitWork::Released& r : w.released) propagate(*r.task, t);
  last_completion_ = std::max(last_completion_, t);
  // A resolve record only for walks of at least 1 us of the device counter
  // (RESOLVE_EMIT_MIN_CYCLES).
  const Platform& p = *ctx_.platform;
  // host_build_graph's resolution thread writes no phase records
  // (run_resolution_thread).
  // A walk shorter than `resolve_min_` cannot span that many counter ticks
  // (most walks): no record, and no 128-bit divisions to convert the times.
  if (!resolver_ && t - t0 >= resolve_min_ && p.sys_cnt(t) - p.sys_cnt(t0) >= p.topo.sys_cnt_freq_hz / 1000000)
    record(SchedPhase::Resolve, t0, t, visited);
}

Time SchedulerThread::release(Task& task, Time t) {
  if (task.sync_start) {
    if (!Runtime::rendezvous_ready(task)) return t;  // the last promotion rings it
    task.launched = true;
  }
  return ring_staged(task, t);
}

void SchedulerThread::propagate(Task& task, Time t) {
  // A pre-staged sync-start cohort propagates only once launched.
  if (task.blocks_remaining() == 0 && (!task.sync_start || task.launched)) ctx_.rt->task_published(task, t);
}

void SchedulerThread::promoted(Task& task, Time& t) {
  sync(t);  // the count is shared by every thread staging the cohort
  ++task.running_slot_count;
  retry_rendezvous(task, t);
}

void SchedulerThread::retry_rendezvous(Task& task, Time& t) {
  if (!Runtime::rendezvous_ready(task)) return;
  task.launched = true;
  t = ring_staged(task, t);
  propagate(task, t);
}

Time SchedulerThread::ring_staged(Task& task, Time t) {
  // try_early_dispatch_release: every staged core of the task in core order
  // (ring_staged_doorbell_bits), one DATA_MAIN_BASE store each, then one wmb.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < task.blocks.size(); ++i)
    if (task.blocks[i].core >= 0 && task.blocks[i].gated && !task.blocks[i].doorbell)  // not a free slot
      order.push_back(i);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return task.blocks[a].core < task.blocks[b].core; });
  for (std::size_t i : order) {
    BlockRecord& rec = task.blocks[i];
    t += costs_.mmio_write;
    rec.doorbell = true;
    rec.release = t;
    rec.release_thread = index_;
    ctx_.cores->ring_doorbell(rec.core, &task, static_cast<int>(i), t);
  }
  return t + costs_.wmb;
}

void SchedulerThread::defer_release(Task* task, Time& t) {
  // A full list is released inline first (no release record), then the task
  // is added (complete_slot_task).
  if (static_cast<int>(deferred_.size()) >= ctx_.platform->limits.deferred_release_cap) release_phase(t, false);
  deferred_.push_back(task);
}

// resolve_and_dispatch (scheduler_dispatch.cpp) empties the deferred list
// from its end, `on_task_release(*deferred[--count])`: newest first. Each
// release takes effect at the end of its own cost (pto_scheduler.h
// on_task_release: the producers' pins, then the task's own
// check_and_handle_consumed, whose advance moves the ring's tail), so the
// tail passes an older task only once its own release has run.
void SchedulerThread::release_phase(Time& t, bool record_it) {
  if (deferred_.empty()) return;
  const Time start = t;
  for (auto it = deferred_.rbegin(); it != deferred_.rend(); ++it) {
    t += costs_.release_task;
    sync(t);
    ctx_.rt->release_task(**it);
  }
  const int n = static_cast<int>(deferred_.size());
  deferred_.clear();
  if (record_it) record(SchedPhase::Release, start, t, n);
}

// ------------------------------------------------------------------ dummy

void SchedulerThread::dummy_phase(Time& t, bool& progress) {
  sync(t);
  if (ctx_.rt->dummy_queue_size() == 0) return;
  const Time start = t;
  int n = 0;
  while (n < ctx_.platform->limits.dummy_pop_max) {
    Task* task = ctx_.rt->pop_dummy();
    if (!task) break;
    ++n;
    const Time t0 = t;
    complete(*task, costs_.dummy_task, t);  // may record a resolve
    record(task->predicate_false ? SchedPhase::PredicatedSkip : SchedPhase::DummyTask, t0, t0, 1, task->id);
    if (releases_free()) {
      ctx_.rt->release_task(*task);
      continue;
    }
    // Added, then a full list released inline (the dummy path's order).
    deferred_.push_back(task);
    if (static_cast<int>(deferred_.size()) >= ctx_.platform->limits.deferred_release_cap) release_phase(t, false);
    count_completed(1, t);
  }
  progress = true;
  record_shared(SchedPhase::Dummy, start, t, n, true);
  phase_t0_ = t;
}

// host_build_graph scheduler_dispatch.cpp run_resolution_thread: drain every
// scheduler thread's CompletedTaskQueue in thread order, resolving each task
// (on_task_complete: fanout walk, ready pushes), then the dummy queue in
// batches of 8 until it is empty (a dummy's resolution may make more ready).
// Nothing is released (releases_free). When the
// whole graph is resolved it flips completion, which the scheduler threads,
// still spinning, observe.
void SchedulerThread::resolution_phase(Time& t, bool& progress) {
  sync(t);
  for (std::deque<Task*>& q : ctx_.handoff) {
    while (!q.empty()) {
      Task* task = q.front();
      q.pop_front();
      complete(*task, costs_.complete_task, t);
      ctx_.rt->release_task(*task);
      progress = true;
    }
  }
  constexpr int kDummyBatch = 8;  // DUMMY_DRAIN_BATCH
  for (;;) {
    int got = 0;
    while (got < kDummyBatch) {
      Task* task = ctx_.rt->pop_dummy();
      if (!task) break;
      ++got;
      complete(*task, costs_.dummy_task, t);
      ctx_.rt->release_task(*task);
    }
    if (got == 0) break;
    progress = true;
  }
  if (progress && ctx_.rt->finished()) {
    sync(t);
    ctx_.wake_all();
  }
}

// --------------------------------------------------------------- dispatch

void SchedulerThread::claim(Task& task, int n, bool early, Time& t) {
  task.next_block += n;
  ++task.dispatch_ops;
  if (early) task.staged_blocks += n;
  ctx_.blocks_dispatched += static_cast<std::uint64_t>(n);
  t += costs_.dispatch_task;
  // Blocks remain: re-push at once so other threads can place more.
  if (task.blocks_remaining() > 0) push_back(task, early, t);
}

bool SchedulerThread::start_drain(Task* task, bool gated) {
  if (ctx_.drain.active) return false;
  const std::vector<char> none(ctx_.threads.size(), 0);
  ctx_.drain = Drain{true, task, none, now(), false, none, gated, 0};
  // The starter acks like every thread, at the drain check of its next
  // iteration (handle_drain_mode); the rest of this iteration still runs
  // (try_early_dispatch after dispatch_ready_tasks), and drain_has_work
  // keeps it from idling before it has acked.
  for (SchedulerThread* p : ctx_.threads)
    if (p != this) p->wake_up();
  ++ctx_.epoch;
  return true;
}

void SchedulerThread::publish(bool gated, Time& t) {
  t += costs_.wmb;
  const Time dispatch_ts = t;
  const CoreMap& m = ctx_.cores->map();
  for (const Placement& p : plan_) {
    t += costs_.mmio_write;
    BlockRecord rec;
    rec.core = p.core;
    rec.block_idx = p.block;
    rec.lane = p.lane;
    rec.dispatch = dispatch_ts;
    rec.thread = m.thread_of(p.core, num_threads_);
    rec.gated = gated;
    ctx_.cores->dispatch(p.core, p.task, p.block, p.lane, p.task->add_block(rec), t, gated);
    set_taken(p.core, false);
  }
  first_dispatch_ = std::min(first_dispatch_, dispatch_ts);
  if (gated) {
    plan_.clear();
    return;
  }
  // Tasks whose every block is now launch-visible tell their consumers (§5.8).
  for (const Placement& p : plan_)
    if (p.task->blocks_remaining() == 0 && p.task->early != Task::Early::Staging)
      ctx_.rt->task_published(*p.task, t);
  plan_.clear();
}

bool SchedulerThread::has_free_slot() const {
  // idle(c) || pending_free(c): a core with a pending slot is pending_occupied.
  const AicoreComplex::ClusterView& v = view();
  for (int i = 0; i < v.words(); ++i) {
    const AicoreComplex::ClusterView::Group& w = v.group(i);
    for (int l = 0; l < kNumLanes; ++l)
      if ((w.idle[l] | ~w.occupied[l]) & w.valid) return true;
  }
  return false;
}

// ------------------------------------------------- dispatch (item: one pop, one flush)

inline ClusterSet::Word SchedulerThread::free_word(int lane, Stage stage, int i) const {
  const AicoreComplex::ClusterView& v = view();
  const AicoreComplex::ClusterView::Group& w = v.group(i);
  const ClusterSet::Word idle = w.idle[lane];
  const ClusterSet::Word free = stage == Stage::Idle ? idle : ~idle & ~w.occupied[lane] & w.valid;
  return free & ~taken_[static_cast<std::size_t>(i)][lane];
}

void SchedulerThread::dispatchable(Shape s, Stage stage, std::vector<int>& out) const {
  out.clear();
  const CoreMap& m = ctx_.cores->map();
  const int words = view().words();
  for (int i = 0; i < words; ++i) {
    if (s == Shape::AIC) {
      ClusterSet::for_each_bit(i, free_word(kLaneAic, stage, i),
                               [&](int k) { out.push_back(m.aic(clusters_[static_cast<std::size_t>(k)])); });
      continue;
    }
    // Bit order: per cluster AIV0, then AIV1.
    const ClusterSet::Word w0 = free_word(kLaneAiv0, stage, i), w1 = free_word(kLaneAiv1, stage, i);
    ClusterSet::for_each_bit(i, w0 | w1, [&](int k) {
      const int ci = clusters_[static_cast<std::size_t>(k)];
      if (w0 >> (k & 63) & 1) out.push_back(m.aiv0(ci));
      if (w1 >> (k & 63) & 1) out.push_back(m.aiv1(ci));
    });
  }
}

int SchedulerThread::count_dispatchable(Shape s, Stage stage) const {
  int n = 0;
  const int words = view().words();
  for (int i = 0; i < words; ++i) {
    if (s == Shape::AIC)
      n += ClusterSet::count(free_word(kLaneAic, stage, i));
    else
      n += ClusterSet::count(free_word(kLaneAiv0, stage, i)) + ClusterSet::count(free_word(kLaneAiv1, stage, i));
  }
  return n;
}

inline bool SchedulerThread::any_dispatchable(Shape s, Stage stage) const {
  const int words = view().words();
  for (int i = 0; i < words; ++i)
    if (s == Shape::AIC ? free_word(kLaneAic, stage, i) : free_word(kLaneAiv0, stage, i) | free_word(kLaneAiv1, stage, i))
      return true;
  return false;
}

std::vector<int> SchedulerThread::dispatchable(Shape s, Stage stage) const {
  std::vector<int> out;
  dispatchable(s, stage, out);
  return out;
}

SchedulerThread::MixPlacement SchedulerThread::classify_mix(int ci, std::uint8_t mask) const {
  const CoreMap& m = ctx_.cores->map();
  int used = 0, idle = 0;
  for (int l = 0; l < kNumLanes; ++l) {
    if (!(mask >> l & 1)) continue;
    const int c = m.of_lane(ci, l);
    ++used;
    // A core claimed in this pass carries its payload: pending_occupied.
    if (taken(c) || ctx_.cores->pending_occupied(c)) return MixPlacement::Reject;
    if (ctx_.cores->idle(c)) ++idle;
  }
  if (used == 0) return MixPlacement::Reject;
  return idle == used ? MixPlacement::Running : MixPlacement::Pending;
}

inline bool SchedulerThread::peer_has_idle(Shape s) const {
  const std::uint64_t at = ctx_.clock->handovers();
  if (at != peer_idle_at_) {
    // Every shape's answer at once, in one pass over the peers' words (the
    // bits cannot change before the next hand-over, so answering a shape
    // now or at its first question is the same).
    peer_idle_at_ = at;
    ClusterSet::Word aic = 0, aiv = 0, mix = 0;
    for (SchedulerThread* p : ctx_.threads) {  // each peer's get_idle_core_offset_states
      if (p == this) continue;
      const AicoreComplex::ClusterView& v = p->view();
      for (int i = 0; i < v.words(); ++i) {
        const AicoreComplex::ClusterView::Group& w = v.group(i);
        const ClusterSet::Word c = w.idle[kLaneAic], v0 = w.idle[kLaneAiv0], v1 = w.idle[kLaneAiv1];
        aic |= c;
        aiv |= v0 | v1;
        mix |= c & v0 & v1;  // get_valid_cluster_offset_states(MIX): all three cores of a cluster idle
      }
    }
    peer_idle_ = static_cast<std::uint8_t>((aic ? 1u << static_cast<unsigned>(Shape::AIC) : 0u) |
                                           (aiv ? 1u << static_cast<unsigned>(Shape::AIV) : 0u) |
                                           (mix ? 1u << static_cast<unsigned>(Shape::MIX) : 0u));
  }
  return peer_idle_ >> static_cast<unsigned>(s) & 1;
}

void SchedulerThread::push_back(Task& task, bool early, Time& t) {
  t += costs_.ready_push;
  if (early)
    ctx_.rt->requeue_early(task);
  else
    ctx_.rt->requeue(task);
}

int SchedulerThread::prepare(Task& task, int unit, int block, Time& t) {
  const CoreMap& m = ctx_.cores->map();
  int payloads = 0;
  auto one = [&](int core, int lane) {
    set_taken(core, true);
    plan_.push_back(Placement{&task, core, block, lane});
    t += costs_.dispatch_block;  // build_payload: one payload per core
    ++payloads;
  };
  if (task.shape == Shape::MIX) {
    for (int l = 0; l < kNumLanes; ++l)
      if (task.active_mask >> l & 1) one(m.of_lane(unit, l), l);
  } else {
    // An AIV block may run on either AIV of a cluster; it always uses the
    // AIV0 sub-slot kernel.
    one(unit, task.shape == Shape::AIC ? kLaneAic : kLaneAiv0);
  }
  return payloads;
}

void SchedulerThread::flush(bool gated, Time& t) {
  if (!plan_.empty()) publish(gated, t);
}

namespace {

// An AIC/AIV stage's free cores as dispatchable() lists them (by cluster,
// AIV0 before AIV1), taken from the front: the words of the list, not the
// list. A stage uses one or two of its cores in most pops (one queued task
// of one block), so building the whole list, then erasing its front, cost
// more than the placements.
struct FreeCores {
  ClusterSet::Word first[ClusterSet::kMaxClusters / 64];   // AIC, or AIV0
  ClusterSet::Word second[ClusterSet::kMaxClusters / 64];  // AIV1 (0 for AIC)
  int words = 0;
  int at = 0;     // the first word that may still hold a core
  int count = 0;  // cores left
};

}  // namespace

// dispatch_shape (scheduler_dispatch.cpp): while this thread has units for
// the shape, pop a batch of up to that many tasks (pop_ready_tasks_batch; an
// empty pop is a pop_miss), place each task's claimed block range, re-push a
// task with blocks left at once (so it keeps first claim over the rest of the
// batch) and publish the pop's placements with one barrier.
void SchedulerThread::dispatch_shape(Shape s, bool sync_tier, Stage stage, Time& t) {
  if (entered_drain_) return;
  const bool mix = s == Shape::MIX;
  // An empty queue (most stages of most iterations): the stage only counts
  // its pop miss, if it has a unit; no list is built.
  if (ctx_.rt->queue_size(s, sync_tier) == 0) {
    if (detail_ && (mix ? !clusters_.empty() : any_dispatchable(s, stage))) ++pop_miss_;
    return;
  }
  // MIX: every owned cluster, a list (a placement takes the clusters it
  // selected); AIC/AIV: the free cores' words (FreeCores).
  std::vector<int>& units = units_;
  FreeCores fc;
  const CoreMap& m = ctx_.cores->map();
  auto query = [&] {
    if (mix) {
      units = clusters_;
      return;
    }
    fc.words = view().words();
    fc.at = 0;
    fc.count = 0;
    for (int i = 0; i < fc.words; ++i) {
      const ClusterSet::Word a = free_word(s == Shape::AIC ? kLaneAic : kLaneAiv0, stage, i);
      const ClusterSet::Word b = s == Shape::AIC ? 0 : free_word(kLaneAiv1, stage, i);
      fc.first[i] = a;
      fc.second[i] = b;
      fc.count += ClusterSet::count(a) + ClusterSet::count(b);
    }
  };
  auto left = [&]() -> std::size_t { return mix ? units.size() : static_cast<std::size_t>(fc.count); };
  // The front core of the list, removed from it (AIC/AIV).
  auto take_front = [&] {
    while (!(fc.first[fc.at] | fc.second[fc.at])) ++fc.at;
    ClusterSet::Word& a = fc.first[fc.at];
    ClusterSet::Word& b = fc.second[fc.at];
    const int bit = __builtin_ctzll(a | b);
    const int ci = clusters_[static_cast<std::size_t>(64 * fc.at + bit)];
    --fc.count;
    if (a >> bit & 1) {
      a &= a - 1;  // the lowest set bit is this one
      return s == Shape::AIC ? m.aic(ci) : m.aiv0(ci);
    }
    b &= b - 1;
    return m.aiv1(ci);
  };
  query();
  if (left() == 0) return;
  std::vector<Task*>& batch = batch_;
  while (left() != 0 && !entered_drain_) {
    const std::size_t want = left();
    batch.clear();
    // As many as the queue holds, up to `want`: its size read where the pop
    // that returns null would read it (no other thread runs in between).
    const std::size_t take = std::min(want, ctx_.rt->queue_size(s, sync_tier));
    while (batch.size() < take) batch.push_back(ctx_.rt->pop_ready(s, sync_tier));
    if (batch.empty()) {
      ++pop_miss_;
      break;
    }
    pop_hit_ += batch.size();
    t += costs_.dispatch_pop;
    // A batch holding a sync-start task publishes task by task, so earlier
    // tasks get their head start before a drain check.
    bool any_sync = false;
    for (Task* x : batch) any_sync |= x->sync_start;
    bool dispatched_any = false;
    for (std::size_t bi = 0; bi < batch.size(); ++bi) {
      Task& task = *batch[bi];
      std::vector<int>& selected = selected_;
      selected.clear();
      if (mix) {
        const MixPlacement wanted = stage == Stage::Idle ? MixPlacement::Running : MixPlacement::Pending;
        for (int ci : units)
          if (classify_mix(ci, task.active_mask) == wanted) selected.push_back(ci);
        if (selected.empty()) {  // fits no cluster now: back to the queue, not a head-of-line block
          push_back(task, false, t);
          continue;
        }
      }
      if (task.sync_start) {
        if (stage == Stage::Pending) {  // a cohort never goes to pending slots
          push_back(task, false, t);
          continue;
        }
        const int avail = static_cast<int>(mix ? selected.size() : left());
        if (avail < task.block_num) {
          flush(false, t);
          if (!start_drain(&task, false)) push_back(task, false, t);
          for (std::size_t r = bi + 1; r < batch.size(); ++r) push_back(*batch[r], false, t);
          entered_drain_ = true;
          break;
        }
      }
      if (left() == 0) {
        flush(false, t);
        t += costs_.ready_push;  // push_batch of the rest: one queue operation
        for (std::size_t r = bi; r < batch.size(); ++r) ctx_.rt->requeue(*batch[r]);
        break;
      }
      const int avail = static_cast<int>(mix ? selected.size() : left());
      const int n = std::min(task.blocks_remaining(), avail);
      if (n == 0) continue;
      const int first = task.next_block;
      claim(task, n, false, t);  // re-pushes the task if blocks remain
      dispatched_any = true;
      for (int b = 0; b < n; ++b) {
        int unit;
        if (mix) {
          unit = selected[static_cast<std::size_t>(b)];
          units.erase(std::find(units.begin(), units.end(), unit));
        } else {
          unit = take_front();
        }
        phase_dispatch_count_ += prepare(task, unit, first + b, t);
      }
      if (any_sync) flush(false, t);
    }
    flush(false, t);
    if (!dispatched_any) break;
    // The next pass would pop an empty queue: only its pop miss, which no one
    // reads without a detail reader (the queue read where its pop reads it).
    if (!detail_ && ctx_.rt->queue_size(s, sync_tier) == 0) break;
    if (left() == 0) query();
  }
}

// AIC before AIV on even threads, AIV before AIC on odd ones.
inline const Shape* SchedulerThread::aic_aiv_order() const {
  static const Shape order[2][2] = {{Shape::AIC, Shape::AIV}, {Shape::AIV, Shape::AIC}};
  return order[index_ % 2];
}

// run_staging_order (scheduler_dispatch.cpp), shared by dispatch and early
// dispatch: MIX on idle clusters; unless MIX work remains, AIC/AIV on idle
// cores (AIC first on even threads, AIV first on odd); MIX into pending slots
// unless a peer has an idle MIX cluster; then, unless MIX work remains,
// AIC/AIV into pending slots, each skipped while a peer has an idle core of
// its shape. `stage(shape, stage)` returns true to stop the pass.
template <typename StageFn, typename ResidualFn, typename HasWorkFn>
void SchedulerThread::staging_order(StageFn&& stage, ResidualFn&& residual_mix, HasWorkFn&& has_work) {
  const Shape* aic_aiv = aic_aiv_order();
  if (has_work(Shape::MIX) && stage(Shape::MIX, Stage::Idle)) return;
  bool skip_aic_aiv = residual_mix();
  if (!skip_aic_aiv)
    for (int k = 0; k < 2; ++k)
      if (has_work(aic_aiv[k]) && stage(aic_aiv[k], Stage::Idle)) return;
  if (has_work(Shape::MIX) && !peer_has_idle(Shape::MIX) && stage(Shape::MIX, Stage::Pending)) return;
  if (skip_aic_aiv || residual_mix()) return;
  for (int k = 0; k < 2; ++k)
    if (has_work(aic_aiv[k]) && !peer_has_idle(aic_aiv[k]) && stage(aic_aiv[k], Stage::Pending)) return;
}

void SchedulerThread::dispatch_phase(Time& t, bool& progress) {
  sync(t);  // the queues and the peers' cores are read at our local time
  entered_drain_ = false;
  // dispatch_ready_tasks: tier 0 (ready sync-start cohorts) then tier 1, each
  // in run_staging_order. Every stage with units pops, an empty queue being a
  // pop_miss.
  const int prepared = phase_dispatch_count_;
  // Two empty tiers in a row count the same misses: the first changed nothing.
  int empty_misses = -1;
  for (int tier = 0; tier < 2 && !entered_drain_; ++tier) {
    const bool sync_tier = tier == 0;
    if (ctx_.rt->queue_size(Shape::AIC, sync_tier) == 0 && ctx_.rt->queue_size(Shape::AIV, sync_tier) == 0 &&
        ctx_.rt->queue_size(Shape::MIX, sync_tier) == 0) {
      if (!detail_) continue;  // its pop misses are all it comes to, and no one reads them
      if (empty_misses < 0) empty_misses = empty_tier_misses();
      pop_miss_ += static_cast<std::uint64_t>(empty_misses);
      continue;
    }
    empty_misses = -1;
    // A stage on an empty queue only counts its pop miss (dispatch_shape),
    // which no one reads without a detail reader: then it is not called (the
    // queue is read at the moment dispatch_shape would read it), and neither
    // are the peers' idle cores read for it. Most stages of a tier with work
    // find their queue empty (one shape's queue holds the work).
    staging_order(
        [&](Shape s, Stage stage) {
          dispatch_shape(s, sync_tier, stage, t);
          return entered_drain_;
        },
        [&] { return ctx_.rt->queue_size(Shape::MIX, sync_tier) > 0; },
        [&](Shape s) { return detail_ || ctx_.rt->queue_size(s, sync_tier) != 0; });
  }
  if (phase_dispatch_count_ > prepared) progress = true;
  // The record covers the time since the previous record of this iteration;
  // its count is every subtask prepared since the last dispatch record.
  if (phase_dispatch_count_ == 0) return;
  record_shared(SchedPhase::Dispatch, phase_t0_, t, phase_dispatch_count_, false);
  phase_dispatch_count_ = 0;
  phase_t0_ = t;
}

// A tier whose queues are all empty (tier 0 of nearly every iteration, tier
// 1 of most idle ones): run_staging_order pops nothing and claims nothing,
// so it comes down to dispatch_shape's pop-miss count, one per stage that
// has a unit (MIX: every owned cluster; AIC/AIV: a core free for the stage;
// between stages no core is claimed, `taken_` is empty), the pending stages
// only where no peer has an idle core of the shape (and no MIX work remains:
// none does). One pass over the view's words instead of the stages' calls.
int SchedulerThread::empty_tier_misses() const {
  const AicoreComplex::ClusterView& v = view();
  ClusterSet::Word aic_idle = 0, aiv_idle = 0, aic_pending = 0, aiv_pending = 0;
  const int words = v.words();
  for (int i = 0; i < words; ++i) {
    const AicoreComplex::ClusterView::Group& g = v.group(i);
    ClusterSet::Word idle[kNumLanes], pending[kNumLanes];
    for (int l = 0; l < kNumLanes; ++l) {  // free_word for both stages
      const ClusterSet::Word w = g.idle[l], free = ~taken_[static_cast<std::size_t>(i)][l];
      idle[l] = w & free;
      pending[l] = ~w & ~g.occupied[l] & g.valid & free;
    }
    aic_idle |= idle[kLaneAic];
    aiv_idle |= idle[kLaneAiv0] | idle[kLaneAiv1];
    aic_pending |= pending[kLaneAic];
    aiv_pending |= pending[kLaneAiv0] | pending[kLaneAiv1];
  }
  const int mix = clusters_.empty() ? 0 : 1;
  int n = mix + (aic_idle != 0) + (aiv_idle != 0);
  if (!peer_has_idle(Shape::MIX)) n += mix;
  if (aic_pending && !peer_has_idle(Shape::AIC)) ++n;
  if (aiv_pending && !peer_has_idle(Shape::AIV)) ++n;
  return n;
}

// try_early_dispatch (scheduler_dispatch.cpp): only when every normal ready
// queue is empty and this thread has a free slot; the early-dispatch queues
// in the same staging order as dispatch, MIX work left in the early MIX queue
// holding back the AIC/AIV stages (has_residual_early_mix). The record counts
// the blocks staged. A sync-start drain does not gate it: the loop checks
// sync_start_pending once, before dummies and dispatch (resolve_and_dispatch),
// so the iteration that arms a drain (in dispatch_shape or in tier 0 here)
// still runs the regular early staging; the drain stops the next iteration.
void SchedulerThread::early_dispatch_phase(Time& t, bool& progress) {
  sync(t);
  if (!early_work()) return;
  const Time start = t;
  int staged = 0;
  // Tier 0: one sync-start candidate per pass.
  if (Task* c = ctx_.rt->pop_early_sync()) staged += early_sync_start(*c, t);
  staging_order(
      [&](Shape s, Stage stage) {
        staged += early_dispatch_shape(s, stage, t);
        return false;
      },
      [&] { return ctx_.rt->early_queue_size(Shape::MIX) > 0; },
      [&](Shape s) { return ctx_.rt->early_queue_size(s) != 0; });  // early_dispatch_shape's first test
  if (staged == 0) return;
  progress = true;
  record(SchedPhase::EarlyDispatch, start, t, staged);
  phase_dispatch_count_ = 0;  // the staged subtasks belong to this record
  phase_t0_ = t;
}

// try_early_dispatch's tier 0: the popped candidate's owner (a stale or
// already claimed entry is dropped) stages the whole cohort gated on its own
// idle cores and pending slots when they hold it and no drain is active
// (stage_sync_start_cores, no drain records), and seeds the rendezvous with
// the cores it put in running slots; otherwise it starts a gated global
// drain, or, with a drain already active, gives the candidate back.
int SchedulerThread::early_sync_start(Task& task, Time& t) {
  if (!Runtime::early_candidate(task) || task.sync_owner || task.sync_ready) return 0;
  task.sync_owner = true;  // try_claim_early_sync_drain
  if (!ctx_.drain.active && available_units(task, true) >= task.block_num) {
    const Staged st = stage_cohort(task, true, false, t);
    task.running_slot_count = st.running_cores;
    retry_rendezvous(task, t);
    return st.blocks;
  }
  if (start_drain(&task, true)) return 0;
  ctx_.rt->cancel_early_sync(task);
  return 0;
}

// early_dispatch_shape: pop up to as many candidates as this thread has
// units for the shape and stage (a stale entry, released since it was
// queued, is dropped); each claims a block range sized to its free units,
// is re-pushed at once if blocks remain, and is staged gated on them with one
// barrier (stage_consumer_blocks). When a candidate finds no unit, it and the
// rest of the pop go back to the queue. Returns the blocks staged.
int SchedulerThread::early_dispatch_shape(Shape s, Stage stage, Time& t) {
  const bool mix = s == Shape::MIX;
  if (ctx_.rt->early_queue_size(s) == 0) return 0;  // nothing to pop
  const std::size_t units = mix ? clusters_.size() : static_cast<std::size_t>(count_dispatchable(s, stage));
  if (units == 0) return 0;
  std::vector<TaskId>& batch = early_batch_;
  batch.clear();
  while (batch.size() < units) {
    const TaskId x = ctx_.rt->pop_early(s);
    if (x == kNoTask) break;
    batch.push_back(x);
  }
  if (batch.empty()) return 0;
  t += costs_.dispatch_pop;
  int staged = 0;
  for (std::size_t bi = 0; bi < batch.size(); ++bi) {
    Task* cp = ctx_.rt->early_entry(batch[bi]);
    if (!cp) continue;  // released or retired: dropped
    Task& c = *cp;
    std::vector<int>& bucket = units_;
    bucket.clear();
    if (mix) {
      const MixPlacement wanted = stage == Stage::Idle ? MixPlacement::Running : MixPlacement::Pending;
      for (int ci : clusters_)
        if (classify_mix(ci, c.active_mask) == wanted) bucket.push_back(ci);
    } else {
      dispatchable(s, stage, bucket);
    }
    if (bucket.empty()) {  // this and the rest of the pop back, one push
      t += costs_.ready_push;
      for (std::size_t r = bi; r < batch.size(); ++r) ctx_.rt->requeue_early(s, batch[r]);
      break;
    }
    const int n = std::min(c.blocks_remaining(), static_cast<int>(bucket.size()));
    if (n == 0) continue;
    const int first = c.next_block;
    claim(c, n, true, t);  // re-pushes the candidate if blocks remain
    for (int b = 0; b < n; ++b) prepare(c, bucket[static_cast<std::size_t>(b)], first + b, t);
    flush(true, t);
    staged += n;
  }
  return staged;
}

// ------------------------------------------------------------------ drain

// scheduler_completion.cpp handle_drain_mode: every thread acknowledges (it
// stops placing work); the coordinator (thread 0) checks the machine's idle
// capacity for the cohort (count_global_available) and, when it is there,
// releases the staging; every thread then stages the cohort on its own idle
// cores (stage_sync_start_cores) in parallel, and the coordinator reopens the
// gate once all have. While capacity is short the threads only poll
// completions (the loop's `continue` skips dummy, dispatch and release) and
// retry in the next iteration.
int SchedulerThread::drain_phase(Time& t) {
  Drain& d = ctx_.drain;
  if (!d.acked[index_]) {
    d.acked[index_] = 1;  // this thread stops placing work
    if (index_ != 0) ctx_.wake_all();
  }
  const Time drain_t0 = t;
  if (index_ == 0 && !d.go) {
    if (!std::all_of(d.acked.begin(), d.acked.end(), [](char a) { return a != 0; })) return 0;
    sync(t);
    if (global_available_units(*d.task, d.gated) < d.task->blocks_remaining()) return 0;  // keep draining
    d.go = true;
    ctx_.wake_all();
  }
  if (!d.go || d.staged[index_]) return 0;
  sync(t);
  Task* task = d.task;
  const Staged st = stage_cohort(*task, d.gated, true, t);
  // Its stage_done bit is set when its staging ends, not before.
  sync(t);
  d.running_staged += st.running_cores;
  d.staged[index_] = 1;
  ctx_.wake_all();
  // Followers spin until the coordinator reopens the gate; the coordinator
  // until every thread has staged, then reopens it.
  auto all_staged = [&] { return std::all_of(d.staged.begin(), d.staged.end(), [](char a) { return a != 0; }); };
  while (!ctx_.stop && (index_ == 0 ? !all_staged() : ctx_.drain.active)) sleep_for_wake(kNever);
  t = std::max(t, now());
  if (index_ == 0 && !ctx_.stop) {
    // The gate reopens at the coordinator's time: followers spin until
    // sync_start_pending is 0 and resume no earlier.
    sync(t);
    // Seed the rendezvous of a gated cohort, reopen the gate, then retry the
    // rendezvous: the producers may have released it during the staging.
    const bool gated = d.gated;
    if (gated) task->running_slot_count = d.running_staged;
    d = Drain{};
    ctx_.wake_all();
    if (gated) retry_rendezvous(*task, t);
  }
  // The Drain record spans this thread's whole handle_drain_mode call, to
  // its return once the gate reopened (the coordinator's after the reopen and
  // the rendezvous retry): resolve_and_dispatch stamps its end after the
  // call, for a thread that reached staging.
  if (st.blocks > 0) record(SchedPhase::Drain, drain_t0, t, st.blocks);
  return 1;
}

bool SchedulerThread::drain_has_work() const {
  const Drain& d = ctx_.drain;
  if (!d.active) return false;
  if (!d.acked[index_]) return true;  // its ack is due
  if (d.go) return !d.staged[index_];
  return index_ == 0 && std::all_of(d.acked.begin(), d.acked.end(), [](char a) { return a != 0; });
}

int SchedulerThread::global_available_units(const Task& task, bool include_pending) const {
  int units = 0;
  for (SchedulerThread* th : ctx_.threads) units += th->available_units(task, include_pending);
  return units;
}

int SchedulerThread::available_units(const Task& task, bool include_pending) const {
  if (!include_pending) return static_cast<int>(idle_units(task).size());
  if (task.shape != Shape::MIX)
    return static_cast<int>(dispatchable(task.shape, Stage::Idle).size() + dispatchable(task.shape, Stage::Pending).size());
  return static_cast<int>(split_clusters(task).size());
}

std::vector<int> SchedulerThread::split_clusters(const Task& task) const {
  // get_mix_split_cluster_offset_states: every used core has a free slot
  // (idle, or running without a pending payload).
  const CoreMap& m = ctx_.cores->map();
  std::vector<int> out;
  for (int ci : clusters_) {
    bool ok = true;
    for (int l = 0; l < kNumLanes; ++l) {
      if (!(task.active_mask >> l & 1)) continue;
      const int c = m.of_lane(ci, l);
      if (taken(c) || (!ctx_.cores->idle(c) && ctx_.cores->pending_occupied(c))) ok = false;
    }
    if (ok && task.active_mask) out.push_back(ci);
  }
  return out;
}

std::vector<int> SchedulerThread::idle_units(const Task& task) const {
  if (task.shape != Shape::MIX) return dispatchable(task.shape, Stage::Idle);
  // get_mix_running_cluster_offset_states: every used core of the cluster idle.
  std::vector<int> out;
  for (int ci : clusters_)
    if (classify_mix(ci, task.active_mask) == MixPlacement::Running) out.push_back(ci);
  return out;
}

// stage_sync_start_cores: this thread's share of a cohort, claimed and
// published batch by batch on its own units: idle ones (running slots); for a
// gated cohort also pending slots, a MIX block split core by core (each used
// core idle -> running slot, busy -> pending slot). A gated cohort's blocks
// wait for the rendezvous; the cores they put in running slots are counted.
SchedulerThread::Staged SchedulerThread::stage_cohort(Task& task, bool gated, bool record_phases, Time& t) {
  const CoreMap& m = ctx_.cores->map();
  const bool mix = task.shape == Shape::MIX;
  Staged st;
  auto stage = [&](const std::vector<int>& valid, bool to_pending) {
    const int n = std::min(task.blocks_remaining(), static_cast<int>(valid.size()));
    if (n == 0) return;
    // claim_block_range: this thread's share of the block indices.
    const int first = task.next_block;
    task.next_block += n;
    ++task.dispatch_ops;
    if (gated) task.staged_blocks += n;
    ctx_.blocks_dispatched += static_cast<std::uint64_t>(n);
    const Time prep_t0 = t;
    int subtasks = 0;
    for (int b = 0; b < n; ++b) {
      const int unit = valid[static_cast<std::size_t>(b)];
      if (gated && mix)
        for (int l = 0; l < kNumLanes; ++l)
          if ((task.active_mask >> l & 1) && ctx_.cores->idle(m.of_lane(unit, l))) ++st.running_cores;
      subtasks += prepare(task, unit, first + b, t);
    }
    const Time pub_t0 = t + costs_.wmb;
    if (record_phases) record(SchedPhase::DrainPrepare, prep_t0, pub_t0, subtasks);
    publish(gated, t);
    if (record_phases) record(SchedPhase::DrainPublish, pub_t0, t, subtasks);
    if (gated) task.staged_cores += subtasks;
    if (gated && !mix && !to_pending) st.running_cores += subtasks;
    st.blocks += n;
  };
  if (gated && mix) {
    stage(split_clusters(task), true);
  } else {
    stage(idle_units(task), false);
    if (gated) stage(dispatchable(task.shape, Stage::Pending), true);
  }
  return st;
}

}  // namespace npusim
