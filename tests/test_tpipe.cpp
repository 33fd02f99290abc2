// Named cross-core pipes (PTO-ISA's TPipe on a2a3): several per kernel, each
// with its direction, slot count and flags; push, pop and free per pipe,
// including the GlobalTensor form; the examples' hand-derived timelines
// (docs/overhead.md "Several pipes"); the loader's errors; the hang's
// diagnosis.
//
// Upstream: pto-isa cd4a3d3f (simpler's pto_isa.pin),
// include/pto/npu/a2a3/TPush.hpp (TPipe, Producer::allocate/record,
// Consumer::wait/free, TPUSH_IMPL, ~TPipe), TPop.hpp (TPOP_IMPL, the
// GlobalTensor TPOP_IMPL), TFree.hpp (TFREE_IMPL), include/pto/common/fifo.hpp
// (Direction); simpler 6ebaf77
// tests/st/a2a3/tensormap_and_ringbuffer/spmd_paged_attention/kernels/mix/
// paged_attention_parallel.cpp (PAConfig's three pipes, aic_process_blocks /
// aiv_process_blocks' software pipeline).
#include "tests/catch.h"

#include <fstream>

#include "sim/trace/trace.h"
#include "tests/cli_support.h"
#include "tests/conformance/conf_sched_fixture.h"

using namespace npusim;
using namespace cli;

namespace {


// The lanes of block 0 of task 0, by lane.
std::map<int, BlockRecord> pipe_lanes_of(const conf::ConfSim& s) {
  std::map<int, BlockRecord> out;
  for (const BlockRecord& b : s.of_task(0))
    if (b.block_idx == 0) out[b.lane] = b;
  return out;
}

// A trace of one mix kernel `K` (its definition `kernel`) submitted once,
// written to the scratch folder; returns its path.
std::string pipe_trace(const std::string& name, const std::string& kernel) {
  const fs::path dir = scratch("tpipe_" + name);
  fs::create_directories(dir);
  const fs::path p = dir / (name + ".json");
  std::ofstream(p) << R"({"npusim_trace": 1, "name": ")" << name << R"(", "kernels": {"K": )" << kernel
                   << R"(}, "program": [{"op": "submit", "kernel": "K", "args": []}]})";
  return p.string();
}

// "path|message" of the InputError loading a trace of kernel `K`.
std::string pipe_kernel_error(const std::string& kernel) {
  try {
    trace::parse_trace(R"({"npusim_trace": 1, "kernels": {"K": )" + kernel + R"(}, "program": []})", "t.json", "t");
  } catch (const InputError& e) {
    CHECK(e.file() == "t.json");
    return e.path() + "|" + e.message();
  }
  return "no error";
}

}  // namespace

// paged_attention_parallel.cpp: sij (DIR_C2V), pij (DIR_V2C), oi (DIR_C2V),
// FIFO_DEPTH 2; the AIC runs QK[0] push sij, then QK[i] push sij, TPOP pij,
// PV push oi; the AIVs SF (pop sij, push pij) then UP (pop oi). The
// timeline of traces/mix_three_pipes.json, derived in docs/overhead.md
// (a2a3: a GM transfer is 284 ns + bytes / 32, a flag 100 ns).
TEST_CASE("three pipes C2V V2C C2V of depth 2: the spmd_paged_attention structure's hand-derived timeline", "[tpipe]") {
  conf::ConfSim s(std::string(NPUSIM_SOURCE_DIR) + "/traces/mix_three_pipes.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  const auto lanes = pipe_lanes_of(s);
  REQUIRE(lanes.size() == 3);
  // Times are from the AIC's start; the AIVs start 5 and 10 ns later (the
  // dispatch's per-core payload writes), which their first pop's wait for
  // the flag of sij[0] (1640) absorbs.
  const Time t0 = lanes.at(kLaneAic).start;
  CHECK(lanes.at(kLaneAiv0).start == t0 + ns(5));
  CHECK(lanes.at(kLaneAiv1).start == t0 + ns(10));
  // AIC: ... pop pij[2] waits for its flag (9952), loads to 10364, PV to
  // 11364, pushes oi[2] (credit 0 of oi freed at 10364) to 11904; ~TPipe of
  // oi and sij: 3 tiles of 2 slots, no pending credit.
  CHECK(lanes.at(kLaneAic).end - t0 == ns(11904));
  // AIV: pop oi[2] waits for its flag (11904 + 100), loads to 12416, UP to 12916.
  CHECK(lanes.at(kLaneAiv0).end - t0 == ns(12916));
  CHECK(lanes.at(kLaneAiv1).end - t0 == ns(12916));
  CHECK(s.chip->pipes().open_pipes() == 0);
}

// TPush.hpp TPipe with DIR_BOTH: the cube's push records FlagID, the
// vectors' FlagID + 2; the vectors free FlagID + 1, the cube FlagID + 3; one
// pipe, two independent rings. traces/mix_pipe_both.json, derived in
// docs/overhead.md.
TEST_CASE("a DIR_BOTH pipe carries tiles both ways on two rings: the hand-derived timeline", "[tpipe]") {
  conf::ConfSim s(std::string(NPUSIM_SOURCE_DIR) + "/traces/mix_pipe_both.json", "a2a3");
  s.run();
  REQUIRE(s.finished());
  const auto lanes = pipe_lanes_of(s);
  REQUIRE(lanes.size() == 3);
  const Time t0 = lanes.at(kLaneAic).start;
  // AIV: the third push (tile 2) needs the AIC's free after its pop of tile
  // 1 (7364 + 100), long there; stored 8964 -> 9312; no pending credit.
  CHECK(lanes.at(kLaneAiv0).end - t0 == ns(9312));
  CHECK(lanes.at(kLaneAiv1).end - t0 == ns(9312));
  // AIC: the pop of the AIVs' tile 2 waits for its flag (9412), loads to
  // 9824, PV to 10824.
  CHECK(lanes.at(kLaneAic).end - t0 == ns(10824));
  CHECK(s.chip->pipes().open_pipes() == 0);
}

// TPop.hpp TPOP_IMPL(pipe, GlobalTensor): wait(), the slot's address, no
// load, no free; TFree.hpp TFREE_IMPL(pipe, GlobalTensor): free() if
// shouldNotifyFree(tileIndex - 1). Tiny: GM transfer 200 + bytes / 64, flag 20.
TEST_CASE("the GlobalTensor pop gives the slot without a load and its TFREE releases it", "[tpipe]") {
  const std::string path = pipe_trace("global", R"({"func_id": 0, "core": "mix",
    "pipes": {"g": {"dir": "c2v", "slots": 1}},
    "lanes": {"aic": {"body": [{"push": {"pipe": "g", "bytes": 6400}}, {"push": {"pipe": "g", "bytes": 6400}}]},
              "aiv0": {"body": [{"repeat": {"count": 2, "body": [{"pop": {"pipe": "g", "global": true}},
                                {"compute": {"ns": 1000}}, {"free": {"pipe": "g"}}]}}]}}})");
  conf::ConfSim s(path, "tiny");
  s.run();
  REQUIRE(s.finished());
  const auto lanes = pipe_lanes_of(s);
  const Time t0 = lanes.at(kLaneAic).start;
  // One slot (SyncPeriod 1). AIC: tile 0 stored 0..300, flag 320. AIV: the
  // pop waits to 320 and costs nothing more; computes to 1320; TFREE: credit
  // at 1340. AIC: tile 1 waits for it, stores 1340..1640, flag 1660. AIV:
  // pop at 1660, computes to 2660, frees (credit 2680). ~TPipe: 2 tiles, 1
  // waited, 1 pending: the AIC ends at 2680.
  CHECK(lanes.at(kLaneAiv0).end - t0 == ns(2660));
  CHECK(lanes.at(kLaneAic).end - t0 == ns(2680));
}

// TPush.hpp: a V2C (and V2C_CTRL) pipe's producer is the vector
// (Producer::allocate waits FlagID + 1 on the vector, record sets FlagID on
// PIPE_MTE3), its consumer the cube (Consumer::free on the cube).
TEST_CASE("a v2c_ctrl pipe: the AIV pushes, the AIC pops and frees, the AIV's ~TPipe waits for that free", "[tpipe]") {
  const std::string path = pipe_trace("ctrl", R"({"func_id": 0, "core": "mix",
    "pipes": {"ctrl": {"dir": "v2c_ctrl", "slots": 1, "flag_id": 6}},
    "lanes": {"aic": {"body": [{"pop": {"pipe": "ctrl"}}]},
              "aiv0": {"body": [{"compute": {"ns": 100}}, {"push": {"pipe": "ctrl"}}]}}})");
  conf::ConfSim s(path, "tiny");
  s.run();
  REQUIRE(s.finished());
  const auto lanes = pipe_lanes_of(s);
  const Time t0 = lanes.at(kLaneAic).start;
  // AIV: computes to 100, stores 100..300, flag 320. AIC: pop waits to 320,
  // loads to 520, frees (slots 1): credit 540. AIV's ~TPipe (1 tile, 1
  // notified, none waited) waits for it: 540.
  CHECK(lanes.at(kLaneAic).end - t0 == ns(520));
  CHECK(lanes.at(kLaneAiv0).end - t0 == ns(540));
}

TEST_CASE("two named pipes are two FIFOs: a tile pushed on one is not popped from the other", "[tpipe]") {
  // Before named pipes every push and pop of a kernel shared one FIFO. Here
  // the AIV pops "b" first: it waits for b's tile (pushed second), not a's.
  const std::string path = pipe_trace("two", R"({"func_id": 0, "core": "mix",
    "pipes": {"a": {"dir": "c2v", "slots": 2}, "b": {"dir": "c2v", "slots": 2}},
    "lanes": {"aic": {"body": [{"push": {"pipe": "a"}}, {"compute": {"ns": 1000}}, {"push": {"pipe": "b"}}]},
              "aiv0": {"body": [{"pop": {"pipe": "b"}}, {"pop": {"pipe": "a"}}]}}})");
  conf::ConfSim s(path, "tiny");
  s.run();
  REQUIRE(s.finished());
  const auto lanes = pipe_lanes_of(s);
  const Time t0 = lanes.at(kLaneAic).start;
  // AIC: a stored 0..200, compute to 1200, b stored 1200..1400 (flag 1420).
  // AIV: pop b waits to 1420, loads to 1620; pop a (flag 220) loads to 1820.
  CHECK(lanes.at(kLaneAic).end - t0 == ns(1400));
  CHECK(lanes.at(kLaneAiv0).end - t0 == ns(1820));
}

TEST_CASE("pipe declarations and phases are checked at load with file, JSON path and expectation", "[tpipe]") {
  const std::string lanes_ok = R"("lanes": {"aic": {"body": [{"push": {"pipe": "p"}}]}, "aiv0": {"body": [{"pop": {"pipe": "p"}}]}})";
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"p": {"dir": "sideways", "slots": 2}}, )" + lanes_ok + "}") ==
        "/kernels/K/pipes/p/dir|expected one of \"c2v\", \"v2c\", \"both\", \"v2c_ctrl\", got \"sideways\"");
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"p": {"dir": "c2v"}}, )" + lanes_ok + "}") ==
        "/kernels/K/pipes/p|missing key \"slots\"");
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"q": {"dir": "c2v", "slots": 2}}, )" + lanes_ok + "}") ==
        "/kernels/K/lanes/aic/body/0/push/pipe|unknown pipe \"p\": the kernel declares \"q\"");
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "lanes": {"aic": {"body": [{"push": {"pipe": "p"}}]}}})") ==
        "/kernels/K/lanes/aic/body/0/push/pipe|unknown pipe \"p\": the kernel declares no pipes "
        "(\"pipes\": {\"p\": {\"dir\": \"c2v\", \"slots\": 2}})");
  // A V2C pipe's producer is the vector.
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"p": {"dir": "v2c", "slots": 2}}, )" + lanes_ok + "}") ==
        "/kernels/K/lanes/aic/body/0/push|push on pipe \"p\" (v2c, the AIVs produce, the AIC consumes) is only "
        "allowed in an aiv lane");
  // FlagID + 3 < 16 for DIR_BOTH; no flag shared by two pipes.
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"p": {"dir": "both", "slots": 2, "flag_id": 13}}, )" + lanes_ok + "}") ==
        "/kernels/K/pipes/p/flag_id|expected an integer in [0, 12], got 13");
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"p": {"dir": "c2v", "slots": 2, "flag_id": 0},
        "r": {"dir": "v2c", "slots": 2, "flag_id": 1}}, )" + lanes_ok + "}") ==
        "/kernels/K/pipes/r/flag_id|pipe \"r\" uses flags 1..2 and pipe \"p\" flags 0..1: two pipes sharing an FFTS "
        "flag would take each other's signals");
  // Records and pops pair up per ring.
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"p": {"dir": "c2v", "slots": 2}},
        "lanes": {"aic": {"body": [{"push": {"pipe": "p"}}, {"push": {"pipe": "p"}}]}, "aiv0": {"body": [{"pop": {"pipe": "p"}}]}}})") ==
        "/kernels/K/pipes/p|on the C->V ring of pipe \"p\" lane aiv0 pops 1 tile(s) but the aic lane pushes 2 (a pop "
        "without its push waits for ever)");
  // The GlobalTensor form: TFREE after the pop; not on v2c_ctrl.
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"p": {"dir": "c2v", "slots": 2}},
        "lanes": {"aic": {"body": [{"push": {"pipe": "p"}}]}, "aiv0": {"body": [{"free": {"pipe": "p"}}, {"pop": {"pipe": "p"}}]}}})") ==
        "/kernels/K/lanes/aiv0/body/0|free on pipe \"p\" with no pop before it to free (TFREE releases the slot the "
        "lane's latest TPOP gave)");
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"p": {"dir": "c2v", "slots": 2}},
        "lanes": {"aic": {"body": [{"push": {"pipe": "p"}}]}, "aiv0": {"body": [{"pop": {"pipe": "p", "global": true}}]}}})") ==
        "/kernels/K|lane aiv0 ends with a GlobalTensor pop on pipe \"p\" it never frees (add {\"free\": {\"pipe\": \"p\"}})");
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"p": {"dir": "v2c_ctrl", "slots": 2}},
        "lanes": {"aiv0": {"body": [{"push": {"pipe": "p"}}]}, "aic": {"body": [{"pop": {"pipe": "p", "global": true}}, {"free": {"pipe": "p"}}]}}})") ==
        "/kernels/K/lanes/aic/body/0/pop/global|pipe \"p\" is v2c_ctrl: PTO-ISA's TPOP and TFREE with a GlobalTensor "
        "support only c2v, v2c and both (TPop.hpp, TFree.hpp static_assert)");
  // "to" belongs to the unnamed pipe.
  CHECK(pipe_kernel_error(R"({"func_id": 0, "core": "mix", "pipes": {"p": {"dir": "c2v", "slots": 2}},
        "lanes": {"aic": {"body": [{"push": {"pipe": "p", "to": "aiv0"}}]}, "aiv0": {"body": [{"pop": {"pipe": "p"}}]}}})") ==
        "/kernels/K/lanes/aic/body/0/push/to|\"to\" is only for the unnamed pipe (cross_core_slots): a named pipe's "
        "push reaches the other side of its direction (ffts_cross_core_sync mode 2)");
}

TEST_CASE("an unknown pipe name exits 2 naming the file and the JSON path, writing nothing", "[tpipe][cli]") {
  const std::string path = pipe_trace("unknown", R"({"func_id": 0, "core": "mix",
    "pipes": {"sij": {"dir": "c2v", "slots": 2}},
    "lanes": {"aic": {"body": [{"push": {"pipe": "sij"}}]}, "aiv": {"body": [{"pop": {"pipe": "sji"}}]}}})");
  fs::path out;
  const Result r = run("'" + path + "'", "tpipe_unknown_out", out);
  CHECK(r.status == 2);
  CHECK(r.err == "npusim: error: " + path + ": at /kernels/K/lanes/aiv/body/0/pop/pipe: unknown pipe \"sji\": the "
                 "kernel declares \"sij\"\n");
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("pipes whose pops wait on each other end in a diagnosis naming each pipe, tile and flag", "[tpipe][cli]") {
  // The AIC pops pij before it pushes sij, the AIVs pop sij before they push
  // pij: no core ever proceeds (each wait_flag_dev waits for a flag only the
  // other side would set).
  const std::string path = pipe_trace("cycle", R"({"func_id": 0, "core": "mix",
    "pipes": {"sij": {"dir": "c2v", "slots": 2}, "pij": {"dir": "v2c", "slots": 2}},
    "lanes": {"aic": {"body": [{"pop": {"pipe": "pij"}}, {"push": {"pipe": "sij"}}]},
              "aiv": {"body": [{"pop": {"pipe": "sij"}}, {"push": {"pipe": "pij"}}]}}})");
  const RunResult r = run_summary("'" + path + "' --platform tiny", "tpipe_cycle_out");
  CHECK(r.status == 1);
  CHECK(has(r.err, "in a pop on pipe \"pij\" (v2c, V->C ring, tile 0) for the data flag of tile 0 from aiv0+aiv1 "
                   "(aiv0 recorded 0, aiv1 recorded 0)"));
  CHECK(has(r.err, "lane aiv1, cluster 0) waits since 1.520 us in a pop on pipe \"sij\" (c2v, C->V ring, tile 0) for "
                   "the data flag of tile 0 from aic (aic recorded 0)"));
  const json& w = r.summary["error"]["diagnosis"]["pipe_waits"];
  REQUIRE(w.size() == 3);
  CHECK(w[0]["pipe"] == "sij");
  CHECK(w[0]["lane"] == "aiv0");
  CHECK(w[2]["pipe"] == "pij");
  CHECK(w[2]["ring"] == "V->C");
  CHECK(w[2]["op"] == "pop");
}

// A scene composes a MIX task of incores (MixedKernels); each half declares
// the pipes it uses, as paged_attention_parallel.cpp's run_aic and run_aiv
// both construct sij_pipe, pij_pipe and oi_pipe.
TEST_CASE("a scene's incores declare the pipes, the MixedKernels task runs the trace's timeline, record keeps them", "[tpipe][scene]") {
  const RunResult r = run_summary("traces/scenes/mix_three_pipes/mix_three_pipes.json --quiet --no-host-stats",
                                  "tpipe_scene_out");
  REQUIRE(r.status == 0);
  CHECK(r.summary["makespan_ns"] == 12916.0);
  // The recorded trace's composed kernel carries the merged pipes and runs the same.
  const fs::path rec = scratch("tpipe_scene_rec.json");
  REQUIRE(cli::npusim("record traces/scenes/mix_three_pipes/mix_three_pipes.json -o '" + rec.string() + "'").status == 0);
  const RunResult again = run_summary("'" + rec.string() + "' --quiet --no-host-stats", "tpipe_scene_rec_out");
  REQUIRE(again.status == 0);
  CHECK(again.summary["makespan_ns"] == 12916.0);
  // Halves that disagree on a pipe's type are refused naming the pipe.
  json scene = load(fs::path(NPUSIM_SOURCE_DIR) / "traces/scenes/mix_three_pipes/mix_three_pipes.json");
  scene["orchestration"]["source"] = std::string(NPUSIM_SOURCE_DIR) + "/traces/scenes/mix_three_pipes/pa_orch.cpp";
  scene["incores"]["pa_aiv"]["pipes"]["pij"]["slots"] = 4;
  const fs::path bad = scratch("tpipe_scene_bad.json");
  fs::create_directories(scratch_root());
  std::ofstream(bad) << scene.dump();
  const Result b = cli::npusim("run '" + bad.string() + "' --out '" + scratch("tpipe_scene_bad_out").string() + "'");
  CHECK(b.status == 2);
  CHECK(has(b.err, "at /incores/pa_aiv/pipes/pij: pipe \"pij\" is v2c with 4 slot(s) here but v2c with 2 at "
                   "/incores/pa_aic/pipes/pij: the two halves of a TPipe are one type (direction, slots, flag)"));
}
