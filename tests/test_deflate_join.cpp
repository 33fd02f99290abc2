// deflate_join (sim/record/deflate_join.h): whole-buffer libdeflate streams,
// made non-final one by one, concatenate into one deflate stream that zlib
// inflates to the pieces' text in order, for every kind of block libdeflate
// writes (stored at level 0, fixed and dynamic Huffman codes above).
#include "tests/catch.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <libdeflate.h>
#include <zlib.h>

#include "sim/record/deflate_join.h"
#include "sim/record/json_out.h"
#include "tests/cli_support.h"

namespace test_deflate_join {

namespace dj = npusim::record::deflate_join;

// Text of the outputs' kind (JSON rows with numbers), `n` bytes.
std::string json_rows(std::size_t n, std::uint32_t seed) {
  std::string s;
  std::uint32_t x = seed;
  while (s.size() < n) {
    x = x * 1664525u + 1013904223u;
    s += "{\"id\": " + std::to_string(x % 100000) + ", \"name\": \"t" + std::to_string(x >> 20) +
         "\", \"start_us\": " + std::to_string((x >> 8) % 9999) + ".125},\n";
  }
  s.resize(n);
  return s;
}

// Bytes that do not compress (libdeflate stores them).
std::string noise(std::size_t n, std::uint32_t seed) {
  std::string s(n, '\0');
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (char& c : s) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

// `text` compressed by libdeflate at `level`, made non-final.
std::vector<unsigned char> piece(const std::string& text, int level) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  REQUIRE(c != nullptr);
  std::vector<unsigned char> out(libdeflate_deflate_compress_bound(c, text.size()) + dj::kSlack);
  const std::size_t n = libdeflate_deflate_compress(c, text.data(), text.size(), out.data(), out.size());
  libdeflate_free_compressor(c);
  REQUIRE(n > 0);
  const std::size_t joined = dj::make_nonfinal(out.data(), n);
  REQUIRE(joined > 0);
  out.resize(joined);
  // Byte-aligned, ending in the empty stored block.
  CHECK(std::vector<unsigned char>(out.end() - 4, out.end()) == std::vector<unsigned char>{0, 0, 0xff, 0xff});
  return out;
}

// A raw deflate stream inflated by zlib; `whole` says it ended exactly at the
// input's end.
std::string inflate_raw(const std::vector<unsigned char>& in, bool& whole) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, -15) == Z_OK);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_out != 0) break;  // input ran out before the final block
    if (rc == Z_BUF_ERROR) rc = Z_OK;
  }
  whole = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  return out;
}


TEST_CASE("deflate_join: pieces of every block kind join into one stream zlib inflates to the texts in order",
          "[outputs][gzip]") {
  for (int level : {0, 1, 6, 9, 12}) {
    INFO("level " << level);
    // Small and large pieces (one block; several blocks), text and noise
    // (stored blocks above level 0 too), one byte.
    const std::vector<std::string> texts = {json_rows(300000, 1), json_rows(1000, 2), noise(70000, 3), "x",
                                            json_rows(65536, 4),  noise(100, 5),      json_rows(262144, 6)};
    std::vector<unsigned char> stream;
    std::string expected;
    for (const std::string& t : texts) {
      const std::vector<unsigned char> p = piece(t, level);
      stream.insert(stream.end(), p.begin(), p.end());
      expected += t;
      // Each piece alone is not a whole stream: it has no final block.
      bool whole = true;
      CHECK(inflate_raw(p, whole) == t);
      CHECK_FALSE(whole);
    }
    stream.insert(stream.end(), std::begin(dj::kFinalBlock), std::end(dj::kFinalBlock));
    bool whole = false;
    CHECK(inflate_raw(stream, whole) == expected);
    CHECK(whole);
  }
}

TEST_CASE("deflate_join: a stream with no pieces is the final block alone", "[outputs][gzip]") {
  bool whole = false;
  CHECK(inflate_raw({std::begin(dj::kFinalBlock), std::end(dj::kFinalBlock)}, whole).empty());
  CHECK(whole);
}

TEST_CASE("deflate_join: bytes that are not one whole deflate stream give 0", "[outputs][gzip]") {
  const std::string text = json_rows(20000, 7);
  libdeflate_compressor* c = libdeflate_alloc_compressor(6);
  std::vector<unsigned char> out(libdeflate_deflate_compress_bound(c, text.size()) + dj::kSlack);
  const std::size_t n = libdeflate_deflate_compress(c, text.data(), text.size(), out.data(), out.size());
  libdeflate_free_compressor(c);
  REQUIRE(n > 10);
  std::vector<unsigned char> cut(out.begin(), out.begin() + static_cast<long>(n / 2));
  cut.resize(cut.size() + dj::kSlack);
  CHECK(dj::make_nonfinal(cut.data(), n / 2) == 0);  // truncated
  std::vector<unsigned char> longer(out.begin(), out.begin() + static_cast<long>(n));
  longer.push_back(0x5a);  // a byte after the final block
  longer.resize(longer.size() + dj::kSlack);
  CHECK(dj::make_nonfinal(longer.data(), n + 1) == 0);
  std::vector<unsigned char> reserved = {0x07, 0, 0, 0};  // BTYPE 11 is reserved
  reserved.resize(reserved.size() + dj::kSlack);
  CHECK(dj::make_nonfinal(reserved.data(), 4) == 0);
}

// Puts the gzip chunk policy back to its default (by load) when a test that
// set one ends, however it ends.
struct PolicyReset {
  ~PolicyReset() { npusim::record::set_gzip_chunk_policy(npusim::record::GzipChunkPolicy::ByLoad); }
};

// `gz` is exactly one gzip member (its CRC-32 and length checked by zlib,
// nothing after it) whose text is `text`.
void check_one_member(std::string& gz, const std::string& text) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, 16 + 15) == Z_OK);
  std::string out(text.size() + 1, '\0');
  z.next_in = reinterpret_cast<Bytef*>(gz.data());
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  out.resize(out.size() - z.avail_out);
  CHECK(rc == Z_STREAM_END);
  CHECK(z.avail_in == 0);
  inflateEnd(&z);
  CHECK(out == text);
}

TEST_CASE("OutFile --compress: chunks compressed by either thread make one gzip member of the text, the same bytes",
          "[outputs][gzip]") {
  // The first file's chunks are all compressed on the simulation thread, the
  // second's all on the I/O thread (the policy that otherwise follows the I/O
  // thread's load, set for the test): one gzip member of the text each, and
  // the same bytes.
  namespace fs = std::filesystem;
  namespace rec = npusim::record;
  const PolicyReset policy_reset;
  const fs::path dir = cli::scratch_root() / "deflate_join_outfile";
  fs::create_directories(dir);
  std::string text;
  std::string bytes[2];
  for (int run = 0; run < 2; ++run) {
    rec::set_gzip_chunk_policy(run == 0 ? rec::GzipChunkPolicy::SimulationThread : rec::GzipChunkPolicy::IoThread);
    const std::uint64_t here = rec::gzip_chunks_compressed_here();
    const fs::path path = dir / ("out" + std::to_string(run) + ".gz");
    npusim::record::OutFile f(path.string(), 9);
    text.clear();
    for (std::uint32_t k = 0; text.size() < (40u << 18); ++k) {
      const std::string row = json_rows(997, k);
      f.raw(row);
      f.commit();
      text += row;
    }
    f.close();
    if (std::thread::hardware_concurrency() > 1) {
      // Over 40 x 256 KB of text: each chunk a little over 256 KB, so at least
      // 39 chunks, all compressed here, or none.
      if (run == 0) CHECK(rec::gzip_chunks_compressed_here() - here >= 39);
      if (run == 1) CHECK(rec::gzip_chunks_compressed_here() == here);
    }
    bytes[run] = cli::slurp(path);
    check_one_member(bytes[run], text);
  }
  CHECK(bytes[0] == bytes[1]);
  fs::remove_all(dir);
}

TEST_CASE("OutFile --compress: a file appended to a gzip file joins its stream in chunks and gives the same bytes by either thread",
          "[outputs][gzip]") {
  // append_file reads the appended file into the buffer and hands it on in
  // chunks like formatted text (deps.json's tensors and edges): the text
  // before, the file and the text after come out as one gzip member, and the
  // bytes do not depend on which thread compressed which chunk.
  namespace fs = std::filesystem;
  namespace rec = npusim::record;
  const PolicyReset policy_reset;
  const fs::path dir = cli::scratch_root() / "deflate_join_append";
  fs::create_directories(dir);
  std::string part;
  for (std::uint32_t k = 0; part.size() < (5u << 18) + 12345; ++k) part += json_rows(311, k);
  const fs::path part_path = dir / "part.txt";
  {
    std::ofstream out(part_path, std::ios::binary);
    out << part;
  }
  const std::string before = json_rows(5000, 7), after = json_rows(700, 9);
  const std::string text = before + part + after;
  std::string bytes[2];
  for (int run = 0; run < 2; ++run) {
    rec::set_gzip_chunk_policy(run == 0 ? rec::GzipChunkPolicy::SimulationThread : rec::GzipChunkPolicy::IoThread);
    const fs::path path = dir / ("out" + std::to_string(run) + ".gz");
    rec::OutFile f(path.string(), 1);
    f.raw(before);
    f.commit();
    f.append_file(part_path.string());
    f.raw(after);
    f.close();
    bytes[run] = cli::slurp(path);
    check_one_member(bytes[run], text);
  }
  CHECK(bytes[0] == bytes[1]);
  fs::remove_all(dir);
}

}  // namespace test_deflate_join
