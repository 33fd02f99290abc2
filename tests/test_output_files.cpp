// Files named on the command line (docs/outputs.md, "Files named on the
// command line"): every command writes them whole or not at all, never over
// one of its own inputs, never renames over a device or a FIFO, and a write
// error is exit 2 naming the path as the user gave it. Write errors come from
// the fault-injection seam (NPUSIM_TEST_WRITE_FAULT, docs/testing.md), not
// from a device of the machine, and every file is in the test's scratch
// folder.
#include "tests/catch.h"

#include <cerrno>
#include <thread>

#include <sys/stat.h>

#include "models/common/errors.h"
#include "sim/record/whole_file.h"
#include "tests/cli_support.h"

namespace {

using cli::has;
using cli::Result;
namespace fs = std::filesystem;

const std::string kOld = "the previous contents\n";

// A run folder of traces/chain.json, made once per test process.
fs::path chain_run() {
  static const fs::path dir = [] {
    fs::path out;
    REQUIRE(cli::run("traces/chain.json -q --no-host-stats", "of_chain_run", out).status == 0);
    return out;
  }();
  return dir;
}

fs::path chain_trace() {
  static const fs::path t = [] {
    const fs::path p = cli::scratch("of_trace") / "t.json";
    cli::write_file(p, cli::slurp(fs::path(NPUSIM_SOURCE_DIR) / "traces/chain.json"));
    return p;
  }();
  return t;
}

// One command with one file named on its command line.
struct Case {
  const char* name;
  std::string args;  // with {OUT} where the file goes
};

std::vector<Case> cases() {
  const std::string run = cli::quoted(chain_run());
  const std::string trace = cli::quoted(chain_trace());
  return {
      {"report", "report " + run + " -o {OUT}"},
      {"scope-stats --html", "scope-stats " + cli::quoted(chain_run() / "scope_stats" / "scope_stats.jsonl") + " --html {OUT}"},
      {"scope-stats --svg", "scope-stats " + cli::quoted(chain_run() / "scope_stats" / "scope_stats.jsonl") + " --svg {OUT}"},
      {"import", "import " + run + " -o {OUT}"},
      {"barrier-cost --csv", "barrier-cost --core-type aiv --participants 8 --csv {OUT}"},
      {"barrier-cost --html", "barrier-cost --core-type aiv --participants 8 --html {OUT}"},
      {"sweep --csv", "sweep " + trace + " --grid seed=1,2 -q --jobs 2 --csv {OUT}"},
  };
}

std::string with_out(std::string args, const fs::path& out) {
  args.replace(args.find("{OUT}"), 5, cli::quoted(out));
  return args;
}

}  // namespace

TEST_CASE("a write error leaves the file as it was, exit 2 naming it", "[output_files][cli]") {
  for (const Case& c : cases()) {
    for (const char* fault : {"1:ENOSPC", "1:EIO"}) {
      INFO(c.name << " with NPUSIM_TEST_WRITE_FAULT=" << fault);
      const fs::path d = cli::scratch("of_fault");
      const fs::path out = d / "out.file";
      cli::write_file(out, kOld);
      ::chmod(out.c_str(), 0600);
      Result r = cli::sh(std::string("NPUSIM_TEST_WRITE_FAULT=") + fault + " exec \"$NPUSIM\" " + with_out(c.args, out));
      CHECK(r.status == 2);
      const char* why = fault[2] == 'E' && fault[3] == 'N' ? "No space left on device" : "Input/output error";
      CHECK(r.err == "npusim: error: " + out.string() + ": cannot write: " + why + "\n");
      CHECK(cli::slurp(out) == kOld);
      CHECK(cli::entries(d) == std::vector<std::string>{"out.file"});  // no temporary left
      if (std::string(c.name) == "sweep --csv") CHECK(r.out.empty());

      // Without the fault: replaced whole, its permissions kept.
      r = cli::npusim(with_out(c.args, out));
      CHECK(r.status == 0);
      CHECK(cli::slurp(out) != kOld);
      struct stat st {};
      REQUIRE(::stat(out.c_str(), &st) == 0);
      CHECK((st.st_mode & 0777) == 0600);
      std::vector<std::string> want{"out.file"};
      if (std::string(c.name) == "sweep --csv") want.push_back("out.svg");  // the plot beside the table
      CHECK(cli::entries(d) == want);
    }
  }
}

TEST_CASE("a FIFO or a symbolic link as the output stays what it is", "[output_files][cli]") {
  for (const Case& c : cases()) {
    INFO(c.name);
    const fs::path d = cli::scratch("of_fifo");
    fs::create_directories(d);
    // A FIFO: written through, in place, and still a FIFO afterwards.
    REQUIRE(::mkfifo((d / "pipe").c_str(), 0644) == 0);
    Result r = cli::sh("cat " + cli::quoted(d / "pipe") + " > " + cli::quoted(d / "got") + " &\n" +
                       "\"$NPUSIM\" " + with_out(c.args, d / "pipe") + "\nstatus=$?\nwait\nexit $status\n");
    CHECK(r.status == 0);
    struct stat st {};
    REQUIRE(::lstat((d / "pipe").c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    CHECK(fs::file_size(d / "got") > 50);  // the whole output came through (the smallest, a CSV, is 99 bytes)
    // A link to a regular file: the file is replaced, the link kept.
    cli::write_file(d / "target", kOld);
    fs::create_symlink("target", d / "link");
    r = cli::npusim(with_out(c.args, d / "link"));
    CHECK(r.status == 0);
    CHECK(fs::is_symlink(d / "link"));
    CHECK(cli::slurp(d / "target") != kOld);
    // A dangling link is refused: where the file would go is a guess.
    fs::create_symlink("missing", d / "dangling");
    r = cli::npusim(with_out(c.args, d / "dangling"));
    CHECK(r.status == 2);
    CHECK(r.err == "npusim: error: " + (d / "dangling").string() +
                       ": is a symbolic link to a missing file: not written through\n");
    CHECK_FALSE(fs::exists(d / "missing"));
  }
}

TEST_CASE("an output is never written over one of the command's own inputs", "[output_files][cli]") {
  const fs::path d = cli::scratch("of_input");
  fs::create_directories(d);
  const fs::path trace = d / "t.json";
  const std::string text = cli::slurp(fs::path(NPUSIM_SOURCE_DIR) / "traces/chain.json");
  cli::write_file(trace, text);
  // Before: sweep --csv naming its own input truncated it and exited 0.
  Result r = cli::npusim("sweep " + cli::quoted(trace) + " --grid seed=1,2 -q --csv " + cli::quoted(trace));
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + trace.string() + ": is an input of this command: not written over\n");
  CHECK(cli::slurp(trace) == text);
  // The same file under another name (a hard link) is the same input.
  fs::create_hard_link(trace, d / "alias.json");
  r = cli::npusim("sweep " + cli::quoted(trace) + " --grid seed=1,2 -q --csv " + cli::quoted(d / "alias.json"));
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + (d / "alias.json").string() + ": is the same file as the input " +
                     trace.string() + ": not written over\n");
  CHECK(cli::slurp(trace) == text);

  const fs::path stats = d / "s.jsonl";
  cli::write_file(stats, cli::slurp(chain_run() / "scope_stats" / "scope_stats.jsonl"));
  r = cli::npusim("scope-stats " + cli::quoted(stats) + " --html " + cli::quoted(stats));
  CHECK(r.status == 2);
  CHECK(has(r.err, stats.string() + ": is an input of this command: not written over\n"));

  const fs::path cap = cli::scratch("of_capture");
  fs::copy(chain_run(), cap, fs::copy_options::recursive);
  const std::string deps = cli::slurp(cap / "deps.json");
  r = cli::npusim("import " + cli::quoted(cap) + " -o " + cli::quoted(cap / "deps.json"));
  CHECK(r.status == 2);
  CHECK(has(r.err, (cap / "deps.json").string() + ": is an input of this command: not written over\n"));
  CHECK(cli::slurp(cap / "deps.json") == deps);
}

TEST_CASE("a run's write error is exit 2 and leaves its output folder as it was", "[output_files][cli]") {
  fs::path out;
  REQUIRE(cli::run("traces/chain.json -q --no-host-stats", "of_run", out).status == 0);
  const std::string before = cli::slurp(out / "summary.json");
  const auto listing = cli::entries(out);
  // The first write and one far into the run (a background chunk of a larger trace).
  for (const char* fault : {"1", "40:EIO"}) {
    INFO(fault);
    Result r = cli::sh(std::string("NPUSIM_TEST_WRITE_FAULT=") + fault + " exec \"$NPUSIM\" run traces/pa_10k.json -q --out " +
                       cli::quoted(out));
    CHECK(r.status == 2);
    CHECK(has(r.err, "npusim: error: " + out.string() + "/"));
    CHECK(has(r.err, fault[0] == '1' ? ": cannot write: No space left on device\n" : ": cannot write: Input/output error\n"));
    CHECK(cli::slurp(out / "summary.json") == before);
    CHECK(cli::entries(out) == listing);
    CHECK(cli::entries(out.parent_path(), "." + out.filename().string()).empty());  // no staging left beside it
  }
}

TEST_CASE("the write-fault seam rejects a setting it cannot read", "[output_files][cli]") {
  Result r = cli::sh("NPUSIM_TEST_WRITE_FAULT=1:ENOSPACE exec \"$NPUSIM\" --version");
  CHECK(r.status == 128 + SIGABRT);
  CHECK(has(r.err, "NPUSIM_TEST_WRITE_FAULT=1:ENOSPACE: expected N or N:ENOSPC|EIO|EFBIG|EDQUOT, N >= 1"));
  r = cli::sh("NPUSIM_TEST_WRITE_FAULT=1 exec \"$NPUSIM\" --version");
  CHECK(r.status == 0);  // no write through the output layer: nothing fails
}

TEST_CASE("WholeFile: a folder is refused, an uncommitted file leaves the target as it was", "[output_files][writers]") {
  using npusim::record::WholeFile;
  const fs::path d = cli::scratch("of_whole");
  fs::create_directories(d / "sub");
  CHECK_THROWS_WITH(WholeFile((d / "sub").string()), (d / "sub").string() + ": cannot create: Is a directory");
  CHECK_THROWS_WITH(WholeFile((d / "no" / "x").string()),
                    (d / "no" / "x").string() + ": cannot create: No such file or directory");
  cli::write_file(d / "a", kOld);
  cli::write_file(d / "b", kOld);
  {
    WholeFile f((d / "a").string());
    f.raw("new");
    CHECK(cli::entries(d).size() == 4);  // a, b, sub and the temporary
  }  // dropped: an input error or an exception on the way
  CHECK(cli::slurp(d / "a") == kOld);
  CHECK(cli::entries(d) == std::vector<std::string>{"a", "b", "sub"});
  {
    // Two outputs of one command: the second's write error leaves both.
    WholeFile a((d / "a").string()), b((d / "b").string());
    a.raw("new a");
    b.raw("new b");
    npusim::record::set_write_fault(2, EIO);
    CHECK_THROWS_WITH(WholeFile::commit_together({&a, &b}), (d / "b").string() + ": cannot write: Input/output error");
    npusim::record::set_write_fault(0, 0);
  }
  CHECK(cli::slurp(d / "a") == kOld);
  CHECK(cli::slurp(d / "b") == kOld);
  CHECK(cli::entries(d) == std::vector<std::string>{"a", "b", "sub"});
  {
    WholeFile a((d / "a").string()), b((d / "b").string());
    a.raw("new a");
    b.raw("new b");
    WholeFile::commit_together({&a, &b});
  }
  CHECK(cli::slurp(d / "a") == "new a");
  CHECK(cli::slurp(d / "b") == "new b");
  CHECK(cli::entries(d) == std::vector<std::string>{"a", "b", "sub"});
}
