// A `normal` kernel duration in picoseconds, drawn without the maths
// library's log and cos (sqrt is an instruction) but for about 2 draws in 10
// million per ns of sigma (bench_pa_1m's kernels, sigma 59 to 178 ns: 1 to 4
// in 100,000), and always the same value as the library's draw
// (docs/architecture.md, "A normal duration without the maths library").
//
// The value is defined by rng.h's standard_normal (Box-Muller with the
// library's std::log, std::cos and std::sqrt): from_ns(a + b * N), truncated
// at zero. What a run's outputs see is only that integer number of
// picoseconds. So the draw first computes N with short polynomials, inline and
// without a branch (`approx_normal`), whose distance to the library's N is
// bounded (kApproxError), and widens a + b * N by that bound and by the
// rounding of the sums (`margin`). from_ns is monotone, so when both ends of
// that interval give the same picoseconds, the library's value lies between
// them and gives them too; otherwise (the interval straddles a rounding
// boundary of from_ns, or a or b is not finite) it takes the library's path.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "models/common/rng.h"
#include "models/common/time.h"

namespace npusim {
namespace normal_detail {

// ln(u) for u in (0, 1], a normal double (unit_uniform's values are at least
// 2^-54). u = m * 2^k with m in [sqrt(1/2), sqrt(2)) (the exponent split by
// integer arithmetic on the bits), and ln(m) = 2 atanh(s) with
// s = (m - 1) / (m + 1), |s| <= 0.1716, summed to s^15 / 15: the first term
// left out is below 2 * 0.1716^17 / 17 / (1 - 0.1716^2) = 1.2e-14. With the
// rounding of s, of ln 2 and of the sums, |error| < 3e-14 (|ln u| <= 37.5).
inline double log_unit(double u) {
  std::uint64_t bits;
  std::memcpy(&bits, &u, sizeof bits);
  constexpr std::uint64_t kSqrtHalf = 0x3FE6A09E667F3BCDull;  // the bits of sqrt(1/2)
  const std::uint64_t t = bits - kSqrtHalf;
  const double k = static_cast<double>(static_cast<std::int64_t>(t) >> 52);  // arithmetic (GCC and Clang)
  const std::uint64_t mbits = bits - (t & 0xFFF0000000000000ull);
  double m;
  std::memcpy(&m, &mbits, sizeof m);
  const double s = (m - 1.0) / (m + 1.0);
  const double w = s * s;
  const double p = 1.0 + w * (1.0 / 3 + w * (1.0 / 5 + w * (1.0 / 7 + w * (1.0 / 9 +
                   w * (1.0 / 11 + w * (1.0 / 13 + w * (1.0 / 15)))))));
  return k * 0.6931471805599453 + 2.0 * s * p;
}

// cos(x) for x in [0, 2 pi] (standard_normal's argument): -cos(y) with
// y = x - pi, |y| <= pi (x - pi is off by at most 3.4e-16: x's rounding in
// the subtraction and pi's as a double; 7.8e-16 in a build that contracts
// 2 pi u2 - pi to a fused multiply-add, which the default flags do not),
// its Taylor series summed to y^22 / 22!: the series alternates with falling terms from there, so the
// first term left out bounds the error, pi^24 / 24! = 1.4e-12; the sums'
// rounding adds below 3e-14 (their terms add to at most cosh(pi) = 11.6).
inline double cos_0_2pi(double x) {
  const double y = x - 3.141592653589793;
  const double w = y * y;
  // (-1)^n / (2n)!, n = 0..11
  constexpr double c0 = 1.0, c1 = -1.0 / 2, c2 = 1.0 / 24, c3 = -1.0 / 720, c4 = 1.0 / 40320,
                   c5 = -1.0 / 3628800, c6 = 1.0 / 479001600, c7 = -1.0 / 87178291200.0,
                   c8 = 1.0 / 20922789888000.0, c9 = -1.0 / 6402373705728000.0,
                   c10 = 1.0 / 2432902008176640000.0, c11 = -1.0 / 1124000727777607680000.0;
  // Two halves in w^2, evaluated side by side (shorter chains of latency).
  const double w2 = w * w;
  const double even = c0 + w2 * (c2 + w2 * (c4 + w2 * (c6 + w2 * (c8 + w2 * c10))));
  const double odd = c1 + w2 * (c3 + w2 * (c5 + w2 * (c7 + w2 * (c9 + w2 * c11))));
  return -(even + w * odd);
}

}  // namespace normal_detail

// standard_normal(key) within kApproxError. Its distance to the library's
// value, from the two bounds above (N = sqrt(z) cos(x), z = -2 ln(u1)):
// sqrt(z) <= 8.67 times cos's 1.4e-12, plus sqrt's error, at most 3e-14
// / sqrt(z) (z's error is twice ln's, sqrt halves it relative to sqrt(z))
// where ln(u1)'s exponent part is not zero (z >= 0.69; where it is zero,
// ln's error is relative and so is sqrt's), plus this path's own sqrt and
// product roundings and the library's error against the exact value (log
// and cos within a unit in the last place, sqrt and the product rounded
// once: together below 1e-14): under 1.3e-11 (1.153e-11 is the worst found,
// tests/test_normal.cpp). kApproxError allows more than seven times that.
constexpr double kApproxError = 1e-10;
inline double approx_normal(std::uint64_t key) {
  const BoxMullerUniforms u = box_muller_uniforms(key);  // standard_normal's
  const double z = -2.0 * normal_detail::log_unit(u.u1);
  return std::sqrt(z) * normal_detail::cos_0_2pi(kBoxMullerTwoPi * u.u2);
}

// How far a + b * approx_normal(key) can be from a + b * standard_normal(key),
// each computed in doubles: |b| times the normals' distance, and the
// roundings of the products, the sums and of v -/+ margin itself (each
// within 2^-53 of a value below |a| + 9 |b|, as |N| < 8.67), taken as 4e-15
// of that (more than needed: v -/+ margin is rounded monotonically, and the
// library's v is a double). `scale` is |a| + 9 |b|. A result in the
// subnormal range is rounded by more than 2^-53 of it, but only by up to
// 2^-1075, and from_ns is 0 up to 5e-4 ns, where the margin is already far
// larger: no rounding boundary lies there.
inline double margin(double b, double scale) { return std::fabs(b) * kApproxError + scale * 4e-15; }

// from_ns(a + b * standard_normal(key)) truncated at zero, the library's
// value, exactly.
inline Time library_normal_time(double a, double b, std::uint64_t key) {
  const double v = a + b * standard_normal(key);
  return from_ns(v < 0 ? 0 : v);
}

// The same value: the polynomials' draw when both ends of its interval
// agree, the library's otherwise. `fallbacks`, if given, counts the draws
// that took the library's path (for tests).
inline Time normal_time(double a, double b, std::uint64_t key, std::uint64_t* fallbacks = nullptr) {
  const double scale = std::fabs(a) + 9.0 * std::fabs(b);
  if (scale < 1e200) {  // false for inf and NaN; and no sum below can overflow
    const double m = margin(b, scale);
    const double v = a + b * approx_normal(key);
    const Time lo = from_ns(v - m);  // from_ns is 0 at or below 0, as the truncation
    if (lo == from_ns(v + m)) return lo;
  }
  if (fallbacks) ++*fallbacks;
  return library_normal_time(a, b, key);
}

}  // namespace npusim
