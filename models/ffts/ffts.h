// The FFTS hardware barrier behind a HARD pl.system.syncall
// (runtime-semantics.md §6): every physical core of the barrier's core type
// must arrive (AIV: all AIVs, AIC: all AICs, MIX: all of them); the last
// arrival releases everyone after `ffts.barrier_release`. A core that never
// arrives (no block of the kernel on it, its block queued behind a wave that
// is stuck here) leaves the others waiting for ever: on the device the
// AICore never completes and the host sees 507018; npusim ends the run and
// explains it (sim/engine/diagnosis.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/aicore/aicore.h"

namespace npusim {

class FftsBarrier : public PhaseHandler {
 public:
  FftsBarrier(AicoreComplex& cores, const Platform& platform);

  bool handles(const Phase& ph) const override {
    return ph.kind == PhaseKind::Syncall && ph.sync_mode == SyncMode::Hard;
  }
  Time execute(const PhaseCtx& ctx, Time t) override;

  // The number of physical cores a barrier of this core type waits for.
  int participants(CoreType type) const;

  struct Episode {
    CoreType type;
    int participants = 0;
    std::vector<int> arrived;  // cores, in arrival order
    int counted = 0;           // arrived cores of the barrier's type (the others never count)
    Time first_arrival = 0;
  };
  // Barriers still waiting (for a hang's diagnosis).
  std::vector<Episode> open_episodes() const;

 private:
  bool counts(CoreType type, int core) const;  // is `core` a participant of a barrier of `type`?
  AicoreComplex& cores_;
  const Platform& platform_;
  std::array<Episode, 3> open_;  // per core type (AIC, AIV, MIX)
};

}  // namespace npusim
