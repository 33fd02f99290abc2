#include "sim/diagnose/sizing.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "sim/host/subprocess.h"
#include "sim/json/json_input.h"

namespace fs = std::filesystem;

namespace npusim::diagnose {

namespace {

std::string list(const RingValues& v) {
  std::string s;
  for (int r = 0; r < kNumRings; ++r) s += (r ? "," : "") + std::to_string(v[r]);
  return s;
}

// What a re-run's summary says.
struct Outcome {
  std::string status, name;
  int ring = -1;
  std::uint64_t submitted = 0;
};

// Runs npusim on the trace copy with `cfg` (and `platform`); nothing if the
// child could not run or wrote no summary.
std::optional<Outcome> rerun(const std::string& trace, const RunConfig& cfg, const std::string& platform,
                             const fs::path& dir, std::uint64_t max_tasks) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  const fs::path err = dir.string() + ".err";
  const int rc = host::run_self({"run", trace, "--platform", platform, "--out", dir.string(), "--quiet", "--no-suggest",
                                 "--max-tasks", std::to_string(max_tasks),
                                 "--no-host-stats", "--swimlane-level", "0", "--no-deps", "--no-scope-stats",
                                 "--no-task-stats", "--aicpu-thread-num", std::to_string(cfg.aicpu_thread_num), "--runtime",
                                 runtime_name(cfg.runtime), "--hbg-layout", hbg_layout_name(cfg.hbg_layout),
                                 "--cache-policy-lowering", cache_lowering_name(cfg.cache_policy_lowering), "--seed", std::to_string(cfg.seed), "--ring-task-window",
                                 list(cfg.task_window), "--ring-heap", list(cfg.heap), "--ring-dep-pool",
                                 list(cfg.dep_pool)},
                                err.string());
  if (rc == 2) {  // stopped: by its task cap (it got that far), or it could not run
    std::ifstream e(err);
    const std::string text((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
    if (text.find(": the run reached --max-tasks ") == std::string::npos) return std::nullopt;
    Outcome o;
    o.status = "max_tasks";
    o.submitted = max_tasks + 1;
    return o;
  }
  if (rc != 0 && rc != 1) return std::nullopt;
  nlohmann::json s = json_input::read_output((dir / "summary.json").string());  // null if it cannot be opened
  if (s.is_discarded() || !s.is_object()) return std::nullopt;
  Outcome o;
  o.status = s.value("status", "");
  if (s["tasks"].is_object()) o.submitted = s["tasks"].value("submitted", std::uint64_t{0});
  if (s["error"].is_object()) {
    o.name = s["error"].value("name", "");
    o.ring = s["error"].value("ring", -1);
  }
  return o;
}

std::string option_text(const std::string& field, const RunConfig& cfg) {
  if (field == "tensormap_pool")
    return "platform limits.tensormap_pool=" + std::to_string(cfg.tensormap_pool) +
           " (a compile-time constant of the runtime, PTO2_TENSORMAP_POOL_SIZE)";
  const RingValues& all = field == "ring_task_window" ? cfg.task_window
                          : field == "ring_heap"      ? cfg.heap
                                                      : cfg.dep_pool;
  std::string flag = "--" + field;
  for (char& c : flag)
    if (c == '_') c = '-';
  return field + "=[" + list(all) + "] (" + flag + " " + list(all) + ")";
}

}  // namespace

nlohmann::json Suggestion::to_json() const {
  nlohmann::json j = {{"field", field}, {"from", from}, {"to", to}, {"option", option},
                      {"outcome", outcome}, {"attempts", attempts}};
  if (ring >= 0) j["ring"] = ring;
  if (outcome == "max_tasks") j["rerun_max_tasks"] = rerun_tasks;
  if (!together.empty()) j["together"] = together;
  if (!then.empty()) {
    j["then"] = nlohmann::json::array();
    for (const Suggestion& s : then) j["then"].push_back(s.to_json());
  }
  return j;
}

std::string Suggestion::describe() const {
  std::string where = ring >= 0 ? " of ring " + std::to_string(ring) : std::string();
  const std::string after = outcome == "ok" ? "the run then completes"
                     : outcome == "max_tasks"
                         ? "the run then gets past this failure (its re-run was stopped after " +
                               std::to_string(rerun_tasks) + " tasks, its cap)"
                         : "the run then gets past this failure and stops at " + outcome;
  std::string text = field + where + ": " + std::to_string(from) + " -> " + std::to_string(to) +
                     " would have been enough (" + option + "); " + after;
  for (const Suggestion& s : then) text += "; with that, " + s.describe();
  if (!together.empty()) text += ". All together: " + together;
  return text;
}

namespace {

// The size a failure's code asks for, when a re-run stops at another
// capacity failure (a chained step, host_build_graph only).
std::string field_of_failure(const std::string& name) {
  if (name == "FLOW_CONTROL_DEADLOCK") return "ring_task_window";
  if (name == "HEAP_RING_DEADLOCK") return "ring_heap";
  if (name == "TENSORMAP_OVERFLOW") return "tensormap_pool";
  if (name == "READY_QUEUE_OVERFLOW") return "hbg_ready_queue_capacity";
  return "";
}

bool platform_field(const std::string& field) {
  return field == "tensormap_pool" || field == "hbg_ready_queue_capacity";
}

}  // namespace

SizingResult search_sizes(const SizingRequest& req, const Failure& failure, int max_attempts) {
  SizingResult res;
  std::string field = failure.size_field;
  int ring = failure.ring;
  std::string name = failure.name;
  if (field.empty() || !req.trace_text || !req.platform) return res;
  if (!platform_field(field) && (ring < 0 || ring >= kNumRings)) return res;

  const fs::path dir = req.work_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const bool scene = !req.scene_file.empty();
  const std::string trace = scene ? fs::absolute(req.scene_file, ec).string() : (dir / "trace.json").string();
  if (scene && !fs::is_regular_file(req.scene_file, ec)) {
    res.kind = SizingResult::Kind::Stopped;
    res.reason = "a scene is re-run from its file, and " + req.scene_file + " is not a regular file";
    return res;
  }
  if (!scene) {
    std::ofstream t(trace, std::ios::binary);
    t << *req.trace_text;
    t.close();
    if (!t) {
      res.kind = SizingResult::Kind::Stopped;
      res.reason = "the trace could not be copied for the re-runs (" + trace + ")";
      return res;
    }
  }
  RunConfig cfg = req.config;
  // The tensormap pool and host_build_graph's ready queues are platform
  // constants: re-run with a copy of the platform file that changes only them.
  nlohmann::json platform_json;
  bool platform_copy = false;
  std::uint64_t hbg_queue = req.platform->limits.hbg_ready_queue_capacity;
  const std::uint64_t cap = req.max_tasks ? req.max_tasks : req.submitted + kRerunTasks;
  int attempts = 0;
  // host_build_graph builds the whole graph before it runs, and each of its
  // capacity checks is independent of timing: a re-run that gets past one
  // and stops at another capacity failure goes on with that one's size
  // (docs/failures.md, "The sizes that would have been enough").
  const bool chain = req.config.runtime == RuntimeKind::HostBuildGraph;
  std::vector<Suggestion> steps;
  for (;;) {
    const bool tensormap = field == "tensormap_pool";
    const bool queue = field == "hbg_ready_queue_capacity";
    std::uint64_t* value = nullptr;
    std::uint64_t limit = 0;
    if (field == "ring_task_window") value = &cfg.task_window[ring], limit = 1ull << 30;
    else if (field == "ring_heap") value = &cfg.heap[ring], limit = 1ull << 40;
    else if (field == "ring_dep_pool") value = &cfg.dep_pool[ring], limit = 1ull << 30;
    else if (tensormap) value = &cfg.tensormap_pool, limit = 1ull << 30;
    else if (queue) value = &hbg_queue, limit = 1ull << 30;
    else break;
    if ((tensormap || queue) && !platform_copy) {
      platform_json = json_input::read_file(req.platform->path);
      platform_copy = true;
    }
    Suggestion s;
    s.field = field;
    s.ring = platform_field(field) ? -1 : ring;
    s.from = *value;
    std::uint64_t v = 1;
    while (v <= *value && v < (1ull << 62)) v <<= 1;  // the next power of two above the failing size
    std::uint64_t tried = 0;
    std::optional<Outcome> got;
    for (; v <= limit && attempts < max_attempts; v <<= 1) {
      *value = v;
      // A size whose arena does not fit the device fails in rtMalloc, before
      // the first task: it cannot tell whether it would have been enough.
      if (arena_bytes(*req.platform, cfg) > req.platform->topo.device_memory_bytes) {
        res.kind = SizingResult::Kind::Exhausted;
        res.limit = tried;
        res.limit_why = "a larger one no longer fits the runtime's arena in the device's memory";
        return res;
      }
      std::string platform = req.platform->path;
      if (platform_copy) {
        platform_json["limits"]["tensormap_pool"]["value"] = cfg.tensormap_pool;
        platform_json["limits"]["hbg_ready_queue_capacity"]["value"] = hbg_queue;
        platform = (dir / "platform.json").string();
        std::ofstream(platform) << platform_json.dump();
      }
      ++attempts;
      ++s.attempts;
      std::optional<Outcome> o = rerun(trace, cfg, platform, dir / "run", cap);
      if (!o) {
        res.kind = SizingResult::Kind::Stopped;
        res.reason = "the re-run with " + field + " " + std::to_string(v) + " did not run to a result";
        return res;
      }
      const bool same = o->status != "ok" && o->name == name && (platform_field(field) || o->ring == ring);
      if (same) {
        tried = v;
        continue;
      }
      // Only a re-run that got as far as the failure tells anything.
      if (o->status != "ok" && o->submitted < req.submitted) {
        res.kind = SizingResult::Kind::Stopped;
        res.reason = "the re-run with " + field + " " + std::to_string(v) + " failed earlier, with " + o->name +
                     " after " + std::to_string(o->submitted) + " of the " + std::to_string(req.submitted) +
                     " tasks the run had submitted";
        return res;
      }
      got = o;
      break;
    }
    if (!got) {
      if (!steps.empty()) break;  // the steps found so far are the advice
      res.kind = tried == limit || v > limit ? SizingResult::Kind::Exhausted : SizingResult::Kind::Stopped;
      res.limit = tried;
      res.limit_why = "the largest " + field + " npusim tries";
      if (res.kind == SizingResult::Kind::Stopped)
        res.reason = "the search stopped after " + std::to_string(s.attempts) + " re-runs";
      return res;
    }
    s.to = v;
    s.outcome = got->status == "ok" || got->status == "max_tasks" ? got->status : got->name;
    if (got->status == "max_tasks") s.rerun_tasks = cap;
    s.option = queue ? "platform limits.hbg_ready_queue_capacity=" + std::to_string(v) +
                           " (a compile-time constant of the runtime, PTO2_READY_QUEUE_SIZE)"
                     : option_text(field, cfg);
    steps.push_back(s);
    const std::string next = chain && got->status == "error" ? field_of_failure(got->name) : std::string();
    if (next.empty() || next == field || attempts >= max_attempts) break;
    field = next;
    name = got->name;
    ring = got->ring < 0 ? 0 : got->ring;
  }
  if (steps.empty()) return res;
  res.kind = SizingResult::Kind::Found;
  res.suggestion = steps.front();
  res.suggestion.then.assign(steps.begin() + 1, steps.end());
  if (steps.size() > 1) {
    // Every size the steps changed, at its last value.
    std::vector<std::string> fields;
    for (const Suggestion& s : steps)
      if (std::find(fields.begin(), fields.end(), s.field) == fields.end()) fields.push_back(s.field);
    for (const std::string& f : fields)
      res.suggestion.together += (res.suggestion.together.empty() ? "" : " and ") +
                                 (f == "hbg_ready_queue_capacity"
                                      ? "platform limits.hbg_ready_queue_capacity=" + std::to_string(hbg_queue)
                                      : option_text(f, cfg));
  }
  return res;
}

}  // namespace npusim::diagnose
