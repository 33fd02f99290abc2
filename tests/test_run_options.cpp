// Run configuration (sim/config/run_options.h): the `run` block, command-line
// ring values, merging and resolution against a platform.
#include "tests/catch.h"

#include <map>

#include <nlohmann/json.hpp>

#include "sim/config/run_options.h"

using namespace npusim;
using nlohmann::json;

namespace {

// Runs `f`, which must throw an InputError, and returns "file|path|message".
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.file() + "|" + e.path() + "|" + e.message();
  }
  return "no error";
}

std::string ring_json_error(const char* text, const std::string& field) {
  return input_error([&] { config::parse_ring_json(json::parse(text), field, "t.json", "/run/" + field); });
}

std::string ring_cli_error(const std::string& text, const std::string& field) {
  return input_error([&] { config::parse_ring_cli(text, field); });
}

std::string run_error(const char* text) {
  return input_error([&] { config::parse_run_block(json::parse(text), "t.json", "/run"); });
}

Platform test_platform() {
  Platform p;
  p.topo.aicpu_threads_max = 4;
  p.topo.aicpu_threads_default = 4;
  p.limits.task_window = {16384, 16384, 16384, 16384};
  p.limits.heap = {1ull << 28, 1ull << 28, 1ull << 28, 1ull << 28};
  p.limits.dep_pool = {16384, 16384, 16384, 16384};
  p.limits.tensormap_pool = 65536;
  return p;
}

}  // namespace

TEST_CASE("run options: ring values from JSON, scalar and list") {
  CHECK(config::parse_ring_json(json(1024), "ring_heap", "f", "/p") == RingValues{1024, 1024, 1024, 1024});
  CHECK(config::parse_ring_json(json::parse("[0, 0, 2147483648, 0]"), "ring_heap", "f", "/p") ==
        RingValues{0, 0, 2147483648ull, 0});
  CHECK(config::parse_ring_json(json::parse("[4, 8, 0, 65536]"), "ring_task_window", "f", "/p") ==
        RingValues{4, 8, 0, 65536});
  CHECK(config::parse_ring_json(json(2147483647), "ring_dep_pool", "f", "/p") ==
        RingValues{2147483647, 2147483647, 2147483647, 2147483647});
  CHECK(config::parse_ring_json(json(5), "ring_dep_pool", "f", "/p")[3] == 5);
}

// PyPTO validates the ring fields first (python/pypto/runtime/runner.py,
// RunConfig._validate_ring_overrides, from __post_init__; seed 003): its
// messages, with Python's repr of the value. What it lets through meets the
// runtime's RuntimeEnv::validate (src/common/task_interface/call_config.h).
TEST_CASE("run options: bad ring values get PyPTO's RunConfig messages (the heap's rule is the runtime's)") {
  const std::map<std::string, std::string> rule = {
      {"ring_heap", "ring_heap must be >= 1024 (bytes per ring), got "},
      {"ring_task_window", "ring_task_window must be a power of 2 >= 4, got "},
      {"ring_dep_pool", "ring_dep_pool must be in [4, INT32_MAX], got "}};
  // Non-integers (booleans included) get the same message as a bad value;
  // a scalar 0 is rejected (None, not 0, leaves a field unset).
  const std::map<std::string, std::vector<std::pair<std::string, std::string>>> bad = {
      {"ring_heap", {{"1000", "1000"}, {"512", "512"}, {"0", "0"}, {"true", "True"}, {"1024.0", "1024.0"},
                     {"1.5", "1.5"}, {"\"1024\"", "'1024'"}, {"{}", "{}"}, {"{\"a\": [1, null]}", "{'a': [1, None]}"}}},
      {"ring_task_window", {{"6", "6"}, {"2", "2"}, {"-4", "-4"}, {"false", "False"}, {"0", "0"}}},
      {"ring_dep_pool", {{"2", "2"}, {"2147483648", "2147483648"}, {"0", "0"}}}};
  for (const auto& [field, values] : bad) {
    for (const auto& [text, repr] : values) {
      INFO(field << " = " << text);
      CHECK(ring_json_error(text.c_str(), field) == "t.json|/run/" + field + "|" + rule.at(field) + repr);
    }
  }
  CHECK(ring_json_error("\"it's\"", "ring_heap") == "t.json|/run/ring_heap|" + rule.at("ring_heap") + "\"it's\"");

  // Lists: exactly 4 entries; each entry meets the rule or is 0; the path
  // points at a bad element.
  const std::string count = " must have exactly 4 entries (one per scope-depth ring), got ";
  CHECK(ring_json_error("[1024, 1024, 1024]", "ring_heap") == "t.json|/run/ring_heap|ring_heap" + count + "3");
  CHECK(ring_json_error("[]", "ring_dep_pool") == "t.json|/run/ring_dep_pool|ring_dep_pool" + count + "0");
  CHECK(ring_json_error("[0, 1024, 1000, 0]", "ring_heap") ==
        "t.json|/run/ring_heap/2|ring_heap entries must be >= 1024 (bytes per ring) (or 0 to keep "
        "default), got 1000");
  CHECK(ring_json_error("[0, false, 0, 0]", "ring_task_window") ==
        "t.json|/run/ring_task_window/1|ring_task_window entries must be a power of 2 >= 4 (or 0 to keep default), "
        "got False");
  CHECK(ring_json_error("[0, null, 0, 0]", "ring_dep_pool") ==
        "t.json|/run/ring_dep_pool/1|ring_dep_pool entries must be in [4, INT32_MAX] (or 0 to keep default), got None");

  // PyPTO has no upper bound on the window; the runtime's CallConfig does.
  const std::string runtime = "RuntimeEnv: ring_task_window must be a power of 2 in [4, INT32_MAX]";
  CHECK(ring_json_error("2147483648", "ring_task_window") == "t.json|/run/ring_task_window|" + runtime);
  CHECK(ring_json_error("[0, 0, 4294967296, 0]", "ring_task_window") == "t.json|/run/ring_task_window|" + runtime);
  CHECK(config::parse_ring_json(json(1073741824), "ring_task_window", "f", "/p")[0] == 1073741824u);
  // The runtime takes any heap >= 1024 and dep pool in range; PyPTO is stricter.
  CHECK(config::parse_ring_json(json(9223372036854775808ull), "ring_heap", "f", "/p")[0] == 9223372036854775808ull);
}

// The heap takes the runtime's rule, not PyPTO's power of 2: any size >= 1024
// bytes (src/common/task_interface/call_config.h, RuntimeEnv::validate,
// "RuntimeEnv: ring_heap must be >= 1024 (bytes per ring)"; the same bound in
// host/runtime_maker.cpp, resolve_ring_config). simpler's tests/st
// heap_empty_ring_rebase sizes ring 1 at 1.5 MiB.
TEST_CASE("run options: a ring heap is any size >= 1024, as RuntimeEnv::validate takes it") {
  // Both sides of the boundary, scalar and list entry.
  CHECK(ring_json_error("1023", "ring_heap") == "t.json|/run/ring_heap|ring_heap must be >= 1024 (bytes per ring), got 1023");
  CHECK(config::parse_ring_json(json(1024), "ring_heap", "f", "/p") == RingValues{1024, 1024, 1024, 1024});
  CHECK(config::parse_ring_json(json(1025), "ring_heap", "f", "/p") == RingValues{1025, 1025, 1025, 1025});
  CHECK(config::parse_ring_json(json::parse("[0, 1572864, 0, 3000]"), "ring_heap", "f", "/p") ==
        RingValues{0, 1572864, 0, 3000});
  CHECK(ring_json_error("[0, 1572864, 1023, 0]", "ring_heap") ==
        "t.json|/run/ring_heap/2|ring_heap entries must be >= 1024 (bytes per ring) (or 0 to keep default), got 1023");
  CHECK(config::parse_ring_cli("1572864", "ring_heap") == RingValues{1572864, 1572864, 1572864, 1572864});
  CHECK(config::parse_ring_cli("0,1025,0,0", "ring_heap") == RingValues{0, 1025, 0, 0});
  CHECK(ring_cli_error("1023", "ring_heap") == "command line|--ring-heap|ring_heap must be >= 1024 (bytes per ring), got 1023");
  // The task window keeps its power of 2 (RuntimeEnv::validate: pow2 in
  // [4, INT32_MAX]); the dep pool is any count in [4, INT32_MAX] on both layers.
  CHECK(ring_json_error("12", "ring_task_window") == "t.json|/run/ring_task_window|ring_task_window must be a power of 2 >= 4, got 12");
  CHECK(config::parse_ring_json(json(4), "ring_task_window", "f", "/p")[0] == 4u);
  CHECK(config::parse_ring_json(json(1000), "ring_dep_pool", "f", "/p")[0] == 1000u);
  CHECK(ring_json_error("3", "ring_dep_pool") == "t.json|/run/ring_dep_pool|ring_dep_pool must be in [4, INT32_MAX], got 3");
  CHECK(config::parse_ring_json(json(4), "ring_dep_pool", "f", "/p")[0] == 4u);
}

TEST_CASE("run options: ring values from the command line") {
  CHECK(config::parse_ring_cli("2048", "ring_heap") == RingValues{2048, 2048, 2048, 2048});
  CHECK(config::parse_ring_cli("0,0,2147483648,0", "ring_heap") == RingValues{0, 0, 2147483648ull, 0});
  CHECK(config::parse_ring_cli("0,0,0,0", "ring_dep_pool") == RingValues{0, 0, 0, 0});
  const std::string heap = "command line|--ring-heap|ring_heap must be >= 1024 (bytes per ring), got ";
  CHECK(ring_cli_error("1000", "ring_heap") == heap + "1000");
  CHECK(ring_cli_error("0", "ring_heap") == heap + "0");
  CHECK(ring_cli_error("abc", "ring_heap") == heap + "abc");
  CHECK(ring_cli_error("-4", "ring_heap") == heap + "-4");
  CHECK(ring_cli_error("1.5", "ring_heap") == heap + "1.5");
  CHECK(ring_cli_error("", "ring_heap") == heap + "''");
  CHECK(ring_cli_error("99999999999999999999", "ring_heap") == heap + "99999999999999999999");
  CHECK(ring_cli_error("0,0,,0", "ring_heap") ==
        "command line|--ring-heap|ring_heap entries must be >= 1024 (bytes per ring) (or 0 to keep "
        "default), got ''");
  CHECK(ring_cli_error("1,2", "ring_heap") ==
        "command line|--ring-heap|ring_heap must have exactly 4 entries (one per scope-depth ring), got 2");
  CHECK(ring_cli_error("4,4,4,4,4", "ring_task_window") ==
        "command line|--ring-task-window|ring_task_window must have exactly 4 entries (one per scope-depth ring), "
        "got 5");
  CHECK(ring_cli_error("8,8,6,8", "ring_task_window") ==
        "command line|--ring-task-window|ring_task_window entries must be a power of 2 >= 4 (or 0 to keep default), "
        "got 6");
  CHECK(ring_cli_error("3", "ring_dep_pool") ==
        "command line|--ring-dep-pool|ring_dep_pool must be in [4, INT32_MAX], got 3");
  CHECK(ring_cli_error("2147483648", "ring_task_window") ==
        "command line|--ring-task-window|RuntimeEnv: ring_task_window must be a power of 2 in [4, INT32_MAX]");
}

TEST_CASE("run options: the run block") {
  RunOptions o = config::parse_run_block(
      json::parse(R"({"aicpu_thread_num": 3, "ring_task_window": [0, 0, 256, 0], "ring_heap": 4096,
                      "ring_dep_pool": 64, "runtime": "host_build_graph", "seed": 42, "x_note": [1]})"),
      "t.json", "/run");
  CHECK(o.aicpu_thread_num == 3);
  CHECK(o.ring_task_window == RingValues{0, 0, 256, 0});
  CHECK(o.ring_heap == RingValues{4096, 4096, 4096, 4096});
  CHECK(o.ring_dep_pool == RingValues{64, 64, 64, 64});
  CHECK(o.runtime == RuntimeKind::HostBuildGraph);
  CHECK(o.seed == 42u);
  RunOptions empty = config::parse_run_block(json::object(), "t.json", "/run");
  // null is PyPTO's None: the field stays unset.
  CHECK_FALSE(config::parse_run_block(json::parse(R"({"ring_heap": null})"), "t.json", "/run").ring_heap);
  CHECK_FALSE(empty.aicpu_thread_num);
  CHECK_FALSE(empty.ring_heap);
  CHECK_FALSE(empty.runtime);
  CHECK_FALSE(empty.seed);
  CHECK(config::parse_run_block(json::parse(R"({"seed": 18446744073709551615})"), "t", "/run").seed ==
        18446744073709551615ull);
}

TEST_CASE("run options: run block errors") {
  CHECK(run_error(R"({"ring_heapp": 1024})") ==
        "t.json|/run/ring_heapp|unknown key \"ring_heapp\" (expected one of: aicpu_thread_num, ring_task_window, "
        "ring_heap, ring_dep_pool, runtime, hbg_layout, cache_policy_lowering, seed, scheduler_timeout_ms)");
  // SIMPLER_SCHEDULER_TIMEOUT_MS's range (runtime_timeout_config.h resolve_runtime_timeout_config).
  CHECK(run_error(R"({"scheduler_timeout_ms": 0})") ==
        "t.json|/run/scheduler_timeout_ms|scheduler_timeout_ms must be an integer in [1, INT32_MAX] (ms), got 0");
  CHECK(run_error(R"({"scheduler_timeout_ms": 2147483648})") ==
        "t.json|/run/scheduler_timeout_ms|scheduler_timeout_ms must be an integer in [1, INT32_MAX] (ms), got "
        "2147483648");
  CHECK(run_error(R"({"scheduler_timeout_ms": "2000"})") ==
        "t.json|/run/scheduler_timeout_ms|scheduler_timeout_ms must be an integer in [1, INT32_MAX] (ms), got "
        "\"2000\"");
  CHECK(config::parse_run_block(json::parse(R"({"scheduler_timeout_ms": 2147483647})"), "t", "/run")
            .scheduler_timeout_ms == 2147483647u);
  CHECK(run_error("[]") == "t.json|/run|expected an object, got a list");
  CHECK(run_error(R"({"ring_heap": [1024, 1024, 1024, 1023]})") ==
        "t.json|/run/ring_heap/3|ring_heap entries must be >= 1024 (bytes per ring) (or 0 to keep default), got 1023");
  CHECK(run_error(R"({"runtime": "tensormap"})") ==
        "t.json|/run/runtime|runtime must be \"tensormap_and_ringbuffer\" or \"host_build_graph\", got "
        "\"tensormap\"");
  CHECK(run_error(R"({"runtime": 1})") ==
        "t.json|/run/runtime|runtime must be \"tensormap_and_ringbuffer\" or \"host_build_graph\", got 1");
  CHECK(run_error(R"({"seed": -1})") == "t.json|/run/seed|seed must be a non-negative integer, got -1");
  CHECK(run_error(R"({"seed": 1.5})") == "t.json|/run/seed|seed must be a non-negative integer, got 1.5");
  CHECK(run_error(R"({"aicpu_thread_num": true})") ==
        "t.json|/run/aicpu_thread_num|aicpu_thread_num must be 0 (auto) or an integer >= 2, got true");
  CHECK(run_error(R"({"aicpu_thread_num": 10000000000})") ==
        "t.json|/run/aicpu_thread_num|aicpu_thread_num must be 0 (auto) or an integer >= 2, got 10000000000");
  CHECK(input_error([] { config::parse_runtime_cli("hbg"); }) ==
        "command line|--runtime|runtime must be \"tensormap_and_ringbuffer\" or \"host_build_graph\", got hbg");
  CHECK(config::parse_runtime_cli("host_build_graph") == RuntimeKind::HostBuildGraph);
  CHECK(run_error(R"({"hbg_layout": "3s1p"})") ==
        "t.json|/run/hbg_layout|hbg_layout must be \"resolution_thread\" or \"all_schedule\", got \"3s1p\"");
  CHECK(config::parse_run_block(json::parse(R"({"hbg_layout": "all_schedule"})"), "t", "/run").hbg_layout ==
        HbgLayout::AllSchedule);
  CHECK(input_error([] { config::parse_hbg_layout_cli("all"); }) ==
        "command line|--hbg-layout|hbg_layout must be \"resolution_thread\" or \"all_schedule\", got all");
}

TEST_CASE("run options: merge takes the fields set on the command line") {
  RunOptions trace, cli;
  trace.aicpu_thread_num = 3;
  trace.ring_heap = RingValues{0, 0, 4096, 0};
  trace.seed = 7;
  cli.ring_heap = RingValues{2048, 2048, 2048, 2048};
  cli.runtime = RuntimeKind::HostBuildGraph;
  RunOptions m = config::merge(trace, cli);
  CHECK(m.aicpu_thread_num == 3);
  CHECK(m.ring_heap == RingValues{2048, 2048, 2048, 2048});
  CHECK(m.runtime == RuntimeKind::HostBuildGraph);
  CHECK(m.seed == 7u);
  CHECK_FALSE(m.ring_task_window);
}

TEST_CASE("run options: resolve against the platform") {
  Platform p = test_platform();
  RunConfig d = config::resolve(RunOptions{}, p, "t.json");
  CHECK(d.aicpu_thread_num == 4);
  CHECK(d.sched_threads == 3);
  CHECK(d.runtime == RuntimeKind::TensormapRingbuffer);
  CHECK(d.seed == 0u);
  CHECK(d.task_window == p.limits.task_window);
  CHECK(d.heap == p.limits.heap);
  CHECK(d.dep_pool == p.limits.dep_pool);
  CHECK(d.tensormap_pool == 65536u);

  RunOptions o;
  o.aicpu_thread_num = 2;
  o.ring_task_window = RingValues{0, 0, 256, 0};
  o.ring_heap = RingValues{1024, 0, 0, 0};
  o.ring_dep_pool = RingValues{4, 4, 4, 4};
  o.seed = 9;
  RunConfig c = config::resolve(o, p, "t.json");
  CHECK(c.aicpu_thread_num == 2);
  CHECK(c.sched_threads == 1);
  CHECK(c.task_window == RingValues{16384, 16384, 256, 16384});
  CHECK(c.heap == RingValues{1024, 1ull << 28, 1ull << 28, 1ull << 28});
  CHECK(c.dep_pool == RingValues{4, 4, 4, 4});
  CHECK(c.seed == 9u);

  // host_build_graph: the last thread resolves (scheduler_cold_path.cpp
  // assign_cores_to_threads), or, with hbg_layout all_schedule, schedules too.
  o.runtime = RuntimeKind::HostBuildGraph;
  CHECK(config::resolve(o, p, "t.json").sched_threads == 1);
  CHECK(config::resolve(o, p, "t.json").resolution_thread());
  o.aicpu_thread_num = 0;
  CHECK(config::resolve(o, p, "t.json").sched_threads == 3);
  o.hbg_layout = HbgLayout::AllSchedule;
  CHECK(config::resolve(o, p, "t.json").sched_threads == 4);
  CHECK_FALSE(config::resolve(o, p, "t.json").resolution_thread());
}

TEST_CASE("run options: aicpu_thread_num must be 0 or within the platform's range") {
  Platform p = test_platform();
  auto resolve_error = [&](int n, const char* file) {
    RunOptions o;
    o.aicpu_thread_num = n;
    return input_error([&] { config::resolve(o, p, file); });
  };
  CHECK(resolve_error(1, "t.json") ==
        "t.json|/run/aicpu_thread_num|aicpu_thread_num must be 0 (auto) or in range [2, 4], got 1");
  CHECK(resolve_error(5, "t.json") ==
        "t.json|/run/aicpu_thread_num|aicpu_thread_num must be 0 (auto) or in range [2, 4], got 5");
  CHECK(resolve_error(-1, config::kCommandLine) ==
        "command line|--aicpu-thread-num|aicpu_thread_num must be 0 (auto) or in range [2, 4], got -1");
  CHECK(resolve_error(4, "t.json") == "no error");
  p.topo.aicpu_threads_max = 8;
  CHECK(resolve_error(7, "t.json") == "no error");
}
