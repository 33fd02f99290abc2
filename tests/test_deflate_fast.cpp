// deflate_fast (sim/record/deflate_fast.h), `--compress gzip`'s level 1
// encoder: each piece is non-final deflate blocks ending on a byte boundary,
// which zlib inflates to the text, alone (ended by the final block) or
// joined with other pieces into one gzip stream; within the bound; the same
// bytes for the same text whatever the thread compressed before.
#include "tests/catch.h"

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <zlib.h>

#include "sim/record/deflate_fast.h"
#include "sim/record/deflate_join.h"

namespace test_deflate_fast {

namespace df = npusim::record::deflate_fast;

// A small, seeded generator (xorshift64*), the same everywhere.
struct Rng {
  std::uint64_t x;
  explicit Rng(std::uint64_t seed) : x(seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull) {}
  std::uint64_t next() {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 0x2545f4914f6cdd1dull;
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
};

std::string noise(std::size_t n, std::uint64_t seed) {
  Rng r(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(r.next() >> 56);
  return s;
}

// Text of the outputs' kind (JSON rows with numbers), `n` bytes.
std::string json_rows(std::size_t n, std::uint64_t seed) {
  Rng r(seed);
  std::string s;
  while (s.size() < n) {
    const std::uint64_t x = r.next();
    s += "{\"name\": \"task_" + std::to_string(x % 100000) + "\", \"ph\": \"X\", \"ts\": " +
         std::to_string((x >> 20) % 9999999) + "." + std::to_string((x >> 8) % 1000) +
         ", \"dur\": " + std::to_string((x >> 40) % 999) + ", \"pid\": 1, \"tid\": " + std::to_string((x >> 50) % 72) +
         "},\n";
  }
  s.resize(n);
  return s;
}

// `text` compressed as one piece, into exactly bound() bytes (past them the
// buffer is checked untouched).
std::vector<unsigned char> piece(const std::string& text) {
  const std::size_t room = df::bound(text.size());
  std::vector<unsigned char> out(room + 64, 0xa5);
  const std::size_t n = df::compress(reinterpret_cast<const unsigned char*>(text.data()), text.size(), out.data());
  REQUIRE(n <= room);
  for (std::size_t k = room; k < out.size(); ++k) REQUIRE(out[k] == 0xa5);
  out.resize(n);
  return out;
}

// A raw deflate stream inflated by zlib (32 KiB window); `whole`: it ended
// with its final block exactly at the input's end.
std::string inflate_raw(const std::vector<unsigned char>& in, bool& whole, int window_bits = -15) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, window_bits) == Z_OK);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  std::vector<char> buf(1 << 16);
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf.data());
    z.avail_out = static_cast<uInt>(buf.size());
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf.data(), buf.size() - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_out != 0) break;  // input ran out before the final block
    if (rc == Z_BUF_ERROR) rc = Z_OK;
  }
  whole = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  return out;
}

// One piece, ended by the final block: zlib gives the text back.
void round_trip(const std::string& text) {
  std::vector<unsigned char> s = piece(text);
  s.insert(s.end(), std::begin(npusim::record::deflate_join::kFinalBlock),
           std::end(npusim::record::deflate_join::kFinalBlock));
  bool whole = false;
  const std::string back = inflate_raw(s, whole);
  INFO("text of " << text.size() << " bytes, " << s.size() << " compressed");
  REQUIRE(whole);
  REQUIRE(back.size() == text.size());
  REQUIRE(back == text);
}

TEST_CASE("deflate_fast: no text is no bytes", "[outputs][gzip]") {
  unsigned char out[64];
  CHECK(df::compress(nullptr, 0, out) == 0);
}

TEST_CASE("deflate_fast: texts of every kind round-trip through zlib", "[outputs][gzip]") {
  SECTION("one byte") {
    round_trip("x");
    round_trip(std::string(1, '\0'));
  }
  SECTION("all 256 byte values") {
    std::string s;
    for (int k = 0; k < 256; ++k) s += static_cast<char>(k);
    round_trip(s);
    round_trip(s + s + s);
  }
  SECTION("bytes that do not compress: stored blocks") {
    for (std::size_t n : {7u, 8u, 9u, 100u, 65535u, 65536u, 65537u, 200000u, 262144u, 262145u}) {
      const std::string s = noise(n, n);
      round_trip(s);
      CHECK(piece(s).size() <= n + 6 * (n / 65535 + 2));  // stored, not coded bigger
    }
  }
  SECTION("long runs: matches of 258 at distance 1") {
    round_trip(std::string(1000000, 'a'));
    round_trip(std::string(259, '\0'));
    round_trip(std::string(258 + 4 + 8, 'z'));
    const std::vector<unsigned char> s = piece(std::string(1 << 20, 'a'));
    CHECK(s.size() < 8000);  // ~1 bit a byte at most: lengths of 258
  }
  SECTION("matches ending at every length and cut by the piece's end") {
    // The matcher compares 8 bytes, then 32 a step, then 8, then single
    // bytes up to 258 or the piece's end: a copy of noise differing first
    // at byte k (or not at all, ended by the piece), for every k around
    // those steps, each followed by 0 to 40 bytes more.
    const std::string r = noise(300, 7);
    for (std::size_t k = 0; k <= 270; ++k) {
      std::string changed = r.substr(0, k + 1);
      changed[k] = static_cast<char>(changed[k] ^ 0x5a);
      round_trip(r + changed + noise(9, k));
      round_trip(r + r.substr(0, k));
      round_trip(r + r.substr(0, k) + noise(k % 41, k + 1000));
    }
  }
  SECTION("distances up to the window and just beyond it") {
    // Noise in runs of 40 bytes between markers (no long run of literals,
    // so every position is looked at), then the same again `span` later:
    // the copy is found up to 32768 back and must not be beyond.
    for (std::size_t span : {32767u, 32768u, 32769u, 32770u, 40000u}) {
      std::string r;
      for (std::uint64_t k = 0; r.size() < span; ++k) r += noise(40, k) + "\n#mark#\n";
      r.resize(span);
      const std::size_t once = piece(r).size();
      const std::string s = r + r;
      round_trip(s);
      round_trip(s + r);
      if (span <= 32768) CHECK(piece(s).size() < once + once / 2);
      if (span > 32768) CHECK(piece(s).size() > once + once * 8 / 10);
    }
  }
  SECTION("sizes around the block and tail boundaries") {
    const std::string base = json_rows(3 * 65536 + 600, 3);
    for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 8u, 9u, 15u, 16u, 17u, 31u, 64u, 4095u, 65535u, 65536u, 65537u,
                          65536u + 7u, 65536u + 8u, 65536u + 258u, 2 * 65536u - 1u, 3 * 65536u + 1u,
                          3 * 65536u + 600u})
      round_trip(base.substr(0, n));
  }
  SECTION("skewed texts whose Huffman codes need the 15-bit limit") {
    // Byte k with probability about q^k (k counted up while a uniform draw
    // is below q): frequencies that fall geometrically give a code tree
    // deeper than 15 levels, which the encoder must cut down to a complete
    // code of at most 15 bits (and the code lengths' own code to 7).
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      Rng r(seed);
      const double q = 0.55 + 0.1 * static_cast<double>(seed % 5);
      std::string s(20000 + r.below(120000), '\0');
      for (char& c : s) {
        int k = 0;
        while (k < 255 && static_cast<double>(r.next() >> 11) * (1.0 / 9007199254740992.0) < q) ++k;
        c = static_cast<char>(seed % 2 ? k : (k * 37) & 255);
      }
      round_trip(s);
    }
  }
  SECTION("text of the outputs' kind") {
    const std::string s = json_rows(1 << 20, 11);
    round_trip(s);
    CHECK(piece(s).size() < s.size() / 4);
  }
}

TEST_CASE("deflate_fast: pieces join into one gzip stream with the text's CRC and size", "[outputs][gzip]") {
  const std::string texts[] = {json_rows(300000, 1), noise(70000, 2), "a", std::string(5000, 'b'), json_rows(262144, 4),
                               json_rows(17, 5)};
  std::vector<unsigned char> gz = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3};
  std::string all;
  uLong crc = crc32(0, nullptr, 0);
  for (const std::string& t : texts) {
    const std::vector<unsigned char> p = piece(t);
    gz.insert(gz.end(), p.begin(), p.end());
    all += t;
    crc = crc32(crc, reinterpret_cast<const Bytef*>(t.data()), static_cast<uInt>(t.size()));
  }
  gz.insert(gz.end(), std::begin(npusim::record::deflate_join::kFinalBlock),
            std::end(npusim::record::deflate_join::kFinalBlock));
  for (const uLong v : {crc, static_cast<uLong>(all.size())})
    for (int b = 0; b < 4; ++b) gz.push_back(static_cast<unsigned char>(v >> (8 * b)));
  bool whole = false;
  const std::string back = inflate_raw(gz, whole, 15 + 16);  // gzip: zlib checks the CRC and ISIZE
  CHECK(whole);
  CHECK(back == all);
  // A wrong CRC is caught (the check above is a real one).
  gz[gz.size() - 8] ^= 1;
  inflate_raw(gz, whole, 15 + 16);
  CHECK_FALSE(whole);
}

TEST_CASE("deflate_fast: a text gives the same bytes on any thread after any texts", "[outputs][gzip]") {
  const std::string text = json_rows(400000, 21);
  const std::vector<unsigned char> first = piece(text);
  // After other pieces on this thread (the hash table holds their positions).
  piece(json_rows(262144, 22));
  piece(noise(100000, 23));
  piece(text.substr(1000));
  CHECK(piece(text) == first);
  std::vector<unsigned char> other;
  std::thread t([&] { other = piece(text); });
  t.join();
  CHECK(other == first);
}

TEST_CASE("deflate_fast: seeded random mixtures of noise and copies round-trip", "[outputs][gzip]") {
  // Noise, runs, text, and copies of earlier bytes at any distance (some
  // beyond the window) and length, in random order and sizes.
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    Rng r(seed);
    const std::size_t n = seed % 10 == 0 ? r.below(300000) : r.below(40000);
    std::string s;
    while (s.size() < n) {
      const std::size_t len = 1 + r.below(seed % 3 == 0 ? 600 : 80);
      switch (r.below(5)) {
        case 0:
          s += noise(len, r.next());
          break;
        case 1:
          s += std::string(len, static_cast<char>(r.below(4)));
          break;
        case 2:
          s += json_rows(len, r.next());
          break;
        default:
          if (s.empty()) break;
          const std::size_t d = 1 + r.below(std::min<std::size_t>(s.size(), 40000));
          for (std::size_t k = 0; k < len; ++k) s += s[s.size() - d];
      }
    }
    s.resize(n);
    INFO("seed " << seed);
    round_trip(s);
  }
}

}  // namespace test_deflate_fast
