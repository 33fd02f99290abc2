// Simulated time: one clock of truth, in integer picoseconds.
//
// Every model keeps time as `Time` (ps since the start of the run). Platform
// figures are given in ns and rounded to ps once, at load. Only the writers of
// the runtime's own schemas convert to the device's 50 MHz system counter.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace npusim {

using Time = std::uint64_t;  // picoseconds

constexpr Time kNever = std::numeric_limits<Time>::max();

constexpr Time ps(std::uint64_t v) { return v; }
constexpr Time ns(std::uint64_t v) { return v * 1000ull; }
constexpr Time us(std::uint64_t v) { return v * 1000000ull; }

// The simulated-time limit: 10^18 ps (10^15 ns, about 11.6 days of device
// time). The engine runs the simulation up to it and fails a run that would
// go beyond (exit 2, docs/outputs.md); a time past it is kBeyond, far enough
// below 2^64 that sums of a few of them cannot wrap.
constexpr Time kTimeLimit = 1000000000000000000ull;
constexpr Time kBeyond = kTimeLimit + 1;

// ns given as a double (platform files, kernel durations), rounded to the
// nearest picosecond; kBeyond past the limit.
inline Time from_ns(double v) {
  if (!(v < static_cast<double>(kTimeLimit) / 1000.0)) return v >= 0 ? kBeyond : 0;  // NaN: 0
  return v <= 0 ? 0 : static_cast<Time>(v * 1000.0 + 0.5);
}

// a + b, kBeyond when it would pass the limit (for sums of many durations).
constexpr Time add_time(Time a, Time b) { return a >= kBeyond || b >= kBeyond - a ? kBeyond : a + b; }

// The length of [from, to], 0 if `to` is not after `from`.
constexpr Time span(Time from, Time to) { return to > from ? to - from : 0; }

inline double to_ns(Time t) { return static_cast<double>(t) / 1000.0; }

// A sum of durations over many blocks or cores (busy time): up to cores x
// kTimeLimit, beyond 2^64 ps, so 128 bits, exact. Below 2^64 it converts to
// the same double as a Time of that value.
using TimeSum = unsigned __int128;
inline double sum_to_ns(TimeSum t) { return static_cast<double>(t) / 1000.0; }
inline double to_us(Time t) { return static_cast<double>(t) / 1000000.0; }

// For messages: "12.345 us" (rounded to the nanosecond).
inline std::string us_text(Time t) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f us", to_us(t));
  return b;
}

}  // namespace npusim
