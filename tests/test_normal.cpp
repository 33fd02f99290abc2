// A `normal` duration drawn with polynomials (models/common/normal.h) gives
// the maths library's picoseconds: the bounds its proof uses hold, and the
// draw agrees with rng.h's standard_normal path, including where it must fall
// back to it.
#include <cmath>
#include <cstdint>
#include <limits>

#include "models/common/normal.h"
#include "tests/catch.h"

using namespace npusim;

namespace {
constexpr double kTwoPi = kBoxMullerTwoPi;  // standard_normal's factor
std::uint64_t nth_key(std::uint64_t i) { return splitmix64(i * 0x9E3779B97F4A7C15ull + 17); }
}  // namespace

TEST_CASE("normal draw: ln(u) by polynomial stays within 3e-14 of the library's", "[normal]") {
  double worst = 0;
  for (std::uint64_t i = 0; i < 1000000; ++i) {
    const double u = unit_uniform(nth_key(i));
    worst = std::max(worst, std::fabs(normal_detail::log_unit(u) - std::log(u)));
  }
  // The ends of unit_uniform's range, powers of two (the exponent split's
  // edges) and both sides of sqrt(1/2), where m wraps.
  const double ends[] = {unit_uniform(0), unit_uniform(~std::uint64_t{0}), 0.5, 0.25, 0x1p-54,
                         0.70710678118654746, 0.70710678118654757, std::nextafter(1.0, 0.0)};
  for (double u : ends) worst = std::max(worst, std::fabs(normal_detail::log_unit(u) - std::log(u)));
  // Around sqrt(1/2) 2^k and 2^k for every exponent unit_uniform reaches,
  // 40 units in the last place either side: the split's edges, and where
  // |s| and |ln u| are largest together (the worst found, 2.13e-14, is 33
  // units above sqrt(1/2) 2^-48).
  for (int k = 0; k <= 54; ++k)
    for (double edge : {std::ldexp(0.70710678118654752, -k), std::ldexp(1.0, -k)}) {
      double u = edge;
      for (int i = 0; i < 40; ++i) u = std::nextafter(u, 0.0);
      for (int i = 0; i < 80; ++i, u = std::nextafter(u, 2.0))
        if (u > 0x1p-55 && u <= 1.0) worst = std::max(worst, std::fabs(normal_detail::log_unit(u) - std::log(u)));
    }
  CHECK(worst < 3e-14);
  CHECK(worst > 1e-14);  // the edges come near the bound (1.42e-14 where multiply-adds are fused)
  CHECK(worst > 0);  // a polynomial, not the library
}

TEST_CASE("normal draw: cos(x) by polynomial stays within 1.43e-12 of the library's on 0 to 2 pi", "[normal]") {
  double worst = 0;
  for (std::uint64_t i = 0; i < 1000000; ++i) {
    const double x = kTwoPi * unit_uniform(nth_key(i));
    worst = std::max(worst, std::fabs(normal_detail::cos_0_2pi(x) - std::cos(x)));
  }
  const double ends[] = {0.0, kTwoPi * unit_uniform(0), kTwoPi * unit_uniform(~std::uint64_t{0}), kTwoPi,
                         kTwoPi / 4, kTwoPi / 2, kTwoPi * 3 / 4};
  for (double x : ends) worst = std::max(worst, std::fabs(normal_detail::cos_0_2pi(x) - std::cos(x)));
  // The Taylor remainder (below pi^24 / 24!, 1.37e-12) is approached at the
  // ends, where |y| = pi: 1.358e-12.
  CHECK(worst < 1.43e-12);
  CHECK(worst > 1.3e-12);
}

TEST_CASE("normal draw: the polynomial normal stays within the derived 1.3e-11 of standard_normal", "[normal]") {
  double worst = 0;
  for (std::uint64_t i = 0; i < 1000000; ++i) {
    const std::uint64_t key = nth_key(i);
    worst = std::max(worst, std::fabs(approx_normal(key) - standard_normal(key)));
  }
  // The worst key a review's search found (u1 = 1.5 x 2^-53, u2 just
  // below 1: |y| near pi, sqrt(z) near its largest): 1.153e-11.
  const std::uint64_t worst_key = 0x6c4ab2206dcefb09ull;
  worst = std::max(worst, std::fabs(approx_normal(worst_key) - standard_normal(worst_key)));
  CHECK(worst < 1.3e-11);
  CHECK(worst > 1.1e-11);
  CHECK(worst * 7 < kApproxError);  // the margin keeps its factor over the bound
}

TEST_CASE("normal draw: normal_time gives the library's picoseconds for every draw", "[normal]") {
  struct Case {
    double a, b;
  };
  // Typical kernels, a wide spread, a negative sigma, draws truncated at
  // zero, a tiny sigma, none.
  const Case cases[] = {{1000.0, 50.0}, {20.5, 3.25}, {500.0, 400.0}, {800.0, -120.0},
                        {1.0, 5.0},     {0.0, 1.0},   {1234.5678, 1e-9}, {777.0, 0.0}};
  std::uint64_t fallbacks = 0, draws = 0;
  for (const Case& c : cases)
    for (std::uint64_t i = 0; i < 200000; ++i, ++draws) {
      const std::uint64_t key = nth_key(i);
      INFO("a " << c.a << " b " << c.b << " key " << key);
      REQUIRE(normal_time(c.a, c.b, key, &fallbacks) == library_normal_time(c.a, c.b, key));
    }
  // The library's path is the rare one there: a draw within the margin of a
  // picosecond's rounding boundary.
  CHECK(fallbacks * 10000 < draws);
  // A mean near the time limit, where the margin (about 100 ns) spans many
  // picoseconds: most draws take the library's path, past the limit none
  // (both ends are kBeyond).
  std::uint64_t near_limit = 0;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    const std::uint64_t key = nth_key(i);
    REQUIRE(normal_time(9.99e14, 1e12, key, &near_limit) == library_normal_time(9.99e14, 1e12, key));
  }
  CHECK(near_limit > 10000);
  CHECK(near_limit < 20000);
}

TEST_CASE("normal draw: a draw at a rounding boundary takes the library's path and its value", "[normal]") {
  // a chosen so that a + N lies within 1e-12 ns of a boundary of from_ns
  // (x.xxx5 ns): the interval straddles it and the library decides.
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::uint64_t key = nth_key(i);
    const double a = 1000.0005 - standard_normal(key);
    std::uint64_t fallbacks = 0;
    CHECK(normal_time(a, 1.0, key, &fallbacks) == library_normal_time(a, 1.0, key));
    CHECK(fallbacks == 1);
  }
}

TEST_CASE("normal draw: a mean or sigma that is not finite takes the library's path", "[normal]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::uint64_t key = nth_key(3);
  const double bad[][2] = {{inf, 1.0}, {-inf, 1.0}, {nan, 1.0}, {100.0, nan}, {100.0, inf}, {1e300, 1e300}};
  for (const auto& ab : bad) {
    std::uint64_t fallbacks = 0;
    CHECK(normal_time(ab[0], ab[1], key, &fallbacks) == library_normal_time(ab[0], ab[1], key));
    CHECK(fallbacks == 1);
  }
  CHECK(normal_time(inf, 1.0, key) == kBeyond);
  CHECK(normal_time(nan, 1.0, key) == 0);
}
