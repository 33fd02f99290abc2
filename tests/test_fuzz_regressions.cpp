// Findings of the fuzz targets (tests/fuzz, docs/fuzzing.md), each as a unit
// test, and a replay of the whole committed fuzz corpus through the same
// target code (tests/fuzz/targets.h), so every build, sanitized or not, runs
// the inputs the fuzzers collected.
#include "tests/catch.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/cli_support.h"
#include "tests/fuzz/targets.h"

using namespace npusim;

namespace {

const std::string kCorpus = std::string(NPUSIM_TEST_DATA_DIR) + "/../fuzz/corpus/";

// "path|message" of the InputError loading and interpreting `text` raises.
std::string trace_error(const std::string& text, std::uint64_t loop_iterations = trace::kMaxLoopIterations) {
  try {
    trace::Trace t = trace::parse_trace(text, "t.json", "t");
    DataStore data;
    auto src = trace::make_interpreter(t, data, loop_iterations);
    fuzz::dry_run(*src, data, fuzz::kMaxOps);
  } catch (const InputError& e) {
    return e.path() + "|" + e.message();
  }
  return "no error";
}

std::string platform_error(const std::string& text) {
  try {
    platform::parse_platform(text, "p.json");
  } catch (const InputError& e) {
    return e.path() + "|" + e.message();
  }
  return "no error";
}

}  // namespace

TEST_CASE("fuzz regressions: a number beyond a double's range is an input error") {
  // nlohmann throws out_of_range (406), not parse_error, for these.
  CHECK(trace_error("{\"npusim_trace\": 1,\n \"kernels\": {}, \"x_n\": 1e400, \"program\": []}") ==
        "|invalid JSON at line 2, column 24: number 1e400 is out of range (beyond a double's range)");
  CHECK(trace_error(R"({"npusim_trace": 1, "name": "1e400", "kernels": {}, "program": [-1E+999]})") ==
        "|invalid JSON at line 1, column 65: number -1E+999 is out of range (beyond a double's range)");
  CHECK(platform_error(R"({"npusim_platform": 1e400})") ==
        "|invalid JSON: number overflow parsing '1e400' (beyond a double's range)");
}

TEST_CASE("fuzz regressions: each finding's input in the corpus ends in its InputError") {
  struct Finding {
    const char* file;
    const char* error;  // "path|message"
  };
  const Finding traces[] = {
      {"finding_number_overflow.json",
       "|invalid JSON at line 1, column 48: number 1e400 is out of range (beyond a double's range)"},
      {"finding_number_overflow_found.json",  // as the fuzzer found it, in bench_pa_100k.json
       "|invalid JSON at line 135, column 13: number 1e400 is out of range (beyond a double's range)"},
      {"finding_duration_1e300.json", "/kernels/K/duration/ns|expected a number in [0, 3.6e12], got 1e+300"},
      {"finding_empty_loop.json",
       "/program/0|this loop runs 1000000000000 iterations, more than the limit of 4294967296 loop iterations per "
       "run (all loops together)"},
  };
  for (const Finding& f : traces) {
    INFO(f.file);
    CHECK(trace_error(cli::slurp(kCorpus + "trace/" + f.file)) == f.error);
  }
  CHECK(platform_error(cli::slurp(kCorpus + "platform/finding_number_overflow.json")) ==
        "|invalid JSON: number overflow parsing '1e400' (beyond a double's range)");
}

TEST_CASE("fuzz regressions: the committed corpus replays without a finding") {
  namespace fs = std::filesystem;
  struct Target {
    const char* name;
    void (*run)(const std::uint8_t*, std::size_t);
  };
  for (const Target& t : {Target{"trace", fuzz::trace_one}, Target{"expr", fuzz::expr_one},
                          Target{"platform", fuzz::platform_one}, Target{"import", fuzz::import_one}}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(kCorpus + t.name)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    INFO(t.name << ": " << files.size() << " inputs");
    CHECK(files.size() >= 5);
    for (const fs::path& f : files) {
      INFO(f.string());
      const std::string text = cli::slurp(f);
      t.run(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
    }
  }
}
