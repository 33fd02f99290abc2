#include "models/aicore/aicore.h"

#include <algorithm>
#include <cmath>

#include "models/common/rng.h"

namespace npusim {

namespace {
// block_idx / block_num for the expressions inside a kernel's phases.
class BlockEnv : public ExprEnv {
 public:
  BlockEnv(std::int64_t idx, std::int64_t num) : v_{idx, num} {}
  bool get(int slot, std::int64_t& value) const override {
    if (slot < 0 || slot > 1) return false;
    value = v_[slot];
    return true;
  }
  std::string describe(int slot) const override {
    return slot == 0 ? "block_idx" : slot == 1 ? "block_num" : "unknown name";
  }

 private:
  std::int64_t v_[2];
};
}  // namespace

AicoreComplex::AicoreComplex(sc_core::sc_module_name name, const Platform& platform,
                             const RunConfig& config)
    : sc_core::sc_module(name), platform_(platform), config_(config),
      fin_notice_(platform.core.fin_notice) {
  map_.clusters = platform.topo.clusters;
  cores_.resize(static_cast<std::size_t>(map_.total()));
}

int AicoreComplex::free_slot(const Core& c) const {
  for (int i = 0; i < 2; ++i)
    if (!c.slots[i].used) return i;
  return -1;
}

std::uint32_t AicoreComplex::dispatch(int core, Task* task, int block, int lane, int record,
                                      Time t_write) {
  Core& c = cores_[core];
  int idx = free_slot(c);
  Slot& s = c.slots[idx];
  s = Slot{};
  s.used = true;
  s.task = task;
  s.block = block;
  s.lane = lane;
  s.record = record;
  s.token = c.next_token;
  // Tokens are 31-bit and skip the reserved range >= 0x7FFFFFF0.
  c.next_token = c.next_token + 1 >= 0x7FFFFFF0u ? 1 : c.next_token + 1;
  s.arrival = t_write + platform_.core.dmb_arrival;
  if (c.running < 0)
    c.running = idx;
  else
    c.pending = idx;
  c.pending_occupied = true;
  if (c.exec_next < 0) c.exec_next = idx;
  task->blocks[record].token = s.token;
  advance(core);
  return s.token;
}

void AicoreComplex::advance(int core) {
  Core& c = cores_[core];
  while (c.exec_next >= 0) {
    Slot& s = c.slots[c.exec_next];
    // A spinning core notices the store after its poll-loop offset; a busy
    // core reads it as soon as it is back in the loop.
    s.receive = s.arrival >= c.free_at ? s.arrival + platform_.core.entry_poll : c.free_at;
    s.start = s.receive + platform_.core.receive_to_start +
              (c.warm ? 0 : platform_.core.first_task_extra);
    c.warm = true;
    s.end = run_phases(s, s.start);
    c.free_at = s.end + platform_.core.loop;
    BlockRecord& r = s.task->blocks[s.record];
    r.receive = s.receive;
    r.start = s.start;
    r.end = s.end;
    ++blocks_started_;
    first_start_ = std::min(first_start_, s.start);
    last_end_ = std::max(last_end_, s.end);
    int other = 1 - c.exec_next;
    c.exec_next = (c.slots[other].used && c.slots[other].start == kNever) ? other : -1;
  }
}

Time AicoreComplex::sample(const Duration& d, const Slot& s, int phase) const {
  switch (d.kind) {
    case Duration::Kind::Ns: return from_ns(d.a);
    case Duration::Kind::Cycles: return platform_.aicore_cycles(d.a);
    case Duration::Kind::Normal: {
      std::uint64_t key = hash_key(config_.seed, s.task->id, static_cast<std::uint64_t>(s.block),
                                   static_cast<std::uint64_t>(s.lane),
                                   static_cast<std::uint64_t>(phase));
      double v = d.a + d.b * standard_normal(key);
      return from_ns(v < 0 ? 0 : v);  // truncated at zero
    }
  }
  return 0;
}

Time AicoreComplex::run_phases(const Slot& s, Time t) const {
  const LaneBody& body = s.task->kernel->lanes[s.lane];
  BlockEnv env(s.block, s.task->block_num);
  const GmCosts& gm = platform_.gm;
  for (std::size_t i = 0; i < body.phases.size(); ++i) {
    const Phase& ph = body.phases[i];
    switch (ph.kind) {
      case PhaseKind::Compute: t += sample(ph.duration, s, static_cast<int>(i)); break;
      case PhaseKind::Load:
      case PhaseKind::Store: {
        std::int64_t bytes = ph.bytes.empty() ? 0 : ph.bytes.eval(env);
        double stream_ns = gm.bytes_per_ns > 0 ? static_cast<double>(bytes) / gm.bytes_per_ns : 0;
        t += gm.line_latency + from_ns(stream_ns);
        break;
      }
      case PhaseKind::Fence: t += gm.fence; break;
      case PhaseKind::CacheInvalid: t += ph.all ? gm.cacheinvalid_all : gm.cacheinvalid_line; break;
      case PhaseKind::Syncall: break;  // rejected before the run until the barrier model lands
    }
  }
  return t;
}

void AicoreComplex::finish_slot(Core& c, int idx, std::vector<FinishedBlock>& done) {
  Slot& s = c.slots[idx];
  done.push_back(FinishedBlock{s.task, s.record});
  s.used = false;
  s.task = nullptr;
}

void AicoreComplex::poll(int core, Time t, std::vector<FinishedBlock>& done) {
  Core& c = cores_[core];
  if (c.running < 0) return;
  Slot& r = c.slots[c.running];
  if (c.pending >= 0) {
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
    }
    // A running FIN while a (non-gated) pending exists is ignored: wait for
    // the pending's ACK.
    return;
  }
  if (visible(r.end, t)) {
    finish_slot(c, c.running, done);
    c.running = -1;
    c.pending_occupied = false;
  } else if (visible(r.start, t)) {
    c.pending_occupied = false;  // running ACK seen
  }
}

Time AicoreComplex::next_observable(int core) const {
  const Core& c = cores_[core];
  if (c.running < 0) return kNever;
  const Slot& r = c.slots[c.running];
  auto vis = [&](Time x) { return x == kNever ? kNever : x + fin_notice_; };
  if (c.pending >= 0) return vis(c.slots[c.pending].start);
  Time next = vis(r.end);
  if (c.pending_occupied) next = std::min(next, vis(r.start));
  return next;
}

}  // namespace npusim
