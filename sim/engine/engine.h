// The engine behind `npusim run` and `npusim check`: loads the platform and
// the trace, resolves the run configuration, builds the chip, runs the
// simulation to its end (a completed program, a device failure, or a hang
// that is diagnosed rather than waited for), and writes the outputs.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "models/common/run_config.h"
#include "models/common/time.h"

namespace npusim::engine {

struct RunRequest {
  std::string trace_path;           // "-" = standard input
  std::string platform = "a2a3";    // name or path
  std::string out_dir;              // "" = npusim_out/<trace name>
  RunOptions cli;                   // command-line run options (override the trace's)
  int swimlane_level = 3;           // 0 = no swimlane files
  bool scope_stats = true;
  bool deps = true;
  bool task_stats = true;           // task_stats.csv
  bool quiet = false;               // no human summary on stdout
  bool host_stats = true;           // wall-clock figures in summary.json's `sim`
  bool suggest = true;              // after a capacity fatal, search the sizes that would have been enough
  bool strict_coherency = false;    // a coherency report fails the run (COHERENCY_HAZARD, exit 1)
  bool strict = false;              // a finding check calls an error (checks.h) refuses the run: exit 2, nothing written
  bool outputs = true;              // write the output files (npusim record writes only its trace)
  std::string record_path;          // npusim record: the trace of the operations the run performed
  std::uint64_t max_tasks = 0;      // stop (exit 2, nothing written) past this many submitted tasks; 0 = no cap
  std::uint64_t max_output = 0;     // stop (exit 2, nothing written) past this many bytes written; 0 = no cap
  bool progress = false;            // a progress line on standard error (main: when it is a terminal)
  int gzip_level = 0;               // 1..9: the large outputs as NAME.gz (--compress gzip); 0 = plain
  bool throw_input_errors = false;  // run and check rethrow an InputError (after cleaning up) instead of
                                    // reporting it on `err` (the Python module: python/, docs/python.md)
};

// Exit statuses (cli-and-outputs.md).
constexpr int kExitOk = 0;
constexpr int kExitDeviceFailure = 1;
constexpr int kExitInputError = 2;
// npusim's own: an internal error (an exception escaping the model) is a bug
// in npusim, never reported as a device failure (docs/failures.md).
constexpr int kExitInternalError = 4;

// Runs one simulation. Must be the only simulation of the process (SystemC
// cannot be restarted) unless the caller swaps the simulation context.
// Input errors are reported on `err` with file, JSON path and expectation.
int run(const RunRequest& req, std::ostream& out, std::ostream& err);

// Several chips of one L3 dispatch in one simulation (docs/workers.md,
// "Several chips"): chip r runs traces[r] with run's options; its outputs,
// those of `npusim run`, go to run.out_dir/chip_<r>/.
struct ChipsRequest {
  RunRequest run;                   // out_dir, platform, options; trace_path unused
  std::vector<std::string> traces;  // one per chip, rank order
};

struct ChipOutcome {
  bool ok = false;
  Time device_wall = 0;
  std::string error;  // the failure's name
};

inline std::string chip_folder(int rank) { return "chip_" + std::to_string(rank); }

// Runs the chips of `req` together; fills `chips` (rank order) and returns
// an exit status (1: a chip failed on the device; 2: invalid input, nothing
// written).
int run_chips(const ChipsRequest& req, std::vector<ChipOutcome>& chips, std::ostream& err);

// `npusim record`: a run of a scene (req.record_path set, outputs off) that
// writes the trace of the operations it performed. A trace is refused.
int record(const RunRequest& req, std::ostream& out, std::ostream& err);

// What `record` and `import` write must be a trace `run` accepts: `text`
// loaded as `run` loads a trace (the loader, its run block resolved against
// `platform`, the fixed rules), and its program evaluated (check's dry run).
// Throws InputError naming `origin` (the scene or capture the trace was made
// from) with the produced trace's JSON path and the loader's message.
void check_runnable(const std::string& text, const Platform& platform, const std::string& origin,
                    const std::string& made_by);

// `npusim check`: loads and validates the trace and evaluates the whole
// program without simulating time (every loop, view and expression), then
// applies the static checks. Returns an exit status.
int check(const RunRequest& req, std::ostream& out, std::ostream& err);

}  // namespace npusim::engine
