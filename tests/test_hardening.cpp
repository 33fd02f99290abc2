// Issue 12: hostile input, interrupted runs and full disks never escape the
// output folder, exhaust the machine, wrap time or hang (docs/outputs.md).
// Each TEST_CASE is the regression test of one finding of the issue (or of
// the adversarial pass in docs/fuzzing.md); each failed on the code before
// the fix. Tests that need a mount namespace or a non-root user skip
// (NPUSIM_SKIP, shown by ctest as "Skipped") where those are not available.
#include "tests/catch.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"
#include "tests/skip.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using cli::has;
using cli::Result;
using cli::scratch;
using cli::slurp;

// One 100 ns AIV kernel submitted 2^32 - 1 times: a run that never ends.
const char* kEndless =
    R"({"npusim_trace": 1, "name": "endless", "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 100}}},
        "program": [{"op": "for", "var": "i", "to": 4294967295, "body": [{"op": "submit", "kernel": "K"}]}]})";

fs::path endless_trace() {
  fs::path t = cli::scratch_root() / "traces" / "endless.json";
  if (!fs::exists(t)) cli::write_file(t, kEndless);
  return t;
}

// Every path under `root`, relative (folders with a trailing /).
std::set<std::string> tree(const fs::path& root) {
  std::set<std::string> s;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    s.insert(fs::relative(it->path(), root).generic_string() + (it->is_directory() ? "/" : ""));
  return s;
}

// As root, a prefix that runs the command as `nobody` (permissions are not
// checked for root); "" for another user; nullopt if that is impossible.
std::optional<std::string> unprivileged() {
  if (::geteuid() != 0) return std::string();
  if (std::system("command -v setpriv >/dev/null 2>&1") != 0) return std::nullopt;
  return std::string("setpriv --reuid=65534 --regid=65534 --clear-groups ");
}

void give_to_nobody(const fs::path& p) {
  if (::geteuid() == 0) REQUIRE(std::system(("chown -R 65534:65534 " + cli::quoted(p)).c_str()) == 0);
}

// A script in a private mount namespace (as root, or mapped to root in a user
// namespace); nullopt if neither is allowed here.
std::optional<Result> in_mount_namespace(const std::string& script) {
  for (const char* how : {"unshare -m", "unshare -rm"}) {
    if (std::system((std::string(how) + " true >/dev/null 2>&1").c_str()) != 0) continue;
    fs::path s = scratch("ns_script") / "s.sh";
    cli::write_file(s, script);
    return cli::sh(std::string(how) + " sh " + cli::quoted(s));
  }
  return std::nullopt;
}

}  // namespace

// ---- 1. path escape ---------------------------------------------------------

TEST_CASE("a trace's name becomes one safe file-name component: nothing is written outside npusim_out",
          "[hardening][cli]") {
  const std::vector<std::string> names = {"../../victim", "..", ".", "a/../../x", "/etc/npusim_victim",
                                          std::string("a\0b", 3), std::string(5000, 'n'), "-rf",
                                          "\xe2\x80\xae" "gnp.exe", "ok name \xe6\xa8\xa1\xe5\x9e\x8b"};
  for (const std::string& name : names) {
    INFO(name.substr(0, 40));
    const fs::path w = scratch("names");
    const fs::path cwd = w / "work" / "a" / "b";
    fs::create_directories(cwd);
    json t = json::parse(R"({"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 100}}},
                            "program": [{"op": "submit", "kernel": "K"}]})");
    t["name"] = name;
    cli::write_file(w / "t.json", t.dump());
    const std::set<std::string> before = tree(w);
    Result r = cli::npusim_in(cwd, "run " + cli::quoted(w / "t.json") + " -q --swimlane-level 1");
    REQUIRE(r.status == 0);
    for (const std::string& p : tree(w))
      if (!before.count(p)) CHECK(p.rfind("work/a/b/npusim_out/", 0) == 0);
    const std::vector<std::string> dirs = cli::entries(cwd / "npusim_out");
    REQUIRE(dirs.size() == 1);
    const std::string& d = dirs[0];
    CHECK(d.size() <= 100);
    CHECK((d != "." && d != ".." && d[0] != '.' && d[0] != '-'));
    CHECK(d.find('/') == std::string::npos);
    CHECK(fs::exists(cwd / "npusim_out" / d / ("name_map_" + d + ".json")));
    CHECK(cli::load(cwd / "npusim_out" / d / "summary.json")["trace"] == name);  // the name itself is kept
  }
}

// ---- 2. memory ----------------------------------------------------------------

TEST_CASE("the kernels' phases are capped across the trace, repeats expanded", "[hardening][cli]") {
  // 46 KB of kernels with 65,536-phase repeats asked for gigabytes in `check`.
  // Twenty kernels of 65,536 phases each: the first sixteen in document
  // order (K0, K1, K10..K19, K2..K5: nlohmann::json sorts the keys) fill the
  // cap; the first phase of the seventeenth, K6, is one too many.
  json kernels = json::object();
  for (int k = 0; k < 20; ++k)
    kernels["K" + std::to_string(k)] = {
        {"func_id", k}, {"core", "aiv"}, {"body", {{{"repeat", {{"count", 65536}, {"body", {{{"compute", {{"ns", 1}}}}}}}}}}}};
  json t = {{"npusim_trace", 1}, {"kernels", kernels}, {"program", json::array()}};
  const fs::path f = scratch("phases") / "t.json";
  cli::write_file(f, t.dump());
  Result r = cli::npusim("check " + cli::quoted(f));
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + f.string() +
                     ": at /kernels/K6/body/0/repeat/body/0: the kernels may have at most 1048576 phases together once "
                     "repeats are expanded (each costs memory for the whole run)\n");
}

TEST_CASE("running out of host memory is exit 2 and says so, never a bug in npusim", "[hardening][cli]") {
#if defined(__SANITIZE_ADDRESS__)
  NPUSIM_SKIP("AddressSanitizer reserves terabytes of address space: ulimit -v cannot be used");
#else
  // A tensor's data of 30 million elements: its JSON document alone needs
  // far more than the 400 MB of address space the run may use.
  const fs::path f = scratch("oom") / "t.json";
  fs::create_directories(f.parent_path());
  {
    std::ofstream o(f);
    o << R"({"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 1}}}, )"
      << R"("tensors": {"x": {"shape": [30000000], "dtype": "int32", "data": [0)";
    for (int i = 1; i < 30000000; ++i) o << ",0";
    o << R"(]}}, "program": []})";
  }
  const fs::path out = scratch("oom_out") / "d";
  Result r = cli::sh("ulimit -v 400000; exec \"$NPUSIM\" run " + cli::quoted(f) + " --out " + cli::quoted(out));
  CHECK(r.status == 2);
  CHECK(has(r.err, "npusim: error: out of host memory (peak "));
  CHECK_FALSE(has(r.err, "internal error"));
  CHECK(cli::entries(out.parent_path()).empty());
#endif
}

// ---- 3. unbounded runs and leftovers -------------------------------------------

namespace {
// Sends `sig` to the running npusim: it says so and dies of that signal.
void interrupt_and_check(cli::Child& c, int sig) {
  ::kill(c.pid, sig);
  const int st = c.wait(60);
  REQUIRE(st != -1);
  CHECK(WIFSIGNALED(st));
  CHECK(WTERMSIG(st) == sig);
  CHECK(has(c.stderr_text(), "npusim: interrupted by SIG"));
}
}  // namespace

TEST_CASE("SIGINT, SIGTERM and SIGHUP stop a run, remove its staging folder and die of the signal",
          "[hardening][cli]") {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    INFO("signal " << sig);
    const fs::path parent = scratch("signal");
    fs::create_directories(parent);
    cli::Child c = cli::start("run " + cli::quoted(endless_trace()) + " --out " + cli::quoted(parent / "a" / "out"), "signal");
    REQUIRE(cli::eventually([&] { return !cli::entries(parent / "a", ".out.npusim-staging-").empty(); }, 60));
    interrupt_and_check(c, sig);
    CHECK(cli::entries(parent).empty());  // no staging folder, no lock, not even the created parent "a"
  }
}

// The signal reaches the sizing re-run the run is waiting for
// (interrupt::set_child): it dies too, and nothing is left of either.
TEST_CASE("an interrupt during a sizing re-run stops the re-run too and leaves nothing", "[hardening][cli][fatal]") {
  const fs::path parent = scratch("signal_rerun");
  fs::create_directories(parent);
  // SCOPE_DEADLOCK after 16,383 submits, then re-runs of up to 5,000,000 tasks.
  cli::Child c = cli::start("run " + cli::quoted(endless_trace()) + " --max-tasks 5000000 --out " + cli::quoted(parent / "a" / "out"),
                            "signal_rerun");
  const auto sizing = [&] {
    for (const std::string& s : cli::entries(parent / "a", ".out.npusim-staging-"))
      if (!cli::entries(parent / "a" / s / ".sizing").empty()) return true;
    return false;
  };
  REQUIRE(cli::eventually(sizing, 120));
  interrupt_and_check(c, SIGINT);
  // No process still runs with this folder in its command line (the re-run).
  const auto rerun_alive = [&] {
    for (const auto& e : fs::directory_iterator("/proc")) {
      std::ifstream in(e.path() / "cmdline", std::ios::binary);
      std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (has(cmd, parent.string())) return true;
    }
    return false;
  };
  CHECK(cli::eventually([&] { return !rerun_alive(); }, 10));
  CHECK(cli::entries(parent).empty());
}

TEST_CASE("staging folders left by dead runs are swept by the next run into the same folder", "[hardening][cli]") {
  const fs::path parent = scratch("sweep");
  cli::write_file(parent / ".out.npusim-staging-999999" / "merged_swimlane.json", "{\"traceEvents\": [");
  cli::write_file(parent / ".out.npusim-staging-999999" / "scope_stats" / "scope_stats.jsonl", "{}");
  cli::write_file(parent / ".other.npusim-staging-999999" / "x", "");  // another folder's: not ours to sweep
  Result r = cli::npusim("run traces/chain.json -q --out " + cli::quoted(parent / "out"));
  REQUIRE(r.status == 0);
  CHECK(cli::entries(parent) == std::vector<std::string>{".other.npusim-staging-999999", "out"});
}

TEST_CASE("run --max-tasks and --max-output stop a run with exit 2 and write nothing", "[hardening][cli]") {
  const fs::path parent = scratch("caps");
  Result r = cli::npusim("run " + cli::quoted(endless_trace()) + " --max-tasks 1000 --out " + cli::quoted(parent / "out"));
  CHECK(r.status == 2);
  CHECK(has(r.err, "npusim: error: " + endless_trace().string() +
                       ": the run reached --max-tasks 1000 (task 1001 was submitted at "));
  CHECK(has(r.err, "of simulated time): stopped, nothing written\n"));
  CHECK(cli::entries(parent).empty());
  r = cli::npusim("run " + cli::quoted(endless_trace()) + " --max-output 2M --out " + cli::quoted(parent / "out"));
  CHECK(r.status == 2);
  CHECK(has(r.err, ": the run reached --max-output 2097152 bytes ("));
  CHECK(cli::entries(parent).empty());
  // A run too short for the periodic check (chain: a few kB) is held to the
  // cap once its last file is written (it used to exit 0).
  r = cli::npusim("run traces/chain.json --max-output 1000 --out " + cli::quoted(parent / "out"));
  CHECK(r.status == 2);
  CHECK(has(r.err, ": the run reached --max-output 1000 bytes ("));
  CHECK(has(r.err, " written after 8 tasks): stopped, nothing written\n"));
  CHECK(cli::entries(parent).empty());
  r = cli::npusim("run traces/chain.json --max-output 2X --out " + cli::quoted(parent / "out"));
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: command line: at --max-output: expected a positive number of bytes (N, or N followed "
                 "by K, M, G or T), got \"2X\"\n");
}

TEST_CASE("run --progress prints tasks, simulated time and bytes written, and removes its line", "[hardening][cli]") {
  const fs::path parent = scratch("progress");
  Result r = cli::sh("NPUSIM_PROGRESS_MS=0 \"$NPUSIM\" run " + cli::quoted(endless_trace()) +
                     " --progress --max-tasks 10000 --out " + cli::quoted(parent / "out"));
  CHECK(r.status == 2);
  CHECK(has(r.err, "\rnpusim: "));
  CHECK(has(r.err, " tasks submitted, "));
  CHECK(has(r.err, " simulated, "));
  CHECK(has(r.err, " written, "));
  CHECK(has(r.err, "\r\033[Knpusim: error: "));  // the line is cleared before the message
}

// ---- 4. simulated time ---------------------------------------------------------

TEST_CASE("simulated time beyond 10^15 ns is exit 2 naming the limit, never a wrapped result", "[hardening][cli]") {
  // 6,001 chained hour-long kernels wrapped the picosecond clock (device_wall
  // 1.84e16 ns, status ok); 300 pass the limit; one lane of 65,536 of them
  // wrapped inside a single block.
  const fs::path d = scratch("time");
  for (const std::string& program :
       {std::string(R"([{"op": "for", "var": "i", "to": 6001, "body": [{"op": "submit", "kernel": "K", "args": [{"inout": "x"}]}]}])"),
        std::string(R"([{"op": "for", "var": "i", "to": 300, "body": [{"op": "submit", "kernel": "K", "args": [{"inout": "x"}]}]}])"),
        std::string(R"([{"op": "submit", "kernel": "L"}])")}) {
    INFO(program);
    // The scheduler watchdog at its largest (INT32_MAX ms, about 24.9 days):
    // an hour-long kernel is not a hang here.
    cli::write_file(d / "t.json", R"({"npusim_trace": 1, "run": {"scheduler_timeout_ms": 2147483647},
          "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 3.6e12}},
          "L": {"func_id": 1, "core": "aiv", "body": [{"repeat": {"count": 65536, "body": [{"compute": {"ns": 3.6e12}}]}}]}},
          "tensors": {"x": {"shape": [16], "dtype": "fp32"}}, "program": )" + program + "}");
    Result r = cli::npusim("run " + cli::quoted(d / "t.json") + " --out " + cli::quoted(d / "out"));
    CHECK(r.status == 2);
    CHECK(r.err == "npusim: error: " + (d / "t.json").string() +
                       ": the simulation reached npusim's simulated-time limit of 10^15 ns (about 11.6 days of device "
                       "time; beyond it npusim's picosecond clock could wrap): stopped, nothing written\n");
    CHECK_FALSE(fs::exists(d / "out"));
  }
}

// ---- 5. the output folder --------------------------------------------------------

TEST_CASE("run --out naming a file is refused before anything is simulated", "[hardening][cli]") {
  const fs::path f = scratch("out_file") / "f";
  cli::write_file(f, "keep");
  cli::Child c = cli::start("run " + cli::quoted(endless_trace()) + " --out " + cli::quoted(f), "out_file");
  const int st = c.wait(60);  // the endless run would never end
  REQUIRE(st != -1);
  CHECK(WEXITSTATUS(st) == 2);
  CHECK(c.stderr_text() == "npusim: error: " + f.string() +
                               ": not a folder (npusim run writes several files into the folder --out names)\n");
  CHECK(slurp(f) == "keep");
  CHECK(cli::entries(f.parent_path()) == std::vector<std::string>{"f"});
}

TEST_CASE("run --out naming a read-only folder is refused before anything is simulated", "[hardening][cli]") {
  const auto as = unprivileged();
  if (!as) NPUSIM_SKIP("running as root without setpriv: permissions cannot be tested");
  const fs::path parent = scratch("readonly");
  fs::create_directories(parent / "out");
  give_to_nobody(parent);
  fs::permissions(parent / "out", fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  Result r = cli::sh("exec " + *as + "timeout 60 \"$NPUSIM\" run " + cli::quoted(endless_trace()) + " --out " + cli::quoted(parent / "out"));
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (parent / "out").string() +
                     ": the output folder is not writable: Permission denied\n");
  CHECK(cli::entries(parent) == std::vector<std::string>{"out"});
}

// The other file system is a tmpfs mounted inside this test's scratch folder
// (in a mount namespace of its own), so nothing is written outside it.
TEST_CASE("run --out through a symbolic link to another file system works", "[hardening][cli]") {
  const fs::path d = scratch("link_fs");
  fs::create_directories(d / "mnt");
  fs::create_directories(d / "link");
  fs::create_directory_symlink(d / "mnt" / "target", d / "link" / "out");
  auto r = in_mount_namespace(
      "set -e\n"
      "mount -t tmpfs -o size=8m none " + cli::quoted(d / "mnt") + "\n"
      "mkdir " + cli::quoted(d / "mnt" / "target") + "\n"
      "\"$NPUSIM\" run traces/chain.json -q --out " + cli::quoted(d / "link" / "out") + "\n"
      "echo status $?\n"
      "test -f " + cli::quoted(d / "mnt" / "target" / "summary.json") + " && echo summary\n"
      "ls -A " + cli::quoted(d / "mnt") + "\n");  // the target only: no staging left beside it
  if (!r) NPUSIM_SKIP("no mount namespace can be made here (unshare -m / -rm)");
  INFO(r->err);
  CHECK(r->out == "status 0\nsummary\ntarget\n");
  CHECK(fs::is_symlink(d / "link" / "out"));
}

TEST_CASE("a mount point as --out works and a full file system is exit 2, leaving nothing", "[hardening][cli]") {
  const fs::path d = scratch("mount");
  fs::create_directories(d / "mnt");
  fs::create_directories(d / "small");
  auto r = in_mount_namespace(
      "set -e\n"
      "mount -t tmpfs -o size=4m none " + cli::quoted(d / "mnt") + "\n"
      "mount -t tmpfs -o size=256k none " + cli::quoted(d / "small") + "\n"
      "\"$NPUSIM\" run traces/chain.json -q --out " + cli::quoted(d / "mnt") + "\n"
      "ls -A " + cli::quoted(d / "mnt") + "\n"
      "set +e\n"
      "\"$NPUSIM\" run traces/pa_10k.json -q --out " + cli::quoted(d / "small" / "out") + " 2>" + cli::quoted(d / "err") + "\n"
      "echo status $?\n"
      "ls -A " + cli::quoted(d / "small") + "\n");
  if (!r) NPUSIM_SKIP("no mount namespace can be made here (unshare -m / -rm)");
  CHECK(r->out == ".npusim_outputs\nchip_swimlane_records.json\ndeps.json\nmerged_swimlane.json\nname_map_chain.json\n"
                  "platform.json\nscope_stats\nsummary.json\ntask_stats.csv\nstatus 2\n");
  const std::string err = slurp(d / "err");
  CHECK(has(err, "npusim: error: " + (d / "small" / "out").string() + "/"));
  CHECK(has(err, ": cannot write: No space left on device\n"));
}

TEST_CASE("ulimit -f makes a write fail with exit 2 naming the file, not SIGXFSZ or exit 4", "[hardening][cli]") {
  const fs::path parent = scratch("ulimit_f");
  Result r = cli::sh("ulimit -f 256; exec \"$NPUSIM\" run traces/pa_10k.json -q --out " + cli::quoted(parent / "out"));
  CHECK(r.status == 2);
  CHECK(has(r.err, "npusim: error: " + (parent / "out").string() + "/"));
  CHECK(has(r.err, ": cannot write: File too large\n"));
  CHECK(cli::entries(parent).empty());
}

TEST_CASE("an output folder holding what npusim did not write is refused, and left as it was", "[hardening][cli]") {
  const fs::path out = scratch("foreign") / "out";
  REQUIRE(cli::npusim("run traces/chain.json -q --out " + cli::quoted(out)).status == 0);
  const std::set<std::string> outputs = tree(out);
  // A folder in place of an output file, and a file npusim did not write.
  for (const std::string& extra : {std::string("summary.json.d/"), std::string("notes.txt")}) {
    fs::path e = out / extra;
    if (extra.back() == '/') fs::create_directories(e);
    else cli::write_file(e, "mine");
    cli::Child c = cli::start("run " + cli::quoted(endless_trace()) + " --out " + cli::quoted(out), "foreign");
    const int st = c.wait(60);
    REQUIRE(st != -1);
    CHECK(WEXITSTATUS(st) == 2);
    CHECK(has(c.stderr_text(), "holds \"" + extra + "\", which npusim did not write"));
    fs::remove_all(e);
    CHECK(tree(out) == outputs);
  }
  fs::remove(out / "summary.json");
  fs::create_directories(out / "summary.json");  // a folder where npusim's file was
  Result r = cli::npusim("run traces/chain.json -q --out " + cli::quoted(out));
  CHECK(r.status == 2);
  CHECK(has(r.err, "holds \"summary.json/\""));
}

TEST_CASE("an unreadable folder inside --out is refused before the run", "[hardening][cli]") {
  const auto as = unprivileged();
  if (!as) NPUSIM_SKIP("running as root without setpriv: permissions cannot be tested");
  const fs::path parent = scratch("unreadable");
  fs::create_directories(parent / "out" / "scope_stats");
  give_to_nobody(parent);
  fs::permissions(parent / "out" / "scope_stats", fs::perms::none);
  Result r = cli::sh("exec " + *as + "timeout 60 \"$NPUSIM\" run " + cli::quoted(endless_trace()) + " --out " + cli::quoted(parent / "out"));
  fs::permissions(parent / "out" / "scope_stats", fs::perms::owner_all);
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (parent / "out").string() + ": cannot read the output folder: Permission denied\n");
}

TEST_CASE("a second run into a locked output folder stops at once with exit 2", "[hardening][cli]") {
  const fs::path parent = scratch("lock");
  cli::Child a = cli::start("run " + cli::quoted(endless_trace()) + " --out " + cli::quoted(parent / "out"), "lock_a");
  REQUIRE(cli::eventually([&] { return fs::exists(parent / ".out.npusim-lock"); }, 60));
  Result b = cli::npusim("run traces/chain.json -q --out " + cli::quoted(parent / "out"));
  CHECK(b.status == 2);
  CHECK(b.err == "npusim: error: " + (parent / "out").string() + ": another npusim run (pid " +
                     std::to_string(a.pid) + ") is writing this output folder; wait for it or choose another --out\n");
  ::kill(a.pid, SIGTERM);
  REQUIRE(a.wait(60) != -1);
  CHECK(cli::entries(parent).empty());
}

TEST_CASE("an input error found mid-run removes the parent folders it created", "[hardening][cli]") {
  const fs::path parent = scratch("parents");
  Result r = cli::npusim("run tests/data/bad/division_by_zero.json --out " + cli::quoted(parent / "a" / "b" / "out"));
  CHECK(r.status == 2);
  CHECK(cli::entries(parent).empty());
}

TEST_CASE("run --out / is refused at once, without walking the disk", "[hardening][cli]") {
  cli::Child c = cli::start("run " + cli::quoted(endless_trace()) + " --out /", "root");
  const int st = c.wait(60);
  REQUIRE(st != -1);
  CHECK(WEXITSTATUS(st) == 2);
  CHECK(has(c.stderr_text(), "npusim: error: /: holds \""));
}

TEST_CASE("a new run replaces the previous outputs whole, and the current folder works as --out", "[hardening][cli]") {
  const fs::path out = scratch("replace") / "out";
  REQUIRE(cli::npusim("run traces/chain.json -q --out " + cli::quoted(out)).status == 0);
  REQUIRE(cli::npusim("run traces/fanout_fanin.json -q --swimlane-level 0 --no-deps --out " + cli::quoted(out)).status == 0);
  CHECK(cli::entries(out) == std::vector<std::string>{".npusim_outputs", "name_map_fanout_fanin.json", "platform.json",
                                                      "scope_stats", "summary.json", "task_stats.csv"});
  CHECK(slurp(out / ".npusim_outputs") ==
        "# files npusim run wrote in this folder; its next run here replaces them\nscope_stats/scope_stats.jsonl\n"
        "name_map_fanout_fanin.json\ntask_stats.csv\nsummary.json\nplatform.json\n");
  CHECK(cli::entries(out.parent_path()) == std::vector<std::string>{"out"});
  const fs::path here = scratch("here");
  fs::create_directories(here);
  Result r = cli::npusim_in(here, "run " + cli::quoted(fs::path(NPUSIM_SOURCE_DIR) / "traces/chain.json") + " -q --out .");
  CHECK(r.status == 0);
  CHECK(fs::exists(here / "summary.json"));
  r = cli::npusim_in(here, "run " + cli::quoted(fs::path(NPUSIM_SOURCE_DIR) / "traces/spmd.json") + " -q --out .");
  CHECK(r.status == 0);
  CHECK(fs::exists(here / "name_map_spmd.json"));
  CHECK_FALSE(fs::exists(here / "name_map_chain.json"));
}

// ---- 6. linear loading -------------------------------------------------------------

TEST_CASE("a flat program of a million ops loads (linear time: the old parse callback was quadratic)",
          "[hardening][cli]") {
  // 320,000 ops took 15 s to load, a million would take minutes (beyond the
  // suite's per-test timeout); tools/bench_load.sh measures the time.
  const fs::path f = scratch("flat") / "t.json";
  fs::create_directories(f.parent_path());
  {
    std::ofstream o(f);
    o << R"({"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 1}}}, "x_keys": {)";
    for (int i = 0; i < 100000; ++i) o << (i ? ", " : "") << "\"k" << i << "\": " << i;
    o << R"(}, "program": [)";
    for (int i = 0; i < 1000000; ++i) o << (i ? ", " : "") << R"({"op": "let", "var": "v", "value": 1})";
    o << "]}";
  }
  Result r = cli::npusim("check -q " + cli::quoted(f));
  CHECK(r.status == 0);
  CHECK(r.err.empty());
}

// ---- 7. FIFO and standard input -------------------------------------------------------

TEST_CASE("a trace from a FIFO or standard input gets the same sizing advice as from a file", "[hardening][cli][fatal]") {
  const fs::path d = scratch("fifo");
  fs::create_directories(d);
  Result file = cli::npusim("run traces/fatal/heap_ring_deadlock.json --out " + cli::quoted(d / "a"));
  REQUIRE(file.status == 1);
  REQUIRE(has(file.err, "sizes that would have been enough: "));
  const std::string advice = file.err.substr(file.err.find("sizes that would have been enough: "));
  REQUIRE(::mkfifo((d / "fifo").c_str(), 0600) == 0);
  Result fifo = cli::sh("cat traces/fatal/heap_ring_deadlock.json > " + cli::quoted(d / "fifo") +
                        " & exec timeout 60 \"$NPUSIM\" run " + cli::quoted(d / "fifo") + " --out " + cli::quoted(d / "b"));
  CHECK(fifo.status == 1);
  CHECK(has(fifo.err, advice));
  Result in = cli::sh("exec timeout 60 \"$NPUSIM\" run - --out " + cli::quoted(d / "c") + " < traces/fatal/heap_ring_deadlock.json");
  CHECK(in.status == 1);
  CHECK(has(in.err, advice));
  CHECK_FALSE(has(in.err, "the program itself must change"));
}

TEST_CASE("sizing advice comes only from re-runs that reached the failure", "[hardening][cli][fatal]") {
  // One task whose output is 1.5 GiB on ring 0, the other rings' heaps 20 GiB
  // each: the ring-0 heap it needs no longer fits the device's memory beside
  // them, so no re-run can get past the failure; an earlier version took the
  // re-run's rtMalloc failure for progress. (The output stays under 2 GiB:
  // a larger total wraps the runtime's int32 total_output_size to a small
  // block, test_conf_views_outputs.cpp.)
  const fs::path d = scratch("advice");
  cli::write_file(d / "t.json", R"({"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 100}}},
      "program": [{"op": "submit", "kernel": "K", "args": [{"out": "y", "shape": [402653184], "dtype": "fp32"}]}]})");
  Result r = cli::npusim("run " + cli::quoted(d / "t.json") + " --ring-heap 1024,21474836480,21474836480,21474836480 --out " +
                         cli::quoted(d / "out"));
  CHECK(r.status == 1);
  CHECK_FALSE(has(r.err, "would have been enough"));
  CHECK(has(r.err, "no ring_heap up to "));
  CHECK(has(r.err, " (a larger one no longer fits the runtime's arena in the device's memory) gets this program past "
                   "the failure"));
}

TEST_CASE("sizing re-runs of a program that never ends are capped, and say so", "[hardening][cli][fatal]") {
  // The endless loop fills ring 0's task window (one scope holds every task):
  // SCOPE_DEADLOCK after 16,383 submits. The re-run with a doubled window
  // used to run the rest of the 2^32 submits (it never ended); it now stops
  // at the run's --max-tasks, past the failure.
  const fs::path d = scratch("rerun_cap");
  Result r = cli::sh("exec timeout 120 \"$NPUSIM\" run " + cli::quoted(endless_trace()) + " --max-tasks 20000 --out " +
                     cli::quoted(d / "out"));
  CHECK(r.status == 1);
  CHECK(has(r.err, "sizes that would have been enough: ring_task_window of ring 0: 16384 -> 32768 would have been "
                   "enough (ring_task_window=[32768,16384,16384,16384] (--ring-task-window 32768,16384,16384,16384)); "
                   "the run then gets past this failure (its re-run was stopped after 20000 tasks, its cap)\n"));
  const json enough = cli::load(d / "out" / "summary.json")["error"]["diagnosis"]["enough"];
  CHECK(enough["outcome"] == "max_tasks");
  CHECK(enough["rerun_max_tasks"] == 20000);
}

// ---- 8. run and check agree ---------------------------------------------------------------

TEST_CASE("a HARD syncall naming the other core type deadlocks in run, as check says", "[hardening][cli][barrier]") {
  // pypto src/ir/verifier/verify_hard_syncall_occupancy.cpp: a standalone
  // AIV/AIC kernel whose hard syncall names a different core_type is
  // "unsatisfiable: the other core type has zero participants".
  const fs::path d = scratch("hard_type");
  cli::write_file(d / "t.json", R"({"npusim_trace": 1, "kernels": {"BAR": {"func_id": 0, "core": "aiv", "body": [
      {"compute": {"ns": 100}}, {"syncall": {"mode": "hard", "core_type": "aic"}}, {"compute": {"ns": 100}}]}},
      "program": [{"op": "submit", "kernel": "BAR", "block_num": 48, "sync_start": true}]})");
  Result check = cli::npusim("check " + cli::quoted(d / "t.json"));
  CHECK(check.status == 1);
  CHECK(has(check.err, "[HardSyncallOccupancy]"));
  Result run = cli::npusim("run " + cli::quoted(d / "t.json") + " --out " + cli::quoted(d / "out"));
  CHECK(run.status == 1);
  CHECK(has(run.err, "48 core(s) ["));
  CHECK(has(run.err, "wait at a HARD syncall (FFTS, core_type AIC)"));
  CHECK(has(run.err, "48 of the waiting cores are not AIC cores"));
}

// ---- 9. smaller ones -------------------------------------------------------------------------

namespace {
// RFC 4180 records (quoted fields may hold commas, quotes and newlines).
std::vector<std::vector<std::string>> parse_csv(const std::string& s) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') rows.back().back() += '"', ++i;
      else if (c == '"') quoted = false;
      else rows.back().back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\n' || (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n')) {
      i += c == '\r';
      rows.emplace_back(1);
    } else {
      rows.back().back() += c;
    }
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}
}  // namespace

TEST_CASE("task_stats.csv is RFC 4180: kernel names with commas, quotes and newlines stay in their field",
          "[hardening][cli][writers]") {
  const fs::path d = scratch("csv");
  json t = {{"npusim_trace", 1},
            {"kernels", {{"a,b", {{"func_id", 0}, {"core", "aiv"}, {"duration", {{"ns", 10}}}}},
                         {"q\"uote", {{"func_id", 1}, {"core", "aiv"}, {"duration", {{"ns", 10}}}}},
                         {"new\nline", {{"func_id", 2}, {"core", "aiv"}, {"duration", {{"ns", 10}}}}}}},
            {"program", {{{"op", "submit"}, {"kernel", "a,b"}}, {{"op", "submit"}, {"kernel", "q\"uote"}},
                         {{"op", "submit"}, {"kernel", "new\nline"}}}}};
  cli::write_file(d / "t.json", t.dump());
  REQUIRE(cli::npusim("run " + cli::quoted(d / "t.json") + " -q --out " + cli::quoted(d / "out")).status == 0);
  const auto rows = parse_csv(slurp(d / "out" / "task_stats.csv"));
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) CHECK(row.size() == 17);
  CHECK(rows[0][3] == "kernel");
  CHECK(rows[1][3] == "a,b");
  CHECK(rows[2][3] == "q\"uote");
  CHECK(rows[3][3] == "new\nline");
}

TEST_CASE("barrier-cost: an output it cannot write and an empty set of participants are exit 2", "[hardening][cli][barrier]") {
  const fs::path d = scratch("bc");
  fs::create_directories(d);
  // The write error from the fault-injection seam (docs/testing.md), not
  // /dev/full: a machine may have none, and as root the command would then
  // create a regular file in /dev.
  Result r = cli::sh("NPUSIM_TEST_WRITE_FAULT=1 exec \"$NPUSIM\" barrier-cost --core-type aiv --participants 8 --csv " +
                     cli::quoted(d / "b.csv"));
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (d / "b.csv").string() + ": cannot write: No space left on device\n");
  CHECK(r.out.empty());  // no table printed for a run whose file was not written
  CHECK(cli::entries(d).empty());
  r = cli::npusim("barrier-cost --core-type aiv --participants 8 --svg " + cli::quoted(d));
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + d.string() + ": cannot create: Is a directory\n");
  r = cli::npusim("barrier-cost --core-type aiv --participants 8 --html /missing/x.html");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: /missing/x.html: cannot create: No such file or directory\n");
  r = cli::npusim("barrier-cost --core-type aiv --participants 5000");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: command line: at --participants: no participant count to measure: aiv takes 1 to 48 "
                 "participants, got 5000\n");
  CHECK(r.out.empty());
}

TEST_CASE("compare refuses summaries of different traces, platforms or options unless asked", "[hardening][compare]") {
  const fs::path d = scratch("cmp");
  REQUIRE(cli::npusim("run traces/chain.json -q --no-host-stats --out " + cli::quoted(d / "a")).status == 0);
  REQUIRE(cli::npusim("run traces/fanout_fanin.json -q --no-host-stats --out " + cli::quoted(d / "b")).status == 0);
  REQUIRE(cli::npusim("run traces/chain.json -q --no-host-stats --aicpu-thread-num 3 --out " + cli::quoted(d / "c")).status == 0);
  REQUIRE(cli::npusim("run traces/chain.json -q --no-host-stats --platform tiny --out " + cli::quoted(d / "e")).status == 0);
  const std::string a = cli::quoted(d / "a" / "summary.json");
  Result r = cli::npusim("compare " + a + " " + cli::quoted(d / "b" / "summary.json"));
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (d / "b" / "summary.json").string() +
                     ": at /trace: a summary of trace \"fanout_fanin\", the baseline's is of \"chain\": "
                     "--allow-different compares them anyway\n");
  r = cli::npusim("compare " + a + " " + cli::quoted(d / "c" / "summary.json"));
  CHECK(r.status == 2);
  CHECK(has(r.err, ": at /run/aicpu_thread_num: "));
  r = cli::npusim("compare " + a + " " + cli::quoted(d / "e" / "summary.json"));
  CHECK(r.status == 2);
  CHECK(has(r.err, ": at /platform: "));
  // A run option only the baseline names (dropped from the current): as
  // different as one only the current names, either way round.
  json without = cli::load(d / "a" / "summary.json");
  REQUIRE(without["run"].contains("aicpu_thread_num"));
  without["run"].erase("aicpu_thread_num");
  cli::write_file(d / "without.json", without.dump());
  r = cli::npusim("compare " + a + " " + cli::quoted(d / "without.json"));
  CHECK(r.status == 2);
  CHECK(has(r.err, ": at /run/aicpu_thread_num: a summary of a run with no aicpu_thread_num, the baseline's with 4: "));
  r = cli::npusim("compare " + cli::quoted(d / "without.json") + " " + a);
  CHECK(r.status == 2);
  CHECK(has(r.err, ": at /run/aicpu_thread_num: a summary of a run with aicpu_thread_num 4, the baseline's with none: "));
  r = cli::npusim("compare --allow-different " + a + " " + cli::quoted(d / "without.json"));
  CHECK(r.status == 0);
  r = cli::npusim("compare --allow-different " + a + " " + cli::quoted(d / "b" / "summary.json"));
  CHECK((r.status == 0 || r.status == 3));
  // A huge metric still gives a table of short lines.
  json s = cli::load(d / "a" / "summary.json");
  s["device_wall_ns"] = 1e308;
  cli::write_file(d / "huge.json", s.dump());
  r = cli::npusim("compare " + a + " " + cli::quoted(d / "huge.json"));
  CHECK(r.status == 3);
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 100);
  CHECK(has(r.out, "e+30"));  // the delta in %, as a power of ten
}

TEST_CASE("platform fields npusim never used are gone, and named as such", "[hardening][platform]") {
  json p = json::parse(slurp(fs::path(NPUSIM_SOURCE_DIR) / "platforms/a2a3.json"));
  CHECK_FALSE(p["limits"].contains("max_dims"));
  CHECK_FALSE(p["timeouts"].contains("op_execute_ns"));
  p["timeouts"]["op_execute_ns"] = {{"value", 4.5e10}, {"source", "x"}};
  const fs::path f = scratch("platform") / "p.json";
  cli::write_file(f, p.dump());
  Result r = cli::npusim("check traces/chain.json --platform " + cli::quoted(f));
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + f.string() +
                     ": at /timeouts/op_execute_ns: no longer a platform field: npusim never used it (a hung "
                     "kernel is reported by the scheduler's no-progress timeout, which fires first); remove it\n");
  // The cross_core section went with the on-chip slot ring (docs/platform.md, "Removed fields").
  p = json::parse(slurp(fs::path(NPUSIM_SOURCE_DIR) / "platforms/a2a3.json"));
  CHECK_FALSE(p.contains("cross_core"));
  p["cross_core"] = {{"push_ns", {{"value", 100}, {"assumption", "x"}}}};
  cli::write_file(f, p.dump());
  r = cli::npusim("check traces/chain.json --platform " + cli::quoted(f));
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + f.string() +
                     ": at /cross_core: no longer a platform field: the section priced the on-chip slot ring npusim "
                     "modelled before PTO-ISA's pipe; a push and a pop are GM transfers (gm) handed off through "
                     "ffts.flag_ns, and the slot count is the kernel's cross_core_slots; remove it\n");
}

TEST_CASE("on a failed run makespan_ns never exceeds device_wall_ns", "[hardening][fatal]") {
  for (const auto& e : fs::directory_iterator(fs::path(NPUSIM_SOURCE_DIR) / "traces/fatal")) {
    INFO(e.path().filename());
    cli::RunResult r = cli::run_summary(e.path().string() + " --no-suggest", "makespan");
    REQUIRE(r.status == 1);
    CHECK(r.summary["makespan_ns"].get<double>() <= r.summary["device_wall_ns"].get<double>());
  }
}

TEST_CASE("a folder given as the trace is named as such", "[hardening][cli]") {
  Result r = cli::npusim("run traces --out /dev/null/x");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: traces: is a folder, not a trace file\n");
  r = cli::npusim("check traces");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: traces: is a folder, not a trace file\n");
  // The other inputs say the same ("is a directory" before, for some).
  r = cli::npusim("check traces/chain.json --platform platforms/");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: platforms/: is a folder, not a JSON file\n");
  r = cli::npusim("worker traces --out /dev/null/x");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: traces: is a folder, not a JSON file\n");
  // compare takes a run folder for its summary.json: a folder without one says so.
  r = cli::npusim("compare traces traces/golden/chain.summary.json");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: traces: is a folder with no summary.json: expected a summary.json or the --out "
                 "folder of npusim run\n");
  r = cli::npusim("scope-stats traces");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: traces: is a folder, not a scope_stats.jsonl\n");
}

TEST_CASE("busy time summed over blocks past 2^64 ps is exact, not wrapped", "[hardening][cli]") {
  // 107 tasks of 48 one-hour AIV blocks (the scheduler watchdog raised past an
  // hour): 107 x 48 x 3.6e15 ps = 1.849e19 ps > 2^64 - 1 = 1.845e19. Before:
  // figures.core_types.aiv.busy_ns and the kernel's core_busy_ns were summed
  // in 64-bit ps and read 42855926290448.38 ns (wrapped), utilisation from a
  // wrapped capacity too.
  const fs::path d = scratch("busy_wrap");
  cli::write_file(d / "t.json", R"({"npusim_trace": 1, "name": "busy_wrap", "run": {"scheduler_timeout_ms": 7200000},
    "kernels": {"HOUR": {"func_id": 0, "core": "aiv", "duration": {"ns": 3600000000000}}},
    "program": [{"op": "for", "var": "i", "from": 0, "to": 107,
                 "body": [{"op": "submit", "kernel": "HOUR", "block_num": 48}]}]})");
  const auto r = cli::run_summary(cli::quoted(d / "t.json") + " -q --no-host-stats", "busy_wrap_out");
  REQUIRE(r.status == 0);
  const double busy = 107.0 * 48 * 3600000000000.0;  // 1.84896e16 ns, exact in a double
  CHECK(r.summary["figures"]["core_types"]["aiv"]["busy_ns"].get<double>() == busy);
  CHECK(r.summary["kernels"]["HOUR"]["core_busy_ns"].get<double>() == busy);
  const double makespan = r.summary["makespan_ns"].get<double>();
  CHECK(r.summary["figures"]["core_types"]["aiv"]["utilisation"].get<double>() == Approx(busy / (48 * makespan)));
  CHECK(r.summary["figures"]["core_types"]["aiv"]["utilisation"].get<double>() <= 1.0);
}
