// HARD and SOFT pl.system.syncall as PTO-ISA implements them on a2a3 (the
// PTO-ISA revision simpler pins in pto_isa.pin): exact times on the tiny
// platform, hand-derived from the steps of
//   include/pto/npu/a2a3/SyncAll.hpp      SYNCALL_IMPL (HARD, the FFTS barrier)
//   include/pto/common/syncall_soft.hpp   SYNCALL_SOFT_ATOMIC_BARRIER (SOFT)
// No simpler system test asserts barrier timing; docs/barriers.md explains
// the model.
//
// Tiny (ns): ffts barrier_release 100, flag 20; gm fence 100, line_latency
// 200, cacheinvalid_line 50, line_serialize 50. With one scheduler thread
// owning every core, a sync-start launch starts all its cores together at T.
#include "tests/catch.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/cli_support.h"
#include "tests/conformance/trace_fixture.h"

using namespace npusim;
using namespace testing_support;

namespace {

// A mix kernel of 2 blocks (every cluster of tiny), sync_start, whose lanes
// run `aic` and `aiv` (JSON phase lists).
std::string mix_trace(const std::string& aic, const std::string& aiv, bool workspace = false) {
  return R"({"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "mix", "lanes": {
            "aic": {"body": )" + aic + R"(}, "aiv": {"body": )" + aiv + R"(}}}},
          "tensors": {"ws": {"shape": [16], "dtype": "int32"}},
          "program": [{"op": "submit", "kernel": "K", "block_num": 2, "sync_start": true, "args": [)" +
         (workspace ? R"({"inout": "ws"})" : "") + "]}]}";
}

// Each core's end minus the common start.
std::map<int, Time> ends(const TraceRun& s) {
  REQUIRE(s.obs.blocks.size() == 6);
  const Time T = s.obs.blocks[0].start;
  std::map<int, Time> e;
  for (const auto& b : s.obs.blocks) {
    CHECK(b.start == T);
    e[b.core] = b.end - T;
  }
  return e;
}

// Runs mix_trace(aic, aiv, workspace) to completion: each core's end minus
// the common start.
std::map<int, Time> run_mix(const std::string& aic, const std::string& aiv, bool workspace = false) {
  TraceRun s(mix_trace(aic, aiv, workspace));
  s.run();
  REQUIRE(s.chip->runtime().finished());
  return ends(s);
}

// Both AICs (cores 0, 1) end `aic` ns and the four AIVs `aiv` ns after the start.
void check_lane_ends(const std::map<int, Time>& e, std::uint64_t aic, std::uint64_t aiv) {
  for (int c : {0, 1}) CHECK(e.at(c) == ns(aic));
  for (int c : {2, 3, 4, 5}) CHECK(e.at(c) == ns(aiv));
}

}  // namespace

// SYNCALL_IMPL<SyncCoreType::Mix> (PTO-ISA include/pto/npu/a2a3/SyncAll.hpp):
// the AIV sets SYNC_AIV_FLAG (mode 2) and waits on SYNC_AIC_AIV_FLAG; the AIC
// waits on SYNC_AIV_FLAG (both its AIVs), joins the mode-0 barrier of every
// AIC (SYNC_AIC_FLAG), then sets SYNC_AIC_AIV_FLAG for its AIVs.
TEST_CASE("HARD mix syncall: AIVs flag their AIC, the AICs' FFTS barrier, the AIC flags its AIVs", "[conformance]") {
  const auto e = run_mix(R"([{"compute": {"ns": 100}}, {"syncall": {"mode": "hard", "core_type": "mix"}},
                              {"compute": {"ns": 500}}])",
                         R"([{"compute": {"ns": 300}}, {"syncall": {"mode": "hard", "core_type": "mix"}},
                              {"compute": {"ns": 500}}])");
  // The AICs arrive at T+100, the AIVs at T+300, whose flags reach the AICs
  // at T+320: both AICs join the barrier then, which releases at T+420; the
  // AICs run on (end T+920), their flags reach the AIVs at T+440 (end T+940).
  // (Counting all six cores as one barrier would end every core at T+900.)
  check_lane_ends(e, 920, 940);
}

// SYNCALL_IMPL<SyncCoreType::AIVOnly> (SyncAll.hpp) is `#if defined(__DAV_VEC__)`:
// empty in the cube binary, so the AIC lane neither waits nor counts.
TEST_CASE("HARD aiv syncall in a mix kernel: the AIC lane passes at once, the four AIVs meet", "[conformance]") {
  const auto e = run_mix(R"([{"syncall": {"mode": "hard", "core_type": "aiv"}}, {"compute": {"ns": 100}}])",
                         R"([{"compute": {"ns": 300}}, {"syncall": {"mode": "hard", "core_type": "aiv"}},
                              {"compute": {"ns": 100}}])");
  // AICs: 100. AIVs: all four (every AIV of tiny) arrive at T+300, released
  // at T+400, end T+500.
  check_lane_ends(e, 100, 500);
}

// SYNCALL_SOFT_MIX_IMPL -> SYNCALL_SOFT_ATOMIC_BARRIER (PTO-ISA
// include/pto/common/syncall_soft.hpp): every participant, AIC or AIV, reads
// the counter, adds one atomically and polls for the next multiple of
// used_cores.
TEST_CASE("SOFT mix syncall: six atomic adds applied one at a time, each core leaves on its first poll", "[conformance]") {
  const auto e = run_mix(R"([{"syncall": {"mode": "soft", "core_type": "mix", "workspace_arg": 0, "used_cores": 6}}])",
                         R"([{"syncall": {"mode": "soft", "core_type": "mix", "workspace_arg": 0, "used_cores": 6}}])",
                         true);
  // All six arrive at T: dsb 100 + ld_dev 200 read 0 (the first add becomes
  // visible only at T+550): target 6. dcci 50; the adds are visible at
  // T+550, 600, ..., 800 (a GM round trip 200, then 50 apart); dcci + dsb:
  // the k-th polls from T+650+50k (k = 0..5), its first poll (200) ends at or
  // after T+800 and sees 6; dsb 100: released at T+950+50k.
  std::vector<Time> sorted;
  for (const auto& [core, t] : e) sorted.push_back(t);
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<Time>{ns(950), ns(1000), ns(1050), ns(1100), ns(1150), ns(1200)});
}

// SYNCALL_SOFT_AIC_IMPL (syncall_soft.hpp) is `#if defined(__DAV_CUBE__)`:
// empty in the vector binary, so the AIV lanes of a mix kernel pass at once
// and do not add to the counter.
TEST_CASE("SOFT aic syncall in a mix kernel: only the two AICs take part", "[conformance]") {
  const auto e = run_mix(R"([{"syncall": {"mode": "soft", "core_type": "aic", "workspace_arg": 0, "used_cores": 2}}])",
                         R"([{"syncall": {"mode": "soft", "core_type": "aic", "workspace_arg": 0, "used_cores": 2}},
                              {"compute": {"ns": 10}}])",
                         true);
  // The AICs: adds visible at T+550 and T+600, released at T+950 and T+1000.
  CHECK(std::min(e.at(0), e.at(1)) == ns(950));
  CHECK(std::max(e.at(0), e.at(1)) == ns(1000));
  for (int aiv : {2, 3, 4, 5}) CHECK(e.at(aiv) == ns(10));
}

// PyPTO's codegen check of the soft workspace (pypto src/backend/common/
// pto_ops_crosscore.cpp, system.syncall: "gm_workspace must contain at least
// 16 INT32 elements (64 bytes)"): PTO-ISA's counter publishes a whole 64-byte
// line (include/pto/common/type.hpp, SYNCALL_SOFT_WORKSPACE_INT32 = 16).
TEST_CASE("a SOFT syncall workspace under 16 int32 elements is an input error in run and check", "[conformance][cli]") {
  const cli::fs::path trace = cli::scratch("small_ws.json");
  cli::fs::create_directories(trace.parent_path());
  std::ofstream(trace) << R"({"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "aiv", "body": [
      {"syncall": {"mode": "soft", "core_type": "aiv", "workspace_arg": 0, "used_cores": 2}}]}},
    "tensors": {"ws": {"shape": [8], "dtype": "int32"}},
    "program": [{"op": "submit", "kernel": "K", "block_num": 2, "args": [{"inout": "ws"}]}]})";
  for (const char* cmd : {"run", "check"}) {
    INFO(cmd);
    const cli::Result r = cli::npusim(std::string(cmd) + " '" + trace.string() + "' --platform tiny --quiet");
    CHECK(r.status == 2);
    CHECK(cli::has(r.err, "at /program/0/args/0: syncall workspace argument 0 must be an int32 tensor of at least 16 "
                          "elements, got int32 with 8 elements"));
  }
}
