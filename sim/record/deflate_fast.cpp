#include "sim/record/deflate_fast.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace npusim::record::deflate_fast {
namespace {

// Chosen on bench_pa_100k's outputs (docs/architecture.md, "Outputs").
constexpr int kHashBits = 15;                // hash table entries: 1 << kHashBits (128 KiB; 2^12 to 2^16 differ little)
constexpr std::size_t kSegment = 65535;      // text per block (a match may run past it): one stored block if stored
constexpr int kSkipShift = 6;                // a run of r literals steps 1 + r / 2^kSkipShift positions
// Bytes hashed: 6 finds longer matches than 4 (a candidate whose 6 bytes
// hash alike is more often the start of a long repeat; the text is JSON
// rows that differ in a few digits): merged_swimlane.json 8.6:1 instead of
// 7.5:1, and fewer, longer matches are also faster. Matches of 4 and 5 are
// still taken when the candidate's first 4 bytes agree.
constexpr int kHashLen = 6;

constexpr unsigned kMinMatch = 4, kMaxMatch = 258, kWindow = 32768;
// No match starts in the last kTail bytes of a piece (the matcher reads 8 at
// a time); a match may run into them.
constexpr std::size_t kTail = 8;

// The bit buffer is stored with memcpy, and match lengths come from the
// lowest differing byte of two little-endian words.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "deflate_fast assumes a little-endian host");

// RFC 1951, 3.2.5.
constexpr std::uint16_t kLenBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                        31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::uint8_t kLenExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                        2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::uint16_t kDistBase[30] = {1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
                                         193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr std::uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                         6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
// The order of the code length code's lengths in a dynamic block's header (3.2.7).
constexpr std::uint8_t kClenOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

constexpr std::size_t kMaxPiece = std::size_t{1} << 30;  // compress splits longer text (positions are 32-bit)

constexpr int kLitSyms = 286, kDistSyms = 30, kClenSyms = 19;

// Length -> its code's index (0..28), built at compile time (so a call
// from another unit's static initialisation finds it filled).
struct SymTables {
  std::uint8_t len_sym[kMaxMatch + 1] = {};
  constexpr SymTables() {
    for (int s = 0; s < 29; ++s)
      for (int l = kLenBase[s]; l < kLenBase[s] + (1 << kLenExtra[s]) && l <= 258; ++l)
        len_sym[l] = static_cast<std::uint8_t>(s);
    len_sym[258] = 28;  // 258 has a code of its own (284 + 31 would say 258 too, with 5 extra bits)
  }
};
constexpr SymTables kSym;

// Without a branch (a distance's size is random, a mispredicted branch
// per match): x = d - 1 below 4 is its own code; above, two codes per
// power of two, told apart by the bit below the top one.
inline unsigned dist_sym(unsigned d) {
  const unsigned x = d - 1;
  const unsigned k = 31u - static_cast<unsigned>(__builtin_clz(x | 1));
  return x < 4 ? x : 2 * k + ((x >> (k - 1)) & 1);
}

inline std::uint32_t load32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline std::uint64_t load64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
// The hash of the low kHashLen bytes of v.
inline std::uint32_t hash_of(std::uint64_t v, int shift) {
  return static_cast<std::uint32_t>(((v << (64 - 8 * kHashLen)) * 0x9E3779B97F4A7C15ull) >> (32 + shift));
}
// The hash of the kHashLen bytes at p (it reads 8).
inline std::uint32_t hash_at(const unsigned char* p, int shift) { return hash_of(load64(p), shift); }

// The length of the match of a with c (c < a): their common prefix, at
// most max (>= kTail); x is their first 8 bytes xor-ed. After those, 32
// bytes a step (two SSE2 compares, one mask, one branch; SSE2 is every
// x86-64's): the outputs' matches are mostly 8 to 40 bytes
// (merged_swimlane.json's mean is 26, deps.json's 63), so most end in the
// first step, where 8 bytes a step took up to five, each exit a branch
// mispredicted at random. Any way of finding min(prefix, max) gives the
// same bytes.
inline std::size_t match_length(const unsigned char* a, const unsigned char* c, std::uint64_t x, std::size_t max) {
  if (x) return static_cast<std::size_t>(__builtin_ctzll(x)) >> 3;
  std::size_t len = 8;
#ifdef __SSE2__
  while (len + 32 <= max) {
    const __m128i e0 = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + len)),
                                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + len)));
    const __m128i e1 = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + len + 16)),
                                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + len + 16)));
    const std::uint32_t ne = ~(static_cast<std::uint32_t>(_mm_movemask_epi8(e0)) |
                               static_cast<std::uint32_t>(_mm_movemask_epi8(e1)) << 16);
    if (ne) return len + static_cast<std::size_t>(__builtin_ctz(ne));
    len += 32;
  }
#endif
  for (; len + 8 <= max; len += 8)
    if (const std::uint64_t y = load64(a + len) ^ load64(c + len))
      return len + (static_cast<std::size_t>(__builtin_ctzll(y)) >> 3);
  while (len < max && a[len] == c[len]) ++len;
  return len;
}

// A literal run followed by a match (len 0: the block's last run, no match).
// `lits_ds`: the run's length (below 2^17: a segment and a match) and, in
// the top byte, the distance's code, found once by the matcher (which
// counts it) and read by the emitter.
struct Seq {
  std::uint32_t lits_ds;
  std::uint16_t len, dist;
};
constexpr std::uint32_t kLitsMask = 0xffffff;

// A thread's matcher state, kept for the thread's life. The hash table holds
// positions offset by `base`, which grows by each piece's size, so a piece
// never clears the table: an entry below its base is an earlier piece's (or
// the zeroed start) and is never used, and which entries a piece uses depends
// on its own text alone (the output is the same on any thread, after any
// pieces).
struct State {
  std::uint32_t base = 1;
  std::uint32_t lit_freq[kLitSyms], dist_freq[kDistSyms];
  std::uint32_t table[1 << kHashBits];
  // A segment's sequences: a match of kMinMatch or more each, starting in
  // the segment, and the last run.
  Seq seqs[kSegment / kMinMatch + 8];
};

State& state() {
  struct Free {
    void operator()(State* s) const { std::free(s); }
  };
  thread_local std::unique_ptr<State, Free> s;
  if (!s) {
    void* m = std::calloc(1, sizeof(State));
    if (!m) throw std::bad_alloc();
    s.reset(static_cast<State*>(m));
    s->base = 1;
  }
  return *s;
}

// Bits go out least significant first (3.1.1), 8 bytes written at a time;
// `n` stays below 8 after flush and below 64 before it (callers put at most
// 56 bits between flushes).
struct BitOut {
  std::uint64_t buf = 0;
  unsigned n = 0;
  unsigned char* o;
  void put(std::uint64_t bits, unsigned nbits) {
    buf |= bits << n;
    n += nbits;
  }
  void flush() {
    std::memcpy(o, &buf, 8);
    o += n >> 3;
    buf >>= n & ~7u;
    n &= 7;
  }
  // To the next byte boundary (zero bits), flushed.
  void align() {
    n = (n + 7) & ~7u;
    flush();
  }
};

// Code lengths of at most `max_bits` for the symbols' frequencies: a
// Huffman code (two queues over the symbols sorted by frequency), lengths
// over the limit cut to it and the Kraft sum mended by moving leaves one
// level down from the deepest level above the limit's (the way zlib's and
// miniz's encoders limit lengths), then the lengths handed out shortest
// to the most frequent. Always a complete code: a single used symbol (or
// none) gets a partner of length 1, as inflaters want.
void build_lengths(const std::uint32_t* freq, int nsyms, int max_bits, std::uint8_t* len) {
  std::memset(len, 0, static_cast<std::size_t>(nsyms));
  // freq << 9 | symbol, sorted: by frequency, ties by symbol (a segment's
  // counts are below 2^17, so the key fits).
  std::uint32_t key[kLitSyms];
  int m = 0;
  for (int s = 0; s < nsyms; ++s)
    if (freq[s]) key[m++] = freq[s] << 9 | static_cast<std::uint32_t>(s);
  if (m < 2) {
    const int s = m ? static_cast<int>(key[0] & 511) : 0;
    len[s] = 1;
    len[s == 0 ? 1 : 0] = 1;
    return;
  }
  std::sort(key, key + m);
  // Nodes: leaves 0..m-1 (sorted), internal nodes m..2m-2 made in
  // nondecreasing weight order, so two queues find the two lightest.
  std::uint64_t w[2 * kLitSyms];
  std::uint16_t parent[2 * kLitSyms];
  for (int i = 0; i < m; ++i) w[i] = key[i] >> 9;
  int leaf = 0, inner = m;
  for (int k = m; k < 2 * m - 1; ++k) {
    int pick[2];
    for (int& c : pick) c = (leaf < m && (inner >= k || w[leaf] <= w[inner])) ? leaf++ : inner++;
    w[k] = w[pick[0]] + w[pick[1]];
    parent[pick[0]] = parent[pick[1]] = static_cast<std::uint16_t>(k);
  }
  std::uint16_t depth[2 * kLitSyms];
  int count[64] = {};
  depth[2 * m - 2] = 0;
  for (int k = 2 * m - 3; k >= 0; --k) {
    depth[k] = static_cast<std::uint16_t>(depth[parent[k]] + 1);
    if (k < m) ++count[std::min<int>(depth[k], max_bits)];
  }
  std::uint32_t kraft = 0;
  for (int l = 1; l <= max_bits; ++l) kraft += static_cast<std::uint32_t>(count[l]) << (max_bits - l);
  while (kraft > (1u << max_bits)) {
    --count[max_bits];
    for (int l = max_bits - 1; l > 0; --l)
      if (count[l]) {
        --count[l];
        count[l + 1] += 2;
        break;
      }
    --kraft;
  }
  int k = 0;  // the least frequent get the longest
  for (int l = max_bits; l > 0; --l)
    for (int c = count[l]; c > 0; --c) len[key[k++] & 511] = static_cast<std::uint8_t>(l);
}

// Each byte's bits in reverse order, built at compile time.
struct Reversed {
  std::uint8_t byte[256] = {};
  constexpr Reversed() {
    for (int v = 0; v < 256; ++v)
      for (int b = 0; b < 8; ++b)
        if (v >> b & 1) byte[v] = static_cast<std::uint8_t>(byte[v] | 1 << (7 - b));
  }
};
constexpr Reversed kRev;

// Canonical codes (3.2.2) for the lengths, bit-reversed for LSB-first output.
void build_codes(const std::uint8_t* len, int nsyms, std::uint32_t* code) {
  int count[16] = {};
  for (int s = 0; s < nsyms; ++s) ++count[len[s]];
  count[0] = 0;
  std::uint32_t next[16];
  std::uint32_t c = 0;
  for (int l = 1; l < 16; ++l) {
    c = (c + static_cast<std::uint32_t>(count[l - 1])) << 1;
    next[l] = c;
  }
  for (int s = 0; s < nsyms; ++s) {
    const int l = len[s];
    if (!l) continue;
    const std::uint32_t v = next[l]++;  // below 1 << l, l <= 15
    code[s] = (static_cast<std::uint32_t>(kRev.byte[v & 255]) << 8 | kRev.byte[v >> 8]) >> (16 - l);
  }
}

// A block's Huffman codes and its header's code length tokens.
struct Block {
  std::uint8_t lit_len[kLitSyms], dist_len[kDistSyms], clen_len[kClenSyms];
  std::uint32_t lit_code[kLitSyms], dist_code[kDistSyms], clen_code[kClenSyms];
  std::uint8_t tok[kLitSyms + kDistSyms], tok_extra[kLitSyms + kDistSyms];
  int ntok = 0, nlit = 257, ndist = 1, nclen = 4;

  // Builds the codes; returns the block's size in bits.
  std::uint64_t build(const std::uint32_t* lit_freq, const std::uint32_t* dist_freq) {
    build_lengths(lit_freq, kLitSyms, 15, lit_len);
    build_lengths(dist_freq, kDistSyms, 15, dist_len);
    nlit = kLitSyms;
    while (nlit > 257 && lit_len[nlit - 1] == 0) --nlit;
    ndist = kDistSyms;
    while (ndist > 1 && dist_len[ndist - 1] == 0) --ndist;
    // The code lengths, run-length coded (3.2.7) over both alphabets as one sequence.
    std::uint8_t all[kLitSyms + kDistSyms];
    std::memcpy(all, lit_len, static_cast<std::size_t>(nlit));
    std::memcpy(all + nlit, dist_len, static_cast<std::size_t>(ndist));
    const int total = nlit + ndist;
    std::uint32_t clen_freq[kClenSyms] = {};
    ntok = 0;
    auto emit = [&](int sym, int extra) {
      tok[ntok] = static_cast<std::uint8_t>(sym);
      tok_extra[ntok++] = static_cast<std::uint8_t>(extra);
      ++clen_freq[sym];
    };
    for (int i = 0; i < total;) {
      const std::uint8_t v = all[i];
      int run = 1;
      while (i + run < total && all[i + run] == v) ++run;
      i += run;
      if (v == 0) {
        for (; run >= 11; run -= std::min(run, 138)) emit(18, std::min(run, 138) - 11);
        if (run >= 3) {
          emit(17, run - 3);
          run = 0;
        }
        for (; run > 0; --run) emit(0, 0);
      } else {
        emit(v, 0);
        --run;
        for (; run >= 3; run -= std::min(run, 6)) emit(16, std::min(run, 6) - 3);
        for (; run > 0; --run) emit(v, 0);
      }
    }
    build_lengths(clen_freq, kClenSyms, 7, clen_len);
    nclen = kClenSyms;
    while (nclen > 4 && clen_len[kClenOrder[nclen - 1]] == 0) --nclen;
    build_codes(lit_len, kLitSyms, lit_code);
    build_codes(dist_len, kDistSyms, dist_code);
    build_codes(clen_len, kClenSyms, clen_code);

    std::uint64_t bits = 3 + 5 + 5 + 4 + 3 * static_cast<std::uint64_t>(nclen);
    for (int s = 0; s < kClenSyms; ++s)
      bits += static_cast<std::uint64_t>(clen_freq[s]) * (clen_len[s] + (s == 16 ? 2 : s == 17 ? 3 : s == 18 ? 7 : 0));
    for (int s = 0; s < kLitSyms; ++s)
      bits += static_cast<std::uint64_t>(lit_freq[s]) * (lit_len[s] + (s > 256 ? kLenExtra[s - 257] : 0));
    for (int s = 0; s < kDistSyms; ++s)
      bits += static_cast<std::uint64_t>(dist_freq[s]) * (dist_len[s] + kDistExtra[s]);
    return bits;
  }

  void put_header(BitOut& out) const {
    out.put(2 << 1, 3);  // BFINAL 0, BTYPE 10 (dynamic)
    out.put(static_cast<std::uint64_t>(nlit - 257) | static_cast<std::uint64_t>(ndist - 1) << 5 |
                static_cast<std::uint64_t>(nclen - 4) << 10,
            14);
    out.flush();
    for (int k = 0; k < nclen; ++k) {
      out.put(clen_len[kClenOrder[k]], 3);
      if (k % 8 == 7) out.flush();
    }
    out.flush();
    for (int k = 0; k < ntok; ++k) {
      const int s = tok[k];
      out.put(clen_code[s], clen_len[s]);
      if (s >= 16) out.put(tok_extra[k], s == 16 ? 2 : s == 17 ? 3 : 7);
      out.flush();
    }
  }
};

// Stored blocks of p[0, n) (at most 65535 bytes each).
void put_stored(BitOut& out, const unsigned char* p, std::size_t n) {
  do {
    const std::size_t k = std::min<std::size_t>(n, 65535);
    out.put(0, 3);  // BFINAL 0, BTYPE 00
    out.align();
    const unsigned char head[4] = {static_cast<unsigned char>(k), static_cast<unsigned char>(k >> 8),
                                   static_cast<unsigned char>(~k), static_cast<unsigned char>(~k >> 8)};
    std::memcpy(out.o, head, 4);
    std::memcpy(out.o + 4, p, k);
    out.o += 4 + k;
    p += k;
    n -= k;
  } while (n > 0);
}

std::uint64_t stored_bits(std::size_t n) { return (n / 65535 + 1) * (3 + 7 + 32) + 8 * static_cast<std::uint64_t>(n); }

// The block of p[start, end), parsed into seqs[0, nseq).
void put_block(BitOut& out, Block& b, const State& st, const Seq* seqs, std::size_t nseq, const unsigned char* p,
               std::size_t start, std::size_t end) {
  const std::uint64_t bits = b.build(st.lit_freq, st.dist_freq);
  if (bits >= stored_bits(end - start)) {
    put_stored(out, p + start, end - start);
    return;
  }
  b.put_header(out);
  // A length's code and extra bits as one field, for every length.
  std::uint32_t len_bits[kMaxMatch + 1];
  std::uint8_t len_n[kMaxMatch + 1];
  for (unsigned l = kMinMatch; l <= kMaxMatch; ++l) {
    const unsigned s = kSym.len_sym[l];
    len_bits[l] = b.lit_code[257 + s] | (l - kLenBase[s]) << b.lit_len[257 + s];
    len_n[l] = static_cast<std::uint8_t>(b.lit_len[257 + s] + kLenExtra[s]);
  }
  // A distance's code and extra bits as one field: (dist << len) + off is
  // code | (dist - base) << len (the code is below 1 << len).
  std::uint64_t dist_off[kDistSyms];
  std::uint8_t dist_n[kDistSyms];
  for (int ds = 0; ds < kDistSyms; ++ds) {
    dist_off[ds] = b.dist_code[ds] - (static_cast<std::uint64_t>(kDistBase[ds]) << b.dist_len[ds]);
    dist_n[ds] = static_cast<std::uint8_t>(b.dist_len[ds] + kDistExtra[ds]);
  }
  const std::uint32_t* lc = b.lit_code;
  const std::uint8_t* ll = b.lit_len;
  const unsigned char* q = p + start;
  std::size_t last = nseq;
  if (nseq && !seqs[nseq - 1].len) --last;  // the block's last run, without a match after it
  for (std::size_t i = 0; i < last; ++i) {
    const Seq& s = seqs[i];
    std::uint32_t k = s.lits_ds & kLitsMask;
    if (k > 2) {
      for (; k > 2; k -= 3, q += 3) {  // 3 x 15 bits at most between flushes
        out.put(lc[q[0]], ll[q[0]]);
        out.put(lc[q[1]], ll[q[1]]);
        out.put(lc[q[2]], ll[q[2]]);
        out.flush();
      }
    }
    // Up to two literals without a branch on how many (a run's length is
    // random; a match of 4 or more follows, so q[1] is in the text).
    const std::uint32_t m0 = 0u - (k > 0), m1 = 0u - (k > 1);
    out.put(lc[q[0]] & m0, ll[q[0]] & m0);
    out.put(lc[q[1]] & m1, ll[q[1]] & m1);
    q += k;
    const unsigned ds = s.lits_ds >> 24;
    const std::uint64_t dbits = (static_cast<std::uint64_t>(s.dist) << b.dist_len[ds]) + dist_off[ds];
    const unsigned mn = len_n[s.len] + dist_n[ds];
    // One flush for the literals and the match where their bits fit (nearly
    // always: codes are mostly short), two where they do not.
    if (out.n + mn > 63) out.flush();
    out.put(len_bits[s.len] | dbits << len_n[s.len], mn);
    out.flush();
    q += s.len;
  }
  if (last < nseq)
    for (std::uint32_t k = seqs[last].lits_ds & kLitsMask; k > 0; --k, ++q) {
      out.put(lc[*q], ll[*q]);
      out.flush();
    }
  out.put(lc[256], ll[256]);
  out.flush();
}

// A piece of at most kMaxPiece bytes (positions stay 32-bit).
std::size_t compress_piece(const unsigned char* p, std::size_t n, unsigned char* out) {
  State& st = state();
  if (st.base > 0xffffffffu - n - 1) {  // positions would wrap: start afresh
    std::memset(st.table, 0, sizeof st.table);
    st.base = 1;
  }
  const std::uint32_t base = st.base;
  st.base += static_cast<std::uint32_t>(n);
  std::uint32_t* const table = st.table;
  const int shift = 32 - kHashBits;
  Block b{};  // codes of unused symbols are never written, but zeroed
  BitOut bo;
  bo.o = out;
  for (std::size_t start = 0; start < n;) {
    std::memset(st.lit_freq, 0, sizeof st.lit_freq);
    std::memset(st.dist_freq, 0, sizeof st.dist_freq);
    st.lit_freq[256] = 1;
    const std::size_t limit = std::min(n, start + kSegment);
    std::size_t pos = start, lit_start = start, nseq = 0;
    Seq* const seqs = st.seqs;
    std::uint32_t* const lit_freq = st.lit_freq;
    // Matches start before `stop`; the last kTail bytes are never looked at.
    const std::size_t stop = n >= kTail ? std::min(limit, n - kTail + 1) : 0;
    // The bucket of the position looked at next is read as soon as that
    // position is known (after a match, before the match's bookkeeping), so
    // its load overlaps that work; the match's second position, entered after
    // the read, is honoured by taking it as the candidate when its bucket is
    // the same (the table then holds what the plain order would have read).
    if (pos < stop) {
      std::uint32_t* slot = &table[hash_at(p + pos, shift)];
      std::uint32_t cand = *slot;
      for (;;) {
        const unsigned char* const a = p + pos;
        const std::uint32_t cur = base + static_cast<std::uint32_t>(pos);
        const std::uint32_t d = cur - cand;  // 1..pos: a position of this piece
        *slot = cur;
        // The next position's bucket, read before this position is decided
        // (its hash from the word loaded here, after this position is
        // entered): a literal, mostly, goes on with it at once, also when
        // the branch below was mispredicted.
        const std::uint64_t w = load64(a);
        std::uint32_t* const slot1 = &table[hash_of(w >> 8, shift)];
        const std::uint32_t cand1 = *slot1;
        // One branch for both tests: a candidate out of the piece or the
        // window is compared with the text itself and refused.
        const bool in_window = d - 1 < std::min<std::size_t>(pos, kWindow);
        const unsigned char* const c = a - (in_window ? d : 0);
        std::uint64_t x = w ^ load64(c);
        if (!(in_window & ((x & 0xffffffffu) == 0))) {
          // A literal. A long run of them (text that does not compress) looks
          // at fewer positions the longer it gets (up to the segment's end).
          ++lit_freq[*a];
          // Nearly every run is shorter than 2^kSkipShift: its step is 1 (pos
          // is below stop, so below limit), on one well-predicted branch.
          if (pos - lit_start < (std::size_t{1} << kSkipShift)) {
            ++pos;
            if (pos >= stop) break;
            slot = slot1;
            cand = cand1;
            continue;
          }
          const std::size_t step = std::min<std::size_t>(1 + ((pos - lit_start) >> kSkipShift), limit - pos);
          for (std::size_t k = 1; k < step; ++k) ++lit_freq[a[k]];
          pos += step;
          if (pos >= stop) break;
          slot = &table[hash_at(p + pos, shift)];
          cand = *slot;
          continue;
        }
        const std::size_t max = std::min<std::size_t>(kMaxMatch, n - pos);  // >= kTail
        const std::size_t len = match_length(a, c, x, max);
        const std::size_t next = pos + len;
        std::uint32_t* nslot = slot;
        std::uint32_t ncand = 0;
        if (next < stop) {
          nslot = &table[hash_at(p + next, shift)];
          ncand = *nslot;
        }
        const unsigned ds = dist_sym(d);
        seqs[nseq++] = Seq{static_cast<std::uint32_t>(pos - lit_start) | ds << 24, static_cast<std::uint16_t>(len),
                           static_cast<std::uint16_t>(d)};
        ++lit_freq[257 + kSym.len_sym[len]];
        ++st.dist_freq[ds];
        if (pos + 1 + 8 <= n) {  // the match's second position too (its bucket is slot1): more matches found, at little cost
          *slot1 = cur + 1;
          if (slot1 == nslot) ncand = cur + 1;
        }
        pos = next;
        lit_start = pos;
        if (pos >= stop) break;
        slot = nslot;
        cand = ncand;
      }
    }
    const std::size_t end = pos + kTail > n ? n : pos;
    for (std::size_t k = pos; k < end; ++k) ++lit_freq[p[k]];  // the tail
    if (end > lit_start) seqs[nseq++] = Seq{static_cast<std::uint32_t>(end - lit_start), 0, 0};
    put_block(bo, b, st, seqs, nseq, p, start, end);
    start = end;
  }
  if (bo.n) {  // end on a byte boundary: an empty stored block
    bo.put(0, 3);
    bo.align();
    const unsigned char empty[4] = {0, 0, 0xff, 0xff};
    std::memcpy(bo.o, empty, 4);
    bo.o += 4;
  }
  return static_cast<std::size_t>(bo.o - out);
}

}  // namespace

void reserve() { state(); }

std::size_t bound(std::size_t n) {
  // Each segment's block is at most its text stored (stored_bits: 6 bytes
  // a stored block), plus each piece's empty stored block at its end and the
  // 8-byte writes' overhang.
  const std::size_t pieces = n / kMaxPiece + 1;
  return n + 6 * (n / 65535 + n / kSegment + pieces) + 6 * pieces + 16;
}

std::size_t compress(const unsigned char* p, std::size_t n, unsigned char* out) {
  std::size_t len = 0;
  for (std::size_t k = 0; k < n; k += kMaxPiece) len += compress_piece(p + k, std::min(n - k, kMaxPiece), out + len);
  return len;
}

}  // namespace npusim::record::deflate_fast
