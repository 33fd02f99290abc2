// The program interpreter (sim/trace/trace.h, make_interpreter): the stream of
// orchestration ops for small programs, run-time errors, and its speed.
#include "tests/catch.h"

#include <sstream>

#include "sim/trace/trace.h"

using namespace npusim;
using trace::Trace;

namespace {

const char* kKernels = R"({
  "K":  {"func_id": 0, "core": "aiv", "duration": {"ns": 100}},
  "SY": {"func_id": 1, "core": "aiv", "body": [
          {"syncall": {"mode": "soft", "workspace_arg": 0, "used_cores": 2}}]}})";

const char* kTensors = R"({
  "a":    {"shape": [256, 128], "dtype": "fp32"},
  "gate": {"shape": [2, 3], "dtype": "int32", "data": [1, 2, 3, 4, 5, 6]},
  "cnt":  {"shape": [4], "dtype": "uint32", "fill": 7}})";

Trace load_program(const std::string& program) {
  return trace::parse_trace(R"({"npusim_trace": 1, "name": "p", "kernels": )" + std::string(kKernels) +
                                R"(, "tensors": )" + kTensors + R"(, "program": )" + program + "}",
                            "p.json", "p");
}

// A stand-in for the orchestrator: numbers tasks per ring, gives OUTPUT args
// fresh buffers, answers reads from the data store, and prints each op.
struct Driver {
  Trace trace;
  DataStore data;
  std::unique_ptr<OpSource> src;
  int depth = 0;
  std::uint64_t next_local[4] = {0, 0, 0, 0};
  trace::DryRunOutputs outputs{data};  // each OUTPUT arg becomes a fresh buffer owned by its task

  explicit Driver(const std::string& program) : trace(load_program(program)), src(trace::make_interpreter(trace, data)) {}

  std::string tensor(const Tensor& t) const {
    std::string name = data.name(t.buffer);
    std::ostringstream s;
    s << (name.empty() ? "buf" + std::to_string(t.buffer) : name);
    if (!t.is_whole()) {
      s << "(";
      for (int d = 0; d < t.ndims; ++d) s << (d ? "," : "") << t.offset[d];
      s << ")[";
      for (int d = 0; d < t.ndims; ++d) s << (d ? "x" : "") << t.shape[d];
      s << "]";
    }
    return s.str();
  }
  std::string arg(const SubmitArg& a) const {
    static const char* tags[] = {"in", "out", "inout", "out_existing", "no_dep"};
    std::string s = std::string(" ") + tags[static_cast<int>(a.tag)] + (a.manual_dep ? "!" : "") + ":";
    if (a.tag != ArgTag::Output) return s + tensor(a.tensor);
    s += dtype_trace_name(a.tensor.dtype);
    for (int d = 0; d < a.tensor.ndims; ++d) s += (d ? "x" : "[") + std::to_string(a.tensor.shape[d]);
    return s + "]";
  }

  std::string step(OrchOp& op) {
    std::ostringstream s;
    switch (op.kind) {
      case OrchOp::Kind::ScopeBegin:
        ++depth;
        return std::string("scope ") + (op.mode == ScopeMode::Manual ? "manual " : "auto ") + op.site;
      case OrchOp::Kind::ScopeEnd:
        --depth;
        return "end";
      case OrchOp::Kind::Read: {
        std::int64_t v = data.get(op.read_tensor.buffer, op.read_element);
        src->deliver_value(v);
        return "read " + tensor(op.read_tensor) + "#" + std::to_string(op.read_element) + "=" + std::to_string(v);
      }
      default:
        break;
    }
    int ring = std::min(depth, 3);
    TaskId id = make_task_id(ring, next_local[ring]++);
    const std::vector<SubmitArg>& args = op.kind == OrchOp::Kind::Alloc ? op.alloc_outputs : op.submit.args;
    s << task_display(id) << " ";
    if (op.kind == OrchOp::Kind::Alloc) s << "alloc";
    if (op.kind == OrchOp::Kind::Dummy) s << "dummy";
    if (op.kind == OrchOp::Kind::Submit) s << op.submit.kernel->name;
    for (const SubmitArg& a : args) s << arg(a);
    if (op.kind != OrchOp::Kind::Alloc) {
      const SubmitRequest& r = op.submit;
      if (r.block_num != 1) s << " blocks=" << r.block_num;
      for (TaskId d : r.deps) s << " dep=" << task_display(d);
      if (r.early_resolve) s << " early";
      if (r.sync_start) s << " sync";
      if (r.predicate)
        s << " pred=" << tensor(r.predicate->tensor) << "#" << r.predicate->element << "/"
          << static_cast<int>(r.predicate->cmp) << "/" << r.predicate->value;
      for (const WriteSpec& w : r.writes) s << " write=" << w.arg << "#" << w.element << ":" << w.value;
      if (!r.site.empty()) s << " @" << r.site;
    }
    src->deliver_task(id, outputs.make(args, id));
    return s.str();
  }

  std::vector<std::string> run() {
    std::vector<std::string> out;
    OrchOp op;
    while (src->next(op)) out.push_back(step(op));
    return out;
  }
};

using Ops = std::vector<std::string>;

// "path|message" of the InputError running `program` raises.
std::string run_error(const std::string& program) {
  Driver d(program);
  try {
    d.run();
  } catch (const InputError& e) {
    CHECK(e.file() == "p.json");
    return e.path() + "|" + e.message();
  }
  return "no error";
}

}  // namespace

TEST_CASE("interpreter: external tensors are registered in the data store") {
  Trace t = load_program("[]");
  DataStore data;
  auto src = trace::make_interpreter(t, data);
  OrchOp op;
  CHECK_FALSE(src->next(op));
  CHECK_FALSE(src->next(op));
  CHECK(data.name(0) == "a");
  CHECK(data.name(1) == "gate");
  CHECK(data.get(1, 4) == 5);
  CHECK(data.get(2, 3) == 7);
}

TEST_CASE("interpreter: scopes, loops and inline views") {
  Driver d(R"([
    {"op": "scope", "body": [
      {"op": "for", "var": "i", "to": 2, "body": [
        {"op": "submit", "kernel": "K", "site": "mul", "args": [
          {"in": "a", "offset": ["i*64", 0], "shape": [64, 128]},
          {"out_existing": "a", "offset": ["i*64+128", 0]}]}]},
      {"op": "scope", "mode": "manual", "body": [
        {"op": "scope", "mode": "manual", "site": "deep", "body": [
          {"op": "scope", "mode": "manual", "body": [
            {"op": "dummy", "args": [{"no_dep": "a", "shape": [1, 1], "manual_dep": true}]}]}]}]}]},
    {"op": "submit", "kernel": "K", "args": [{"inout": "a"}]}])");
  CHECK(d.run() == Ops{"scope auto p:1",
                       "r1t0 K in:a(0,0)[64x128] out_existing:a(128,0)[128x128] @mul",
                       "r1t1 K in:a(64,0)[64x128] out_existing:a(192,0)[64x128] @mul",
                       "scope manual p:2",
                       "scope manual deep",
                       "scope manual p:4",
                       "r3t0 dummy no_dep!:a(0,0)[1x1]",
                       "end", "end", "end", "end",
                       "t0 K inout:a"});
}

TEST_CASE("interpreter: loop bounds, negative steps and lets") {
  Driver d(R"([
    {"op": "let", "var": "n", "value": 3},
    {"op": "for", "var": "i", "from": "n", "to": 0, "step": -1, "body": [
      {"op": "let", "var": "n", "value": "n+10"},
      {"op": "submit", "kernel": "K", "block_num": "i", "args": [{"in": "a", "offset": ["n", 0], "shape": [1, 1]}]}]},
    {"op": "for", "var": "j", "from": 5, "to": 5, "body": [{"op": "submit", "kernel": "K"}]},
    {"op": "for", "var": "j", "from": 0, "to": 5, "step": 2, "body": [
      {"op": "for", "var": "k", "to": "j", "body": [{"op": "submit", "kernel": "K", "block_num": "j*10+k+1"}]}]}])");
  CHECK(d.run() == Ops{"t0 K in:a(13,0)[1x1] blocks=3", "t1 K in:a(23,0)[1x1] blocks=2",
                       "t2 K in:a(33,0)[1x1]",
                       "t3 K blocks=21", "t4 K blocks=22",
                       "t5 K blocks=41", "t6 K blocks=42", "t7 K blocks=43", "t8 K blocks=44"});
}

TEST_CASE("interpreter: views compose onto their parent view") {
  Driver d(R"([
    {"op": "view", "bind": "v", "of": "a", "offset": [64, 0], "shape": [128, 128]},
    {"op": "view", "bind": "w", "of": "v", "offset": [32, 64]},
    {"op": "submit", "kernel": "K", "args": [{"in": "w"}, {"in": "w", "offset": [1, 2], "shape": [3, 4]}, {"in": "v", "shape": [1, 1]}]},
    {"op": "view", "bind": "v", "of": "v", "shape": [2, 2]},
    {"op": "submit", "kernel": "K", "args": [{"inout": "v"}]}])");
  CHECK(d.run() == Ops{"t0 K in:a(96,64)[96x64] in:a(97,66)[3x4] in:a(64,0)[1x1]", "t1 K inout:a(64,0)[2x2]"});
}

TEST_CASE("interpreter: ids, deps, outputs and allocs") {
  Driver d(R"([
    {"op": "alloc", "id": "al", "outputs": [{"bind": "x", "shape": [16], "dtype": "int32"},
                                           {"bind": "y", "shape": ["2*2", 2], "dtype": "fp16"}]},
    {"op": "submit", "kernel": "K", "id": "t", "args": [{"in": "x"}, {"out": "o", "shape": [8], "dtype": "bf16"},
                                                      {"inout": "y", "offset": [1, 0]}, {"out": "p", "shape": [1], "dtype": "int64"}]},
    {"op": "scope", "body": [
      {"op": "submit", "kernel": "K", "id": "u", "deps": ["t", "al"], "early_resolve": true, "sync_start": true,
       "args": [{"in": "o", "offset": [4]}, {"in": "p"}]},
      {"op": "dummy", "deps": ["u"], "id": "t"}]},
    {"op": "dummy", "deps": ["t", "t"]}])");
  CHECK(d.run() == Ops{"t0 alloc out:int32[16] out:fp16[4x2]",
                       "t1 K in:buf3 out:bf16[8] inout:buf4(1,0)[3x2] out:int64[1]",
                       "scope auto p:1",
                       "r1t0 K in:buf5(4)[4] in:buf6 dep=t1 dep=t0 early sync",
                       "r1t1 dummy dep=r1t0",
                       "end",
                       "t2 dummy dep=r1t1 dep=r1t1"});
}

TEST_CASE("interpreter: predicates and writes give linear buffer elements") {
  Driver d(R"([
    {"op": "view", "bind": "g", "of": "gate", "offset": [1, 1]},
    {"op": "let", "var": "k", "value": 2},
    {"op": "submit", "kernel": "K", "predicate": {"tensor": "g", "index": [0, 1], "cmp": ">=", "value": "k*3"},
     "args": [{"inout": "gate", "offset": [0, 1], "shape": [2, 2]}, {"out": "o", "shape": [4, 4], "dtype": "int32"}],
     "writes": [{"arg": 0, "index": [1, 1], "value": "k+1"}, {"arg": 1, "index": [3, "k"], "value": -1}]}])");
  CHECK(d.run() == Ops{"t0 K inout:gate(0,1)[2x2] out:int32[4x4] pred=gate(1,1)[1x2]#5/4/6 write=0#5:3 write=1#14:-1"});
}

TEST_CASE("interpreter: reads deliver a value that later ops use") {
  Driver d(R"([
    {"op": "read", "tensor": "gate", "index": [1, 2], "bind": "v"},
    {"op": "read", "tensor": "cnt", "index": ["v-4"]},
    {"op": "view", "bind": "g", "of": "gate", "offset": [1, 0]},
    {"op": "read", "tensor": "g", "index": [0, 1], "bind": "w"},
    {"op": "for", "var": "i", "to": "v-w", "body": [{"op": "submit", "kernel": "K", "block_num": "v*w+i"}]}])");
  CHECK(d.run() == Ops{"read gate#5=6", "read cnt#2=7", "read gate(1,0)[1x3]#4=5", "t0 K blocks=30"});
}

TEST_CASE("interpreter: run-time view and index errors") {
  CHECK(run_error(R"([{"op": "for", "var": "i", "to": 4, "body": [
                       {"op": "submit", "kernel": "K", "args": [{"in": "a", "offset": ["i*64", 0], "shape": [128, 128]}]}]}])") ==
        "/program/0/body/0/args/0|view out of bounds in dim 0: offset 192 + shape 128 > 256");
  CHECK(run_error(R"([{"op": "view", "bind": "v", "of": "a", "offset": [0, 100]},
                      {"op": "view", "bind": "w", "of": "v", "offset": [0, 28]}])") ==
        "/program/1|view out of bounds in dim 1: offset 28 >= 28");
  CHECK(run_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": "a", "offset": [0]}]}])") ==
        "/program/0/args/0|offset has 1 entry but the tensor has rank 2");
  CHECK(run_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": "a", "shape": [1, 1, 1]}]}])") ==
        "/program/0/args/0|shape has 3 entries but the tensor has rank 2");
  CHECK(run_error(R"([{"op": "let", "var": "n", "value": -3},
                      {"op": "submit", "kernel": "K", "args": [{"in": "a", "offset": ["n", 0]}]}])") ==
        "/program/1/args/0/offset/0|offset must be >= 0, got -3");
  CHECK(run_error(R"([{"op": "read", "tensor": "gate", "index": [0, 3]}])") ==
        "/program/0/index/1|index out of bounds in dim 1: 3 >= 3");
  CHECK(run_error(R"([{"op": "read", "tensor": "gate", "index": [0]}])") ==
        "/program/0/index|index has 1 entry but the tensor has rank 2");
  CHECK(run_error(R"([{"op": "submit", "kernel": "K", "args": [{"inout": "gate", "shape": [1, 1]}],
                      "writes": [{"arg": 0, "index": [0, 1], "value": 1}]}])") ==
        "/program/0/writes/0/index/1|index out of bounds in dim 1: 1 >= 1");
  CHECK(run_error(R"([{"op": "let", "var": "n", "value": 0},
                      {"op": "submit", "kernel": "K", "args": [{"out": "o", "shape": ["n"], "dtype": "fp32"}]}])") ==
        "/program/1/args/0/shape/0|shape must be >= 1, got 0");
}

TEST_CASE("interpreter: run-time variable errors") {
  CHECK(run_error(R"([{"op": "for", "var": "i", "to": 0, "body": []}, {"op": "let", "var": "x", "value": "i"}])") ==
        "/program/1/value|variable 'i' is not bound");
  CHECK(run_error(R"([{"op": "let", "var": "x", "value": "a+1"}])") ==
        "/program/0/value|variable 'a' is a tensor, not an integer");
  CHECK(run_error(R"([{"op": "let", "var": "a", "value": 1}, {"op": "submit", "kernel": "K", "args": [{"in": "a"}]}])") ==
        "/program/1/args/0/in|variable 'a' is an integer, not a tensor");
  CHECK(run_error(R"([{"op": "submit", "kernel": "K", "deps": ["a"]}])") ==
        "/program/0/deps/0|variable 'a' is a tensor, not a task");
  CHECK(run_error(R"([{"op": "submit", "kernel": "K", "id": "t"}, {"op": "view", "bind": "v", "of": "t"}])") ==
        "/program/1/of|variable 't' is a task, not a tensor");
  CHECK(run_error(R"([{"op": "for", "var": "i", "to": 0, "body": [{"op": "submit", "kernel": "K", "id": "t"}]},
                      {"op": "dummy", "deps": ["t"]}])") ==
        "/program/1/deps/0|variable 't' is not bound");
}

TEST_CASE("interpreter: run-time value errors") {
  CHECK(run_error(R"([{"op": "let", "var": "z", "value": 0}, {"op": "let", "var": "x", "value": "4/z"}])") ==
        "/program/1/value|division by zero in '4/z'");
  CHECK(run_error(R"([{"op": "let", "var": "z", "value": 0},
                      {"op": "for", "var": "i", "to": 3, "step": "z", "body": []}])") ==
        "/program/1/step|step must not be 0");
  CHECK(run_error(R"([{"op": "let", "var": "n", "value": 40000}, {"op": "submit", "kernel": "K", "block_num": "n"}])") ==
        "/program/1/block_num|block_num must be in [1, 32767], got 40000");
  CHECK(run_error(R"([{"op": "let", "var": "n", "value": 9223372036854775807}, {"op": "let", "var": "m", "value": "n*2"}])") ==
        "/program/1/value|integer overflow in 'n*2'");
  CHECK(run_error(R"([{"op": "submit", "kernel": "K", "predicate": {"tensor": "cnt", "index": [0], "cmp": "==", "value": 1}}])") ==
        "/program/0/predicate/tensor|predicate operand must be a signed integer tensor (int8, int16, int32 or int64), "
        "got uint32");
  CHECK(run_error(R"([{"op": "submit", "kernel": "SY", "args": [{"inout": "gate"}]}])") ==
        "/program/0/args/0|syncall workspace argument 0 must be an int32 tensor of at least 16 elements, got int32 "
        "with 6 elements");
  CHECK(run_error(R"([{"op": "submit", "kernel": "SY", "args": [{"out": "w", "shape": [16], "dtype": "int32"}]}])") ==
        "no error");
  CHECK(run_error(R"([{"op": "let", "var": "n", "value": 1048576},
                      {"op": "submit", "kernel": "K", "args": [{"out": "o", "shape": ["n", "n", 2], "dtype": "fp32"}]}])") ==
        "/program/1/args/0|tensor too large (more than 1099511627776 elements)");
}

TEST_CASE("interpreter: loop iterations are limited per run") {
  // A loop's whole trip count is charged when it starts.
  CHECK(run_error(R"([{"op": "for", "var": "i", "to": 9223372036854775807, "body": []}])") ==
        "/program/0|this loop runs 9223372036854775807 iterations, more than the limit of 4294967296 loop iterations "
        "per run (all loops together)");
  CHECK(run_error(R"([{"op": "for", "var": "i", "from": -9223372036854775808, "to": 9223372036854775807, "step": 3,
                      "body": []}])") ==
        "/program/0|this loop runs 6148914691236517205 iterations, more than the limit of 4294967296 loop "
        "iterations per run (all loops together)");
  CHECK(run_error(R"([{"op": "for", "var": "i", "from": 10, "to": -10, "step": -7, "body": []}])") == "no error");
  // Nested loops with empty bodies: the budget is for all loops together.
  Trace t = load_program(R"([{"op": "for", "var": "i", "to": 10, "body": [
                       {"op": "for", "var": "j", "to": 9, "body": [{"op": "let", "var": "x", "value": "i*j"}]}]}])");
  DataStore data;
  OrchOp op;
  CHECK_FALSE(trace::make_interpreter(t, data, 100)->next(op));  // 10 + 10*9 = 100
  try {
    trace::make_interpreter(t, data, 99)->next(op);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.path() == "/program/0/body/0");
    CHECK(e.message() ==
          "this loop runs 9 iterations, more than the 8 left of the limit of 99 loop iterations per run (all loops "
          "together)");
  }
  // Zero-trip loops cost nothing.
  Trace z = load_program(R"([{"op": "for", "var": "i", "to": 0, "body": []}, {"op": "for", "var": "i", "from": 5, "to": 5, "body": []}])");
  CHECK_FALSE(trace::make_interpreter(z, data, 0)->next(op));
}

// The interpreter refills a submit's argument only when what it depends on
// changed since the op's last submit (its variable, for a view with constant
// fields; nothing, for an OUTPUT of constant extents): each op's arguments
// still follow their variables from one iteration to the next, and a caller
// that passes another OrchOp gets every argument filled.
TEST_CASE("interpreter: a loop's arguments follow their variables") {
  const char* program = R"([{"op": "for", "var": "i", "to": 3, "body": [
      {"op": "submit", "kernel": "K", "args": [{"in": "a", "offset": [0, 64], "shape": [8, 64]},
                                              {"out": "o", "shape": [4], "dtype": "fp32"}]},
      {"op": "submit", "kernel": "K", "args": [{"in": "o"}, {"inout": "a"}]},
      {"op": "view", "bind": "r", "of": "a", "offset": ["i", 0], "shape": [1, 128]},
      {"op": "submit", "kernel": "K", "args": [{"in": "r"}]}]}])";
  const Ops expected = {"t0 K in:a(0,64)[8x64] out:fp32[4]", "t1 K in:buf3 inout:a", "t2 K in:a(0,0)[1x128]",
                        "t3 K in:a(0,64)[8x64] out:fp32[4]", "t4 K in:buf4 inout:a", "t5 K in:a(1,0)[1x128]",
                        "t6 K in:a(0,64)[8x64] out:fp32[4]", "t7 K in:buf5 inout:a", "t8 K in:a(2,0)[1x128]"};
  Driver d(program);
  CHECK(d.run() == expected);
  Driver e(program);  // a new OrchOp for every op
  Ops out;
  for (;;) {
    OrchOp op;
    if (!e.src->next(op)) break;
    out.push_back(e.step(op));
  }
  CHECK(out == expected);
}

TEST_CASE("interpreter: a scope in a loop has its site in every op the caller passes") {
  // The site is written only where the op does not hold it already: a new
  // OrchOp each time (here a local of the loop, often at the old one's
  // address) starts with none, so each ScopeBegin still carries it.
  Driver e(R"([{"op": "for", "var": "i", "to": 3, "body": [
      {"op": "scope", "site": "orch.cpp:12", "body": [{"op": "submit", "kernel": "K"}]}]}])");
  Ops out;
  for (;;) {
    OrchOp op;
    if (!e.src->next(op)) break;
    out.push_back(e.step(op));
  }
  REQUIRE(out.size() == 9);
  for (std::size_t k = 0; k < 9; k += 3) {
    CHECK(out[k] == "scope auto orch.cpp:12");
    CHECK(out[k + 2] == "end");
  }
}

TEST_CASE("interpreter: results must be delivered before the next op") {
  Trace t = load_program(R"([{"op": "submit", "kernel": "K"}, {"op": "read", "tensor": "gate", "index": [0, 0]},
                     {"op": "submit", "kernel": "K", "args": [{"out": "o", "shape": [1], "dtype": "fp32"}]}])");
  DataStore data;
  auto src = trace::make_interpreter(t, data);
  OrchOp op;
  CHECK_THROWS_AS(src->deliver_value(1), std::logic_error);
  REQUIRE(src->next(op));
  CHECK_THROWS_AS(src->next(op), std::logic_error);
  src->deliver_task(make_task_id(0, 0), {});
  REQUIRE(src->next(op));
  CHECK(op.kind == OrchOp::Kind::Read);
  CHECK_THROWS_AS(src->deliver_task(0, {}), std::logic_error);
  src->deliver_value(1);
  REQUIRE(src->next(op));
  CHECK_THROWS_AS(src->deliver_task(make_task_id(0, 1), {}), std::logic_error);  // one output expected
}

TEST_CASE("interpreter: a million submits stream at constant memory") {
  // Speed is a benchmark's business (tools/bench.sh), not a test's: what is
  // checked here is that nothing grows per submit.
  Trace t = load_program(R"([{"op": "scope", "body": [
    {"op": "for", "var": "i", "to": 1000000, "body": [
      {"op": "submit", "kernel": "K", "id": "prev", "args": [
        {"in": "a", "offset": ["i%4*64", 0], "shape": [64, 128]}, {"out": "o", "shape": [64], "dtype": "fp32"}]}]}]}])");
  DataStore data;
  auto src = trace::make_interpreter(t, data);
  const std::int32_t buffers_before = data.new_buffer("probe");
  OrchOp op;
  std::vector<Tensor> outs(1);
  std::uint64_t n = 0, scopes = 0, bad_offsets = 0;
  const SubmitArg* args_before = nullptr;
  while (src->next(op)) {
    if (op.kind != OrchOp::Kind::Submit) {
      ++scopes;
      continue;
    }
    if (n == 1) args_before = op.submit.args.data();
    bad_offsets += op.submit.args[0].tensor.offset[0] != static_cast<std::int64_t>(n % 4 * 64);
    outs[0] = op.submit.args[1].tensor;
    src->deliver_task(make_task_id(1, n++), outs);
  }
  CHECK(n == 1000000);
  CHECK(bad_offsets == 0);                      // each view evaluated with its own i
  CHECK(scopes == 2);                           // the scope's begin and end, nothing else
  CHECK(op.submit.args.data() == args_before);  // the op's storage is reused
  CHECK(data.new_buffer("probe") == buffers_before + 1);  // the interpreter made no buffer
}
