#include "sim/record/provenance.h"

#include <array>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace npusim::record {

namespace {

constexpr std::array<std::uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// One 64-byte block into the state (FIPS 180-4, 6.2.2).
void compress(std::array<std::uint32_t, 8>& h, const unsigned char* block) {
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = std::uint32_t(block[4 * i]) << 24 | std::uint32_t(block[4 * i + 1]) << 16 |
           std::uint32_t(block[4 * i + 2]) << 8 | std::uint32_t(block[4 * i + 3]);
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::array<std::uint32_t, 8> v = h;  // a..h
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t e = v[4], a = v[0];
    const std::uint32_t t1 = v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & v[5]) ^ (~e & v[6])) + kRound[i] + w[i];
    const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
    v = {t1 + t2, v[0], v[1], v[2], v[3] + t1, v[4], v[5], v[6]};
  }
  for (int i = 0; i < 8; ++i) h[i] += v[i];
}

void compress_blocks(std::array<std::uint32_t, 8>& h, const unsigned char* p, std::size_t blocks) {
  for (; blocks > 0; --blocks, p += 64) compress(h, p);
}

#if defined(__x86_64__)
// The same blocks with the x86 SHA extensions (Intel's SHA-NI: sha256rnds2
// does two rounds, sha256msg1/msg2 the message schedule): about 20 times
// fewer instructions per block than compress(), which matters because
// every run digests its platform (about 30 KB) and its trace before it
// starts. The state is held as ABEF and CDGH, the order sha256rnds2 takes.
__attribute__((target("sha,ssse3,sse4.1"))) void compress_blocks_cpu(std::array<std::uint32_t, 8>& h,
                                                                     const unsigned char* p, std::size_t blocks) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bll, 0x0405060700010203ll);  // big-endian words
  __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&h[0]));
  __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&h[4]));
  abcd = _mm_shuffle_epi32(abcd, 0xB1);                 // CDAB
  efgh = _mm_shuffle_epi32(efgh, 0x1B);                 // HGFE
  __m128i abef = _mm_alignr_epi8(abcd, efgh, 8);        // ABEF
  __m128i cdgh = _mm_blend_epi16(efgh, abcd, 0xF0);     // CDGH
  for (; blocks > 0; --blocks, p += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[4];
    // Sixteen groups of four rounds; the schedule's next four words are
    // made while the rounds run (msg1 from group 1 to 12, msg2 from 3 to 14).
    for (int g = 0; g < 16; ++g) {
      __m128i& cur = w[g & 3];
      if (g < 4) cur = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * g)), byte_swap);
      __m128i msg = _mm_add_epi32(cur, _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kRound[4 * static_cast<std::size_t>(g)])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
      if (g >= 3 && g <= 14) {
        __m128i& next = w[(g + 1) & 3];
        next = _mm_add_epi32(next, _mm_alignr_epi8(cur, w[(g + 3) & 3], 4));
        next = _mm_sha256msg2_epu32(next, cur);
      }
      msg = _mm_shuffle_epi32(msg, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, msg);
      if (g >= 1 && g <= 12) w[(g + 3) & 3] = _mm_sha256msg1_epu32(w[(g + 3) & 3], cur);
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  abcd = _mm_blend_epi16(feba, dchg, 0xF0);  // DCBA
  efgh = _mm_alignr_epi8(dchg, feba, 8);     // HGFE
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&h[0]), abcd);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&h[4]), efgh);
}

bool cpu_has_sha() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool ssse3_sse41 = (c & bit_SSSE3) && (c & bit_SSE4_1);
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return ssse3_sse41 && (b & bit_SHA);
}
#endif

void (*pick_blocks(bool cpu))(std::array<std::uint32_t, 8>&, const unsigned char*, std::size_t) {
#if defined(__x86_64__)
  if (cpu && cpu_has_sha()) return compress_blocks_cpu;
#endif
  (void)cpu;
  return compress_blocks;
}

std::string sha256_with(void (*blocks_fn)(std::array<std::uint32_t, 8>&, const unsigned char*, std::size_t),
                        const std::string& bytes) {
  std::array<std::uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  const std::size_t done = n / 64 * 64;
  blocks_fn(h, data, n / 64);
  // The tail, 0x80, zeros, and the length in bits (big-endian) fill one or two blocks.
  unsigned char tail[128] = {};
  const std::size_t rest = n - done;
  if (rest) std::memcpy(tail, data + done, rest);
  tail[rest] = 0x80;
  const std::size_t len = rest + 1 + 8 <= 64 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(n) * 8;
  for (int i = 0; i < 8; ++i) tail[len - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  blocks_fn(h, tail, len / 64);
  static const char kHex[] = "0123456789abcdef";
  std::string out(64, '0');
  std::size_t k = 0;
  for (std::uint32_t word : h)
    for (int shift = 28; shift >= 0; shift -= 4) out[k++] = kHex[(word >> shift) & 15];
  return out;
}

}  // namespace

std::string sha256_hex(const std::string& bytes) {
  static const auto blocks_fn = pick_blocks(true);
  return sha256_with(blocks_fn, bytes);
}

namespace sha256_detail {
std::string portable_hex(const std::string& bytes) { return sha256_with(compress_blocks, bytes); }
bool uses_cpu_instructions() { return pick_blocks(true) != compress_blocks; }
}  // namespace sha256_detail

std::string digest(const std::string& bytes) { return "sha256:" + sha256_hex(bytes); }

const char* npusim_version() { return NPUSIM_VERSION; }

}  // namespace npusim::record
