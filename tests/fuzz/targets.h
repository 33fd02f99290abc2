// The bodies of the fuzz targets, as plain functions so that both the
// libFuzzer executables (tests/fuzz/fuzz_target.cpp, NPUSIM_FUZZ=ON) and the unit
// tests (tests/test_fuzz_regressions.cpp replays tests/fuzz/corpus/ in every
// build, sanitized or not) run exactly the same code.
//
// Each function returns normally when the input was handled the documented
// way (accepted, or refused with the expected error type) and lets anything
// else escape: another exception type, a failed property (abort), a crash or
// a sanitizer report is a finding.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/errors.h"
#include "models/common/expr.h"
#include "models/runtime/data_store.h"
#include "models/runtime/orch_ops.h"
#include "sim/config/run_options.h"
#include "sim/platform/platform_loader.h"
#include "sim/import/import.h"
#include "sim/trace/trace.h"
#include "tests/test_paths.h"

namespace npusim::fuzz {

// At most this many orchestration ops are taken from one input's program, so
// a program of a billion tasks is not a hang.
constexpr std::uint64_t kMaxOps = 100000;
// Loop iterations per input (the interpreter's budget; traces get
// trace::kMaxLoopIterations), so a loop with an empty body is not a hang.
constexpr std::uint64_t kLoopIterations = 100000;

[[noreturn]] inline void property_failed(const char* what) {
  std::fprintf(stderr, "fuzz: property failed: %s\n", what);
  std::abort();
}

// ---- structure-aware inputs -------------------------------------------------

// Byte mutations of a large JSON document mostly break its syntax, so the
// checks behind a valid document are rarely reached. An input "@" B1 B2 TEXT
// therefore means: take the target's base document, replace its node number
// B1 * 256 + B2 (every object, list and leaf, in document order, modulo their
// count) by the JSON TEXT, or remove the node when TEXT is empty, and feed the
// result to the target.
class EditBase {
 public:
  using Json = nlohmann::ordered_json;
  explicit EditBase(const std::string& path) {
    std::ifstream in(path);
    doc_ = Json::parse(in);
    const Json leaves = doc_.flatten();  // pointer -> value of every leaf
    for (auto it = leaves.begin(); it != leaves.end(); ++it)  // each leaf and every container above it
      for (Json::json_pointer p(it.key()); !p.empty(); p = p.parent_pointer())
        if (std::find(nodes_.begin(), nodes_.end(), p) == nodes_.end()) nodes_.push_back(p);
  }
  const Json& doc() const { return doc_; }
  const Json::json_pointer& node(unsigned n) const { return nodes_[n % nodes_.size()]; }

 private:
  Json doc_;
  std::vector<Json::json_pointer> nodes_;
};

// The text to feed the target: the input itself, or for "@" B1 B2 TEXT the
// edited base document. False when TEXT is not JSON (nothing to feed).
inline bool edit_input(const EditBase& base, const std::uint8_t* bytes, std::size_t size, std::string& out) {
  using Json = EditBase::Json;
  out.assign(reinterpret_cast<const char*>(bytes), size);
  if (size < 3 || bytes[0] != '@') return true;
  const Json::json_pointer& ptr = base.node(bytes[1] * 256u + bytes[2]);
  Json doc = base.doc();
  if (size == 3) {
    Json& parent = doc[ptr.parent_pointer()];
    if (parent.is_array())
      parent.erase(std::stoul(ptr.back()));
    else
      parent.erase(ptr.back());
  } else {
    Json v = Json::parse(out.substr(3), nullptr, /*allow_exceptions=*/false);
    if (v.is_discarded()) return false;
    doc[ptr] = std::move(v);
  }
  out = doc.dump();
  return true;
}

// ---- trace: load, resolve the run block, evaluate the whole program --------

// The a2a3 platform, loaded once (the run block is resolved against it, as
// `npusim check` does).
inline const Platform& a2a3() {
  static const Platform p = platform::load_platform(std::string(NPUSIM_SOURCE_DIR) + "/platforms/a2a3.json");
  return p;
}

// `npusim check`'s DryRun (sim/engine/engine.cpp): every submit is accepted at
// once, OUTPUT args become fresh buffers, reads are answered from the data
// store. Also checks that scopes are balanced and ops are well formed.
inline std::uint64_t dry_run(OpSource& src, DataStore& data, std::uint64_t max_ops) {
  OrchOp op;
  trace::DryRunOutputs outputs(data);
  std::uint64_t n = 0, ops = 0;
  int depth = 0;
  while (ops < max_ops && src.next(op)) {
    ++ops;
    switch (op.kind) {
      case OrchOp::Kind::ScopeBegin:
        ++depth;
        break;
      case OrchOp::Kind::ScopeEnd:
        if (--depth < 0) property_failed("ScopeEnd without ScopeBegin");
        break;
      case OrchOp::Kind::Alloc:
      case OrchOp::Kind::Submit:
      case OrchOp::Kind::Dummy: {
        const auto& args = op.kind == OrchOp::Kind::Alloc ? op.alloc_outputs : op.submit.args;
        if (op.kind == OrchOp::Kind::Submit && !op.submit.kernel) property_failed("submit without a kernel");
        if (op.kind != OrchOp::Kind::Alloc && (op.submit.block_num < 1 || op.submit.block_num > 32767))
          property_failed("block_num out of range");
        TaskId id = make_task_id(0, n++);
        for (const SubmitArg& a : args) {
          if (a.tensor.ndims < 1 || a.tensor.ndims > kMaxDims) property_failed("tensor rank out of range");
          if (a.tensor.strided) {  // the runtime's strided form: its linear extent inside the buffer
            std::int64_t first = 0, last = 0;
            a.tensor.extent(first, last);
            if (last >= first && (first < 0 || last >= a.tensor.buffer_numel()))
              property_failed("strided view outside its buffer");
            continue;
          }
          for (int d = 0; d < a.tensor.ndims; ++d) {
            if (a.tensor.shape[d] < 1) property_failed("tensor extent < 1");
            if (a.tag != ArgTag::Output &&
                (a.tensor.offset[d] < 0 || a.tensor.offset[d] + a.tensor.shape[d] > a.tensor.buf_shape[d]))
              property_failed("view outside its buffer");
          }
        }
        src.deliver_task(id, outputs.make(args, id));
        break;
      }
      case OrchOp::Kind::Read:
      case OrchOp::Kind::Write:
        if (op.read_element < 0 || op.read_element >= op.read_tensor.buffer_numel())
          property_failed("read element outside its buffer");
        if (op.kind == OrchOp::Kind::Write)
          data.set(op.read_tensor.buffer, op.read_element, op.write_value);
        else
          src.deliver_value(data.get(op.read_tensor.buffer, op.read_element));
        break;
      case OrchOp::Kind::Fatal:  // the device stops at a reported fatal
        return n;
    }
  }
  if (ops < max_ops && depth != 0) property_failed("unbalanced scopes at the end of the program");
  return n;
}

// What the loader accepts, the device model can time: the conversions the
// cores apply to kernel durations and constant transfer sizes stay inside the
// picosecond clock (UBSan checks the float-to-integer casts). Phase
// expressions with block_idx/block_num are checked by the interpreter, for
// every block, at the first submit of each (kernel, block_num).
inline void time_kernels(const trace::Trace& t, const Platform& p) {
  Time sum = 0;
  auto add = [&sum](Time d) {
    if (__builtin_add_overflow(sum, d, &sum)) property_failed("kernel times overflow the clock");
  };
  for (const auto& k : t.kernels)
    for (const LaneBody& lane : k->lanes)
      for (const Phase& ph : lane.phases) {
        const Duration& d = ph.duration;
        if (ph.kind == PhaseKind::Compute) {
          if (d.kind == Duration::Kind::ByBlock)
            for (double ns : d.by_block) add(from_ns(ns));
          else if (d.kind == Duration::Kind::Cycles) add(p.aicore_cycles(d.a));
          else add(from_ns(d.a + 10 * d.b));  // a normal sample beyond 10 sigma never comes
        }
        if ((ph.kind == PhaseKind::Load || ph.kind == PhaseKind::Store) && ph.bytes.is_const())
          add(p.gm.line_latency + from_ns(static_cast<double>(ph.bytes.const_value()) / p.gm.bytes_per_ns));
      }
}

// Inputs starting with "@" edit tests/data/trace/all_features.json (edit_input).
inline void trace_one(const std::uint8_t* bytes, std::size_t size) {
  static const EditBase base(std::string(NPUSIM_SOURCE_DIR) + "/tests/data/trace/all_features.json");
  std::string text;
  if (!edit_input(base, bytes, size, text)) return;
  try {
    trace::Trace t = trace::parse_trace(text, "fuzz.json", "fuzz");
    config::resolve(t.run, a2a3(), t.file);
    time_kernels(t, a2a3());
    DataStore data;
    std::unique_ptr<OpSource> src = trace::make_interpreter(t, data, kLoopIterations);
    dry_run(*src, data, kMaxOps);
  } catch (const InputError&) {
  }
}

// ---- import: a device capture ---------------------------------------------------

// A capture's documents: the committed capture of tests/data/capture/chain,
// with the input in place of one of them. "@" B1 B2 TEXT edits its deps.json
// (edit_input); "S", "N" or "C" followed by TEXT replaces its swimlane
// records, name map or scope_stats; anything else is a whole deps.json. A
// capture the importer accepts must give a trace that loads and evaluates.
inline void import_one(const std::uint8_t* bytes, std::size_t size) {
  static const std::string dir = std::string(NPUSIM_SOURCE_DIR) + "/tests/data/capture/chain/";
  static const EditBase base(dir + "deps.json");
  auto read = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  static const std::string swimlane = read(dir + "chip_swimlane_records.json");
  static const std::string name_map = read(dir + "name_map_chain.json");
  static const std::string scope_stats = read(dir + "scope_stats/scope_stats.jsonl");
  std::string deps = base.doc().dump(), sw = swimlane, nm = name_map, ss = scope_stats;
  const char kind = size ? static_cast<char>(bytes[0]) : '\0';
  if (kind == 'S' || kind == 'N' || kind == 'C') {
    std::string text(reinterpret_cast<const char*>(bytes) + 1, size - 1);
    (kind == 'S' ? sw : kind == 'N' ? nm : ss) = text;
  } else if (!edit_input(base, bytes, size, deps)) {
    return;
  }
  std::string trace_text;
  try {
    trace_text = capture::import_capture(
        deps, sw, nm, ss, capture::CaptureFiles{"deps.json", "swimlane.json", "map.json", "scope_stats.jsonl"});
  } catch (const InputError&) {
    return;
  }
  try {
    trace::Trace t = trace::parse_trace(trace_text, "imported.json", "imported");
    DataStore data;
    std::unique_ptr<OpSource> src = trace::make_interpreter(t, data, kLoopIterations);
    dry_run(*src, data, kMaxOps);
  } catch (const InputError& e) {
    std::fprintf(stderr, "fuzz: the imported trace is refused: %s\n", e.what());
    property_failed("an accepted capture gave a trace that does not load");
  }
}

// ---- platform ----------------------------------------------------------------

inline void parse_platform_checked(const std::string& text) {
  try {
    Platform p = platform::parse_platform(text, "fuzz.json");
    for (const std::string& ptr : platform::platform_field_pointers())
      if (!p.provenance.count(ptr)) property_failed("a platform field without provenance");
  } catch (const InputError&) {
  }
}

// Any other input is a whole platform file (see edit_input for "@" inputs).
inline void platform_one(const std::uint8_t* bytes, std::size_t size) {
  static const EditBase base(std::string(NPUSIM_SOURCE_DIR) + "/platforms/a2a3.json");
  std::string text;
  if (edit_input(base, bytes, size, text)) parse_platform_checked(text);
}

// ---- expressions: the parser and evaluator against a reference ----------------

// Variables the expressions may name: a value, or unbound (std::nullopt).
struct ExprVar {
  const char* name;
  std::optional<std::int64_t> value;
};
inline const std::vector<ExprVar>& expr_vars() {
  static const std::vector<ExprVar> v = {
      {"a", 0}, {"b", 1}, {"c", -1}, {"i", 7}, {"n", 1000},
      {"hi", std::numeric_limits<std::int64_t>::max()}, {"lo", std::numeric_limits<std::int64_t>::min()},
      {"u", std::nullopt}};
  return v;
}

class FuzzEnv : public ExprEnv {
 public:
  bool get(int slot, std::int64_t& value) const override {
    const auto& v = expr_vars()[static_cast<std::size_t>(slot)].value;
    if (v) value = *v;
    return v.has_value();
  }
  std::string describe(int slot) const override {
    return std::string("variable '") + expr_vars()[static_cast<std::size_t>(slot)].name + "' is not bound";
  }
};

// An independent evaluator of the grammar in expr.h: recursive descent that
// evaluates as it parses, in 128-bit arithmetic, and says whether the text is
// malformed, fails to evaluate (overflow, division by zero, unbound name) or
// has a value.
class RefExpr {
 public:
  enum class Outcome { Syntax, EvalError, Value };
  struct Result {
    Outcome outcome;
    std::int64_t value;
  };

  static Result run(const std::string& s) {
    RefExpr r(s);
    try {
      V v = r.expr();
      r.ws();
      if (r.p_ != s.size()) throw SyntaxError{};
      if (!v.ok) return {Outcome::EvalError, 0};
      return {Outcome::Value, static_cast<std::int64_t>(v.v)};
    } catch (const SyntaxError&) {
      return {Outcome::Syntax, 0};
    }
  }

 private:
  struct SyntaxError {};
  struct V {
    bool ok;
    __int128 v;
  };
  static constexpr __int128 kMin = std::numeric_limits<std::int64_t>::min();
  static constexpr __int128 kMax = std::numeric_limits<std::int64_t>::max();

  explicit RefExpr(const std::string& s) : s_(s) {}
  static V fit(__int128 x) { return V{x >= kMin && x <= kMax, x}; }

  void ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t')) ++p_;
  }
  char peek() {
    ws();
    return p_ < s_.size() ? s_[p_] : '\0';
  }
  void nest() {
    if (++depth_ > kExprMaxNesting) throw SyntaxError{};
  }
  V expr() {
    V a = term();
    for (char c = peek(); c == '+' || c == '-'; c = peek()) {
      ++p_;
      V b = term();
      a = a.ok && b.ok ? fit(c == '+' ? a.v + b.v : a.v - b.v) : V{false, 0};
    }
    return a;
  }
  V term() {
    V a = unary();
    for (char c = peek(); c == '*' || c == '/' || c == '%'; c = peek()) {
      ++p_;
      V b = unary();
      if (!a.ok || !b.ok || (c != '*' && b.v == 0)) {
        a = V{false, 0};
        continue;
      }
      a = fit(c == '*' ? a.v * b.v : c == '/' ? a.v / b.v : a.v % b.v);
    }
    return a;
  }
  V unary() {
    if (peek() != '-') return atom();
    ++p_;
    nest();
    V a = unary();
    --depth_;
    return a.ok ? fit(-a.v) : a;
  }
  V atom() {
    char c = peek();
    if (c >= '0' && c <= '9') {
      __int128 v = 0;
      for (; p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9'; ++p_) {
        v = v * 10 + (s_[p_] - '0');
        if (v > kMax) throw SyntaxError{};  // a literal above int64
      }
      return V{true, v};
    }
    auto name_char = [](char x, bool first) {
      return (x >= 'A' && x <= 'Z') || (x >= 'a' && x <= 'z') || x == '_' || (!first && x >= '0' && x <= '9');
    };
    if (name_char(c, true)) {
      std::size_t start = p_;
      while (p_ < s_.size() && name_char(s_[p_], false)) ++p_;
      std::string name = s_.substr(start, p_ - start);
      if (name == "min" || name == "max") {
        nest();
        if (peek() != '(') throw SyntaxError{};
        ++p_;
        V a = expr();
        if (peek() != ',') throw SyntaxError{};
        ++p_;
        V b = expr();
        if (peek() != ')') throw SyntaxError{};
        ++p_;
        --depth_;
        if (!a.ok || !b.ok) return V{false, 0};
        return V{true, name == "min" ? (a.v < b.v ? a.v : b.v) : (a.v > b.v ? a.v : b.v)};
      }
      for (const ExprVar& var : expr_vars())
        if (name == var.name) return var.value ? V{true, *var.value} : V{false, 0};
      throw SyntaxError{};  // unknown name
    }
    if (c == '(') {
      ++p_;
      nest();
      V a = expr();
      if (peek() != ')') throw SyntaxError{};
      ++p_;
      --depth_;
      return a;
    }
    throw SyntaxError{};
  }

  const std::string& s_;
  std::size_t p_ = 0;
  int depth_ = 0;
};

inline void expr_one(const std::uint8_t* bytes, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(bytes), size);
  auto resolve = [](const std::string& name) {
    const auto& vars = expr_vars();
    for (std::size_t i = 0; i < vars.size(); ++i)
      if (name == vars[i].name) return static_cast<int>(i);
    return -1;
  };
  RefExpr::Outcome outcome = RefExpr::Outcome::Value;
  std::int64_t value = 0;
  Expr e;
  bool parsed = false;
  try {
    e = Expr::parse(text, resolve);
    parsed = true;
  } catch (const EvalError& err) {
    // A syntax error quotes the text; a constant expression that fails to
    // evaluate fails here too (it is folded at parse time).
    outcome = std::string(err.what()).rfind("bad expression '", 0) == 0 ? RefExpr::Outcome::Syntax
                                                                        : RefExpr::Outcome::EvalError;
  }
  if (parsed) {
    FuzzEnv env;
    try {
      value = e.eval(env);
      if (e.eval(env) != value) property_failed("two evaluations differ");
    } catch (const EvalError&) {
      outcome = RefExpr::Outcome::EvalError;
    }
  }
  if (text.size() > kExprMaxLength) {
    if (outcome != RefExpr::Outcome::Syntax) property_failed("an expression above the length limit was accepted");
    return;
  }
  RefExpr::Result ref = RefExpr::run(text);
  if (ref.outcome != outcome) property_failed("parser/evaluator and the reference disagree on the outcome");
  if (outcome == RefExpr::Outcome::Value && ref.value != value)
    property_failed("parser/evaluator and the reference disagree on the value");
}

}  // namespace npusim::fuzz
