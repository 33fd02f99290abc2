// `npusim import CAPTURE_DIR -o TRACE` (docs/scenes.md, "Importing a
// capture"): a device capture in the runtime's own schemas (deps.json of
// dep_gen, chip_swimlane_records.json, a name_map_*.json, and
// scope_stats/scope_stats.jsonl when the run wrote it) made into a trace
// whose tasks keep their recorded ring, arguments, dependencies, block
// counts and per-block kernel durations, so the replay can be run under
// other configurations.
#pragma once

#include <string>

namespace npusim::capture {

struct CaptureFiles {
  std::string deps;        // deps.json (required)
  std::string swimlane;    // chip_swimlane_records.json (required)
  std::string name_map;    // name_map_*.json ("" if none)
  std::string scope_stats; // scope_stats/scope_stats.jsonl ("" if none)
};

// The files of a capture directory; InputError when deps.json or the
// swimlane records are missing, or several name maps leave the choice open.
CaptureFiles capture_files(const std::string& dir);

// The trace text. `name` names the trace ("" = the name map's
// orchestrator_name, else "imported"). Malformed input is an InputError
// naming the file and the JSON path.
std::string import_capture(const std::string& deps_text, const std::string& swimlane_text,
                           const std::string& name_map_text, const std::string& scope_stats_text,
                           const CaptureFiles& names, const std::string& name = "");

// The whole command: the capture in `dir` to the trace file `out_path`
// (written whole or not at all).
void import_to_file(const std::string& dir, const std::string& out_path, const std::string& name = "");

}  // namespace npusim::capture
