// Drawing pieces shared by the sections of `npusim report` (report.cpp,
// report_series.cpp): numbers as the page shows them and the SVG frame of a
// chart.
#pragma once

#include <string>

namespace npusim::record {

enum class Unit { kNs, kCount, kRatio, kPct, kBytes };

// 1234567 -> "1,234,567".
std::string grouped(long long v);

// `v` with `decimals` places.
std::string fixed(double v, int decimals);

// How a number reads on the page: ns and counts grouped in thousands
// (fractions of a ns to 3 places), ratios and percentages to 2 places.
std::string human(double v, Unit unit);

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

}  // namespace npusim::record
