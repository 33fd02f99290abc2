#include "models/aicore/cross_core.h"

#include <algorithm>
#include <stdexcept>

#include "models/gm/gm.h"

namespace npusim {

// PTO-ISA include/pto/npu/a2a3/TPush.hpp, TPipe: SyncPeriod,
// shouldWaitFree, shouldNotifyFree, countPendingFreeCredits.
std::uint32_t pipe_sync_period(std::uint32_t slots) { return slots <= 2 ? slots : slots / 2; }

bool pipe_push_waits(std::uint32_t slots, std::uint32_t i) {
  return i >= slots && i % pipe_sync_period(slots) == 0;
}

bool pipe_pop_frees(std::uint32_t slots, std::uint32_t j) { return (j + 1) % pipe_sync_period(slots) == 0; }

std::uint32_t pipe_pending_credits(std::uint32_t slots, std::uint32_t pushed) {
  const std::uint32_t period = pipe_sync_period(slots);
  const std::uint32_t notified = pushed / period;
  std::uint32_t waited = 0;
  if (slots == 1) {
    waited = pushed > 0 ? pushed - 1 : 0;
  } else if (pushed > slots) {
    const std::uint32_t first = slots % period == 0 ? slots : (slots / period + 1) * period;
    const std::uint32_t last = (pushed - 1) / period * period;
    if (last >= first) waited = (last - first) / period + 1;
  }
  return notified > waited ? notified - waited : 0;
}

namespace {

constexpr std::uint8_t kPipeAivLanes = kMaskAiv0 | kMaskAiv1;  // (a name of its own: the unity build)

const char* lane_name(int lane) { return lane == kLaneAic ? "aic" : lane == kLaneAiv0 ? "aiv0" : "aiv1"; }

std::string lanes_text(std::uint8_t mask) {
  std::string s;
  for (int l = 0; l < kNumLanes; ++l)
    if (mask & (1u << l)) s += std::string(s.empty() ? "" : "+") + lane_name(l);
  return s.empty() ? "no lane of this task" : s;
}

}  // namespace

CrossCorePipes::CrossCorePipes(AicoreComplex& cores, const Platform& platform) : cores_(cores), platform_(platform) {}

std::uint32_t CrossCorePipes::slots_of(const KernelDef& k, int pipe) const {
  const int slots = pipe >= 0 && pipe < static_cast<int>(k.pipes.size()) ? k.pipes[static_cast<std::size_t>(pipe)].slots
                                                                       : k.cross_core_slots;
  if (slots < 1)  // the trace loader requires it
    throw std::logic_error("mix kernel " + k.name + " pushes or pops on a pipe without a slot count");
  return static_cast<std::uint32_t>(slots);
}

CrossCorePipes::Ring& CrossCorePipes::ring_of_ctx(const PhaseCtx& ctx, PipeRing r, Key& key) {
  const int pipe = ctx.phase->pipe;
  key = Key{ctx.cluster, ctx.task->id, ctx.block, pipe, static_cast<int>(r)};
  auto it = rings_.find(key);
  if (it != rings_.end()) return it->second;
  const KernelDef& k = *ctx.task->kernel;
  Ring& g = rings_[key];
  g.slots = slots_of(k, pipe);
  g.task = ctx.task;
  const std::uint8_t aic = k.lanes[kLaneAic].active ? kMaskAic : 0;
  const std::uint8_t aivs = static_cast<std::uint8_t>(k.active_mask() & kPipeAivLanes);
  g.producers = r == PipeRing::C2V ? aic : aivs;
  g.consumers = r == PipeRing::C2V ? aivs : aic;
  for (int l = 0; l < kNumLanes; ++l) {
    if (!k.lanes[l].active) continue;
    for (const Phase& ph : k.lanes[l].phases) {
      if (ph.pipe != pipe) continue;
      const bool on = (ph.kind == PhaseKind::Push || ph.kind == PhaseKind::Pop) ? ring_of(l, ph.kind) == r
                      : ph.kind == PhaseKind::Free                              ? ring_of(l, PhaseKind::Pop) == r
                                                                                : false;
      g.phases_left += on;
    }
  }
  return g;
}

namespace {

// The time the k-th entry of every lane in `mask` is there (the latest of
// them), or kNever if a lane has none yet or the mask is empty: a flag the
// AIC waits for is set once every active AIV has set it.
template <class Times>
Time all_lanes_at(std::uint8_t mask, std::uint32_t k, Times times_of) {
  if (mask == 0) return kNever;
  Time at = 0;
  for (int l = 0; l < kNumLanes; ++l) {
    if (!(mask & (1u << l))) continue;
    const std::vector<Time>& v = times_of(l);
    if (k >= v.size()) return kNever;
    at = std::max(at, v[k]);
  }
  return at;
}

}  // namespace

Time CrossCorePipes::data_at(const Ring& g, std::uint32_t j) {
  return all_lanes_at(g.producers, j, [&](int l) -> const std::vector<Time>& { return g.prod[l].records; });
}

Time CrossCorePipes::credit_at(const Ring& g, std::uint32_t k) {
  return all_lanes_at(g.consumers, k, [&](int l) -> const std::vector<Time>& { return g.cons[l].freed; });
}

Time CrossCorePipes::try_push(Ring& g, int lane, const Waiter& w, Time t) {
  Ring::Producer& p = g.prod[lane];
  Time start = t;
  if (w.needs > p.credits) {
    const Time c = credit_at(g, w.needs - 1);  // credits reach the producer in order
    if (c == kNever) return kNever;
    start = std::max(t, c);
    p.credits = w.needs;
  }
  if (w.drain) return start;
  if (w.global) {  // TPUSH(pipe, GlobalTensor): record() only
    p.records.push_back(start + platform_.ffts.flag);
    return start;
  }
  const Time stored = start + w.cost;                     // TSTORE to the GM slot
  p.records.push_back(stored + platform_.ffts.flag);      // record(): the consumers' data flag
  ++p.tile;
  return stored;
}

Time CrossCorePipes::try_pop(Ring& g, int lane, const Waiter& w, Time t) {
  Ring::Consumer& c = g.cons[lane];
  const std::uint32_t j = c.tile;
  const Time data = data_at(g, j);
  if (data == kNever) return kNever;
  const Time got = std::max(t, data) + w.cost;  // wait(), then TLOAD from the GM slot (global: the address only)
  ++c.tile;
  c.unfreed = w.global;
  if (!w.global && pipe_pop_frees(g.slots, j)) c.freed.push_back(got + platform_.ffts.flag);  // free()
  return got;
}

void CrossCorePipes::wake(Ring& g) {
  // Pops that waited for a tile just pushed; then pushes that waited for
  // their frees. Each resumed core is done with this ring's waiting; a
  // resumed pop's free may release a push, a resumed push's tile may
  // complete a pop, so the passes repeat until neither resumes a core.
  // Resumes the waiters of one side whose operation now completes.
  const auto resume_side = [&](auto side, auto attempt) {
    bool resumed = false;
    for (int l = 0; l < kNumLanes; ++l) {
      Waiter& w = (g.*side)[l].wait;
      if (w.core < 0) continue;
      const Time done = (this->*attempt)(g, l, w, w.since);
      if (done == kNever) continue;
      const int core = w.core;
      w.core = -1;
      --g.phases_left;
      cores_.resume(core, done);
      resumed = true;
    }
    return resumed;
  };
  for (bool again = true; again;) {
    const bool popped = resume_side(&Ring::cons, &CrossCorePipes::try_pop);
    const bool pushed = resume_side(&Ring::prod, &CrossCorePipes::try_push);
    again = popped || pushed;
  }
}

Time CrossCorePipes::execute(const PhaseCtx& ctx, Time t) {
  const Phase& ph = *ctx.phase;
  const int lane = ctx.lane;
  const PipeRing r = ring_of(lane, ph.kind == PhaseKind::Free ? PhaseKind::Pop : ph.kind);
  Key key;
  Ring& g = ring_of_ctx(ctx, r, key);
  const std::int64_t bytes = ph.bytes.eval_or(BlockEnv(ctx.block, ctx.block_num), 0);
  const Time cost = gm_transfer(platform_.gm, static_cast<std::uint64_t>(std::max<std::int64_t>(0, bytes)));
  Time done;
  if (ph.kind == PhaseKind::Free) {  // TFREE: the GlobalTensor pop's free, else a no-op (TFree.hpp)
    Ring::Consumer& c = g.cons[lane];
    if (c.unfreed && pipe_pop_frees(g.slots, c.tile - 1)) c.freed.push_back(t + platform_.ffts.flag);
    c.unfreed = false;
    done = t;
  } else if (ph.kind == PhaseKind::Push) {
    Ring::Producer& p = g.prod[lane];
    Waiter w{ctx.core, t, ph.global || ph.pipe_drain ? 0 : cost, ph.global, ph.pipe_drain, p.credits};
    if (ph.pipe_drain) w.needs += pipe_pending_credits(g.slots, p.tile);
    else if (!ph.global && pipe_push_waits(g.slots, p.tile)) w.needs += 1;
    done = try_push(g, lane, w, t);
    if (done == kNever) p.wait = w;
  } else {
    Waiter w{ctx.core, t, ph.global ? 0 : cost, ph.global, false, 0};
    done = try_pop(g, lane, w, t);
    if (done == kNever) g.cons[lane].wait = w;
  }
  if (done != kNever) --g.phases_left;
  wake(g);
  if (g.phases_left == 0) rings_.erase(key);
  return done;
}

std::vector<CrossCorePipes::OpenWait> CrossCorePipes::open_waits() const {
  std::vector<OpenWait> out;
  for (const auto& [key, g] : rings_) {
    const int pipe = std::get<3>(key);
    const KernelDef& k = *g.task->kernel;
    const PipeRing r = static_cast<PipeRing>(std::get<4>(key));
    OpenWait base;
    base.task = g.task;
    base.cluster = std::get<0>(key);
    base.block = std::get<2>(key);
    base.pipe = pipe >= 0 ? k.pipes[static_cast<std::size_t>(pipe)].name : "";
    base.dir = pipe >= 0 ? pipe_dir_name(k.pipes[static_cast<std::size_t>(pipe)].dir) : "c2v";
    base.ring = r == PipeRing::C2V ? "C->V" : "V->C";
    for (int l = 0; l < kNumLanes; ++l) {
      const Ring::Consumer& c = g.cons[l];
      if (c.wait.core >= 0) {
        OpenWait o = base;
        o.core = c.wait.core;
        o.lane = l;
        o.op = "pop";
        o.tile = c.tile;
        o.since = c.wait.since;
        std::string pushed;
        for (int p = 0; p < kNumLanes; ++p)
          if (g.producers & (1u << p))
            pushed += std::string(pushed.empty() ? "" : ", ") + lane_name(p) + " recorded " +
                      std::to_string(g.prod[p].records.size());
        o.waits_for = "the data flag of tile " + std::to_string(c.tile) + " from " + lanes_text(g.producers) +
                      (pushed.empty() ? "" : " (" + pushed + ")");
        out.push_back(std::move(o));
      }
      const Ring::Producer& p = g.prod[l];
      if (p.wait.core >= 0) {
        OpenWait o = base;
        o.core = p.wait.core;
        o.lane = l;
        o.op = p.wait.drain ? "drain (~TPipe)" : "push";
        o.tile = p.tile;
        o.since = p.wait.since;
        std::string freed;
        for (int q = 0; q < kNumLanes; ++q)
          if (g.consumers & (1u << q))
            freed += std::string(freed.empty() ? "" : ", ") + lane_name(q) + " freed " +
                     std::to_string(g.cons[q].freed.size());
        o.waits_for = "free credit " + std::to_string(p.wait.needs) + " from " + lanes_text(g.consumers) +
                      (freed.empty() ? "" : " (" + freed + " batch(es) of " +
                                                std::to_string(pipe_sync_period(g.slots)) + " tile(s))");
        out.push_back(std::move(o));
      }
    }
  }
  return out;
}

}  // namespace npusim
