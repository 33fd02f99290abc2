// The interconnect of an L3 dispatch (docs/interconnect.md): the links'
// arithmetic on its own, then the one-phase allreduce over 2, 4 and 8 chips
// (traces/allreduce, tools/gen_allreduce.py), whose phases mirror simpler's
// examples/workers/l3/allreduce/kernels/aiv/allreduce_onephase_kernel.cpp
// (kernel_entry: stage, TNOTIFY every peer, TWAIT every peer, TLOAD own then
// each peer's scratch with a TADD, TSTORE), and the cross-chip phases'
// validation and hang diagnosis.
#include "tests/catch.h"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "models/interconnect/links.h"
#include "tests/cli_support.h"

using cli::has;
using cli::json;
namespace fs = std::filesystem;
using namespace npusim;

namespace {

InterconnectCosts tiny_links() {  // platforms/tiny.json's interconnect
  InterconnectCosts c;
  c.chips_per_node = 8;
  c.link_latency = ns(1000);
  c.link_bytes_per_ns = 10;
  return c;
}

// Column `name` of task_stats.csv's row for kernel `kernel`, in ps.
Time kernel_stat_ps(const fs::path& csv, const std::string& kernel, const std::string& name) {
  std::istringstream in(cli::slurp(csv));
  std::string header, row, cell;
  std::getline(in, header);
  std::vector<std::string> cols;
  for (std::istringstream h(header); std::getline(h, cell, ',');) cols.push_back(cell);
  while (std::getline(in, row)) {
    std::map<std::string, std::string> v;
    std::istringstream r(row);
    for (const std::string& c : cols) std::getline(r, v[c], ',');
    if (v["kernel"] == kernel) return static_cast<Time>(std::llround(std::stod(v[name]) * 1000));
  }
  FAIL("no task of kernel " << kernel);
  return 0;
}

// Runs traces/FOLDER/worker_CHIPS.json on tiny; its output folder and the
// summary of its one dispatch.
fs::path run_example_worker(const std::string& folder, int chips, json& dispatch,
                            const std::string& platform = "tiny") {
  const fs::path out = cli::scratch("ic_" + folder + "_" + std::to_string(chips));
  const cli::Result r = cli::npusim("worker traces/" + folder + "/worker_" + std::to_string(chips) +
                                    ".json --platform '" + platform + "' --out '" + out.string() + "'");
  REQUIRE(r.status == 0);
  dispatch = cli::load(out / "worker_summary.json")["dispatches"][0];
  return out;
}

// Chip c's task_stats.csv in a dispatch's output folder.
fs::path chip_stats(const fs::path& out, int c) {
  return out / "dispatch_0" / ("chip_" + std::to_string(c)) / "task_stats.csv";
}

struct Allreduce {
  json dispatch;                 // worker_summary.json's dispatch
  std::vector<Time> block_end;   // each chip's ALLREDUCE block end (ps)
};

Allreduce allreduce(int chips, const std::string& platform = "tiny") {
  Allreduce a;
  const fs::path out = run_example_worker("allreduce", chips, a.dispatch, platform);
  for (int c = 0; c < chips; ++c) a.block_end.push_back(kernel_stat_ps(chip_stats(out, c), "ALLREDUCE", "last_end_ns"));
  return a;
}

}  // namespace

TEST_CASE("links: a transfer costs latency + bytes / bandwidth", "[interconnect]") {
  Links l(tiny_links(), 4);
  CHECK(l.cost(0) == ns(1000));
  CHECK(l.cost(4) == ps(1000400));        // 1000 + 4 / 10 ns
  CHECK(l.cost(1024) == ps(1102400));     // 1000 + 102.4 ns
  CHECK(l.transfer(0, 1, 1024, ns(5)) == ns(5) + ps(1102400));
}

TEST_CASE("links: one link serialises its transfers, the other direction and other links do not wait", "[interconnect]") {
  Links l(tiny_links(), 4);
  CHECK(l.transfer(0, 1, 1024, 0) == ps(1102400));
  // Asked while 0->1 is busy: starts when the first arrives.
  CHECK(l.transfer(0, 1, 1024, ns(100)) == ps(2204800));
  // 1->0 (full duplex) and 0->2 are links of their own.
  CHECK(l.transfer(1, 0, 1024, ns(100)) == ns(100) + ps(1102400));
  CHECK(l.transfer(0, 2, 0, ns(100)) == ns(1100));
  // Asked after the link went idle: no queueing.
  CHECK(l.transfer(0, 1, 0, ns(5000)) == ns(6000));
}

TEST_CASE("links: peers are counted round the node from the rank", "[interconnect]") {
  Links l(tiny_links(), 4);
  CHECK(l.peer(3, 1) == 0);
  CHECK(l.peer(0, -1) == 3);
  CHECK(l.peer(1, 6) == 3);
}

// docs/interconnect.md, "The allreduce": per chip, the notifications of the
// N-1 peers all arrive one notify transfer after the chip's own (every chip
// runs the same program at the same times): 1000 + 4/10 = 1000.4 ns; then
// the N-1 peer loads run one after the other, each over its own idle link:
// 1000 + 1024/10 = 1102.4 ns, plus the 50 ns TADD. So the block ends
// (N-2) x 1152.4 ns later than on 2 chips.
TEST_CASE("allreduce: the block time grows by one peer load and add per chip, as the link model says",
          "[interconnect][worker][cli]") {
  const Allreduce two = allreduce(2), four = allreduce(4), eight = allreduce(8);
  for (const Allreduce* a : {&two, &four, &eight})
    for (Time end : a->block_end) CHECK(end == a->block_end.front());  // symmetric: every chip alike
  CHECK(four.block_end[0] - two.block_end[0] == 2 * ps(1152400));
  CHECK(eight.block_end[0] - two.block_end[0] == 6 * ps(1152400));
  // The dispatch's device time: the slowest chip + the host's dispatch (1000 ns on tiny).
  for (const Allreduce* a : {&two, &four, &eight}) {
    double slowest = 0;
    for (const json& w : a->dispatch["chip_device_wall_ns"]) slowest = std::max(slowest, w.get<double>());
    CHECK(a->dispatch["device_wall_ns"].get<double>() == slowest + 1000);
  }
  CHECK(two.dispatch["device_wall_ns"].get<double>() < four.dispatch["device_wall_ns"].get<double>());
  CHECK(four.dispatch["device_wall_ns"].get<double>() < eight.dispatch["device_wall_ns"].get<double>());
}

namespace {

// Runs `trace` (one chip's program of a 2-chip dispatch) alone on tiny, its
// ALLREDUCE kernel's link phases replaced by computes of what the link model
// charges: notify + wait_flag `wait_ns` (1000.4 on tiny), each peer load `peer_load_ns`.
fs::path run_links_as_computes(const std::string& trace, double peer_load_ns, const std::string& name,
                               const std::string& options, double wait_ns = 1000.4) {
  json t = cli::load(fs::path(NPUSIM_SOURCE_DIR) / trace);
  json body = json::array();
  for (const json& ph : t["kernels"]["ALLREDUCE"]["body"]) {
    if (ph.contains("notify")) continue;
    if (ph.contains("wait_flag")) body.push_back({{"compute", {{"ns", wait_ns}}}});
    else if (ph.contains("load") && ph["load"].contains("peer_offset")) body.push_back({{"compute", {{"ns", peer_load_ns}}}});
    else body.push_back(ph);
  }
  t["kernels"]["ALLREDUCE"]["body"] = body;
  const fs::path dir = cli::scratch(name);
  fs::create_directories(dir);
  std::ofstream(dir / "local.json") << t.dump();
  fs::path out;
  REQUIRE(cli::run("'" + (dir / "local.json").string() + "' --platform tiny -q" + options, name + "_run", out).status == 0);
  return out;
}

}  // namespace

// The same kernel on one chip, with the link phases replaced by computes of
// what the link model charges (notify + wait: 1000.4 ns; a peer load:
// 1102.4 ns), ends at the same picosecond: the chip-local phases are
// unchanged and the interconnect costs exactly its arithmetic.
TEST_CASE("allreduce: on 2 chips the link phases cost exactly their arithmetic", "[interconnect][cli]") {
  const fs::path out = run_links_as_computes("traces/allreduce/allreduce_onephase_2.json", 1102.4, "ic_local", "");
  const Allreduce two = allreduce(2);
  CHECK(kernel_stat_ps(out / "task_stats.csv", "ALLREDUCE", "last_end_ns") == two.block_end[0]);
}

// The same on a link of no latency and the loader's largest bandwidth (1e6
// B/ns): a 4-byte notification then takes 0.004 ps, which is no time at
// 1 ps resolution, and is delivered in the same instant (Fabric::post's
// zero-delay notify), so notify + wait_flag cost 0; a 1 KiB peer load
// costs 1.024 ps, 1 ps.
TEST_CASE("allreduce: a link of no latency delivers a notification in the same instant", "[interconnect][cli]") {
  json p = cli::load(fs::path(NPUSIM_SOURCE_DIR) / "platforms" / "tiny.json");
  p["interconnect"]["link_latency_ns"]["value"] = 0;
  p["interconnect"]["link_bytes_per_ns"]["value"] = 1000000;
  const fs::path dir = cli::scratch("ic_zero_link");
  fs::create_directories(dir);
  std::ofstream(dir / "tiny_zero_link.json") << p.dump();
  const fs::path out =
      run_links_as_computes("traces/allreduce/allreduce_onephase_2.json", 0.001, "ic_local0", "", 0);
  const Allreduce two = allreduce(2, (dir / "tiny_zero_link.json").string());
  CHECK(kernel_stat_ps(out / "task_stats.csv", "ALLREDUCE", "last_end_ns") == two.block_end[0]);
  CHECK(two.block_end[0] == two.block_end[1]);
}

namespace {

// A 2-chip worker over a one-kernel trace with `body` (a JSON list of phases).
cli::Result two_chips(const std::string& name, const std::string& body, fs::path& out, int chips = 2) {
  const fs::path dir = cli::scratch(name);
  fs::create_directories(dir);
  std::ofstream(dir / "t.json") << R"({"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "aiv", "body": )" << body
                                << R"(}}, "tensors": {"x": {"shape": [256], "dtype": "fp32"}},
    "program": [{"op": "submit", "kernel": "K", "args": [{"inout": "x"}]}]})";
  std::ofstream(dir / "w.json") << R"({"npusim_worker": 1, "worker": {"kind": "distributed", "chips": )" << chips
                                << R"(}, "dispatches": [{"trace": "t.json"}]})";
  out = dir / "out";
  return cli::npusim("worker '" + (dir / "w.json").string() + "' --platform tiny --out '" + out.string() + "'");
}

}  // namespace

TEST_CASE("cross-chip phases: refused outside a multi-chip dispatch and for the chip itself", "[interconnect][cli]") {
  fs::path out;
  // npusim run: one chip, no peer.
  cli::Result r = cli::run("traces/allreduce/allreduce_onephase_2.json --platform tiny -q", "ic_one", out);
  CHECK(r.status == 2);
  CHECK(has(r.err, "allreduce_onephase_2.json"));
  CHECK(has(r.err, "/kernels/ALLREDUCE/body/2/notify"));
  CHECK(has(r.err, "needs an L3 dispatch of several chips"));
  CHECK_FALSE(fs::exists(out / "summary.json"));
  // peer_offset 2 in a 2-chip dispatch names the chip itself.
  r = two_chips("ic_self", R"([{"load": {"arg": 0, "bytes": 64, "peer_offset": 2}}])", out);
  CHECK(r.status == 2);
  CHECK(has(r.err, "/kernels/K/body/0/load/peer_offset"));
  CHECK(has(r.err, "peer_offset 2 names the chip itself in a dispatch of 2 chips"));
  CHECK_FALSE(fs::exists(out));
  // 0 is refused when the trace loads.
  r = two_chips("ic_zero", R"([{"notify": {"peer_offset": 0, "flag": 1}}])", out);
  CHECK(r.status == 2);
  CHECK(has(r.err, "/kernels/K/body/0/notify/peer_offset"));
  CHECK(has(r.err, "non-zero"));
  r = two_chips("ic_count", R"([{"wait_flag": {"flag": 1, "count": 0}}])", out);
  CHECK(r.status == 2);
  CHECK(has(r.err, "/kernels/K/body/0/wait_flag/count"));
  r = two_chips("ic_cache", R"([{"load": {"arg": 0, "bytes": 64, "peer_offset": 1, "cache": "bypass"}}])", out);
  CHECK(r.status == 2);
  CHECK(has(r.err, "/kernels/K/body/0/load/cache"));
}

TEST_CASE("cross-chip phases: a flag wait no notification satisfies is a diagnosed hang", "[interconnect][cli]") {
  fs::path out;
  // Each chip waits for 2 notifications on flag 3; its one peer sends 1.
  const cli::Result r = two_chips("ic_hang",
                                  R"([{"notify": {"peer_offset": 1, "flag": 3}}, {"wait_flag": {"flag": 3, "count": 2}}])",
                                  out);
  CHECK(r.status == 1);
  CHECK(has(r.err, "chip 0's flag 3 for 2 notification(s); 1 arrived"));
  CHECK(has(r.err, "chip 1's flag 3 for 2 notification(s); 1 arrived"));
  const json s = cli::load(out / "dispatch_0" / "chip_1" / "summary.json");
  INFO(s["error"].dump());
  const json& waits = s["error"]["diagnosis"]["flag_waits"];
  REQUIRE(waits.size() == 1);
  CHECK(waits[0]["chip"] == 1);
  CHECK(waits[0]["flag"] == 3);
  CHECK(waits[0]["count"] == 2);
  CHECK(waits[0]["arrived"] == 1);
}

namespace {


struct TpFfn {
  json dispatch;
  std::map<std::string, Time> span;  // chip 0: kernel -> last_end - first_start (ps)
  std::vector<Time> end;             // each chip's ALLREDUCE block end (ps)
};

TpFfn tp_ffn(int chips) {
  TpFfn f;
  const fs::path out = run_example_worker("tp_ffn", chips, f.dispatch);
  const fs::path chip0 = chip_stats(out, 0);
  for (const char* k : {"MM1", "GELU", "MM2", "ALLREDUCE"})
    f.span[k] = kernel_stat_ps(chip0, k, "last_end_ns") - kernel_stat_ps(chip0, k, "first_start_ns");
  for (int c = 0; c < chips; ++c) f.end.push_back(kernel_stat_ps(chip_stats(out, c), "ALLREDUCE", "last_end_ns"));
  return f;
}

}  // namespace

// docs/interconnect.md, "Example: a tensor-parallel FFN" (traces/tp_ffn,
// tools/gen_tp_ffn.py). On tiny (2 AIC, 4 AIV) each SPMD task's 24 or 48
// blocks run in 12 rounds on their cores, so a block's duration change shows
// 12 times in the task's span. Per block: MM1 80/N x 40076 ns, MM2 80/N x
// 38097 ns. The allreduce reduces a 384 x 5120 fp32 partial (7864320 bytes)
// with a 30 x 10512 = 315360 ns TADD per peer; a peer load on tiny costs
// 1000 + 7864320 / 10 = 787432 ns, so each added chip adds 1102792 ns.
TEST_CASE("tp_ffn: compute shrinks with the shard, the allreduce grows by one peer load and add per chip",
          "[interconnect][worker][cli]") {
  const TpFfn two = tp_ffn(2), four = tp_ffn(4);
  for (const TpFfn* f : {&two, &four}) {
    CHECK(f->dispatch["arena"] == "prewarmed");
    for (Time end : f->end) CHECK(end == f->end.front());  // symmetric: every chip alike
    double slowest = 0;
    for (const json& w : f->dispatch["chip_device_wall_ns"]) slowest = std::max(slowest, w.get<double>());
    CHECK(f->dispatch["device_wall_ns"].get<double>() == slowest + 1000);
  }
  // MM1 block 1603040 ns on 2 chips, 801520 on 4; MM2 1523880 and 761940.
  CHECK(two.span.at("MM1") - four.span.at("MM1") == 12 * ns(801520));
  CHECK(two.span.at("MM2") - four.span.at("MM2") == 12 * ns(761940));
  CHECK(two.span.at("GELU") - four.span.at("GELU") == 12 * ns(11098));  // 4 and 2 tiles of 5549 ns
  CHECK(four.span.at("ALLREDUCE") - two.span.at("ALLREDUCE") == 2 * ns(1102792));
}

// The N = 2 shard on one chip, its link phases replaced by computes of what
// the link model charges (notify + wait: 1000.4 ns; a peer load: 787432 ns),
// ends at the same picosecond as in the 2-chip dispatch.
TEST_CASE("tp_ffn: on 2 chips the link phases cost exactly their arithmetic", "[interconnect][cli]") {
  const fs::path out = run_links_as_computes("traces/tp_ffn/tp_ffn_2.json", 787432, "ic_tp_local", " --ring-heap 67108864");
  CHECK(kernel_stat_ps(out / "task_stats.csv", "ALLREDUCE", "last_end_ns") == tp_ffn(2).end[0]);
}
