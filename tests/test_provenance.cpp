// The provenance of a run's outputs (summary.json's `provenance`,
// platform.json, the Perfetto file's otherData; docs/outputs.md,
// "summary.json: provenance and static checks") and the static checks of
// `npusim check` applied by `npusim run` (--strict).
#include "tests/catch.h"

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/record/provenance.h"
#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;
using cli::has;

namespace {

// `sha256sum FILE`'s digest, as summary.json writes it.
std::string sha256sum(const fs::path& file) {
  cli::Result r = cli::captured("sha256sum " + cli::quoted(file));
  REQUIRE(r.status == 0);
  return "sha256:" + r.out.substr(0, 64);
}

}  // namespace

TEST_CASE("sha256_hex gives the FIPS 180-4 examples' digests", "[provenance]") {
  using npusim::record::sha256_hex;
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits the first block, the padding takes a second.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  CHECK(npusim::record::digest("abc") == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}


TEST_CASE("sha256_hex with the CPU's SHA instructions equals the portable computation", "[provenance]") {
  namespace d = npusim::record::sha256_detail;
  CHECK(d::portable_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  if (!d::uses_cpu_instructions()) WARN("this CPU has no SHA instructions: sha256_hex is the portable computation");
  // Every tail length around one and two blocks, and texts of many blocks, of pseudo-random bytes.
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  std::string text;
  for (std::size_t n : {0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 30011}) {
    text.resize(n);
    for (char& c : text) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<char>(x >> 56);
    }
    INFO("bytes: " << n);
    CHECK(npusim::record::sha256_hex(text) == d::portable_hex(text));
  }
}

TEST_CASE("a run names its npusim version, trace and platform digests and saves the platform", "[provenance]") {
  fs::path out;
  cli::Result r = cli::run("traces/chain.json --quiet --no-host-stats", "prov", out);
  REQUIRE(r.status == 0);
  const json s = cli::load(out / "summary.json");
  const json& p = s["provenance"];
  const std::string version = cli::npusim("--version").out;
  CHECK(version == "npusim " + p["npusim_version"].get<std::string>() + "\n");
  // The trace's digest is that of its bytes; the platform's that of platform.json beside the summary.
  CHECK(p["trace_digest"] == sha256sum(std::string(NPUSIM_SOURCE_DIR) + "/traces/chain.json"));
  CHECK(p["platform_file"] == "platform.json");
  CHECK(p["platform_digest"] == sha256sum(out / "platform.json"));
  // platform.json is the platform file's values, canonical: the same document.
  CHECK(cli::load(out / "platform.json") == cli::load(std::string(NPUSIM_SOURCE_DIR) + "/platforms/a2a3.json"));
  CHECK(has(cli::slurp(out / ".npusim_outputs"), "platform.json"));
  // The Perfetto file's metadata carry the same.
  const json sw = cli::load(out / "merged_swimlane.json");
  CHECK(sw["otherData"] == json{{"npusim_version", p["npusim_version"]},
                                {"trace", "chain"},
                                {"trace_digest", p["trace_digest"]},
                                {"platform", "a2a3"},
                                {"platform_digest", p["platform_digest"]}});
  // White space and key order are not the platform: the same digest from a reformatted copy.
  const fs::path plat = cli::scratch("prov_platform") / "a2a3.json";
  cli::write_file(plat, cli::load(std::string(NPUSIM_SOURCE_DIR) + "/platforms/a2a3.json").dump());
  fs::path out2;
  REQUIRE(cli::run("traces/chain.json --quiet --no-host-stats --platform " + cli::quoted(plat), "prov2", out2).status ==
          0);
  CHECK(cli::load(out2 / "summary.json")["provenance"]["platform_digest"] == p["platform_digest"]);
}


TEST_CASE("run warns of what check rejects, and --strict refuses it with exit 2", "[barrier][cli]") {
  // hard_full_48 without sync_start: 48 AIV blocks fill the chip, so on an
  // idle chip every block is resident at once and the barrier completes;
  // PyPTO's verifier rejects the launch (it deadlocks when the blocks run in waves).
  json t = cli::load(std::string(NPUSIM_SOURCE_DIR) + "/traces/barriers/hard_full_48.json");
  t["program"][0].erase("sync_start");
  const fs::path trace = cli::scratch("no_sync_start") / "t.json";
  cli::write_file(trace, t.dump(1));
  cli::RunResult r = cli::run_summary(cli::quoted(trace) + " --quiet", "no_sync_start_run");
  CHECK(r.status == 0);
  CHECK(r.summary["status"] == "ok");
  const std::string message =
      "hard pl.system.syncall(core_type=aiv) in kernel BAR requires the SPMD launch to set sync_start=True so all "
      "blocks are co-resident at the FFTS barrier; without it blocks can run in waves and the launch deadlocks on "
      "device (507018)";
  CHECK(r.err == "npusim: warning: " + trace.string() + ": at /program/0: [HardSyncallOccupancy] " + message +
                     " (npusim check fails on this; run --strict refuses it)\n");
  CHECK(r.summary["static_checks"] ==
        json{{"errors", 1},
             {"warnings", 0},
             {"findings", json::array({{{"rule", "HardSyncallOccupancy"},
                                        {"severity", "error"},
                                        {"path", "/program/0"},
                                        {"message", message}}})}});
  // check says the same of it.
  cli::Result c = cli::npusim("check " + cli::quoted(trace));
  CHECK(c.status == 1);
  CHECK(has(c.err, "error [HardSyncallOccupancy]: " + message));

  fs::path out;
  cli::Result strict = cli::run(cli::quoted(trace) + " --quiet --strict", "no_sync_start_strict", out);
  CHECK(strict.status == 2);
  CHECK(strict.err == "npusim: error: " + trace.string() + ": at /program/0: [HardSyncallOccupancy] " + message +
                          "\nnpusim: error: " + trace.string() +
                          ": 1 static check error(s) above (--strict): the run is refused, nothing written\n");
  CHECK(!fs::exists(out));

  // A clean program: no warning, an empty list, and --strict runs it.
  cli::RunResult clean = cli::run_summary("traces/barriers/hard_full_48.json --quiet --strict", "clean_strict");
  CHECK(clean.status == 0);
  CHECK(clean.err.empty());
  CHECK(clean.summary["static_checks"] == json{{"errors", 0}, {"warnings", 0}, {"findings", json::array()}});
}
