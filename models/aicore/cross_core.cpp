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

CrossCorePipes::CrossCorePipes(AicoreComplex& cores, const Platform& platform) : cores_(cores), platform_(platform) {}

CrossCorePipes::Pipe& CrossCorePipes::pipe_of(const PhaseCtx& ctx) {
  const Key key{ctx.cluster, ctx.task->id, ctx.block};
  auto it = pipes_.find(key);
  if (it != pipes_.end()) return it->second;
  const KernelDef& k = *ctx.task->kernel;
  if (k.cross_core_slots < 1)  // the trace loader requires it
    throw std::logic_error("mix kernel " + k.name + " pushes or pops without cross_core_slots");
  Pipe& p = pipes_[key];
  p.slots = static_cast<std::uint32_t>(k.cross_core_slots);
  for (int lane = kLaneAiv0; lane <= kLaneAiv1; ++lane) {
    if (!k.lanes[lane].active) continue;
    p.consumers |= static_cast<std::uint8_t>(1u << lane);
    for (const Phase& ph : k.lanes[lane].phases) p.to_pop[lane - 1] += ph.kind == PhaseKind::Pop;
  }
  return p;
}

Time CrossCorePipes::credit_at(const Pipe& p, std::uint32_t k) {
  Time at = 0;
  for (int lane = kLaneAiv0; lane <= kLaneAiv1; ++lane) {
    if (!(p.consumers & (1u << lane))) continue;
    const std::vector<Time>& f = p.freed[lane - 1];
    if (k >= f.size()) return kNever;
    at = std::max(at, f[k]);
  }
  return at;
}

Time CrossCorePipes::try_push(Pipe& p, Time t, Time cost, bool drain) {
  Time start = t;
  if (p.pusher_needs > p.credits) {
    const Time c = credit_at(p, p.pusher_needs - 1);  // credits reach the AIC in order
    if (c == kNever) return kNever;
    start = std::max(t, c);
    p.credits = p.pusher_needs;
  }
  if (drain) {
    p.drained = true;
    return start;
  }
  const Time stored = start + cost;                               // TSTORE to the GM slot
  p.data.push_back(stored + platform_.ffts.flag);                 // record(): both AIVs' data flag
  ++p.pushed;
  return stored;
}

Time CrossCorePipes::push(Pipe& p, const PhaseCtx& ctx, Time t) {
  const bool drain = ctx.phase->pipe_drain;
  p.pusher_needs = p.credits + (drain ? pipe_pending_credits(p.slots, p.pushed)
                                      : (pipe_push_waits(p.slots, p.pushed) ? 1u : 0u));
  const std::int64_t bytes = ctx.phase->bytes.eval_or(BlockEnv(ctx.block, ctx.block_num), 0);
  const Time cost = drain ? 0 : gm_transfer(platform_.gm, static_cast<std::uint64_t>(std::max<std::int64_t>(0, bytes)));
  const Time done = try_push(p, t, cost, drain);
  if (done == kNever) p.pusher = Waiter{ctx.core, t, cost};
  return done;
}

Time CrossCorePipes::pop(Pipe& p, int lane, Time t, Time cost) {
  const std::uint32_t j = p.popped[lane - 1];
  if (j >= p.data.size()) return kNever;
  const Time loaded = std::max(t, p.data[j]) + cost;  // wait(), then TLOAD from the GM slot
  ++p.popped[lane - 1];
  if (pipe_pop_frees(p.slots, j)) p.freed[lane - 1].push_back(loaded + platform_.ffts.flag);  // free()
  return loaded;
}

void CrossCorePipes::wake(Pipe& p, const Key& key) {
  // Pops that waited for a tile just pushed; then a push that waited for
  // their frees. Each resumed core is done with this pipe's waiting.
  for (bool again = true; again;) {
    again = false;
    for (int lane = kLaneAiv0; lane <= kLaneAiv1; ++lane) {
      Waiter& w = p.popper[lane - 1];
      if (w.core < 0) continue;
      const Time done = pop(p, lane, w.since, w.cost);
      if (done == kNever) continue;
      const int core = w.core;
      w.core = -1;
      cores_.resume(core, done);
    }
    if (p.pusher.core >= 0) {
      const int core = p.pusher.core;
      const Time done = try_push(p, p.pusher.since, p.pusher.cost, p.pusher_drain);
      if (done != kNever) {
        p.pusher.core = -1;
        cores_.resume(core, done);
        again = !p.pusher_drain;  // a new tile may complete a waiting pop
      }
    }
  }
  retire_if_done(key);
}

void CrossCorePipes::retire_if_done(const Key& key) {
  auto it = pipes_.find(key);
  if (it == pipes_.end()) return;
  const Pipe& p = it->second;
  if (!p.drained || p.pusher.core >= 0) return;
  for (int lane = kLaneAiv0; lane <= kLaneAiv1; ++lane)
    if ((p.consumers & (1u << lane)) && p.popped[lane - 1] < p.to_pop[lane - 1]) return;
  pipes_.erase(it);
}

Time CrossCorePipes::execute(const PhaseCtx& ctx, Time t) {
  const Key key{ctx.cluster, ctx.task->id, ctx.block};
  Pipe& p = pipe_of(ctx);
  Time done;
  if (ctx.phase->kind == PhaseKind::Push) {
    p.pusher_drain = ctx.phase->pipe_drain;
    done = push(p, ctx, t);
  } else {
    const int lane = ctx.lane == kLaneAic ? kLaneAiv0 : ctx.lane;
    const std::int64_t bytes = ctx.phase->bytes.eval_or(BlockEnv(ctx.block, ctx.block_num), 0);
    const Time cost = gm_transfer(platform_.gm, static_cast<std::uint64_t>(std::max<std::int64_t>(0, bytes)));
    done = pop(p, lane, t, cost);
    if (done == kNever) p.popper[lane - 1] = Waiter{ctx.core, t, cost};
  }
  wake(p, key);  // may erase the pipe
  return done;
}

}  // namespace npusim
