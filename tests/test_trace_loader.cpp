// Trace loading (sim/trace/trace.h): the accepted format and every kind of
// load-time error, each with its exact file, JSON path and message.
#include "tests/catch.h"

#include <array>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "sim/trace/trace.h"
#include "tests/test_paths.h"

using namespace npusim;
using trace::Trace;

namespace {

const std::string kTraceData = std::string(NPUSIM_TEST_DATA_DIR) + "/trace/";

// A trace document around `program` (and `kernels` / `tensors` when given).
std::string doc(const std::string& program,
                const std::string& kernels = R"({"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 100}}})",
                const std::string& tensors = R"({"a": {"shape": [256, 128], "dtype": "fp32"}})") {
  return R"({"npusim_trace": 1, "kernels": )" + kernels + R"(, "tensors": )" + tensors +
         R"(, "program": )" + program + "}";
}

Trace parse(const std::string& text) { return trace::parse_trace(text, "t.json", "t"); }

// "path|message" of the InputError parsing `text` raises.
std::string error(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    CHECK(e.file() == "t.json");
    return e.path() + "|" + e.message();
  }
  return "no error";
}
std::string program_error(const std::string& program) { return error(doc(program)); }
std::string kernel_error(const std::string& kernel) { return error(doc("[]", R"({"K": )" + kernel + "}")); }
std::string tensor_error(const std::string& tensor) { return error(doc("[]", "{}", R"({"t": )" + tensor + "}")); }

const KernelDef& kernel(const Trace& t, const std::string& name) {
  for (const auto& k : t.kernels)
    if (k->name == name) return *k;
  FAIL("no kernel " << name);
  throw 0;
}

}  // namespace

TEST_CASE("trace loader: a trace with every feature") {
  Trace t = trace::load_trace(kTraceData + "all_features.json");
  CHECK(t.file == kTraceData + "all_features.json");
  CHECK(t.name == "all_features");
  CHECK(t.run.aicpu_thread_num == 3);
  CHECK(t.run.ring_task_window == RingValues{0, 0, 256, 0});
  CHECK(t.run.seed == 5u);
  REQUIRE(t.kernels.size() == 6);
  CHECK(t.kernels[0]->name == "QK");  // document order

  const KernelDef& qk = kernel(t, "QK");
  CHECK(qk.core == CoreType::AIC);
  CHECK(qk.shape() == Shape::AIC);
  CHECK(qk.path == "/kernels/QK");
  REQUIRE(qk.lanes[kLaneAic].phases.size() == 1);
  const Phase& qp = qk.lanes[kLaneAic].phases[0];
  CHECK(qp.kind == PhaseKind::Compute);
  CHECK(qp.duration.kind == Duration::Kind::Normal);
  CHECK(qp.duration.a == 1638);
  CHECK(qp.duration.b == 178);
  CHECK(qp.path == "/kernels/QK/duration");

  const KernelDef& add = kernel(t, "ADD");
  CHECK(add.active_mask() == kMaskAiv0);
  CHECK(add.lanes[kLaneAiv0].phases[0].duration.kind == Duration::Kind::Cycles);
  CHECK(add.lanes[kLaneAiv0].phases[0].duration.a == 20000);

  const KernelDef& attn = kernel(t, "ATTN");
  CHECK(attn.func_id == 11);
  CHECK(attn.active_mask() == (kMaskAic | kMaskAiv0 | kMaskAiv1));
  CHECK(attn.lanes[kLaneAiv1].phases[0].duration.a == 276649.5);

  const KernelDef& bar = kernel(t, "BAR");
  const auto& ph = bar.lanes[kLaneAiv0].phases;
  REQUIRE(ph.size() == 8);
  CHECK(ph[1].kind == PhaseKind::Store);
  CHECK(ph[1].arg == 1);
  CHECK(ph[1].offset.text() == "block_idx*512");
  CHECK(ph[1].offset.slots() == std::vector<int>{0});
  CHECK(ph[1].bytes.const_value() == 512);
  CHECK(ph[1].path == "/kernels/BAR/body/1");
  CHECK(ph[2].kind == PhaseKind::Fence);
  CHECK(ph[3].kind == PhaseKind::Syncall);
  CHECK(ph[3].sync_mode == SyncMode::Soft);
  CHECK(ph[3].sync_core_type == CoreType::AIV);
  CHECK(ph[3].workspace_arg == 2);
  CHECK(ph[3].used_cores.slots() == std::vector<int>{1});
  CHECK(ph[4].kind == PhaseKind::CacheInvalid);
  CHECK_FALSE(ph[4].all);
  CHECK(ph[4].arg == 1);
  CHECK(ph[5].all);
  CHECK(ph[6].kind == PhaseKind::Load);
  CHECK(ph[6].cache == CacheMode::Bypass);
  CHECK(ph[6].offset.const_value() == 0);
  CHECK(ph[7].sync_mode == SyncMode::Hard);
  CHECK(ph[7].sync_core_type == CoreType::MIX);

  const KernelDef& v1 = kernel(t, "V1");  // a single AIV1 lane is normalised to AIV0
  CHECK(v1.active_mask() == kMaskAiv0);
  CHECK(v1.shape() == Shape::AIV);
  const KernelDef& pair = kernel(t, "PAIR");
  CHECK(pair.active_mask() == (kMaskAiv0 | kMaskAiv1));
  CHECK(pair.shape() == Shape::MIX);
  CHECK(t.kernel_by_func_id(8) == &pair);
  CHECK(t.kernel_by_func_id(99) == nullptr);

  REQUIRE(t.tensors.size() == 4);
  CHECK(t.tensors[0].name == "a");
  CHECK(t.tensors[0].shape == std::vector<std::int64_t>{256, 128});
  CHECK(t.tensors[1].dtype == DType::BF16);
  CHECK(t.tensors[1].fill == 3);
  CHECK(t.tensors[2].data == std::vector<std::int64_t>{1, -2});
  CHECK(t.tensors[2].path == "/tensors/gate");
  CHECK(t.program != nullptr);
}

TEST_CASE("trace loader: name defaults to the file stem, or stdin") {
  CHECK(parse(doc("[]")).name == "t");
  CHECK(parse(R"({"npusim_trace": 1, "name": "mine", "kernels": {}, "program": []})").name == "mine");

  // "-" reads file descriptor 0 (once: a FIFO works): a pipe stands in for it.
  const std::string text = R"({"npusim_trace": 1, "kernels": {}, "program": []})";
  int p[2];
  REQUIRE(::pipe(p) == 0);
  REQUIRE(::write(p[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(p[1]);
  const int saved = ::dup(0);
  ::dup2(p[0], 0);
  ::close(p[0]);
  Trace t = trace::load_trace("-");
  ::dup2(saved, 0);
  ::close(saved);
  CHECK(t.name == "stdin");
  CHECK(t.file == "<stdin>");
}

TEST_CASE("trace loader: file and JSON syntax errors") {
  try {
    trace::load_trace(kTraceData + "bad_syntax.json");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == kTraceData + "bad_syntax.json");
    CHECK(e.path() == "");
    CHECK(e.message() ==
          "invalid JSON at line 4, column 55: syntax error while parsing object key - unexpected '}'; "
          "expected string literal");
  }
  try {
    trace::load_trace(kTraceData + "missing.json");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.message() == "cannot open the trace file: No such file or directory");
  }
  CHECK(error("") ==
        "|invalid JSON at line 1, column 1: syntax error while parsing value - unexpected end of input; expected "
        "'[', '{', or a literal");
  CHECK(error("{\n  \"a\": tru\n}") ==
        "|invalid JSON at line 2, column 11: syntax error while parsing value - invalid literal; last read: "
        "'\"a\": tru<U+000A>'");
  CHECK(error(R"({"npusim_trace": 1, "kernels": {}, "program": [{"op": "let", "var": "x", "var": "y"}]})") ==
        "/program/0/var|duplicate key \"var\"");
  CHECK(error(R"({"a": [1, {"b/c": {"d": 1, "d": 2}}]})") == "/a/1/b~1c/d|duplicate key \"d\"");
}

TEST_CASE("trace loader: top-level errors") {
  CHECK(error("[]") == "|expected an object, got a list");
  CHECK(error(R"({"npusim_trace": 2, "kernels": {}, "program": []})") ==
        "/npusim_trace|expected 1 (the trace format version), got 2");
  CHECK(error(R"({"npusim_trace": true, "kernels": {}, "program": []})") ==
        "/npusim_trace|expected 1 (the trace format version), got true");
  CHECK(error(R"({"kernels": {}, "program": []})") == "|missing key \"npusim_trace\"");
  CHECK(error(R"({"npusim_trace": 1, "program": []})") == "|missing key \"kernels\"");
  CHECK(error(R"({"npusim_trace": 1, "kernels": {}})") == "|missing key \"program\"");
  CHECK(error(R"({"npusim_trace": 1, "kernels": {}, "program": [], "tensor": {}})") ==
        "/tensor|unknown key \"tensor\" (expected one of: npusim_trace, name, run, kernels, tensors, program)");
  CHECK(error(R"({"npusim_trace": 1, "name": "", "kernels": {}, "program": []})") ==
        "/name|expected a non-empty string, got \"\"");
  CHECK(error(R"({"npusim_trace": 1, "kernels": [], "program": []})") == "/kernels|expected an object, got a list");
  CHECK(error(R"({"npusim_trace": 1, "kernels": {}, "program": {}})") == "/program|expected a list, got an object");
  CHECK(error(R"({"npusim_trace": 1, "run": {"ring_heap": 1000}, "kernels": {}, "program": []})") ==
        "/run/ring_heap|ring_heap must be >= 1024 (bytes per ring), got 1000");
  // The first bad entry in the file's order is the one reported (not the first in key order).
  CHECK(error(R"({"npusim_trace": 1, "run": {"seed": -1, "ring_heap": 1000}, "kernels": {}, "program": []})") ==
        "/run/seed|seed must be a non-negative integer, got -1");
  CHECK(error(R"({"npusim_trace": 1, "x_tool": {"any": "thing"}, "kernels": {}, "program": []})") == "no error");
}

TEST_CASE("trace loader: kernel definition errors") {
  CHECK(kernel_error(R"({"func_id": 0, "core": "gpu", "duration": {"ns": 1}})") ==
        "/kernels/K/core|expected one of \"aic\", \"aiv\", \"mix\", got \"gpu\"");
  CHECK(kernel_error(R"({"func_id": 0, "duration": {"ns": 1}})") == "/kernels/K|missing key \"core\"");
  CHECK(kernel_error(R"({"core": "aiv", "duration": {"ns": 1}})") == "/kernels/K|missing key \"func_id\"");
  CHECK(kernel_error(R"({"func_id": -1, "core": "aiv", "duration": {"ns": 1}})") ==
        "/kernels/K/func_id|expected an integer in [0, 2147483647], got -1");
  CHECK(kernel_error(R"({"func_id": "0", "core": "aiv", "duration": {"ns": 1}})") ==
        "/kernels/K/func_id|expected an integer in [0, 2147483647], got \"0\"");
  CHECK(kernel_error(R"({"func_id": 0, "core": "aiv"})") ==
        "/kernels/K|expected exactly one of \"duration\" or \"body\"");
  CHECK(kernel_error(R"({"func_id": 0, "core": "aiv", "duration": {"ns": 1}, "body": []})") ==
        "/kernels/K|expected exactly one of \"duration\" or \"body\"");
  CHECK(kernel_error(R"({"func_id": 0, "core": "aic", "lanes": {}})") ==
        "/kernels/K/lanes|unknown key \"lanes\" (expected one of: func_id, core, duration, body, pipes)");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "duration": {"ns": 1}})") ==
        "/kernels/K/duration|unknown key \"duration\" (expected one of: func_id, core, lanes, cross_core_slots, pipes)");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "lanes": {}})") ==
        "/kernels/K/lanes|a mix kernel needs at least one lane (aic, aiv, aiv0 or aiv1)");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix"})") == "/kernels/K|missing key \"lanes\"");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "lanes": {"aiv": {"duration": {"ns": 1}},
                                                                "aiv1": {"duration": {"ns": 1}}}})") ==
        "/kernels/K/lanes/aiv1|\"aiv\" (both AIV lanes) cannot be combined with \"aiv1\"");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "lanes": {"aiv2": {}}})") ==
        "/kernels/K/lanes/aiv2|unknown key \"aiv2\" (expected one of: aic, aiv, aiv0, aiv1)");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "lanes": {"aic": {"duration": {"ns": 1}, "core": "aic"}}})") ==
        "/kernels/K/lanes/aic/core|unknown key \"core\" (expected one of: duration, body, func_id)");
  CHECK(error(doc("[]", R"({"A": {"func_id": 3, "core": "aiv", "duration": {"ns": 1}},
                            "B": {"func_id": 3, "core": "aic", "duration": {"ns": 1}}})")) ==
        "/kernels/B/func_id|func_id 3 is already used by kernel \"A\"");
}

TEST_CASE("trace loader: duration errors") {
  auto dur = [](const std::string& d) {
    return kernel_error(R"({"func_id": 0, "core": "aiv", "duration": )" + d + "}");
  };
  CHECK(dur(R"({"ns": 1, "cycles": 2})") ==
        R"(/kernels/K/duration|expected exactly one of {"ns": N}, {"cycles": N}, {"mean_ns": M, "sigma_ns": S} or {"ns_by_block": [N, ...]})");
  CHECK(dur("{}") ==
        R"(/kernels/K/duration|expected exactly one of {"ns": N}, {"cycles": N}, {"mean_ns": M, "sigma_ns": S} or {"ns_by_block": [N, ...]})");
  CHECK(dur(R"({"mean_ns": 10})") == "/kernels/K/duration|missing key \"sigma_ns\"");
  CHECK(dur(R"({"sigma_ns": 10})") == "/kernels/K/duration|missing key \"mean_ns\"");
  CHECK(dur(R"({"ns": -1})") == "/kernels/K/duration/ns|expected a number in [0, 3.6e12], got -1");
  CHECK(dur(R"({"ns": "5"})") == "/kernels/K/duration/ns|expected a number in [0, 3.6e12], got \"5\"");
  CHECK(dur(R"({"ns": true})") == "/kernels/K/duration/ns|expected a number in [0, 3.6e12], got true");
  CHECK(dur(R"({"us": 5})") ==
        "/kernels/K/duration/us|unknown key \"us\" (expected one of: ns, cycles, mean_ns, sigma_ns, ns_by_block)");
  CHECK(dur("5") == "/kernels/K/duration|expected an object, got 5");
}

TEST_CASE("trace loader: phase errors") {
  auto phase = [](const std::string& p) {
    return kernel_error(R"({"func_id": 0, "core": "aiv", "body": [{"compute": {"ns": 1}}, )" + p + "]}");
  };
  const std::string at = "/kernels/K/body/1";
  CHECK(phase(R"({"wait": {}})") ==
        at + "/wait|unknown key \"wait\" (expected one of: compute, load, store, fence, cacheinvalid, syncall, push, pop, notify, wait_flag, repeat, free)");
  CHECK(phase(R"({"x_note": 1})") ==
        at + "|expected a phase: an object with one of the keys compute, load, store, fence, cacheinvalid, syncall, push, pop, notify, wait_flag, repeat, free");
  CHECK(phase(R"({"fence": {}, "compute": {"ns": 1}})") ==
        at + "|a phase has exactly one key, got \"compute\" and \"fence\"");
  CHECK(phase(R"({"load": {"arg": 0}})") == at + "/load|missing key \"bytes\"");
  CHECK(phase(R"({"load": {"bytes": 8}})") == at + "/load|missing key \"arg\"");
  CHECK(phase(R"({"load": {"arg": -1, "bytes": 8}})") ==
        at + "/load/arg|expected an integer in [0, 2147483647], got -1");
  CHECK(phase(R"({"load": {"arg": 0, "bytes": -8}})") == at + "/load/bytes|bytes must be in [0, 1099511627776], got -8");
  CHECK(phase(R"({"load": {"arg": 0, "bytes": 8, "cache": "none"}})") ==
        at + "/load/cache|expected one of \"default\", \"bypass\", got \"none\"");
  CHECK(phase(R"({"store": {"arg": 0, "bytes": 8, "cache": "bypass"}})") ==
        at + "/store/cache|unknown key \"cache\" (expected one of: arg, offset, bytes, peer_offset)");
  CHECK(phase(R"({"store": {"arg": 0, "bytes": "i*8"}})") ==
        at + "/store/bytes|bad expression 'i*8': unknown name 'i' at character 1 (kernel phases may only use "
             "block_idx and block_num)");
  CHECK(phase(R"({"store": {"arg": 0, "bytes": "block_idx*"}})") ==
        at + "/store/bytes|bad expression 'block_idx*': expected a number, a name, '(' , min( or max( at "
             "character 11");
  CHECK(phase(R"({"store": {"arg": 0, "bytes": 8, "offset": true}})") ==
        at + "/store/offset|expected an integer or an expression string, got true");
  CHECK(phase(R"({"fence": {"all": true}})") == at + "/fence/all|unknown key \"all\" (expected no keys)");
  CHECK(phase(R"({"cacheinvalid": "some"})") == at + "/cacheinvalid|expected \"all\" or {\"arg\": i}, got \"some\"");
  CHECK(phase(R"({"cacheinvalid": {}})") == at + "/cacheinvalid|missing key \"arg\"");
  CHECK(phase(R"({"syncall": {"workspace_arg": 0}})") ==
        at + "/syncall/workspace_arg|\"workspace_arg\" is only allowed with mode \"soft\"");
  CHECK(phase(R"({"syncall": {"mode": "hard", "used_cores": 4}})") ==
        at + "/syncall/used_cores|\"used_cores\" is only allowed with mode \"soft\"");
  CHECK(phase(R"({"syncall": {"mode": "soft", "used_cores": 4}})") == at + "/syncall|missing key \"workspace_arg\"");
  CHECK(phase(R"({"syncall": {"mode": "soft", "workspace_arg": 0}})") == at + "/syncall|missing key \"used_cores\"");
  CHECK(phase(R"({"syncall": {"mode": "soft", "workspace_arg": 0, "used_cores": 0}})") ==
        at + "/syncall/used_cores|used_cores must be >= 1, got 0");
  CHECK(phase(R"({"syncall": {"mode": "firm"}})") ==
        at + "/syncall/mode|expected one of \"hard\", \"soft\", got \"firm\"");
  CHECK(phase(R"({"syncall": {"core_type": "cube"}})") ==
        at + "/syncall/core_type|expected one of \"aic\", \"aiv\", \"mix\", got \"cube\"");
  CHECK(phase("[]") == at + "|expected an object, got a list");
}

TEST_CASE("trace loader: external tensor errors") {
  CHECK(tensor_error(R"({"shape": [4], "dtype": "fp8"})") ==
        "/tensors/t/dtype|expected a dtype (one of: fp32, fp16, bf16, int8, int16, int32, int64, uint8, uint16, "
        "uint32, uint64, bool), got \"fp8\"");
  CHECK(tensor_error(R"({"shape": [4]})") == "/tensors/t|missing key \"dtype\"");
  CHECK(tensor_error(R"({"dtype": "fp32"})") == "/tensors/t|missing key \"shape\"");
  CHECK(tensor_error(R"({"shape": [], "dtype": "fp32"})") ==
        "/tensors/t/shape|expected a list of 1 to 5 integers, got a list");
  CHECK(tensor_error(R"({"shape": [1, 1, 1, 1, 1, 1], "dtype": "fp32"})") ==
        "/tensors/t/shape|expected a list of 1 to 5 integers, got a list");
  CHECK(tensor_error(R"({"shape": [4, 0], "dtype": "fp32"})") ==
        "/tensors/t/shape/1|expected an integer >= 1, got 0");
  CHECK(tensor_error(R"({"shape": ["n"], "dtype": "fp32"})") ==
        "/tensors/t/shape/0|expected an integer >= 1, got \"n\"");
  CHECK(tensor_error(R"({"shape": [1048576, 1048576, 2], "dtype": "fp32"})") ==
        "/tensors/t/shape|tensor too large (more than 1099511627776 elements)");
  CHECK(tensor_error(R"({"shape": [2, 2], "dtype": "int32", "data": [1, 2, 3]})") ==
        "/tensors/t/data|expected 4 values (one per element), got 3");
  CHECK(tensor_error(R"({"shape": [2], "dtype": "int32", "data": [1, 2.5]})") ==
        "/tensors/t/data/1|expected an integer, got 2.5");
  CHECK(tensor_error(R"({"shape": [2], "dtype": "int32", "data": [1, 2], "fill": 0})") ==
        "/tensors/t|\"data\" and \"fill\" are exclusive: give one");
  CHECK(tensor_error(R"({"shape": [2], "dtype": "int32", "fill": "1"})") ==
        "/tensors/t/fill|expected an integer, got \"1\"");
  CHECK(tensor_error(R"({"shape": [2], "dtype": "int32", "value": 1})") ==
        "/tensors/t/value|unknown key \"value\" (expected one of: shape, dtype, data, fill)");
}

TEST_CASE("trace loader: operation and argument errors") {
  CHECK(program_error(R"([{"op": "sumbit"}])") ==
        "/program/0/op|expected one of \"scope\", \"alloc\", \"view\", \"submit\", \"dummy\", \"read\", \"for\", "
        "\"let\", \"set\", \"fatal\", \"set_cache_policy\", got \"sumbit\"");
  CHECK(program_error(R"([{"kernel": "K"}])") == "/program/0|missing key \"op\"");
  CHECK(program_error(R"([5])") == "/program/0|expected an object, got 5");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"inn": "a"}]}])") ==
        "/program/0/args/0/inn|unknown key \"inn\" (expected one of: in, inout, out, out_existing, no_dep, manual_dep, "
        "offset, shape, start, strides, dtype, byte_offset, numel, version, creator)");
  CHECK(program_error(R"([{"op": "submit", "kernel": "QKK"}])") == "/program/0/kernel|unknown kernel \"QKK\"");
  CHECK(program_error(R"([{"op": "submit"}])") == "/program/0|missing key \"kernel\"");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "block_num": true}])") ==
        "/program/0/block_num|expected an integer or an expression string, got true");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "block_num": 0}])") ==
        "/program/0/block_num|block_num must be in [1, 32767], got 0");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "block_num": "16384*2"}])") ==
        "/program/0/block_num|block_num must be in [1, 32767], got 32768");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": "a", "out": "b"}]}])") ==
        "/program/0/args/0|an argument takes exactly one of in, inout, out, out_existing, no_dep, got \"in\" and "
        "\"out\"");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"manual_dep": true}]}])") ==
        "/program/0/args/0|expected one of the keys in, inout, out, out_existing, no_dep");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": "a", "dtype": "fp32"}]}])") ==
        "/program/0/args/0|the strided form of a view needs \"shape\" and \"strides\" (\"dtype\" given)");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"out": "b", "dtype": "fp32"}]}])") ==
        "/program/0/args/0|missing key \"shape\"");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"out": "b", "shape": [4]}]}])") ==
        "/program/0/args/0|missing key \"dtype\"");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K",
                           "args": [{"out": "b", "shape": [4], "dtype": "fp32", "offset": [0]}]}])") ==
        "/program/0/args/0/offset|\"offset\" is not allowed with \"out\" (a new buffer has no parent view)");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"out": "b", "shape": [0], "dtype": "fp32"}]}])") ==
        "/program/0/args/0/shape/0|shape must be >= 1, got 0");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": "a", "offset": [-1, 0]}]}])") ==
        "/program/0/args/0/offset/0|offset must be >= 0, got -1");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": "a", "offset": [0, 0], "shape": [1]}]}])") ==
        "/program/0/args/0/shape|expected 2 entries (as many as offset), got 1");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": "a", "manual_dep": 1}]}])") ==
        "/program/0/args/0/manual_dep|expected true or false, got 1");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": 7}]}])") ==
        "/program/0/args/0/in|expected a non-empty string, got 7");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "early_resolve": "yes"}])") ==
        "/program/0/early_resolve|expected true or false, got \"yes\"");
  CHECK(program_error(R"([{"op": "dummy", "kernel": "K"}])") ==
        "/program/0/kernel|unknown key \"kernel\" (expected one of: op, id, args, deps, early_resolve)");
  CHECK(program_error(R"([{"op": "let", "var": "x", "value": 1, "x_why": "annotated"}])") == "no error");

  std::string many = R"([{"op": "submit", "kernel": "K", "args": [)";
  for (int i = 0; i < 33; ++i) many += std::string(i ? "," : "") + R"({"in": "a"})";
  CHECK(program_error(many + "]}]") == "/program/0/args|at most 32 tensor arguments are allowed, got 33");
}

TEST_CASE("trace loader: submit fields that refer to arguments") {
  const std::string kernels =
      R"({"K": {"func_id": 0, "core": "aiv", "body": [{"load": {"arg": 0, "bytes": 8}}, {"store": {"arg": 1, "bytes": 8}}]}})";
  CHECK(error(doc(R"([{"op": "submit", "kernel": "K", "args": [{"in": "a"}]}])", kernels)) ==
        "/program/0|kernel \"K\" uses argument 1 (at /kernels/K/body/1), but the submit passes 1");
  CHECK(error(doc(R"([{"op": "submit", "kernel": "K", "args": [{"in": "a"}, {"inout": "a"}]}])", kernels)) ==
        "no error");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"inout": "a"}],
                           "writes": [{"arg": 1, "index": [0, 0], "value": 1}]}])") ==
        "/program/0/writes/0/arg|argument 1 does not exist (the submit has 1)");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"inout": "a"}],
                           "writes": [{"arg": 0, "index": [0, 0]}]}])") ==
        "/program/0/writes/0|missing key \"value\"");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K",
                           "predicate": {"tensor": "a", "index": [0, 0], "cmp": "=>", "value": 1}}])") ==
        "/program/0/predicate/cmp|expected one of \"==\", \"!=\", \">\", \"<\", \">=\", \"<=\", got \"=>\"");
  CHECK(program_error(R"([{"op": "submit", "kernel": "K",
                           "predicate": {"tensor": "a", "index": [0, 0], "cmp": "==", "value": 1, "not": true}}])") ==
        "/program/0/predicate/not|unknown key \"not\" (expected one of: tensor, index, element, cmp, value)");
}

TEST_CASE("trace loader: names must be bound before they are used") {
  // program, path of the use, the name
  const std::vector<std::array<std::string, 3>> cases = {
      {R"([{"op": "let", "var": "y", "value": "x+1"}])", "/program/0/value", "x"},
      {R"([{"op": "submit", "kernel": "K", "args": [{"in": "b"}]}])", "/program/0/args/0/in", "b"},
      {R"([{"op": "submit", "kernel": "K", "deps": ["t0"]}])", "/program/0/deps/0", "t0"},
      {R"([{"op": "let", "var": "x", "value": "x"}])", "/program/0/value", "x"},
      // a submit's own outputs and id are bound after it
      {R"([{"op": "submit", "kernel": "K", "args": [{"out": "b", "shape": [4], "dtype": "fp32"}, {"in": "b"}]}])",
       "/program/0/args/1/in", "b"},
      {R"([{"op": "for", "var": "i", "to": "i", "body": []}])", "/program/0/to", "i"},
      {R"([{"op": "read", "tensor": "a", "index": ["j", 0]}])", "/program/0/index/0", "j"},
      {R"([{"op": "view", "bind": "v", "of": "w"}])", "/program/0/of", "w"},
  };
  for (const auto& [program, path, name] : cases) {
    INFO(program);
    CHECK(program_error(program) == path + "|name \"" + name + "\" is used before it is bound");
  }
  // bindings made inside a loop or scope body stay visible after it
  CHECK(program_error(R"([{"op": "for", "var": "i", "to": 2, "body": [
                             {"op": "scope", "body": [
                               {"op": "submit", "kernel": "K", "id": "t", "args": [{"out": "o", "shape": [4], "dtype": "fp32"}]}]}]},
                           {"op": "submit", "kernel": "K", "deps": ["t"], "args": [{"in": "o", "shape": ["i+1"]}]}])") ==
        "no error");
  CHECK(program_error(R"([{"op": "alloc", "outputs": [{"bind": "x", "shape": [4], "dtype": "int32"}], "id": "al"},
                           {"op": "read", "tensor": "x", "index": [0], "bind": "v"},
                           {"op": "dummy", "deps": ["al"], "args": [{"in": "x", "offset": ["v"]}]}])") ==
        "no error");
}

TEST_CASE("trace loader: variable names, loops, lets, reads and views") {
  CHECK(program_error(R"([{"op": "let", "var": "1x", "value": 1}])") ==
        "/program/0/var|expected a variable name (letters, digits and _, not starting with a digit, not min or "
        "max), got \"1x\"");
  CHECK(program_error(R"([{"op": "let", "var": "min", "value": 1}])") ==
        "/program/0/var|expected a variable name (letters, digits and _, not starting with a digit, not min or "
        "max), got \"min\"");
  CHECK(program_error(R"([{"op": "let", "var": "x"}])") == "/program/0|missing key \"value\"");
  CHECK(program_error(R"([{"op": "let", "var": "x", "value": "2 ** 3"}])") ==
        "/program/0/value|bad expression '2 ** 3': expected a number, a name, '(' , min( or max( at character 4");
  CHECK(program_error(R"J([{"op": "let", "var": "x", "value": "4/(2-2)"}])J") ==
        "/program/0/value|division by zero in '4/(2-2)'");
  CHECK(program_error(R"([{"op": "for", "var": "i", "to": 4, "step": 0, "body": []}])") ==
        "/program/0/step|step must not be 0");
  CHECK(program_error(R"([{"op": "for", "var": "i", "to": 4}])") == "/program/0|missing key \"body\"");
  CHECK(program_error(R"([{"op": "for", "var": "i", "from": 1, "body": []}])") == "/program/0|missing key \"to\"");
  CHECK(program_error(R"([{"op": "read", "tensor": "a", "index": [0, 0], "bind": "a b"}])") ==
        "/program/0/bind|expected a variable name (letters, digits and _, not starting with a digit, not min or "
        "max), got \"a b\"");
  CHECK(program_error(R"([{"op": "read", "tensor": "a", "index": [-1, 0]}])") ==
        "/program/0/index/0|index must be >= 0, got -1");
  // A 0 in a view's shape is a zero-size view (ChipTensor::view), valid;
  // a negative extent is not.
  CHECK(program_error(R"([{"op": "view", "bind": "v", "of": "a", "offset": [0, 0], "shape": [0, 1]}])") ==
        "no error");
  CHECK(program_error(R"([{"op": "view", "bind": "v", "of": "a", "offset": [0, 0], "shape": [-1, 1]}])") ==
        "/program/0/shape/0|shape must be >= 0, got -1");
  CHECK(program_error(R"([{"op": "alloc", "outputs": []}])") ==
        "/program/0/outputs|expected a non-empty list of outputs, got a list");
  CHECK(program_error(R"([{"op": "alloc", "outputs": [{"bind": "x", "shape": [4], "dtype": "int32", "in": "a"}]}])") ==
        "/program/0/outputs/0/in|unknown key \"in\" (expected one of: bind, shape, dtype, fill)");
  CHECK(program_error(R"([{"op": "alloc", "outputs": [{"shape": [4], "dtype": "int32"}]}])") ==
        "/program/0/outputs/0|missing key \"bind\"");
}

TEST_CASE("trace loader: scopes") {
  CHECK(program_error(R"([{"op": "scope", "mode": "manual", "body": [{"op": "scope", "body": []}]}])") ==
        "/program/0/body/0|an auto scope may not be nested inside a manual scope (runtime: INVALID_ARGS)");
  CHECK(program_error(R"([{"op": "scope", "mode": "manual", "body": [
                             {"op": "for", "var": "i", "to": 2, "body": [{"op": "scope", "mode": "auto", "body": []}]}]}])") ==
        "/program/0/body/0/body/0|an auto scope may not be nested inside a manual scope (runtime: INVALID_ARGS)");
  CHECK(program_error(R"([{"op": "scope", "mode": "manual", "body": [{"op": "scope", "mode": "manual", "body": []}]}])") ==
        "no error");
  CHECK(program_error(R"([{"op": "scope", "mode": "Manual", "body": []}])") ==
        "/program/0/mode|expected one of \"auto\", \"manual\", got \"Manual\"");
  CHECK(program_error(R"([{"op": "scope"}])") == "/program/0|missing key \"body\"");
  CHECK(program_error(R"([{"op": "scope", "body": [], "site": 3}])") ==
        "/program/0/site|expected a non-empty string, got 3");
  CHECK(program_error(R"([{"op": "scope", "body": [], "deps": []}])") ==
        "/program/0/deps|unknown key \"deps\" (expected one of: op, mode, site, level, body)");
}

// docs/trace-format.md, "Limits": each limit accepted at its value, refused just beyond it.
TEST_CASE("trace loader: limits") {
  SECTION("JSON nesting") {
    // The document is level 1, "program" level 2; x_ annotations are parsed too.
    auto nested = [](int levels) {  // an x_ annotation making the document `levels` deep
      return R"({"npusim_trace": 1, "kernels": {}, "program": [], "x_deep": )" + std::string(levels - 1, '[') +
             std::string(levels - 1, ']') + "}";
    };
    CHECK(error(nested(trace::kMaxJsonDepth)) == "no error");
    CHECK(error(nested(trace::kMaxJsonDepth + 1)) ==
          "/x_deep" + [] {
            std::string p;
            for (int i = 0; i < trace::kMaxJsonDepth - 1; ++i) p += "/0";
            return p;
          }() + "|JSON nested too deeply (more than 256 levels of objects and lists)");
  }
  SECTION("program nesting: the JSON depth bounds it at 127 nested bodies") {
    // Scope nesting beyond the runtime's 64 levels is the device's assert at run
    // time (tests/test_fatal.cpp), not a load error; the loader only needs a bound.
    auto scopes = [](int n) {
      std::string p;
      for (int i = 0; i < n; ++i) p += R"([{"op": "scope", "body": )";
      p += "[]";
      for (int i = 0; i < n; ++i) p += "}]";
      return p;
    };
    CHECK(program_error(scopes(127)) == "no error");
    std::string at = "/program/0";
    for (int i = 1; i < 128; ++i) at += "/body/0";  // the 128th scope's object is level 257
    CHECK(program_error(scopes(128)) == at + "|JSON nested too deeply (more than 256 levels of objects and lists)");
  }
  SECTION("tensor rank, elements, arguments, block_num") {
    CHECK(tensor_error(R"({"shape": [1, 1, 1, 1, 1], "dtype": "fp32"})") == "no error");
    CHECK(tensor_error(R"({"shape": [1048576, 1048576], "dtype": "fp32"})") == "no error");  // 2^40
    CHECK(program_error(R"([{"op": "submit", "kernel": "K", "args": [{"out": "o", "shape": [1, 1, 1, 1, 1, 1], "dtype": "fp32"}]}])") ==
          "/program/0/args/0/shape|expected a list of 1 to 5 integers, got a list");
    CHECK(program_error(R"([{"op": "view", "bind": "v", "of": "a", "offset": [0, 0, 0, 0, 0, 0]}])") ==
          "/program/0/offset|expected a list of 1 to 5 integers, got a list");
    CHECK(program_error(R"([{"op": "read", "tensor": "a", "index": [0, 0, 0, 0, 0, 0]}])") ==
          "/program/0/index|expected a list of 1 to 5 integers, got a list");
    std::string args = R"([{"op": "dummy", "args": [)";
    for (int i = 0; i < trace::kMaxTensorArgs; ++i) args += std::string(i ? ", " : "") + R"({"in": "a"})";
    CHECK(program_error(args + "]}]") == "no error");
    CHECK(program_error(args + R"(, {"in": "a"}]}])") ==
          "/program/0/args|at most 32 tensor arguments are allowed, got 33");
    CHECK(program_error(R"([{"op": "submit", "kernel": "K", "block_num": 32767}])") == "no error");
    CHECK(program_error(R"([{"op": "alloc", "outputs": [)" + [] {
            std::string o;
            for (int i = 0; i <= trace::kMaxTensorArgs; ++i)
              o += std::string(i ? ", " : "") + R"({"bind": "o)" + std::to_string(i) + R"(", "shape": [1], "dtype": "fp32"})";
            return o;
          }() + "]}]") == "/program/0/outputs|at most 32 tensor arguments are allowed, got 33");
  }
  SECTION("kernel durations and transfer sizes") {
    auto phase = [](const std::string& ph) {
      return kernel_error(R"({"func_id": 0, "core": "aiv", "body": [)" + ph + "]}");
    };
    CHECK(phase(R"({"compute": {"ns": 3.6e12}})") == "no error");
    CHECK(phase(R"({"compute": {"ns": 3600000000001}})") ==
          "/kernels/K/body/0/compute/ns|expected a number in [0, 3.6e12], got 3600000000001");
    CHECK(phase(R"({"compute": {"cycles": 1e300}})") ==
          "/kernels/K/body/0/compute/cycles|expected a number in [0, 3.6e12], got 1e+300");
    CHECK(phase(R"({"compute": {"mean_ns": 1, "sigma_ns": 4e12}})") ==
          "/kernels/K/body/0/compute/sigma_ns|expected a number in [0, 3.6e12], got 4000000000000.0");
    CHECK(phase(R"({"load": {"arg": 0, "offset": 1099511627776, "bytes": 1099511627776}})") == "no error");
    CHECK(phase(R"({"store": {"arg": 0, "bytes": 1099511627777}})") ==
          "/kernels/K/body/0/store/bytes|bytes must be in [0, 1099511627776], got 1099511627777");
    CHECK(phase(R"({"load": {"arg": 0, "offset": "1099511627776+1", "bytes": 1}})") ==
          "/kernels/K/body/0/load/offset|offset must be in [0, 1099511627776], got 1099511627777");
  }
  SECTION("expressions") {
    CHECK(program_error(R"([{"op": "let", "var": "x", "value": ")" + std::string(4097, '1') + R"("}])") ==
          "/program/0/value|bad expression '" + std::string(40, '1') + "...': longer than 4096 characters");
  }
}

TEST_CASE("trace loader: mix pipelines (push, pop, repeat, cross_core_slots)", "[trace]") {
  const std::string ok = R"({"func_id": 0, "core": "mix", "cross_core_slots": 2, "lanes": {
      "aic": {"body": [{"repeat": {"count": 3, "body": [{"compute": {"ns": 10}}, {"push": {"to": "both", "bytes": 64}}]}}]},
      "aiv": {"body": [{"repeat": {"count": 3, "body": [{"pop": {"bytes": 32}}, {"compute": {"ns": 5}}]}}]}}})";
  Trace t = npusim::trace::parse_trace(doc("[]", R"({"K": )" + ok + "}"), "t.json", "t");
  const KernelDef& k = kernel(t, "K");
  CHECK(k.cross_core_slots == 2);
  // The repeat is expanded; the lane ends in the pipe's destructor (~TPipe,
  // PTO-ISA include/pto/npu/a2a3/TPush.hpp), which waits for the last frees.
  REQUIRE(k.lanes[kLaneAic].phases.size() == 7);
  CHECK(k.lanes[kLaneAic].phases[6].kind == PhaseKind::Push);
  CHECK(k.lanes[kLaneAic].phases[6].pipe_drain);
  CHECK_FALSE(k.lanes[kLaneAic].phases[5].pipe_drain);
  CHECK(k.lanes[kLaneAiv0].phases.size() == 6);
  CHECK(k.lanes[kLaneAic].phases[1].kind == PhaseKind::Push);
  CHECK(k.lanes[kLaneAic].phases[1].push_to == (kMaskAiv0 | kMaskAiv1));
  CHECK(k.lanes[kLaneAiv1].phases[4].kind == PhaseKind::Pop);

  CHECK(kernel_error(R"({"func_id": 0, "core": "aiv", "body": [{"push": {}}]})") ==
        "/kernels/K/body/0|push is only allowed in the aic lane of a mix kernel (the AIC -> AIV pipe)");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "lanes": {"aic": {"body": [{"pop": {}}]}, "aiv0": {"body": [{"push": {}}]}}})") ==
        "/kernels/K/lanes/aic/body/0|pop is only allowed in an AIV lane of a mix kernel (the AIC -> AIV pipe)");
  // PTO-ISA's TPipe has no default slot count: a kernel using the pipe names it.
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "lanes": {"aic": {"body": [{"push": {}}]}, "aiv0": {"body": [{"pop": {}}]}}})") ==
        "/kernels/K|a mix kernel that pushes or pops must give \"cross_core_slots\" (the pipe's slot_num, 1..1024: "
        "PTO-ISA's TPipe has no default; PTOAS uses 8 for a one-way pipe when pl.cross_core_slot omits it)");
  // Paired mode: a push flags both AIVs, so with both lanes it goes to both.
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "cross_core_slots": 2, "lanes": {"aic": {"body": [{"push": {"to": "aiv0"}}]}, "aiv0": {"body": [{"pop": {}}]}, "aiv1": {"duration": {"ns": 1}}}})") ==
        "/kernels/K/lanes/aic/body/0/push|in a kernel with both AIV lanes a push goes to \"both\" (\"to\": \"both\"): "
        "TPUSH sets the data flag of both AIVs and waits for both to free the slots");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "cross_core_slots": 2, "lanes": {"aic": {"body": [{"push": {}}, {"push": {}}]}, "aiv0": {"body": [{"pop": {}}]}}})") ==
        "/kernels/K|lane aiv0 pops 1 tile(s) but the aic lane pushes 2 to it");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "cross_core_slots": 2, "lanes": {"aic": {"body": [{"push": {"to": "aiv1"}}]}, "aiv0": {"duration": {"ns": 1}}}})") ==
        "/kernels/K|the aic lane pushes 1 tile(s) to aiv1, which is not a lane of this kernel");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "lanes": {"aic": {"body": [{"repeat": {"count": 0, "body": []}}]}}})") ==
        "/kernels/K/lanes/aic/body/0/repeat/count|expected an integer in [1, 65536], got 0");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "cross_core_slots": 0, "lanes": {"aic": {"duration": {"ns": 1}}}})") ==
        "/kernels/K/cross_core_slots|expected an integer in [1, 1024], got 0");
  CHECK(kernel_error(R"({"func_id": 0, "core": "mix", "lanes": {"aic": {"body": [{"push": {"to": "aiv2"}}]}}})").rfind(
            "/kernels/K/lanes/aic/body/0/push/to|", 0) == 0);
}
