// The links of one node's full mesh (docs/interconnect.md): plain C++, no
// SystemC. Chip a reaches chip b over its own a->b link; the b->a link is
// another one (full duplex). A transfer of B bytes costs
// link_latency + B / link_bytes_per_ns, and a link carries one transfer at a
// time, in the order they are asked for (FIFO): a transfer asked while the
// link is busy starts when the link's last transfer has arrived.
#pragma once

#include <cstdint>
#include <vector>

#include "models/common/platform.h"
#include "models/common/time.h"

namespace npusim {

class Links {
 public:
  Links(const InterconnectCosts& costs, int chips);

  int chips() const { return chips_; }
  // The time one transfer of `bytes` occupies a link: latency + bytes / bandwidth
  // (rounded to the picosecond).
  Time cost(std::uint64_t bytes) const;
  // A transfer of `bytes` from chip `from` to chip `to` asked at `t` (calls in
  // non-decreasing `t`): returns its arrival, and the link is busy until then.
  Time transfer(int from, int to, std::uint64_t bytes, Time t);
  // The peer `offset` places after `rank` in the ring of the node's chips.
  int peer(int rank, int offset) const { return ((rank + offset) % chips_ + chips_) % chips_; }

 private:
  InterconnectCosts costs_;
  int chips_;
  std::vector<Time> free_at_;  // [from * chips + to]: when the link's last transfer arrives
};

}  // namespace npusim
