// The cross-core pipe of a mix kernel (TPUSH/TPOP; pypto's
// pl.cross_core_slot), as PTO-ISA implements it on a2a3 at the revision the
// runtime pins (simpler pto_isa.pin: pto-isa cd4a3d3f,
// include/pto/npu/a2a3/TPush.hpp TPipe / TPUSH_IMPL, TPop.hpp TPOP_IMPL;
// docs/overhead.md). The slot buffer is in GM, the hand-offs are FFTS flags:
//
//  - a push (AIC, tile i): if i >= slots and i % SyncPeriod == 0, wait for one
//    free credit (Producer::allocate, wait_flag_dev); TSTORE the tile to the
//    GM slot i % slots; set the data flag (Producer::record,
//    ffts_cross_core_sync mode 2 on PIPE_FIX, after the store), which an AIC
//    broadcasts to both AIVs of its cluster;
//  - a pop (AIV, tile j): wait for the data flag (Consumer::wait), TLOAD the
//    slot from GM, and if (j + 1) % SyncPeriod == 0 free the batch
//    (Consumer::free, mode 2 on PIPE_MTE2, after the load); the AIC's wait
//    counts a credit once every active AIV of its block has freed;
//  - SyncPeriod = slots / 2 above two slots, else slots;
//  - the AIC lane ends in ~TPipe, which waits for the credits its pushes did
//    not consume (countPendingFreeCredits): a phase add_pipe_drain appends.
//
// Costs: each TSTORE / TLOAD is a GM transfer (gm_transfer: gm.line_latency
// + bytes / gm.bytes_per_ns), each flag ffts.flag_ns from the set to the
// waiter's release. The pipe lives for one block of the kernel on a cluster
// (tile indices start at 0 in every kernel run).
#pragma once

#include <cstdint>
#include <map>
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

class CrossCorePipes : public PhaseHandler {
 public:
  CrossCorePipes(AicoreComplex& cores, const Platform& platform);

  bool handles(const Phase& ph) const override { return ph.kind == PhaseKind::Push || ph.kind == PhaseKind::Pop; }
  Time execute(const PhaseCtx& ctx, Time t) override;
  // Pipes of kernel runs still under way: a run's pipe is retired once its
  // AIC lane has drained and every AIV has popped every tile.
  std::size_t open_pipes() const { return pipes_.size(); }

 private:
  // A core waiting in a push, a drain or a pop.
  struct Waiter {
    int core = -1;  // -1: none
    Time since = 0;
    Time cost = 0;  // the GM transfer once it may go
  };
  // One kernel run's pipe on a cluster.
  struct Pipe {
    std::uint32_t slots = 0;
    std::uint8_t consumers = 0;  // active AIV lanes (kMaskAiv0 | kMaskAiv1)
    std::uint32_t pushed = 0;    // the producer's tileIndex
    std::uint32_t credits = 0;   // free credits the producer consumed
    std::vector<Time> data;      // per pushed tile: its data flag reaches the AIVs
    std::uint32_t popped[2] = {0, 0};      // per AIV lane: the consumer's tileIndex
    std::vector<Time> freed[2];            // per AIV lane: its k-th free reaches the AIC
    std::uint32_t to_pop[2] = {0, 0};      // tiles each lane pops in all
    bool drained = false;
    Waiter pusher;
    std::uint32_t pusher_needs = 0;        // credits the waiting push or drain needs in all
    bool pusher_drain = false;             // ... and it is the drain, not a push
    Waiter popper[2];
  };
  using Key = std::tuple<int, TaskId, int>;  // cluster, task, block

  Pipe& pipe_of(const PhaseCtx& ctx);
  // The time credit `k` (0-based) reaches the AIC: when the last active AIV
  // has freed its k-th batch; kNever if one has not yet.
  static Time credit_at(const Pipe& p, std::uint32_t k);
  // A push (or the drain) reached at `t`: returns its end, or kNever.
  Time push(Pipe& p, const PhaseCtx& ctx, Time t);
  // The push (or drain) proceeds once it holds `pusher_needs` credits in all.
  Time try_push(Pipe& p, Time t, Time cost, bool drain);
  Time pop(Pipe& p, int lane, Time t, Time cost);
  void wake(Pipe& p, const Key& key);
  void retire_if_done(const Key& key);

  AicoreComplex& cores_;
  const Platform& platform_;
  std::map<Key, Pipe> pipes_;
};

}  // namespace npusim
