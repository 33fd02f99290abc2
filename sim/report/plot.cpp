#include "sim/report/plot.h"

#include <cmath>
#include <cstdio>

namespace npusim::report::plot {

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::vector<double> round_ticks(double max, int most) {
  const double base = std::pow(10.0, std::floor(std::log10(max / most)));
  double step = base;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = base * m;
    if (std::ceil(max / step) <= most) break;
  }
  std::vector<double> ticks;
  const int n = static_cast<int>(std::ceil(max / step));
  for (int i = 0; i <= n; ++i) ticks.push_back(step * i);
  return ticks;
}

std::string tick_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

}  // namespace npusim::report::plot
