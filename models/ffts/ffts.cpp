#include "models/ffts/ffts.h"

namespace npusim {

FftsBarrier::FftsBarrier(AicoreComplex& cores, const Platform& platform) : cores_(cores), platform_(platform) {
  for (int k = 0; k < 3; ++k) {
    open_[k].type = static_cast<CoreType>(k);
    open_[k].participants = participants(static_cast<CoreType>(k));
  }
}

int FftsBarrier::participants(CoreType type) const {
  switch (type) {
    case CoreType::AIC: return platform_.topo.aic_cores();
    case CoreType::AIV: return platform_.topo.aiv_cores();
    case CoreType::MIX: return platform_.topo.total_cores();
  }
  return 0;
}

// The barrier waits for every physical core of its core_type. A core of the
// other type that executes it (a single-type kernel whose syncall names the
// other type, or mix) is not one of its participants: it waits, and the
// barrier can never complete for it. PyPTO's HardSyncallOccupancy verifier
// rejects such a launch for that reason (pypto
// src/ir/verifier/verify_hard_syncall_occupancy.cpp: "a *different* core_type
// ... unsatisfiable"); the device would hang until its op-execute watchdog.
Time FftsBarrier::execute(const PhaseCtx& ctx, Time t) {
  Episode& e = open_[static_cast<int>(ctx.phase->sync_core_type)];
  if (e.arrived.empty()) e.first_arrival = t;
  e.arrived.push_back(ctx.core);
  if (!counts(e.type, ctx.core)) return kNever;  // never released
  if (++e.counted < e.participants) return kNever;  // wait for the rest
  // The last core arrived: every participant resumes after the release latency.
  const Time release = t + platform_.ffts.barrier_release;
  std::vector<int> waiting, stranded;
  waiting.swap(e.arrived);
  e.counted = 0;
  for (int core : waiting) {
    if (!counts(e.type, core)) stranded.push_back(core);
    else if (core != ctx.core) cores_.resume(core, release);
  }
  e.arrived = std::move(stranded);
  return release;
}

bool FftsBarrier::counts(CoreType type, int core) const {
  return type == CoreType::MIX || (type == CoreType::AIC) == (cores_.map().kind(core) == CoreKind::AIC);
}

std::vector<FftsBarrier::Episode> FftsBarrier::open_episodes() const {
  std::vector<Episode> v;
  for (const Episode& e : open_)
    if (!e.arrived.empty()) v.push_back(e);
  return v;
}

}  // namespace npusim
