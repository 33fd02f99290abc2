#include "models/aicore/cross_core.h"

#include <algorithm>

namespace npusim {

CrossCorePipes::CrossCorePipes(AicoreComplex& cores, const Platform& platform)
    : cores_(cores), platform_(platform) {
  const int clusters = cores.map().clusters;
  rings_.resize(static_cast<std::size_t>(clusters) * 2);
  pushers_.resize(static_cast<std::size_t>(clusters));
  for (Ring& r : rings_) r.slots.resize(platform.cross_core.default_slots);
}

Time CrossCorePipes::copy_cost(const PhaseCtx& ctx, Time fixed) const {
  const std::int64_t bytes = ctx.phase->bytes.eval_or(BlockEnv(ctx.block, ctx.block_num), 0);
  double ns = platform_.cross_core.bytes_per_ns > 0 ? static_cast<double>(bytes) / platform_.cross_core.bytes_per_ns : 0;
  return fixed + from_ns(ns);
}

void CrossCorePipes::size_rings(int cluster, const KernelDef& k) {
  const std::size_t want = k.cross_core_slots > 0 ? static_cast<std::size_t>(k.cross_core_slots)
                                                  : platform_.cross_core.default_slots;
  for (int lane = kLaneAiv0; lane <= kLaneAiv1; ++lane) {
    Ring& r = ring(cluster, lane);
    if (r.slots.size() == want || r.head != r.tail) continue;  // resize only an empty ring
    Time free = 0;
    for (const Slot& s : r.slots) free = std::max(free, s.free_at == kNever ? 0 : s.free_at);
    r.slots.assign(want, Slot{free, 0});
    r.head = r.tail = 0;
  }
}

Time CrossCorePipes::try_push(int cluster, std::uint8_t targets, Time t, Time cost) {
  Time start = t;
  for (int lane = kLaneAiv0; lane <= kLaneAiv1; ++lane) {
    if (!(targets & (1u << lane))) continue;
    Ring& r = ring(cluster, lane);
    const Slot& s = r.slots[r.head % r.slots.size()];
    if (s.free_at == kNever) return kNever;  // full: wait for a pop
    start = std::max(start, s.free_at);
  }
  const Time done = start + cost;
  for (int lane = kLaneAiv0; lane <= kLaneAiv1; ++lane) {
    if (!(targets & (1u << lane))) continue;
    Ring& r = ring(cluster, lane);
    Slot& s = r.slots[r.head % r.slots.size()];
    s.free_at = kNever;
    s.ready_at = done;
    ++r.head;
    if (r.popper >= 0) {  // a consumer was waiting for this data
      int core = r.popper;
      r.popper = -1;
      cores_.resume(core, pop_now(r, r.pop_since, r.pop_cost));
    }
  }
  return done;
}

Time CrossCorePipes::pop_now(Ring& r, Time t, Time cost) {
  Slot& s = r.slots[r.tail % r.slots.size()];
  const Time done = std::max(t, s.ready_at) + cost;
  s.free_at = done;
  ++r.tail;
  return done;
}

void CrossCorePipes::wake_pusher(int cluster) {
  Pusher& p = pushers_[static_cast<std::size_t>(cluster)];
  if (p.core < 0) return;
  Time done = try_push(cluster, p.targets, p.since, p.cost);
  if (done == kNever) return;
  int core = p.core;
  p.core = -1;
  cores_.resume(core, done);
}

Time CrossCorePipes::execute(const PhaseCtx& ctx, Time t) {
  size_rings(ctx.cluster, *ctx.task->kernel);
  if (ctx.phase->kind == PhaseKind::Push) {
    const Time cost = copy_cost(ctx, platform_.cross_core.push);
    const std::uint8_t targets = ctx.phase->push_to ? ctx.phase->push_to : static_cast<std::uint8_t>(kMaskAiv0);
    Time done = try_push(ctx.cluster, targets, t, cost);
    if (done == kNever) pushers_[static_cast<std::size_t>(ctx.cluster)] = Pusher{ctx.core, targets, t, cost};
    return done;
  }
  // Pop: from the ring of this AIV lane.
  Ring& r = ring(ctx.cluster, ctx.lane == kLaneAic ? kLaneAiv0 : ctx.lane);
  const Time cost = copy_cost(ctx, platform_.cross_core.pop);
  if (r.tail == r.head) {  // nothing pushed yet
    r.popper = ctx.core;
    r.pop_since = t;
    r.pop_cost = cost;
    return kNever;
  }
  Time done = pop_now(r, t, cost);
  wake_pusher(ctx.cluster);
  return done;
}

}  // namespace npusim
