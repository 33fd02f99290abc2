// The tensormap-and-ringbuffer runtime's rules, in plain C++ (no SystemC):
// scopes, submission with dependency discovery, the four rings and their
// reclaim, fanin/fanout refcounts, ready queues, completion and release, the
// error latch. SystemC modules own time: they call these functions at the
// simulated moment the real thread would, and charge the platform's costs
// using the counts returned.
//
// One rule, one place: capacity rules live in Ring, overlap and staleness in
// TensorMap, and the task life cycle (simpler's tensormap_and_ringbuffer RUNTIME_LOGIC.md) here.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/platform.h"
#include "models/common/run_config.h"
#include "models/runtime/data_store.h"
#include "models/runtime/error_codes.h"
#include "models/runtime/orch_ops.h"
#include "models/runtime/ring.h"
#include "models/runtime/ring_queue.h"
#include "models/runtime/task.h"
#include "models/runtime/tensormap.h"

namespace npusim {

// One discovered dependency edge of a submit, before merging (deps.json lists
// every one; "a pair may repeat"). No tensor views: the observers read the
// producer and the flags (deps.json's writer finds the views itself), and two
// views made an edge ~440 bytes, zeroed and copied for every edge of every
// submit.
struct EdgeInfo {
  TaskId pred = kNoTask;
  int arg = -1;  // -1 for explicit deps
  EdgeSource source = EdgeSource::Explicit;
  std::uint8_t flags = kDepWait | kDepRetain;
  Overlap overlap = Overlap::Other;  // tensormap edges
};

struct ScopeSample {
  const std::string* site = nullptr;
  bool begin = true;
  int depth = 0;
  int ring = 0;
  std::uint64_t task_window_start = 0, task_window_end = 0;
  std::uint64_t heap_start = 0, heap_end = 0;
  std::uint64_t dep_pool_start = 0, dep_pool_end = 0;
  std::uint64_t tensormap = 0;
};

// Observers of the runtime's events (recording and wake-ups). All optional.
class RuntimeHooks {
 public:
  virtual ~RuntimeHooks() = default;
  // A task was submitted: `req` is what the orchestration passed (the record
  // dep_gen captures), `edges` the dependencies the runtime discovered for it
  // (empty when no hook reads them: reads_edges).
  virtual void on_submitted(const Task&, const SubmitRequest& /*req*/, const std::vector<EdgeInfo>&) {}
  virtual void on_ready(Task&) {}
  virtual void on_early_candidate(Task&) {}
  virtual void on_completed(Task&) {}
  virtual void on_retired(Task&) {}          // slot reclaimed (still intact)
  virtual void on_released(Task&) {}         // its own on_task_release ran (its producers' pins dropped)
  virtual void on_ring_progress(int /*ring*/) {}
  virtual void on_scope_sample(const ScopeSample&) {}
  virtual void on_error(const struct LatchedError&) {}
  // A hazard the device would not report: `kind` names the check
  // (e.g. "stale_predicate"), `message` says what and where.
  virtual void on_warning(const std::string& /*kind*/, const std::string& /*message*/) {}
  // Whether these hooks read what the runtime keeps only for a reader: a
  // submit's edge records (on_submitted's `edges`) and a producer's
  // consumers (Task::all_consumers). Asked once, at the first edge a
  // submit finds; with no reader the runtime builds neither (the edge records
  // were ~84 instructions per task with every output off). Yes unless said.
  virtual bool reads_edges() const { return true; }
};

enum class Resource : std::uint8_t { None, TaskWindow, Heap, DepPool, FaninSpill, TensorMap };

inline const char* resource_name(Resource r) {
  switch (r) {
    case Resource::None: return "none";
    case Resource::TaskWindow: return "task window";
    case Resource::Heap: return "heap";
    case Resource::DepPool: return "dep pool";
    case Resource::FaninSpill: return "fanin spill pool";
    case Resource::TensorMap: return "tensormap";
  }
  return "?";
}

// host_build_graph's boot scan: what it did with one task.
enum class BootClass : std::uint8_t { Skipped, Ready, Waiting };
// The graph's roots per ready queue (Runtime::boot_roots).
struct BootRoots {
  std::array<std::uint64_t, 3> ready{}, sync{};  // by shape
  std::uint64_t dummy = 0;
  std::uint64_t largest() const {
    std::uint64_t m = dummy;
    for (int s = 0; s < 3; ++s) m = std::max({m, ready[s], sync[s]});
    return m;
  }
};

// Counts of the work one submit did, for the orchestrator's cost model.
struct SubmitWork {
  int args = 0;
  int lookups = 0;
  std::uint64_t lookup_entries = 0;  // bucket-chain entries the lookups walked
  int ready_pushes = 0;
  int predicate_evals = 0;
  // Early-staged consumers made ready: their doorbells are to be rung where
  // the fanout walk reached them (pto_scheduler.h on_task_complete rings
  // inline), i.e. after `edges` edges and the pushes and predicate reads
  // made before them.
  struct Released {
    Task* task;
    int edges;
    int ready_pushes;
    int predicate_evals;
  };
  std::vector<Released> released;
  int walk_edges = 0;  // edges of the current fanout walk visited so far
  // As a new SubmitWork, `released` keeping its capacity (a submit's reset
  // made and freed a vector).
  void reset() {
    args = lookups = 0;
    lookup_entries = 0;
    ready_pushes = predicate_evals = 0;
    released.clear();
    walk_edges = 0;
  }
  // What making those tasks ready costs the thread that did it: the pushes
  // onto ready queues and the predicate reads.
  Time ready_cost(const SchedCosts& c) const { return ready_cost(c, ready_pushes, predicate_evals); }
  static Time ready_cost(const SchedCosts& c, int pushes, int evals) {
    return static_cast<Time>(pushes) * c.ready_push + static_cast<Time>(evals) * c.predicate_eval;
  }
};

// A submit in progress: submission can stall on a ring resource part-way and
// resume, in the runtime's order (pto_orchestrator.cpp submit_task_common):
// task window, then heap (the allocator), the fanin spill pool (during the
// lookups), the tensormap (before the inserts), then the dep pool (wiring).
struct SubmitProgress {
  enum class Stage : std::uint8_t { Start, Allocated, LookedUp, Reserved, Wired, Done };
  Stage stage = Stage::Start;
  Task* task = nullptr;
  int ring = 0;
  std::uint64_t heap_bytes = 0;
  std::uint64_t wait_edges = 0;
  std::uint64_t spill = 0;
  std::uint64_t inserts = 0;
  // STEP 6's decision, taken once at the first submit_wire: some claimed WAIT
  // producer was still running, so the submit needs `wait_edges` dep-pool
  // entries free before it wires, however many producers complete meanwhile.
  bool wire_decided = false, wire_live = false;
  std::vector<EdgeInfo> edges;
  std::vector<FaninRef> merged;
  // merged[i]'s producer: pinned (fanout_count) from its claim until the
  // commit, so its slot stays where it is; wiring and commit read it here
  // instead of finding it again.
  std::vector<Task*> producers;
  // Per tensormap insert of the commit, in argument order: the lookup's
  // view_overlap(v, v) of the same view, or TensorMap::kSelfUnknown.
  std::vector<std::uint8_t> self_hints;
  SubmitWork work;
  void reset() {
    stage = Stage::Start;
    task = nullptr;
    ring = 0;
    heap_bytes = wait_edges = spill = inserts = 0;
    wire_decided = wire_live = false;
    edges.clear();
    merged.clear();
    producers.clear();
    self_hints.clear();
    work.reset();
  }
};

struct SubmitStatus {
  enum class Kind : std::uint8_t { Done, Blocked, Fatal };
  Kind kind = Kind::Done;
  Resource blocked = Resource::None;
  int ring = 0;
  ErrorCode code = ErrorCode::None;
  static SubmitStatus done() { return {}; }
  static SubmitStatus block(Resource r, int ring) { return {Kind::Blocked, r, ring, ErrorCode::None}; }
  static SubmitStatus fatal(ErrorCode c, int ring) { return {Kind::Fatal, Resource::None, ring, c}; }
};

struct LatchedError {
  ErrorCode code = ErrorCode::None;
  // Who latched it: a scheduler thread writes sched_error_code, everyone
  // else (the orchestrator, its API, the allocators) orch_error_code,
  // whatever the code's value (rt_report_fatal stores any code it is given,
  // pto_runtime2.cpp orch_mark_fatal).
  bool by_scheduler = false;
  std::string message;  // the device's FATAL line text
  Time time = 0;
  int ring = -1;        // the ring involved, if any
  // SCHEDULER_TIMEOUT from the watchdog: the thread that latched it and its
  // idle iterations and the time since its last progress
  // (handle_timeout_exit's line).
  int thread = -1;
  std::uint64_t idle_iterations = 0;
  Time since = 0;
};

class Runtime {
 public:
  Runtime(const Platform& platform, const RunConfig& config, DataStore& data,
          RuntimeHooks* hooks = nullptr);

  const Platform& platform() const { return platform_; }
  const RunConfig& config() const { return config_; }
  DataStore& data() { return data_; }

  // ------------------------------------------------------------ orchestrator
  // Opens the implicit root scope (depth 0, ring 0).
  void begin_orchestration();
  // Returns false when the scope cannot open: beyond the nesting limit the
  // runtime's assert fires (latched as AICPU_ASSERT); an auto scope inside a
  // manual one is INVALID_ARGS.
  bool scope_begin(ScopeMode mode, const std::string& site, Time now = 0);
  // Closes the innermost scope: returns the number of tasks it released.
  std::size_t scope_end();
  // Closes the root scope and marks orchestration done.
  void end_orchestration();

  // Submits a kernel task (req.kernel set), a dummy task (req.kernel null) or,
  // with `alloc`, an alloc_tensors task whose outputs are req.args. Three
  // steps, as the real submit spends its time between them, each resumable
  // (call again with the same progress after a Blocked status):
  // `submit_prepare` takes the slot and heap, discovers the fanin (pinning
  // each live producer) and reserves fanin-spill and tensormap space;
  // `submit_wire` reserves the dep-pool entries the wiring needs (none when
  // every producer had completed at its first call, which decides once: a
  // retry after a Blocked waits for room even if the producers have completed
  // since); `submit_commit` inserts, wires and
  // publishes the task (running `submit_wire` first if it was not called).
  SubmitStatus submit_prepare(const SubmitRequest& req, SubmitProgress& p, bool alloc, Time now);
  SubmitStatus submit_wire(SubmitProgress& p);
  void submit_commit(const SubmitRequest& req, SubmitProgress& p, Time now);
  // The OUTPUT tensors of a finished submit, in arg order.
  void outputs_of(const Task& t, std::vector<Tensor>& out) const;

  // get_tensor_data (pto_runtime2.cpp wait_for_tensor_ready): the producers a
  // read waits for, in order: the tensor's creator, then every writer the
  // tensormap holds for an overlapping region (INOUT / OUTPUT_EXISTING).
  void read_producers(const Tensor& t, std::vector<TaskId>& out);
  // Has the task in `id`'s slot completed? A retired task's slot reads as
  // done, unless a newer task of the same ring reuses the slot: the device
  // reads the slot, so it then waits for that task.
  bool producer_done(TaskId id) const;
  std::int64_t read(const Tensor& t, std::int64_t element) const { return data_.get(t.buffer, element); }
  // set_tensor_data, after producer_done: has every consumer of this
  // producer released it?
  bool consumers_done(TaskId id);

  bool orchestration_done() const { return orch_done_; }

  // host_build_graph's boot scan (scheduler_cold_path.cpp
  // classify_partition): after the whole graph is built, each AICPU thread
  // classifies its slice of the task ids; `local` is a ring-0 slot index.
  BootClass boot_classify(std::uint64_t local, Time now, SubmitWork& work);
  BootRoots boot_roots();  // what the whole scan pushes, per queue
  int scope_depth() const { return static_cast<int>(scopes_.size()) - 1; }
  bool in_manual_scope() const { return !scopes_.empty() && scopes_.back().mode == ScopeMode::Manual; }

  // --------------------------------------------------------------- scheduler
  // Ready queues: shape AIC/AIV/MIX, normal or sync-start tier.
  // Inline: the scheduler pops at every dispatch stage, often of an empty queue.
  Task* pop_ready(Shape s, bool sync_tier) {
    auto& q = (sync_tier ? sync_queues_ : ready_queues_)[static_cast<int>(s)];
    if (q.empty()) return nullptr;
    Task* t = q.front();
    q.pop_front();
    return t;
  }
  Task* peek_ready(Shape s, bool sync_tier) const {
    const auto& q = (sync_tier ? sync_queues_ : ready_queues_)[static_cast<int>(s)];
    return q.empty() ? nullptr : q.front();
  }
  void requeue(Task& t);  // re-push a task with blocks remaining (to the tail)
  std::size_t queue_size(Shape s, bool sync_tier) const {
    return (sync_tier ? sync_queues_ : ready_queues_)[static_cast<int>(s)].size();
  }
  // Inline: the scheduler asks at every iteration, mostly of empty queues.
  bool any_ready() const {
    for (int s = 0; s < 3; ++s)
      if (!ready_queues_[s].empty() || !sync_queues_[s].empty()) return true;
    return false;
  }
  // Tasks lost to a full ready queue, in order (push_ready_entry).
  const std::vector<TaskId>& dropped_ready() const { return dropped_ready_; }
  Task* pop_dummy();
  std::size_t dummy_queue_size() const { return dummy_queue_.size(); }

  // Early dispatch (§5.8): candidates waiting to be staged, per shape.
  // An entry is the task's id, not its slot: it may outlive the task (a
  // stale entry is dropped only when popped), and a retired task's slot may
  // hold a newer task or be gone. Upstream tags each entry with the task id
  // it was pushed for and a pop skips one whose slot has moved on
  // (scheduler_dispatch.cpp, early_dispatch_shape: pop_batch_tagged and the
  // task_id_snapshots test); here the id resolves through the ring, to null
  // once the task has retired.
  // pop_early pops the front entry as it is, a stale one included
  // (early_entry() is null for it: released or routed since it was queued,
  // or retired); any_early drops stale entries from the fronts.
  TaskId pop_early(Shape s);
  static bool early_candidate(const Task& t) { return t.early == Task::Early::Staging && !t.ready_claimed; }
  // The task an early entry names while it is still a candidate, else null.
  Task* early_entry(TaskId id) {
    Task* t = find(id);
    return t && early_candidate(*t) ? t : nullptr;
  }
  std::size_t early_queue_size(Shape s) const { return early_queues_[static_cast<int>(s)].size(); }
  void requeue_early(Shape s, TaskId id) { early_queues_[static_cast<int>(s)].push_back(id); }
  void requeue_early(Task& t) { requeue_early(t.shape, t.id); }
  // The sync-start candidates' own queue, one for every shape
  // (early_sync_start_queue): popped one per early pass, its entries as they
  // are (a stale one included: null).
  Task* pop_early_sync();
  void requeue_early_sync(Task& t) { early_sync_queue_.push_back(t.id); }
  // A sync-start candidate's owner gives it up (cancel_early_sync_drain):
  // back to the ready sync-start queue if its producers released it
  // meanwhile, else back to the early sync-start queue.
  void cancel_early_sync(Task& t);
  // Whether a sync-start candidate's cohort may launch now (the rendezvous).
  static bool rendezvous_ready(const Task& t) {
    return t.staged_cores > 0 && !t.launched && t.early == Task::Early::Released &&
           t.running_slot_count == t.staged_cores;
  }
  // Inline when every early queue is empty (most of the scheduler's
  // iterations), else the walk that drops stale front entries.
  bool any_early() {
    if (early_sync_queue_.empty() && early_queues_[0].empty() && early_queues_[1].empty() &&
        early_queues_[2].empty())
      return false;
    return any_early_walk();
  }
  // Every block of `t` is placed and launch-visible: flagged producers tell
  // their consumers, which may become early candidates (§5.8 chaining).
  void task_published(Task& t, Time now);

  // One FIN of one sub-task observed; true when it was the task's last.
  bool subtask_finished(Task& t) { return ++t.completed_subtasks >= t.total_subtasks; }
  // on_task_complete: COMPLETED, writes applied, fanout walked (consumers
  // released, newly ready ones routed). Returns consumers visited; adds the
  // tasks made ready to `work.ready_pushes` / `work.predicate_evals`.
  int complete_task(Task& t, Time now, SubmitWork& work);
  // on_task_release: releases RETAIN pins on producers, then checks the task
  // itself for CONSUMED.
  void release_task(Task& t);

  // Termination (§5.5 step 1): orchestration done and every task completed.
  bool finished() const { return orch_done_ && completed_ >= total_submitted(); }

  // -------------------------------------------------------------- inspection
  Ring& ring(int r) { return rings_[r]; }
  const Ring& ring(int r) const { return rings_[r]; }
  TensorMap& tensormap() { return tensormap_; }
  Task* find(TaskId id) {  // inline: a few calls per edge on the submit and completion paths
    return id == kNoTask ? nullptr : rings_[task_ring(id)].find(task_local(id));
  }
  const Task* find(TaskId id) const {
    return id == kNoTask ? nullptr : rings_[task_ring(id)].find(task_local(id));
  }
  bool retired(TaskId id) const { return rings_[task_ring(id)].retired(task_local(id)); }
  std::uint64_t total_submitted() const;
  std::uint64_t completed() const { return completed_; }
  std::uint64_t alloc_tasks() const { return alloc_count_; }
  std::uint64_t dummy_tasks() const { return dummy_count_; }
  std::uint64_t predicated_skips() const { return predicated_skip_count_; }
  // Tasks submitted in the innermost open scope.

  struct ScopeInfo {
    ScopeMode mode = ScopeMode::Auto;
    std::string site;
    int depth = 0;
    int ring = 0;
    std::vector<TaskId> tasks;
  };
  const std::vector<ScopeInfo>& open_scopes() const { return scopes_; }
  // The oldest task of `ring` still pinned by an open scope, if it is the
  // ring's reclaim head (a provable head-of-line deadlock, §3.4).
  bool head_pinned_by_open_scope(int ring) const;

  // ------------------------------------------------------------------ errors
  // Two latches, as the shared-memory header has them (pto_shared_memory.h
  // orch_error_code, sched_error_code): the schedulers' (by_scheduler) and
  // everyone else's; first writer wins in each. Returns
  // true if this call latched it. The scheduler threads stop on either
  // (scheduler_cold_path.cpp check_idle_fatal_error); the orchestrator's
  // waits break only on its own (pto_runtime2.cpp wait_for_tensor_ready,
  // pto_ring_buffer.h), so after a scheduler fatal it goes on until it ends
  // or latches a code of its own. An assert aborts the AICPU: it takes the
  // orchestrator's latch, which stops every thread.
  bool latch_error(ErrorCode code, const std::string& message, Time now, int ring = -1);
  bool latch_error(const LatchedError& e);
  // The error the host reports: the orchestrator's when there is one
  // (pto_runtime_status.h runtime_status_from_error_codes), else the
  // schedulers'.
  const LatchedError& error() const { return has_orch_error() ? orch_error_ : sched_error_; }
  const LatchedError& orch_error() const { return orch_error_; }
  const LatchedError& sched_error() const { return sched_error_; }
  bool has_error() const { return has_orch_error() || sched_error_.code != ErrorCode::None; }
  bool has_orch_error() const { return orch_error_.code != ErrorCode::None; }

  static int ring_of_depth(int depth) { return depth < kNumRings - 1 ? depth : kNumRings - 1; }
  // The deepest nesting of user scopes begin_scope accepts: its stack holds
  // limits.max_scope_depth entries, the root scope included
  // (pto_orchestrator.cpp PTO2OrchestratorState::begin_scope).
  static int max_user_scope_depth(const Platform& p) { return p.limits.max_scope_depth - 1; }
  // The most blocks a sync_start launch of this shape may have: every AIV
  // core for an AIV task, every cluster otherwise (pto_orchestrator.cpp
  // submit_task, total_aiv_count / total_cluster_count).
  static int sync_start_limit(const Platform& p, Shape s) {
    return s == Shape::AIV ? p.topo.aiv_cores() : p.topo.clusters;
  }
  // host_build_graph caps a task's distinct producers (PTO2_MAX_FANIN,
  // host_build_graph pto_runtime2_types.h): it has no spill pool.
  static constexpr std::size_t kWholeGraphMaxFanin = 128;
  // Heap bytes of a task's packed OUTPUT block (§2.6).
  // (The device's int32 sum wraps at 2 GiB: see runtime.cpp.)
  std::uint64_t packed_output_bytes(const std::vector<SubmitArg>& args) const;
  std::uint64_t packed_output_total(const std::vector<SubmitArg>& args) const;  // unwrapped, padded
  std::uint64_t packed_block_of(std::uint64_t total) const;  // the block for that total (wrapped as the device's int32)

 private:
  bool any_early_walk();
  void route_ready(Task& t, Time now, SubmitWork& work);
  void maybe_candidate(Task& c);
  void register_wake(Task& c);  // host_build_graph: wait on the last unmet producer
  void check_predicate_producers(const Task& t, const std::string& path);
  bool waits_on(const Task& t, const Task& w);
  void check_consumed(Task& t);
  void consume(Task& t);
  void sample_scope(const ScopeInfo& s, bool begin);
  void record_edge(SubmitProgress& p, EdgeSource source, int arg, TaskId pred, std::uint8_t flags, Overlap overlap);
  void add_edge(SubmitProgress& p, TaskId pred, std::uint8_t flags);  // claims (or merges) the producer
  __attribute__((always_inline)) inline void discover_fanin(const SubmitRequest& req, SubmitProgress& p);
  void commit(const SubmitRequest& req, SubmitProgress& p, Time now);
  void reclaim_tensormap();
  // host_build_graph: a resource the whole graph does not fit is a fatal at once.
  SubmitStatus graph_exhausted(Resource r, int ring, Time now);

  const Platform& platform_;
  RunConfig config_;
  DataStore& data_;
  RuntimeHooks* hooks_;
  RuntimeHooks null_hooks_;
  bool whole_graph_;  // host_build_graph: the whole graph is built before the device runs
  // A submit's edge records and Task::all_consumers have a reader
  // (RuntimeHooks::reads_edges): -1 until the first edge asks.
  int keep_edges_ = -1;
  bool keep_edges() {
    if (keep_edges_ < 0) keep_edges_ = hooks_->reads_edges() ? 1 : 0;
    return keep_edges_ != 0;
  }

  std::array<Ring, kNumRings> rings_;
  TensorMap tensormap_;
  std::vector<ScopeInfo> scopes_;
  std::vector<ScopeInfo> spare_scopes_;  // closed scopes' records, for reuse (scope_begin)

  // FIFO rings reused in place: no allocation per push once warm.
  std::array<RingQueue<Task*>, 3> ready_queues_;
  std::array<RingQueue<Task*>, 3> sync_queues_;
  RingQueue<Task*> dummy_queue_;
  std::vector<TaskId> dropped_ready_;
  // A push onto a queue with room is inline; a full queue is push_full's.
  void push_ready_entry(RingQueue<Task*>& q, Task& t, Time now) {
    if (q.size() < ready_capacity_) {
      q.push_back(&t);
      return;
    }
    push_full(t, now);
  }
  void push_full(Task& t, Time now);
  std::uint64_t ready_capacity_ = 0;  // the queues' bound (push_ready_entry), set at construction
  std::array<RingQueue<TaskId>, 3> early_queues_;  // task ids (pop_early)
  RingQueue<TaskId> early_sync_queue_;

  bool orch_done_ = false;
  std::uint64_t completed_ = 0;
  std::uint64_t alloc_count_ = 0;
  std::uint64_t dummy_count_ = 0;
  std::uint64_t predicated_skip_count_ = 0;
  std::uint64_t submit_counter_ = 0;
  LatchedError orch_error_, sched_error_;
  std::vector<TensorMap::Match> scratch_matches_;
};

}  // namespace npusim
