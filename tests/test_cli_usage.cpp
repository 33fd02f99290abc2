// Command-line conventions (docs/outputs.md, "The command line"): usage when
// run bare, "did you mean" for mistyped commands and options, every message
// prefixed "npusim: error:", and the static limits `check` reports (a folder
// given as a trace: test_hardening.cpp).
#include "tests/catch.h"

#include "sim/config/suggest.h"
#include "tests/cli_support.h"

using cli::has;

using cli::Result;
using npusim::config::closest;
using npusim::config::edit_distance;

TEST_CASE("suggest: edit distance counts inserts, deletes, substitutions and swaps of neighbours", "[cli]") {
  CHECK(edit_distance("run", "run") == 0);
  CHECK(edit_distance("rn", "run") == 1);          // insert
  CHECK(edit_distance("runn", "run") == 1);        // delete
  CHECK(edit_distance("rum", "run") == 1);         // substitute
  CHECK(edit_distance("--platfrom", "--platform") == 1);  // swap
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("suggest: the closest candidate within one edit per three letters, or the one a word starts", "[cli]") {
  const std::vector<std::string> cmds = {"run", "check", "record", "import", "compare", "scope-stats", "barrier-cost"};
  CHECK(closest("rn", cmds) == "run");
  CHECK(closest("chekc", cmds) == "check");
  CHECK(closest("compre", cmds) == "compare");
  CHECK(closest("frobnicate", cmds).empty());
  CHECK(closest("x", cmds).empty());  // two edits from "run": more than a one-letter word allows
  // Dashes do not count: "--ring-hep" has 8 letters, two edits allowed.
  const std::vector<std::string> opts = {"--ring-heap", "--ring-task-window", "--swimlane-level", "--seed"};
  CHECK(closest("--ring-hep", opts) == "--ring-heap");
  CHECK(closest("--rnig-heep", opts) == "--ring-heap");  // a swap and a substitution
  CHECK(closest("--swimlane", opts) == "--swimlane-level");  // the start of exactly one
  CHECK(closest("--ring", opts).empty());                   // the start of two
  CHECK(closest("--se", opts).empty());                     // too short to be a start
}

TEST_CASE("run bare, npusim prints its usage and exits 2", "[cli]") {
  Result r = cli::npusim("");
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(has(r.err, "Usage: npusim [OPTIONS] SUBCOMMAND"));
  for (const char* cmd : {"run", "check", "record", "import", "compare", "scope-stats", "barrier-cost"}) {
    INFO(cmd);
    CHECK(has(r.err, std::string("  ") + cmd + " "));
  }
}

TEST_CASE("mistyped commands and options get the closest one, and every message is npusim's", "[cli]") {
  const char* kCommands = " (commands: run, check, record, import, compare, scope-stats, report, barrier-cost, worker, sweep)\n";
  struct Case {
    const char* args;
    std::string err;
  } cases[] = {
      {"rn traces/chain.json", std::string("npusim: error: unknown command 'rn'; did you mean 'run'?") + kCommands +
                                   "npusim: see 'npusim --help'\n"},
      {"frobnicate", std::string("npusim: error: unknown command 'frobnicate'") + kCommands +
                         "npusim: see 'npusim --help'\n"},
      {"--verison", "npusim: error: unknown option '--verison'; did you mean '--version'?\n"
                    "npusim: see 'npusim --help'\n"},
      {"--frob", "npusim: error: unknown option '--frob'\nnpusim: see 'npusim --help'\n"},
      {"run traces/chain.json --platfrom tiny",
       "npusim: error: unknown option '--platfrom' for 'npusim run'; did you mean '--platform'?\n"
       "npusim: see 'npusim run --help'\n"},
      {"run traces/chain.json --swimlane 2",
       "npusim: error: unknown option '--swimlane' for 'npusim run'; did you mean '--swimlane-level'?\n"
       "npusim: see 'npusim run --help'\n"},
      {"check -q traces/chain.json --plat=tiny",
       "npusim: error: unknown option '--plat' for 'npusim check'; did you mean '--platform'?\n"
       "npusim: see 'npusim check --help'\n"},
      {"run traces/chain.json --frobnicate",
       "npusim: error: unknown option '--frobnicate' for 'npusim run'\nnpusim: see 'npusim run --help'\n"},
      {"run traces/chain.json extra",
       "npusim: error: unexpected argument 'extra' for 'npusim run'\nnpusim: see 'npusim run --help'\n"},
      {"run", "npusim: error: TRACE is required\nnpusim: see 'npusim run --help'\n"},
      {"compare a", "npusim: error: CURRENT is required\nnpusim: see 'npusim compare --help'\n"},
      {"run --swimlane-level 7 traces/chain.json",
       "npusim: error: --swimlane-level: Value 7 not in range 0 to 4\nnpusim: see 'npusim run --help'\n"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    Result r = cli::npusim(c.args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == c.err);
  }
}

// check reports the static limits the run would hit, with the device's
// outcome: pto_orchestrator.cpp PTO2OrchestratorState::begin_scope (the
// scope stack's assert) and submit_task (require_sync_start block_num >
// limit, REQUIRE_SYNC_START_INVALID).
TEST_CASE("check reports the scope depth and the sync-start limit a run would hit", "[cli]") {
  Result r = cli::npusim("check traces/fatal/scope_overflow.json");
  CHECK(r.status == 1);
  CHECK(r.out == "npusim check: scope_overflow: failed (0 submits, 1 kernels, 1 error(s), 0 warning(s))\n");
  CHECK(has(r.err, ": error [ScopeDepth]: scope nesting reaches 64 levels, more than the 63 the runtime's scope "
                   "stack holds besides its root scope: begin_scope asserts (\"Scope stack overflow\"), the run fails "
                   "with host code 507018\n"));
  r = cli::npusim("check traces/fatal/require_sync_start_invalid.json");
  CHECK(r.status == 1);
  CHECK(r.err == "npusim check: traces/fatal/require_sync_start_invalid.json: at /program/0: error [SyncStartLimit]: "
                 "kernel K is launched with sync_start and block_num=1000, more than the 48 AIV cores its blocks must "
                 "hold at once: the runtime refuses the submit with REQUIRE_SYNC_START_INVALID "
                 "(\"require_sync_start block_num=1000 > limit=48 (deadlock guaranteed)\")\n");
  // One block below the limit passes; at the limit too (tiny: 4 AIV cores).
  for (int blocks : {4, 5}) {
    const auto dir = cli::scratch("sync_limit_" + std::to_string(blocks));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "t.json") << R"({"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "aiv",
        "duration": {"ns": 100}}}, "program": [{"op": "submit", "kernel": "K", "args": [], "sync_start": true,
        "block_num": )" << blocks << "}]}";
    r = cli::npusim("check '" + (dir / "t.json").string() + "' --platform tiny -q");
    INFO(r.err);
    CHECK(r.status == (blocks == 4 ? 0 : 1));
    CHECK(has(r.err, "[SyncStartLimit]") == (blocks == 5));
  }
}
