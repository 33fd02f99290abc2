// The FFTS hardware barrier behind a HARD pl.system.syncall, step by step as
// PTO-ISA's a2a3 SYNCALL_IMPL does it (include/pto/npu/a2a3/SyncAll.hpp,
// pinned by simpler's pto_isa.pin; docs/barriers.md):
//
//  - core_type aiv: pipe_barrier(PIPE_ALL), ffts_cross_core_sync(mode 0,
//    SYNC_AIV_ONLY_ALL), wait_flag_dev: every physical AIV must arrive;
//  - core_type aic: the same on SYNC_AIC_FLAG over every physical AIC;
//  - core_type mix: each AIV sets SYNC_AIV_FLAG to its cluster's AIC (mode 2,
//    which the AIC's wait reduces over its active AIVs) and waits on
//    SYNC_AIC_AIV_FLAG; each AIC waits for its AIVs' flag, joins the mode-0
//    barrier of every physical AIC (SYNC_AIC_FLAG), then sets
//    SYNC_AIC_AIV_FLAG to its AIVs (mode 2 broadcast).
//
// A barrier of the other core type compiles to nothing in a lane (`aiv` in
// the AIC lane of a mix kernel, `aic` in its AIV lanes): it costs nothing.
// A standalone AIV or AIC kernel whose barrier names the other type (or mix)
// is a program PyPTO rejects (HardSyncallOccupancy: "the other core type has
// zero participants ... can never complete"); npusim keeps its cores waiting,
// as `npusim check` says.
// The last arrival at a mode-0 barrier releases every member after
// `ffts.barrier_release`; a cluster-local flag takes `ffts.flag` from the set
// to the waiter's release. pipe_barrier(PIPE_ALL) costs nothing here: a
// core's phases are sequential, no pipe has work in flight when one starts.
//
// A core that never arrives (no block of the kernel on it, its block queued
// behind a wave that is stuck here) leaves the others waiting for ever: on
// the device the AICore never completes and the host sees 507018; npusim ends
// the run and explains it (sim/diagnose/diagnosis.cpp).
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

  // The barriers cores wait at, by the syncall's core type (a hang's diagnosis).
  struct Episode {
    CoreType type;
    int participants = 0;     // cores that must arrive
    int cores_per_block = 1;  // cores one block of the kernel puts on the barrier (mix: AIC + active AIVs)
    std::vector<int> arrived;  // cores, in arrival order
    int counted = 0;           // arrived cores of the barrier's type (the others never count)
    Time first_arrival = 0;
  };
  std::vector<Episode> open_episodes() const;

 private:
  // A core released at a mode-0 barrier's release plus `delay` (an AIV of a
  // mix barrier: the AIC's broadcast flag).
  struct Member {
    int core;
    Time delay;
  };
  // The mode-0 barrier of one physical core kind (all AICs or all AIVs).
  struct AllCores {
    int expected = 0;
    int arrived = 0;
    Time last = 0;  // latest arrival
    std::vector<Member> members;
  };
  // A mix barrier's gather in one cluster: its AIC waits for the flag of
  // each active AIV lane of its block.
  struct Gather {
    Time aic_at = kNever;
    std::uint8_t expected = 0;  // AIV lanes (kMaskAiv0 | kMaskAiv1)
    std::uint8_t flagged = 0;
    Time flags_at = 0;  // the latest AIV flag's arrival at the AIC
    std::vector<int> aivs;
  };

  // Core `core` reaches the mode-0 barrier of `kind` at `at`, with the cores
  // released `Member::delay` after it; returns the caller's release, or kNever.
  Time join_all(CoreKind kind, Time at, std::vector<Member> members, int caller);
  Time mix(const PhaseCtx& ctx, Time t);
  void note_arrival(const PhaseCtx& ctx, Time t);

  AicoreComplex& cores_;
  const Platform& platform_;
  std::array<AllCores, 2> all_;  // by CoreKind
  std::vector<Gather> gather_;   // by cluster
  std::array<Episode, 3> open_;  // by CoreType (AIC, AIV, MIX)
};

}  // namespace npusim
