// The AICores: `clusters` x (one AIC + two AIVs) (simpler's
// tensormap_and_ringbuffer aicore_executor.cpp), and the AICPU-side view of each core's registers.
//
// Each core is a 2-deep pipeline: a running slot and a pending slot. The
// AICPU writes a token into DATA_MAIN_BASE; the core picks it up (at once if
// it is spinning, after its current kernel if it is busy), sets up, ACKs in
// COND, runs the kernel's phases, and writes FIN. The AICPU learns all this
// only by reading COND, which `poll` decodes exactly as the runtime does.
//
// Time is durations, not clocks. When a block is dispatched its phases are
// laid out at once as far as they can be timed locally (compute). A phase
// that depends on other cores (a cross-core slot push or pop, a barrier, any
// GM access: load, store, fence, cacheinvalid, through the GM model) or
// a gated start (early dispatch) is executed at its simulated time by one
// SC_METHOD with a private time-ordered queue, through a PhaseHandler; when
// it completes, the rest of the block is laid out again. A core therefore
// costs simulation events only for the phases that need them.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <queue>
#include <vector>

#include <systemc>

#include "models/common/cluster_set.h"
#include "models/common/core_map.h"
#include "models/common/platform.h"
#include "models/common/run_config.h"
#include "models/runtime/observer.h"
#include "models/runtime/task.h"

namespace npusim {

// A block the AICPU saw finish.
struct FinishedBlock {
  Task* task;
  int record;  // index into task->blocks
};

// Where a core is in a block, for a PhaseHandler.
struct PhaseCtx {
  int core;
  int cluster;
  Task* task;
  int block;
  int block_num;
  int lane;           // the kernel lane whose body runs (kLaneAic / kLaneAiv0 / kLaneAiv1)
  const Phase* phase;
};

// Executes the phases that depend on other cores, at their simulated time.
class PhaseHandler {
 public:
  virtual ~PhaseHandler() = default;
  // Core `ctx.core` reaches `ctx.phase` at time `t` (the current simulated
  // time). Return the time the phase completes (>= t), or kNever if the core
  // must wait; the handler then calls AicoreComplex::resume later.
  virtual Time execute(const PhaseCtx& ctx, Time t) = 0;
  // Does this handler take this phase? (HARD and SOFT syncall go to
  // different handlers.) The answer may depend on the phase's kind, `peer`
  // and `sync_mode` only: the complex asks once per such triple, when a
  // handler is added, and looks the answer up per phase.
  virtual bool handles(const Phase& ph) const = 0;
  // Block `block` of `task` on `core` ends at `end` (known once its last
  // phase executed; `end` may lie ahead of the current time). The GM model
  // writes the block's stores back and drops its cache here.
  virtual void block_end(int /*core*/, const Task& /*task*/, int /*block*/, Time /*end*/) {}
  // Whether this handler overrides block_end: the complex calls only those
  // that do (one of the three a chip adds, the GM model's), not a virtual
  // call per handler and block ending.
  virtual bool ends_blocks() const { return false; }
  // A timer this handler set with AicoreComplex::set_timer fires at `t` while
  // the core still waits inside one of its phases (a timeout, e.g. a SOFT
  // barrier that stops polling). Return the time the phase completes, or
  // kNever to keep waiting.
  virtual Time on_timer(const PhaseCtx& /*ctx*/, Time /*t*/) { return kNever; }
};

// The next dispatch token of a core whose dispatch counter is `seq`
// (scheduler_dispatch.cpp prepare_subtask_to_core: `dispatch_seq++`, the
// token its low 31 bits; a token in the reserved range from
// AICORE_EXIT_SIGNAL (0x7FFFFFF0) on is skipped to the next multiple of
// 2^31, token 0, an even skip that keeps the payload buffer's parity,
// `task_id & 1`). Advances `seq`; tokens run 1, 2, ..., 0x7FFFFFEF, 0, 1, ...
inline std::uint32_t next_dispatch_token(std::uint64_t& seq) {
  constexpr std::uint64_t kMask = 0x7FFFFFFFu;      // TASK_ID_MASK
  constexpr std::uint64_t kReserved = 0x7FFFFFF0u;  // AICORE_EXIT_SIGNAL and above
  ++seq;
  if ((seq & kMask) >= kReserved) seq += kMask - (seq & kMask) + 1;
  return static_cast<std::uint32_t>(seq & kMask);
}

class AicoreComplex : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(AicoreComplex);
  AicoreComplex(sc_core::sc_module_name name, const Platform& platform, const RunConfig& config,
                SimObserver* observer);

  const CoreMap& map() const { return map_; }
  void add_handler(PhaseHandler* h);
  // The earliest time the complex's SC_METHOD is due to act (its queue's
  // first event), kNever when nothing is queued: the AICPU clock runs ahead
  // of the kernel only up to before this time. Kept as the queue changes, so
  // the clock reads it where it stands (next_event_time()) at a hand-over.
  Time next_event() const { return next_event_; }
  const Time* next_event_time() const { return &next_event_; }

  // ------------------------------------------------ AICPU view (scheduler side)
  bool idle(int core) const { return cores_[core].running < 0; }
  // A second token may be written: running, its ACK seen, no pending yet.
  bool pending_free(int core) const {
    const Core& c = cores_[core];
    return c.running >= 0 && c.pending < 0 && !c.pending_occupied;
  }
  // The latest token written and not yet ACKed (CoreTracker pending_occupied):
  // no further block may be written to this core.
  bool pending_occupied(int core) const { return cores_[core].pending_occupied; }

  // The same facts for a group of clusters (one scheduler thread's) as bit
  // sets, kept as the cores change: per lane, the clusters whose core of that
  // lane is idle, those whose core is pending_occupied and those whose core is
  // parked (below), by the cluster's index in the group. (CoreTracker keeps
  // them as bit masks too.)
  struct ClusterView {
    using Word = ClusterSet::Word;
    // The nine words of 64 clusters (idle, occupied, parked per lane) and
    // which of their bits name a cluster, side by side: the scheduler asks
    // them together in every iteration (its own and its peers'), and a
    // thread's clusters fit one group on any platform up to 64 clusters per
    // thread, so a question reads one or two cache lines where nine
    // ClusterSets (136 bytes apart) took nine.
    struct Group {
      Word idle[kNumLanes] = {}, occupied[kNumLanes] = {}, parked[kNumLanes] = {};
      Word valid = 0;
    };
    // Bumped at every update of one of the group's cores, which follows every
    // change of what next_observable reads (the running and pending slots,
    // pending_occupied, a slot's start and end): an unchanged version means
    // every core's next_observable is unchanged too.
    std::uint64_t version = 0;
    int nwords = 0;  // groups in use: (clusters + 63) / 64
    // Each core's next_observable, by 3 * (its cluster's index) + lane (the
    // scheduler's core order), stored with its bits at every update (an
    // update follows every change of what next_observable reads): the
    // completion walk and the idle skip read it here, a few lines of their
    // own, instead of the core's slots.
    std::vector<Time> obs;
    std::array<Group, ClusterSet::kMaxClusters / 64> g{};
    // The cores the completion phase polls (running, not idle, and not
    // parked: ~idle & ~parked & valid of their lane words), one bit per core
    // in that same order, 63 to a word: core j = 3 * (its
    // cluster's index) + lane is bit j % 63 of word j / 63, so the
    // completion walk and the idle skip (SchedulerThread::for_each_polled)
    // take the polled cores in order with one bit scan each, not three
    // lane words tested per cluster.
    static constexpr int kCoresPerWord = 63;
    std::array<Word, (3 * ClusterSet::kMaxClusters + kCoresPerWord - 1) / kCoresPerWord> polled_cores{};
    int ncore_words = 0;

    void resize(int clusters) {
      obs.assign(static_cast<std::size_t>(3 * clusters), kNever);
      ncore_words = (3 * clusters + kCoresPerWord - 1) / kCoresPerWord;
      nwords = (clusters + 63) / 64;
      for (int i = 0; i < nwords; ++i) {
        const int rest = clusters - 64 * i;
        g[static_cast<std::size_t>(i)].valid = rest >= 64 ? ~Word{0} : (Word{1} << rest) - 1;
      }
    }
    int words() const { return nwords; }
    const Group& group(int i) const { return g[static_cast<std::size_t>(i)]; }
    Word valid(int i) const { return group(i).valid; }
    Word idle(int lane, int i) const { return group(i).idle[lane]; }
    Word occupied(int lane, int i) const { return group(i).occupied[lane]; }
    Word parked(int lane, int i) const { return group(i).parked[lane]; }
    int core_words() const { return ncore_words; }
    // Word `i` of polled_cores: bit b is core 63 * i + b.
    Word polled_core_word(int i) const { return polled_cores[static_cast<std::size_t>(i)]; }
    void set_polled(int k, int lane, bool on) {
      const int j = 3 * k + lane;
      Word& w = polled_cores[static_cast<std::size_t>(j / kCoresPerWord)];
      const Word b = Word{1} << (j % kCoresPerWord);
      w = on ? (w | b) : (w & ~b);
    }
    // The changes whose bits the caller knows (poll's FIN and ACK reads of a
    // core with no pending block, a dispatch): those bits only, where set
    // tests all three. A core that became idle: idle, not occupied, not parked.
    void set_idle(int k, int lane) {
      Group& w = g[static_cast<std::size_t>(k >> 6)];
      const Word b = Word{1} << (k & 63);
      w.idle[lane] |= b;
      w.occupied[lane] &= ~b;
      w.parked[lane] &= ~b;
      set_polled(k, lane, false);
    }
    // A block was just written to the core: running, its token not ACKed.
    void set_dispatched(int k, int lane, bool parked_now) {
      Group& w = g[static_cast<std::size_t>(k >> 6)];
      const Word b = Word{1} << (k & 63);
      w.idle[lane] &= ~b;
      w.occupied[lane] |= b;
      w.parked[lane] = parked_now ? (w.parked[lane] | b) : (w.parked[lane] & ~b);
      set_polled(k, lane, !parked_now);
    }
    void clear_occupied(int k, int lane) {
      g[static_cast<std::size_t>(k >> 6)].occupied[lane] &= ~(Word{1} << (k & 63));
    }
    // One core's bits (cluster `k`, lane `lane`).
    void set(int k, int lane, bool idle_now, bool occupied_now, bool parked_now) {
      Group& w = g[static_cast<std::size_t>(k >> 6)];
      const Word b = Word{1} << (k & 63);
      w.idle[lane] = idle_now ? (w.idle[lane] | b) : (w.idle[lane] & ~b);
      w.occupied[lane] = occupied_now ? (w.occupied[lane] | b) : (w.occupied[lane] & ~b);
      w.parked[lane] = parked_now ? (w.parked[lane] | b) : (w.parked[lane] & ~b);
      set_polled(k, lane, !idle_now && !parked_now);
    }
  };
  // Registers a group (each cluster in at most one); the view stays where it
  // is for the complex's life.
  const ClusterView& add_view(const std::vector<int>& clusters);
  // The running slot is a gated (early-dispatched) block still waiting for its
  // doorbell: the scheduler does not poll such a core.
  bool parked(int core) const {
    const Core& c = cores_[core];
    if (c.running < 0) return false;
    const Slot& s = c.slots[c.running];
    return s.gated && s.start == kNever;
  }
  // The task whose block the AICPU last saw on this core (running slot), or nullptr.
  const Task* running_task(int core) const {
    const Core& c = cores_[core];
    return c.running < 0 ? nullptr : c.slots[c.running].task;
  }
  // What a COND read of `core` at time `t` returns (a diagnostic's read_reg,
  // platform_config.h): the latest ACK or FIN the core wrote that is visible
  // by then, or AICORE_IDLE_VALUE (FIN, id 0x7FFFFFFF) before its first.
  struct CondValue {
    bool fin = true;
    std::uint32_t token = 0x7FFFFFFFu;
  };
  CondValue cond_at(int core, Time t) const;
  // The tokens of the AICPU's running and pending slots (CoreExecState
  // running_reg_task_id / pending_reg_task_id), -1 (AICPU_TASK_INVALID) if none.
  int running_token(int core) const {
    const Core& c = cores_[core];
    return c.running < 0 ? -1 : static_cast<int>(c.slots[c.running].token);
  }
  int pending_token(int core) const {
    const Core& c = cores_[core];
    return c.pending < 0 ? -1 : static_cast<int>(c.slots[c.pending].token);
  }

  // Publishes block `block` (lane `lane`) of `task` to `core` with a
  // DATA_MAIN_BASE store at `t_write`; `record` indexes task->blocks, whose
  // dispatch/thread fields the caller filled. A `gated` block prepares its
  // arguments and then spins on the doorbell before it ACKs and starts.
  std::uint32_t dispatch(int core, Task* task, int block, int lane, int record, Time t_write,
                         bool gated = false);
  // Early dispatch: the doorbell store of a gated block at `t_write`.
  void ring_doorbell(int core, Task* task, int record, Time t_write);

  // One COND read of `core` returning at time `t`: decodes the value as
  // decide_slot_transition does (simpler's
  // tensormap_and_ringbuffer scheduler_context.h) and
  // appends the blocks now known finished; a
  // gated block promoted from the pending to the running slot by the running
  // block's FIN (decide_slot_transition Case 3.3) is stored in `*promoted`.
  void poll(int core, Time t, std::vector<FinishedBlock>& done, FinishedBlock* promoted = nullptr);

  // The earliest time a COND read of this core would decode something new,
  // or kNever if nothing is pending or the time is not known yet. Inline:
  // the completion phase and the idle skip call it for every polled core of
  // every iteration.
  Time next_observable(int core) const;

  // The call made when a core's timeline becomes known later than its
  // dispatch (a barrier released, a slot freed, a doorbell rung): the owning
  // scheduler thread's wake-up.
  void set_wake(int core, void (*fn)(void*), void* arg) {
    cores_[core].wake = fn;
    cores_[core].wake_arg = arg;
  }

  // A PhaseHandler finishing a phase it had made wait (see execute).
  void resume(int core, Time t_done);
  // Calls h->on_timer at time `t` (>= now) if `core` then still waits inside
  // a phase that `h` executes; the handler checks that it is the wait it meant.
  void set_timer(int core, Time t, PhaseHandler* h);

  // Diagnostics.
  Time first_start() const { return first_start_; }
  Time last_end() const { return last_end_; }
  // Cores stopped inside a phase that waits on others (a hang's diagnosis).
  struct Waiting {
    int core;
    Task* task;
    int block;
    int lane;
    const Phase* phase;
    Time since;
  };
  std::vector<Waiting> waiting_cores() const;

 private:
  // What a poll, next_observable and the completion read first come first:
  // a slot's task, record, start, end and gated flag in its first line, and
  // the core's slot indices and view in the core's first line (the slots
  // follow, a line each), so a poll of a cold core misses on two lines
  // instead of three or four.
  struct alignas(64) Slot {
    Task* task = nullptr;
    int record = -1;
    int lane = 0;
    Time start = kNever, end = kNever;
    bool used = false;
    bool gated = false;
    int block = 0;
    std::uint32_t token = 0;
    std::uint64_t seq = 0;   // the core's dispatch counter at this block (0: never used)
    Time arrival = 0;
    Time receive = kNever, ready = kNever;
    Time doorbell = kNever;  // doorbell store seen by the core (gated only)
    // Progress through the phases once started.
    int phase = 0;
    Time t = 0;
    bool waiting = false;    // inside a phase that waits on others
    Time wait_since = 0;
  };
  struct alignas(64) Core {
    int running = -1;    // AICPU view: slot index of the running task
    int pending = -1;    // AICPU view: slot index of the pending task
    bool pending_occupied = false;  // latest token written, ACK not yet seen
    int exec = -1;       // AICore side: slot whose timeline is being laid out
    // The ClusterView holding this core's bits (views_ keeps its address),
    // its cluster's index there and its lane.
    ClusterView* view = nullptr;
    int view_index = 0;
    int view_lane = 0;
    Time free_at = 0;    // AICore back in its DMB poll loop
    std::uint64_t dispatch_seq = 0;  // CoreExecState::dispatch_seq
    bool warm = false;
    std::array<Slot, 2> slots;
    // The FIN of the latest block whose slot was reused (for cond_at).
    Time retired_end = kNever;
    std::uint32_t retired_token = 0;
    std::uint64_t retired_seq = 0;
    void (*wake)(void*) = nullptr;
    void* wake_arg = nullptr;
  };
  struct Event {
    Time t;
    std::uint64_t seq;
    int core;
    PhaseHandler* timer;  // set_timer's handler; nullptr: execute the phase the core reached at t
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };

  static int free_slot(const Core& c) { return !c.slots[0].used ? 0 : !c.slots[1].used ? 1 : -1; }
  // Brings the core's bits in its ClusterView up to date (after its running
  // slot or pending_occupied changed).
  void update_view(int core);
  // The core's next_observable in its view (c.view set), and storing it there.
  static Time& obs_of(const Core& c) {
    return c.view->obs[static_cast<std::size_t>(kNumLanes * c.view_index + c.view_lane)];
  }
  void store_obs(int core, const Core& c) { obs_of(c) = next_observable(core); }
  // Lays out as much of the core's timeline as is known (AICore side);
  // true if a block started or ended (the view was updated).
  bool advance(int core, bool notify);
  // advance's work without the view and the wake-up (dispatch updates the
  // view itself, once).
  bool lay_out(int core, Core& c);
  // Runs the slot's phases from its current position; false if it stopped
  // at a phase that must be executed at its time.
  bool run_local(int core, Slot& s);
  Time gated_start(const Slot& s) const;  // a gated block: ACK and start after its doorbell
  // The handler of a phase (nullptr: the core runs it itself), from the
  // table add_handler fills: a Compute phase, most of a kernel's, asked each
  // handler in turn (a virtual call each) at every dispatch.
  static std::size_t handler_key(PhaseKind kind, bool peer, SyncMode mode) {
    return (static_cast<std::size_t>(kind) * 2 + (peer ? 1 : 0)) * 2 + static_cast<std::size_t>(mode);
  }
  PhaseHandler* handler_for(const Phase& ph) const { return handler_of_[handler_key(ph.kind, ph.peer, ph.sync_mode)]; }
  Time local_duration(const Phase& ph, const Slot& s, int index) const;
  Time sample(const Duration& d, const Slot& s, int phase) const;
  void finish_slot(Core& c, int idx, std::vector<FinishedBlock>& done);
  // poll's decoding of one COND value of a core with a running slot and a
  // pending one (without a pending block poll decodes inline).
  void decode_cond(Core& c, Time t, std::vector<FinishedBlock>& done, FinishedBlock* promoted);
  bool visible(Time x, Time t) const { return x != kNever && x + fin_notice_ <= t; }
  void schedule(int core, Time t, PhaseHandler* timer = nullptr);
  void process();
  PhaseCtx ctx_of(int core, const Slot& s) const;

  const Platform& platform_;
  const RunConfig& config_;
  SimObserver* obs_;
  CoreMap map_;
  std::vector<Core> cores_;
  std::vector<PhaseHandler*> block_enders_;  // the handlers added whose ends_blocks(), in the order added
  static constexpr std::size_t kPhaseKinds = static_cast<std::size_t>(PhaseKind::Free) + 1;
  std::array<PhaseHandler*, kPhaseKinds * 4> handler_of_{};  // by handler_key: the first handler that takes it
  std::deque<ClusterView> views_;  // stable addresses
  Time fin_notice_;
  std::uint64_t seed_hash_;  // hash_key's first step, of config_.seed
  Time first_start_ = kNever, last_end_ = 0;
  // The queue's first event time (kNever: empty), set after every push and pop.
  void note_next_event() { next_event_ = queue_.empty() ? kNever : queue_.top().t; }
  Time next_event_ = kNever;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  std::uint64_t seq_ = 0;
  sc_core::sc_event queue_ev_;
};

inline Time AicoreComplex::next_observable(int core) const {
  const Core& c = cores_[core];
  if (c.running < 0) return kNever;
  const Slot& r = c.slots[c.running];
  auto vis = [&](Time x) { return x == kNever ? kNever : x + fin_notice_; };
  if (c.pending >= 0) {
    const Slot& p = c.slots[c.pending];
    if (p.gated && p.start == kNever) return vis(r.end);
    return vis(p.start);
  }
  Time next = vis(r.end);
  if (c.pending_occupied) next = std::min(next, vis(r.start));
  return next;
}

}  // namespace npusim
