// Static checks of `npusim check`: what PyPTO's compiler verifiers reject,
// applied to a trace's launches without simulating.
//
// HardSyncallOccupancy (pto-isa include/pto/npu/a2a3/SyncAll.hpp; pypto
// docs/en/dev/ir/05-operators.md): a kernel with a HARD
// syncall must be launched with one block per physical core of the barrier's
// type (AIV: all AIVs; AIC or mixed: all clusters) and with sync_start, or
// it deadlocks on the device (507018). A single-core-type kernel with a
// barrier on the other or the mixed type can never complete.
#pragma once

#include <string>
#include <vector>

#include "models/common/kernel.h"
#include "models/common/platform.h"
#include "models/runtime/orch_ops.h"

namespace npusim::engine {

struct Finding {
  bool error = true;    // false: a warning
  std::string rule;     // e.g. HardSyncallOccupancy
  std::string path;     // JSON pointer of the launch (or the kernel)
  std::string message;
};

// Findings for one launch (a submit) of a kernel.
std::vector<Finding> check_launch(const Platform& p, const SubmitRequest& req, const std::string& path);

// Findings for a kernel definition, independent of its launches.
std::vector<Finding> check_kernel(const KernelDef& k);

}  // namespace npusim::engine
