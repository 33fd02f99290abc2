#include "sim/record/report_chart.h"

#include <cmath>
#include <cstdio>

#include "sim/record/page_text.h"

namespace npusim::record {

// 1234567 -> "1,234,567".
std::string grouped(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// How a number reads on the page: ns and counts grouped in thousands
// (fractions of a ns to 3 places), ratios and percentages to 2 places.
std::string human(double v, Unit unit) {
  const bool whole = std::abs(v) < 9e15 && v == std::floor(v);
  switch (unit) {
    case Unit::kNs: return (whole ? grouped(static_cast<long long>(v)) : fixed(v, 3)) + " ns";
    case Unit::kBytes: return (whole ? grouped(static_cast<long long>(v)) : fixed(v, 0)) + " B";
    case Unit::kCount: return whole ? grouped(static_cast<long long>(v)) : fixed(v, 3);
    case Unit::kRatio: return fixed(v * 100, 2) + "%";
    case Unit::kPct: return fixed(v, 2) + "%";
  }
  return fixed(v, 3);
}

const char* const kPalette[10] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string px(double v) { return fixed(v, 1); }

std::string svg_open(const std::string& id, int height, const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"" + id + "\" width=\"" +
         std::to_string(kChartWidth) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
         std::to_string(kChartWidth) + " " + std::to_string(height) + "\" role=\"img\" aria-label=\"" +
         xml_escape(title) + "\">\n";
}

std::string svg_text(double x, double y, const std::string& s, const std::string& extra) {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\"" + extra + ">" + xml_escape(s) + "</text>\n";
}

std::string empty_chart(const std::string& id, const std::string& why) {
  return svg_open(id, 40, why) + svg_text(10, 24, why, " class=\"empty\"") + "</svg>\n";
}


}  // namespace npusim::record
