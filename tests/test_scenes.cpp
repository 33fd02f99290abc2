// Scenes (docs/scenes.md): orchestration programs compiled against the SDK
// and run as the simulated orchestrator; `npusim record`. These tests
// compile their programs with the system compiler (the compile cache is
// shared by the suite: NPUSIM_CACHE_DIR).
#include "tests/catch.h"

#include <sys/stat.h>

#include "tests/cli_support.h"

namespace {

using cli::has;
using cli::json;
namespace fs = std::filesystem;

const cli::SharedSceneCache scene_tests_cache;  // (a name of its own: unity batches)

json deps_of(const fs::path& out) { return cli::load(out / "deps.json"); }

// `crash.cpp` ending the way `mode` picks (its scalar argument).
fs::path crash_scene(int mode) { return cli::mode_scene("crash", mode); }

}  // namespace

// Every scene shipped in traces/scenes/ runs to the end under its own run
// block. bgemm's is host_build_graph's, where the runtime puts every task on
// ring 0 (Runtime's whole graph): the runner predicted ring = scope depth as
// under tensormap_and_ringbuffer, and npusim stopped with an internal error
// (exit 4, "the runtime gave task t0, the runner predicted r1t0").
TEST_CASE("every example scene runs with status ok under its own run block", "[cli][scene]") {
  int scenes = 0;
  for (const auto& dir : fs::directory_iterator(std::string(NPUSIM_SOURCE_DIR) + "/traces/scenes")) {
    for (const auto& e : fs::directory_iterator(dir.path())) {
      if (e.path().extension() != ".json") continue;
      INFO(e.path().string());
      ++scenes;
      cli::RunResult r = cli::run_summary(cli::quoted(e.path()) + " --quiet --no-host-stats --swimlane-level 0 --no-deps",
                                          "example_scene");
      REQUIRE(r.status == 0);
      CHECK(r.summary["status"] == "ok");
      CHECK(r.summary["tasks"]["completed"] == r.summary["tasks"]["submitted"]);
      if (e.path().stem() == "bgemm") CHECK(r.summary["run"]["runtime"] == "host_build_graph");
    }
  }
  CHECK(scenes >= 6);
}

namespace {

// The outputs of runs `a` and `b` of two files that make the same calls are
// byte-identical, but for the digest of the input file each names
// (summary.json's provenance, the Perfetto file's otherData): the files differ.
void same_outputs_but_trace_digest(const fs::path& a, const fs::path& b, const std::string& name_map) {
  for (const std::string f : {"deps.json", "chip_swimlane_records.json", "task_stats.csv",
                              "scope_stats/scope_stats.jsonl", "platform.json", name_map.c_str()}) {
    INFO(f);
    CHECK(cli::slurp(a / f) == cli::slurp(b / f));
  }
  for (const auto& [f, digest_at] : {std::pair{"summary.json", "/provenance/trace_digest"},
                                     std::pair{"merged_swimlane.json", "/otherData/trace_digest"}}) {
    INFO(f);
    json ja = cli::load(a / f), jb = cli::load(b / f);
    const json::json_pointer at(digest_at);
    CHECK(ja[at] != jb[at]);
    ja[at] = jb[at] = "";
    CHECK(ja == jb);
  }
}

}  // namespace

// The program of chain.cpp and the trace chain_trace.json, written by hand
// to make the same runtime calls, give byte-identical outputs (but for the
// digest of the input file each names).
TEST_CASE("a scene and the trace of the same calls give identical outputs", "[cli][scene]") {
  fs::path a, b;
  cli::Result ra = cli::run("tests/data/scene/chain.json --no-host-stats -q", "chain_scene", a);
  cli::Result rb = cli::run("tests/data/scene/chain_trace.json --no-host-stats -q", "chain_trace", b);
  REQUIRE(ra.status == 0);
  REQUIRE(rb.status == 0);
  same_outputs_but_trace_digest(a, b, "name_map_chain.json");
  json s = cli::load(a / "summary.json");
  CHECK(s["tasks"]["submitted"] == 4);
  CHECK(s["tasks"]["blocks_dispatched"] == 5);
}

// traces/scenes/qwen3_decode and traces/qwen3_decode.json make the same
// calls: the same deps.json to the byte (the attention's kernel_ids
// [11, 12, 12] from MixedKernels, post_rms_reduce's explicit deps in the order
// passed: dep_gen_replay.cpp keeps each task's deps in submission order).
TEST_CASE("the qwen3 decode scene and its trace give the same deps.json", "[cli][scene]") {
  fs::path a, b;
  const std::string opts = " --no-host-stats -q --swimlane-level 0";
  REQUIRE(cli::run("traces/scenes/qwen3_decode/qwen3_decode.json" + opts, "qwen3_scene", a).status == 0);
  REQUIRE(cli::run("traces/qwen3_decode.json" + opts, "qwen3_trace", b).status == 0);
  CHECK(cli::slurp(a / "deps.json") == cli::slurp(b / "deps.json"));
  CHECK(cli::load(a / "summary.json")["tasks"] == cli::load(b / "summary.json")["tasks"]);
  CHECK(cli::load(a / "summary.json")["device_wall_ns"] == cli::load(b / "summary.json")["device_wall_ns"]);
}

TEST_CASE("record writes a trace that runs to the same outputs", "[cli][scene]") {
  const fs::path rec = cli::scratch("api_recorded.json");
  cli::Result r = cli::npusim("record tests/data/scene/api.json -o '" + rec.string() + "'");
  REQUIRE(r.status == 0);
  CHECK(has(r.out, "recorded trace in"));
  json t = cli::load(rec);
  CHECK(t["npusim_trace"] == 1);
  CHECK(t["name"] == "api");
  fs::path a, b;
  REQUIRE(cli::run("tests/data/scene/api.json --no-host-stats -q", "api_scene", a).status == 0);
  REQUIRE(cli::run("'" + rec.string() + "' --no-host-stats -q", "api_trace", b).status == 0);
  same_outputs_but_trace_digest(a, b, "name_map_api.json");
  // A trace is its own record.
  r = cli::npusim("record traces/chain.json -o '" + rec.string() + "'");
  CHECK(r.status == 2);
  CHECK(has(r.err, "npusim record takes a scene"));
}

// api.cpp turns what its calls return into block_nums and dependencies.
TEST_CASE("the orchestration API's calls as the runtime performs them", "[cli][scene]") {
  fs::path out;
  cli::Result r = cli::run("tests/data/scene/api.json --no-host-stats -q", "api", out);
  REQUIRE(r.status == 0);
  json s = cli::load(out / "summary.json");
  CHECK(s["tasks"]["submitted"] == 18);
  CHECK(s["tasks"]["predicated_skip"] == 1);
  CHECK(s["tasks"]["dummy"] == 1);
  CHECK(s["tasks"]["alloc"] == 1);
  json d = deps_of(out);
  std::vector<int> blocks;
  for (const json& t : d["tasks"]) blocks.push_back(t["block_num"]);
  // writer, 3 chained (n read from the argument's memory), deps, 3 (data), 2 (set_tensor_data),
  // count, 4 (declared write s0 + 1), 5 (initial value), reshape, transpose, 2 (alias), 2 predicated,
  // 2 (geometry: 48 AIV / 24 clusters), dummy
  CHECK(blocks == std::vector<int>{1, 1, 1, 1, 1, 3, 2, 1, 4, 5, 1, 1, 2, 1, 1, 2, 1});
  std::vector<std::string> edges;
  for (const json& e : d["edges"])
    edges.push_back(e["pred"].get<std::string>() + ">" + e["succ"].get<std::string>() + " " +
                    e["source"].get<std::string>() + (e.contains("overlap") ? " " + e["overlap"].get<std::string>() : ""));
  CHECK(edges == std::vector<std::string>{"0>4294967296 explicit", "4294967296>4294967297 explicit",
                                          "4294967297>4294967298 explicit", "0>1 explicit", "4294967298>1 explicit",
                                          "0>7 tensormap other", "0>8 tensormap other"});
  // The reshape (a box of another layout) and the transpose (no box at all) keep their strides.
  const json& reshaped = d["tasks"][10]["args"][0];  // (deps.json lists no alloc_tensors)
  CHECK(reshaped["shape"] == json::array({256}));
  CHECK(reshaped["strides"] == json::array({1}));
  const json& transposed = d["tasks"][11]["args"][0];
  CHECK(transposed["shape"] == json::array({64, 4}));
  CHECK(transposed["strides"] == json::array({1, 64}));
}

TEST_CASE("a crash in the program is the program's: ORCHESTRATION_CRASH, outputs kept", "[cli][scene]") {
  const std::pair<int, const char*> cases[] = {
      {0, "killed by signal 11 (SIGSEGV, a segmentation fault)"},
      {1, "killed by signal 6 (SIGABRT, an abort)"},
      {2, "an exception escaped the orchestration entry: the program gave up"},
      {3, "an exception escaped the orchestration entry: Assertion failed: args.tensor_count() == 7"}};
  for (const auto& [mode, why] : cases) {
    INFO("mode " << mode);
    cli::RunResult r = cli::run_summary("'" + crash_scene(mode).string() + "' --no-host-stats", "crash_out");
    CHECK(r.status == 1);
    CHECK(has(r.err, why));
    CHECK_FALSE(has(r.err, "internal error"));
    REQUIRE(r.summary.is_object());
    CHECK(r.summary["error"]["name"] == "ORCHESTRATION_CRASH");
    CHECK(r.summary["error"]["orch_error_code"] == 200);
    CHECK(r.summary["tasks"]["submitted"] == 1);  // the task before the crash was simulated
  }
}

// A program polling memory a kernel writes (docs/scenes.md "Not modelled")
// would spin until the runner's CPU limit: after kPollLimit calls of
// rt_is_fatal with no other runtime call in between, npusim stops it as a
// program it cannot model (exit 2, nothing written).
TEST_CASE("a program polling memory a kernel writes stops as not modelled, exit 2", "[cli][scene]") {
  fs::path dir = cli::scratch("poll");
  fs::create_directories(dir);
  json s = {{"npusim_scene", 1},
            {"name", "poll"},
            {"orchestration", {{"source", std::string(NPUSIM_TEST_DATA_DIR) + "/scene/poll.cpp"}}},
            {"incores", {{"K", {{"func_id", 0}, {"core", "aiv"}, {"duration", {{"ns", 1000}}}}}}},
            {"args", json::array({{{"tensor", {{"shape", {16}}, {"dtype", "fp32"}}}}})}};
  std::ofstream(dir / "poll.json") << s.dump();
  fs::path out = dir / "out";
  cli::Result r = cli::npusim("run '" + (dir / "poll.json").string() + "' --out '" + out.string() + "'");
  CHECK(r.status == 2);
  CHECK(has(r.err, "at /orchestration: the program called rt_is_fatal() 50000000 times in a row without "
                   "another runtime call: it polls memory a kernel writes"));
  CHECK_FALSE(fs::exists(out / "summary.json"));
}

TEST_CASE("rt_report_fatal and an invalid Arg fail the run as the device does", "[cli][scene]") {
  cli::RunResult r = cli::run_summary("'" + crash_scene(4).string() + "' --no-host-stats", "fatal_out");
  CHECK(r.status == 1);
  CHECK(r.summary["error"]["name"] == "EXPLICIT_ORCH_FATAL");
  CHECK(has(r.err, "FATAL(code=9): bad input 42"));
  r = cli::run_summary("'" + crash_scene(5).string() + "' --no-host-stats", "invalid_out");
  CHECK(r.status == 1);
  CHECK(r.summary["error"]["name"] == "INVALID_ARGS");
  CHECK(has(r.err, "add_input/add_output/add_inout called after add_scalar"));
  r = cli::run_summary("'" + crash_scene(6).string() + "' --no-host-stats", "fatal_then_out");
  CHECK(r.status == 1);
  CHECK(r.summary["tasks"]["submitted"] == 1);
  r = cli::run_summary("'" + crash_scene(7).string() + "' --no-host-stats", "clean_out");
  CHECK(r.status == 0);
}

TEST_CASE("scene input errors exit 2 with the file, the path and the reason", "[cli][scene]") {
  fs::path dir = cli::scratch("bad_scenes");
  fs::create_directories(dir);
  const std::string data = NPUSIM_TEST_DATA_DIR;
  auto write = [&](const std::string& name, json s) {
    std::ofstream(dir / name) << s.dump();
    return "'" + (dir / name).string() + "'";
  };
  json base = {{"npusim_scene", 1},
               {"orchestration", {{"source", data + "/scene/chain.cpp"}}},
               {"incores",
                {{"MM", {{"func_id", 0}, {"core", "aic"}, {"duration", {{"ns", 3000}}}}},
                 {"EW", {{"func_id", 1}, {"core", "aiv"}, {"duration", {{"ns", 1200}}}}},
                 {"JOIN", {{"func_id", 2}, {"core", "aiv"}, {"duration", {{"ns", 800}}}}}}},
               {"args", json::array({{{"tensor", {{"shape", {64, 128}}, {"dtype", "fp32"}}}},
                                     {{"tensor", {{"shape", {64, 128}}, {"dtype", "fp32"}}}}})}};
  SECTION("a source that does not compile") {
    json s = base;
    s["orchestration"]["source"] = data + "/scene/bad_source.cpp";
    cli::Result r = cli::npusim("run " + write("cc.json", s));
    CHECK(r.status == 2);
    CHECK(has(r.err, "at /orchestration/source: does not compile against the npusim SDK"));
    CHECK(has(r.err, "rt_submit_task"));
  }
  SECTION("a func_id no incore has") {
    json s = base;
    s["incores"].erase("JOIN");
    cli::Result r = cli::npusim("run " + write("fid.json", s));
    CHECK(r.status == 2);
    CHECK(has(r.err, "at /incores: the program submits func_id 2 on the aiv0 lane"));
  }
  SECTION("a func_id only an annotation (an x_ key) defines") {
    // simpler's deepseek_v4_flash_decode has kernels named x_norm_quant*: such a
    // key is an annotation like every x_ key, and the error says so.
    json s = base;
    s["incores"]["x_join"] = s["incores"]["JOIN"];
    s["incores"].erase("JOIN");
    cli::Result r = cli::npusim("run " + write("xfid.json", s));
    CHECK(r.status == 2);
    CHECK(has(r.err, "at /incores: the program submits func_id 2 on the aiv0 lane"));
    CHECK(has(r.err, "but no incore has it: \"x_join\" names it, but a key starting with x_ is an annotation, "
                     "ignored (rename it)"));
  }
  SECTION("an incore on the wrong core type") {
    json s = base;
    s["incores"]["EW"]["core"] = "aic";
    cli::Result r = cli::npusim("run " + write("core.json", s));
    CHECK(r.status == 2);
    CHECK(has(r.err, "at /incores/EW: incore \"EW\" is an aic kernel, but the program submits it on the aiv0 lane"));
  }
  SECTION("fewer arguments than the program's config expects") {
    json s = base;
    s["orchestration"]["source"] = data + "/scene/api.cpp";
    s["args"].erase(1);
    cli::Result r = cli::npusim("run " + write("args.json", s));
    CHECK(r.status == 2);
    CHECK(has(r.err, "at /args: the program's aicpu_orchestration_config expects 3 arguments, the scene gives 1"));
  }
  SECTION("a path that names a folder or a device, not a file") {
    // Before: "no such file" for a folder or /dev/zero as the source; a
    // folder as the calibration read as no lines, /dev/zero as one endless line.
    const std::pair<std::string, std::string> paths[] = {{data + "/scene", "a folder"},
                                                         {"/dev/zero", "a character device"}};
    for (const auto& [path, kind] : paths) {
      INFO(path);
      if (!fs::exists(path)) {  // a machine's /dev may lack it (the suite assumes no device)
        WARN(path << " is missing here: not checked");
        continue;
      }
      json s = base;
      s["orchestration"]["source"] = path;
      cli::Result r = cli::npusim("check " + write("src.json", s));
      CHECK(r.status == 2);
      CHECK(r.err == "npusim: error: " + (dir / "src.json").string() + ": at /orchestration/source: is " + kind +
                         ", not a C++ source file: " + path + "\n");
      s = base;
      s["orchestration"].erase("source");
      s["orchestration"]["library"] = path;
      r = cli::npusim("check " + write("lib.json", s));
      CHECK(r.status == 2);
      CHECK(has(r.err, "at /orchestration/library: is " + kind + ", not a shared object: " + path + "\n"));
      s = base;
      s["calibration"] = path;
      r = cli::sh("exec timeout 20 \"$NPUSIM\" check " + write("cal.json", s));
      CHECK(r.status == 2);
      CHECK(has(r.err, "at /calibration: is " + kind + ", not a calibration file: " + path + "\n"));
    }
    json s = base;
    s["orchestration"]["source"] = data + "/scene/no_such.cpp";
    cli::Result r = cli::npusim("check " + write("none.json", s));
    CHECK(r.status == 2);
    CHECK(has(r.err, "at /orchestration/source: no such file: " + data + "/scene/no_such.cpp\n"));
  }
  SECTION("keys") {
    json s = base;
    s["orchestration"]["library"] = "x.so";
    cli::Result r = cli::npusim("check " + write("both.json", s));
    CHECK(r.status == 2);
    CHECK(has(r.err, "at /orchestration: expected exactly one of \"source\" (a .cpp file) or \"library\""));
    s = base;
    s["incores"]["MM"]["core"] = "mix";
    r = cli::npusim("check " + write("mix.json", s));
    CHECK(r.status == 2);
    CHECK(has(r.err, "at /incores/MM/core: an incore runs on one core type"));
    s = base;
    s["args"][0] = {{"tensor", {{"shape", {4}}, {"dtype", "fp8"}}}};
    r = cli::npusim("check " + write("dtype.json", s));
    CHECK(r.status == 2);
    CHECK(has(r.err, "at /args/0/tensor/dtype: expected a dtype"));
  }
}

TEST_CASE("npusim check runs a scene's program without simulating", "[cli][scene]") {
  cli::Result r = cli::npusim("check tests/data/scene/api.json");
  CHECK(r.status == 0);
  CHECK(r.out == "npusim check: api: ok (18 submits, 3 kernels, 0 error(s), 0 warning(s))\n");
  r = cli::npusim("check '" + crash_scene(4).string() + "'");
  CHECK(r.status == 1);
  CHECK(has(r.err, "error [ReportedFatal]: the program reports FATAL(code=9): bad input 42"));
}

// Sizing re-runs of a scene run the scene's own file (docs/outputs.md,
// "Re-runs"): its source resolves against the scene's folder. A scene in a
// FIFO cannot be re-run and gets no advice rather than a false one; record
// stops at --max-tasks and writes no trace.
TEST_CASE("a scene's capacity fatal is sized by re-running its file, and record --max-tasks writes nothing",
          "[cli][scene][hardening]") {
  const fs::path d = cli::scratch("scene_sizing");
  fs::create_directories(d);
  cli::Result r = cli::npusim("run tests/data/scene/chain.json --ring-heap 1024 -q --out '" + (d / "a").string() + "'");
  CHECK(r.status == 1);
  CHECK(has(r.err, "error detail: orch_error_code=2 HEAP_RING_DEADLOCK"));
  CHECK(has(r.err, "sizes that would have been enough: ring_heap of ring 0: 1024 -> 32768 would have been enough "
                   "(ring_heap=[32768,1024,1024,1024] (--ring-heap 32768,1024,1024,1024))"));

  json s = cli::load(fs::path(NPUSIM_SOURCE_DIR) / "tests/data/scene/chain.json");
  s["orchestration"]["source"] = std::string(NPUSIM_SOURCE_DIR) + "/tests/data/scene/chain.cpp";
  std::ofstream(d / "chain.json") << s.dump();
  REQUIRE(::mkfifo((d / "fifo").c_str(), 0600) == 0);
  r = cli::sh("cat '" + (d / "chain.json").string() + "' > '" + (d / "fifo").string() +
              "' & exec timeout 120 \"$NPUSIM\" run '" + (d / "fifo").string() + "' --ring-heap 1024 -q --out '" +
              (d / "b").string() + "'");
  CHECK(r.status == 1);
  CHECK(has(r.err, "no sizes to suggest: a scene is re-run from its file, and " + (d / "fifo").string() +
                       " is not a regular file"));
  CHECK_FALSE(has(r.err, "would have been enough"));

  const fs::path rec = d / "rec.json";
  r = cli::npusim("record tests/data/scene/chain.json --max-tasks 2 -o '" + rec.string() + "'");
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: tests/data/scene/chain.json: the run reached --max-tasks 2 (task 3 was submitted at "
                 "1.179 us of simulated time): stopped, nothing written\n");
  CHECK_FALSE(fs::exists(rec));
}

// A scene declares a cache policy where the compiler puts it: on the loads
// of an incore's body (the orchestration API has no set_cache_policy; the
// seed's pl.set_cache_policy is lowered into the kernel's loads). kernel_add
// runs twice (t0 and the last task); each of its three phases moves 64 KiB,
// 128 lines of 512 B: 2 x 384 = 768 L2 lookups when BYPASS is lowered as a
// cached read (today, with the warning once per kernel and tensor), 256
// fewer when the bypassed first load goes straight to HBM (intended).
TEST_CASE("a scene's incore load carries its cache policy under both lowerings", "[cli][scene]") {
  const fs::path dir = cli::scratch("scene_cache_in");
  fs::create_directories(dir);
  json s = cli::load(fs::path(NPUSIM_SOURCE_DIR) / "traces/scenes/vector_example/vector_example.json");
  s["orchestration"]["source"] = std::string(NPUSIM_SOURCE_DIR) + "/traces/scenes/vector_example/vector_orch.cpp";
  s["incores"]["kernel_add"] = {
      {"func_id", 0},
      {"core", "aiv"},
      {"body",
       {{{"load", {{"arg", 0}, {"offset", "0"}, {"bytes", 65536}, {"cache", "bypass"}}}},
        {{"load", {{"arg", 1}, {"offset", "0"}, {"bytes", 65536}}}},
        {{"compute", {{"ns", 1000}}}},
        {{"store", {{"arg", 2}, {"offset", "0"}, {"bytes", 65536}}}}}}};
  std::ofstream(dir / "s.json") << s.dump();
  const std::string scene = "'" + (dir / "s.json").string() + "' --quiet --no-host-stats";
  cli::RunResult today = cli::run_summary(scene, "scene_cache_today");
  cli::RunResult intended = cli::run_summary(scene + " --cache-policy-lowering intended", "scene_cache_intended");
  REQUIRE(today.status == 0);
  REQUIRE(intended.status == 0);
  CHECK(today.summary["kernels"]["kernel_add"]["l2_lines"] == 768);
  CHECK(today.summary["warnings"]["by_kind"]["cache_bypass_not_lowered"] == 2);
  CHECK(intended.summary["kernels"]["kernel_add"]["l2_lines"] == 512);
  CHECK(intended.summary["warnings"]["count"] == 0);
}

// get_tensor_data of an output a kernel writes, where the scene declares no
// `writes` for that kernel, gives the buffer's earlier content and warns
// (docs/scenes.md: data_not_modelled), once per buffer: an OUTPUT (whose
// buffer the runtime allocates at the submit: before, no read of one ever
// warned) and an INOUT argument. A kernel that
// declares writes for the argument, or declares `"writes": []` (it leaves
// its outputs as they were), is read without a warning; the declared value
// is what the program reads (else it reports a fatal and the run fails).
TEST_CASE("a read of a kernel's output the scene declares nothing for warns data_not_modelled once", "[cli][scene]") {
  const fs::path dir = cli::scratch("scene_not_modelled");
  fs::create_directories(dir);
  std::ofstream(dir / "orch.cpp") << R"(#include <stdint.h>
#include "pto_orchestration_api.h"
namespace {
float get(const ChipTensor &t, uint32_t i) { uint32_t idx[1] = {i}; return get_tensor_data<float>(t, 1, idx); }
}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &a = args.tensor(0).ref();
    uint32_t n[1] = {a.shapes[0]};
    TensorCreateInfo vec(n, 1, DataType::FLOAT32);
    CoreTaskArgs u;  // kernel_undeclared: no writes at all
    u.add_input(a);
    u.add_output(vec);
    TaskOutputTensors xt = rt_submit_aiv_task(0, u);
    const ChipTensor &x = xt.get_ref(0);
    (void)get(x, 0);  // warns
    (void)get(x, 5);  // the same tensor: no second warning
    CoreTaskArgs ub;  // kernel_undeclared on the argument b, INOUT
    ub.add_inout(args.tensor(1).ref());
    rt_submit_aiv_task(0, ub);
    (void)get(args.tensor(1).ref(), 3);  // warns: an argument's buffer
    CoreTaskArgs d;  // kernel_declared: writes its argument 1
    d.add_input(a);
    d.add_output(vec);
    TaskOutputTensors yt = rt_submit_aiv_task(1, d);
    const ChipTensor &y = yt.get_ref(0);
    if (get(y, 0) != 7.0f) rt_report_fatal(9, "a declared write was not read back");
    CoreTaskArgs e;  // kernel_none: "writes": []
    e.add_input(a);
    e.add_output(vec);
    TaskOutputTensors zt = rt_submit_aiv_task(2, e);
    (void)get(zt.get_ref(0), 0);
}
)";
  const json scene = {
      {"npusim_scene", 1},
      {"name", "not_modelled"},
      {"orchestration", {{"source", "orch.cpp"}}},
      {"incores",
       {{"kernel_undeclared", {{"func_id", 0}, {"core", "aiv"}, {"duration", {{"ns", 1000}}}}},
        {"kernel_declared",
         {{"func_id", 1},
          {"core", "aiv"},
          {"duration", {{"ns", 1000}}},
          {"writes", {{{"arg", 1}, {"index", {0}}, {"value", 1088421888}}}}}},  // 7.0f's bits
        {"kernel_none", {{"func_id", 2}, {"core", "aiv"}, {"duration", {{"ns", 1000}}}, {"writes", json::array()}}}}},
      {"args",
       {{{"tensor", {{"shape", {64}}, {"dtype", "fp32"}, {"fill", 2.0}}}},
        {{"tensor", {{"shape", {64}}, {"dtype", "fp32"}}}}}}};
  std::ofstream(dir / "s.json") << scene.dump();
  cli::RunResult r = cli::run_summary(cli::quoted(dir / "s.json") + " --no-host-stats", "scene_not_modelled_out");
  REQUIRE(r.status == 0);
  CHECK(r.summary["status"] == "ok");
  CHECK(r.summary["warnings"]["count"] == 2);
  CHECK(r.summary["warnings"]["by_kind"]["data_not_modelled"] == 2);
  CHECK(has(r.err, "reads a tensor that kernel kernel_undeclared writes, and the scene declares no `writes` for it"));
  CHECK(has(r.err, "(get_tensor_data) reads a tensor that kernel kernel_undeclared writes"));
  CHECK_FALSE(has(r.err, "kernel kernel_declared writes"));
  CHECK_FALSE(has(r.err, "kernel kernel_none writes"));
}
