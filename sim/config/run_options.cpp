// Run configuration: validation as PyPTO's RunConfig and then the runtime's
// CallConfig check it, merging, and resolution against a platform.
#include "sim/config/run_options.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "sim/json/json_util.h"

namespace npusim::config {

using json_input::check_keys;
using json_input::describe_json;
using json_input::json_int64;
using json_input::json_uint64;
using json_input::pointer_join;

namespace {

constexpr std::uint64_t kInt32Max = 2147483647;

bool is_pow2(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// The ring fields are checked twice before they reach the device: first by
// PyPTO's RunConfig (runner.py, RunConfig._validate_ring_overrides, called
// from __post_init__), whose message format ("got {value!r}", "entries must
// ... (or 0 to keep default)") a user sees, then by the runtime's CallConfig
// (src/common/task_interface/call_config.h, RuntimeEnv::validate; the same
// bounds again in host/runtime_maker.cpp, resolve_ring_config). npusim models
// the runtime, so it accepts exactly what RuntimeEnv::validate accepts:
//   ring_task_window  a power of 2 in [4, INT32_MAX]  (PyPTO: power of 2 >= 4)
//   ring_heap         any size >= 1024 bytes          (PyPTO: also a power of 2)
//   ring_dep_pool     in [4, INT32_MAX]               (PyPTO: the same)
// The heap ring never masks an offset (pto_ring_buffer.h, try_bump_heap
// compares top, tail and size; heap_used_bytes takes % heap_size_), so any
// size works; simpler's own tests/st heap_empty_ring_rebase runs a 1.5 MiB
// ring, which a scene test passes straight to CallConfig without PyPTO.

// The first check of one value of a field (a scalar, or a non-zero list
// entry): PyPTO's rule, except the heap's, which is the runtime's.
struct RingRule {
  const char* phrase;  // "be a power of 2 >= 4", after "must " as PyPTO words a message
  bool (*ok)(std::uint64_t);
};

RingRule ring_rule(const std::string& field) {
  if (field == "ring_task_window") return {"be a power of 2 >= 4", [](std::uint64_t v) { return is_pow2(v) && v >= 4; }};
  if (field == "ring_heap")
    return {"be >= 1024 (bytes per ring)", [](std::uint64_t v) { return v >= 1024; }};
  if (field == "ring_dep_pool") return {"be in [4, INT32_MAX]", [](std::uint64_t v) { return v >= 4 && v <= kInt32Max; }};
  throw std::logic_error("unknown ring field " + field);
}

// "ring_heap must be >= 1024 (bytes per ring), got 1000" (RuntimeEnv's
// sentence with PyPTO's "got"); for a list entry "ring_heap entries must ...
// (or 0 to keep default), got 1000".
std::string bad_ring_value(const std::string& field, bool entry, const std::string& got) {
  return field + (entry ? " entries must " : " must ") + ring_rule(field).phrase +
         (entry ? " (or 0 to keep default)" : "") + ", got " + got;
}

std::string bad_ring_count(const std::string& field, std::size_t n) {
  return field + " must have exactly 4 entries (one per scope-depth ring), got " + std::to_string(n);
}

// A value the first check accepts: a scalar satisfying the rule, a list entry
// satisfying it or 0 (that ring keeps its default).
bool ring_value_ok(const std::string& field, bool entry, std::uint64_t v) {
  return (entry && v == 0) || ring_rule(field).ok(v);
}

// RuntimeEnv::validate's task-window rule, past PyPTO's.
void check_runtime_env(const RingValues& r, const std::string& field, const std::string& file,
                       const std::string& path) {
  if (field != "ring_task_window") return;
  for (std::uint64_t v : r)
    if (v > kInt32Max)
      throw InputError(file, path, "RuntimeEnv: ring_task_window must be a power of 2 in [4, INT32_MAX]");
}

// A JSON value as Python's repr() shows the value json.load made of it (what
// PyPTO's "got {value!r}" prints): True, None, 1.5, 'text', [1, 2].
template <class Json>
std::string python_repr(const Json& v) {
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.template get<bool>() ? "True" : "False";
  if (v.is_number()) return v.dump();
  if (v.is_string()) {
    const std::string& s = v.template get_ref<const std::string&>();
    const char q = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
    std::string out(1, q);
    for (unsigned char c : s) {
      if (c == '\\') out += "\\\\";
      else if (c == static_cast<unsigned char>(q)) out += std::string("\\") + q;
      else if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else if (c == '\t') out += "\\t";
      else if (c < 0x20 || c == 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02x", c);
        out += hex;
      } else out += static_cast<char>(c);
    }
    return out + q;
  }
  std::string out = v.is_array() ? "[" : "{";
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    out += first ? "" : ", ";
    first = false;
    if (v.is_object()) out += python_repr(Json(it.key())) + ": ";
    out += python_repr(it.value());
  }
  return out + (v.is_array() ? "]" : "}");
}

// The repr, cut short for a message.
template <class Json>
std::string got_repr(const Json& v) {
  std::string s = python_repr(v);
  return s.size() > 64 ? s.substr(0, 61) + "..." : s;
}

template <class Json>
std::uint64_t ring_entry_json(const Json& v, const std::string& field, bool entry, const std::string& file,
                              const std::string& path) {
  std::uint64_t u = 0;
  if (!json_uint64(v, u) || !ring_value_ok(field, entry, u))
    throw InputError(file, path, bad_ring_value(field, entry, got_repr(v)));
  return u;
}

// A decimal token of the command line: digits only, fitting in 64 bits.
bool parse_decimal(const std::string& s, std::uint64_t& out) {
  if (s.empty()) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(out, 10u, &out) || __builtin_add_overflow(out, static_cast<unsigned>(c - '0'), &out))
      return false;
  }
  return true;
}

std::string cli_option(const std::string& field) {
  std::string s = "--" + field;
  for (char& c : s)
    if (c == '_') c = '-';
  return s;
}

// A two-valued enum of the run options: its values, their names, and the
// message for any other value (followed by what was given).
template <class E>
struct Named {
  E first, second;
  const char* (*name)(E);
  const char* expected;

  bool from(const std::string& s, E& out) const {
    for (E v : {first, second}) {
      if (s == name(v)) {
        out = v;
        return true;
      }
    }
    return false;
  }
  // The command line's value of `option`.
  E cli(const std::string& text, const char* option) const {
    E e{};
    if (!from(text, e)) throw InputError(kCommandLine, option, expected + text);
    return e;
  }
  // A run block's value at `at`.
  template <class Json>
  E json(const Json& v, const std::string& file, const std::string& at) const {
    E e{};
    if (!v.is_string() || !from(v.template get<std::string>(), e)) throw InputError(file, at, expected + describe_json(v));
    return e;
  }
};

const Named<HbgLayout> kHbgLayout{HbgLayout::ResolutionThread, HbgLayout::AllSchedule, hbg_layout_name,
                                  "hbg_layout must be \"resolution_thread\" or \"all_schedule\", got "};
const Named<CacheLowering> kCacheLowering{CacheLowering::Today, CacheLowering::Intended, cache_lowering_name,
                                          "cache_policy_lowering must be \"today\" or \"intended\", got "};
const Named<RuntimeKind> kRuntime{RuntimeKind::TensormapRingbuffer, RuntimeKind::HostBuildGraph, runtime_name,
                                  "runtime must be \"tensormap_and_ringbuffer\" or \"host_build_graph\", got "};

template <class T>
void take(std::optional<T>& into, const std::optional<T>& from) {
  if (from) into = from;
}

}  // namespace

template <class Json>
RingValues ring_values_json(const Json& value, const std::string& field, const std::string& file,
                            const std::string& path) {
  RingValues r{};
  if (value.is_array()) {
    if (value.size() != r.size()) throw InputError(file, path, bad_ring_count(field, value.size()));
    for (std::size_t i = 0; i < r.size(); ++i)
      r[i] = ring_entry_json(value[i], field, true, file, pointer_join(path, i));
  } else {
    r.fill(ring_entry_json(value, field, false, file, path));
  }
  check_runtime_env(r, field, file, path);
  return r;
}

RingValues parse_ring_json(const nlohmann::json& value, const std::string& field, const std::string& file,
                           const std::string& path) {
  return ring_values_json(value, field, file, path);
}

RingValues parse_ring_cli(const std::string& text, const std::string& field) {
  std::vector<std::string> tokens;
  std::size_t start = 0;
  for (;;) {
    std::size_t comma = text.find(',', start);
    tokens.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const std::string option = cli_option(field);
  RingValues r{};
  if (tokens.size() != 1 && tokens.size() != r.size())
    throw InputError(kCommandLine, option, bad_ring_count(field, tokens.size()));
  const bool entries = tokens.size() != 1;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const std::string& tok = tokens[entries ? i : 0];
    std::uint64_t v = 0;
    if (!parse_decimal(tok, v) || !ring_value_ok(field, entries, v))
      throw InputError(kCommandLine, option, bad_ring_value(field, entries, tok.empty() ? "''" : tok));
    r[i] = v;
  }
  check_runtime_env(r, field, kCommandLine, option);
  return r;
}

RuntimeKind parse_runtime_cli(const std::string& text) { return kRuntime.cli(text, "--runtime"); }

HbgLayout parse_hbg_layout_cli(const std::string& text) { return kHbgLayout.cli(text, "--hbg-layout"); }

CacheLowering parse_cache_lowering_cli(const std::string& text) {
  return kCacheLowering.cli(text, "--cache-policy-lowering");
}

std::uint64_t parse_seed_cli(const std::string& text) {
  std::uint64_t v = 0;
  if (!parse_decimal(text, v)) throw InputError(kCommandLine, "--seed", "seed must be a non-negative integer, got " + text);
  return v;
}

// SIMPLER_SCHEDULER_TIMEOUT_MS as resolve_runtime_timeout_config parses it
// (runtime_timeout_config.h): an integer in [1, INT32_MAX]. The runtime
// ignores a bad value (the compiled default stays); npusim refuses it.
const char* const kSchedTimeoutExpected = "scheduler_timeout_ms must be an integer in [1, INT32_MAX] (ms), got ";

std::uint64_t parse_scheduler_timeout_cli(const std::string& text) {
  std::uint64_t v = 0;
  if (!parse_decimal(text, v) || v < 1 || v > kInt32Max)
    throw InputError(kCommandLine, "--scheduler-timeout-ms", kSchedTimeoutExpected + text);
  return v;
}

int parse_thread_num_cli(const std::string& text) {
  std::uint64_t v = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (!parse_decimal(negative ? text.substr(1) : text, v) ||
      v > static_cast<std::uint64_t>(std::numeric_limits<int>::max()) + (negative ? 1 : 0))
    throw InputError(kCommandLine, "--aicpu-thread-num",
                     "aicpu_thread_num must be 0 (auto) or an integer >= 2, got " + text);
  return negative ? static_cast<int>(-static_cast<std::int64_t>(v)) : static_cast<int>(v);
}

template <class Json>
RunOptions run_block(const Json& run, const std::string& file, const std::string& path) {
  if (!run.is_object()) throw InputError(file, path, "expected an object, got " + describe_json(run));
  check_keys(run, file, path,
             {"aicpu_thread_num", "ring_task_window", "ring_heap", "ring_dep_pool", "runtime", "hbg_layout",
              "cache_policy_lowering", "seed", "scheduler_timeout_ms"});
  RunOptions o;
  for (auto it = run.begin(); it != run.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    const std::string at = pointer_join(path, key);
    if (key == "aicpu_thread_num") {
      std::int64_t n = 0;
      if (!json_int64(v, n) || n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max())
        throw InputError(file, at, "aicpu_thread_num must be 0 (auto) or an integer >= 2, got " + describe_json(v));
      o.aicpu_thread_num = static_cast<int>(n);
    } else if (v.is_null() && (key == "ring_task_window" || key == "ring_heap" || key == "ring_dep_pool")) {
      continue;  // None: unset, as in PyPTO's RunConfig
    } else if (key == "ring_task_window") {
      o.ring_task_window = ring_values_json(v, key, file, at);
    } else if (key == "ring_heap") {
      o.ring_heap = ring_values_json(v, key, file, at);
    } else if (key == "ring_dep_pool") {
      o.ring_dep_pool = ring_values_json(v, key, file, at);
    } else if (key == "runtime") {
      o.runtime = kRuntime.json(v, file, at);
    } else if (key == "hbg_layout") {
      o.hbg_layout = kHbgLayout.json(v, file, at);
    } else if (key == "cache_policy_lowering") {
      o.cache_policy_lowering = kCacheLowering.json(v, file, at);
    } else if (key == "seed") {
      std::uint64_t s = 0;
      if (!json_uint64(v, s)) throw InputError(file, at, "seed must be a non-negative integer, got " + describe_json(v));
      o.seed = s;
    } else if (key == "scheduler_timeout_ms") {
      std::uint64_t ms = 0;
      if (!json_uint64(v, ms) || ms < 1 || ms > kInt32Max)
        throw InputError(file, at, kSchedTimeoutExpected + describe_json(v));
      o.scheduler_timeout_ms = ms;
    }
  }
  return o;
}

RunOptions parse_run_block(const nlohmann::json& run, const std::string& file, const std::string& path) {
  return run_block(run, file, path);
}
RunOptions parse_run_block(const nlohmann::ordered_json& run, const std::string& file, const std::string& path) {
  return run_block(run, file, path);
}

RunOptions merge(const RunOptions& base, const RunOptions& over) {
  RunOptions m = base;
  take(m.aicpu_thread_num, over.aicpu_thread_num);
  take(m.ring_task_window, over.ring_task_window);
  take(m.ring_heap, over.ring_heap);
  take(m.ring_dep_pool, over.ring_dep_pool);
  take(m.runtime, over.runtime);
  take(m.hbg_layout, over.hbg_layout);
  take(m.cache_policy_lowering, over.cache_policy_lowering);
  take(m.seed, over.seed);
  take(m.scheduler_timeout_ms, over.scheduler_timeout_ms);
  return m;
}

void check_against(const RunOptions& options, const Platform& platform, const std::string& file) {
  const int max_threads = platform.topo.aicpu_threads_max;
  const int n = options.aicpu_thread_num.value_or(0);
  if (n != 0 && (n < 2 || n > max_threads))
    throw InputError(file, file == kCommandLine ? "--aicpu-thread-num" : "/run/aicpu_thread_num",
                     "aicpu_thread_num must be 0 (auto) or in range [2, " + std::to_string(max_threads) +
                         "], got " + std::to_string(n));
}

RunConfig resolve(const RunOptions& options, const Platform& platform, const std::string& file) {
  check_against(options, platform, file);
  RunConfig c;
  const int n = options.aicpu_thread_num.value_or(0);
  c.aicpu_thread_num = n == 0 ? platform.topo.aicpu_threads_default : n;
  c.runtime = options.runtime.value_or(RuntimeKind::TensormapRingbuffer);
  c.hbg_layout = options.hbg_layout.value_or(HbgLayout::ResolutionThread);
  c.cache_policy_lowering = options.cache_policy_lowering.value_or(CacheLowering::Today);
  // tensormap_and_ringbuffer: the last thread orchestrates; host_build_graph:
  // the last thread resolves (its default layout) or schedules too.
  const bool all_schedule = c.runtime == RuntimeKind::HostBuildGraph && c.hbg_layout == HbgLayout::AllSchedule;
  c.sched_threads = all_schedule ? c.aicpu_thread_num : c.aicpu_thread_num - 1;
  c.seed = options.seed.value_or(0);
  auto effective = [](const std::optional<RingValues>& over, const RingValues& defaults) {
    RingValues r = defaults;
    if (over)
      for (std::size_t i = 0; i < r.size(); ++i)
        if ((*over)[i] != 0) r[i] = (*over)[i];
    return r;
  };
  c.task_window = effective(options.ring_task_window, platform.limits.task_window);
  c.heap = effective(options.ring_heap, platform.limits.heap);
  c.dep_pool = effective(options.ring_dep_pool, platform.limits.dep_pool);
  c.tensormap_pool = platform.limits.tensormap_pool;
  c.scheduler_timeout = options.scheduler_timeout_ms.value_or(0) * 1000000000ull;  // ms -> ps
  return c;
}

}  // namespace npusim::config
