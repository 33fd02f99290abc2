// --compress gzip[:LEVEL] (docs/outputs.md, "Compressed outputs"): the large
// outputs are gzip streams whose contents are the plain run's files byte for
// byte, the same bytes on every run, listed in .npusim_outputs by their .gz
// names; the summary line says how much the run wrote.
#include "tests/catch.h"

#include <zlib.h>

#include "sim/engine/watch.h"
#include "tests/cli_support.h"

namespace {

using cli::has;
using cli::slurp;
namespace fs = std::filesystem;

const std::vector<std::string> kCompressed = {"merged_swimlane.json", "chip_swimlane_records.json", "deps.json",
                                              "task_stats.csv", "scope_stats/scope_stats.jsonl"};

// A gzip file's contents, decompressed with zlib (every member); fails the
// test on a stream zlib rejects.
std::string gunzip(const fs::path& p) {
  const std::string in = slurp(p);
  z_stream z{};
  REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
  }
  const bool whole = rc == Z_STREAM_END && z.avail_in == 0;  // nothing after the stream's end
  inflateEnd(&z);
  INFO(p.string());
  REQUIRE(whole);
  return out;
}

// The bytes of the files a run wrote (its .npusim_outputs list, which is not counted).
std::uint64_t listed_bytes(const fs::path& out) {
  std::istringstream list(slurp(out / ".npusim_outputs"));
  std::uint64_t n = 0;
  for (std::string line; std::getline(list, line);)
    if (!line.empty() && line[0] != '#') n += fs::file_size(out / line);
  return n;
}

}  // namespace

TEST_CASE("run --compress gzip writes .gz files whose contents are the plain run's files, byte for byte",
          "[cli][outputs]") {
  // qwen3 decode at level 4: every writer streams more than one 256 KB chunk
  // through the I/O thread, deps.json appends its tensors and edges, and
  // merged_swimlane.json is a scratch stream renamed into place.
  const std::string args = "traces/qwen3_decode.json --no-host-stats --swimlane-level 4";
  fs::path plain, gz;
  cli::Result a = cli::run(args, "gz_plain", plain);
  cli::Result b = cli::run(args + " --compress gzip", "gz_gzip", gz);
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  for (const std::string& f : kCompressed) {
    INFO(f);
    CHECK_FALSE(fs::exists(gz / f));
    const std::string text = gunzip(gz / (f + ".gz"));
    CHECK(text == slurp(plain / f));
    CHECK(fs::file_size(gz / (f + ".gz")) < text.size() / 3);
    // RFC 1952 header: deflate, no flags (no file name), modification time 0.
    const std::string head = slurp(gz / (f + ".gz")).substr(0, 8);
    CHECK(head == std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8));
    // gzip itself and Python's gzip module read it whole (one member: Perfetto
    // reads only a file's first), CRC-32 and length checked.
    const std::string path = cli::quoted(gz / (f + ".gz"));
    cli::Result t = cli::sh("gzip -t " + path);
    CHECK(t.status == 0);
    CHECK(t.err.empty());
    cli::Result py = cli::sh("python3 -c 'import gzip, sys, zlib\n"
                             "d = zlib.decompressobj(16 + 15)\n"
                             "n = len(d.decompress(open(sys.argv[1], \"rb\").read()))\n"
                             "print(n, len(gzip.open(sys.argv[1]).read()), d.eof, len(d.unused_data))' " +
                             path);
    CHECK(py.status == 0);
    CHECK(py.out == std::to_string(text.size()) + " " + std::to_string(text.size()) + " True 0\n");
  }
  // summary.json and the name map stay plain, and the same.
  CHECK(slurp(gz / "summary.json") == slurp(plain / "summary.json"));
  CHECK(slurp(gz / "name_map_qwen3_decode.json") == slurp(plain / "name_map_qwen3_decode.json"));
  CHECK(slurp(gz / "platform.json") == slurp(plain / "platform.json"));
  CHECK(slurp(gz / ".npusim_outputs") ==
        "# files npusim run wrote in this folder; its next run here replaces them\n"
        "chip_swimlane_records.json.gz\nmerged_swimlane.json.gz\ndeps.json.gz\nscope_stats/scope_stats.jsonl.gz\n"
        "name_map_qwen3_decode.json\ntask_stats.csv.gz\nsummary.json\nplatform.json\n");
}

TEST_CASE("two compressed runs are byte-identical, at each level, and levels trade size", "[cli][outputs]") {
  const std::string args = "traces/qwen3_decode.json --no-host-stats --swimlane-level 4 --compress ";
  fs::path x, y, six, best;
  REQUIRE(cli::run(args + "gzip", "gz_x", x).status == 0);
  REQUIRE(cli::run(args + "gzip:1", "gz_y", y).status == 0);  // gzip is gzip:1, the fastest
  REQUIRE(cli::run(args + "gzip:6", "gz_six", six).status == 0);
  REQUIRE(cli::run(args + "gzip:9", "gz_best", best).status == 0);
  for (const std::string& f : kCompressed) {
    INFO(f);
    CHECK(slurp(x / (f + ".gz")) == slurp(y / (f + ".gz")));
    CHECK(gunzip(y / (f + ".gz")) == gunzip(six / (f + ".gz")));
    CHECK(gunzip(y / (f + ".gz")) == gunzip(best / (f + ".gz")));
  }
  CHECK(fs::file_size(six / "merged_swimlane.json.gz") < fs::file_size(y / "merged_swimlane.json.gz"));
  CHECK(fs::file_size(best / "merged_swimlane.json.gz") < fs::file_size(six / "merged_swimlane.json.gz"));
}

TEST_CASE("the summary line says how many bytes the run's files hold", "[cli][outputs]") {
  std::uint64_t bytes[2] = {}, platform[2] = {};
  for (int gz = 0; gz < 2; ++gz) {
    fs::path out;
    cli::Result r = cli::run(gz ? "traces/chain.json --compress gzip:9" : "traces/chain.json",
                             gz ? "size_gzip" : "size_plain", out);
    REQUIRE(r.status == 0);
    bytes[gz] = listed_bytes(out);
    platform[gz] = fs::file_size(out / "platform.json");
    // engine::bytes_text is the progress line's format ("36.7 kB").
    CHECK(has(r.out, "\noutputs in " + out.string() + "/ (" + npusim::engine::bytes_text(bytes[gz]) +
                         (gz ? ", gzip)\n" : ")\n")));
  }
  // The resolved platform is saved as it is, compressed or not; the rest
  // shrinks to less than half.
  CHECK(platform[1] == platform[0]);
  CHECK(bytes[1] - platform[1] < (bytes[0] - platform[0]) / 2);
}

TEST_CASE("a bad --compress is exit 2 naming the option, nothing written", "[cli][outputs]") {
  for (const std::string bad : {"gzip:0", "gzip:10", "zip", "gzip:", "GZIP"}) {
    INFO(bad);
    fs::path out;
    cli::Result r = cli::run("traces/chain.json --compress " + cli::quoted(bad), "gz_bad", out);
    CHECK(r.status == 2);
    CHECK(r.err == "npusim: error: command line: at --compress: expected none, gzip or gzip:LEVEL with LEVEL "
                   "1..9, got \"" + bad + "\"\n");
    CHECK_FALSE(fs::exists(out));
  }
  fs::path out;
  CHECK(cli::run("traces/chain.json -q --compress none", "gz_none", out).status == 0);
  CHECK(fs::exists(out / "deps.json"));
}
