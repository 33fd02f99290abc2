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

// ns given as a double (platform files), rounded to the nearest picosecond.
inline Time from_ns(double v) { return v <= 0 ? 0 : static_cast<Time>(v * 1000.0 + 0.5); }

// The length of [from, to], 0 if `to` is not after `from`.
constexpr Time span(Time from, Time to) { return to > from ? to - from : 0; }

inline double to_ns(Time t) { return static_cast<double>(t) / 1000.0; }
inline double to_us(Time t) { return static_cast<double>(t) / 1000000.0; }

// For messages: "12.345 us" (rounded to the nanosecond).
inline std::string us_text(Time t) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f us", to_us(t));
  return b;
}

}  // namespace npusim
