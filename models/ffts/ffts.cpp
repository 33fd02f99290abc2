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

Time FftsBarrier::execute(const PhaseCtx& ctx, Time t) {
  Episode& e = open_[static_cast<int>(ctx.phase->sync_core_type)];
  if (e.arrived.empty()) e.first_arrival = t;
  e.arrived.push_back(ctx.core);
  if (static_cast<int>(e.arrived.size()) < e.participants) return kNever;  // wait for the rest
  // The last core arrived: everyone resumes after the release latency.
  const Time release = t + platform_.ffts.barrier_release;
  std::vector<int> waiting;
  waiting.swap(e.arrived);
  for (int core : waiting)
    if (core != ctx.core) cores_.resume(core, release);
  return release;
}

std::vector<FftsBarrier::Episode> FftsBarrier::open_episodes() const {
  std::vector<Episode> v;
  for (const Episode& e : open_)
    if (!e.arrived.empty()) v.push_back(e);
  return v;
}

}  // namespace npusim
