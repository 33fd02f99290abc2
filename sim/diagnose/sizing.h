// "The sizes that would have been enough": after a capacity fatal, npusim
// re-runs the same program (in child processes of itself, with every output
// off) with the failing ring's resource doubled until the run gets past that
// failure, and reports the smallest power of two that did.
//
// The re-runs read the trace the failed run read (a copy of its text, so a
// trace on standard input or a FIFO is re-run too, and a file changed since
// does not matter). A scene is re-run from its own file (its orchestration
// source and library resolve against the scene's folder, so a copy elsewhere
// would not find them); a scene that is not a regular file (a FIFO) gets no
// advice. A re-run counts only if it reached the point of the
// failure: it completed, or it failed otherwise after submitting at least as
// many tasks. A re-run that failed earlier (a size whose arena no longer fits
// the device), or could not run, ends the search without advice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/platform.h"
#include "models/common/run_config.h"
#include "sim/diagnose/diagnosis.h"

namespace npusim::diagnose {

struct SizingRequest {
  const std::string* trace_text = nullptr;  // the trace as the failed run read it
  std::string scene_file;                   // a scene: the file the re-runs run (trace_text is not used)
  const Platform* platform = nullptr;
  RunConfig config;                         // the failed run's effective configuration
  std::uint64_t submitted = 0;              // tasks the failed run submitted
  std::uint64_t max_tasks = 0;              // the run's --max-tasks (0: none); see kRerunTasks
  std::string work_dir;                     // a folder of its own (removed afterwards)
};

struct Suggestion {
  std::string field;          // ring_task_window, ring_heap, ring_dep_pool, tensormap_pool or hbg_ready_queue_capacity
  int ring = -1;
  std::uint64_t from = 0, to = 0;
  std::string option;         // e.g. "ring_heap=[0,0,2097152,0]" / "--ring-heap 0,0,2097152,0"
  std::string outcome;        // "ok", the name of the next failure, or "max_tasks" (the re-run reached its task cap)
  std::uint64_t rerun_tasks = 0;  // "max_tasks": the re-run's cap
  int attempts = 0;
  // host_build_graph: the sizes a re-run needed next, each with the ones
  // before it applied (the re-run got past this failure and stopped at
  // another capacity failure).
  std::vector<Suggestion> then;
  std::string together;  // with `then`: every size changed, at its last value
  nlohmann::json to_json() const;
  std::string describe() const;
};

// A re-run is capped (--max-tasks) at the run's own --max-tasks, or else at
// kRerunTasks tasks beyond those the failed run submitted: a program that
// never ends (a loop of 2^32 submits that failed early) must not make the
// search run for ever. A re-run that reaches its cap got past the failure.
constexpr std::uint64_t kRerunTasks = 100000;

struct SizingResult {
  enum class Kind {
    NotCapacity,  // not a capacity failure: nothing to search
    Found,        // `suggestion` gets past the failure
    Exhausted,    // every size up to `limit` failed the same way: the program must change
    Stopped,      // the search could not tell (`reason`): no advice
  };
  Kind kind = Kind::NotCapacity;
  Suggestion suggestion;
  std::uint64_t limit = 0;    // Exhausted: the largest size tried
  std::string limit_why;      // Exhausted: why no larger size was tried
  std::string reason;         // Stopped
};

// At most `max_attempts` re-runs.
SizingResult search_sizes(const SizingRequest& req, const Failure& failure, int max_attempts = 24);

}  // namespace npusim::diagnose
