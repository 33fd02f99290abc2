#include "sim/study/worker.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/runtime/arena_cache.h"
#include "sim/json/json_getters.h"
#include "sim/json/json_read.h"
#include "sim/json/json_util.h"
#include "sim/config/run_options.h"
#include "sim/diagnose/diagnosis.h"
#include "sim/engine/engine.h"
#include "sim/engine/fresh_kernel.h"
#include "sim/engine/output_dir.h"
#include "sim/json/json_input.h"
#include "sim/platform/platform_loader.h"
#include "sim/record/whole_file.h"

namespace fs = std::filesystem;

namespace npusim::study {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using json_input::pointer_join;

const std::vector<std::string> kRingFields = {"ring_task_window", "ring_heap", "ring_dep_pool"};

bool is_ring_field(const std::string& key) {
  return std::find(kRingFields.begin(), kRingFields.end(), key) != kRingFields.end();
}

// Only the ring_* fields of `o`.
RunOptions ring_fields(const RunOptions& o) {
  RunOptions r;
  r.ring_task_window = o.ring_task_window;
  r.ring_heap = o.ring_heap;
  r.ring_dep_pool = o.ring_dep_pool;
  return r;
}

// A run block's fields other than ring_*, each a warning: `why` they are ignored.
void warn_non_ring(const json& block, const std::string& file, const std::string& path, const std::string& why,
                   std::vector<std::string>& warnings) {
  for (auto it = block.begin(); it != block.end(); ++it)
    if (!is_ring_field(it.key()) && !json_input::is_annotation_key(it.key()))
      warnings.push_back(file + ": at " + pointer_join(path, it.key()) + ": ignored: " + why);
}

int positive_int(const json& v, const std::string& file, const std::string& path, std::int64_t max) {
  return static_cast<int>(json_input::Getters<json>(file).integer(v, path, 1, max));
}

// A dispatch's program file: a path relative to the worker file's folder,
// which must exist; `shown` gets it as the file names it.
std::string program_path(const json& p, const std::string& file, const std::string& path, std::string& shown) {
  if (!p.is_string() || p.get<std::string>().empty())
    throw InputError(file, path, "expected a file name, got " + json_input::describe_json(p) +
                                     " (a distributed worker's \"trace\" may also be a list, one per chip)");
  shown = p.get<std::string>();
  const fs::path rel(shown);
  const std::string program = rel.is_absolute() ? rel.string() : (fs::path(file).parent_path() / rel).string();
  std::error_code ec;
  if (!fs::exists(program, ec))
    throw InputError(file, path, "no file \"" + shown + "\" (paths are relative to the worker file's folder)");
  if (const std::string why = json_input::not_a_regular_file(program, "trace or scene file"); !why.empty())
    throw InputError(file, path, "\"" + shown + "\" " + why);
  return program;
}

WorkerDispatch parse_dispatch(const json& d, WorkerFile& w, const std::string& path) {
  const std::string& file = w.file;
  if (!d.is_object())
    throw InputError(file, path, "expected a dispatch object {\"trace\" or \"scene\", \"config\", \"repeat\"}, got " +
                                     json_input::describe_json(d));
  json_input::check_keys(d, file, path, {"trace", "scene", "config", "repeat"});
  if (d.contains("trace") == d.contains("scene"))
    throw InputError(file, path, "expected exactly one of \"trace\" and \"scene\" (the program this dispatch runs)");
  const std::string key = d.contains("trace") ? "trace" : "scene";
  const json& p = d.at(key);
  WorkerDispatch out;
  if (p.is_array() && key == "trace" && w.kind == WorkerKind::Distributed) {  // one trace per chip, rank order
    if (p.size() != static_cast<std::size_t>(w.chips))
      throw InputError(file, pointer_join(path, key),
                       "expected one trace per chip: a list of " + std::to_string(w.chips) + " (worker.chips), got " +
                           json_input::describe_json(p));
    for (std::size_t r = 0; r < p.size(); ++r)
      out.per_chip.push_back(program_path(p[r], file, pointer_join(pointer_join(path, key), r), out.shown));
    out.shown = p.dump();
    out.program = out.per_chip.front();
  } else {
    out.program = program_path(p, file, pointer_join(path, key), out.shown);
  }
  if (d.contains("config") && !d.at("config").is_null()) {
    const std::string cpath = pointer_join(path, "config");
    const json& c = d.at("config");
    if (!c.is_object())
      throw InputError(file, cpath, "expected a RunConfig object (ring_* fields), got " + json_input::describe_json(c));
    out.config = config::parse_run_block(c, file, cpath);
    if (w.kind == WorkerKind::Distributed) {
      warn_non_ring(c, file, cpath,
                    "a distributed (L3) dispatch applies only the ring_* fields of its RunConfig; compile-time and "
                    "DFX fields are set at compile / prepare time (seed page 003)",
                    w.warnings);
      out.config = ring_fields(out.config);
    }
  }
  if (d.contains("repeat")) out.repeat = positive_int(d.at("repeat"), file, pointer_join(path, "repeat"), 1000000000);
  return out;
}

}  // namespace

WorkerFile parse_worker_file(const std::string& path) { return parse_worker_doc(json_input::read_file(path), path); }

WorkerFile parse_worker_doc(const json& doc, const std::string& path) {
  WorkerFile w;
  w.file = path;
  if (!doc.is_object())
    throw InputError(path, "", "expected a worker file: an object with \"npusim_worker\": 1, got " +
                                   json_input::describe_json(doc));
  json_input::check_keys(doc, path, "", {"npusim_worker", "worker", "prepare", "dispatches"});
  std::int64_t version = 0;
  if (!doc.contains("npusim_worker") || !json_input::json_int64(doc["npusim_worker"], version) || version != 1)
    throw InputError(path, "/npusim_worker",
                     "expected \"npusim_worker\": 1 (the worker file format's version), got " +
                         (doc.contains("npusim_worker") ? json_input::describe_json(doc["npusim_worker"]) : "nothing"));

  if (!doc.contains("worker") || !doc["worker"].is_object())
    throw InputError(path, "/worker",
                     "expected an object {\"kind\": \"chip\" or \"distributed\", \"chips\", \"aicpu_thread_num\"}");
  const json& wk = doc["worker"];
  json_input::check_keys(wk, path, "/worker", {"kind", "chips", "aicpu_thread_num"});
  const json kind = wk.value("kind", json());
  if (kind == "chip") w.kind = WorkerKind::Chip;
  else if (kind == "distributed") w.kind = WorkerKind::Distributed;
  else
    throw InputError(path, "/worker/kind", "expected \"chip\" (L2 ChipWorker / run()) or \"distributed\" (L3 "
                                           "DistributedWorker), got " + (kind.is_null() ? "nothing" : json_input::describe_json(kind)));
  if (wk.contains("chips")) w.chips = positive_int(wk["chips"], path, "/worker/chips", 4096);
  if (w.kind == WorkerKind::Chip && w.chips != 1)
    throw InputError(path, "/worker/chips", "a chip worker drives one chip: expected 1, got " + std::to_string(w.chips));
  if (wk.contains("aicpu_thread_num")) {
    std::int64_t n = 0;
    if (!json_input::json_int64(wk["aicpu_thread_num"], n) || n < 0 || n > 1024)
      throw InputError(path, "/worker/aicpu_thread_num",
                       "expected 0 (auto) or an AICPU thread count, got " + json_input::describe_json(wk["aicpu_thread_num"]));
    w.aicpu_thread_num = static_cast<int>(n);
  }

  if (doc.contains("prepare") && !doc["prepare"].is_null()) {
    const json& p = doc["prepare"];
    if (!p.is_object())
      throw InputError(path, "/prepare", "expected null or a RunConfig object (ring_* fields), got " +
                                             json_input::describe_json(p));
    w.prepare = ring_fields(config::parse_run_block(p, path, "/prepare"));
    warn_non_ring(p, path, "/prepare", "prepare(config) uses a RunConfig only to prewarm its ring sizes' arena; "
                                       "it is not saved for the dispatches (pypto docs/en/dev/05-runtime-ring-sizing.md)", w.warnings);
  }

  if (!doc.contains("dispatches") || !doc["dispatches"].is_array() || doc["dispatches"].empty())
    throw InputError(path, "/dispatches", "expected a non-empty list of dispatches");
  const json& ds = doc["dispatches"];
  for (std::size_t i = 0; i < ds.size(); ++i)
    w.dispatches.push_back(parse_dispatch(ds[i], w, pointer_join("/dispatches", i)));
  return w;
}

namespace {

RingValues ring_array(const json& v) {
  RingValues r{};
  for (std::size_t i = 0; i < r.size() && i < v.size(); ++i) r[i] = v[i].get<std::uint64_t>();
  return r;
}

// What one dispatch's run produced (from its summary.json; an L3
// dispatch's from its chips' summaries).
struct DispatchRun {
  int status = 0;          // npusim run's exit status
  std::string device_status;
  std::uint64_t device_wall_ns = 0;
  ArenaKey key;            // the effective ring sizes the run used
  std::string error;       // the failure's name
  // L3: each chip's device_wall_ns and the host's dispatch cost added to the slowest.
  std::vector<std::uint64_t> chip_wall_ns;
  std::uint64_t host_dispatch_ns = 0;
};

// The status, failure and ring sizes of a run's summary.json.
void read_summary(const std::string& path, DispatchRun& out) {
  const json s = json_input::read_file(path);
  out.device_status = s.at("status").get<std::string>();
  out.device_wall_ns = s.at("device_wall_ns").get<std::uint64_t>();
  const json& run = s.at("run");
  out.key = {ring_array(run.at("ring_task_window")), ring_array(run.at("ring_heap")),
             ring_array(run.at("ring_dep_pool"))};
  if (s.at("error").is_object()) out.error = s["error"].value("name", "");
}

engine::RunRequest dispatch_request(const WorkerRequest& req, const WorkerDispatch& d, const RunOptions& options,
                                    const std::string& out_dir) {
  engine::RunRequest r;
  r.trace_path = d.program;
  r.platform = req.platform;
  r.out_dir = out_dir;
  r.cli = options;
  r.quiet = true;
  r.host_stats = false;  // the worker's outputs are byte-identical run to run
  r.swimlane_level = req.swimlane_level;
  r.deps = req.deps;
  r.scope_stats = req.scope_stats;
  r.task_stats = req.task_stats;
  r.suggest = req.suggest;
  return r;
}

// L2: the program on one chip.
DispatchRun run_dispatch(const WorkerRequest& req, const WorkerDispatch& d, const RunOptions& options,
                         const std::string& out_dir, std::ostream& err) {
  DispatchRun out;
  std::ostringstream quiet;
  {
    engine::FreshKernel kernel;
    out.status = engine::run(dispatch_request(req, d, options, out_dir), quiet, err);
  }
  if (out.status == engine::kExitInputError) return out;
  read_summary(out_dir + "/summary.json", out);
  return out;
}

// L3: every chip of the worker in one simulation, chip r running its program
// with the dispatch's ring sizes; the dispatch's device time is the slowest
// chip's plus the host's dispatch cost (docs/workers.md, "Several chips").
DispatchRun run_l3_dispatch(const WorkerRequest& req, const WorkerFile& w, const WorkerDispatch& d,
                            const RunOptions& options, const Platform& platform, const std::string& out_dir,
                            std::ostream& err) {
  engine::ChipsRequest cr;
  cr.run = dispatch_request(req, d, options, out_dir);
  cr.traces = d.per_chip.empty() ? std::vector<std::string>(static_cast<std::size_t>(w.chips), d.program) : d.per_chip;
  DispatchRun out;
  std::vector<engine::ChipOutcome> chips;
  {
    engine::FreshKernel kernel;
    out.status = engine::run_chips(cr, chips, err);
  }
  if (out.status == engine::kExitInputError) return out;
  read_summary(out_dir + "/" + engine::chip_folder(0) + "/summary.json", out);  // every chip has the dispatch's sizes
  out.host_dispatch_ns = static_cast<std::uint64_t>(to_ns(platform.interconnect.host_dispatch));
  std::uint64_t slowest = 0;
  for (const engine::ChipOutcome& c : chips) {
    const auto wall = static_cast<std::uint64_t>(to_ns(c.device_wall));  // as summary.json's device_wall_ns
    out.chip_wall_ns.push_back(wall);
    slowest = std::max(slowest, wall);
    if (!c.ok && out.error.empty()) {
      out.device_status = "error";
      out.error = c.error;
    }
  }
  out.device_wall_ns = slowest + out.host_dispatch_ns;
  return out;
}

ordered_json key_json(const ArenaKey& k) {
  return {{"ring_task_window", k.task_window}, {"ring_heap", k.heap}, {"ring_dep_pool", k.dep_pool}};
}

std::string list_text(const RingValues& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string key_text(const ArenaKey& k) {
  return "ring_task_window=" + list_text(k.task_window) + ", ring_heap=" + list_text(k.heap) +
         ", ring_dep_pool=" + list_text(k.dep_pool);
}

// The per-ring maximum of every vector the dispatches used.
ArenaKey per_ring_max(const std::vector<ArenaKey>& used) {
  ArenaKey m = used.front();
  for (const ArenaKey& k : used)
    for (int r = 0; r < kNumRings; ++r) {
      m.task_window[r] = std::max(m.task_window[r], k.task_window[r]);
      m.heap[r] = std::max(m.heap[r], k.heap[r]);
      m.dep_pool[r] = std::max(m.dep_pool[r], k.dep_pool[r]);
    }
  return m;
}

// One entry of worker_summary.json's `dispatches`.
struct Entry {
  ArenaOutcome arena = ArenaOutcome::Miss;
  std::uint64_t build_ns = 0;
  DispatchRun run;
  bool ran = false;
};

// The seed's advice that applies to what happened (docs/workers.md, "Advice").
ordered_json advice(const Platform& platform, bool prepared,
                    const std::vector<Entry>& entries, const std::vector<WorkerDispatch>& ds) {
  ordered_json a = ordered_json::array();
  std::vector<ArenaKey> used, built;
  int rebuilds = 0;  // misses of a vector that had been built before
  for (const Entry& e : entries) {
    if (!e.ran) continue;
    if (std::find(used.begin(), used.end(), e.run.key) == used.end()) used.push_back(e.run.key);
    if (e.arena == ArenaOutcome::Miss) {
      if (std::find(built.begin(), built.end(), e.run.key) != built.end()) ++rebuilds;
      built.push_back(e.run.key);
    }
  }
  if (used.empty()) return a;
  const std::uint64_t build_ns = to_ns(platform.limits.arena_build);
  if (entries.front().ran && entries.front().arena == ArenaOutcome::Miss)
    a.push_back({{"kind", "prewarm_first"},
                 {"text", std::string("the arena prewarmed at ") + (prepared ? "prepare" : "init (the runtime's defaults)") +
                              " was not the first dispatch's sizes: the first dispatch rebuilt it and the prewarm "
                              "was wasted; prewarm the first dispatch's size (prepare with its config), not the most "
                              "frequent one"},
                 {"prepare", key_json(entries.front().run.key)}});
  if (rebuilds > 0)
    a.push_back({{"kind", "alternating_sizes"},
                 {"text", "ring sizes alternate between dispatches: the single slot is overwritten on every switch, so " +
                              std::to_string(rebuilds) + " dispatch(es) rebuilt an arena built before (" +
                              std::to_string(rebuilds * build_ns / 1000000) +
                              " ms); keep one size for every dispatch of the worker"},
                 {"rebuilds", rebuilds}});
  if (used.size() > 1) {
    const ArenaKey one = per_ring_max(used);
    RunConfig c;
    c.task_window = one.task_window;
    c.heap = one.heap;
    c.dep_pool = one.dep_pool;
    c.tensormap_pool = platform.limits.tensormap_pool;
    const bool fits = diagnose::arena_bytes(platform, c) <= platform.topo.device_memory_bytes;
    int builds = 0;
    for (const Entry& e : entries) builds += e.ran && e.arena == ArenaOutcome::Miss;
    ordered_json o = {{"kind", "one_size"},
                      {"text", "one size serves every dispatch shape of this worker: the per-ring maximum of the "
                               "sizes the " + std::to_string(ds.size()) + " dispatches used (" + key_text(one) +
                               "); with it in prepare and in every dispatch's config, no dispatch builds an arena (" +
                               std::to_string(builds) + " build(s) now)" +
                               (fits ? "" : "; but its arena does not fit the device's memory")},
                      {"sizes", key_json(one)},
                      {"fits_device_memory", fits}};
    a.push_back(o);
  }
  return a;
}

std::string default_out(const WorkerRequest& req) {
  return "npusim_out/" + engine::file_component(fs::path(req.file).stem().string());
}

// Every regular file under `root`, relative to it, sorted.
std::vector<std::string> files_under(const std::string& root) {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), root).string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

void check_worker(const WorkerFile& w, const Platform& platform) {
  RunOptions base;
  base.aicpu_thread_num = w.aicpu_thread_num;
  try {
    config::check_against(base, platform, w.file);
  } catch (const InputError& e) {
    throw InputError(w.file, "/worker/aicpu_thread_num", e.message());
  }
  if (w.chips > platform.interconnect.chips_per_node)
    throw InputError(w.file, "/worker/chips",
                     "expected at most " + std::to_string(platform.interconnect.chips_per_node) +
                         " chips: the platform's interconnect joins that many in one node "
                         "(interconnect.chips_per_node), got " + std::to_string(w.chips));
}

int run_worker(const WorkerRequest& req, std::ostream& out, std::ostream& err) {
  try {
    const WorkerFile w = parse_worker_file(req.file);                    // the worker, its prepare and dispatches
    const Platform platform = platform::load_platform(req.platform);
    check_worker(w, platform);
    RunOptions base;
    base.aicpu_thread_num = w.aicpu_thread_num;
    for (const std::string& warning : w.warnings) err << "npusim: warning: " << warning << "\n";
    engine::OutputDir dir(req.out_dir.empty() ? default_out(req) : req.out_dir);

    // Init: the prepared vector, or the runtime's defaults, built before any dispatch.
    ArenaSlot slot;
    const ArenaKey prewarmed = ArenaKey::of(config::resolve(w.prepare.value_or(RunOptions{}), platform, w.file));
    slot.prewarm(prewarmed);
    const std::uint64_t build_ns = to_ns(platform.limits.arena_build);

    std::vector<Entry> entries(w.dispatches.size());
    int status = engine::kExitOk;
    for (std::size_t i = 0; i < w.dispatches.size() && status == engine::kExitOk; ++i) {
      const WorkerDispatch& d = w.dispatches[i];
      Entry& e = entries[i];
      const std::string folder = dir.staging() + "/dispatch_" + std::to_string(i);
      e.run = w.kind == WorkerKind::Distributed
                  ? run_l3_dispatch(req, w, d, config::merge(base, d.config), platform, folder, err)
                  : run_dispatch(req, d, config::merge(base, d.config), folder, err);
      if (e.run.status == engine::kExitInputError)
        return engine::kExitInputError;  // the message is printed; nothing is committed
      e.ran = true;
      e.arena = slot.use(e.run.key);
      for (int k = 1; k < d.repeat; ++k) slot.use(e.run.key);      // later repeats find the same vector: hits
      e.build_ns = e.arena == ArenaOutcome::Miss ? build_ns : 0;
      if (e.run.status != engine::kExitOk) status = e.run.status;
    }

    ordered_json s;
    s["npusim_worker_summary"] = 1;
    s["worker"] = {{"file", w.file},
                   {"kind", w.kind == WorkerKind::Chip ? "chip" : "distributed"},
                   {"chips", w.chips},
                   {"chips_simulated", w.kind == WorkerKind::Distributed ? w.chips : 1},
                   {"aicpu_thread_num", w.aicpu_thread_num.value_or(0)}};
    s["platform"] = platform.name;
    s["status"] = status == engine::kExitOk ? "ok" : "error";
    s["prepare"] = {{"source", w.prepare ? "prepare" : "runtime_defaults"},
                    {"sizes", key_json(prewarmed)},
                    {"arena_build_ns", build_ns}};
    ordered_json list = ordered_json::array();
    // Totals exact or not at all: a sum or a repeat past 2^64 ns is an input
    // error naming the dispatch (docs/workers.md), never a wrapped number.
    auto total = [&](std::size_t i, bool overflow, const std::string& what) {
      if (overflow)
        throw InputError(w.file, pointer_join(pointer_join("/dispatches", i), "repeat"),
                         what + " passes 2^64 ns (about 584 years), beyond what npusim adds up exactly: "
                                "lower the repeat or split the worker file");
    };
    std::uint64_t builds_ns = 0, device_ns = 0;
    int builds = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      const WorkerDispatch& d = w.dispatches[i];
      ordered_json j;
      j["dispatch"] = i;
      j["program"] = d.shown;
      j["repeat"] = d.repeat;
      if (!e.ran) {
        j["status"] = "not_run";
        list.push_back(j);
        continue;
      }
      j["status"] = e.run.device_status;
      if (!e.run.error.empty()) j["error"] = e.run.error;
      j["arena"] = arena_outcome_name(e.arena);
      j["arena_build_ns"] = e.build_ns;
      if (d.repeat > 1) j["repeat_arena"] = "hit";  // the later repeats find the vector the first one used
      j["device_wall_ns"] = e.run.device_wall_ns;
      if (w.kind == WorkerKind::Distributed) {
        j["chip_device_wall_ns"] = e.run.chip_wall_ns;
        j["host_dispatch_ns"] = e.run.host_dispatch_ns;
      }
      std::uint64_t wall_total = 0, visible = 0;
      const std::string times = std::to_string(d.repeat) + " x device_wall " + std::to_string(e.run.device_wall_ns) + " ns";
      total(i, __builtin_mul_overflow(e.run.device_wall_ns, static_cast<std::uint64_t>(d.repeat), &wall_total),
            "the dispatch's device time, " + times + ",");
      total(i, __builtin_add_overflow(e.build_ns, wall_total, &visible), "the dispatch's host-visible time");
      j["device_wall_total_ns"] = wall_total;
      j["host_visible_ns"] = visible;
      j["sizes"] = key_json(e.run.key);
      j["outputs"] = "dispatch_" + std::to_string(i);
      list.push_back(j);
      total(i, __builtin_add_overflow(builds_ns, e.build_ns, &builds_ns), "the worker's arena build time");
      builds += e.arena == ArenaOutcome::Miss;
      total(i, __builtin_add_overflow(device_ns, wall_total, &device_ns), "the worker's device time");
    }
    std::uint64_t visible_ns = 0;
    total(entries.size() - 1, __builtin_add_overflow(builds_ns, device_ns, &visible_ns), "the worker's host-visible time");
    s["dispatches"] = list;
    s["totals"] = {{"arena_builds", builds},
                   {"arena_build_ns", builds_ns},
                   {"device_wall_ns", device_ns},
                   {"host_visible_ns", visible_ns},
                   {"setup_arena_build_ns", build_ns}};
    s["advice"] = advice(platform, w.prepare.has_value(), entries, w.dispatches);
    s["warnings"] = w.warnings;
    record::write_whole(dir.staging() + "/worker_summary.json", s.dump(2) + "\n");
    dir.commit(files_under(dir.staging()));

    if (!req.quiet) {
      out << "npusim worker: " << w.file << " (" << (w.kind == WorkerKind::Chip ? "chip" : "distributed") << ", "
          << w.dispatches.size() << " dispatches) on " << platform.name << "\n";
      for (std::size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        if (!e.ran) {
          out << "  dispatch " << i << ": not run\n";
          continue;
        }
        out << "  dispatch " << i << " x" << w.dispatches[i].repeat << ": arena " << arena_outcome_name(e.arena)
            << " (build " << e.build_ns / 1000000 << " ms), device_wall " << e.run.device_wall_ns << " ns, "
            << e.run.device_status << "\n";
      }
      out << "host-visible " << visible_ns << " ns (" << builds << " arena build(s), " << builds_ns
          << " ns; device " << device_ns << " ns)\n";
      for (const auto& a : s["advice"]) out << "advice: " << a["text"].get<std::string>() << "\n";
      out << "outputs in " << dir.given() << "/\n";
    }
    return status;
  } catch (const InputError& e) {
    err << "npusim: error: " << engine::OutputDir::shown(e.what()) << "\n";
    return engine::kExitInputError;
  }
}

}  // namespace npusim::study
