#include "models/aicore/aicore.h"

#include <algorithm>
#include <cmath>

#include "models/common/normal.h"
#include "models/common/present.h"
#include "models/common/rng.h"

namespace npusim {

AicoreComplex::AicoreComplex(sc_core::sc_module_name name, const Platform& platform,
                             const RunConfig& config, SimObserver* observer)
    : sc_core::sc_module(name), platform_(platform), config_(config), obs_(observer),
      fin_notice_(platform.core.fin_notice), seed_hash_(seed_hash(config.seed)) {
  map_.clusters = platform.topo.clusters;
  cores_.resize(static_cast<std::size_t>(map_.total()));
  SC_METHOD(process);
  sensitive << queue_ev_;
  dont_initialize();
}

const AicoreComplex::ClusterView& AicoreComplex::add_view(const std::vector<int>& clusters) {
  ClusterView& v = views_.emplace_back();
  const int n = static_cast<int>(clusters.size());
  v.resize(n);
  for (int k = 0; k < n; ++k)
    for (int l = 0; l < kNumLanes; ++l) {
      const int core = map_.of_lane(clusters[static_cast<std::size_t>(k)], l);
      cores_[core].view = &v;
      cores_[core].view_index = k;
      cores_[core].view_lane = l;
      update_view(core);
    }
  return v;
}

__attribute__((always_inline)) inline void AicoreComplex::update_view(int core) {
  const Core& c = cores_[core];
  if (!c.view) return;
  ++c.view->version;
  c.view->set(c.view_index, c.view_lane, c.running < 0, c.pending_occupied, parked(core));
  store_obs(core, c);
}

// The dispatch path (dispatch, lay_out, run_local, local_duration and, in
// the header, free_slot and next_dispatch_token) is one call where it was
// six: inline, defined before their first use; the sample stays a call.
inline Time AicoreComplex::local_duration(const Phase& ph, const Slot& s, int index) const {
  switch (ph.kind) {
    case PhaseKind::Compute: return sample(ph.duration, s, index);
    case PhaseKind::Load:
    case PhaseKind::Store:
    case PhaseKind::Fence:
    case PhaseKind::CacheInvalid:  // the GM model (models/gm)
    case PhaseKind::Syncall:
    case PhaseKind::Push:
    case PhaseKind::Pop:
    case PhaseKind::Free:
    case PhaseKind::Notify:
    case PhaseKind::WaitFlag: break;  // always executed by a handler
  }
  return 0;
}

inline bool AicoreComplex::run_local(int core, Slot& s) {
  const std::vector<Phase>& body = s.task->kernel->lanes[s.lane].phases;
  while (s.phase < static_cast<int>(body.size())) {
    const Phase& ph = body[s.phase];
    if (handler_for(ph)) {
      // Depends on other cores: executed at its simulated time.
      s.waiting = true;
      s.wait_since = s.t;
      schedule(core, s.t);
      return false;
    }
    s.t = add_time(s.t, local_duration(ph, s, s.phase));  // a long lane stops at the time limit, never wraps
    ++s.phase;
  }
  return true;
}

std::uint32_t AicoreComplex::dispatch(int core, Task* task, int block, int lane, int record,
                                      Time t_write, bool gated) {
  Core& c = cores_[core];
  int idx = free_slot(c);
  Slot& s = c.slots[idx];
  if (s.seq != 0 && s.end != kNever && (c.retired_end == kNever || s.end >= c.retired_end)) {
    c.retired_end = s.end;
    c.retired_token = s.token;
    c.retired_seq = s.seq;
  }
  s = Slot{};
  s.used = true;
  s.task = task;
  s.block = block;
  s.lane = lane;
  s.record = record;
  s.gated = gated;
  s.token = next_dispatch_token(c.dispatch_seq);
  s.seq = c.dispatch_seq;
  s.arrival = t_write + platform_.core.dmb_arrival;
  if (c.running < 0)
    c.running = idx;
  else
    c.pending = idx;
  c.pending_occupied = true;
  if (c.exec < 0) c.exec = idx;
  task->blocks[record].token = s.token;
  lay_out(core, c);
  // The view once, after the timeline is laid out: nothing reads it in
  // between. The core now runs a block (not idle) and its latest token is
  // not ACKed yet; parked if its running block is a gated one still waiting.
  if (c.view) {
    ++c.view->version;
    c.view->set_dispatched(c.view_index, c.view_lane, parked(core));
    store_obs(core, c);
  }
  return s.token;
}

void AicoreComplex::ring_doorbell(int core, Task* task, int record, Time t_write) {
  Core& c = cores_[core];
  for (Slot& s : c.slots)
    if (s.used && s.task == task && s.record == record && s.gated && s.doorbell == kNever) {
      // The core spins on DATA_MAIN_BASE: it sees the store when it arrives.
      s.doorbell = t_write + platform_.core.dmb_arrival;
      advance(core, true);
      return;
    }
}

bool AicoreComplex::advance(int core, bool notify) {
  Core& c = cores_[core];
  const bool changed = lay_out(core, c);
  if (changed) update_view(core);  // a started block is no longer parked
  if (notify && changed && c.wake) c.wake(c.wake_arg);
  return changed;
}

inline bool AicoreComplex::lay_out(int core, Core& c) {
  bool changed = false;
  while (c.exec >= 0) {
    Slot& s = c.slots[c.exec];
    BlockRecord& r = s.task->blocks[s.record];
    if (s.receive == kNever) {
      // A spinning core notices the store after its poll-loop offset; a busy
      // core reads it as soon as it is back in the loop.
      s.receive = s.arrival >= c.free_at ? s.arrival + platform_.core.entry_poll : c.free_at;
      s.ready = s.receive + platform_.core.receive_to_start + (c.warm ? 0 : platform_.core.first_task_extra);
      c.warm = true;
      r.receive = s.receive;
    }
    if (s.start == kNever) {
      if (s.gated && s.doorbell == kNever) break;  // parked: args ready, spinning on the doorbell
      s.start = s.gated ? gated_start(s) : s.ready;
      if (s.start > s.ready && obs_)  // spun on the doorbell from its setup until it saw it
        obs_->on_core_wait(core, *s.task, s.block, WaitKind::Doorbell, s.ready - platform_.core.ack_write,
                           s.start - platform_.core.ack_write);
      s.t = s.start;
      s.phase = 0;
      r.start = s.start;
      first_start_ = std::min(first_start_, s.start);
      changed = true;
    }
    if (s.waiting || !run_local(core, s)) break;
    s.end = s.t;
    r.end = s.end;
    for (PhaseHandler* h : block_enders_) h->block_end(core, *s.task, s.block, s.end);
    last_end_ = std::max(last_end_, s.end);
    c.free_at = s.end + platform_.core.loop;
    changed = true;
    int other = 1 - c.exec;
    c.exec = (c.slots[other].used && c.slots[other].end == kNever) ? other : -1;
  }
  return changed;
}

// aicore_executor.cpp aicore_execute: a gated block (src_payload != 0)
// invalidates its payload and fills its arguments, then spins on the high
// word of DATA_MAIN_BASE; the ACK is written only once the doorbell is seen.
// Its setup is therefore receive_to_start without the ACK write; a doorbell
// that lands while it spins is noticed after the spin loop's poll offset
// (entry_poll, as a new token on an idle core); the ACK follows.
Time AicoreComplex::gated_start(const Slot& s) const {
  const CoreCosts& k = platform_.core;
  const Time setup_done = s.ready - k.ack_write;
  const Time seen = s.doorbell >= setup_done ? s.doorbell + k.entry_poll : setup_done;
  return seen + k.ack_write;
}

void AicoreComplex::add_handler(PhaseHandler* h) {
  if (h->ends_blocks()) block_enders_.push_back(h);
  // The first handler (in the order added) that takes a phase executes it.
  Phase probe;
  for (std::size_t k = 0; k < kPhaseKinds; ++k)
    for (const bool peer : {false, true})
      for (const SyncMode mode : {SyncMode::Hard, SyncMode::Soft}) {
        PhaseHandler*& slot = handler_of_[handler_key(static_cast<PhaseKind>(k), peer, mode)];
        probe.kind = static_cast<PhaseKind>(k);
        probe.peer = peer;
        probe.sync_mode = mode;
        if (!slot && h->handles(probe)) slot = h;
      }
}

void AicoreComplex::schedule(int core, Time t, PhaseHandler* timer) {
  queue_.push(Event{t, seq_++, core, timer});
  note_next_event();
  // An AICPU thread may call this while it runs ahead of the kernel: an
  // event due before the model's present is due at the present (as a delta
  // notification was when the kernel kept up), and the delay counts from the
  // kernel's time.
  const Time present = model_present(), kernel = sc_core::sc_time_stamp().value();
  queue_ev_.notify(sc_core::sc_time::from_value((t > present ? t : present) - kernel));
}

void AicoreComplex::set_timer(int core, Time t, PhaseHandler* h) { schedule(core, t, h); }

PhaseCtx AicoreComplex::ctx_of(int core, const Slot& s) const {
  PhaseCtx x;
  x.core = core;
  x.cluster = map_.cluster_of(core);
  x.task = s.task;
  x.block = s.block;
  x.block_num = s.task->block_num;
  x.lane = s.lane;
  x.phase = &s.task->kernel->lanes[s.lane].phases[s.phase];
  return x;
}

void AicoreComplex::process() {
  const Time now = sc_core::sc_time_stamp().value();
  while (!queue_.empty() && queue_.top().t <= now) {
    Event ev = queue_.top();
    queue_.pop();
    note_next_event();
    Core& c = cores_[ev.core];
    if (c.exec < 0) continue;
    Slot& s = c.slots[c.exec];
    if (!s.waiting || (!ev.timer && s.t != ev.t)) continue;
    PhaseCtx x = ctx_of(ev.core, s);
    PhaseHandler* h = handler_for(*x.phase);
    if (ev.timer && ev.timer != h) continue;  // the core has moved on to another handler's phase
    Time done = ev.timer ? h->on_timer(x, now) : h->execute(x, now);
    if (done == kNever) continue;  // the handler resumes it later
    resume(ev.core, done);
  }
  if (!queue_.empty()) queue_ev_.notify(sc_core::sc_time::from_value(queue_.top().t - now));
}

void AicoreComplex::resume(int core, Time t_done) {
  Core& c = cores_[core];
  Slot& s = c.slots[c.exec];
  const Phase& ph = s.task->kernel->lanes[s.lane].phases[s.phase];
  // A GM phase's time is its transfer, not a wait: the GM model reports the
  // part spent waiting for a contended line itself.
  if (obs_ && t_done > s.wait_since && wait_kind_of(ph.kind) != WaitKind::Memory) obs_->on_core_wait(core, *s.task, s.block, wait_kind_of(ph.kind), s.wait_since, t_done);
  s.waiting = false;
  ++s.phase;
  s.t = t_done;
  advance(core, true);
}

std::vector<AicoreComplex::Waiting> AicoreComplex::waiting_cores() const {
  std::vector<Waiting> w;
  for (int k = 0; k < map_.total(); ++k) {
    const Core& c = cores_[k];
    if (c.exec < 0) continue;
    const Slot& s = c.slots[c.exec];
    if (s.waiting)
      w.push_back(Waiting{k, s.task, s.block, s.lane, &s.task->kernel->lanes[s.lane].phases[s.phase], s.wait_since});
    else if (s.gated && s.start == kNever && s.receive != kNever)
      w.push_back(Waiting{k, s.task, s.block, s.lane, nullptr, s.ready});
  }
  return w;
}

Time AicoreComplex::sample(const Duration& d, const Slot& s, int phase) const {
  switch (d.kind) {
    case Duration::Kind::Ns: return from_ns(d.a);
    case Duration::Kind::ByBlock: return from_ns(d.by_block[static_cast<std::size_t>(s.block) % d.by_block.size()]);
    case Duration::Kind::Cycles: return platform_.aicore_cycles(d.a);
    case Duration::Kind::Normal: {
      // hash_key(config_.seed, task id, block, lane, phase), its first step
      // (the seed's) taken once.
      const std::uint64_t key = hash_from(seed_hash_, static_cast<std::uint64_t>(s.task->id),
                                          static_cast<std::uint64_t>(s.block), static_cast<std::uint64_t>(s.lane),
                                          static_cast<std::uint64_t>(phase));
      return normal_time(d.a, d.b, key);  // from_ns(a + b N) truncated at zero
    }
  }
  return 0;
}

inline void AicoreComplex::finish_slot(Core& c, int idx, std::vector<FinishedBlock>& done) {
  Slot& s = c.slots[idx];
  done.push_back(FinishedBlock{s.task, s.record});
  s.used = false;
  s.task = nullptr;
}

void AicoreComplex::poll(int core, Time t, std::vector<FinishedBlock>& done, FinishedBlock* promoted) {
  Core& c = cores_[core];
  if (c.running < 0) return;
  if (c.pending >= 0) {
    decode_cond(c, t, done, promoted);
    update_view(core);
    return;
  }
  // No pending block (most reads): the running block's FIN or ACK, and the
  // view's bits that these change only (its other bits stand: a block whose
  // FIN is visible had started, so it was not parked).
  Slot& r = c.slots[c.running];
  if (visible(r.end, t)) {
    finish_slot(c, c.running, done);
    c.running = -1;
    c.pending_occupied = false;
    if (c.view) {
      ++c.view->version;
      c.view->set_idle(c.view_index, c.view_lane);
      obs_of(c) = kNever;  // idle
    }
  } else if (visible(r.start, t) && c.pending_occupied) {
    c.pending_occupied = false;  // running ACK seen
    if (c.view) {
      ++c.view->version;
      c.view->clear_occupied(c.view_index, c.view_lane);
      store_obs(core, c);
    }
  }
}

void AicoreComplex::decode_cond(Core& c, Time t, std::vector<FinishedBlock>& done, FinishedBlock* promoted) {
  Slot& r = c.slots[c.running];
  Slot& p = c.slots[c.pending];
  if (visible(p.start, t)) {
    // COND carries the pending token: the running task is implicitly done.
    int run_idx = c.running, pend_idx = c.pending;
    finish_slot(c, run_idx, done);
    c.pending = -1;
    c.pending_occupied = false;
    if (visible(p.end, t)) {
      finish_slot(c, pend_idx, done);
      c.running = -1;
    } else {
      c.running = pend_idx;  // ACK: pending promoted to running
    }
  } else if (p.gated && p.start == kNever && visible(r.end, t)) {
    // Running FIN with a gated pending block: complete the running task and
    // promote the gated block, which ACKs only after its doorbell.
    int pend_idx = c.pending;
    finish_slot(c, c.running, done);
    c.running = pend_idx;
    c.pending = -1;
    if (promoted) *promoted = FinishedBlock{p.task, p.record};
  }
  // A running FIN while a (non-gated) pending exists is ignored: wait for
  // the pending's ACK.
}

AicoreComplex::CondValue AicoreComplex::cond_at(int core, Time t) const {
  const Core& c = cores_[core];
  // The writes in the core's order: by time, then dispatch order (a later
  // block's ACK may share its time with the earlier one's FIN; the token
  // itself wraps), an ACK before its FIN.
  CondValue v;
  bool any = false;
  Time at = 0;
  std::uint64_t at_seq = 0;
  auto consider = [&](Time x, bool fin, std::uint32_t token, std::uint64_t seq) {
    if (!visible(x, t)) return;
    if (any && (x < at || (x == at && (seq < at_seq || (seq == at_seq && fin < v.fin))))) return;
    any = true;
    at = x;
    at_seq = seq;
    v = CondValue{fin, token};
  };
  consider(c.retired_end, true, c.retired_token, c.retired_seq);
  for (const Slot& s : c.slots) {  // a finished slot keeps its times until reused
    if (s.seq == 0) continue;
    consider(s.start, false, s.token, s.seq);
    consider(s.end, true, s.token, s.seq);
  }
  return v;
}


}  // namespace npusim
