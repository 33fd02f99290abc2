// Trace loading (trace-format.md): strict JSON reading, kernels, external
// tensors, and the compilation of the program into sim/trace/program.h form.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "sim/json/json_input.h"
#include "sim/json/json_read.h"
#include "sim/json/json_util.h"
#include "sim/json/stream.h"
#include "sim/config/run_options.h"
#include "models/runtime/task.h"
#include "sim/trace/program.h"
#include "sim/trace/json_doc.h"
#include "sim/trace/trace.h"

namespace npusim::trace {

namespace {

using J = nlohmann::ordered_json;
using json_input::check_keys;
using json_input::describe_json;
using json_input::is_annotation_key;
using json_input::pointer_join;
using Resolver = std::function<int(const std::string&)>;
using Keys = std::vector<std::string>;

// "expected one of "a", "b", got ..." for a closed set of strings.
std::string quoted_list(const Keys& options) {
  std::string s;
  for (const std::string& o : options) s += (s.empty() ? "\"" : ", \"") + o + "\"";
  return s;
}

static_assert(kMaxJsonDepth == json_input::kMaxJsonNesting);

bool is_identifier(const std::string& s) {
  if (s.empty() || s == "min" || s == "max") return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

class Loader {
 public:
  Loader(std::string file, Trace& trace) : file_(std::move(file)), t_(trace) {}

  // With `text`, the program list was left out of `root` (an empty list
  // there): its ops are read from the text at `list_at`, one at a time, each
  // compiled (every check, every message as of a whole document) and dropped.
  void load(const J& root, const std::string& default_name, std::shared_ptr<const std::string> text = nullptr,
            std::size_t list_at = 0, bool check_ops = true) {
    object(root, "");
    check_keys(root, file_, "", {"npusim_trace", "name", "run", "kernels", "tensors", "program"});
    const J& version = need(root, "", "npusim_trace");
    if (!version.is_number_integer() || version.get<std::int64_t>() != 1)
      fail("/npusim_trace", "expected 1 (the trace format version), got " + describe_json(version));
    t_.file = file_;
    t_.name = default_name;
    if (const J* n = get(root, "name")) t_.name = nonempty_string(*n, "/name");
    if (const J* run = get(root, "run")) t_.run = config::parse_run_block(*run, file_, "/run");
    const J& kernels = need(root, "", "kernels");
    const J& program = need(root, "", "program");
    load_kernels(kernels, "/kernels");
    if (const J* tensors = get(root, "tensors")) load_tensors(*tensors, "/tensors");
    prog_ = std::make_shared<Program>();
    for (const ExternalTensor& e : t_.tensors) {
      int slot = slot_of(e.name);
      prog_->tensor_slots.push_back(slot);
      bound_[slot] = true;
    }
    prog_->policy_sets.emplace_back();  // the root scope's: carried, no effect
    if (text) {
      list(program, "/program");
      json_input::JsonListCursor ops(*text, list_at);
      for (std::size_t i = 0; check_ops && compile_next(ops, i); ++i) {
      }
      prog_->text = std::move(text);
      prog_->list_at = list_at;
      prog_->ops_checked = check_ops;
    } else {
      compile_block(program, "/program", false);
    }
    t_.program = prog_;
  }

  // A streamed program read again (ProgramReader): `into` as `load` left the
  // program before its first op.
  void begin_stream(const Trace& trace, Program& into) {
    for (const auto& k : trace.kernels) kernels_[k->name] = k.get();
    into = Program{};
    prog_ = std::shared_ptr<Program>(std::shared_ptr<Program>(), &into);  // not owned
    for (const ExternalTensor& e : trace.tensors) {
      int slot = slot_of(e.name);
      prog_->tensor_slots.push_back(slot);
      bound_[slot] = true;
    }
    prog_->policy_sets.emplace_back();
  }

  // Compiles the next op of `ops` (the `i`th) in place of the previous one;
  // false after the last.
  bool compile_next(json_input::JsonListCursor& ops, std::size_t i) {
    Program& p = *prog_;
    p.code.clear();
    p.scopes.clear();
    p.tasks.clear();
    p.reads.clear();
    p.fatals.clear();
    p.lets.clear();
    p.views.clear();
    p.fors.clear();
    p.policy_sets.resize(1);  // the root's declarations carry over
    std::string_view text;
    if (!ops.next(text)) return false;
    // The whole text was accepted (syntax, duplicate keys, nesting): the op parses.
    J op = json_input::parse_accepted(text);
    try {
      compile_op(op, pointer_join("/program", i), false);
    } catch (...) {
      json_input::dismantle(op);
      throw;
    }
    json_input::dismantle(op);
    return true;
  }

 private:
  // ---- typed access ------------------------------------------------------
  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw InputError(file_, path, message);
  }
  [[noreturn]] void expected(const std::string& what, const J& got, const std::string& path) const {
    fail(path, "expected " + what + ", got " + describe_json(got));
  }
  const J& object(const J& v, const std::string& path) const {
    if (!v.is_object()) expected("an object", v, path);
    return v;
  }
  const J& list(const J& v, const std::string& path) const {
    if (!v.is_array()) expected("a list", v, path);
    return v;
  }
  // The string itself, in `v` (callers copy what they keep).
  const std::string& nonempty_string(const J& v, const std::string& path) const {
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) expected("a non-empty string", v, path);
    return v.get_ref<const std::string&>();
  }
  // The member `key` of the object at `parent`, its pointer joined only for the message.
  const std::string& nonempty_string(const J& v, const std::string& parent, std::string_view key) const {
    if (v.is_string() && !v.get_ref<const std::string&>().empty()) return v.get_ref<const std::string&>();
    return nonempty_string(v, pointer_join(parent, key));
  }
  bool boolean(const J& v, const std::string& path) const {
    if (!v.is_boolean()) expected("true or false", v, path);
    return v.get<bool>();
  }
  std::int64_t integer(const J& v, const std::string& path, std::int64_t lo, std::int64_t hi) const {
    std::int64_t i = 0;
    if (!json_input::json_int64(v, i) || i < lo || i > hi) {
      std::string range = hi != kMax ? " in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"
                          : lo != kMin ? " >= " + std::to_string(lo)
                                       : "";
      expected("an integer" + range, v, path);
    }
    return i;
  }
  int index(const J& v, const std::string& path) const {
    return static_cast<int>(integer(v, path, 0, std::numeric_limits<int>::max()));
  }
  // A duration's number: in [0, kMaxDuration] (ns or cycles), so that it stays
  // far inside the simulator's picosecond clock.
  double duration_number(const J& v, const std::string& path) const {
    if (!v.is_number() || !(v.get<double>() >= 0) || !(v.get<double>() <= kMaxDuration))
      expected("a number in [0, 3.6e12]", v, path);
    return v.get<double>();
  }
  // Index of `v` in `options`, or -1.
  static int option_index(const J& v, const Keys& options) {
    if (v.is_string())
      for (std::size_t i = 0; i < options.size(); ++i)
        if (v.get_ref<const std::string&>() == options[i]) return static_cast<int>(i);
    return -1;
  }
  // Index of `v` in `options`.
  int choice(const J& v, const std::string& path, const Keys& options) const {
    const int i = option_index(v, options);
    if (i < 0) expected("one of " + quoted_list(options), v, path);
    return i;
  }
  // The same for the member `key` of the object at `parent`: its pointer is
  // joined only for the message (every op names its "op").
  int choice(const J& v, const std::string& parent, std::string_view key, const Keys& options) const {
    const int i = option_index(v, options);
    return i >= 0 ? i : choice(v, pointer_join(parent, key), options);
  }
  DType dtype(const J& v, const std::string& path) const {
    std::optional<DType> d;
    if (v.is_string()) d = dtype_from_trace_name(v.get<std::string>());
    if (!d) expected(std::string("a dtype (one of: ") + dtype_names_list() + ")", v, path);
    return *d;
  }
  // The member `key` of the object at `parent`, its pointer joined only for the message.
  DType dtype(const J& v, const std::string& parent, std::string_view key) const {
    if (v.is_string())
      if (std::optional<DType> d = dtype_from_trace_name(v.get_ref<const std::string&>())) return *d;
    return dtype(v, pointer_join(parent, key));
  }
  // The key as a string_view: the object's keys are compared by length
  // first, not each with a strlen of `key` (std::string == const char*); a
  // compile looks up a dozen keys per op.
  static const J* get(const J& obj, std::string_view key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  const J& need(const J& obj, const std::string& path, const char* key) const {
    const J* v = get(obj, key);
    if (!v) fail(path, std::string("missing key \"") + key + "\"");
    return *v;
  }
  // `count` keys of `keys` present in `obj`; `first`/`second` the first two.
  static int present(const J& obj, const Keys& keys, std::string* first = nullptr, std::string* second = nullptr) {
    int n = 0;
    for (const std::string& k : keys) {
      if (!obj.contains(k)) continue;
      if (n == 0 && first) *first = k;
      if (n == 1 && second) *second = k;
      ++n;
    }
    return n;
  }

  // ---- expressions ---------------------------------------------------------
  // An integer or an expression string, compiled with `resolve`; `hint` is
  // added when the expression names something `resolve` does not know.
  Expr expression(const J& v, const std::string& path, const Resolver& resolve, const char* hint) const {
    std::int64_t i = 0;
    if (json_input::json_int64(v, i)) return Expr::constant(i);
    if (!v.is_string()) expected("an integer or an expression string", v, path);
    bool unknown = false;
    Resolver tracking = [&](const std::string& name) {
      int slot = resolve(name);
      unknown = unknown || slot < 0;
      return slot;
    };
    try {
      return Expr::parse(v.get<std::string>(), tracking);
    } catch (const EvalError& e) {
      fail(path, std::string(e.what()) + (unknown ? hint : ""));
    }
  }

  // A constant field's value is checked now; others when they are evaluated.
  void check_constant(const IntField& f) const {
    if (!f.expr.is_const()) return;
    std::string err = int_field_error(f, f.expr.const_value());
    if (!err.empty()) fail(f.path, err);
  }

  IntField int_field(const J& v, const std::string& path, const std::string& name,
                     std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                     std::int64_t hi = std::numeric_limits<std::int64_t>::max()) {
    IntField f;
    f.path = path;
    f.name = name;
    f.lo = lo;
    f.hi = hi;
    f.expr = expression(v, path, [this](const std::string& n) { return slot_of(n); }, "");
    for (int slot : f.expr.slots())
      if (!bound_[slot]) fail(path, "name \"" + prog_->slot_names[slot] + "\" is used before it is bound");
    check_constant(f);
    return f;
  }
  // The field `key` of `obj`, or the constant `dflt` when absent.
  IntField int_field_or(const J& obj, const std::string& path, const char* key, std::int64_t dflt,
                        std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                        std::int64_t hi = std::numeric_limits<std::int64_t>::max()) {
    if (const J* v = get(obj, key)) return int_field(*v, pointer_join(path, key), key, lo, hi);
    IntField f;
    f.expr = Expr::constant(dflt);
    f.path = pointer_join(path, key);
    f.name = key;
    f.lo = lo;
    f.hi = hi;
    return f;
  }
  // A list of one integer field per dimension.
  std::vector<IntField> dims(const J& v, const std::string& path, const std::string& name, std::int64_t lo) {
    if (!v.is_array() || v.empty() || v.size() > static_cast<std::size_t>(kMaxDims))
      expected("a list of 1 to " + std::to_string(kMaxDims) + " integers", v, path);
    std::vector<IntField> out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(int_field(v[i], pointer_join(path, i), name, lo));
    return out;
  }

  // ---- kernels -------------------------------------------------------------
  Expr phase_expr(const J& v, const std::string& path, const std::string& name, std::int64_t lo,
                  std::int64_t hi = std::numeric_limits<std::int64_t>::max()) const {
    IntField f;
    f.path = path;
    f.name = name;
    f.lo = lo;
    f.hi = hi;
    f.expr = expression(
        v, path,
        [](const std::string& n) { return n == "block_idx" ? 0 : n == "block_num" ? 1 : -1; },
        " (kernel phases may only use block_idx and block_num)");
    check_constant(f);
    return f.expr;
  }

  Duration duration(const J& v, const std::string& path) const {
    object(v, path);
    check_keys(v, file_, path, {"ns", "cycles", "mean_ns", "sigma_ns", "ns_by_block"});
    int forms = present(v, {"ns"}) + present(v, {"cycles"}) + (present(v, {"mean_ns", "sigma_ns"}) > 0) +
                present(v, {"ns_by_block"});
    if (forms != 1)
      fail(path, R"(expected exactly one of {"ns": N}, {"cycles": N}, {"mean_ns": M, "sigma_ns": S} or {"ns_by_block": [N, ...]})");
    Duration d;
    if (const J* list = get(v, "ns_by_block")) {  // npusim extension: a capture's per-block durations
      const std::string lp = pointer_join(path, "ns_by_block");
      if (!list->is_array() || list->empty() || list->size() > static_cast<std::size_t>(kMaxBlockNum))
        expected("a list of 1 to " + std::to_string(kMaxBlockNum) + " numbers", *list, lp);
      d.kind = Duration::Kind::ByBlock;
      for (std::size_t i = 0; i < list->size(); ++i) d.by_block.push_back(duration_number((*list)[i], pointer_join(lp, i)));
      return d;
    }
    if (const J* ns = get(v, "ns")) {
      d.kind = Duration::Kind::Ns;
      d.a = duration_number(*ns, pointer_join(path, "ns"));
    } else if (const J* cycles = get(v, "cycles")) {
      d.kind = Duration::Kind::Cycles;
      d.a = duration_number(*cycles, pointer_join(path, "cycles"));
    } else {
      d.kind = Duration::Kind::Normal;
      d.a = duration_number(need(v, path, "mean_ns"), pointer_join(path, "mean_ns"));
      d.b = duration_number(need(v, path, "sigma_ns"), pointer_join(path, "sigma_ns"));
    }
    return d;
  }

  // load / store: {"arg", "offset", "bytes"[, "cache"]}
  void transfer(const J& v, const std::string& path, bool load, Phase& p) const {
    object(v, path);
    check_keys(v, file_, path,
               load ? Keys{"arg", "offset", "bytes", "cache", "peer_offset"} : Keys{"arg", "offset", "bytes", "peer_offset"});
    if (const J* peer = get(v, "peer_offset")) {  // npusim extension: a peer chip's memory (an L3 dispatch)
      p.peer = true;
      p.peer_offset = peer_offset(*peer, pointer_join(path, "peer_offset"));
      if (get(v, "cache")) fail(pointer_join(path, "cache"), "a load of a peer chip's memory has no cache policy");
    }
    p.arg = index(need(v, path, "arg"), pointer_join(path, "arg"));
    const J* offset = get(v, "offset");
    p.offset = offset ? phase_expr(*offset, pointer_join(path, "offset"), "offset", 0, kMaxTransferBytes)
                      : Expr::constant(0);
    p.bytes = phase_expr(need(v, path, "bytes"), pointer_join(path, "bytes"), "bytes", 0, kMaxTransferBytes);
    if (const J* cache = get(v, "cache"))
      p.cache = choice(*cache, pointer_join(path, "cache"), {"default", "bypass"}) ? CacheMode::Bypass
                                                                                  : CacheMode::Default;
    else if (load)
      p.cache = CacheMode::Inherit;
  }

  // A peer chip, counted from this one: (rank + k) mod chips; 0 is the chip itself.
  int peer_offset(const J& v, const std::string& path) const {
    const std::int64_t k = integer(v, path, -kMaxPeerOffset, kMaxPeerOffset);
    if (k == 0) fail(path, "expected a peer chip's offset from this chip's rank (non-zero; 0 is the chip itself)");
    return static_cast<int>(k);
  }

  // notify: {"peer_offset": k, "flag": F}; wait_flag: {"flag": F, "count": n} (npusim extensions).
  void signal(const J& v, const std::string& path, bool notify, Phase& p) const {
    object(v, path);
    check_keys(v, file_, path, notify ? Keys{"peer_offset", "flag"} : Keys{"flag", "count"});
    p.kind = notify ? PhaseKind::Notify : PhaseKind::WaitFlag;
    p.flag = static_cast<int>(integer(need(v, path, "flag"), pointer_join(path, "flag"), 0, kMaxFlag));
    if (notify) {
      p.peer_offset = peer_offset(need(v, path, "peer_offset"), pointer_join(path, "peer_offset"));
    } else {
      p.count = integer(need(v, path, "count"), pointer_join(path, "count"), 1, std::numeric_limits<std::int32_t>::max());
    }
  }

  void syncall(const J& v, const std::string& path, Phase& p) const {
    object(v, path);
    check_keys(v, file_, path, {"mode", "core_type", "workspace_arg", "used_cores"});
    if (const J* mode = get(v, "mode"))
      p.sync_mode = choice(*mode, pointer_join(path, "mode"), {"hard", "soft"}) ? SyncMode::Soft : SyncMode::Hard;
    if (const J* ct = get(v, "core_type"))
      p.sync_core_type = static_cast<CoreType>(choice(*ct, pointer_join(path, "core_type"), {"aic", "aiv", "mix"}));
    if (p.sync_mode == SyncMode::Hard) {
      std::string key;
      if (present(v, {"workspace_arg", "used_cores"}, &key))
        fail(pointer_join(path, key), "\"" + key + "\" is only allowed with mode \"soft\"");
      return;
    }
    p.workspace_arg = index(need(v, path, "workspace_arg"), pointer_join(path, "workspace_arg"));
    p.used_cores = phase_expr(need(v, path, "used_cores"), pointer_join(path, "used_cores"), "used_cores", 1);
  }

  // One phase, or a `repeat` of a body of phases (expanded here), appended to `out`.
  void phases(const J& v, const std::string& path, std::vector<Phase>& out, int depth) const {
    static const Keys kinds = {"compute", "load",  "store",  "fence",     "cacheinvalid", "syncall",
                               "push",    "pop",   "notify", "wait_flag", "repeat",       "free"};
    object(v, path);
    check_keys(v, file_, path, kinds);
    std::string kind, other;
    int n = present(v, kinds, &kind, &other);
    if (n == 0) fail(path, "expected a phase: an object with one of the keys " + json_input::join_names(kinds));
    if (n > 1) fail(path, "a phase has exactly one key, got \"" + kind + "\" and \"" + other + "\"");
    const J& body = v.at(kind);
    const std::string bp = pointer_join(path, kind);
    if (kind == "repeat") {  // npusim extension: {"repeat": {"count": N, "body": [phases]}}
      object(body, bp);
      check_keys(body, file_, bp, {"count", "body"});
      if (depth >= kMaxRepeatNesting) fail(bp, "repeats nested deeper than " + std::to_string(kMaxRepeatNesting));
      const std::int64_t count = integer(need(body, bp, "count"), pointer_join(bp, "count"), 1, kMaxRepeatCount);
      const std::string lp = pointer_join(bp, "body");
      const J& inner = list(need(body, bp, "body"), lp);
      const std::size_t first = out.size();
      for (std::size_t i = 0; i < inner.size(); ++i) phases(inner[i], pointer_join(lp, i), out, depth + 1);
      const std::size_t len = out.size() - first;
      if (len * static_cast<std::size_t>(count) + first > kMaxLanePhases)
        fail(bp, "a lane may have at most " + std::to_string(kMaxLanePhases) + " phases once repeats are expanded");
      if (len * static_cast<std::size_t>(count) + first + phases_before_ > kMaxTracePhases)
        fail(bp, trace_phases_message());
      for (std::int64_t r = 1; r < count; ++r)
        for (std::size_t i = 0; i < len; ++i) out.push_back(out[first + i]);
      return;
    }
    if (out.size() >= kMaxLanePhases)
      fail(path, "a lane may have at most " + std::to_string(kMaxLanePhases) + " phases once repeats are expanded");
    if (out.size() + phases_before_ >= kMaxTracePhases) fail(path, trace_phases_message());
    Phase p;
    p.path = path;
    if (kind == "compute") {
      p.kind = PhaseKind::Compute;
      p.duration = duration(body, bp);
    } else if (kind == "load" || kind == "store") {
      p.kind = kind == "load" ? PhaseKind::Load : PhaseKind::Store;
      transfer(body, bp, kind == "load", p);
    } else if (kind == "fence") {
      p.kind = PhaseKind::Fence;
      check_keys(object(body, bp), file_, bp, {});
    } else if (kind == "cacheinvalid") {
      p.kind = PhaseKind::CacheInvalid;
      if (body == "all") {
        p.all = true;
      } else {
        if (!body.is_object()) expected(R"("all" or {"arg": i})", body, bp);
        check_keys(body, file_, bp, {"arg"});
        p.arg = index(need(body, bp, "arg"), pointer_join(bp, "arg"));
      }
    } else if (kind == "push" || kind == "pop" || kind == "free") {  // npusim extension: a mix kernel's pipes
      object(body, bp);
      check_keys(body, file_, bp,
                 kind == "push" ? Keys{"to", "bytes", "pipe", "global"}
                 : kind == "pop" ? Keys{"bytes", "pipe", "global"}
                                 : Keys{"pipe"});
      p.kind = kind == "push" ? PhaseKind::Push : kind == "pop" ? PhaseKind::Pop : PhaseKind::Free;
      if (const J* name = get(body, "pipe")) p.pipe = pipe_index(*name, pointer_join(bp, "pipe"));
      if (const J* g = get(body, "global")) {
        const std::string gp = pointer_join(bp, "global");
        if (!g->is_boolean()) expected("true or false", *g, gp);
        p.global = g->get<bool>();
        if (p.global && get(body, "bytes"))
          fail(pointer_join(bp, "bytes"), std::string("a GlobalTensor ") + (kind == "push" ? "TPUSH records only (the kernel "
                                          "stored the slot itself)" : "TPOP gives the slot's address and moves no data") +
                                          ": give no \"bytes\"");
      }
      const J* bytes = get(body, "bytes");
      p.bytes = bytes ? phase_expr(*bytes, pointer_join(bp, "bytes"), "bytes", 0, kMaxTransferBytes)
                      : Expr::constant(0);
      if (kind == "push") {
        p.push_to = kMaskAiv0;
        if (const J* to = get(body, "to")) {
          if (p.pipe >= 0)
            fail(pointer_join(bp, "to"), "\"to\" is only for the unnamed pipe (cross_core_slots): a named pipe's push "
                                         "reaches the other side of its direction (ffts_cross_core_sync mode 2)");
          const int c = choice(*to, pointer_join(bp, "to"), {"aiv0", "aiv1", "both"});
          p.push_to = c == 0 ? kMaskAiv0 : c == 1 ? kMaskAiv1 : static_cast<std::uint8_t>(kMaskAiv0 | kMaskAiv1);
        }
      }
    } else if (kind == "notify" || kind == "wait_flag") {
      signal(body, bp, kind == "notify", p);
    } else {
      p.kind = PhaseKind::Syncall;
      syncall(body, bp, p);
    }
    out.push_back(std::move(p));
  }

  static std::string trace_phases_message() {
    return "the kernels may have at most " + std::to_string(kMaxTracePhases) +
           " phases together once repeats are expanded (each costs memory for the whole run)";
  }

  // Pushes and pops pair up: the AIC lane pushes to each AIV lane exactly as
  // many tiles as that lane pops (a mismatch would leave a lane waiting for
  // ever), and nothing else pushes or pops.
  // With both AIV lanes a push goes to both: PTO-ISA's TPUSH sets the data
  // flag of both AIVs (ffts_cross_core_sync mode 2 from the AIC) and waits for
  // both to free (TPush.hpp TPipe::Producer). A kernel that pushes or pops
  // names its slot count: TPipe takes SlotNum as a template argument, with no
  // default (PTOAS picks 8 for a one-way pipe when pypto's slot_num is omitted).
  void check_unnamed_pipe(const KernelDef& k, const std::string& path) const {
    int pushed[kNumLanes] = {0, 0, 0};
    bool uses_pipe = false;
    const bool paired = k.lanes[kLaneAiv0].active && k.lanes[kLaneAiv1].active;
    for (int l = 0; l < kNumLanes; ++l)
      for (const Phase& p : k.lanes[l].phases) {
        if (p.pipe >= 0) continue;  // a named pipe's (check_named_pipes)
        if (p.kind == PhaseKind::Push && (k.core != CoreType::MIX || l != kLaneAic))
          fail(p.path, "push is only allowed in the aic lane of a mix kernel (the AIC -> AIV pipe)");
        if ((p.kind == PhaseKind::Pop || p.kind == PhaseKind::Free) && (k.core != CoreType::MIX || l == kLaneAic))
          fail(p.path, std::string(phase_key(p.kind)) + " is only allowed in an AIV lane of a mix kernel (the AIC -> AIV pipe)");
        if (p.kind == PhaseKind::Push && paired && p.push_to != (kMaskAiv0 | kMaskAiv1))
          fail(pointer_join(p.path, "push"),
               "in a kernel with both AIV lanes a push goes to \"both\" (\"to\": \"both\"): TPUSH sets the data "
               "flag of both AIVs and waits for both to free the slots");
        uses_pipe = uses_pipe || p.kind == PhaseKind::Push || p.kind == PhaseKind::Pop || p.kind == PhaseKind::Free;
        if (p.kind == PhaseKind::Push)
          for (int t = kLaneAiv0; t <= kLaneAiv1; ++t)
            if (p.push_to & (1u << t)) ++pushed[t];
      }
    if (uses_pipe && k.cross_core_slots < 1)
      fail(path, "a mix kernel that pushes or pops must give \"cross_core_slots\" (the pipe's slot_num, 1..1024: "
                 "PTO-ISA's TPipe has no default; PTOAS uses 8 for a one-way pipe when pl.cross_core_slot omits it)");
    for (int t = kLaneAiv0; t <= kLaneAiv1; ++t) {
      int popped = 0;
      for (const Phase& p : k.lanes[t].phases) popped += p.kind == PhaseKind::Pop && p.pipe < 0;
      if (pushed[t] == popped) continue;
      const char* lane = t == kLaneAiv0 ? "aiv0" : "aiv1";
      if (!k.lanes[t].active)
        fail(path, std::string("the aic lane pushes ") + std::to_string(pushed[t]) + " tile(s) to " + lane +
                       ", which is not a lane of this kernel");
      fail(path, std::string("lane ") + lane + " pops " + std::to_string(popped) + " tile(s) but the aic lane pushes " +
                     std::to_string(pushed[t]) + " to it");
    }
  }

  // The named pipes ("pipes"): each phase on the side its direction allows
  // (TPush.hpp: a C2V pipe's producer is the cube, a V2C or V2C_CTRL pipe's
  // the vectors, DIR_BOTH either way), a TFREE after the pop it frees, and, in
  // a mix kernel, the records and pops of each ring pairing up: every
  // consumer lane pops what every producer lane records (an AIC waiting on
  // the AIVs' flag waits for all of them; a shortfall would hang the block).
  void check_named_pipes(const KernelDef& k) const {
    const bool mix = k.core == CoreType::MIX;
    for (int l = 0; l < kNumLanes; ++l) {
      const bool aic = mix ? l == kLaneAic : k.core == CoreType::AIC;
      std::vector<int> last(k.pipes.size(), 0);  // per pipe: 0 nothing to free, 1 a tile pop, 2 a GlobalTensor pop
      for (const Phase& p : k.lanes[l].phases) {
        if (p.pipe < 0 || p.pipe_drain) continue;
        if (p.kind != PhaseKind::Push && p.kind != PhaseKind::Pop && p.kind != PhaseKind::Free) continue;
        const PipeDef& d = k.pipes[static_cast<std::size_t>(p.pipe)];
        const bool produce = p.kind == PhaseKind::Push;
        const bool ok = d.dir == PipeDir::Both || (d.dir == PipeDir::C2V ? produce == aic : produce != aic);
        if (!ok)
          fail(pointer_join(p.path, phase_key(p.kind)),
               std::string(phase_key(p.kind)) + " on pipe \"" + d.name + "\" (" + pipe_dir_name(d.dir) + ", " +
                   (d.dir == PipeDir::C2V ? "the AIC produces, the AIVs consume" : "the AIVs produce, the AIC consumes") +
                   ") is only allowed in " + ((produce == (d.dir == PipeDir::C2V)) ? "the aic lane" : "an aiv lane") +
                   (mix ? "" : " (an aic or aiv kernel is one lane)"));
        if (p.global && d.dir == PipeDir::V2CCtrl)
          fail(pointer_join(pointer_join(p.path, phase_key(p.kind)), "global"),
               "pipe \"" + d.name + "\" is v2c_ctrl: PTO-ISA's TPOP and TFREE with a GlobalTensor support only c2v, v2c "
               "and both (TPop.hpp, TFree.hpp static_assert)");
        int& st = last[static_cast<std::size_t>(p.pipe)];
        if (p.kind == PhaseKind::Pop) {
          if (st == 2)
            fail(p.path, "the GlobalTensor pop before it on pipe \"" + d.name + "\" is not freed: TFREE frees the "
                         "slot of the latest pop only, so that slot's free would be lost (add {\"free\": {\"pipe\": \"" +
                         d.name + "\"}} after it)");
          st = p.global ? 2 : 1;
        } else if (p.kind == PhaseKind::Free) {
          if (st == 0)
            fail(p.path, "free on pipe \"" + d.name + "\" with no pop before it to free (TFREE releases the slot "
                         "the lane's latest TPOP gave)");
          st = 0;
        }
      }
      for (std::size_t i = 0; i < last.size(); ++i)
        if (last[i] == 2)
          fail(k.path, "lane " + std::string(l == kLaneAic ? "aic" : l == kLaneAiv0 ? "aiv0" : "aiv1") +
                           " ends with a GlobalTensor pop on pipe \"" + k.pipes[i].name +
                           "\" it never frees (add {\"free\": {\"pipe\": \"" + k.pipes[i].name + "\"}})");
    }
    if (!mix) return;  // an incore: paired when a MixedKernels submit composes it (check_mix_pipes)
    check_mix_pipes(k, file_);
  }

 public:
  // The pairing check of a mix kernel's named pipes (also run on a MIX
  // kernel a scene composes of incores).
  static void check_mix_pipes(const KernelDef& k, const std::string& file) {
    static const char* const names[kNumLanes] = {"aic", "aiv0", "aiv1"};
    for (std::size_t pi = 0; pi < k.pipes.size(); ++pi) {
      const PipeDef& d = k.pipes[pi];
      for (int ring = 0; ring < 2; ++ring) {  // 0: C->V, 1: V->C
        int records[kNumLanes] = {0, 0, 0}, pops[kNumLanes] = {0, 0, 0};
        for (int l = 0; l < kNumLanes; ++l)
          for (const Phase& p : k.lanes[l].phases) {
            if (p.pipe != static_cast<int>(pi) || p.pipe_drain) continue;
            const bool c2v = (l == kLaneAic) == (p.kind == PhaseKind::Push);
            if (c2v != (ring == 0)) continue;
            if (p.kind == PhaseKind::Push) ++records[l];
            if (p.kind == PhaseKind::Pop) ++pops[l];
          }
        const bool any = records[0] + records[1] + records[2] + pops[0] + pops[1] + pops[2] > 0;
        if (!any) continue;
        std::vector<int> prod, cons;
        for (int l = 0; l < kNumLanes; ++l) {
          if (!k.lanes[l].active) continue;
          ((l == kLaneAic) == (ring == 0) ? prod : cons).push_back(l);
        }
        const std::string ring_text = std::string(ring == 0 ? "C->V" : "V->C") + " ring of pipe \"" + d.name + "\"";
        if (prod.empty() || cons.empty())
          throw InputError(file, d.path, "the " + ring_text + " is used but the kernel has no " +
                                             (prod.empty() == (ring == 0) ? "aic" : "aiv") + " lane to " +
                                             (prod.empty() ? "push on it" : "pop from it"));
        const int want = records[prod.front()];
        for (int l : prod)
          if (records[l] != want)
            throw InputError(file, d.path, std::string("on the ") + ring_text + " lane " + names[l] + " pushes " +
                                               std::to_string(records[l]) + " tile(s) and lane " + names[prod.front()] +
                                               " " + std::to_string(want) +
                                               ": the AIC's wait completes only once every AIV has set the flag");
        for (int l : cons)
          if (pops[l] != want)
            throw InputError(file, d.path, std::string("on the ") + ring_text + " lane " + names[l] + " pops " +
                                               std::to_string(pops[l]) + " tile(s) but " + (ring == 0 ? "the aic lane" : "each aiv lane") +
                                               " pushes " + std::to_string(want) + " (a pop without its push waits for ever)");
      }
    }
  }

 private:
  void check_pipes(const KernelDef& k, const std::string& path) const {
    check_unnamed_pipe(k, path);
    check_named_pipes(k);
  }

  // A phase's "pipe": the index of a pipe the kernel being loaded declares.
  int pipe_index(const J& v, const std::string& path) const {
    if (!v.is_string()) expected("a pipe name (a string)", v, path);
    const std::string name = v.get<std::string>();
    const std::vector<PipeDef>& pipes = *cur_pipes_;
    for (std::size_t i = 0; i < pipes.size(); ++i)
      if (pipes[i].name == name) return static_cast<int>(i);
    std::string declared;
    for (const PipeDef& d : pipes) declared += (declared.empty() ? "\"" : ", \"") + d.name + "\"";
    fail(path, "unknown pipe \"" + name + "\": " +
                   (declared.empty() ? std::string("the kernel declares no pipes (\"pipes\": {\"") + name +
                                           "\": {\"dir\": \"c2v\", \"slots\": 2}})"
                                     : "the kernel declares " + declared));
  }

  // "pipes": {"NAME": {"dir": "c2v"|"v2c"|"both"|"v2c_ctrl", "slots": N, "flag_id": F}}:
  // TPipe<FlagID, DirType, SlotSize, SlotNum>. FlagID + 1 (DIR_BOTH: + 3)
  // must stay below 16 (TPush.hpp static_assert); two pipes of a kernel may
  // not share a flag.
  std::vector<PipeDef> pipe_defs(const J& v, const std::string& path) const {
    object(v, path);
    std::vector<PipeDef> out;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (is_annotation_key(it.key())) continue;
      const std::string pp = pointer_join(path, it.key());
      const J& d = object(it.value(), pp);
      check_keys(d, file_, pp, {"dir", "slots", "flag_id"});
      PipeDef p;
      p.name = it.key();
      p.path = pp;
      if (p.name.empty()) fail(pp, "a pipe needs a name");
      static const PipeDir dirs[] = {PipeDir::C2V, PipeDir::V2C, PipeDir::Both, PipeDir::V2CCtrl};
      p.dir = dirs[choice(need(d, pp, "dir"), pointer_join(pp, "dir"), {"c2v", "v2c", "both", "v2c_ctrl"})];
      p.slots = static_cast<int>(integer(need(d, pp, "slots"), pointer_join(pp, "slots"), 1, 1024));
      if (const J* f = get(d, "flag_id")) {
        const std::string fp = pointer_join(pp, "flag_id");
        p.flag_id = static_cast<int>(integer(*f, fp, 0, 16 - p.flags_used()));
        for (const PipeDef& q : out)
          if (q.flag_id >= 0 && q.flag_id < p.flag_id + p.flags_used() && p.flag_id < q.flag_id + q.flags_used())
            fail(fp, "pipe \"" + p.name + "\" uses flags " + std::to_string(p.flag_id) + ".." +
                         std::to_string(p.flag_id + p.flags_used() - 1) + " and pipe \"" + q.name + "\" flags " +
                         std::to_string(q.flag_id) + ".." + std::to_string(q.flag_id + q.flags_used() - 1) +
                         ": two pipes sharing an FFTS flag would take each other's signals");
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  // A lane (or a single-lane kernel's definition): exactly one of duration/body.
  LaneBody lane(const J& v, const std::string& path) const {
    if (present(v, {"duration", "body"}) != 1) fail(path, "expected exactly one of \"duration\" or \"body\"");
    LaneBody l;
    l.active = true;
    if (const J* d = get(v, "duration")) {
      Phase p;
      p.kind = PhaseKind::Compute;
      p.path = pointer_join(path, "duration");
      p.duration = duration(*d, p.path);
      l.phases.push_back(std::move(p));
      if (++phases_before_ > kMaxTracePhases) fail(path, trace_phases_message());
      return l;
    }
    const std::string bp = pointer_join(path, "body");
    const J& body = list(v.at("body"), bp);
    for (std::size_t i = 0; i < body.size(); ++i) phases(body[i], pointer_join(bp, i), l.phases, 0);
    phases_before_ += l.phases.size();
    return l;
  }

  void mix_lanes(const J& v, const std::string& path, KernelDef& k) const {
    object(v, path);
    check_keys(v, file_, path, {"aic", "aiv", "aiv0", "aiv1"});
    std::string split;
    if (v.contains("aiv") && present(v, {"aiv0", "aiv1"}, &split))
      fail(pointer_join(path, split), "\"aiv\" (both AIV lanes) cannot be combined with \"" + split + "\"");
    auto lane_at = [&](const char* key) {
      const std::string lp = pointer_join(path, key);
      const J& l = object(v.at(key), lp);
      check_keys(l, file_, lp, {"duration", "body", "func_id"});
      LaneBody b = lane(l, lp);
      // npusim extension: the incore a lane of a composed MIX task runs (deps.json's kernel_ids).
      if (const J* f = get(l, "func_id")) b.func_id = index(*f, pointer_join(lp, "func_id"));
      return b;
    };
    if (v.contains("aic")) k.lanes[kLaneAic] = lane_at("aic");
    if (v.contains("aiv")) k.lanes[kLaneAiv0] = k.lanes[kLaneAiv1] = lane_at("aiv");
    if (v.contains("aiv0")) k.lanes[kLaneAiv0] = lane_at("aiv0");
    if (v.contains("aiv1")) k.lanes[kLaneAiv1] = lane_at("aiv1");
    if (k.active_mask() == 0) fail(path, "a mix kernel needs at least one lane (aic, aiv, aiv0 or aiv1)");
    if (k.active_mask() == kMaskAiv1) std::swap(k.lanes[kLaneAiv0], k.lanes[kLaneAiv1]);  // runtime rule
  }

  // (public: scene incores are kernel definitions)
 public:
  void load_kernels(const J& v, const std::string& path) {
    object(v, path);
    std::unordered_map<int, std::string> by_id;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (is_annotation_key(it.key())) continue;
      const std::string kp = pointer_join(path, it.key());
      const J& kv = object(it.value(), kp);
      auto k = std::make_unique<KernelDef>();
      k->name = it.key();
      k->path = kp;
      k->core = static_cast<CoreType>(choice(need(kv, kp, "core"), pointer_join(kp, "core"), {"aic", "aiv", "mix"}));
      bool mix = k->core == CoreType::MIX;
      check_keys(kv, file_, kp,
                 mix ? Keys{"func_id", "core", "lanes", "cross_core_slots", "pipes"}
                     : Keys{"func_id", "core", "duration", "body", "pipes"});
      if (const J* pipes = get(kv, "pipes")) k->pipes = pipe_defs(*pipes, pointer_join(kp, "pipes"));
      cur_pipes_ = &k->pipes;
      const std::string fp = pointer_join(kp, "func_id");
      k->func_id = index(need(kv, kp, "func_id"), fp);
      auto [prev, fresh] = by_id.emplace(k->func_id, k->name);
      if (!fresh)
        fail(fp, "func_id " + std::to_string(k->func_id) + " is already used by kernel \"" + prev->second + "\"");
      if (mix)
        mix_lanes(need(kv, kp, "lanes"), pointer_join(kp, "lanes"), *k);
      else
        k->lanes[k->core == CoreType::AIC ? kLaneAic : kLaneAiv0] = lane(kv, kp);
      if (const J* slots = get(kv, "cross_core_slots"))
        k->cross_core_slots = static_cast<int>(integer(*slots, pointer_join(kp, "cross_core_slots"), 1, 1024));
      check_pipes(*k, kp);
      add_pipe_drain(*k);
      kernels_[k->name] = k.get();
      t_.kernels.push_back(std::move(k));
    }
  }

 private:

  // ---- external tensors ----------------------------------------------------
  // An element's value: an integer; for a float dtype also a number with a
  // fraction or an exponent, stored as the dtype's bit pattern (an integer
  // there is taken as the bit pattern itself), as the device's memory holds it.
  std::int64_t element_value(const J& v, DType d, const std::string& path) const {
    if (dtype_is_float(d) && v.is_number_float()) return float_bits(v.get<double>(), d);
    return integer(v, path, kMin, kMax);
  }

  void load_tensors(const J& v, const std::string& path) {
    object(v, path);
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (is_annotation_key(it.key())) continue;
      t_.tensors.push_back(tensor_def(it.value(), it.key(), pointer_join(path, it.key())));
    }
  }

 public:
  ExternalTensor tensor_def(const J& value, const std::string& name, const std::string& tp) const {
    const J& tv = object(value, tp);
    check_keys(tv, file_, tp, {"shape", "dtype", "data", "fill"});
    {
      ExternalTensor e;
      e.name = name;
      e.path = tp;
      const std::string sp = pointer_join(tp, "shape");
      const J& shape = need(tv, tp, "shape");
      if (!shape.is_array() || shape.empty() || shape.size() > static_cast<std::size_t>(kMaxDims))
        expected("a list of 1 to " + std::to_string(kMaxDims) + " integers", shape, sp);
      for (std::size_t d = 0; d < shape.size(); ++d) e.shape.push_back(integer(shape[d], pointer_join(sp, d), 1, kMax));
      const std::int64_t numel = checked_numel(e.shape.data(), e.shape.size());
      if (numel < 0) fail(sp, too_many_elements());
      e.dtype = dtype(need(tv, tp, "dtype"), pointer_join(tp, "dtype"));
      if (tv.contains("data") && tv.contains("fill")) fail(tp, "\"data\" and \"fill\" are exclusive: give one");
      if (const J* fill = get(tv, "fill")) e.fill = element_value(*fill, e.dtype, pointer_join(tp, "fill"));
      if (const J* data = get(tv, "data")) {
        const std::string dp = pointer_join(tp, "data");
        list(*data, dp);
        if (static_cast<std::int64_t>(data->size()) != numel)
          fail(dp, "expected " + std::to_string(numel) + " values (one per element), got " +
                       std::to_string(data->size()));
        e.data.reserve(data->size());
        for (std::size_t i = 0; i < data->size(); ++i)
          e.data.push_back(element_value((*data)[i], e.dtype, pointer_join(dp, i)));
      }
      return e;
    }
  }

 private:

  // ---- program ---------------------------------------------------------------
  int slot_of(const std::string& name) {
    // Found first: emplace would build (allocate) a node for every use of a known name.
    if (auto known = slots_.find(name); known != slots_.end()) return known->second;
    auto [it, fresh] = slots_.emplace(name, static_cast<int>(prog_->slot_names.size()));
    if (fresh) {
      prog_->slot_names.push_back(name);
      bound_.push_back(false);
    }
    return it->second;
  }
  // A name about to be bound (marked bound after the op's uses are checked).
  int target(const J& v, const std::string& path) { return slot_of(nonempty_string(v, path)); }
  // An integer variable: a name expressions can use.
  int int_target(const J& v, const std::string& path) {
    if (!v.is_string() || !is_identifier(v.get<std::string>()))
      expected("a variable name (letters, digits and _, not starting with a digit, not min or max)", v, path);
    return slot_of(v.get<std::string>());
  }
  NameRef use(const J& v, const std::string& path) {
    NameRef r{slot_of(nonempty_string(v, path)), path};
    if (!bound_[r.slot]) fail(path, "name \"" + v.get<std::string>() + "\" is used before it is bound");
    return r;
  }
  void emit(Code code, std::size_t index) { prog_->code.push_back({code, static_cast<std::uint32_t>(index)}); }

  void compile_block(const J& v, const std::string& path, bool manual) {
    list(v, path);
    for (std::size_t i = 0; i < v.size(); ++i) compile_op(v[i], pointer_join(path, i), manual);
  }

  void compile_op(const J& v, const std::string& path, bool manual) {
    static const Keys ops = {"scope", "alloc", "view", "submit", "dummy", "read", "for", "let", "set", "fatal",
                             "set_cache_policy"};
    object(v, path);
    const int op = choice(need(v, path, "op"), path, "op", ops);
    switch (op) {
      case 0: return compile_scope(v, path, manual);
      case 1: return compile_alloc(v, path);
      case 2: return compile_view(v, path);
      case 3: return compile_task(v, path, OrchOp::Kind::Submit);
      case 4: return compile_task(v, path, OrchOp::Kind::Dummy);
      case 5: return compile_read(v, path, false);
      case 6: return compile_for(v, path, manual);
      case 7: return compile_let(v, path);
      case 8: return compile_read(v, path, true);
      case 9: return compile_fatal(v, path);
      default: return compile_cache_policy(v, path);
    }
  }

  void compile_scope(const J& v, const std::string& path, bool manual) {
    static const Keys keys = {"op", "mode", "site", "level", "body"};
    check_keys(v, file_, path, keys);
    ScopeOp s;
    s.path = path;
    if (const J* mode = get(v, "mode"))
      s.mode = choice(*mode, pointer_join(path, "mode"), {"auto", "manual"}) ? ScopeMode::Manual : ScopeMode::Auto;
    if (manual && s.mode == ScopeMode::Auto)
      fail(path, "an auto scope may not be nested inside a manual scope (runtime: INVALID_ARGS)");
    ++scope_ordinal_;
    const J* site = get(v, "site");
    s.site = site ? nonempty_string(*site, pointer_join(path, "site")) : t_.name + ":" + std::to_string(scope_ordinal_);
    if (const J* level = get(v, "level")) s.level = level_name(*level, pointer_join(path, "level"));
    const J& body = need(v, path, "body");
    PolicySet set;
    set.parent = policy_set_;
    set.lowers = s.level == "core_group" || s.level == "spmd";
    s.policy_set = static_cast<int>(prog_->policy_sets.size());
    prog_->policy_sets.push_back(std::move(set));
    std::size_t k = prog_->scopes.size();
    const int outer_set = policy_set_, outer_target = policy_target_;
    policy_set_ = policy_target_ = prog_->scopes.emplace_back(std::move(s)).policy_set;
    emit(Code::ScopeBegin, k);
    compile_block(body, pointer_join(path, "body"), manual || prog_->scopes[k].mode == ScopeMode::Manual);
    emit(Code::ScopeEnd, k);
    policy_set_ = outer_set;
    policy_target_ = outer_target;
  }

  // A scope's `level`: pl.at's level in lower case ("core_group"), or "spmd"
  // for a pl.spmd body; only those two are kernel scopes.
  std::string level_name(const J& v, const std::string& path) const {
    const std::string s = nonempty_string(v, path);
    for (char c : s)
      if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
        expected("a level name in lower case (\"core_group\", \"spmd\", ...)", v, path);
    return s;
  }

  // {"op": "set_cache_policy", "tensor": NAME, "policy": "bypass"|"default"}:
  // pl.set_cache_policy, a statement of its scope's own body (seed 000_*.txt,
  // "让流式操作数绕过缓存"), wherever in the body: it covers every load of
  // the tensor by the scope's kernels, before or after it.
  void compile_cache_policy(const J& v, const std::string& path) {
    check_keys(v, file_, path, {"op", "tensor", "policy"});
    if (policy_target_ < 0)
      fail(path, "set_cache_policy must be a statement of a scope's own body, not of a for loop inside it "
                 "(pl.set_cache_policy is a top-level statement of its pl.at / pl.spmd body)");
    CachePolicyDecl d;
    d.path = path;
    d.tensor = use(need(v, path, "tensor"), pointer_join(path, "tensor"));
    d.bypass = choice(need(v, path, "policy"), pointer_join(path, "policy"), {"default", "bypass"}) == 1;
    PolicySet& set = prog_->policy_sets[static_cast<std::size_t>(policy_target_)];
    for (const CachePolicyDecl& o : set.decls)
      if (o.tensor.slot == d.tensor.slot)
        fail(pointer_join(path, "tensor"), "tensor \"" + prog_->slot_names[static_cast<std::size_t>(d.tensor.slot)] +
                                               "\" already has a cache policy in this scope (at " + o.path + ")");
    prog_->policies_lower = prog_->policies_lower || set.lowers;
    set.decls.push_back(std::move(d));
  }

  void compile_for(const J& v, const std::string& path, bool manual) {
    check_keys(v, file_, path, {"op", "var", "from", "to", "step", "body"});
    ForOp f;
    f.path = path;
    f.from = int_field_or(v, path, "from", 0);
    f.to = int_field(need(v, path, "to"), pointer_join(path, "to"), "to");
    f.step = int_field_or(v, path, "step", 1);
    f.step.nonzero = true;
    check_constant(f.step);
    f.var = int_target(need(v, path, "var"), pointer_join(path, "var"));
    const J& body = need(v, path, "body");
    std::size_t k = prog_->fors.size();
    prog_->fors.push_back(std::move(f));
    emit(Code::ForInit, k);
    bound_[prog_->fors[k].var] = true;
    prog_->fors[k].body = prog_->code.size();
    const int outer_target = policy_target_;
    policy_target_ = -1;  // set_cache_policy belongs to a scope's own body
    compile_block(body, pointer_join(path, "body"), manual);
    policy_target_ = outer_target;
    emit(Code::ForNext, k);
    prog_->fors[k].exit = prog_->code.size();
  }

  void compile_let(const J& v, const std::string& path) {
    check_keys(v, file_, path, {"op", "var", "value"});
    LetOp l;
    l.value = int_field(need(v, path, "value"), pointer_join(path, "value"), "value");
    l.slot = int_target(need(v, path, "var"), pointer_join(path, "var"));
    bound_[l.slot] = true;
    prog_->lets.push_back(std::move(l));
    emit(Code::Let, prog_->lets.size() - 1);
  }

  // The keys of a view besides offset/shape: the runtime's own encoding and
  // the ChipTensor fields a program can set (extensions).
  static const Keys& view_keys() {
    static const Keys k = {"offset", "shape", "start", "strides", "dtype", "byte_offset", "numel", "version", "creator"};
    return k;
  }

  // offset/shape of `obj` (each optional) as a view of a tensor, or its
  // strided form (start, strides, shape; dtype, byte_offset, numel).
  ViewSpec view_spec(const J& obj, const std::string& path) {
    ViewSpec s;
    s.path = path;
    std::string key;
    static const Keys strided_keys = {"start", "strides", "byte_offset", "numel"};
    s.strided_form = present(obj, strided_keys, &key) > 0 || obj.contains("dtype");
    if (s.strided_form) {
      if (obj.contains("offset"))
        fail(pointer_join(path, "offset"), "\"offset\" cannot be combined with the strided form (\"start\" and "
                                           "\"strides\"): give the view in one form");
      if (!obj.contains("strides") || !obj.contains("shape"))
        fail(path, std::string("the strided form of a view needs \"shape\" and \"strides\" (") +
                       (obj.contains("dtype") ? "\"dtype\"" : "\"" + key + "\"") + " given)");
      s.shape = dims(obj.at("shape"), pointer_join(path, "shape"), "shape", 0);
      s.strides = dims(obj.at("strides"), pointer_join(path, "strides"), "strides", 1);
      if (s.strides.size() != s.shape.size())
        fail(pointer_join(path, "strides"), "expected " + std::to_string(s.shape.size()) +
                                                " entries (as many as shape), got " + std::to_string(s.strides.size()));
      s.start = int_field_or(obj, path, "start", 0, 0);
      if (const J* d = get(obj, "dtype")) s.dtype = dtype(*d, pointer_join(path, "dtype"));
      if (const J* b = get(obj, "byte_offset")) s.byte_offset = int_field(*b, pointer_join(path, "byte_offset"), "byte_offset", 0);
      if (const J* n = get(obj, "numel")) s.numel = int_field(*n, pointer_join(path, "numel"), "numel", 1, kMaxElements);
    } else {
      if (const J* o = get(obj, "offset")) s.offset = dims(*o, pointer_join(path, "offset"), "offset", 0);
      // A zero extent is a zero-size view (ChipTensor::view, below).
      if (const J* sh = get(obj, "shape")) s.shape = dims(*sh, pointer_join(path, "shape"), "shape", 0);
      if (!s.offset.empty() && !s.shape.empty() && s.offset.size() != s.shape.size())
        fail(pointer_join(path, "shape"), "expected " + std::to_string(s.offset.size()) +
                                              " entries (as many as offset), got " + std::to_string(s.shape.size()));
    }
    if (const J* ver = get(obj, "version"))
      s.version = int_field(*ver, pointer_join(path, "version"), "version", 0, std::numeric_limits<std::int32_t>::max());
    if (const J* c = get(obj, "creator")) {
      if (boolean(*c, pointer_join(path, "creator")))
        fail(pointer_join(path, "creator"), "only \"creator\": false is meaningful (the view keeps its tensor's "
                                            "creator otherwise)");
      s.no_creator = true;
    }
    finish_view(s);
    return s;
  }

  void compile_view(const J& v, const std::string& path) {
    Keys keys = {"op", "bind", "of"};
    keys.insert(keys.end(), view_keys().begin(), view_keys().end());
    check_keys(v, file_, path, keys);
    ViewOp w;
    w.of = use(need(v, path, "of"), pointer_join(path, "of"));
    w.view = view_spec(v, path);
    w.bind = target(need(v, path, "bind"), pointer_join(path, "bind"));
    bound_[w.bind] = true;
    prog_->views.push_back(std::move(w));
    emit(Code::View, prog_->views.size() - 1);
  }

  // `index` (within the view) or `element` (linear, into the buffer): exactly one.
  void element_spec(const J& v, const std::string& path, std::vector<IntField>& index,
                    std::optional<IntField>& element) {
    if (present(v, {"index", "element"}) != 1) fail(path, "expected exactly one of \"index\" or \"element\"");
    if (const J* i = get(v, "index")) index = dims(*i, pointer_join(path, "index"), "index", 0);
    if (const J* e = get(v, "element")) element = int_field(*e, pointer_join(path, "element"), "element", 0);
  }

  // read (get_tensor_data) or set (set_tensor_data).
  void compile_read(const J& v, const std::string& path, bool set) {
    check_keys(v, file_, path, set ? Keys{"op", "tensor", "index", "element", "value"}
                                   : Keys{"op", "tensor", "index", "element", "bind"});
    ReadOp r;
    r.path = path;
    r.set = set;
    r.tensor = use(need(v, path, "tensor"), pointer_join(path, "tensor"));
    element_spec(v, path, r.index, r.element);
    if (set) r.value = int_field(need(v, path, "value"), pointer_join(path, "value"), "value");
    if (const J* b = get(v, "bind")) r.bind = int_target(*b, pointer_join(path, "bind"));
    if (r.bind >= 0) bound_[r.bind] = true;
    prog_->reads.push_back(std::move(r));
    emit(Code::Read, prog_->reads.size() - 1);
  }

  // fatal (rt_report_fatal): {"code": N, "message": S}
  void compile_fatal(const J& v, const std::string& path) {
    check_keys(v, file_, path, {"op", "code", "message"});
    FatalOp f;
    f.path = path;
    f.code = static_cast<int>(integer(need(v, path, "code"), pointer_join(path, "code"), 1,
                                      std::numeric_limits<std::int32_t>::max()));
    if (const J* m = get(v, "message")) {
      if (!m->is_string()) expected("a string", *m, pointer_join(path, "message"));
      f.message = m->get<std::string>();
    }
    prog_->fatals.push_back(std::move(f));
    emit(Code::Fatal, prog_->fatals.size() - 1);
  }

  // `{"out": NAME, "shape", "dtype"}` (and an alloc output `{"bind", "shape", "dtype"}`).
  ArgSpec output(const J& v, const std::string& path, const char* name_key) {
    ArgSpec a;
    a.tag = ArgTag::Output;
    a.path = path;
    a.name.path = pointer_join(path, name_key);
    a.name.slot = target(need(v, path, name_key), a.name.path);
    a.out_shape = dims(need(v, path, "shape"), pointer_join(path, "shape"), "shape", 1);
    a.dtype = dtype(need(v, path, "dtype"), path, "dtype");
    a.out_tensor.dtype = a.dtype;
    a.out_tensor.ndims = static_cast<std::uint8_t>(a.out_shape.size());
    for (std::size_t d = 0; d < a.out_shape.size(); ++d)
      if (a.out_shape[d].expr.is_const()) a.out_tensor.buf_shape[d] = a.out_tensor.shape[d] = a.out_shape[d].expr.const_value();
    if (const J* f = get(v, "fill")) {  // TensorCreateInfo::set_initial_value (an extension)
      IntField fill;
      fill.path = pointer_join(path, "fill");
      fill.name = "fill";
      if (dtype_is_float(a.dtype) && f->is_number_float())
        fill.expr = Expr::constant(float_bits(f->get<double>(), a.dtype));
      else
        fill = int_field(*f, fill.path, "fill");
      a.fill = std::move(fill);
    }
    return a;
  }

  ArgSpec argument(const J& v, const std::string& path) {
    static const Keys forms = {"in", "inout", "out", "out_existing", "no_dep"};
    static const ArgTag tags[] = {ArgTag::Input, ArgTag::Inout, ArgTag::Output, ArgTag::OutputExisting,
                                  ArgTag::NoDep};
    object(v, path);
    std::string form, other;
    int n = present(v, forms, &form, &other);
    bool out = form == "out";
    static const Keys out_keys = [] {
      Keys k = forms;
      k.push_back("manual_dep");
      k.insert(k.end(), {"offset", "shape", "dtype", "fill"});
      return k;
    }();
    static const Keys view_arg_keys = [] {
      Keys k = forms;
      k.push_back("manual_dep");
      k.insert(k.end(), view_keys().begin(), view_keys().end());
      return k;
    }();
    check_keys(v, file_, path, out ? out_keys : view_arg_keys);
    if (n == 0) fail(path, "expected one of the keys " + json_input::join_names(forms));
    if (n > 1)
      fail(path, "an argument takes exactly one of " + json_input::join_names(forms) + ", got \"" + form + "\" and \"" +
                     other + "\"");
    ArgSpec a;
    if (out) {
      if (v.contains("offset"))
        fail(pointer_join(path, "offset"), "\"offset\" is not allowed with \"out\" (a new buffer has no parent view)");
      a = output(v, path, "out");
    } else {
      a.tag = tags[std::find(forms.begin(), forms.end(), form) - forms.begin()];
      a.path = path;
      a.name = use(v.at(form), pointer_join(path, form));
      a.view = view_spec(v, path);
    }
    if (const J* md = get(v, "manual_dep")) a.manual_dep = boolean(*md, pointer_join(path, "manual_dep"));
    return a;
  }

  // Every argument a kernel phase refers to must be passed.
  void check_kernel_args(const TaskOp& t) const {
    const int nargs = static_cast<int>(t.args.size());
    for (const LaneBody& l : t.kernel->lanes) {
      for (const Phase& p : l.phases) {
        for (int a : {p.arg, p.workspace_arg}) {
          if (a >= nargs)
            fail(t.path, "kernel \"" + t.kernel->name + "\" uses argument " + std::to_string(a) + " (at " + p.path +
                             "), but the submit passes " + std::to_string(nargs));
        }
      }
    }
  }

  PredicateOp predicate(const J& v, const std::string& path) {
    object(v, path);
    check_keys(v, file_, path, {"tensor", "index", "element", "cmp", "value"});
    PredicateOp p;
    p.path = path;
    p.tensor = use(need(v, path, "tensor"), pointer_join(path, "tensor"));
    element_spec(v, path, p.index, p.element);
    p.cmp = static_cast<Cmp>(choice(need(v, path, "cmp"), pointer_join(path, "cmp"), {"==", "!=", ">", "<", ">=", "<="}));
    p.value = int_field(need(v, path, "value"), pointer_join(path, "value"), "value");
    return p;
  }

  WriteOp write(const J& v, const std::string& path, std::size_t nargs) {
    object(v, path);
    check_keys(v, file_, path, {"arg", "index", "element", "value"});
    WriteOp w;
    w.path = path;
    w.arg = static_cast<int>(integer(need(v, path, "arg"), pointer_join(path, "arg"), 0, std::numeric_limits<int>::max()));
    if (static_cast<std::size_t>(w.arg) >= nargs)
      fail(pointer_join(path, "arg"),
           "argument " + std::to_string(w.arg) + " does not exist (the submit has " + std::to_string(nargs) + ")");
    element_spec(v, path, w.index, w.element);
    w.value = int_field(need(v, path, "value"), pointer_join(path, "value"), "value");
    return w;
  }

  // Marks the names an alloc/submit/dummy binds (outputs, id).
  void bind_task_names(const TaskOp& t) {
    for (const ArgSpec& a : t.args)
      if (a.tag == ArgTag::Output) bound_[a.name.slot] = true;
    if (t.id_slot >= 0) bound_[t.id_slot] = true;
  }

  void check_arg_count(std::size_t n, const std::string& path) const {
    if (n > static_cast<std::size_t>(kMaxTensorArgs))
      fail(path, "at most " + std::to_string(kMaxTensorArgs) + " tensor arguments are allowed, got " + std::to_string(n));
  }

  void compile_alloc(const J& v, const std::string& path) {
    check_keys(v, file_, path, {"op", "outputs", "id"});
    TaskOp t;
    t.kind = OrchOp::Kind::Alloc;
    t.path = path;
    const std::string op = pointer_join(path, "outputs");
    const J& outs = need(v, path, "outputs");
    if (!outs.is_array() || outs.empty()) expected("a non-empty list of outputs", outs, op);
    check_arg_count(outs.size(), op);
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const std::string p = pointer_join(op, i);
      check_keys(object(outs[i], p), file_, p, {"bind", "shape", "dtype", "fill"});
      t.args.push_back(output(outs[i], p, "bind"));
    }
    if (const J* id = get(v, "id")) t.id_slot = target(*id, pointer_join(path, "id"));
    finish_task(std::move(t));
  }

  void compile_task(const J& v, const std::string& path, OrchOp::Kind kind) {
    const bool submit = kind == OrchOp::Kind::Submit;
    static const Keys submit_keys = {"op", "kernel", "args", "id", "block_num", "deps", "early_resolve",
                                     "sync_start", "predicate", "writes", "site"};
    static const Keys dummy_keys = {"op", "id", "args", "deps", "early_resolve"};
    check_keys(v, file_, path, submit ? submit_keys : dummy_keys);
    TaskOp t;
    t.kind = kind;
    t.path = path;
    if (submit) {
      const J& kname = need(v, path, "kernel");
      auto it = kernels_.find(nonempty_string(kname, path, "kernel"));
      if (it == kernels_.end()) fail(pointer_join(path, "kernel"), "unknown kernel " + kname.dump());
      t.kernel = it->second;
    }
    if (const J* args = get(v, "args")) {
      const std::string ap = pointer_join(path, "args");
      list(*args, ap);
      check_arg_count(args->size(), ap);
      t.args.reserve(args->size());  // an ArgSpec is large: no move on growth
      for (std::size_t i = 0; i < args->size(); ++i) t.args.push_back(argument((*args)[i], pointer_join(ap, i)));
    }
    t.block_num = int_field_or(v, path, "block_num", 1, 1, kMaxBlockNum);
    if (const J* deps = get(v, "deps")) {
      const std::string dp = pointer_join(path, "deps");
      list(*deps, dp);
      for (std::size_t i = 0; i < deps->size(); ++i) {
        const J& d = (*deps)[i];
        const std::string ip = pointer_join(dp, i);
        if (d.is_object()) {  // {"wait": NAME}: add_dep_wait, ordering only (an extension)
          check_keys(d, file_, ip, {"wait"});
          t.deps.push_back(use(need(d, ip, "wait"), pointer_join(ip, "wait")));
          t.dep_flags.push_back(kDepWait);
        } else {
          t.deps.push_back(use(d, ip));
          t.dep_flags.push_back(kDepWait | kDepRetain);
        }
      }
    }
    if (const J* b = get(v, "early_resolve")) t.early_resolve = boolean(*b, pointer_join(path, "early_resolve"));
    if (const J* b = get(v, "sync_start")) t.sync_start = boolean(*b, pointer_join(path, "sync_start"));
    if (const J* p = get(v, "predicate")) t.predicate = predicate(*p, pointer_join(path, "predicate"));
    if (const J* w = get(v, "writes")) {
      const std::string wp = pointer_join(path, "writes");
      list(*w, wp);
      for (std::size_t i = 0; i < w->size(); ++i) t.writes.push_back(write((*w)[i], pointer_join(wp, i), t.args.size()));
    }
    if (const J* s = get(v, "site")) t.site = nonempty_string(*s, pointer_join(path, "site"));
    if (t.kernel) check_kernel_args(t);
    if (const J* id = get(v, "id")) t.id_slot = target(*id, pointer_join(path, "id"));
    finish_task(std::move(t));
  }

  void finish_task(TaskOp t) {
    t.policy_set = policy_set_;
    for (int k = policy_set_; k >= 0 && !t.in_kernel_scope; k = prog_->policy_sets[static_cast<std::size_t>(k)].parent)
      t.in_kernel_scope = prog_->policy_sets[static_cast<std::size_t>(k)].lowers;
    for (std::size_t i = 0; i < t.args.size(); ++i) {
      ArgSpec& a = t.args[i];
      if (a.tag == ArgTag::Output) t.output_args[t.outputs++] = static_cast<std::uint8_t>(i);  // i < kMaxTensorArgs
      classify_arg(a);
      if (a.reuse != ArgSpec::Reuse::Once)
        t.varying[t.varying_count++] = {a.name.slot, static_cast<std::uint8_t>(i), a.reuse, a.plain};
    }
    bind_task_names(t);
    prog_->tasks.push_back(std::move(t));
    emit(Code::Task, prog_->tasks.size() - 1);
  }

  static constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

  std::string file_;
  Trace& t_;
  std::shared_ptr<Program> prog_;
  std::unordered_map<std::string, const KernelDef*> kernels_;
  std::unordered_map<std::string, int> slots_;
  std::vector<bool> bound_;
  int scope_ordinal_ = 0;
  int policy_set_ = 0;     // the innermost scope's PolicySet
  int policy_target_ = 0;  // where a set_cache_policy here goes; -1 inside a for
  mutable std::size_t phases_before_ = 0;  // phases of the lanes loaded so far
  const std::vector<PipeDef>* cur_pipes_ = nullptr;  // the pipes of the kernel being loaded
};

}  // namespace

const KernelDef* Trace::kernel_by_func_id(int func_id) const {
  for (const auto& k : kernels)
    if (k->func_id == func_id) return k.get();
  return nullptr;
}

Trace parse_trace(const std::string& text, const std::string& file, const std::string& default_name) {
  return parse_trace(std::make_shared<const std::string>(text), file, default_name);
}

// The document without the program's ops (JsonDom with a skip key: every op checked as
// JSON, none kept); the loader then compiles them from the text one at a time.
Trace parse_trace(std::shared_ptr<const std::string> text, const std::string& file, const std::string& default_name,
                  bool check_ops) {
  bool skimmed = false;
  J root = json_input::parse_document_skimming(*text, file, "program", &skimmed);
  try {
    Trace t;
    if (skimmed)
      Loader(file, t).load(root, default_name, text, json_input::json_member_at(*text, "program"), check_ops);
    else
      Loader(file, t).load(root, default_name);
    json_input::dismantle(root);  // see dismantle: freeing must not allocate
    return t;
  } catch (...) {
    json_input::dismantle(root);
    throw;
  }
}

namespace {

class StreamReader final : public ProgramReader {
 public:
  StreamReader(const Trace& trace, Program& into)
      : text_(trace.program->text), loader_(trace.file, scratch_), ops_(*text_, trace.program->list_at) {
    scratch_.name = trace.name;  // default scope sites
    loader_.begin_stream(trace, into);
  }
  // After an InputError the loader's state is that of a half-compiled op:
  // there is no next op.
  bool next() override {
    if (failed_) return false;
    try {
      return loader_.compile_next(ops_, i_++);
    } catch (...) {
      failed_ = true;
      throw;
    }
  }

 private:
  bool failed_ = false;
  std::shared_ptr<const std::string> text_;
  Trace scratch_;
  Loader loader_;
  json_input::JsonListCursor ops_;
  std::size_t i_ = 0;
};

}  // namespace

std::unique_ptr<ProgramReader> read_program(const Trace& trace, Program& into) {
  if (!trace.program || !trace.program->text) throw std::logic_error("read_program: the program is not streamed");
  return std::make_unique<StreamReader>(trace, into);
}

Trace trace_from_json(const nlohmann::ordered_json& root, const std::string& file, const std::string& default_name) {
  Trace t;
  Loader(file, t).load(root, default_name);
  return t;
}

void check_mix_pipes(const KernelDef& k, const std::string& file) { Loader::check_mix_pipes(k, file); }

std::vector<std::unique_ptr<KernelDef>> parse_kernels(const nlohmann::ordered_json& defs, const std::string& file,
                                                      const std::string& path) {
  Trace t;
  Loader(file, t).load_kernels(defs, path);
  return std::move(t.kernels);
}

ExternalTensor parse_tensor(const nlohmann::ordered_json& def, const std::string& name, const std::string& file,
                            const std::string& path) {
  Trace t;
  return Loader(file, t).tensor_def(def, name, path);
}

Trace load_trace(const std::string& path, std::shared_ptr<const std::string>* text_out, bool check_ops) {
  const bool stdin_ = path == "-";
  auto text = std::make_shared<const std::string>(
      json_input::read_text(path, stdin_ ? "<stdin>" : path, kMaxTraceBytes, "trace file"));
  Trace t = parse_trace(text, stdin_ ? "<stdin>" : path, stdin_ ? "stdin" : std::filesystem::path(path).stem().string(),
                        check_ops);
  if (text_out) *text_out = std::move(text);
  return t;
}

}  // namespace npusim::trace
