// Platform files (platforms/*.json) and their loader (sim/platform).
#include "tests/catch.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/json/json_input.h"
#include "sim/platform/platform_loader.h"
#include "tests/test_paths.h"

using namespace npusim;
using nlohmann::json;
using platform::load_platform;
using platform::parse_platform;
using platform::platform_field_pointers;
namespace fs = std::filesystem;

namespace {

std::string source_platform(const std::string& name) {
  return std::string(NPUSIM_SOURCE_DIR) + "/platforms/" + name + ".json";
}
std::string test_data(const std::string& name) {
  return std::string(NPUSIM_TEST_DATA_DIR) + "/platform/" + name;
}
json platform_json(const std::string& name) { return json_input::read_file(source_platform(name)); }

InputError error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  throw std::logic_error("unreachable");
}

// Parses a modified platform document as the file "mut.json".
Platform parse_doc(const json& doc) { return parse_platform(doc.dump(2), "mut.json"); }
InputError parse_error(const json& doc) {
  return error_of([&] { parse_doc(doc); });
}

void check_error(const InputError& e, const std::string& file, const std::string& path,
                 const std::string& message) {
  CHECK(e.file() == file);
  CHECK(e.path() == path);
  CHECK(e.message() == message);
}

json& at(json& doc, const std::string& pointer) { return doc[json::json_pointer(pointer)]; }

// tiny.json with the value at `pointer` set (added if absent).
json tiny_with(const std::string& pointer, const json& value) {
  json doc = platform_json("tiny");
  at(doc, pointer) = value;
  return doc;
}

// Parsing `doc` fails at `path` with exactly `message`.
void expect_rejected(const json& doc, const std::string& path, const std::string& message) {
  check_error(parse_error(doc), "mut.json", path, message);
}

// tiny.json without the key at `pointer`.
json tiny_without(const std::string& pointer) {
  json doc = platform_json("tiny");
  json::json_pointer p(pointer);
  doc[p.parent_pointer()].erase(p.back());
  return doc;
}

// A fresh directory under the system temp dir, removed on destruction.
struct PlatformDir {
  fs::path path;
  explicit PlatformDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("npusim_test_platform_" + tag + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~PlatformDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  void write(const std::string& name, const json& doc) const {
    std::ofstream(path / name) << doc.dump(2);
  }
};

}  // namespace

TEST_CASE("platform: a2a3 loads by name with a source or assumption for every field", "[platform]") {
  Platform p = load_platform("a2a3");
  CHECK(p.name == "a2a3");
  CHECK(fs::equivalent(p.path, source_platform("a2a3")));
  json doc = platform_json("a2a3");
  auto pointers = platform_field_pointers();
  CHECK(pointers.size() == 84);  // timeouts.op_execute_ns, limits.max_dims and the cross_core section removed; ffts.flag_ns, gm.l2_*, gm.hbm_bytes_per_ns (issue 17), limits.arena_build_ns (issue 15), limits.hbg_*_queue_capacity and the interconnect section (issue 15) added; orch.lookup_entry_ns added
  CHECK(p.provenance.size() == pointers.size());
  for (const auto& ptr : pointers) {
    INFO(ptr);
    REQUIRE(p.provenance.count(ptr) == 1);
    CHECK_FALSE(p.provenance.at(ptr).empty());
    REQUIRE(doc.contains(json::json_pointer(ptr)));
    const json& leaf = doc[json::json_pointer(ptr)];
    // Every source carries one of the labels docs/platform.md defines; a
    // fitted value says so in its own field, never under "source".
    if (leaf.contains("source")) {
      const std::string s = leaf["source"];
      bool labelled = false;
      for (const char* label : {"[S]", "[S~]", "[M]", "[D]", "[D from S]", "[C]"})
        labelled = labelled || s.find(label) != std::string::npos;
      CHECK(labelled);
      CHECK(s.find("[F]") == std::string::npos);
      CHECK(p.provenance.at(ptr) == s);
    } else if (leaf.contains("fitted")) {
      CHECK(p.provenance.at(ptr) == leaf["fitted"].get<std::string>());
    } else {
      CHECK(p.provenance.at(ptr) == leaf["assumption"].get<std::string>());
    }
  }
}

TEST_CASE("platform: a2a3 values and their derivations", "[platform]") {
  Platform p = load_platform("a2a3");
  CHECK(p.topo.clusters == 24);
  CHECK(p.topo.total_cores() == 72);
  CHECK(p.topo.aicpu_threads_max == 4);
  CHECK(p.topo.aicpu_threads_default == 4);
  CHECK(p.topo.dummy_threads == 3);
  CHECK(p.topo.aicore_clock_hz == 1.5e9);
  CHECK(p.topo.sys_cnt_freq_hz == 50000000);
  CHECK(p.topo.device_memory_bytes == 65820373811ull);  // 61.3 GiB, rounded down
  CHECK(p.sys_cnt(0) == 1000000);
  CHECK(p.sys_cnt(ns(20)) == 1000001);
  CHECK(p.aicore_cycles(1500) == ns(1000));

  for (int r = 0; r < kNumRings; ++r) {
    CHECK(p.limits.task_window[r] == 16384);
    CHECK(p.limits.heap[r] == 268435456);
    CHECK(p.limits.dep_pool[r] == 16384);
  }
  CHECK(p.limits.tensormap_pool == 65536);
  CHECK(p.limits.arena_bytes_per_slot == 40 + 64 + 4864);
  CHECK(p.limits.packed_output_align == 1024);

  CHECK(p.timeouts.scheduler_no_progress == us(10000000));
  CHECK(p.timeouts.alloc_no_progress == us(500000));
  CHECK(p.timeouts.tensor_wait == us(15000000));

  CHECK(p.sched.loop == ns(40));
  CHECK(p.sched.poll_cond == ns(100));  // a measured COND read, not aSim's fitted 195
  CHECK(p.sched.fanout_edge == ns(63));
  CHECK(p.sched.mmio_write == ns(5));

  // The orchestrator split reassembles the 0.874 us submit for the assumed
  // arg mix (4 args, 3 lookups, 1.5 inserts, 1.5 edges), up to rounding.
  double submit = to_ns(p.orch.submit_base) + 4 * to_ns(p.orch.submit_arg) + 3 * to_ns(p.orch.lookup) +
                  1.5 * to_ns(p.orch.insert) + 1.5 * to_ns(p.orch.edge);
  CHECK(std::abs(submit - 874.0) <= 3.0);
  CHECK(p.orch.scope_end_task == ns(22));

  CHECK(p.core.dmb_arrival + p.core.entry_poll == ns(628));  // the 633 +- 236 ns observation
  CHECK(p.core.receive_to_start == ns(349));
  CHECK(p.core.ack_write == ns(10));
  CHECK(p.gm.line_bytes == 64);
  CHECK(p.gm.bytes_per_ns == 32.0);
  CHECK(p.ffts.barrier_release == ns(500));
  CHECK(p.ffts.flag == ns(100));
}

// Platform::sys_cnt computes in 64 bits where time x frequency fits and in
// 128 bits beyond: the two give the floor of t x f / 10^12 and meet at the
// edge (at 50 MHz the product passes 2^64 at t = 368,934,881,474 ps).
TEST_CASE("platform: the system counter is exact on both sides of the 64-bit product", "[platform]") {
  Platform p;
  p.topo.sys_cnt_freq_hz = 50000000;
  p.topo.sys_cnt_base = 7;
  const Time edge = ~Time{0} / p.topo.sys_cnt_freq_hz;  // the last t whose product fits
  for (const Time t : {Time{0}, Time{19999}, Time{20000}, edge - 1, edge, edge + 1, edge + 20000,
                       Time{1000000000000000000ull}, ~Time{0}}) {
    INFO(t);
    const auto want = static_cast<std::uint64_t>(static_cast<unsigned __int128>(t) * 50000000u / 1000000000000ull);
    CHECK(p.sys_cnt(t) == 7 + want);
  }
  CHECK(p.sys_cnt(edge) == 7 + 18446744);  // 368,934,881,474 ps = 368.93 ms: 18,446,744 ticks
  CHECK(p.sys_cnt(Time{1000000000000000000ull}) == 7 + 50000000000000ull);  // 10^6 s
}

TEST_CASE("platform: tiny loads with round numbers and a2a3 sources where values agree", "[platform]") {
  Platform p = load_platform("tiny");
  CHECK(p.name == "tiny");
  CHECK(p.topo.clusters == 2);
  CHECK(p.topo.total_cores() == 6);
  CHECK(p.topo.aicore_clock_hz == 1e9);
  CHECK(p.topo.device_memory_bytes == 1073741824);
  for (int r = 0; r < kNumRings; ++r) {
    CHECK(p.limits.task_window[r] == 64);
    CHECK(p.limits.heap[r] == 1048576);
    CHECK(p.limits.dep_pool[r] == 64);
  }
  CHECK(p.limits.tensormap_pool == 256);
  CHECK(p.sched.loop == ns(10));
  CHECK(p.sched.poll_cond == ns(100));
  CHECK(p.sched.complete_subtask == 0);
  CHECK(p.orch.submit_base == ns(200));
  CHECK(p.core.dmb_arrival == ns(300));
  CHECK(p.core.receive_to_start == ns(500));
  CHECK(p.gm.bytes_per_ns == 64.0);
  CHECK(p.ffts.barrier_release == ns(100));
  CHECK(p.ffts.flag == ns(20));
  CHECK(p.interconnect.chips_per_node == 8);
  CHECK(p.interconnect.link_latency == ns(1000));
  CHECK(p.interconnect.link_bytes_per_ns == 10.0);
  CHECK(p.interconnect.host_dispatch == ns(1000));
  CHECK(p.timeouts.scheduler_no_progress == us(10000000));
  CHECK(p.provenance.size() == platform_field_pointers().size());
  CHECK(p.provenance.at("/sched/loop_ns") == "round number for hand-checked tests");
  CHECK(p.provenance.at("/limits/max_tensor_args").rfind("as a2a3: [C]", 0) == 0);
}

TEST_CASE("platform: every field is required", "[platform]") {
  for (const auto& ptr : platform_field_pointers()) {
    INFO(ptr);
    std::string key = json::json_pointer(ptr).back();
    expect_rejected(tiny_without(ptr), ptr,
                    "missing field \"" + key + "\" (a platform must give every field; see docs/platform.md)");
  }
  expect_rejected(tiny_without("/ffts"), "/ffts",
                  "missing field \"ffts\" (a platform must give every field; see docs/platform.md)");
}

TEST_CASE("platform: unknown keys are errors and x_ keys are ignored", "[platform]") {
  expect_rejected(tiny_with("/sched/loop_nss", {{"value", 1}, {"assumption", "typo"}}), "/sched/loop_nss",
                  "unknown key \"loop_nss\"; expected one of: loop_ns, poll_cond_ns, complete_task_ns, "
                  "complete_subtask_ns, fanout_edge_ns, ready_push_ns, dispatch_pop_ns, dispatch_task_ns, dispatch_block_ns, "
                  "wmb_ns, mmio_write_ns, dummy_task_ns, release_task_ns, predicate_eval_ns "
                  "(keys starting with x_ are ignored)");
  expect_rejected(tiny_with("/cores", json::object()), "/cores",
                  "unknown key \"cores\"; expected one of: npusim_platform, name, description, topology, "
                  "limits, timeouts, sched, orch, core, gm, ffts, interconnect (keys starting with x_ are ignored)");
  expect_rejected(tiny_with("/gm/fence_ns/sorce", "typo"), "/gm/fence_ns/sorce",
                  "unknown key \"sorce\"; expected one of: value, source, assumption, fitted, note "
                  "(keys starting with x_ are ignored)");

  json doc = tiny_with("/x_comment", "ignored");
  at(doc, "/sched/x_todo") = 1;
  at(doc, "/sched/loop_ns/x_previous") = 12;
  Platform p = parse_doc(doc);
  CHECK(p.sched.loop == ns(10));
  CHECK(p.provenance.size() == platform_field_pointers().size());
}

TEST_CASE("platform: a leaf needs a value and one of source, assumption or fitted", "[platform]") {
  expect_rejected(tiny_without("/sched/loop_ns/assumption"), "/sched/loop_ns",
                  "expected exactly one of \"source\", \"assumption\" or \"fitted\", found none");
  expect_rejected(tiny_with("/sched/loop_ns/source", "[S] also measured"), "/sched/loop_ns",
                  "expected exactly one of \"source\", \"assumption\" or \"fitted\", found \"source\" and \"assumption\"");
  expect_rejected(tiny_with("/sched/loop_ns/fitted", "to a window"), "/sched/loop_ns",
                  "expected exactly one of \"source\", \"assumption\" or \"fitted\", found \"assumption\" and \"fitted\"");
  {
    // A fitted leaf loads, and its provenance is what it was fitted to.
    json doc = tiny_without("/sched/loop_ns/assumption");
    at(doc, "/sched/loop_ns/fitted") = "to a window";
    Platform p = parse_doc(doc);
    CHECK(p.provenance.at("/sched/loop_ns") == "to a window");
    json empty = tiny_without("/sched/loop_ns/assumption");
    at(empty, "/sched/loop_ns/fitted") = " ";
    expect_rejected(empty, "/sched/loop_ns/fitted",
                    "expected what the value was fitted to (a non-empty string), found string \" \"");
  }
  expect_rejected(tiny_with("/sched/loop_ns/assumption", " "), "/sched/loop_ns/assumption",
                  "expected an assumption (a non-empty string), found string \" \"");
  json doc = platform_json("a2a3");
  at(doc, "/sched/loop_ns/source") = 3;
  expect_rejected(doc, "/sched/loop_ns/source", "expected a source (a non-empty string), found number 3");
  expect_rejected(tiny_without("/core/loop_ns/value"), "/core/loop_ns", "missing \"value\"");
  expect_rejected(tiny_with("/core/loop_ns", 10), "/core/loop_ns",
                  "expected a leaf {\"value\": ..., \"source\", \"assumption\" or \"fitted\": \"...\"}, found number 10");
  expect_rejected(tiny_with("/core/loop_ns/note", json::array()), "/core/loop_ns/note",
                  "expected a string, found a list of 0");
}

TEST_CASE("platform: values are type- and range-checked", "[platform]") {
  struct Case {
    const char* pointer;
    json value;
    const char* message;
  };
  const Case cases[] = {
      {"/sched/loop_ns/value", "40", "expected a time in ns in [0, 3600000000000], found string \"40\""},
      {"/sched/loop_ns/value", -1, "expected a time in ns in [0, 3600000000000], found number -1"},
      {"/timeouts/tensor_wait_ns/value", 0, "expected a time in ns in [1, 3600000000000], found number 0"},
      {"/topology/clusters/value", 2.5, "expected an integer in [1, 1024], found number 2.5"},
      {"/topology/clusters/value", 0, "expected an integer in [1, 1024], found number 0"},
      {"/topology/aicpu_threads_max/value", 9, "expected an integer in [2, 8], found number 9"},
      {"/topology/aicore_clock_hz/value", nullptr,
       "expected a frequency in Hz in [1000000, 100000000000], found null"},
      {"/gm/bytes_per_ns/value", 0, "expected a bandwidth in B/ns in [0.001, 1000000], found number 0"},
      {"/gm/line_bytes/value", 48, "expected a power of 2 in [4, 1048576], found number 48"},
      {"/limits/heap_block_align/value", 0, "expected a power of 2 in [1, 1073741824], found number 0"},
      {"/limits/max_tensor_args/value", true, "expected an integer in [1, 1024], found true"},
      {"/gm", 5, "expected an object of fields, found number 5"},
      {"/interconnect/chips_per_node/value", 0, "expected an integer in [1, 4096], found number 0"},
      {"/interconnect/link_bytes_per_ns/value", 0, "expected a bandwidth in B/ns in [0.001, 1000000], found number 0"},
      {"/interconnect/link_latency_ns/value", -5, "expected a time in ns in [0, 3600000000000], found number -5"},
      {"/interconnect", json::array(), "expected an object of fields, found a list of 0"},
  };
  for (const Case& c : cases) {
    INFO(c.pointer << " = " << c.value.dump());
    expect_rejected(tiny_with(c.pointer, c.value), c.pointer, c.message);
  }

  // Fractional ns round to ps; integral floats are integers.
  CHECK(parse_doc(tiny_with("/sched/loop_ns/value", 0.5)).sched.loop == ps(500));
  CHECK(parse_doc(tiny_with("/sched/poll_cond_ns/value", 12.3456)).sched.poll_cond == ps(12346));
  CHECK(parse_doc(tiny_with("/topology/clusters/value", 3.0)).topo.clusters == 3);
}

TEST_CASE("platform: per-ring arrays take four values or one", "[platform]") {
  const std::string window = "/limits/task_window/value";
  const std::string either = "expected a power of 2 in [4, 1073741824] or a list of 4 of them (one per ring), found ";
  expect_rejected(tiny_with(window, {64, 64, 100, 64}), window + "/2",
                  "expected a power of 2 in [4, 1073741824], found number 100");
  expect_rejected(tiny_with(window, 2), window, either + "number 2");
  expect_rejected(tiny_with(window, {64, 64, 64}), window, either + "a list of 3");
  expect_rejected(tiny_with("/limits/heap/value", {2048, 1000, 2048, 2048}), "/limits/heap/value/1",
                  "expected an integer >= 1024, found number 1000");

  json doc = tiny_with(window, 128);
  at(doc, "/limits/heap/value") = {1024, 2048, 4096, 8192};
  Platform p = parse_doc(doc);
  CHECK(p.limits.task_window == std::array<std::uint64_t, kNumRings>{128, 128, 128, 128});
  CHECK(p.limits.heap == std::array<std::uint64_t, kNumRings>{1024, 2048, 4096, 8192});
}

TEST_CASE("platform: header fields and cross-field limits", "[platform]") {
  expect_rejected(tiny_with("/npusim_platform", 2), "/npusim_platform",
                  "expected 1 (the only platform format version), found number 2");
  expect_rejected(tiny_with("/name", ""), "/name",
                  "expected a platform name (a non-empty string), found string \"\"");
  expect_rejected(tiny_with("/name", "my chip"), "/name",
                  "expected a platform name of letters, digits, '_', '-' and '.', found string \"my chip\"");
  expect_rejected(tiny_with("/description", nullptr), "/description", "expected a string, found null");
  expect_rejected(tiny_with("/topology/aicpu_threads_default/value", 5), "/topology/aicpu_threads_default/value",
                  "expected an integer in [2, aicpu_threads_max = 4], found number 5");
  expect_rejected(tiny_with("/topology/dummy_threads/value", 4), "/topology/dummy_threads/value",
                  "expected an integer in [1, aicpu_threads_max - 1 = 3] (at most every scheduler thread), "
                  "found number 4");
  expect_rejected(tiny_with("/core/ack_write_ns/value", 501), "/core/ack_write_ns/value",
                  "expected at most receive_to_start_ns = number 500 (the ACK write is part of the receive-to-start "
                  "setup), found number 501");
  expect_rejected(json::array(), "",
                  "expected a platform object {\"npusim_platform\": 1, \"name\": ..., sections}, found a list of 0");
}

TEST_CASE("platform: file and JSON syntax errors", "[platform]") {
  std::string bad = test_data("bad_syntax.json");
  InputError e = error_of([&] { load_platform(bad); });
  CHECK(e.file() == bad);
  CHECK(e.path() == "");
  CHECK_THAT(e.message(), Catch::StartsWith("invalid JSON: parse error at line 6, column 3"));

  check_error(error_of([] { load_platform("/nonexistent/dir/x.json"); }), "/nonexistent/dir/x.json", "",
              "file not found");
  check_error(error_of([] { load_platform(std::string(NPUSIM_TEST_DATA_DIR) + "/platform/"); }),
              std::string(NPUSIM_TEST_DATA_DIR) + "/platform/", "", "is a folder, not a JSON file");

  check_error(error_of([] {
                parse_platform(R"({"npusim_platform": 1, "topology": {"clusters": {"value": 1, "value": 2}}})",
                               "dup.json");
              }),
              "dup.json", "/topology/clusters",
              "duplicate key \"value\" (each key may appear once per object)");
  // The duplicate's pointer counts list elements.
  check_error(error_of([] { json_input::parse(R"({"a": [1, {"b~/": 1, "b~/": 2}]})", "dup.json"); }),
              "dup.json", "/a/1", "duplicate key \"b~/\" (each key may appear once per object)");
  check_error(error_of([] { json_input::parse(R"([[1, 2], {"k": {"z": 0, "z": 1}}])", "dup.json"); }),
              "dup.json", "/1/k", "duplicate key \"z\" (each key may appear once per object)");
  CHECK(json_input::pointer_join("/a", "b~/c") == "/a/b~0~1c");
}

TEST_CASE("platform: unknown names list the directories searched and the names available", "[platform]") {
  InputError e = error_of([] { load_platform("no_such_chip"); });
  CHECK(e.file() == "no_such_chip");
  CHECK(e.path() == "");
  CHECK_THAT(e.message(), Catch::StartsWith("no platform named \"no_such_chip\": looked for no_such_chip.json in "));
  CHECK_THAT(e.message(), Catch::Contains(std::string(NPUSIM_SOURCE_DIR) + "/platforms, ./platforms; available: "));
  CHECK_THAT(e.message(), Catch::Contains("a2a3") && Catch::Contains("tiny"));
}

TEST_CASE("platform: search order starts with NPUSIM_PLATFORM_DIR", "[platform]") {
  ::unsetenv("NPUSIM_PLATFORM_DIR");
  auto dirs = platform::platform_search_dirs();
  fs::path exe = fs::read_symlink("/proc/self/exe");
  REQUIRE(dirs.size() == 4);
  CHECK(dirs[0] == (exe.parent_path().parent_path() / "platforms").lexically_normal().string());
  CHECK(dirs[1] == (exe.parent_path().parent_path() / "share/npusim/platforms").lexically_normal().string());
  CHECK(dirs[2] == std::string(NPUSIM_SOURCE_DIR) + "/platforms");
  CHECK(dirs[3] == "./platforms");

  PlatformDir tmp("search");
  json mini = platform_json("tiny");
  mini["name"] = "mini";
  tmp.write("mini.json", mini);
  json shadow = platform_json("tiny");
  at(shadow, "/topology/clusters/value") = 3;
  tmp.write("tiny.json", shadow);

  ::setenv("NPUSIM_PLATFORM_DIR", (tmp.path.string() + "/").c_str(), 1);
  dirs = platform::platform_search_dirs();
  CHECK(dirs.front() == tmp.path.string());
  CHECK(load_platform("mini").name == "mini");
  CHECK(load_platform("tiny").topo.clusters == 3);  // the first directory wins
  CHECK(load_platform("a2a3").topo.clusters == 24);
  ::unsetenv("NPUSIM_PLATFORM_DIR");
  CHECK(load_platform("tiny").topo.clusters == 2);
}
