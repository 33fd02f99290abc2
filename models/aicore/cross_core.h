// The cross-core pipes of a mix kernel (TPUSH/TPOP/TFREE; pypto's
// pl.cross_core_slot), as PTO-ISA implements them on a2a3 at the revision the
// runtime pins (simpler pto_isa.pin: pto-isa cd4a3d3f,
// include/pto/npu/a2a3/TPush.hpp TPipe / TPUSH_IMPL, TPop.hpp TPOP_IMPL,
// TFree.hpp TFREE_IMPL; docs/overhead.md). A kernel has any number of pipes,
// each with its own direction, slot count and flag pair (FlagID: data,
// FlagID + 1: free; DIR_BOTH adds FlagID + 2 / + 3 for its V->C half). The
// slot buffer is in GM, the hand-offs are FFTS flags (ffts_cross_core_sync
// mode 2, CV_CORES_SYNC). Each pipe is one or two rings, a ring one direction:
//
//  - C->V ring (DIR_C2V, the C2V half of DIR_BOTH, the unnamed pipe): the AIC
//    produces, every active AIV consumes; V->C ring (DIR_V2C, DIR_V2C_CTRL,
//    the V2C half of DIR_BOTH): every active AIV produces, the AIC consumes;
//  - a push (tile i of its lane): if i >= slots and i % SyncPeriod == 0, wait
//    for one free credit (Producer::allocate, wait_flag_dev); TSTORE the tile
//    to the GM slot i % slots; set the data flag (Producer::record, after the
//    store). The GlobalTensor push records only (no allocate, no store, no
//    tile index: the kernel wrote the slot itself);
//  - a pop (tile j of its lane): wait for the data flag (Consumer::wait),
//    TLOAD the slot from GM, and if (j + 1) % SyncPeriod == 0 free the batch
//    (Consumer::free, after the load). The GlobalTensor pop waits and gives
//    the slot's address (no load, no free); its TFREE frees as the tile pop
//    would have. TFREE after a tile pop is a no-op (TFree.hpp);
//  - an AIC sets one flag both AIVs of its cluster see; the AIC's wait on a
//    flag the AIVs set completes once every active AIV has set it (a data
//    flag on a V->C ring, a credit on a C->V ring);
//  - SyncPeriod = slots / 2 above two slots, else slots;
//  - a producing lane ends in ~TPipe, which waits for the credits its pushes
//    did not consume (countPendingFreeCredits): add_pipe_drain appends it.
//
// Costs: each TSTORE / TLOAD is a GM transfer (gm_transfer: gm.line_latency
// + bytes / gm.bytes_per_ns), each flag ffts.flag_ns from the set to the
// waiter's release. The pipes live for one block of the kernel on a cluster
// (tile indices start at 0 in every kernel run).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "models/aicore/aicore.h"

namespace npusim {

// PTO-ISA TPipe::SyncPeriod: frees are signalled, and waited for, once per
// this many tiles.
std::uint32_t pipe_sync_period(std::uint32_t slots);
// PTO-ISA TPipe::shouldWaitFree: the push of tile `i` first waits for a credit.
bool pipe_push_waits(std::uint32_t slots, std::uint32_t i);
// PTO-ISA TPipe::shouldNotifyFree: the pop of tile `j` frees a batch.
bool pipe_pop_frees(std::uint32_t slots, std::uint32_t j);
// PTO-ISA TPipe::countPendingFreeCredits: credits ~TPipe waits for after
// `pushed` tiles.
std::uint32_t pipe_pending_credits(std::uint32_t slots, std::uint32_t pushed);

// The ring of a pipe a phase uses: a push from the AIC and a pop on an AIV are
// on the C->V ring, the others on the V->C ring.
enum class PipeRing : std::uint8_t { C2V = 0, V2C = 1 };
inline PipeRing ring_of(int lane, PhaseKind kind) {
  return (lane == kLaneAic) == (kind == PhaseKind::Push) ? PipeRing::C2V : PipeRing::V2C;
}

class CrossCorePipes : public PhaseHandler {
 public:
  CrossCorePipes(AicoreComplex& cores, const Platform& platform);

  bool handles(const Phase& ph) const override {
    return ph.kind == PhaseKind::Push || ph.kind == PhaseKind::Pop || ph.kind == PhaseKind::Free;
  }
  Time execute(const PhaseCtx& ctx, Time t) override;
  // Rings of kernel runs still under way: a run's ring is retired once every
  // phase of its lanes on it has executed.
  std::size_t open_pipes() const { return rings_.size(); }

  // A core that waits in a pipe phase for ever (a hang's diagnosis): which
  // pipe, which tile, and what it waits for.
  struct OpenWait {
    int core = -1;
    const Task* task = nullptr;
    int block = 0;
    int cluster = 0;
    int lane = 0;
    std::string pipe;     // "" for the unnamed pipe
    std::string dir;      // c2v, v2c, both, v2c_ctrl
    std::string ring;     // "C->V" or "V->C"
    std::string op;       // push, pop, drain (~TPipe)
    std::uint32_t tile = 0;     // the tile the push or pop is at (drain: the tiles pushed)
    std::string waits_for;      // the flag and who would set it, in words
    Time since = 0;
  };
  std::vector<OpenWait> open_waits() const;

 private:
  // A core waiting in a push, a drain or a pop.
  struct Waiter {
    int core = -1;  // -1: none
    Time since = 0;
    Time cost = 0;  // the GM transfer once it may go
    bool global = false;
    bool drain = false;
    std::uint32_t needs = 0;  // a producer: credits it needs in all
  };
  // One direction of one pipe of one kernel run on a cluster.
  struct Ring {
    std::uint32_t slots = 0;
    std::uint8_t producers = 0;  // lane masks
    std::uint8_t consumers = 0;
    struct Producer {
      std::uint32_t tile = 0;       // TPipe::Producer::tileIndex
      std::uint32_t credits = 0;    // free credits consumed
      std::vector<Time> records;    // per record(): its data flag reaches the consumers
      Waiter wait;
    } prod[kNumLanes];
    struct Consumer {
      std::uint32_t tile = 0;       // TPipe::Consumer::tileIndex
      std::vector<Time> freed;      // its k-th free reaches the producers
      bool unfreed = false;         // the last pop was the GlobalTensor form, not yet TFREEd
      Waiter wait;
    } cons[kNumLanes];
    std::size_t phases_left = 0;    // phases of the run's lanes on this ring not yet done
    const Task* task = nullptr;
  };
  using Key = std::tuple<int, TaskId, int, int, int>;  // cluster, task, block, pipe (-1 unnamed), ring

  Ring& ring_of_ctx(const PhaseCtx& ctx, PipeRing r, Key& key);
  // The time the data flag of record `j` reaches the consumers, or kNever.
  static Time data_at(const Ring& g, std::uint32_t j);
  // The time credit `k` (0-based) reaches the producers, or kNever.
  static Time credit_at(const Ring& g, std::uint32_t k);
  // A push (or the drain) of lane `lane` proceeds once it holds w.needs credits.
  Time try_push(Ring& g, int lane, const Waiter& w, Time t);
  Time try_pop(Ring& g, int lane, const Waiter& w, Time t);
  void wake(Ring& g);
  std::uint32_t slots_of(const KernelDef& k, int pipe) const;

  AicoreComplex& cores_;
  const Platform& platform_;
  std::map<Key, Ring> rings_;
};

}  // namespace npusim
