// `npusim worker FILE --out DIR` (docs/workers.md): a worker prepared once,
// then its dispatches in order, each a trace or scene run with its own ring
// sizes; the worker's single-slot arena cache (models/runtime/arena_cache.h)
// decides which dispatches pay an arena build on the host.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/run_config.h"
#include "models/common/platform.h"

namespace npusim::study {

enum class WorkerKind { Chip, Distributed };  // L2 ChipWorker / run(); L3 DistributedWorker

struct WorkerDispatch {
  std::string program;     // the trace or scene, as a path usable from here
  std::string shown;       // as the worker file names it
  std::vector<std::string> per_chip;  // L3, "trace": [...]: chip r's program (program = per_chip[0])
  RunOptions config;       // the options that apply (on L3: ring_* only)
  int repeat = 1;
};

struct WorkerFile {
  std::string file;
  WorkerKind kind = WorkerKind::Chip;
  int chips = 1;
  std::optional<int> aicpu_thread_num;  // the worker's baseline
  std::optional<RunOptions> prepare;    // ring_* of the prepare config; nullopt = none
  std::vector<WorkerDispatch> dispatches;
  std::vector<std::string> warnings;    // fields ignored, with their JSON pointers
};

// Reads and validates a worker file (InputError naming the file, the JSON
// pointer and what was expected). Paths are relative to the file's folder.
WorkerFile parse_worker_file(const std::string& path);
// The same from a document already read; `path` names it in messages and its
// folder anchors relative program paths.
WorkerFile parse_worker_doc(const nlohmann::json& doc, const std::string& path);

// The worker against the platform: its aicpu_thread_num baseline and its chip
// count (InputError naming the file and the field).
void check_worker(const WorkerFile& w, const Platform& platform);

struct WorkerRequest {
  std::string file;
  std::string out_dir;             // "" = npusim_out/<worker file stem>
  std::string platform = "a2a3";
  bool quiet = false;
  // The dispatches' outputs, as `npusim run`'s options of the same names.
  int swimlane_level = 3;
  bool deps = true;
  bool scope_stats = true;
  bool task_stats = true;
  bool suggest = true;
};

// Runs the worker; returns an exit status (0; 1: a dispatch failed on the
// device, the dispatches after it not run; 2: invalid input, nothing written).
int run_worker(const WorkerRequest& req, std::ostream& out, std::ostream& err);

}  // namespace npusim::study
