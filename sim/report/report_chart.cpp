#include "sim/report/report_chart.h"

#include <cmath>
#include <cstdio>

#include "sim/report/page_text.h"

namespace npusim::report {

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

namespace {

// `v` with 3 decimals, its whole part grouped in thousands: "1,234.567".
std::string grouped3(double v) {
  const std::string f = fixed(std::abs(v), 3);
  const std::size_t dot = f.find('.');
  std::string out = grouped(std::stoll(f.substr(0, dot))) + f.substr(dot);
  return (v < 0 && f != "0.000" ? "-" : "") + out;
}

// A time in ns in the unit that keeps it short.
std::string time_text(double v) {
  const double a = std::abs(v);
  const bool whole = a < 9e15 && v == std::floor(v);
  if (a < 1e4) return (whole ? grouped(static_cast<long long>(v)) : fixed(v, 3)) + " ns";
  if (a < 1e7) return grouped3(v / 1e3) + " us";
  if (a < 1e10) return grouped3(v / 1e6) + " ms";
  return grouped3(v / 1e9) + " s";
}

}  // namespace

std::string human(double v, Unit unit) {
  if (!std::isfinite(v)) return "n/a";
  const bool whole = std::abs(v) < 9e15 && v == std::floor(v);
  switch (unit) {
    case Unit::kNs: return time_text(v);
    case Unit::kCode: return whole ? std::to_string(static_cast<long long>(v)) : fixed(v, 0);
    case Unit::kBytes: return (whole ? grouped(static_cast<long long>(v)) : fixed(v, 0)) + " B";
    case Unit::kCount: return whole ? grouped(static_cast<long long>(v)) : fixed(v, 3);
    case Unit::kRatio: return fixed(v * 100, 2) + "%";
    case Unit::kPct: return fixed(v, 2) + "%";
  }
  return fixed(v, 3);
}

std::vector<LegendSlot> legend_layout(const std::vector<std::string>& labels, double x0, double x1) {
  std::vector<LegendSlot> out;
  double x = x0;
  int row = 0;
  for (const std::string& l : labels) {
    const double w = 30 + 7.0 * static_cast<double>(l.size());
    if (x > x0 && x + w > x1) x = x0, ++row;
    out.push_back({x, row});
    x += w;
  }
  return out;
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

}  // namespace npusim::report
