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

#include <csignal>
#include <vector>

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

// The lines of `text`, without their '\n' (a last line without one included).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

// `p` in single quotes, for a shell command line.
inline std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// Writes `text` to `p`, creating its folders.
inline void write_file(const fs::path& p, const std::string& text) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

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

// Runs the shell command `cmd` with its standard output and error captured
// (a death by signal N is status 128 + N, as a shell reports it).
inline Result captured(const std::string& cmd) {
  fs::path dir = scratch("io");
  fs::create_directories(dir);
  int rc = std::system((cmd + " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'").c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

// Scene tests share one compile cache (a program compiles once per build):
// a test that runs a scene calls this first.
inline void use_shared_scene_cache() { ::setenv("NPUSIM_CACHE_DIR", NPUSIM_SCENE_CACHE, 1); }

// Runs `npusim <args>` in the source tree (so trace paths are relative to it).
inline Result npusim(const std::string& args) {
  return captured(std::string("cd '") + NPUSIM_SOURCE_DIR + "' && '" + NPUSIM_BINARY + "' " + args);
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

// Runs `npusim <args>` in `cwd`.
inline Result npusim_in(const fs::path& cwd, const std::string& args) {
  return captured("cd '" + cwd.string() + "' && '" + NPUSIM_BINARY + "' " + args);
}

// Runs a /bin/sh script in the source tree; $NPUSIM is the binary.
inline Result sh(const std::string& script) {
  const fs::path file = scratch("script.sh");
  fs::create_directories(scratch_root());
  std::ofstream(file) << "export NPUSIM='" << NPUSIM_BINARY << "'\ncd '" << NPUSIM_SOURCE_DIR << "'\n" << script;
  return captured("sh '" + file.string() + "'");
}

// A child npusim running in the background (for signals and concurrent runs).
struct Child {
  pid_t pid = -1;
  fs::path out, err;
  // Waits at most `seconds` (then kills it): the raw wait status, -1 if killed.
  int wait(int seconds) {
    for (int i = 0; i < seconds * 20; ++i) {
      int st = 0;
      if (::waitpid(pid, &st, WNOHANG) == pid) return st;
      ::usleep(50000);
    }
    ::kill(pid, SIGKILL);
    int st = 0;
    ::waitpid(pid, &st, 0);
    return -1;
  }
  std::string stderr_text() const { return slurp(err); }
};

// `env`: environment assignments for it ("NAME=value ...").
inline Child start(const std::string& args, const std::string& name, const std::string& env = "") {
  Child c;
  fs::path dir = scratch(name + "_io");
  fs::create_directories(dir);
  c.out = dir / "out";
  c.err = dir / "err";
  std::string cmd = "cd '" + std::string(NPUSIM_SOURCE_DIR) + "' && " + env + " exec '" + NPUSIM_BINARY + "' " + args +
                    " >'" + c.out.string() + "' 2>'" + c.err.string() + "'";
  c.pid = ::fork();
  if (c.pid == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return c;
}

// A file-scope `const cli::SharedSceneCache` makes every scene its tests run
// use the suite's one compile cache (a program compiles once per build).
struct SharedSceneCache {
  SharedSceneCache() { ::setenv("NPUSIM_CACHE_DIR", NPUSIM_SCENE_CACHE, 1); }
};

// A scene of tests/data/scene/`source`.cpp, one incore K (func_id 0, aiv,
// 1 us), a tensor argument of 64 fp32 and the scalar `mode`: the way the
// program ends or misbehaves. Written to scratch/`source`_`mode`/`source`.json.
inline fs::path mode_scene(const std::string& source, int mode) {
  const fs::path dir = scratch(source + "_" + std::to_string(mode));
  fs::create_directories(dir);
  const json s = {
      {"npusim_scene", 1},
      {"name", source},
      {"orchestration", {{"source", std::string(NPUSIM_TEST_DATA_DIR) + "/scene/" + source + ".cpp"}}},
      {"incores", {{"K", {{"func_id", 0}, {"core", "aiv"}, {"duration", {{"ns", 1000}}}}}}},
      {"args", json::array({{{"tensor", {{"shape", {64}}, {"dtype", "fp32"}}}}, {{"scalar", mode}}})}};
  std::ofstream(dir / (source + ".json")) << s.dump();
  return dir / (source + ".json");
}

// Polls until `cond` holds, at most `seconds`.
template <class F>
bool eventually(F cond, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (cond()) return true;
    ::usleep(50000);
  }
  return cond();
}

// Entries of a folder whose names start with `prefix`.
inline std::vector<std::string> entries(const fs::path& dir, const std::string& prefix = "") {
  std::vector<std::string> v;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
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
