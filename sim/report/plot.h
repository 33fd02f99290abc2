// Pieces of the SVG line plots npusim draws (barrier-cost, sweep): numbers
// as text and axis ticks at round values.
#pragma once

#include <string>
#include <vector>

namespace npusim::report::plot {

// A coordinate or a time with one decimal ("12.5").
std::string fmt(double v);

// Axis ticks at round values: a step of 1, 2 or 5 times a power of ten,
// at most `most` intervals from 0 to the first tick at or above `max` (> 0).
std::vector<double> round_ticks(double max, int most);

// A tick's label: the value without decimals.
std::string tick_text(double v);

}  // namespace npusim::report::plot
