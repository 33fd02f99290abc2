// "The sizes that would have been enough": after a capacity fatal, npusim
// re-runs the same program (in child processes of itself, with every output
// off) with the failing ring's resource doubled until the run gets past that
// failure, and reports the smallest power of two that did.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "models/common/platform.h"
#include "models/common/run_config.h"
#include "sim/engine/diagnosis.h"

namespace npusim::engine {

struct SizingRequest {
  std::string trace_path;     // a file (standard input cannot be re-read)
  std::string platform_path;
  RunConfig config;           // the failed run's effective configuration
};

struct Suggestion {
  std::string field;          // ring_task_window, ring_heap, ring_dep_pool or tensormap_pool
  int ring = -1;
  std::uint64_t from = 0, to = 0;
  std::string option;         // e.g. "ring_heap=[0,0,2097152,0]" / "--ring-heap 0,0,2097152,0"
  std::string outcome;        // "ok", or the name of the next failure
  int attempts = 0;
  nlohmann::json to_json() const;
  std::string describe() const;
};

// At most `max_attempts` re-runs. Returns nothing when no size up to the
// field's limit gets past the failure, or the failure is not a capacity one.
std::optional<Suggestion> search_sizes(const SizingRequest& req, const Failure& failure, int max_attempts = 24);

}  // namespace npusim::engine
