// Loading that streams (docs/trace-format.md, "How a trace is loaded"): the
// program's list is checked as JSON but not kept as a document
// (json_input::JsonDom with a skip key), its ops are compiled one at a time from the text
// (json_input::JsonListCursor), at load to check them and again as the
// interpreter reaches them; `npusim check` compiles each op once, before its
// dry run, and trace::finish_checks keeps the first load-time error first.
#include "tests/catch.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/engine/engine.h"
#include "sim/json/stream.h"
#include "sim/trace/program.h"
#include "sim/trace/trace.h"

using namespace npusim;

namespace test_trace_stream {

using J = nlohmann::ordered_json;

std::vector<std::string> elements(const std::string& text) {
  std::vector<std::string> out;
  json_input::JsonListCursor c(text, json_input::json_member_at(text, "program"));
  std::string_view e;
  while (c.next(e)) out.emplace_back(e);
  return out;
}

const char* kHead = R"({"npusim_trace": 1, "name": "s", "kernels": {"K": {"func_id": 0, "core": "aiv", "duration": {"ns": 100}}},
  "tensors": {"a": {"shape": [256], "dtype": "fp32"}}, "program": )";

std::string trace_text(const std::string& program) { return kHead + program + "}"; }

// The error of parse_trace, as "PATH|MESSAGE".
std::string load_error(const std::string& text, bool check_ops = true) {
  try {
    trace::parse_trace(std::make_shared<const std::string>(text), "s.json", "s", check_ops);
  } catch (const InputError& e) {
    return e.path() + "|" + e.message();
  }
  return "";
}

// Runs the interpreter to its end as a dry run would; the ops' kinds and paths.
std::vector<std::string> run_ops(const trace::Trace& t) {
  DataStore data;
  trace::DryRunOutputs outs(data);
  auto src = trace::make_interpreter(t, data);
  std::vector<std::string> seen;
  OrchOp op;
  TaskId next = 0;
  while (src->next(op)) {
    seen.push_back(std::to_string(static_cast<int>(op.kind)) + " " + op.path_text());
    if (op.kind == OrchOp::Kind::Submit || op.kind == OrchOp::Kind::Dummy || op.kind == OrchOp::Kind::Alloc)
      src->deliver_task(next, outs.make(op.submit.args, next)), ++next;
    if (op.kind == OrchOp::Kind::Read) src->deliver_value(0);
  }
  return seen;
}

}  // namespace test_trace_stream

using namespace test_trace_stream;

TEST_CASE("stream: the list cursor hands out each element's text, strings and nesting included") {
  const std::string text = R"( { "a": [1, 2], "x": "program", "program" :
    [ {"op": "let", "var": "v", "value": "1"}, {"s": "],[{\"\\"}, [ [] , {} ], 12.5e3 ,"z",true,null ] } )";
  CHECK(elements(text) == std::vector<std::string>{R"({"op": "let", "var": "v", "value": "1"})",
                                                   R"({"s": "],[{\"\\"})", "[ [] , {} ]", "12.5e3", R"("z")", "true",
                                                   "null"});
  CHECK(elements(R"({"program": []})").empty());
  CHECK(elements(R"({"program": [ ]})").empty());
  // A key is compared decoded; a string value that reads "program" is not a key.
  CHECK(elements(R"({"p": "program", "\u0070rogram": [3]})") == std::vector<std::string>{"3"});
  CHECK(json_input::json_member_at(R"({"a": 1})", "program") == std::string_view::npos);
  // Every escape is decoded as JSON decodes it (a non-ASCII key, escaped
  // quotes and backslashes before the key looked for).
  CHECK(elements(R"({"caf\u00e9": 1, "a\"b\\": 2, "progra\u006d": [4, 5]})") == std::vector<std::string>{"4", "5"});
  CHECK(json_input::json_member_at(R"({"\u00e9": 1})", "\xc3\xa9") == 11);  // the value's offset
}

TEST_CASE("stream: the skimming parse keeps the document but the program's ops, with JsonDom's errors") {
  json_input::JsonDom<J> skim("program");
  REQUIRE(skim.parse(trace_text(R"([{"op": "let", "var": "v", "value": 1}, {"op": "let", "var": "w", "value": 2}])")));
  CHECK(skim.skipped);
  CHECK(skim.skipped_count == 2);
  J root = skim.take();
  CHECK(root["program"] == J::array());
  CHECK(root["tensors"]["a"]["shape"] == J::array({256}));

  // A "program" that is not a list, or not at the root, is kept as it is.
  json_input::JsonDom<J> other("program");
  REQUIRE(other.parse(R"({"x": {"program": [1]}, "program": 5})"));
  CHECK_FALSE(other.skipped);
  J kept = other.take();
  CHECK(kept["x"]["program"] == J::array({1}));
  CHECK(kept["program"] == 5);

  // Errors inside the skipped ops: the same fields as JsonDom's.
  for (const std::string& bad : {
           trace_text(R"([{"op": "let"}, {"op": "let", "var": "v", "op": "x"}])"),
           trace_text("[" + std::string(300, '[') + std::string(300, ']') + "]"),
           trace_text(R"([{"op": "let", "value": 1e400}])"),
           trace_text(R"([{"op": "let",, }])"),
       }) {
    json_input::JsonDom<J> dom;
    json_input::JsonDom<J> s("program");
    CHECK_FALSE(dom.parse(bad));
    CHECK_FALSE(s.parse(bad));
    CHECK(s.error == dom.error);
    CHECK(s.error_pointer == dom.error_pointer);
    CHECK(s.error_key == dom.error_key);
    CHECK(s.error_at == dom.error_at);
    CHECK(s.error_id == dom.error_id);
    CHECK(s.error_text == dom.error_text);
  }
  json_input::JsonDom<J> dup("program");
  CHECK_FALSE(dup.parse(trace_text(R"([{"op": "let"}, {"op": "let", "var": "v", "op": "x"}])")));
  CHECK(dup.error_pointer == "/program/1");
  CHECK(dup.error_key == "op");
}

// The same value with the same type everywhere (nlohmann's == calls an
// unsigned 1 and a signed 1 equal), members in the same order.
bool same(const J& a, const J& b) {
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y)
      if (x.key() != y.key() || !same(x.value(), y.value())) return false;
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

// quick_accept against JsonDom with the skip key: a yes only where JsonDom
// accepts, the list where JsonDom skipped it; quick_parse's document where it
// builds one is JsonDom's. Returns quick_accept's answer.
bool agrees_with_dom(const std::string& text) {
  std::size_t at = 0, end = 0;
  const bool quick = json_input::quick_accept(text, "program", &at, &end);
  json_input::JsonDom<J> skim("program");
  const bool dom_ok = skim.parse(text);
  INFO(text);
  if (quick) {
    REQUIRE(dom_ok);
    CHECK(skim.skipped == (at != std::string::npos));
    if (at != std::string::npos) {
      CHECK(text[at] == '[');
      CHECK(text[end - 1] == ']');
      CHECK(json_input::json_member_at(text, "program") == at);
    }
  }
  if (dom_ok) {
    json_input::JsonDom<J> whole;
    REQUIRE(whole.parse(text));
    J quick_doc;
    if (json_input::quick_parse(text, quick_doc)) CHECK(same(quick_doc, whole.take()));
  }
  return quick;
}

TEST_CASE("stream: the quick scan says yes only to what JsonDom accepts and builds JsonDom's document") {
  const std::string good = trace_text(
      R"([{"op": "let", "var": "v", "value": -12}, {"op": "scope", "body": [{"op": "submit", "kernel": "K",)"
      R"( "args": [{"in": "a"}, {"out": "y", "shape": [16, 0], "dtype": "fp32", "fill": 2.5}]}]},)"
      R"( {"x_note": "tab\t \"q\" \\ \/", "z": [true, false, null, {}, []]}])");
  CHECK(agrees_with_dom(good));
  // Yes: plain JSON, any root, numbers of every plain form.
  for (const std::string& yes : {std::string("{}"), std::string(" [ ] "), std::string("0"), std::string("-0"),
                                 std::string("\"s\""), std::string("[1.5, -0.25, 123456789012345678, 1234567890123456789012]"),
                                 std::string(R"({"program": 5})"), std::string(R"({"x": {"program": [1]}})"),
                                 std::string(R"({"program": []})"), std::string(R"({"a": 1, "b": {"a": 2}})")})
    CHECK(agrees_with_dom(yes));
  // No: errors, and what the scan leaves to JsonDom (accepted or not there).
  for (const std::string& no :
       {std::string(""), std::string(" "), std::string("{"), std::string("[1,]"), std::string("{,}"),
        std::string(R"({"a" 1})"), std::string(R"({"a": 1, "a": 2})"), std::string(R"([{"k": 1, "k": 1}])"),
        std::string("01"), std::string("1."), std::string("-"), std::string(".5"), std::string("1e5"),
        std::string("1E-2"), std::string("1e400"), std::string("tru"), std::string("nul"), std::string("[1] x"),
        std::string("\"a\nb\""), std::string("\"\\x\""), std::string("\"\\u0041\""), std::string("\"caf\xc3\xa9\""),
        std::string("\xef\xbb\xbf{}"), std::string(R"({"\u0061": 1, "a": 2})"), std::string(R"({"a\/": 1})"),
        std::string(1, '\0'), std::string("[" + std::string(400, '1') + "]"),
        std::string(300, '[') + std::string(300, ']'),
        trace_text(R"([{"op": "let"}, {"op": "let", "var": "v", "op": "x"}])")})
    CHECK_FALSE(agrees_with_dom(no));
  // Nesting: kMaxJsonNesting levels are accepted, one more is not.
  const int max = json_input::kMaxJsonNesting;
  CHECK(agrees_with_dom(std::string(max, '[') + std::string(max, ']')));
  CHECK_FALSE(agrees_with_dom(std::string(max + 1, '[') + std::string(max + 1, ']')));
  // Many keys (the set beyond a few): a duplicate still found.
  std::string many = "{";
  for (int i = 0; i < 40; ++i) many += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  CHECK(agrees_with_dom(many + "\"last\": 0}"));
  CHECK_FALSE(agrees_with_dom(many + "\"k7\": 0}"));
  // An object of many keys, then objects at the same depth: each starts with
  // no keys (a fresh set, not the big one cleared: clear() zeroes every
  // bucket, which made the scan quadratic), and a duplicate in a later one is
  // still found.
  std::string big = "[{";
  for (int i = 0; i < 5000; ++i) big += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": 0";
  big += "}";
  for (int i = 0; i < 50; ++i) big += R"(, {"k1": 1, "k2": 2})";
  CHECK(agrees_with_dom(big + "]"));
  CHECK_FALSE(agrees_with_dom(big + R"(, {"k3": 1, "k3": 2}])"));
  // A large op, then small ones: the builder's stacks, grown by the first and
  // given back after it, build the next ones as JsonDom does.
  std::string large = "[";
  for (int i = 0; i < 20000; ++i) large += (i ? ", " : "") + std::to_string(i);
  large += "]";
  CHECK(agrees_with_dom(large));
  CHECK(agrees_with_dom(R"({"op": "let", "var": "v", "value": [1, {"a": [2, 3]}]})"));
  // Every text one edit away from a trace: a yes only where JsonDom accepts.
  const std::string alphabet = std::string("{}[],:\" \\0123456789-+.eEtrufalsnx\t\n") + "\x01\xc3\x7f";
  std::uint64_t seed = 29;
  auto next = [&seed](std::size_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((seed >> 33) % n);
  };
  int yes = 0;
  for (int k = 0; k < 3000; ++k) {
    std::string t = good;
    for (int e = 1 + static_cast<int>(next(2)); e > 0; --e) {
      const std::size_t at = next(t.size());
      const char c = alphabet[next(alphabet.size())];
      switch (next(3)) {
        case 0: t.erase(at, 1); break;
        case 1: t.insert(at, 1, c); break;
        default: t[at] = c;
      }
    }
    yes += agrees_with_dom(t) ? 1 : 0;
  }
  CHECK(yes > 100);  // the edits inside strings and white space
}

TEST_CASE("stream: a loaded trace holds none of its ops, the interpreter compiles them one at a time") {
  std::string program = "[";
  for (int i = 0; i < 1000; ++i)
    program += std::string(i ? ", " : "") + R"({"op": "scope", "body": [{"op": "submit", "kernel": "K", "args": [{"in": "a"}]}]})";
  program += "]";
  trace::Trace t = trace::parse_trace(trace_text(program), "s.json", "s");
  REQUIRE(t.program);
  CHECK(t.program->text);
  CHECK(t.program->ops_checked);
  CHECK(t.program->code.empty());
  CHECK(t.program->tasks.empty());
  CHECK(t.program->scopes.empty());
  CHECK(run_ops(t).size() == 3000);

  // The reader: one top-level op (with its body) in the program at a time.
  trace::Program p;
  auto reader = trace::read_program(t, p);
  CHECK(p.code.empty());
  CHECK(p.tensor_slots == std::vector<int>{0});
  REQUIRE(reader->next());
  CHECK(p.code.size() == 3);  // ScopeBegin, Task, ScopeEnd
  CHECK(p.tasks.size() == 1);
  CHECK(p.tasks[0].path == "/program/0/body/0");
  REQUIRE(reader->next());
  CHECK(p.tasks.size() == 1);
  CHECK(p.tasks[0].path == "/program/1/body/0");
  CHECK(p.scopes[0].site == "s:2");  // the scope ordinal carries over
}

TEST_CASE("stream: names, loops and a top-level set_cache_policy across streamed ops") {
  trace::Trace t = trace::parse_trace(trace_text(R"([
    {"op": "let", "var": "n", "value": 2},
    {"op": "set_cache_policy", "tensor": "a", "policy": "bypass"},
    {"op": "for", "var": "i", "to": "n", "body": [{"op": "submit", "kernel": "K", "id": "t", "args": [{"in": "a", "offset": ["i"]}]}]},
    {"op": "set_cache_policy", "tensor": "t", "policy": "bypass"}])"), "s.json", "s");
  // A second declaration of a tensor in the root scope, three ops later: the
  // root's declarations carry over.
  CHECK(load_error(trace_text(R"([{"op": "set_cache_policy", "tensor": "a", "policy": "bypass"},
    {"op": "let", "var": "n", "value": 2}, {"op": "set_cache_policy", "tensor": "a", "policy": "default"}])")) ==
        "/program/2/tensor|tensor \"a\" already has a cache policy in this scope (at /program/0)");
  // The ops of the loop run twice; the declarations compile to no code.
  const std::string submit = std::to_string(static_cast<int>(OrchOp::Kind::Submit)) + " /program/2/body/0";
  CHECK(run_ops(t) == std::vector<std::string>{submit, submit});
  // A name bound inside a loop body stays bound after the loop, for later ops.
  CHECK(load_error(trace_text(R"([{"op": "for", "var": "i", "to": 1, "body": [{"op": "let", "var": "k", "value": 1}]},
    {"op": "let", "var": "m", "value": "k+i"}, {"op": "let", "var": "z", "value": "q"}])")) ==
        "/program/2/value|name \"q\" is used before it is bound");
}

TEST_CASE("stream: check compiles each op once, a load-time error of a later op still comes first") {
  // Op 0 fails when run (a view out of bounds), op 1 when loaded.
  const std::string text = trace_text(R"([{"op": "submit", "kernel": "K", "args": [{"in": "a", "offset": [300]}]},
    {"op": "let", "var": "x", "value": "nope"}])");
  CHECK(load_error(text) == "/program/1/value|name \"nope\" is used before it is bound");
  CHECK(load_error(text, false).empty());  // not checked at load
  trace::Trace t = trace::parse_trace(std::make_shared<const std::string>(text), "s.json", "s", false);
  CHECK_FALSE(t.program->ops_checked);
  DataStore data;
  auto src = trace::make_interpreter(t, data);
  OrchOp op;
  std::string run_err;
  try {
    src->next(op);
  } catch (const InputError& e) {
    run_err = e.path() + "|" + e.message();
  }
  CHECK(run_err == "/program/0/args/0|view out of bounds in dim 0: offset 300 >= 256");
  try {
    trace::finish_checks(t, src.get());
    FAIL("finish_checks found no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "s.json: at /program/1/value: name \"nope\" is used before it is bound");
  }
  // Without an interpreter (the run never started): every op is compiled.
  CHECK_THROWS_WITH(trace::finish_checks(t, nullptr), "s.json: at /program/1/value: name \"nope\" is used before it is bound");
  // After a load-time error of its own, the interpreter's reader has no next op.
  const std::string bad = trace_text(R"([{"op": "let", "var": "x", "value": "nope"}, {"op": "let", "var": "y", "value": "nada"}])");
  trace::Trace b = trace::parse_trace(std::make_shared<const std::string>(bad), "s.json", "s", false);
  auto src2 = trace::make_interpreter(b, data);
  CHECK_THROWS_WITH(src2->next(op), "s.json: at /program/0/value: name \"nope\" is used before it is bound");
  CHECK_NOTHROW(trace::finish_checks(b, src2.get()));

  // npusim check says what it said when load compiled every op.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "npusim_test_trace_stream";
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "s.json").string();
  std::ofstream(file) << text;
  engine::RunRequest req;
  req.trace_path = file;
  std::ostringstream out, err;
  CHECK(engine::check(req, out, err) == engine::kExitInputError);
  CHECK(err.str() == "npusim: error: " + file + ": at /program/1/value: name \"nope\" is used before it is bound\n");
  std::filesystem::remove_all(dir);
}
