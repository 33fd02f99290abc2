// The orchestration SDK (sim/sdk/include, docs/scenes.md): an orchestration
// source written against the runtime's pto_orchestration_api.h compiles
// against it unchanged with the system compiler, and a misuse of the API is
// a compile error as it is against the runtime's own header.
#include "tests/catch.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/cli_support.h"

namespace {

namespace fs = std::filesystem;

std::string compiler() {
  const char* c = std::getenv("CXX");
  return c && *c ? c : "g++";
}

// Compiles `src` to an object against the SDK; the status and the compiler's output.
cli::Result compile(const fs::path& src, const std::string& name) {
  const fs::path dir = cli::scratch(name);
  fs::create_directories(dir);
  const std::string cmd = compiler() + " -std=c++17 -Wall -Wextra -Werror -fPIC -c -I'" + NPUSIM_SOURCE_DIR +
                          "/sim/sdk/include' '" + src.string() + "' -o '" + (dir / "o.o").string() + "' >'" +
                          (dir / "log").string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  cli::Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.err = cli::slurp(dir / "log");
  return r;
}

}  // namespace

// tests/data/scene/api.cpp uses the API as simpler's a2a3 examples do
// (examples/a2a3/tensormap_and_ringbuffer/*/kernels/orchestration/*.cpp):
// ChipTaskArgs, CoreTaskArgs, CoreTaskArgsWithDeps, PTO2_SCOPE(MANUAL),
// TensorCreateInfo, get/set_tensor_data, predicates, alloc_tensors, views.
TEST_CASE("an orchestration source compiles against the SDK without warnings", "[sdk]") {
  cli::Result r = compile(fs::path(NPUSIM_TEST_DATA_DIR) / "scene" / "api.cpp", "sdk_api");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
}

// pto_orchestration_api.h: rt_submit_aiv_task(int32_t kernel_id, const Arg&);
// passing a ChipTensor where the Arg goes does not compile.
TEST_CASE("a misuse of the orchestration API is a compile error", "[sdk]") {
  const fs::path src = cli::scratch("sdk_bad.cpp");
  fs::create_directories(src.parent_path());
  std::ofstream(src) << "#include \"pto_orchestration_api.h\"\n"
                        "extern \"C\" void aicpu_orchestration_entry(const ChipTaskArgs &a) {\n"
                        "    rt_submit_aiv_task(0, a.tensor(0).ref());\n"
                        "}\n";
  cli::Result r = compile(src, "sdk_bad");
  CHECK(r.status != 0);
  CHECK(cli::has(r.err, "rt_submit_aiv_task"));
}
