// `check` and `run` agree (docs/testing.md, "check and run agree"): both
// take the program's operations through one evaluator of the static rules
// (sim/diagnose/checks.h StaticRules), and check's dry run answers a read as
// the device does once the tensor's producers are done, so the two can only
// disagree where check says it cannot know (ReadValueUnknown). Each case is
// a pair of small traces; each failed before the evaluator was shared:
// check answered reads without the kernels' declared writes (both
// directions) and passed a read under host_build_graph and a peer phase on
// one chip, which run refuses.
#include "tests/catch.h"

#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using cli::has;

// A trace in this test's scratch folder.
fs::path trace_file(const std::string& name, const std::string& text) {
  const fs::path p = cli::scratch_root() / "check_agrees" / (name + ".json");
  cli::write_file(p, text);
  return p;
}

// A kernel W writes `value` to gate[0] (initially `initial`) through an
// argument tagged `tag`; the program reads gate[0] into n and reports a
// fatal n times.
std::string gate_trace(const std::string& name, int initial, int value, const std::string& tag = "out_existing") {
  return R"({"npusim_trace": 1, "name": ")" + name + R"(",
    "kernels": {"W": {"func_id": 0, "core": "aiv", "duration": {"ns": 5000}}},
    "tensors": {"gate": {"shape": [1], "dtype": "int32", "data": [)" + std::to_string(initial) + R"(]}},
    "program": [
      {"op": "submit", "kernel": "W", "args": [{")" + tag + R"(": "gate"}],
       "writes": [{"arg": 0, "index": [0], "value": )" + std::to_string(value) + R"(}]},
      {"op": "read", "tensor": "gate", "index": [0], "bind": "n"},
      {"op": "for", "var": "i", "to": "n", "body": [{"op": "fatal", "code": 7, "message": "gate open"}]}]})";
}

struct Both {
  cli::Result check, run;
};

Both check_and_run(const fs::path& t, const std::string& name) {
  Both b;
  b.check = cli::npusim("check '" + t.string() + "'");
  fs::path out;
  b.run = cli::run("'" + t.string() + "' --quiet --no-suggest", "check_agrees_out_" + name, out);
  return b;
}

}  // namespace

TEST_CASE("check fails a read whose kernel's write makes run fail", "[check][agree]") {
  // gate starts 0; W writes 1 before the read: the run reports the fatal
  // (exit 1), so check must fail too (it answered 0 and passed).
  const Both b = check_and_run(trace_file("open_by_kernel", gate_trace("open_by_kernel", 0, 1)), "open");
  CHECK(b.run.status == 1);
  CHECK(has(b.run.err, "FATAL(code=7): gate open"));
  CHECK(b.check.status == 1);
  CHECK(has(b.check.err, "at /program/2/body/0: error [ReportedFatal]: the program reports FATAL(code=7): gate open"));
  CHECK_FALSE(has(b.check.err, "ReadValueUnknown"));
}

TEST_CASE("check passes a read whose kernel's write makes run complete", "[check][agree]") {
  // gate starts 1; W writes 0 before the read: no fatal in the run (exit 0);
  // check answered 1 and failed.
  const Both b = check_and_run(trace_file("closed_by_kernel", gate_trace("closed_by_kernel", 1, 0)), "closed");
  CHECK(b.run.status == 0);
  CHECK(b.check.status == 0);
  CHECK(has(b.check.out, "npusim check: closed_by_kernel: ok (1 submits, 1 kernels, 0 error(s), 0 warning(s))"));
}

TEST_CASE("a predicated-off writer does not write in check either", "[check][agree]") {
  // W's predicate (gate[0] == 5) is false: the runtime skips it and applies
  // no writes (Runtime::complete_task); the read sees 0 in both.
  const std::string t = R"({"npusim_trace": 1, "name": "pred_off",
    "kernels": {"W": {"func_id": 0, "core": "aiv", "duration": {"ns": 5000}}},
    "tensors": {"gate": {"shape": [1], "dtype": "int32", "data": [0]}},
    "program": [
      {"op": "submit", "kernel": "W", "args": [{"inout": "gate"}], "predicate": {"tensor": "gate", "index": [0], "cmp": "==", "value": 5},
       "writes": [{"arg": 0, "index": [0], "value": 1}]},
      {"op": "read", "tensor": "gate", "index": [0], "bind": "n"},
      {"op": "for", "var": "i", "to": "n", "body": [{"op": "fatal", "code": 7, "message": "gate open"}]}]})";
  const Both b = check_and_run(trace_file("pred_off", t), "pred_off");
  CHECK(b.run.status == 0);
  CHECK(b.check.status == 0);
}

TEST_CASE("a write run does not wait for is a read check cannot know", "[check][agree]") {
  // W writes gate[0] through an INPUT argument: get_tensor_data waits only
  // for the tensor's producers, so the run reads 0 before W ends and
  // completes. Check cannot know the order and says so, with the task.
  const Both b = check_and_run(trace_file("input_write", gate_trace("input_write", 0, 1, "in")), "input");
  CHECK(b.run.status == 0);
  CHECK(has(b.check.err,
            "at /program/1: warning [ReadValueUnknown]: check cannot know the value this read returns on the device "
            "(it answered 1, every task done in submit order): t0 (kernel W, /program/0) writes it through its INPUT "
            "argument 0, which the runtime does not record as a producer, so get_tensor_data does not wait for it"));
}

TEST_CASE("check refuses a read under host_build_graph as run does", "[check][agree]") {
  const std::string t = R"({"npusim_trace": 1, "name": "hbg_read", "run": {"runtime": "host_build_graph"},
    "kernels": {"W": {"func_id": 0, "core": "aiv", "duration": {"ns": 5000}}},
    "tensors": {"gate": {"shape": [1], "dtype": "int32", "data": [0]}},
    "program": [
      {"op": "submit", "kernel": "W", "args": [{"out_existing": "gate"}]},
      {"op": "set", "tensor": "gate", "index": [0], "value": 3}]})";
  const fs::path f = trace_file("hbg_read", t);
  const Both b = check_and_run(f, "hbg");
  const std::string msg = f.string() + ": at /program/1: set (set_tensor_data) is not available with runtime "
                          "host_build_graph: the graph is built on the host before the run";
  CHECK(b.run.status == 2);
  CHECK(has(b.run.err, msg));
  CHECK(b.check.status == 2);
  CHECK(has(b.check.err, msg));
}

TEST_CASE("check refuses a peer phase on one chip as run does", "[check][agree]") {
  const std::string t = R"({"npusim_trace": 1, "name": "peer",
    "kernels": {"P": {"func_id": 0, "core": "aiv", "body": [{"notify": {"peer_offset": 1, "flag": 0}}]}},
    "program": [{"op": "submit", "kernel": "P"}]})";
  const fs::path f = trace_file("peer", t);
  const Both b = check_and_run(f, "peer");
  const std::string msg = f.string() + ": at /kernels/P/body/0/notify: a notify on a peer chip needs an L3 dispatch "
                          "of several chips (a distributed worker, docs/workers.md); this run has one chip";
  CHECK(b.run.status == 2);
  CHECK(has(b.run.err, msg));
  CHECK(b.check.status == 2);
  CHECK(has(b.check.err, msg));
}

TEST_CASE("a launch the runtime refuses is the same finding in run and check", "[check][agree]") {
  // sync_start with 100 AIV blocks (48 AIV cores): the runtime refuses the
  // submit, so no task exists for an observer to see; the finding comes
  // from the operation, in run as in check.
  const std::string t = R"({"npusim_trace": 1, "name": "wide_sync",
    "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 1000}}},
    "program": [{"op": "submit", "kernel": "K", "block_num": 100, "sync_start": true}]})";
  const fs::path f = trace_file("wide_sync", t);
  const cli::Result c = cli::npusim("check '" + f.string() + "'");
  const cli::RunResult r = cli::run_summary("'" + f.string() + "' --quiet --no-suggest", "check_agrees_wide");
  CHECK(c.status == 1);
  CHECK(has(c.err, "error [SyncStartLimit]"));
  CHECK(r.status == 1);
  REQUIRE(r.summary.is_object());
  const json& found = r.summary["static_checks"]["findings"];
  REQUIRE(found.size() == 1);
  CHECK(found[0]["rule"] == "SyncStartLimit");
  CHECK(found[0]["path"] == "/program/0");
  CHECK(has(c.err, found[0]["message"].get<std::string>()));
}
