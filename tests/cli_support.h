// Helpers for the tests that run the npusim binary: scratch directories,
// running a command line in the source tree, reading its outputs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include "tests/test_paths.h"

namespace cli {

namespace fs = std::filesystem;
using nlohmann::json;

// A file's bytes; throws (the test fails) if it cannot be opened.
inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline json load(const fs::path& p) { return json::parse(slurp(p)); }

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The scratch directory of this test process; the runner (sc_catch_main.cpp)
// removes it when every test passed and keeps it for a failure to inspect.
inline fs::path scratch_root() { return fs::temp_directory_path() / ("npusim_test_" + std::to_string(::getpid())); }

// An empty scratch path of this test process (the directory itself is not created).
inline fs::path scratch(const std::string& name) {
  fs::path d = scratch_root() / name;
  fs::remove_all(d);
  return d;
}

struct Result {
  int status = -1;
  std::string out, err;
};

// Runs `npusim <args>` in the source tree (so trace paths are relative to it).
inline Result npusim(const std::string& args) {
  fs::path dir = scratch("io");
  fs::create_directories(dir);
  std::string cmd = std::string("cd '") + NPUSIM_SOURCE_DIR + "' && '" + NPUSIM_BINARY + "' " + args + " >'" +
                    (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  int rc = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

// `npusim run <args> --out <scratch/name>`: the result and the output directory.
inline Result run(const std::string& args, const std::string& name, fs::path& out) {
  out = scratch(name);
  return npusim("run " + args + " --out '" + out.string() + "'");
}

// `npusim run <args> --out <scratch/name>` with the summary.json it wrote
// (null if none).
struct RunResult : Result {
  json summary;
};
inline RunResult run_summary(const std::string& args, const std::string& name) {
  fs::path out;
  RunResult x;
  static_cast<Result&>(x) = run(args, name, out);
  if (fs::exists(out / "summary.json")) x.summary = load(out / "summary.json");
  return x;
}

// Per task id (decimal): the latest AICPU-observed finish and the earliest
// kernel start, in cycles, from chip_swimlane_records.json.
struct TaskTimes {
  std::map<std::string, std::int64_t> finish, start;
};

inline TaskTimes task_times(const json& sw) {
  TaskTimes t;
  std::map<std::pair<int, std::int64_t>, std::string> task_of;  // (core, reg id) -> task
  for (const auto& r : sw["aicore_tasks"]) {
    std::string id = std::to_string(r[1].get<std::uint64_t>());
    task_of[{r[0].get<int>(), r[2].get<std::int64_t>()}] = id;
    std::int64_t s = r[3].get<std::int64_t>();
    if (!t.start.count(id) || s < t.start[id]) t.start[id] = s;
  }
  for (const auto& r : sw["aicpu_tasks"]) {
    const std::string& id = task_of.at({r[0].get<int>(), r[1].get<std::int64_t>()});
    t.finish[id] = std::max(t.finish[id], r[3].get<std::int64_t>());
  }
  return t;
}

}  // namespace cli
