// Kernel definitions: what each block of a task does on a core.
//
// A kernel is one of three core types (AIC, AIV, MIX). Its work is given per
// lane (AIC, AIV0, AIV1) as a body of phases; the trace's `duration` is the
// shorthand for a body of one compute phase. The runtime's resource shape is
// derived from the active lanes (PTO2ResourceShape, simpler's
// tensormap_and_ringbuffer pto_submit_types.h).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/expr.h"

namespace npusim {

enum class CoreType : std::uint8_t { AIC = 0, AIV = 1, MIX = 2 };

// Resource shape of a task: which ready queue it goes to.
enum class Shape : std::uint8_t { AIC = 0, AIV = 1, MIX = 2, DUMMY = 3 };

enum Lane : int { kLaneAic = 0, kLaneAiv0 = 1, kLaneAiv1 = 2, kNumLanes = 3 };

constexpr std::uint8_t kMaskAic = 1, kMaskAiv0 = 2, kMaskAiv1 = 4;

// Shape from an active mask (0 bits DUMMY, >=2 bits MIX, AIC only AIC, one AIV AIV).
inline Shape shape_of_mask(std::uint8_t mask) {
  int bits = __builtin_popcount(mask);
  if (bits == 0) return Shape::DUMMY;
  if (bits >= 2) return Shape::MIX;
  return (mask & kMaskAic) ? Shape::AIC : Shape::AIV;
}

struct Duration {
  // ByBlock: one ns figure per block_idx (modulo their count), as a device
  // capture records them (an extension: "ns_by_block").
  enum class Kind : std::uint8_t { Ns, Cycles, Normal, ByBlock };
  Kind kind = Kind::Ns;
  double a = 0;  // ns, cycles, or mean_ns
  double b = 0;  // sigma_ns (Normal only)
  std::vector<double> by_block;
};

// Push/Pop/Free: TPUSH / TPOP / TFREE on one of a mix kernel's cross-core
// pipes (PTO-ISA TPipe, pl.cross_core_slot; models/aicore/cross_core.h); a
// trace extension.
// Notify/WaitFlag: a cross-chip signal of an L3 dispatch (TNOTIFY / TWAIT,
// models/interconnect); a trace extension.
enum class PhaseKind : std::uint8_t { Compute, Load, Store, Fence, CacheInvalid, Syncall, Push, Pop, Notify, WaitFlag, Free };
enum class SyncMode : std::uint8_t { Hard, Soft };
// A load's cache policy (the seed 000_*.txt, "让流式操作数绕过缓存"): `Inherit`
// when the load names none, so the scope's set_cache_policy for the tensor
// applies; an explicit "default" or "bypass" overrides it either way.
enum class CacheMode : std::uint8_t { Default, Bypass, Inherit };

// The trace's key for a phase kind ({"store": {...}}).
inline const char* phase_key(PhaseKind k) {
  switch (k) {
    case PhaseKind::Compute: return "compute";
    case PhaseKind::Load: return "load";
    case PhaseKind::Store: return "store";
    case PhaseKind::Fence: return "fence";
    case PhaseKind::CacheInvalid: return "cacheinvalid";
    case PhaseKind::Syncall: return "syncall";
    case PhaseKind::Push: return "push";
    case PhaseKind::Pop: return "pop";
    case PhaseKind::Notify: return "notify";
    case PhaseKind::WaitFlag: return "wait_flag";
    case PhaseKind::Free: return "free";
  }
  return "?";
}

struct Phase {
  PhaseKind kind = PhaseKind::Compute;
  Duration duration;          // Compute
  int arg = -1;               // Load/Store/CacheInvalid(region): index into the submit's args
  Expr offset;                // Load/Store: bytes into the arg's view (default 0)
  Expr bytes;                 // Load/Store
  CacheMode cache = CacheMode::Inherit;  // Load: its own `cache`, or Inherit
  bool all = false;           // CacheInvalid "all"
  SyncMode sync_mode = SyncMode::Hard;   // Syncall
  CoreType sync_core_type = CoreType::AIV;
  int workspace_arg = -1;     // Syncall soft
  Expr used_cores;            // Syncall soft
  std::uint8_t push_to = 0;   // Push: lane mask of the receiving AIVs (kMaskAiv0 | kMaskAiv1)
  bool pipe_drain = false;    // Push: not a push but the pipe's destructor at the end of a producing lane (add_pipe_drain)
  int pipe = -1;              // Push/Pop/Free: index into KernelDef::pipes; -1: the unnamed pipe (cross_core_slots)
  bool global = false;        // Push/Pop: the GlobalTensor form (TPUSH records only; TPOP gives the slot's address, TFREE frees)
  // Load/Store/Notify on a peer chip of an L3 dispatch: (rank + peer_offset)
  // mod chips (models/interconnect); `peer` false: this chip's own memory.
  bool peer = false;
  int peer_offset = 0;
  int flag = 0;               // Notify/WaitFlag: the signal slot on the chip
  std::int64_t count = 0;     // WaitFlag: notifications the flag must have received
  std::string path;           // JSON pointer of the phase, for messages (its fields: path/<phase_key>/<field>)
  // Goes over the interconnect (a peer load/store, a notify, a flag wait).
  bool cross_chip() const { return peer || kind == PhaseKind::Notify || kind == PhaseKind::WaitFlag; }
};

struct LaneBody {
  bool active = false;
  std::vector<Phase> phases;
  // The func_id this lane runs, where it is not the kernel's own: a MIX task
  // an SDK program composes from per-lane incores (MixedKernels). -1: func_id.
  int func_id = -1;
};

// The direction of a cross-core pipe: PTO-ISA include/pto/common/fifo.hpp
// `Direction` (DIR_C2V 1, DIR_V2C 2, DIR_BOTH 3, DIR_V2C_CTRL 4; the a2a3
// TPipe accepts these four, TPush.hpp's static_assert).
enum class PipeDir : std::uint8_t { C2V = 1, V2C = 2, Both = 3, V2CCtrl = 4 };

inline const char* pipe_dir_name(PipeDir d) {
  switch (d) {
    case PipeDir::C2V: return "c2v";
    case PipeDir::V2C: return "v2c";
    case PipeDir::Both: return "both";
    case PipeDir::V2CCtrl: return "v2c_ctrl";
  }
  return "?";
}

// One named TPipe of a kernel: TPipe<FlagID, DirType, SlotSize, SlotNum>.
// (The kernel's `cross_core_slots` is the unnamed C2V pipe's SlotNum: phases
// without a "pipe" use it, Phase::pipe -1.)
struct PipeDef {
  std::string name;
  PipeDir dir = PipeDir::C2V;
  int slots = 0;     // SlotNum
  int flag_id = -1;  // FlagID if the trace gives it (-1: not given)
  std::string path;  // JSON pointer of the declaration
  // Flag IDs the pipe occupies: FlagID and FlagID + 1, with DIR_BOTH also + 2 and + 3.
  int flags_used() const { return dir == PipeDir::Both ? 4 : 2; }
};

struct KernelDef {
  std::string name;
  int func_id = 0;
  CoreType core = CoreType::AIV;
  std::array<LaneBody, kNumLanes> lanes;  // AIC, AIV0, AIV1
  int cross_core_slots = 0;  // slot_num of the unnamed AIC->AIV pipe (required when the kernel pushes or pops without "pipe")
  std::vector<PipeDef> pipes;  // the named pipes ("pipes"), in declaration order
  std::string path;  // JSON pointer of the definition

  std::uint8_t active_mask() const {
    std::uint8_t m = 0;
    for (int l = 0; l < kNumLanes; ++l)
      if (lanes[l].active) m |= static_cast<std::uint8_t>(1u << l);
    return m;
  }
  Shape shape() const { return shape_of_mask(active_mask()); }
  // The func_id of a lane's kernel (deps.json's kernel_ids).
  int lane_func_id(int lane) const { return lanes[lane].func_id >= 0 ? lanes[lane].func_id : func_id; }
  // Composed of incores by an SDK program: the kernel's own func_id names no callable.
  bool composed() const {
    for (const LaneBody& l : lanes)
      if (l.active && l.func_id >= 0) return true;
    return false;
  }
};

// A lane that pushes on a pipe ends in that pipe's destructor: PTO-ISA's
// ~TPipe (include/pto/npu/a2a3/TPush.hpp) waits for the free credits its
// TPUSHes did not consume (countPendingFreeCredits), so the producer does not
// return before its consumers freed the last batch. Whoever builds a kernel
// calls this once its lanes are complete; it appends that wait as a last
// phase of each producing lane, one per pipe the lane pushed on (a no-op for
// a kernel without pushes).
inline void add_pipe_drain(KernelDef& k) {
  static const char* const lane_key[kNumLanes] = {"/lanes/aic", "/lanes/aiv0", "/lanes/aiv1"};
  for (int l = 0; l < kNumLanes; ++l) {
    std::vector<Phase>& ph = k.lanes[l].phases;
    std::vector<int> pushed;  // pipes in the order of their first push
    bool drained = false;
    for (const Phase& p : ph) {
      if (p.kind != PhaseKind::Push) continue;
      drained = drained || p.pipe_drain;
      if (!p.global && std::find(pushed.begin(), pushed.end(), p.pipe) == pushed.end()) pushed.push_back(p.pipe);
    }
    if (drained) continue;  // already there
    for (auto it = pushed.rbegin(); it != pushed.rend(); ++it) {  // destructors run in reverse order
      Phase d;
      d.kind = PhaseKind::Push;
      d.pipe_drain = true;
      d.pipe = *it;
      const std::string what = *it >= 0 && *it < static_cast<int>(k.pipes.size())
                                   ? "pipe \"" + k.pipes[*it].name + "\"'s destructor"
                                   : "the pipe's destructor";
      d.path = k.path + (k.core == CoreType::MIX ? lane_key[l] : "") + " (end: " + what + ")";
      ph.push_back(std::move(d));
    }
  }
}

// The names a kernel's phase expressions may use: slot 0 = block_idx,
// slot 1 = block_num (trace-format.md).
class BlockEnv : public ExprEnv {
 public:
  BlockEnv(std::int64_t idx, std::int64_t num) : v_{idx, num} {}
  bool get(int slot, std::int64_t& value) const override {
    if (slot < 0 || slot > 1) return false;
    value = v_[slot];
    return true;
  }
  std::string describe(int slot) const override {
    return slot == 0 ? "block_idx" : slot == 1 ? "block_num" : "unknown name";
  }

 private:
  std::int64_t v_[2];
};

}  // namespace npusim
