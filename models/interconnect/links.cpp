#include "models/interconnect/links.h"

#include <algorithm>

namespace npusim {

Links::Links(const InterconnectCosts& costs, int chips)
    : costs_(costs), chips_(chips), free_at_(static_cast<std::size_t>(chips) * static_cast<std::size_t>(chips), 0) {}

Time Links::cost(std::uint64_t bytes) const {
  return add_time(costs_.link_latency, from_ns(static_cast<double>(bytes) / costs_.link_bytes_per_ns));
}

Time Links::transfer(int from, int to, std::uint64_t bytes, Time t) {
  Time& free_at = free_at_[static_cast<std::size_t>(from) * static_cast<std::size_t>(chips_) + static_cast<std::size_t>(to)];
  const Time arrival = add_time(std::max(t, free_at), cost(bytes));
  free_at = arrival;
  return arrival;
}

}  // namespace npusim
