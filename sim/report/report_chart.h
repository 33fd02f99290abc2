// Drawing pieces shared by the sections of `npusim report` (report.cpp,
// report_series.cpp): numbers as the page shows them and the SVG frame of a
// chart.
#pragma once

#include <string>
#include <vector>

namespace npusim::report {

enum class Unit { kNs, kCount, kRatio, kPct, kBytes, kCode };

// 1234567 -> "1,234,567".
std::string grouped(long long v);

// `v` with `decimals` places.
std::string fixed(double v, int decimals);

// How a number reads on the page: times in the unit that keeps them short
// (ns below 10 us, us below 10 ms, ms below 10 s, then s; 3 decimals above
// ns), counts grouped in thousands, ratios and percentages to 2 places, codes
// (error codes) as their digits.
std::string human(double v, Unit unit);

// A legend's entries laid out in rows that fit [x0, x1): each entry's x and
// row (a swatch and its label, ~7 px a character at the charts' 12 px).
struct LegendSlot {
  double x;
  int row;
};
std::vector<LegendSlot> legend_layout(const std::vector<std::string>& labels, double x0, double x1);

constexpr int kChartWidth = 760;
constexpr int kLabelWidth = 170;
constexpr int kValueWidth = 150;
constexpr int kBarArea = kChartWidth - kLabelWidth - kValueWidth;
constexpr int kRow = 26;

extern const char* const kPalette[10];

// A coordinate as the SVG shows it (one decimal).
std::string px(double v);

// An <svg class="chart"> of the page's width.
std::string svg_open(const std::string& id, int height, const std::string& title);
std::string svg_text(double x, double y, const std::string& s, const std::string& extra = "");

// A chart with nothing to draw: one line saying why.
std::string empty_chart(const std::string& id, const std::string& why);

}  // namespace npusim::report
