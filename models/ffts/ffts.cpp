#include "models/ffts/ffts.h"

#include <algorithm>

namespace npusim {

namespace {

constexpr std::uint8_t kBarrierAivLanes = kMaskAiv0 | kMaskAiv1;  // (a name of its own: the unity build)

// The AIV lanes whose flag a mix barrier's AIC waits for: the active AIV
// lanes of its kernel. An AIC-only kernel has none running it, and the
// mode-2 wait then waits for AIVs that never set the flag.
std::uint8_t aiv_lanes_of(const KernelDef& k) {
  const std::uint8_t lanes = k.active_mask() & kBarrierAivLanes;
  return lanes ? lanes : kBarrierAivLanes;
}

}  // namespace

FftsBarrier::FftsBarrier(AicoreComplex& cores, const Platform& platform)
    : cores_(cores), platform_(platform), gather_(static_cast<std::size_t>(cores.map().clusters)) {
  all_[static_cast<int>(CoreKind::AIC)].expected = platform.topo.aic_cores();
  all_[static_cast<int>(CoreKind::AIV)].expected = platform.topo.aiv_cores();
  for (int k = 0; k < 3; ++k) open_[k].type = static_cast<CoreType>(k);
}

Time FftsBarrier::execute(const PhaseCtx& ctx, Time t) {
  const CoreKind kind = cores_.map().kind(ctx.core);
  const CoreType type = ctx.phase->sync_core_type;
  if (!syncall_runs_on(type, kind)) {
    if (ctx.task->kernel->core == CoreType::MIX) return t;  // compiled out of this lane
    note_arrival(ctx, t);  // a standalone kernel of the other type: never released
    return kNever;
  }
  note_arrival(ctx, t);
  if (type == CoreType::MIX) return mix(ctx, t);
  return join_all(kind, t, {Member{ctx.core, 0}}, ctx.core);
}

// SYNCALL_IMPL<Mix>: the AIVs' mode-2 flag to their AIC, the AICs' mode-0
// barrier, the AIC's mode-2 flag back to its AIVs.
Time FftsBarrier::mix(const PhaseCtx& ctx, Time t) {
  Gather& g = gather_[static_cast<std::size_t>(ctx.cluster)];
  if (g.aic_at == kNever && g.aivs.empty()) g.expected = aiv_lanes_of(*ctx.task->kernel);
  if (ctx.lane == kLaneAic) {
    g.aic_at = t;
  } else {
    g.flagged |= static_cast<std::uint8_t>(1u << ctx.lane);
    g.flags_at = std::max(g.flags_at, t + platform_.ffts.flag);
    g.aivs.push_back(ctx.core);
  }
  if (g.aic_at == kNever || (g.flagged & g.expected) != g.expected) return kNever;
  // The AIC passes wait_flag_dev(SYNC_AIV_FLAG) and joins the AICs' barrier.
  const Time at = g.flagged ? std::max(g.aic_at, g.flags_at) : g.aic_at;
  std::vector<Member> m{Member{cores_.map().aic(ctx.cluster), 0}};
  for (int c : g.aivs) m.push_back(Member{c, platform_.ffts.flag});
  g = Gather{};
  return join_all(CoreKind::AIC, at, std::move(m), ctx.core);
}

Time FftsBarrier::join_all(CoreKind kind, Time at, std::vector<Member> members, int caller) {
  AllCores& a = all_[static_cast<int>(kind)];
  a.last = a.arrived ? std::max(a.last, at) : at;
  ++a.arrived;
  a.members.insert(a.members.end(), members.begin(), members.end());
  if (a.arrived < a.expected) return kNever;  // wait for the rest
  // The last core arrived: everyone resumes after the release latency.
  const Time release = a.last + platform_.ffts.barrier_release;
  std::vector<Member> done;
  done.swap(a.members);
  a.arrived = 0;
  Time mine = kNever;
  for (const Member& m : done) {
    if (m.core == caller)
      mine = release + m.delay;
    else
      cores_.resume(m.core, release + m.delay);
  }
  // The released participants leave the episodes of this kind; cores of the
  // other kind stranded there stay.
  for (CoreType type : {CoreType::AIC, CoreType::AIV, CoreType::MIX}) {
    if ((type == CoreType::AIV) != (kind == CoreKind::AIV)) continue;
    Episode& e = open_[static_cast<int>(type)];
    e.arrived.erase(std::remove_if(e.arrived.begin(), e.arrived.end(),
                                   [&](int c) { return syncall_runs_on(type, cores_.map().kind(c)); }),
                    e.arrived.end());
    e.counted = 0;
  }
  return mine;
}

void FftsBarrier::note_arrival(const PhaseCtx& ctx, Time t) {
  Episode& e = open_[static_cast<int>(ctx.phase->sync_core_type)];
  if (e.arrived.empty()) {
    e.first_arrival = t;
    if (e.type == CoreType::MIX) {
      e.cores_per_block = 1 + __builtin_popcount(aiv_lanes_of(*ctx.task->kernel));
      e.participants = platform_.topo.aic_cores() * e.cores_per_block;
    } else {
      e.participants = e.type == CoreType::AIV ? platform_.topo.aiv_cores() : platform_.topo.aic_cores();
    }
  }
  e.arrived.push_back(ctx.core);
  if (syncall_runs_on(e.type, cores_.map().kind(ctx.core))) ++e.counted;
}

std::vector<FftsBarrier::Episode> FftsBarrier::open_episodes() const {
  std::vector<Episode> v;
  for (const Episode& e : open_)
    if (!e.arrived.empty()) v.push_back(e);
  return v;
}

}  // namespace npusim
