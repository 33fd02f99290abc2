// The cross-core slot rings of mix kernels (TPUSH/TPOP; pypto's
// pl.cross_core_slot): per cluster, one ring from the AIC to each AIV, of
// `slot_num` slots (the kernel's `cross_core_slots`, default the platform's).
// Like the hardware VEC_FIFO the rings persist across tasks.
//
// A push takes the next slot of each target ring once it is free (a full
// ring stalls the producer until a pop frees a slot), copies the tile in and
// makes it visible; a pop waits for the next filled slot, copies it out and
// frees it. Producer and consumer lanes therefore overlap, bounded by the
// number of slots.
#pragma once

#include <cstdint>
#include <vector>

#include "models/aicore/aicore.h"

namespace npusim {

class CrossCorePipes : public PhaseHandler {
 public:
  CrossCorePipes(AicoreComplex& cores, const Platform& platform);

  bool handles(const Phase& ph) const override { return ph.kind == PhaseKind::Push || ph.kind == PhaseKind::Pop; }
  Time execute(const PhaseCtx& ctx, Time t) override;

 private:
  struct Slot {
    Time free_at = 0;       // when the slot can be written again (kNever: filled, not yet popped)
    Time ready_at = 0;      // when the data pushed into it is visible to the consumer
  };
  struct Ring {
    std::vector<Slot> slots;
    std::uint64_t head = 0;  // next slot to push
    std::uint64_t tail = 0;  // next slot to pop
    int popper = -1;         // AIV core waiting for data
    Time pop_since = 0;
    Time pop_cost = 0;
  };
  struct Pusher {
    int core = -1;
    std::uint8_t targets = 0;  // lane mask
    Time since = 0;
    Time cost = 0;
  };

  Ring& ring(int cluster, int lane) { return rings_[static_cast<std::size_t>(cluster) * 2 + (lane - 1)]; }
  Time copy_cost(const PhaseCtx& ctx, Time fixed) const;
  // Sizes the rings of a cluster for the kernel, if they are empty.
  void size_rings(int cluster, const KernelDef& k);
  // Pushes now if every target ring's next slot has a known free time;
  // returns the time the push completes, or kNever.
  Time try_push(int cluster, std::uint8_t targets, Time t, Time cost);
  // Completes a pop from `r` started at `t`; returns its end.
  Time pop_now(Ring& r, Time t, Time cost);
  void wake_pusher(int cluster);

  AicoreComplex& cores_;
  const Platform& platform_;
  std::vector<Ring> rings_;
  std::vector<Pusher> pushers_;  // per cluster
};

}  // namespace npusim
