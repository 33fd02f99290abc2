// Counter-based random numbers: a sample depends only on (seed, key...), never
// on the order in which the simulation asks for it, so a model change that
// reorders events does not reshuffle every sampled kernel duration.
#pragma once

#include <cmath>
#include <cstdint>

namespace npusim {

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// hash_key in two steps, for a caller that hashes many keys of one seed:
// the seed's step (seed_hash) taken once, then the key's (hash_from).
inline std::uint64_t seed_hash(std::uint64_t seed) { return splitmix64(seed ^ 0x6A09E667F3BCC909ull); }
inline std::uint64_t hash_from(std::uint64_t seed_h, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0,
                               std::uint64_t d = 0) {
  std::uint64_t h = splitmix64(seed_h ^ a);
  h = splitmix64(h ^ b);
  h = splitmix64(h ^ c);
  return splitmix64(h ^ d);
}

inline std::uint64_t hash_key(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0,
                              std::uint64_t c = 0, std::uint64_t d = 0) {
  return hash_from(seed_hash(seed), a, b, c, d);
}

// Uniform in (0, 1]: 1.0 only for the top 2^11 hashes ((2^53 - 1) + 0.5 rounds to 2^53).
inline double unit_uniform(std::uint64_t h) {
  return (static_cast<double>(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// Box-Muller's inputs from a key: two derived uniforms, and the angle's
// factor (2 pi), shared with normal.h's polynomial draw, which must see the
// same values.
struct BoxMullerUniforms {
  double u1, u2;
};
inline BoxMullerUniforms box_muller_uniforms(std::uint64_t key) {
  return {unit_uniform(splitmix64(key)), unit_uniform(splitmix64(key ^ 0xD1B54A32D192ED03ull))};
}
constexpr double kBoxMullerTwoPi = 6.283185307179586;

// Standard normal from a key (Box-Muller on two derived uniforms).
inline double standard_normal(std::uint64_t key) {
  const BoxMullerUniforms u = box_muller_uniforms(key);
  return std::sqrt(-2.0 * std::log(u.u1)) * std::cos(kBoxMullerTwoPi * u.u2);
}

}  // namespace npusim
