// Static checks of `npusim check`: what PyPTO's compiler verifiers reject,
// applied to a trace's launches without simulating.
//
// HardSyncallOccupancy (pto-isa include/pto/npu/a2a3/SyncAll.hpp; pypto
// docs/en/dev/ir/05-operators.md): a kernel with a HARD
// syncall must be launched with one block per physical core of the barrier's
// type (AIV: all AIVs; AIC or mixed: all clusters) and with sync_start, or
// it deadlocks on the device (507018). A single-core-type kernel with a
// barrier on the other or the mixed type can never complete.
//
// StaticRules and dry_run are the one evaluator of `check` and of `run`'s
// static rules (docs/testing.md, "check and run agree"): `run` passes its
// program's operations through the same StaticRules as `check`'s dry run,
// and the dry run answers reads as the device would once the producers
// are done (every task completes at once, in submit order, applying its
// declared writes). Where a read's value depends on timing, `check` says
// it cannot know (ReadValueUnknown).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/common/kernel.h"
#include "models/common/platform.h"
#include "models/runtime/data_store.h"
#include "models/runtime/orch_ops.h"
#include "models/common/run_config.h"

namespace npusim::trace {
struct Trace;
}

namespace npusim::diagnose {

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

// The rules both commands apply to what the program does.
class StaticRules {
 public:
  StaticRules(const Platform& p, const RunConfig& c, std::string file)
      : platform_(p), config_(c), file_(std::move(file)) {}
  // Cross-chip phases (a peer's memory, notify, wait_flag) need an L3
  // dispatch of several chips, and a peer that is not the chip itself:
  // InputError at the phase (docs/trace-format.md, "Extensions").
  static void cross_chip(const trace::Trace& t, int chips);
  // One operation as the orchestrator takes it: InputError for a fixed rule
  // (a read or set under host_build_graph); the findings of a launch.
  // Inline: most operations (scopes, most submits) have nothing to check.
  void on_op(const OrchOp& op) {
    if (op.kind == OrchOp::Kind::Submit ? quiet_launch(op.submit)
                                        : op.kind != OrchOp::Kind::Read && op.kind != OrchOp::Kind::Write)
      return;
    check_op(op);
  }
  // The kernels' findings, then the launches' (each once per site and message).
  std::vector<Finding> findings(const std::vector<const KernelDef*>& kernels) const;

 private:
  const Platform& platform_;
  const RunConfig& config_;
  std::string file_;
  std::set<std::string> seen_;
  std::vector<Finding> launches_;
  void check_op(const OrchOp& op);
  // check_launch finds nothing in a launch without sync_start of a kernel
  // without a hard syncall (its only rules): most submits, which skip it.
  bool quiet_launch(const SubmitRequest& req) {
    return !req.kernel || (!req.sync_start && !hard_syncall_of(req.kernel));
  }
  // Whether a kernel has a hard syncall, kept for the first kKernels kernels
  // met (a submit asked for it walked the kernel's phases each time).
  bool hard_syncall_of(const KernelDef* k) {
    for (const auto& [kk, hard] : hard_syncall_)
      if (kk == k) return hard;
    return find_hard_syncall(k);
  }
  bool find_hard_syncall(const KernelDef* k);
  static constexpr std::size_t kKernels = 16;
  std::vector<std::pair<const KernelDef*, bool>> hard_syncall_;
};

// `src` with every operation passed through `rules` before it is returned.
std::unique_ptr<OpSource> ruled(std::unique_ptr<OpSource> src, StaticRules& rules);

// Evaluates a program without a device (npusim check): every operation
// through `rules`; each task accepted and completed at once, in submit
// order (its predicate decided on the data then, its writes applied); the
// device's own stops (scope depth, a reported fatal) as findings. Returns
// the tasks submitted. Throws InputError as `run` would.
std::uint64_t dry_run(OpSource& src, DataStore& data, const Platform& p, StaticRules& rules,
                      std::vector<Finding>& findings);

}  // namespace npusim::diagnose
