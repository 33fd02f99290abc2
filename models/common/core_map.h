// Core numbering of simpler src/a2a3/docs/hardware.md (plain C++, shared by the cores,
// the scheduler threads and the writers that name cores and threads).
#pragma once

#include <cstdint>

#include "models/common/kernel.h"

namespace npusim {

enum class CoreKind : std::uint8_t { AIC, AIV };

// Workers 0..B-1 are AIC, B..3B-1 AIV; cluster ci = {AIC ci, AIV0 B+2ci,
// AIV1 B+2ci+1}; the cores of cluster ci belong to scheduler thread
// ci % threads.
// Whether a syncall of `type` does anything on a core of `kind`: PTO-ISA
// compiles the AIV-only barriers out of the cube binary and the AIC-only ones
// out of the vector binary (include/pto/npu/a2a3/SyncAll.hpp SYNCALL_IMPL,
// include/pto/common/syncall_soft.hpp SYNCALL_SOFT_IMPL / _AIC_IMPL); mix
// barriers run on both.
inline bool syncall_runs_on(CoreType type, CoreKind kind) {
  return type == CoreType::MIX || (type == CoreType::AIV) == (kind == CoreKind::AIV);
}

struct CoreMap {
  int clusters = 0;
  int aic(int ci) const { return ci; }
  int aiv0(int ci) const { return clusters + 2 * ci; }
  int aiv1(int ci) const { return clusters + 2 * ci + 1; }
  int of_lane(int ci, int lane) const {
    return lane == kLaneAic ? aic(ci) : lane == kLaneAiv0 ? aiv0(ci) : aiv1(ci);
  }
  int total() const { return 3 * clusters; }
  CoreKind kind(int core) const { return core < clusters ? CoreKind::AIC : CoreKind::AIV; }
  int cluster_of(int core) const { return core < clusters ? core : (core - clusters) / 2; }
  int lane_of(int core) const {
    return core < clusters ? kLaneAic : (core - clusters) % 2 ? kLaneAiv1 : kLaneAiv0;
  }
  int thread_of(int core, int threads) const { return cluster_of(core) % threads; }
};

}  // namespace npusim
