// Platform files: format in docs/platform.md. The field tables below are the
// one place that maps JSON keys to Platform members and states each value's
// valid range; parsing, the "every field is required" rule and
// platform_field_pointers() are all driven by them.
#include "sim/platform/platform_loader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "sim/host/subprocess.h"
#include "sim/json/json_input.h"

namespace npusim::platform {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using json_input::pointer_join;
using json_input::describe;
using json_input::is_annotation_key;
using json_input::join_names;

constexpr int kFormatVersion = 1;
constexpr std::uint64_t kInt32Max = INT_MAX;
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr double kMaxNs = 3.6e12;  // one hour: far above any watchdog, far below Time's range

using RingArray = std::array<std::uint64_t, kNumRings>;

// ---- value rules -----------------------------------------------------------

struct Rule {
  std::uint64_t imin = 0, imax = kU64Max;  // integer kinds
  bool pow2 = false;
  double min = 0, max = 0;  // real kinds
  const char* unit = "";    // real kinds: "a <unit> in [min, max]"
};

Rule in(std::uint64_t lo, std::uint64_t hi) { return Rule{lo, hi, false, 0, 0, ""}; }
Rule at_least(std::uint64_t lo) { return in(lo, kU64Max); }
Rule pow2_in(std::uint64_t lo, std::uint64_t hi) { return Rule{lo, hi, true, 0, 0, ""}; }
Rule real_in(double lo, double hi, const char* unit) { return Rule{0, 0, false, lo, hi, unit}; }
Rule ns_in(double lo) { return real_in(lo, kMaxNs, "time in ns"); }

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string integer_expectation(const Rule& r) {
  std::string s = r.pow2 ? "a power of 2" : "an integer";
  if (r.imax == kU64Max) return s + " >= " + std::to_string(r.imin);
  return s + " in [" + std::to_string(r.imin) + ", " + std::to_string(r.imax) + "]";
}

std::string real_expectation(const Rule& r) {
  return std::string("a ") + r.unit + " in [" + number_text(r.min) + ", " + number_text(r.max) + "]";
}

// A non-negative integral JSON number (integral floats up to 2^53 included).
std::optional<std::uint64_t> as_uint(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    auto x = v.get<std::int64_t>();
    if (x >= 0) return static_cast<std::uint64_t>(x);
    return std::nullopt;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d >= 0 && d <= 9007199254740992.0 && std::floor(d) == d) return static_cast<std::uint64_t>(d);
  }
  return std::nullopt;
}

bool is_pow2(std::uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// ---- field tables ----------------------------------------------------------

enum class Kind { Int, Count, Real, Time, Rings };

template <class S>
struct Field {
  std::string key;  // JSON key; Time fields carry the "_ns" suffix
  Kind kind = Kind::Int;
  Rule rule;
  int S::*i = nullptr;
  std::uint64_t S::*u = nullptr;  // Count and Time (Time is ps)
  double S::*d = nullptr;
  RingArray S::*r = nullptr;
};

// A field of `kind` stored in member `m` (its type says which of Field's pointers).
template <class S, class M>
Field<S> field(std::string key, Kind kind, Rule rule, M S::*m) {
  Field<S> f;
  f.key = std::move(key);
  f.kind = kind;
  f.rule = rule;
  if constexpr (std::is_same_v<M, int>) f.i = m;
  else if constexpr (std::is_same_v<M, std::uint64_t>) f.u = m;
  else if constexpr (std::is_same_v<M, double>) f.d = m;
  else f.r = m;
  return f;
}
template <class S>
Field<S> integer(const char* key, int S::*m, Rule rule) { return field(key, Kind::Int, rule, m); }
template <class S>
Field<S> count(const char* key, std::uint64_t S::*m, Rule rule) { return field(key, Kind::Count, rule, m); }
template <class S>
Field<S> real(const char* key, double S::*m, Rule rule) { return field(key, Kind::Real, rule, m); }
// `name` is the C++ field name; the JSON key is name + "_ns".
template <class S>
Field<S> time_ns(const char* name, Time S::*m, Rule rule = ns_in(0)) {
  return field(std::string(name) + "_ns", Kind::Time, rule, m);
}
template <class S>
Field<S> rings(const char* key, RingArray S::*m, Rule rule) { return field(key, Kind::Rings, rule, m); }

const std::vector<Field<Topology>>& topology_fields() {
  using T = Topology;
  static const std::vector<Field<T>> f = {
      integer("clusters", &T::clusters, in(1, 1024)),
      integer("aicpu_threads_max", &T::aicpu_threads_max, in(2, 8)),
      integer("aicpu_threads_default", &T::aicpu_threads_default, in(2, 8)),
      integer("dummy_threads", &T::dummy_threads, in(1, 7)),
      real("aicore_clock_hz", &T::aicore_clock_hz, real_in(1e6, 1e11, "frequency in Hz")),
      count("sys_cnt_freq_hz", &T::sys_cnt_freq_hz, in(1000, 100000000000ull)),
      count("sys_cnt_base", &T::sys_cnt_base, in(0, 1ull << 62)),
      count("device_memory_bytes", &T::device_memory_bytes, at_least(1ull << 20)),
  };
  return f;
}

const std::vector<Field<RuntimeLimits>>& limits_fields() {
  using L = RuntimeLimits;
  static const std::vector<Field<L>> f = {
      rings("task_window", &L::task_window, pow2_in(4, 1ull << 30)),
      rings("heap", &L::heap, at_least(1024)),
      rings("dep_pool", &L::dep_pool, in(4, kInt32Max)),
      count("tensormap_pool", &L::tensormap_pool, in(1, kInt32Max)),
      integer("max_scope_depth", &L::max_scope_depth, in(1, 1024)),
      integer("max_tensor_args", &L::max_tensor_args, in(1, 1024)),
      integer("fanin_inline_cap", &L::fanin_inline_cap, in(1, kInt32Max)),
      integer("dep_pool_cleanup_interval", &L::dep_pool_cleanup_interval, in(1, kInt32Max)),
      integer("tensormap_cleanup_interval", &L::tensormap_cleanup_interval, in(1, kInt32Max)),
      count("ready_queue_capacity", &L::ready_queue_capacity, in(1, kInt32Max)),
      count("early_dispatch_queue_capacity", &L::early_dispatch_queue_capacity, in(1, kInt32Max)),
      count("hbg_ready_queue_capacity", &L::hbg_ready_queue_capacity, in(1, kInt32Max)),
      count("hbg_early_dispatch_queue_capacity", &L::hbg_early_dispatch_queue_capacity, in(1, kInt32Max)),
      integer("deferred_release_cap", &L::deferred_release_cap, in(1, kInt32Max)),
      integer("dummy_pop_max", &L::dummy_pop_max, in(1, kInt32Max)),
      count("packed_output_align", &L::packed_output_align, pow2_in(1, 1ull << 30)),
      count("heap_block_align", &L::heap_block_align, pow2_in(1, 1ull << 30)),
      count("arena_bytes_per_slot", &L::arena_bytes_per_slot, in(1, 1ull << 30)),
      count("arena_bytes_per_dep_entry", &L::arena_bytes_per_dep_entry, in(0, 1ull << 30)),
      count("arena_bytes_per_fanin_spill_entry", &L::arena_bytes_per_fanin_spill_entry, in(0, 1ull << 30)),
      time_ns("arena_build", &L::arena_build),
  };
  return f;
}

// A section whose every field is a time in ns under one rule; its fields
// several to a line.
template <class S>
std::vector<Field<S>> times(std::initializer_list<std::pair<const char*, Time S::*>> fields, Rule rule = ns_in(0)) {
  std::vector<Field<S>> f;
  for (const auto& [name, member] : fields) f.push_back(time_ns(name, member, rule));
  return f;
}

const std::vector<Field<Timeouts>>& timeouts_fields() {
  using T = Timeouts;
  static const auto f = times<T>(
      {{"scheduler_no_progress", &T::scheduler_no_progress}, {"alloc_no_progress", &T::alloc_no_progress},
       {"tensor_wait", &T::tensor_wait}},
      ns_in(1));
  return f;
}

const std::vector<Field<SchedCosts>>& sched_fields() {
  using S = SchedCosts;
  static const auto f = times<S>({
      {"loop", &S::loop}, {"poll_cond", &S::poll_cond},
      {"complete_task", &S::complete_task}, {"complete_subtask", &S::complete_subtask},
      {"fanout_edge", &S::fanout_edge}, {"ready_push", &S::ready_push},
      {"dispatch_pop", &S::dispatch_pop}, {"dispatch_task", &S::dispatch_task},
      {"dispatch_block", &S::dispatch_block}, {"wmb", &S::wmb}, {"mmio_write", &S::mmio_write},
      {"dummy_task", &S::dummy_task}, {"release_task", &S::release_task}, {"predicate_eval", &S::predicate_eval},
  });
  return f;
}

const std::vector<Field<OrchCosts>>& orch_fields() {
  using O = OrchCosts;
  static const auto f = times<O>({
      {"start", &O::start}, {"submit_base", &O::submit_base}, {"submit_arg", &O::submit_arg},
      {"lookup", &O::lookup}, {"lookup_entry", &O::lookup_entry}, {"edge", &O::edge}, {"insert", &O::insert},
      {"alloc_tensors", &O::alloc_tensors}, {"scope_begin", &O::scope_begin}, {"scope_end_task", &O::scope_end_task},
      {"read_poll", &O::read_poll}, {"spin", &O::spin},
  });
  return f;
}

const std::vector<Field<CoreCosts>>& core_fields() {
  using C = CoreCosts;
  static const auto f = times<C>({
      {"dmb_arrival", &C::dmb_arrival}, {"entry_poll", &C::entry_poll}, {"receive_to_start", &C::receive_to_start},
      {"ack_write", &C::ack_write}, {"first_task_extra", &C::first_task_extra}, {"loop", &C::loop},
      {"fin_notice", &C::fin_notice},
  });
  return f;
}

const std::vector<Field<GmCosts>>& gm_fields() {
  using G = GmCosts;
  static const std::vector<Field<G>> f = {
      count("line_bytes", &G::line_bytes, pow2_in(4, 1ull << 20)),
      time_ns("line_latency", &G::line_latency),
      real("bytes_per_ns", &G::bytes_per_ns, real_in(0.001, 1e6, "bandwidth in B/ns")),
      time_ns("fence", &G::fence),
      time_ns("cacheinvalid_line", &G::cacheinvalid_line),
      time_ns("cacheinvalid_all", &G::cacheinvalid_all),
      time_ns("line_serialize", &G::line_serialize),
      count("l2_bytes", &G::l2_bytes, in(1, 1ull << 40)),
      count("l2_line_bytes", &G::l2_line_bytes, pow2_in(4, 1ull << 20)),
      count("l2_ways", &G::l2_ways, in(1, 1024)),
      time_ns("l2_hit_latency", &G::l2_hit_latency),
      time_ns("l2_miss_latency", &G::l2_miss_latency),
      real("hbm_bytes_per_ns", &G::hbm_bytes_per_ns, real_in(0.001, 1e6, "bandwidth in B/ns")),
  };
  return f;
}

const std::vector<Field<FftsCosts>>& ffts_fields() {
  using F = FftsCosts;
  static const auto f = times<F>({{"barrier_release", &F::barrier_release}, {"flag", &F::flag}});
  return f;
}

const std::vector<Field<InterconnectCosts>>& interconnect_fields() {
  using I = InterconnectCosts;
  static const std::vector<Field<I>> f = {
      integer("chips_per_node", &I::chips_per_node, in(1, 4096)),
      time_ns("link_latency", &I::link_latency),
      real("link_bytes_per_ns", &I::link_bytes_per_ns, real_in(0.001, 1e6, "bandwidth in B/ns")),
      time_ns("host_dispatch", &I::host_dispatch),
  };
  return f;
}

// Calls fn(section key, section struct of `p`, its field table) in file order.
template <class Fn>
void for_each_section(Platform& p, Fn&& fn) {
  fn("topology", p.topo, topology_fields());
  fn("limits", p.limits, limits_fields());
  fn("timeouts", p.timeouts, timeouts_fields());
  fn("sched", p.sched, sched_fields());
  fn("orch", p.orch, orch_fields());
  fn("core", p.core, core_fields());
  fn("gm", p.gm, gm_fields());
  fn("ffts", p.ffts, ffts_fields());
  fn("interconnect", p.interconnect, interconnect_fields());
}

template <class S>
std::vector<std::string> keys_of(const std::vector<Field<S>>& fields) {
  std::vector<std::string> keys;
  for (const auto& f : fields) keys.push_back(f.key);
  return keys;
}

std::vector<std::string> top_level_keys() {
  std::vector<std::string> keys = {"npusim_platform", "name", "description"};
  Platform scratch;
  for_each_section(scratch, [&](const char* name, auto&, const auto&) { keys.push_back(name); });
  return keys;
}

// ---- parsing ---------------------------------------------------------------

class Reader {
 public:
  Reader(const std::string& file, Platform& p) : file_(file), p_(p) {}

  void document(const json& doc) {
    if (!doc.is_object())
      fail("", "expected a platform object {\"npusim_platform\": 1, \"name\": ..., sections}, found " +
                   describe(doc));
    require_keys(doc, "", top_level_keys(), "field");
    auto version = as_uint(doc["npusim_platform"]);
    if (!version || *version != kFormatVersion)
      fail("/npusim_platform", "expected 1 (the only platform format version), found " +
                                   describe(doc["npusim_platform"]));
    p_.name = text(doc["name"], "/name", "a platform name");
    for (char c : p_.name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
        fail("/name", "expected a platform name of letters, digits, '_', '-' and '.', found " +
                          describe(doc["name"]));
    if (!doc["description"].is_string())
      fail("/description", "expected a string, found " + describe(doc["description"]));
    p_.description = doc["description"].get<std::string>();
    for_each_section(p_, [&](const char* name, auto& out, const auto& fields) {
      section(doc[name], pointer_join("", name), out, fields);
    });
    cross_checks(doc);
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
    throw InputError(file_, pointer, message);
  }

  void reject_unknown(const json& obj, const std::string& pointer, const std::vector<std::string>& known) const {
    // Fields of earlier platform files that npusim never used (issue 12).
    static const std::pair<const char*, const char*> kRemoved[] = {
        {"/timeouts/op_execute_ns",
         "npusim never used it (a hung kernel is reported by the scheduler's no-progress timeout, which fires first)"},
        {"/limits/max_dims", "npusim never used it (a tensor's rank is at most 5, fixed by the runtime's Tensor)"},
        {"/cross_core",
         "the section priced the on-chip slot ring npusim modelled before PTO-ISA's pipe; a push and a pop are GM "
         "transfers (gm) handed off through ffts.flag_ns, and the slot count is the kernel's cross_core_slots"},
    };
    for (const auto& item : obj.items()) {
      if (is_annotation_key(item.key())) continue;
      for (const auto& [where, why] : kRemoved)
        if (pointer_join(pointer, item.key()) == where)
          fail(where, std::string("no longer a platform field: ") + why + "; remove it");
      if (std::find(known.begin(), known.end(), item.key()) == known.end())
        fail(pointer_join(pointer, item.key()), "unknown key \"" + item.key() + "\"; expected one of: " +
                                             join_names(known) + " (keys starting with x_ are ignored)");
    }
  }

  // Unknown keys first (a typo also shows up as a missing field), then missing ones.
  void require_keys(const json& obj, const std::string& pointer, const std::vector<std::string>& known,
                    const char* what) const {
    reject_unknown(obj, pointer, known);
    for (const auto& key : known)
      if (!obj.contains(key))
        fail(pointer_join(pointer, key), std::string("missing ") + what + " \"" + key +
                                      "\" (a platform must give every field; see docs/platform.md)");
  }

  std::string text(const json& v, const std::string& pointer, const char* what) const {
    if (!v.is_string() || v.get_ref<const std::string&>().find_first_not_of(" \t\r\n") == std::string::npos)
      fail(pointer, std::string("expected ") + what + " (a non-empty string), found " + describe(v));
    return v.get<std::string>();
  }

  template <class S>
  void section(const json& sec, const std::string& pointer, S& out, const std::vector<Field<S>>& fields) {
    if (!sec.is_object()) fail(pointer, "expected an object of fields, found " + describe(sec));
    require_keys(sec, pointer, keys_of(fields), "field");
    for (const auto& f : fields) {
      std::string leaf_pointer = pointer_join(pointer, f.key);
      const json& v = leaf(sec[f.key], leaf_pointer);
      store(v, pointer_join(leaf_pointer, "value"), out, f);
    }
  }

  // Validates {"value", "source" | "assumption" | "fitted", "note"?},
  // records the provenance and returns the value. "fitted" says what a value
  // was fitted to (docs/platform.md, "Provenance").
  const json& leaf(const json& l, const std::string& pointer) {
    if (!l.is_object())
      fail(pointer, "expected a leaf {\"value\": ..., \"source\", \"assumption\" or \"fitted\": \"...\"}, found " +
                        describe(l));
    static const std::vector<std::string> leaf_keys = {"value", "source", "assumption", "fitted", "note"};
    reject_unknown(l, pointer, leaf_keys);
    if (!l.contains("value")) fail(pointer, "missing \"value\"");
    static const char* const kinds[] = {"source", "assumption", "fitted"};
    std::string found;
    const char* kind = nullptr;
    int n = 0;
    for (const char* k : kinds)
      if (l.contains(k)) {
        found += std::string(n++ ? " and \"" : "\"") + k + "\"";
        kind = k;
      }
    if (n != 1)
      fail(pointer, "expected exactly one of \"source\", \"assumption\" or \"fitted\", found " +
                        (n ? found : std::string("none")));
    const char* what = std::string(kind) == "source"       ? "a source"
                       : std::string(kind) == "assumption" ? "an assumption"
                                                           : "what the value was fitted to";
    p_.provenance[pointer] = text(l[kind], pointer_join(pointer, kind), what);
    if (l.contains("note") && !l["note"].is_string())
      fail(pointer_join(pointer, "note"), "expected a string, found " + describe(l["note"]));
    return l["value"];
  }

  std::uint64_t uint_value(const json& v, const std::string& pointer, const Rule& r,
                           const std::string& expectation) const {
    auto x = as_uint(v);
    if (!x || *x < r.imin || *x > r.imax || (r.pow2 && !is_pow2(*x)))
      fail(pointer, "expected " + expectation + ", found " + describe(v));
    return *x;
  }

  double real_value(const json& v, const std::string& pointer, const Rule& r) const {
    if (!v.is_number() || v.get<double>() < r.min || v.get<double>() > r.max)
      fail(pointer, "expected " + real_expectation(r) + ", found " + describe(v));
    return v.get<double>();
  }

  template <class S>
  void store(const json& v, const std::string& pointer, S& out, const Field<S>& f) const {
    switch (f.kind) {
      case Kind::Int:
        out.*f.i = static_cast<int>(uint_value(v, pointer, f.rule, integer_expectation(f.rule)));
        break;
      case Kind::Count:
        out.*f.u = uint_value(v, pointer, f.rule, integer_expectation(f.rule));
        break;
      case Kind::Real:
        out.*f.d = real_value(v, pointer, f.rule);
        break;
      case Kind::Time:
        out.*f.u = from_ns(real_value(v, pointer, f.rule));
        break;
      case Kind::Rings: {
        std::string one = integer_expectation(f.rule);
        if (!v.is_array()) {
          (out.*f.r).fill(uint_value(v, pointer, f.rule, one + " or a list of 4 of them (one per ring)"));
          break;
        }
        if (v.size() != kNumRings)
          fail(pointer, "expected " + one + " or a list of 4 of them (one per ring), found " + describe(v));
        for (std::size_t k = 0; k < kNumRings; ++k)
          (out.*f.r)[k] = uint_value(v[k], pointer_join(pointer, k), f.rule, one);
        break;
      }
    }
  }

  void cross_checks(const json& doc) const {
    const Topology& t = p_.topo;
    if (t.aicpu_threads_default > t.aicpu_threads_max)
      fail("/topology/aicpu_threads_default/value",
           "expected an integer in [2, aicpu_threads_max = " + std::to_string(t.aicpu_threads_max) +
               "], found " + describe(doc["topology"]["aicpu_threads_default"]["value"]));
    if (t.dummy_threads > t.aicpu_threads_max - 1)
      fail("/topology/dummy_threads/value",
           "expected an integer in [1, aicpu_threads_max - 1 = " + std::to_string(t.aicpu_threads_max - 1) +
               "] (at most every scheduler thread), found " +
               describe(doc["topology"]["dummy_threads"]["value"]));
    if (p_.core.ack_write > p_.core.receive_to_start)
      fail("/core/ack_write_ns/value",
           "expected at most receive_to_start_ns = " + describe(doc["core"]["receive_to_start_ns"]["value"]) +
               " (the ACK write is part of the receive-to-start setup), found " +
               describe(doc["core"]["ack_write_ns"]["value"]));
  }

  const std::string& file_;
  Platform& p_;
};

// ---- lookup ----------------------------------------------------------------

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos ||
         (s.size() >= 5 && s.compare(s.size() - 5, 5, ".json") == 0);
}

std::vector<std::string> available_names(const std::vector<std::string>& dirs) {
  std::set<std::string> names;
  for (const auto& d : dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".json") names.insert(it->path().stem().string());
  }
  return {names.begin(), names.end()};
}

}  // namespace

Platform parse_platform(const std::string& text, const std::string& file) {
  json doc = json_input::parse(text, file);
  Platform p;
  p.path = file;
  Reader(file, p).document(doc);
  return p;
}

Platform load_platform(const std::string& name_or_path, std::string* canonical) {
  if (name_or_path.empty()) throw InputError("", "", "expected a platform name or file, found an empty string");
  std::string path = name_or_path;
  if (!looks_like_path(name_or_path)) {
    auto dirs = platform_search_dirs();
    path.clear();
    for (const auto& d : dirs) {
      std::error_code ec;
      fs::path candidate = fs::path(d) / (name_or_path + ".json");
      if (fs::is_regular_file(candidate, ec)) {
        path = candidate.string();
        break;
      }
    }
    if (path.empty()) {
      auto names = available_names(dirs);
      throw InputError(name_or_path, "",
                       "no platform named \"" + name_or_path + "\": looked for " + name_or_path +
                           ".json in " + join_names(dirs) + "; available: " +
                           (names.empty() ? std::string("none") : join_names(names)));
    }
  }
  json doc = json_input::read_file(path);
  Platform p;
  p.path = path;
  Reader(path, p).document(doc);
  if (canonical) *canonical = doc.dump(2) + "\n";
  return p;
}

std::vector<std::string> platform_field_pointers() {
  std::vector<std::string> pointers;
  Platform scratch;
  for_each_section(scratch, [&](const char* name, auto&, const auto& fields) {
    for (const auto& f : fields) pointers.push_back(pointer_join(pointer_join("", name), f.key));
  });
  return pointers;
}

std::vector<std::string> platform_search_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](const fs::path& d) {
    std::string s = d.lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    if (!s.empty() && std::find(dirs.begin(), dirs.end(), s) == dirs.end()) dirs.push_back(s);
  };
  if (const char* env = std::getenv("NPUSIM_PLATFORM_DIR"); env && *env) add(env);
  const fs::path exe = host::self_exe();  // npusim's executable (the Python module names it: python/)
  if (exe.is_absolute()) {
    add(exe.parent_path().parent_path() / "platforms");                      // a build tree
    add(exe.parent_path().parent_path() / "share" / "npusim" / "platforms");  // an install (cmake --install)
  }
#ifdef NPUSIM_SOURCE_DIR
  add(fs::path(NPUSIM_SOURCE_DIR) / "platforms");
#endif
  dirs.push_back("./platforms");
  return dirs;
}

}  // namespace npusim::platform
