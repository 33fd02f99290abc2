#include "sim/engine/checks.h"

#include "models/runtime/runtime.h"

namespace npusim::engine {

namespace {

const char* type_word(CoreType t) { return t == CoreType::AIC ? "aic" : t == CoreType::AIV ? "aiv" : "mix"; }

// The first HARD syncall of the kernel, if any.
const Phase* hard_syncall(const KernelDef& k) {
  for (const LaneBody& l : k.lanes)
    for (const Phase& ph : l.phases)
      if (ph.kind == PhaseKind::Syncall && ph.sync_mode == SyncMode::Hard) return &ph;
  return nullptr;
}

}  // namespace

std::vector<Finding> check_kernel(const KernelDef& k) {
  std::vector<Finding> out;
  bool hard = false, soft = false;
  for (const LaneBody& l : k.lanes)
    for (const Phase& ph : l.phases)
      if (ph.kind == PhaseKind::Syncall) (ph.sync_mode == SyncMode::Hard ? hard : soft) = true;
  if (hard && soft)
    out.push_back({false, "SyncallModes", k.path,
                   "kernel " + k.name + " mixes HARD and SOFT pl.system.syncall: the two barriers do not wait for each "
                   "other, so blocks can be at different barriers at once; use one mode per kernel"});
  return out;
}

std::vector<Finding> check_launch(const Platform& p, const SubmitRequest& req, const std::string& path) {
  std::vector<Finding> out;
  if (!req.kernel) return out;
  const KernelDef& k = *req.kernel;
  // The runtime refuses a cohort larger than the cores it needs at once.
  if (const int limit = Runtime::sync_start_limit(p, k.shape()); req.sync_start && req.block_num > limit) {
    out.push_back({true, "SyncStartLimit", path,
                   "kernel " + k.name + " is launched with sync_start and block_num=" + std::to_string(req.block_num) +
                       ", more than the " + std::to_string(limit) +
                       (k.shape() == Shape::AIV ? " AIV cores" : " clusters") +
                       " its blocks must hold at once: the runtime refuses the submit with "
                       "REQUIRE_SYNC_START_INVALID (\"require_sync_start block_num=" + std::to_string(req.block_num) +
                       " > limit=" + std::to_string(limit) + " (deadlock guaranteed)\")"});
  }
  const Phase* bar = hard_syncall(k);
  if (!bar) return out;
  const std::string head = "hard pl.system.syncall(core_type=" + std::string(type_word(bar->sync_core_type)) +
                           ") in kernel " + k.name;
  // A single-core-type kernel whose barrier waits for the other type too.
  if (k.core != CoreType::MIX && bar->sync_core_type != k.core) {
    out.push_back({true, "HardSyncallOccupancy", path,
                   head + " can never complete: the barrier waits for every " +
                       (bar->sync_core_type == CoreType::MIX ? std::string("AIC and AIV") : std::string(type_word(bar->sync_core_type))) +
                       " core, and a " + type_word(k.core) + " kernel runs on none of them"});
    return out;
  }
  // The launch must fill every physical core of the barrier's type.
  const bool vector = k.core == CoreType::AIV;
  const int width = vector ? p.topo.aiv_cores() : p.topo.clusters;
  if (req.block_num != width)
    out.push_back({true, "HardSyncallOccupancy", path,
                   head + " requires the SPMD launch to fill all " + std::to_string(width) + " " +
                       (vector ? "AIV cores" : "clusters") + " (one block per physical core, " +
                       (vector ? "pl.system.available_aiv_count()" : "pl.system.available_cluster_count()") +
                       "), but the launch has " + std::to_string(req.block_num) +
                       " blocks. Use mode=\"soft\" (GM-polling) for partial occupancy."});
  if (!req.sync_start)
    out.push_back({true, "HardSyncallOccupancy", path,
                   head + " requires the SPMD launch to set sync_start=True so all blocks are co-resident at the "
                          "FFTS barrier; without it blocks can run in waves and the launch deadlocks on device (507018)"});
  return out;
}

}  // namespace npusim::engine
