// `npusim compare`: summary.json regression checks (sim/record/compare).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/platform/json_input.h"
#include "sim/record/compare.h"
#include "tests/test_paths.h"

using namespace npusim;
using nlohmann::json;
using record::compare_summaries;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& name) { return std::string(NPUSIM_TEST_DATA_DIR) + "/platform/" + name; }

const std::string kHeader = "metric                        baseline         current     delta  verdict\n";
const std::string kStatusOk = "status                              ok              ok            ok\n";

struct Result {
  int status;
  std::string out;
};

// A file of tests/data/platform, or an absolute path as is.
std::string resolve(const std::string& name) { return name.rfind('/', 0) == 0 ? name : data(name); }

Result compare(const std::string& baseline, const std::string& current, double tolerance = 0) {
  std::ostringstream out;
  int status = compare_summaries(resolve(baseline), resolve(current), tolerance, out);
  return {status, out.str()};
}

std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of('\n');
  auto begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

InputError compare_error(const std::string& baseline, const std::string& current, double tolerance = 0) {
  try {
    compare(baseline, current, tolerance);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  throw std::logic_error("unreachable");
}

// compare_base.json with one key replaced, written to a temp file; returns its path.
std::string base_with(const std::string& key, const json& value) {
  json doc = json_input::read_file(data("compare_base.json"));
  doc[key] = value;
  fs::path p = fs::temp_directory_path() / ("npusim_test_compare_" + key + "_" + std::to_string(::getpid()) + ".json");
  std::ofstream(p) << doc.dump(2);
  return p.string();
}

}  // namespace

TEST_CASE("compare: identical summaries are OK", "[compare]") {
  Result r = compare("compare_base.json", "compare_base.json");
  CHECK(r.status == 0);
  CHECK(r.out ==
        kHeader + kStatusOk +
        "device_wall_ns                  100000          100000    +0.00%  ok\n"
        "makespan_ns                      90000           90000    +0.00%  ok\n"
        "scheduling_window_ns             50000           50000    +0.00%  ok\n"
        "compare: OK\n");
}

TEST_CASE("compare: a slower metric is a regression", "[compare]") {
  Result r = compare("compare_base.json", "compare_slower.json");
  CHECK(r.status == record::kCompareRegression);
  CHECK(r.out ==
        kHeader + kStatusOk +
        "device_wall_ns                  100000          101000    +1.00%  REGRESSION\n"
        "makespan_ns                      90000           90000    +0.00%  ok\n"
        "scheduling_window_ns             50000         49000.5    -2.00%  ok\n"
        "compare: REGRESSION (1 metrics beyond +0%)\n");

  // The other way round: faster is never a regression, scheduling_window_ns is.
  r = compare("compare_slower.json", "compare_base.json");
  CHECK(r.status == record::kCompareRegression);
  CHECK_THAT(r.out, Catch::Contains("device_wall_ns                  101000          100000    -0.99%  ok\n"));
  CHECK_THAT(r.out, Catch::Contains("scheduling_window_ns           49000.5           50000    +2.04%  REGRESSION\n"));
  CHECK(last_line(r.out) == "compare: REGRESSION (1 metrics beyond +0%)");
}

TEST_CASE("compare: tolerance in percent, exactly at the limit is OK", "[compare]") {
  CHECK(compare("compare_base.json", "compare_slower.json", 1).status == 0);
  CHECK(compare("compare_base.json", "compare_slower.json", 5).status == 0);
  Result r = compare("compare_base.json", "compare_slower.json", 0.5);
  CHECK(r.status == record::kCompareRegression);
  CHECK(last_line(r.out) == "compare: REGRESSION (1 metrics beyond +0.5%)");

  // A zero baseline: any increase regresses, whatever the tolerance.
  std::string zero = base_with("makespan_ns", 0);
  r = compare(zero, "compare_base.json", 50);
  CHECK(r.status == record::kCompareRegression);
  CHECK_THAT(r.out, Catch::Contains("makespan_ns                          0           90000       n/a  REGRESSION"));
  fs::remove(zero);
}

TEST_CASE("compare: ok to error is a regression, error to ok is not", "[compare]") {
  Result r = compare("compare_base.json", "compare_error.json");
  CHECK(r.status == record::kCompareRegression);
  CHECK(r.out ==
        kHeader +
        "status                              ok           error            REGRESSION\n"
        "device_wall_ns                  100000           20000   -80.00%  n/a\n"
        "makespan_ns                      90000            null            n/a\n"
        "scheduling_window_ns             50000            null            n/a\n"
        "compare: REGRESSION (0 metrics beyond +0%, status ok -> error)\n");

  r = compare("compare_error.json", "compare_base.json");
  CHECK(r.status == 0);
  CHECK(last_line(r.out) == "compare: OK");
  CHECK(compare("compare_error.json", "compare_error.json").status == 0);
}

TEST_CASE("compare: bad or incomplete summaries are input errors", "[compare]") {
  InputError e = compare_error("compare_base.json", "compare_missing_key.json");
  CHECK(e.file() == data("compare_missing_key.json"));
  CHECK(e.path() == "/scheduling_window_ns");
  CHECK(e.message() == "missing key \"scheduling_window_ns\" (expected a summary.json written by npusim run)");

  e = compare_error("no_such_summary.json", "compare_base.json");
  CHECK(e.file() == data("no_such_summary.json"));
  CHECK(e.message() == "file not found");

  e = compare_error("bad_syntax.json", "compare_base.json");
  CHECK(e.file() == data("bad_syntax.json"));
  CHECK_THAT(e.message(), Catch::StartsWith("invalid JSON: "));

  std::string status = base_with("status", "failed");
  e = compare_error(status, "compare_base.json");
  CHECK(e.file() == status);
  CHECK(e.path() == "/status");
  CHECK(e.message() == "expected \"ok\" or \"error\", found string \"failed\"");
  fs::remove(status);

  // null is allowed only in an "error" summary.
  std::string null_metric = base_with("makespan_ns", nullptr);
  e = compare_error("compare_base.json", null_metric);
  CHECK(e.file() == null_metric);
  CHECK(e.path() == "/makespan_ns");
  CHECK(e.message() == "expected a number >= 0, found null");
  fs::remove(null_metric);

  e = compare_error("compare_base.json", "compare_base.json", -1);
  CHECK(e.file() == "--tolerance");
  CHECK(e.message() == "expected a percentage >= 0, found -1");
}
