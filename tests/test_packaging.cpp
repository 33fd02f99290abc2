// cmake --install: the installed npusim runs on its own, from any folder,
// reading the platforms and the SDK headers installed beside it
// (docs/install.md).
#include "tests/catch.h"

#include "tests/cli_support.h"

namespace {

namespace fs = std::filesystem;
using cli::has;

// Installs this build folder under a scratch prefix.
fs::path install_prefix(const std::string& name) {
  const fs::path prefix = cli::scratch(name);
  cli::Result r = cli::captured("'" + std::string(test_paths::kCMake) + "' --install '" + test_paths::kBuildDir +
                                "' --prefix '" + prefix.string() + "'");
  INFO(r.err);
  REQUIRE(r.status == 0);
  return prefix;
}

// Runs the installed npusim in `cwd` with `env` (VAR=value ... ) before it.
cli::Result installed(const fs::path& prefix, const fs::path& cwd, const std::string& args,
                      const std::string& env = "") {
  return cli::captured("cd '" + cwd.string() + "' && env -u NPUSIM_PLATFORM_DIR -u NPUSIM_SDK_DIR " +
                       "-u NPUSIM_ORCH_RUNNER " + env + " '" + (prefix / "bin/npusim").string() + "' " + args);
}

}  // namespace

TEST_CASE("install: a prefix holds npusim, its runner, the SDK headers, the platforms, docs and examples",
          "[cli][install]") {
  const fs::path p = install_prefix("prefix_files");
  for (const char* f : {"bin/npusim", "bin/npusim-orch-runner", "include/npusim/pto_orchestration_api.h",
                        "include/npusim/pto_types.h", "share/npusim/platforms/a2a3.json",
                        "share/npusim/platforms/tiny.json", "share/doc/npusim/README.md",
                        "share/doc/npusim/install.md", "share/doc/npusim/spec/trace-format.md",
                        "share/doc/npusim/spec/scene-format.md", "share/doc/npusim/spec/cli-and-outputs.md",
                        "share/doc/npusim/examples/traces/chain.json"}) {
    INFO(f);
    CHECK(fs::is_regular_file(p / f));
  }
}

TEST_CASE("install: the installed npusim runs a trace from any folder with the platforms installed beside it",
          "[cli][install]") {
  const fs::path p = install_prefix("prefix_run");
  const fs::path work = cli::scratch("prefix_run_cwd");
  fs::create_directories(work);
  cli::Result r = installed(p, work,
                            "run '" + (p / "share/doc/npusim/examples/traces/chain.json").string() +
                                "' --platform tiny --no-host-stats -q --out out");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(fs::is_regular_file(work / "out/summary.json"));
  CHECK(cli::load(work / "out/summary.json")["status"] == "ok");

  // The installed platform is the one read: spoil it, and the message names it.
  const fs::path tiny = p / "share/npusim/platforms/tiny.json";
  std::ofstream(tiny, std::ios::trunc) << "{";
  r = installed(p, work, "check '" + (p / "share/doc/npusim/examples/traces/chain.json").string() + "' --platform tiny");
  CHECK(r.status == 2);
  CHECK(has(r.err, tiny.lexically_normal().string() + ": invalid JSON"));
}

TEST_CASE("install: a scene compiles against the SDK headers installed beside npusim", "[cli][install][scene]") {
  const fs::path p = install_prefix("prefix_scene");
  const fs::path work = cli::scratch("prefix_scene_cwd");
  fs::create_directories(work);
  const std::string scene = std::string(NPUSIM_TEST_DATA_DIR) + "/scene/chain.json";
  const std::string env = "NPUSIM_CACHE_DIR='" + (work / "cache").string() + "'";
  cli::Result r = installed(p, work, "run '" + scene + "' --no-host-stats -q --out out", env);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(cli::load(work / "out/summary.json")["tasks"]["submitted"] == 4);

  // Spoil the installed header: the compiler's message names the installed copy.
  const fs::path api = p / "include/npusim/pto_orchestration_api.h";
  std::ofstream(api, std::ios::app) << "\n#error installed header read\n";
  r = installed(p, work, "check '" + scene + "'", env);
  CHECK(r.status == 2);
  CHECK(has(r.err, "installed header read"));
  CHECK(has(r.err, api.lexically_normal().string()));
}

TEST_CASE("the version option prints CMake's project version", "[cli]") {
  const std::string cmake = cli::slurp(fs::path(NPUSIM_SOURCE_DIR) / "CMakeLists.txt");
  const std::string key = "project(npusim VERSION ";
  const std::size_t at = cmake.find(key);
  REQUIRE(at != std::string::npos);
  const std::string version = cmake.substr(at + key.size(), cmake.find(' ', at + key.size()) - at - key.size());
  cli::Result r = cli::npusim("--version");
  CHECK(r.status == 0);
  CHECK(r.out == "npusim " + version + "\n");
  CHECK(r.err.empty());
}

// Only the tests use Catch2: a build without them configures on a machine that
// has none (CMAKE_DISABLE_FIND_PACKAGE_Catch2 hides the installed one), and a
// build with them says what to install or set (docs/install.md).
TEST_CASE("a build without the tests configures without Catch2, one with them says what is missing", "[install]") {
  const std::string configure = "'" + std::string(test_paths::kCMake) + "' -S '" + test_paths::kSourceDir +
                                "' -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON -B ";
  cli::Result r = cli::captured(configure + "'" + cli::scratch("no_catch2_off").string() + "' -DBUILD_TESTING=OFF");
  INFO(r.out + r.err);
  CHECK(r.status == 0);
  r = cli::captured(configure + "'" + cli::scratch("no_catch2_on").string() + "' -DBUILD_TESTING=ON");
  INFO(r.out + r.err);
  CHECK(r.status != 0);
  CHECK(has(r.err, "the test suite needs Catch2"));
  CHECK(has(r.err, "-DBUILD_TESTING=OFF"));
}

// Catch2 v2 and v3 name a few things differently; tests/catch.h bridges them,
// so no test source may include Catch2's own header directly.
TEST_CASE("every test source includes Catch2 through tests/catch.h", "[install]") {
  const fs::path tests = fs::path(test_paths::kSourceDir) / "tests";
  int sources = 0;
  for (const auto& e : fs::recursive_directory_iterator(tests)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h") || e.path().filename() == "catch.h") continue;
    ++sources;
    INFO(e.path().string());
    CHECK_FALSE(has(cli::slurp(e.path()), std::string("#include <") + "catch2/"));  // (split: not this line)
  }
  CHECK(sources > 50);
}
