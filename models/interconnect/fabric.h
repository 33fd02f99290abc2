// The interconnect of one L3 dispatch (docs/interconnect.md): the node's
// links (links.h) and each chip's port, through which its cores reach peer
// chips. A port is the PhaseHandler of its chip's cross-chip phases:
//   - a load (store) of peer memory is one transfer over the peer->chip
//     (chip->peer) link; the core continues when it has arrived;
//   - a notify is a posted 4-byte atomic add (TNOTIFY AtomicAdd) over the
//     chip->peer link: the core goes on at once, the peer's flag counts it
//     when it arrives;
//   - a flag wait (TWAIT ... GE) holds the core until the chip's flag has
//     counted `count` notifications.
// Time is events: one SC_METHOD delivers the notifications at their arrival.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <queue>
#include <vector>

#include <systemc>

#include "models/aicore/aicore.h"
#include "models/interconnect/links.h"

namespace npusim {

class Fabric;

// The size of a notification: TNOTIFY's int32 signal word.
constexpr std::uint64_t kNotifyBytes = 4;

class PeerPort : public PhaseHandler {
 public:
  PeerPort(Fabric& fabric, int rank) : fabric_(fabric), rank_(rank) {}

  // The chip's cores, whose waits this port ends.
  void bind(AicoreComplex& cores) { cores_ = &cores; }
  int rank() const { return rank_; }

  bool handles(const Phase& ph) const override { return ph.cross_chip(); }
  Time execute(const PhaseCtx& ctx, Time t) override;

  // A flag wait that has not ended (a hang's diagnosis).
  struct OpenWait {
    int core;
    const Task* task;
    int block;
    int flag;
    std::int64_t count;  // wanted
    std::int64_t value;  // received so far
    Time since;
  };
  std::vector<OpenWait> open_waits() const;

 private:
  friend class Fabric;
  struct Waiter {
    int core;
    const Task* task;
    int block;
    std::int64_t count;
    Time since;
  };
  void arrive(int flag, Time t);  // a notification reached this chip's flag

  Fabric& fabric_;
  int rank_;
  AicoreComplex* cores_ = nullptr;
  std::map<int, std::int64_t> flags_;               // flag -> notifications received
  std::map<int, std::vector<Waiter>> waiters_;      // flag -> cores waiting on it, in arrival order
};

class Fabric : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Fabric);
  Fabric(sc_core::sc_module_name name, const InterconnectCosts& costs, int chips);

  PeerPort& port(int rank) { return *ports_[static_cast<std::size_t>(rank)]; }
  Links& links() { return links_; }

 private:
  friend class PeerPort;
  struct Delivery {
    Time t;
    std::uint64_t seq;
    int to;
    int flag;
    bool operator>(const Delivery& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  void post(int to, int flag, Time t);  // a notification arriving at chip `to` at `t`
  void deliver();

  Links links_;
  std::vector<std::unique_ptr<PeerPort>> ports_;
  std::priority_queue<Delivery, std::vector<Delivery>, std::greater<Delivery>> queue_;
  std::uint64_t seq_ = 0;
  sc_core::sc_event ev_;
};

}  // namespace npusim
