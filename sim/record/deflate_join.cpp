#include "sim/record/deflate_join.h"

#include <cstdint>
#include <cstring>

namespace npusim::record::deflate_join {
namespace {

// Bits are read least significant first (RFC 1951, 3.1.1). The buffer has
// kSlack zeroed bytes past the stream, so a look-ahead of 57 bits never
// reads outside it while the position is inside the stream.
struct BitReader {
  const unsigned char* p;
  std::uint64_t pos = 0, end;  // in bits
  std::uint64_t peek() const {
    std::uint64_t v;
    std::memcpy(&v, p + (pos >> 3), 8);
    return v >> (pos & 7);
  }
  std::uint32_t take(int n) {  // n <= 32
    const auto v = static_cast<std::uint32_t>(peek() & ((std::uint64_t{1} << n) - 1));
    pos += static_cast<unsigned>(n);
    return v;
  }
  bool past_end() const { return pos > end; }
};

constexpr int kFastBits = 10;
constexpr std::uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                           2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                         6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

// The extra bits after a symbol: a length's (literal/length code) or a distance's.
int extra_bits(bool distances, int sym) {
  if (distances) return sym < 30 ? kDistExtra[sym] : 0;
  return sym >= 257 && sym <= 285 ? kLengthExtra[sym - 257] : 0;
}

// A canonical Huffman code: codes up to kFastBits long decode with one table
// lookup, longer ones symbol-count by symbol-count (as RFC 1951's canonical
// construction orders them). A table entry is the symbol << 5 | the bits it
// takes, its extra bits included (the walk only skips them); 0: a longer code.
struct Huffman {
  std::uint16_t fast[1 << kFastBits];
  std::uint16_t count[16];
  std::uint16_t sym[288];
  bool distances = false;

  bool build(const std::uint8_t* len, int n, bool dist) {
    distances = dist;
    std::memset(count, 0, sizeof count);
    for (int s = 0; s < n; ++s) ++count[len[s]];
    count[0] = 0;
    int left = 1;
    for (int l = 1; l < 16; ++l) {
      left = 2 * left - count[l];
      if (left < 0) return false;  // over-subscribed
    }
    std::uint16_t offs[16], next[16];
    offs[1] = 0;
    next[1] = 0;
    for (int l = 1; l < 15; ++l) {
      offs[l + 1] = static_cast<std::uint16_t>(offs[l] + count[l]);
      next[l + 1] = static_cast<std::uint16_t>((next[l] + count[l]) << 1);
    }
    std::memset(fast, 0, sizeof fast);
    for (int s = 0; s < n; ++s) {
      const int l = len[s];
      if (l == 0) continue;
      sym[offs[l]++] = static_cast<std::uint16_t>(s);
      const unsigned code = next[l]++;
      if (l > kFastBits) continue;
      unsigned r = 0;  // the code's bits in reading order
      for (int b = 0; b < l; ++b) r |= ((code >> b) & 1u) << (l - 1 - b);
      const auto e = static_cast<std::uint16_t>(s << 5 | (l + extra_bits(dist, s)));
      for (unsigned j = r; j < (1u << kFastBits); j += 1u << l) fast[j] = e;
    }
    return true;
  }

  // The entry of a code longer than kFastBits, read from the bits `v`; 0 for
  // a code the table does not have.
  unsigned slow(std::uint64_t v) const {
    int code = 0, first = 0, index = 0;
    for (int l = 1; l < 16; ++l) {
      code |= static_cast<int>((v >> (l - 1)) & 1u);
      const int c = count[l];
      if (code - c < first) {
        const int s = sym[index + code - first];
        return static_cast<unsigned>(s << 5 | (l + extra_bits(distances, s)));
      }
      index += c;
      first = (first + c) << 1;
      code <<= 1;
    }
    return 0;
  }
  unsigned entry(std::uint64_t v) const {
    const unsigned e = fast[v & ((1u << kFastBits) - 1)];
    return e ? e : slow(v);
  }
  // The next symbol (its extra bits skipped), or -1 for a code the table does not have.
  int decode(BitReader& in) const {
    const unsigned e = entry(in.peek());
    in.pos += e & 31;
    return e ? static_cast<int>(e >> 5) : -1;
  }
};

struct FixedCodes {
  Huffman lit, dist;
  FixedCodes() {
    std::uint8_t l[288];
    std::memset(l, 8, 144);
    std::memset(l + 144, 9, 112);
    std::memset(l + 256, 7, 24);
    std::memset(l + 280, 8, 8);
    lit.build(l, 288, false);
    std::memset(l, 5, 30);
    dist.build(l, 30, true);
  }
};

// Skips one block's compressed symbols up to and including its end-of-block
// code. One step takes one item, a literal or a length and its distance,
// without a branch on which it is: the distance's entry is looked up from
// the bits after the literal/length code either way and counted only for a
// length (a branch there is taken at random, a misprediction per item on
// JSON text, where literals and matches alternate). The end of block, codes
// longer than the table and invalid codes leave the fast step.
bool skip_symbols(BitReader& in, const Huffman& lit, const Huffman& dist) {
  constexpr unsigned kMask = (1u << kFastBits) - 1;
  const std::uint16_t* const lf = lit.fast;
  const std::uint16_t* const df = dist.fast;
  const unsigned char* const p = in.p;
  const std::uint64_t end = in.end;
  for (std::uint64_t pos = in.pos;; pos = in.pos) {
    if (pos > end) return false;
    std::uint64_t v;  // 57 bits: a length's 15 and a distance's 23 at most from the tables
    std::memcpy(&v, p + (pos >> 3), 8);
    v >>= pos & 7;
    const unsigned e = lf[v & kMask];
    const unsigned n = e & 31, s = e >> 5;
    const unsigned d = df[(v >> n) & kMask];
    const bool len = s > 256;
    if (__builtin_expect((e == 0) | (s == 256) | (len & ((d == 0) | (s > 285) | ((d >> 5) > 29))), 0)) {
      const unsigned x = lit.entry(v);
      if (x == 0) return false;
      in.pos += x & 31;
      const unsigned sym = x >> 5;
      if (sym < 256) continue;
      if (sym == 256) return true;
      if (sym > 285) return false;
      const unsigned y = dist.entry(in.peek());
      if (y == 0 || y >> 5 > 29) return false;
      in.pos += y & 31;
      continue;
    }
    in.pos = pos + n + (len ? d & 31 : 0);
  }
}

bool skip_dynamic(BitReader& in, Huffman& lit, Huffman& dist) {
  static constexpr std::uint8_t kOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  const int nlit = static_cast<int>(in.take(5)) + 257, ndist = static_cast<int>(in.take(5)) + 1;
  const int nclen = static_cast<int>(in.take(4)) + 4;
  if (nlit > 286 || ndist > 30) return false;
  std::uint8_t len[320] = {};
  for (int k = 0; k < nclen; ++k) len[kOrder[k]] = static_cast<std::uint8_t>(in.take(3));
  Huffman clen;
  if (!clen.build(len, 19, false)) return false;
  std::memset(len, 0, sizeof len);
  for (int k = 0; k < nlit + ndist;) {
    if (in.past_end()) return false;
    const int s = clen.decode(in);
    if (s < 0) return false;
    if (s < 16) {
      len[k++] = static_cast<std::uint8_t>(s);
      continue;
    }
    std::uint8_t v = 0;
    int rep;
    if (s == 16) {
      if (k == 0) return false;
      v = len[k - 1];
      rep = 3 + static_cast<int>(in.take(2));
    } else {
      rep = s == 17 ? 3 + static_cast<int>(in.take(3)) : 11 + static_cast<int>(in.take(7));
    }
    if (k + rep > nlit + ndist) return false;
    while (rep--) len[k++] = v;
  }
  if (len[256] == 0) return false;  // no end-of-block code
  return lit.build(len, nlit, false) && dist.build(len + nlit, ndist, true) && skip_symbols(in, lit, dist);
}

}  // namespace

std::size_t make_nonfinal(unsigned char* p, std::size_t n) {
  static const FixedCodes fixed;
  std::memset(p + n, 0, kSlack);
  BitReader in{p, 0, 8 * static_cast<std::uint64_t>(n)};
  Huffman lit, dist;
  for (;;) {
    if (in.pos + 3 > in.end) return 0;
    const std::uint64_t header = in.pos;
    const std::uint32_t final = in.take(1), type = in.take(2);
    bool ok = false;
    if (type == 0) {  // stored: aligned LEN, NLEN, then LEN bytes
      in.pos = (in.pos + 7) & ~std::uint64_t{7};
      const std::uint32_t len = in.take(16), nlen = in.take(16);
      ok = (len ^ nlen) == 0xffffu;
      in.pos += 8ull * len;
    } else if (type == 1) {
      ok = skip_symbols(in, fixed.lit, fixed.dist);
    } else if (type == 2) {
      ok = skip_dynamic(in, lit, dist);
    }
    if (!ok || in.past_end()) return 0;
    if (!final) continue;
    // The stream ends at in.pos; the bits after it in its last byte are padding.
    if ((in.pos + 7) / 8 != n) return 0;
    p[header >> 3] &= static_cast<unsigned char>(~(1u << (header & 7)));
    // An empty stored block: BFINAL 0 and BTYPE 00 in the next three bits,
    // zeros to the byte boundary, LEN 0 and NLEN 0xffff.
    const std::uint64_t bit = in.pos;
    std::size_t at = static_cast<std::size_t>(bit >> 3);
    if (bit & 7) p[at] &= static_cast<unsigned char>((1u << (bit & 7)) - 1);
    at = static_cast<std::size_t>((bit + 3 + 7) >> 3);
    if ((bit & 7) > 5) p[at - 1] = 0;  // the three bits reach into the next byte
    p[at] = 0x00;
    p[at + 1] = 0x00;
    p[at + 2] = 0xff;
    p[at + 3] = 0xff;
    return at + 4;
  }
}

}  // namespace npusim::record::deflate_join
