// The AICores: 24 clusters of one AIC and two AIVs (runtime-semantics.md
// §5.2-5.3), and the AICPU-side view of each core's registers.
//
// Each core is a 2-deep pipeline: a running slot and a pending slot. The
// AICPU writes a token into DATA_MAIN_BASE; the core picks it up (at once if
// it is spinning, after its current kernel if it is busy), sets up, ACKs in
// COND, runs the kernel's phases, and writes FIN. The AICPU learns all this
// only by reading COND, which `poll` decodes exactly as the runtime does.
//
// Time is durations, not clocks: when a block is dispatched, the phases whose
// length is known locally (compute, and the simple memory costs) are laid out
// at once, so a core costs no simulation events unless a phase must wait for
// something outside it. One SC_METHOD with a private queue serves every core.
#pragma once

#include <array>
#include <cstdint>
#include <queue>
#include <vector>

#include <systemc>

#include "models/common/platform.h"
#include "models/common/run_config.h"
#include "models/runtime/observer.h"
#include "models/runtime/task.h"

namespace npusim {

enum class CoreKind : std::uint8_t { AIC, AIV };

// Core numbering of runtime-semantics.md §1: workers 0..B-1 are AIC,
// B..3B-1 AIV; cluster ci = {AIC ci, AIV0 B+2ci, AIV1 B+2ci+1}.
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
    return core < clusters ? kLaneAic : ((core - clusters) % 2 == 0 ? kLaneAiv0 : kLaneAiv1);
  }
};

// A block the AICPU saw finish.
struct FinishedBlock {
  Task* task;
  int record;  // index into task->blocks
};

class AicoreComplex : public sc_core::sc_module {
 public:
  AicoreComplex(sc_core::sc_module_name name, const Platform& platform, const RunConfig& config);

  const CoreMap& map() const { return map_; }

  // ------------------------------------------------ AICPU view (scheduler side)
  bool idle(int core) const { return cores_[core].running < 0; }
  // A second token may be written: running, its ACK seen, no pending yet.
  bool pending_free(int core) const {
    const Core& c = cores_[core];
    return c.running >= 0 && c.pending < 0 && !c.pending_occupied;
  }
  bool pending_occupied(int core) const { return cores_[core].pending_occupied; }
  bool has_pending(int core) const { return cores_[core].pending >= 0; }

  // Publishes block `block` (lane `lane`) of `task` to `core` with a
  // DATA_MAIN_BASE store at `t_write`; `record` indexes task->blocks, whose
  // dispatch/thread fields the caller filled. Returns the token.
  std::uint32_t dispatch(int core, Task* task, int block, int lane, int record, Time t_write);

  // One COND read of `core` returning at time `t`: decodes the value as
  // runtime-semantics.md §5.3 and appends the blocks now known finished.
  void poll(int core, Time t, std::vector<FinishedBlock>& done);

  // The earliest time a COND read of this core would decode something new,
  // or kNever if nothing is pending or the time is not yet known.
  Time next_observable(int core) const;

  // The event to notify when a core's timeline becomes known later than its
  // dispatch (e.g. a barrier released): the owning scheduler thread's wake-up.
  void set_wake(int core, sc_core::sc_event* ev) { cores_[core].wake = ev; }

  // Diagnostics.
  std::uint64_t blocks_started() const { return blocks_started_; }
  Time first_start() const { return first_start_; }
  Time last_end() const { return last_end_; }

 private:
  struct Slot {
    Task* task = nullptr;
    int block = 0;
    int lane = 0;
    int record = -1;
    std::uint32_t token = 0;
    Time arrival = 0;
    Time receive = kNever, start = kNever, end = kNever;
    bool used = false;
  };
  struct Core {
    std::array<Slot, 2> slots;
    int running = -1;    // AICPU view: slot index of the running task
    int pending = -1;    // AICPU view: slot index of the pending task
    bool pending_occupied = false;  // latest token written, ACK not yet seen
    int exec_next = -1;  // AICore side: slot whose timeline is still unknown
    Time free_at = 0;    // AICore back in its DMB poll loop
    bool warm = false;
    std::uint32_t next_token = 1;
    sc_core::sc_event* wake = nullptr;
  };

  int free_slot(const Core& c) const;
  // Lays out as much of the core's timeline as is known (AICore side).
  void advance(int core);
  // Runs the block's phases from `t`; returns the end time.
  Time run_phases(const Slot& s, Time t) const;
  Time sample(const Duration& d, const Slot& s, int phase) const;
  void finish_slot(Core& c, int idx, std::vector<FinishedBlock>& done);
  bool visible(Time x, Time t) const { return x != kNever && x + fin_notice_ <= t; }

  const Platform& platform_;
  const RunConfig& config_;
  CoreMap map_;
  std::vector<Core> cores_;
  Time fin_notice_;
  std::uint64_t blocks_started_ = 0;
  Time first_start_ = kNever, last_end_ = 0;
};

}  // namespace npusim
