// The scene runner against the program's misbehaviour (docs/scenes.md,
// "Bounds and guarantees"): a program that blocks stops at the idle or the
// wall-clock bound, a child it forks neither hangs npusim nor outlives the
// run, npusim's death (SIGTERM, SIGKILL) takes the runner, the program's
// children and the scene compiler with it and leaves no temporary file, the
// compile cache sees edits in a folder whose name has '$' or '#', and what
// the program writes to npusim's pipe or gives as a text is the program's
// fault (exit 1 or 2), never npusim's (exit 4). The programs are
// tests/data/scene/misbehave.cpp (one compile, in the suite's cache); the
// idle bound is 2 s where a test waits for it.
#include "tests/catch.h"

#include <signal.h>
#include <sys/wait.h>

#include <regex>

#include "tests/cli_support.h"

namespace {

using cli::has;
using cli::json;
namespace fs = std::filesystem;

const cli::SharedSceneCache runner_tests_cache;  // (a name of its own: unity batches)

// misbehave.cpp, misbehaving the way `mode` picks (its scalar argument).
fs::path misbehave_scene(int mode) { return cli::mode_scene("misbehave", mode); }

// `npusim ARGS` in the source tree with the environment assignments `env`,
// at most `limit` seconds (a hang fails the test instead of the suite).
cli::Result npusim_env(const std::string& env, const std::string& args, int limit = 120) {
  return cli::captured("cd '" + std::string(NPUSIM_SOURCE_DIR) + "' && " + env + " timeout -s KILL " +
                       std::to_string(limit) + " '" + NPUSIM_BINARY + "' " + args);
}

// `npusim run SCENE --out OUT` with `env`: the result and its summary (null if none).
cli::RunResult run_env(const std::string& env, const fs::path& scene, const std::string& name) {
  const fs::path out = cli::scratch(name);
  cli::RunResult r;
  static_cast<cli::Result&>(r) = npusim_env(env, "run " + cli::quoted(scene) + " --no-host-stats -q --out " + cli::quoted(out));
  if (fs::exists(out / "summary.json")) r.summary = cli::load(out / "summary.json");
  return r;
}

// The pids the program said on standard error ("misbehave: WHO PID").
std::vector<pid_t> said_pids(const std::string& err) {
  std::vector<pid_t> pids;
  const std::regex re("misbehave: \\w+ (\\d+)");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), re); it != std::sregex_iterator(); ++it)
    pids.push_back(static_cast<pid_t>(std::stol((*it)[1])));
  return pids;
}

// No such process, or one that has ended and waits to be reaped by init.
bool gone(pid_t pid) {
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!st || !std::getline(st, line)) return true;
  const std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && (line[paren + 2] == 'Z' || line[paren + 2] == 'X');
}

bool all_gone(const std::vector<pid_t>& pids) {
  for (pid_t p : pids)
    if (!gone(p)) return false;
  return true;
}

}  // namespace

TEST_CASE("a program that blocks stops at the idle bound as ORCHESTRATION_CRASH", "[cli][scene][runner]") {
  // Before: sleep(100000) or a wait nobody ends hung run, check and record
  // (the runner's only guard was an hour of CPU time).
  // sleep, a condition variable, a config function that sleeps (no call at
  // all), an exit handler that sleeps
  for (int mode : {0, 1, 13, 14}) {
    INFO("mode " << mode);
    cli::RunResult r = run_env("NPUSIM_ORCH_IDLE_TIMEOUT=2", misbehave_scene(mode), "idle_out");
    CHECK(r.status == 1);
    CHECK(has(r.err, "the orchestration program made no runtime call for 2 s (the idle bound, "
                     "NPUSIM_ORCH_IDLE_TIMEOUT): it sleeps, waits or computes without calling the runtime; stopped"));
    REQUIRE(r.summary.is_object());
    CHECK(r.summary["error"]["name"] == "ORCHESTRATION_CRASH");
    CHECK(r.summary["tasks"]["submitted"] == (mode == 13 ? 0 : 1));  // the call before it was simulated
    CHECK(all_gone(said_pids(r.err)));
  }
  // A program that closes npusim's pipe (every descriptor) ends the runner
  // at its next write: a crash, not a wait.
  cli::RunResult closed = run_env("NPUSIM_ORCH_IDLE_TIMEOUT=2", misbehave_scene(15), "closed_out");
  CHECK(closed.status == 1);
  CHECK(has(closed.err, "the orchestration program ended without returning from its entry"));
  CHECK(closed.summary["error"]["name"] == "ORCHESTRATION_CRASH");
  cli::Result c = npusim_env("NPUSIM_ORCH_IDLE_TIMEOUT=2", "check " + cli::quoted(misbehave_scene(0)));
  CHECK(c.status == 1);
  CHECK(has(c.err, "made no runtime call for 2 s"));
  const fs::path rec = cli::scratch("idle_rec.json");
  c = npusim_env("NPUSIM_ORCH_IDLE_TIMEOUT=2", "record " + cli::quoted(misbehave_scene(1)) + " -o " + cli::quoted(rec));
  CHECK(c.status == 1);
  CHECK(has(c.err, "made no runtime call for 2 s"));
  CHECK(fs::exists(rec));  // what the program did before it, as record writes a failed run
  // A sweep's runs inherit the bound: each point fails, none hangs.
  const fs::path csv = cli::scratch("idle_sweep") / "s.csv";
  fs::create_directories(csv.parent_path());
  c = npusim_env("NPUSIM_ORCH_IDLE_TIMEOUT=2",
                 "sweep " + cli::quoted(misbehave_scene(0)) + " --grid seed=1,2 --jobs 2 --csv " + cli::quoted(csv));
  CHECK(c.status == 0);
  CHECK(has(c.out, "npusim sweep: 2 points, 0 ok, 2 not ok"));
  const std::vector<std::string> rows = cli::lines_of(cli::slurp(csv));
  REQUIRE(rows.size() == 3);
  CHECK(rows[1].rfind("1,error,1,ORCHESTRATION_CRASH,", 0) == 0);
  CHECK(rows[2].rfind("2,error,1,ORCHESTRATION_CRASH,", 0) == 0);
}

TEST_CASE("the wall-clock bound and the bounds' settings", "[cli][scene][runner]") {
  cli::RunResult r = run_env("NPUSIM_ORCH_IDLE_TIMEOUT=100 NPUSIM_ORCH_TIMEOUT=1.5", misbehave_scene(0), "total_out");
  CHECK(r.status == 1);
  CHECK(has(r.err, "the orchestration program ran for 1.5 s of npusim's waiting for it (the wall-clock bound, "
                   "NPUSIM_ORCH_TIMEOUT): stopped"));
  CHECK(r.summary["error"]["name"] == "ORCHESTRATION_CRASH");
  for (const char* bad : {"abc", "0", "-1", "1e9", "5s"}) {
    INFO(bad);
    cli::Result c = npusim_env(std::string("NPUSIM_ORCH_IDLE_TIMEOUT='") + bad + "'", "check " + cli::quoted(misbehave_scene(12)));
    CHECK(c.status == 2);
    CHECK(c.err == std::string("npusim: error: $NPUSIM_ORCH_IDLE_TIMEOUT: expected a number of seconds in (0, 1e7], got \"") +
                       bad + "\"\n");
  }
  cli::Result c = npusim_env("NPUSIM_ORCH_TIMEOUT=x", "check " + cli::quoted(misbehave_scene(12)));
  CHECK(c.status == 2);
  CHECK(has(c.err, "$NPUSIM_ORCH_TIMEOUT: expected a number of seconds"));
}

TEST_CASE("a child the program forks neither hangs npusim nor outlives the run", "[cli][scene][runner]") {
  // Before: the child held the pipe open and npusim waited for its end of file for ever.
  cli::RunResult r = run_env("", misbehave_scene(2), "fork_out");
  CHECK(r.status == 0);
  CHECK(r.summary["status"] == "ok");
  std::vector<pid_t> pids = said_pids(r.err);
  CHECK(pids.size() == 1);
  CHECK(cli::eventually([&] { return all_gone(pids); }, 5));
  // The runner's death is its end, not the pipe's: the crash is reported
  // while the child still holds the pipe, and the child is killed.
  r = run_env("", misbehave_scene(3), "fork_crash_out");
  CHECK(r.status == 1);
  CHECK(has(r.err, "the orchestration program was killed by signal 6 (SIGABRT, an abort)"));
  CHECK(r.summary["error"]["name"] == "ORCHESTRATION_CRASH");
  pids = said_pids(r.err);
  CHECK(pids.size() == 1);
  CHECK(cli::eventually([&] { return all_gone(pids); }, 5));
}

TEST_CASE("a runtime call from a forked process or a second thread is the program's fault", "[cli][scene][runner]") {
  cli::RunResult r = run_env("", misbehave_scene(4), "fork_call_out");
  CHECK(r.status == 1);
  CHECK(has(r.err, "the program called submit_task in a forked process (pid "));
  CHECK(has(r.err, "): the runtime is the orchestration process's, a child it forks cannot call it"));
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["error"]["name"] == "ORCHESTRATION_CRASH");
  CHECK(r.summary["tasks"]["submitted"] == 1);  // the call before the fork was sent before it
  r = run_env("", misbehave_scene(5), "thread_call_out");
  CHECK(r.status == 1);
  CHECK(has(r.err, "the program called submit_task from a second thread: the orchestration API belongs to the thread "
                   "that runs the entry"));
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["error"]["name"] == "ORCHESTRATION_CRASH");
  CHECK_FALSE(has(r.err, "internal error"));
}

TEST_CASE("writes to npusim's pipe, long texts and many deps are never an internal error", "[cli][scene][runner]") {
  // Before: each of these exited 4 ("internal error ... a bug in npusim").
  SECTION("a write to fd 3 does not reach the channel") {
    cli::RunResult r = run_env("", misbehave_scene(6), "fd3_out");
    CHECK(r.status == 0);
    CHECK(r.summary["tasks"]["submitted"] == 2);
  }
  SECTION("junk on the channel itself") {
    cli::RunResult r = run_env("", misbehave_scene(7), "junk_out");
    CHECK(r.status == 1);
    CHECK(has(r.err, "npusim's channel from the orchestration runner carried a malformed message (a message of "
                     "4294967295 bytes (at most 1048576)): something in the program wrote to it"));
    CHECK(r.summary["error"]["name"] == "ORCHESTRATION_CRASH");
  }
  SECTION("an exception's text of 2 MiB") {
    cli::RunResult r = run_env("", misbehave_scene(8), "long_exc_out");
    CHECK(r.status == 1);
    CHECK(has(r.err, "(truncated: 2097152 bytes in all)"));
    CHECK(r.summary["error"]["name"] == "ORCHESTRATION_CRASH");
    CHECK(r.summary["error"]["device_log"][0] == "FATAL(code=200): an exception escaped the orchestration entry: " +
                                                     std::string(4096, 'x') + "... (truncated: 2097152 bytes in all)");
  }
  SECTION("a fatal message of 2 MiB") {
    cli::RunResult r = run_env("", misbehave_scene(9), "long_fatal_out");
    CHECK(r.status == 1);
    CHECK(has(r.err, "(truncated: 2097152 bytes in all)"));
    CHECK(r.summary["error"]["name"] == "EXPLICIT_ORCH_FATAL");
    CHECK(r.summary["error"]["device_log"][0] ==
          "FATAL(code=9): " + std::string(4096, 'y') + "... (truncated: 2097152 bytes in all)");
  }
  SECTION("200,000 explicit deps on one submit") {
    fs::path out = cli::scratch("many_deps_out");
    cli::Result r = npusim_env("", "run " + cli::quoted(misbehave_scene(10)) + " --no-host-stats -q --out " + cli::quoted(out));
    CHECK(r.status == 0);
    json d = cli::load(out / "deps.json");
    REQUIRE(d["tasks"].size() == 2);
    // The same producer 200,000 times is one explicit edge (the fanin
    // builder's dedup), beside the tensor's.
    REQUIRE(d["edges"].size() == 2);
    CHECK(d["edges"][0]["source"] == "explicit");
    CHECK(d["edges"][1]["source"] == "tensormap");
  }
}

// Before: SIGKILL (or SIGTERM) to npusim left the runner spinning for up to
// an hour and the program's children for ever.
TEST_CASE("npusim killed or interrupted takes the runner and the program's children with it", "[cli][scene][runner]") {
  for (int sig : {SIGKILL, SIGTERM}) {
    INFO("signal " << sig);
    const fs::path tmp = cli::scratch("kill_tmp_" + std::to_string(sig));
    fs::create_directories(tmp);
    const fs::path out = cli::scratch("kill_out_" + std::to_string(sig));
    cli::Child c = cli::start("run " + cli::quoted(misbehave_scene(11)) + " -q --out " + cli::quoted(out),
                              "kill_" + std::to_string(sig), "TMPDIR=" + cli::quoted(tmp));
    std::vector<pid_t> pids;
    REQUIRE(cli::eventually([&] { return fs::exists(c.err) && (pids = said_pids(c.stderr_text())).size() == 2; }, 60));
    CHECK_FALSE(all_gone(pids));
    ::kill(c.pid, sig);
    const int st = c.wait(20);
    CHECK(st != -1);
    CHECK((WIFSIGNALED(st) && WTERMSIG(st) == sig));
    CHECK(cli::eventually([&] { return all_gone(pids); }, 10));
    CHECK(cli::entries(tmp).empty());
    // SIGTERM: the run's staging folder and lock are removed too (after a
    // SIGKILL the next run into the folder removes them: docs/outputs.md).
    if (sig == SIGTERM) {
      CHECK_FALSE(fs::exists(out));
      CHECK(cli::entries(out.parent_path(), "." + out.filename().string()).empty());
    }
  }
}

// The scene compiler under npusim's death: its processes end and its
// temporary files (the output capture in TMPDIR, the cache's .so.tmp and
// .d.tmp) are removed. The compiler is a script that writes its outputs and
// waits; it says its pid and its child's.
TEST_CASE("npusim killed while compiling leaves no compiler and no temporary file", "[cli][scene][runner]") {
  for (int sig : {SIGKILL, SIGTERM}) {
    INFO("signal " << sig);
    const fs::path dir = cli::scratch("cc_kill_" + std::to_string(sig));
    fs::create_directories(dir / "tmp");
    const fs::path pidfile = dir / "pids";
    cli::write_file(dir / "cxx.sh", "#!/bin/sh\n"
                                    "[ \"$1\" = --version ] && { echo fake 1; exit 0; }\n"
                                    "while [ $# -gt 0 ]; do case \"$1\" in -o) out=$2; shift;; -MF) dep=$2; shift;; "
                                    "esac; shift; done\n"
                                    ": > \"$out\"; : > \"$dep\"\n"
                                    "sleep 100 &\n"
                                    "echo \"$$ $!\" > '" + pidfile.string() + ".part'\n"
                                    "mv '" + pidfile.string() + ".part' '" + pidfile.string() + "'\n"
                                    "wait\n");
    fs::permissions(dir / "cxx.sh", fs::perms::owner_all);
    const std::string env = "TMPDIR=" + cli::quoted(dir / "tmp") + " NPUSIM_CACHE_DIR=" + cli::quoted(dir / "cache") +
                            " CXX=" + cli::quoted(dir / "cxx.sh");
    cli::Child c = cli::start("check " + cli::quoted(misbehave_scene(12)), "cc_kill_" + std::to_string(sig), env);
    REQUIRE(cli::eventually([&] { return fs::exists(pidfile); }, 60));
    std::vector<pid_t> pids;
    std::ifstream in(pidfile);
    for (long p; in >> p;) pids.push_back(static_cast<pid_t>(p));
    REQUIRE(pids.size() == 2);
    CHECK(cli::entries(dir / "tmp", "npusim-cc-").size() == 1);  // the compiler's output, under TMPDIR
    CHECK(cli::entries(dir / "cache").size() == 2);             // .so.tmp<pid>, .d.tmp<pid>
    ::kill(c.pid, sig);
    const int st = c.wait(20);
    CHECK((WIFSIGNALED(st) && WTERMSIG(st) == sig));
    CHECK(cli::eventually([&] { return all_gone(pids); }, 10));
    CHECK(cli::eventually([&] { return cli::entries(dir / "tmp").empty() && cli::entries(dir / "cache").empty(); }, 10));
  }
}

// Before: make writes '$' as "$$" and '#' as "\#" in the dependency list;
// the cache looked those names up as they were, hashed nothing, and took
// the entry as fresh for ever: an edited header ran the old program.
TEST_CASE("the compile cache sees an edit in a folder named with '$' and '#'", "[cli][scene][runner]") {
  const fs::path dir = cli::scratch("cache $HOME #1");
  fs::create_directories(dir);
  const fs::path cache = cli::scratch("cache_escapes");
  cli::write_file(dir / "n.h", "#define N 2\n");
  cli::write_file(dir / "p.cpp", "#include \"pto_orchestration_api.h\"\n#include \"n.h\"\n"
                                 "extern \"C\" void aicpu_orchestration_entry(const ChipTaskArgs &args) {\n"
                                 "  for (int i = 0; i < N; ++i) { CoreTaskArgs p; p.add_inout(args.tensor(0).ref()); "
                                 "rt_submit_aiv_task(0, p); }\n}\n");
  json s = {{"npusim_scene", 1},
            {"name", "escapes"},
            {"orchestration", {{"source", "p.cpp"}}},
            {"incores", {{"K", {{"func_id", 0}, {"core", "aiv"}, {"duration", {{"ns", 1000}}}}}}},
            {"args", json::array({{{"tensor", {{"shape", {64}}, {"dtype", "fp32"}}}}})}};
  std::ofstream(dir / "s.json") << s.dump();
  const std::string env = "NPUSIM_CACHE_DIR=" + cli::quoted(cache);
  cli::Result r = npusim_env(env, "check " + cli::quoted(dir / "s.json"));
  CHECK(r.status == 0);
  CHECK(has(r.out, "(2 submits"));
  std::string listing;
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().extension() == ".deps") listing = cli::slurp(e.path());
  CHECK(has(listing, (dir / "n.h").string() + "\t"));
  CHECK_FALSE(has(listing, "\t\n"));  // every listed file hashed
  cli::write_file(dir / "n.h", "#define N 3\n");
  // (a TMPDIR that names no folder: the compiler's output goes to /tmp; before, exit 4)
  r = npusim_env(env + " TMPDIR=/nonexistent/folder", "check " + cli::quoted(dir / "s.json"));
  CHECK(r.status == 0);
  CHECK(has(r.out, "(3 submits"));
  // An entry listing a file that cannot be read, with the empty hash the
  // cache wrote for one, is stale (before: the empty hash matched, fresh).
  fs::path entry;
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().extension() == ".deps") entry = e.path();
  REQUIRE_FALSE(entry.empty());
  cli::write_file(entry, cli::slurp(entry) + (dir / "gone.h").string() + "\t\n");
  r = npusim_env(env, "check " + cli::quoted(dir / "s.json"));
  CHECK(has(r.out, "(3 submits"));
  CHECK_FALSE(has(cli::slurp(entry), "gone.h"));  // compiled again, listed anew
}
