// npusim import (docs/scenes.md, "Importing a capture"): a capture in the
// runtime's schemas becomes a trace whose replay keeps the recorded rings,
// dependencies, block counts and kernel times.
#include "tests/catch.h"

#include "models/common/errors.h"
#include "sim/import/import.h"
#include "tests/cli_support.h"

namespace {

using cli::has;
using cli::json;
namespace fs = std::filesystem;

// Runs `trace`, imports its outputs, runs the import: both output directories.
std::pair<fs::path, fs::path> round_trip(const std::string& trace, const std::string& name, bool scope_stats = true) {
  fs::path a, b;
  REQUIRE(cli::run(trace + " --no-host-stats -q --no-suggest", name, a).status == 0);
  if (!scope_stats) fs::remove_all(a / "scope_stats");
  const fs::path imported = cli::scratch(name + ".imported.json");
  cli::Result r = cli::npusim("import '" + a.string() + "' -o '" + imported.string() + "'");
  REQUIRE(r.status == 0);
  REQUIRE(r.err.empty());
  REQUIRE(cli::run("'" + imported.string() + "' --no-host-stats -q --no-suggest", name + "_replay", b).status == 0);
  return {a, b};
}

std::string import_error(const std::string& deps, const std::string& swimlane) {
  npusim::capture::CaptureFiles f{"deps.json", "chip_swimlane_records.json", "", ""};
  try {
    npusim::capture::import_capture(deps, swimlane, "", "", f);
  } catch (const npusim::InputError& e) {
    return e.file() + "|" + e.path() + "|" + e.message();
  }
  return "no error";
}

const char* kSwimlane =
    R"({"chip_swimlane_level": 1, "metadata": {"clock_freq_hz": 50000000, "num_cores": 3,
        "core_types": ["aic", "aiv", "aiv"]}, "aicore_tasks": [[1, 0, 1, 100, 150, 2]]})";

}  // namespace

// Programs whose kernel times are whole cycles of the 50 MHz counter (no
// GM phases, no sampled durations), that read no data and whose outputs are
// all read (a capture carries neither sub-cycle times, nor the orchestrator's
// reads, nor the size of an output nobody reads, nor what a kernel waited
// for inside its task: mix_pipeline's TPUSH/TPOP) the replay's schedule is
// the original's, to the cycle.
TEST_CASE("importing npusim's outputs replays the same schedule", "[cli][import]") {
  for (const char* t : {"tests/data/scene/chain_trace.json", "traces/chain.json", "traces/manual_placement.json",
                        "traces/mix.json", "traces/spmd_blocks.json", "traces/early_resolve.json",
                        "traces/per_block_tasks.json", "traces/rings_auto_scopes.json", "traces/rings_deep_nest.json",
                        "traces/gated_0.json"}) {
    INFO(t);
    const std::string name = fs::path(t).stem().string();
    auto [a, b] = round_trip(t, name);
    CHECK(cli::slurp(a / "chip_swimlane_records.json") == cli::slurp(b / "chip_swimlane_records.json"));
    CHECK(cli::slurp(a / "task_stats.csv") == cli::slurp(b / "task_stats.csv"));
    json sa = cli::load(a / "summary.json"), sb = cli::load(b / "summary.json");
    CHECK(sa["device_wall_ns"] == sb["device_wall_ns"]);
    CHECK(sa["tasks"] == sb["tasks"]);
  }
}

TEST_CASE("without scope_stats the scopes are inferred from the rings", "[cli][import]") {
  // One nested scope holds every ring-1 task of chain_trace: the inference is exact there.
  auto [a, b] = round_trip("tests/data/scene/chain_trace.json", "chain_noss", false);
  CHECK(cli::slurp(a / "chip_swimlane_records.json") == cli::slurp(b / "chip_swimlane_records.json"));
  CHECK(cli::slurp(a / "deps.json") == cli::slurp(b / "deps.json"));
}

TEST_CASE("an imported trace keeps the recorded rings, kernels and dependencies", "[cli][import]") {
  fs::path a;
  REQUIRE(cli::run("traces/rings_deep_nest.json --no-host-stats -q", "deep", a).status == 0);
  const fs::path imported = cli::scratch("deep.imported.json");
  REQUIRE(cli::npusim("import '" + a.string() + "' -o '" + imported.string() + "' --name replayed").status == 0);
  json t = cli::load(imported);
  CHECK(t["name"] == "replayed");
  CHECK(t["run"]["aicpu_thread_num"] == 4);  // a tensormap_and_ringbuffer run (scope_stats): 3 schedulers + 1
  fs::path b;
  REQUIRE(cli::run("'" + imported.string() + "' --no-host-stats -q", "deep_replay", b).status == 0);
  json da = cli::load(a / "deps.json"), db = cli::load(b / "deps.json");
  CHECK(da["tasks"] == db["tasks"]);  // ids (rings), kernel ids, block counts, argument views
  CHECK(da["edges"] == db["edges"]);
}

TEST_CASE("malformed captures are input errors naming the file and the path", "[import]") {
  const std::string ok_tasks = R"({"tasks": [{"task_id": "0", "scope": "auto", "early_dispatch": false,
        "kernel_ids": [-1, 0, -1], "block_num": 1, "args": []}], "tensors": [], "edges": []})";
  CHECK(import_error(ok_tasks, kSwimlane) == "no error");
  CHECK(import_error(R"({"tasks": [], "tensors": []})", kSwimlane) == "deps.json||missing key \"edges\"");
  CHECK(import_error(R"({"tasks": [{"task_id": "x"}], "tensors": [], "edges": []})", kSwimlane) ==
        "deps.json|/tasks/0/task_id|expected an unsigned 64-bit integer (a decimal string), got \"x\"");
  CHECK(import_error(R"({"tasks": [{"task_id": "17179869184"}], "tensors": [], "edges": []})", kSwimlane) ==
        "deps.json|/tasks/0/task_id|ring 4 is not 0..3");
  CHECK(import_error(R"({"tasks": [{"task_id": "0", "scope": "auto", "early_dispatch": false, "kernel_ids": [-1, 0, -1],
        "block_num": 1, "args": [{"idx": 0, "type": "INPUT", "tensor_id": "5", "dtype": "FLOAT32", "shape": [4],
        "start_offset": "0", "strides": [1]}]}], "tensors": [], "edges": []})", kSwimlane) ==
        "deps.json|/tasks/0/args/0/tensor_id|no such tensor in /tensors");
  CHECK(import_error(R"({"tasks": [{"task_id": "1", "scope": "auto", "early_dispatch": false, "kernel_ids": [-1, 0, -1],
        "block_num": 1, "args": []}], "tensors": [], "edges": [{"pred": "7", "succ": "1", "arg": -1,
        "source": "explicit", "flags": ["wait", "retain"]}]})", kSwimlane) ==
        "deps.json|/edges|task t1 depends explicitly on t7, which the capture does not list before it");
  CHECK(import_error(ok_tasks, R"({"metadata": {"clock_freq_hz": 0}})") ==
        "chip_swimlane_records.json|/metadata/clock_freq_hz|expected an integer in [1, 1099511627776], got 0");
  CHECK(import_error(ok_tasks, R"({"metadata": {"clock_freq_hz": 50, "core_types": ["aic"]},
        "aicore_tasks": [[3, 0, 1, 5, 4]]})") ==
        "chip_swimlane_records.json|/aicore_tasks/0/0|expected an integer in [0, 0], got 3");
}

TEST_CASE("npusim import: the capture directory's files", "[cli][import]") {
  fs::path dir = cli::scratch("capture_dir");
  fs::create_directories(dir);
  cli::Result r = cli::npusim("import '" + dir.string() + "' -o '" + (dir / "t.json").string() + "'");
  CHECK(r.status == 2);
  CHECK(has(r.err, "deps.json: missing: a capture needs deps.json and chip_swimlane_records.json"));
  CHECK_FALSE(fs::exists(dir / "t.json"));
  r = cli::npusim("import '" + (dir / "nothing").string() + "' -o x.json");
  CHECK(r.status == 2);
  CHECK(has(r.err, "not a folder (a capture: deps.json"));
  fs::create_directories(dir / "deps.json");
  r = cli::npusim("import '" + dir.string() + "' -o '" + (dir / "t.json").string() + "'");
  CHECK(r.status == 2);
  CHECK(has(r.err, "deps.json: is a folder, not a capture file\n"));

  // Before: -o naming a folder left t.npusim-tmp beside it; a name map that
  // is a folder was taken as none (exit 0); one linked to /dev/zero was read
  // without end (2 GB in 10 s).
  const fs::path cap = cli::scratch("capture_copy");
  fs::copy(fs::path(NPUSIM_SOURCE_DIR) / "tests/data/capture/chain", cap, fs::copy_options::recursive);
  fs::create_directories(dir / "t");
  r = cli::npusim("import '" + cap.string() + "' -o '" + (dir / "t").string() + "'");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (dir / "t").string() + ": cannot create: Is a directory\n");
  CHECK_FALSE(fs::exists(dir / "t.npusim-tmp"));
  CHECK(cli::entries(dir, ".t.").empty());  // no temporary (docs/outputs.md, "Files named on the command line")
  fs::remove(cap / "name_map_chain.json");
  fs::create_directories(cap / "name_map_chain.json");
  r = cli::npusim("import '" + cap.string() + "' -o '" + (dir / "u.json").string() + "'");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (cap / "name_map_chain.json").string() + ": is a folder, not a capture file\n");
  fs::remove(cap / "name_map_chain.json");
  if (!fs::exists("/dev/zero")) {  // a machine's /dev may lack it
    WARN("/dev/zero is missing here: not checked");
    return;
  }
  fs::create_symlink("/dev/zero", cap / "name_map_chain.json");
  r = cli::sh("exec timeout 20 \"$NPUSIM\" import '" + cap.string() + "' -o '" + (dir / "u.json").string() + "'");
  CHECK(r.status == 2);
  CHECK(has(r.err, "name_map_chain.json: not JSON text: a NUL byte at offset 0"));
  CHECK_FALSE(fs::exists(dir / "u.json"));
}
