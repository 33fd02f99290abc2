#include "sim/engine/sizing.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "sim/engine/subprocess.h"
#include "sim/platform/json_input.h"

namespace fs = std::filesystem;

namespace npusim::engine {

namespace {

std::string list(const RingValues& v) {
  std::string s;
  for (int r = 0; r < kNumRings; ++r) s += (r ? "," : "") + std::to_string(v[r]);
  return s;
}

// Runs npusim on the same program with `cfg` (and `platform`); returns the
// summary's status and error name/ring, or nullopt if the child failed to run.
struct Outcome {
  std::string status, name;
  int ring = -1;
};

std::optional<Outcome> rerun(const SizingRequest& req, const RunConfig& cfg, const std::string& platform,
                             const fs::path& dir) {
  fs::remove_all(dir);
  std::string args = "run " + shell_quote(req.trace_path) + " --platform " + shell_quote(platform) +
                     " --out " + shell_quote(dir.string()) +
                    " --quiet --no-suggest --no-host-stats --swimlane-level 0 --no-deps --no-scope-stats --no-task-stats" +
                    " --aicpu-thread-num " + std::to_string(cfg.aicpu_thread_num) + " --runtime " +
                    runtime_name(cfg.runtime) + " --seed " + std::to_string(cfg.seed) +
                    " --ring-task-window " + list(cfg.task_window) + " --ring-heap " + list(cfg.heap) +
                    " --ring-dep-pool " + list(cfg.dep_pool);
  const int rc = run_self(args);
  if (rc != 0 && rc != 1) return std::nullopt;
  std::ifstream in(dir / "summary.json");
  if (!in) return std::nullopt;
  nlohmann::json s = nlohmann::json::parse(in, nullptr, false);
  if (s.is_discarded()) return std::nullopt;
  Outcome o;
  o.status = s.value("status", "");
  if (s["error"].is_object()) {
    o.name = s["error"].value("name", "");
    o.ring = s["error"].value("ring", -1);
  }
  return o;
}

}  // namespace

nlohmann::json Suggestion::to_json() const {
  nlohmann::json j = {{"field", field}, {"from", from}, {"to", to}, {"option", option},
                      {"outcome", outcome}, {"attempts", attempts}};
  if (ring >= 0) j["ring"] = ring;
  return j;
}

std::string Suggestion::describe() const {
  std::string where = ring >= 0 ? " of ring " + std::to_string(ring) : std::string();
  std::string then = outcome == "ok" ? "the run then completes"
                                     : "the run then gets past this failure and stops at " + outcome;
  return field + where + ": " + std::to_string(from) + " -> " + std::to_string(to) + " would have been enough (" +
         option + "); " + then;
}

std::optional<Suggestion> search_sizes(const SizingRequest& req, const Failure& failure, int max_attempts) {
  if (failure.size_field.empty() || req.trace_path.empty() || req.trace_path == "-") return std::nullopt;
  const std::string& field = failure.size_field;
  const bool tensormap = field == "tensormap_pool";
  const int ring = failure.ring;
  if (!tensormap && (ring < 0 || ring >= kNumRings)) return std::nullopt;

  fs::path dir = fs::temp_directory_path() / ("npusim-sizing-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};

  RunConfig cfg = req.config;
  std::uint64_t* value = nullptr;
  std::uint64_t limit = 0;
  if (field == "ring_task_window") value = &cfg.task_window[ring], limit = 1ull << 30;
  else if (field == "ring_heap") value = &cfg.heap[ring], limit = 1ull << 40;
  else if (field == "ring_dep_pool") value = &cfg.dep_pool[ring], limit = 1ull << 30;
  else if (tensormap) value = &cfg.tensormap_pool, limit = 1ull << 30;
  else return std::nullopt;

  // The tensormap pool is a platform constant: re-run with a copy of the
  // platform file that changes only that value.
  nlohmann::json platform_json;
  if (tensormap) platform_json = json_input::read_file(req.platform_path);

  Suggestion s;
  s.field = field;
  s.ring = tensormap ? -1 : ring;
  s.from = *value;
  std::uint64_t v = 1;
  while (v <= *value) v <<= 1;  // the next power of two above the failing size
  for (; v <= limit && s.attempts < max_attempts; v <<= 1) {
    *value = v;
    std::string platform = req.platform_path;
    if (tensormap) {
      platform_json["limits"]["tensormap_pool"]["value"] = v;
      platform = (dir / "platform.json").string();
      std::ofstream(platform) << platform_json.dump();
    }
    ++s.attempts;
    std::optional<Outcome> o = rerun(req, cfg, platform, dir / "run");
    if (!o) return std::nullopt;
    if (o->status == "ok" || o->name != failure.name || (!tensormap && o->ring != ring)) {
      s.to = v;
      s.outcome = o->status == "ok" ? "ok" : o->name;
      if (tensormap) {
        s.option = "platform limits.tensormap_pool=" + std::to_string(v) +
                   " (a compile-time constant of the runtime, PTO2_TENSORMAP_POOL_SIZE)";
      } else {
        // The run's own sizes with the one ring changed.
        const RingValues& all = field == "ring_task_window" ? cfg.task_window
                                : field == "ring_heap"      ? cfg.heap
                                                            : cfg.dep_pool;
        std::string flag = "--" + field;
        for (char& c : flag)
          if (c == '_') c = '-';
        s.option = field + "=[" + list(all) + "] (" + flag + " " + list(all) + ")";
      }
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace npusim::engine
