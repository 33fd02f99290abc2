// Output writers: sinks that observe a run (SimObserver) and stream the
// runtime's own trace files to disk (docs/spec/cli-and-outputs.md; their
// schemas in simpler docs/dfx/). A writer that is off is not attached, so it costs nothing.
//
// Streaming: a writer appends rows to scratch files in `staging_dir` as events
// arrive and assembles its final file(s) in `finish`, so memory does not grow
// with the number of tasks. The engine moves the staged files into the output
// directory only when the run produced a result (ok, or a device failure);
// on an input error it deletes them.
//
// Event contract: on_retired(task) is called exactly once per task that was
// submitted, when its slot is reclaimed or, for tasks still live when the run
// ends, by the engine before finish(); at that point the task's fanin,
// all_consumers and blocks are final.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/common/kernel.h"
#include "models/common/platform.h"
#include "models/common/run_config.h"
#include "models/runtime/observer.h"
#include "sim/record/provenance.h"

namespace npusim::record {

struct RunInfo {
  const Platform* platform = nullptr;
  const RunConfig* config = nullptr;
  std::string trace_name;
  std::string trace_file_name;   // trace_name as a safe file-name component (engine::file_component)
  std::vector<const KernelDef*> kernels;
  int sched_threads = 0;
  int orchestrator_thread = -1;  // AICPU thread index of the orchestrator (-1: none, HBG)
  Provenance provenance;         // the npusim version and the trace's and platform's digests
};

// A core whose block never ends: it waits at a barrier, a flag, a cross-core
// slot or its doorbell when the device stops. `what` names the wait as the
// swimlane shows it: "syncall (HARD) 16/48 arrived", "doorbell", ...
struct StuckWait {
  int core = -1;
  TaskId task = kNoTask;
  int block = 0;
  Time since = 0;
  std::string kind;  // the wait's kind, as on_core_wait names it (wait_kind_name), or "flag"
  std::string what;
};

// A failed run (docs/failures.md, "When it stopped"): progress stopped at
// `time` (summary.json's error.stall_time_ns) and the device reported the
// fatal `name` (e.g. TENSOR_WAIT_TIMEOUT) at `device_time` (>= time), its
// detector counting from `detector_since`; in between the device only waited.
struct DeviceStop {
  Time time = 0;
  Time device_time = 0;
  Time detector_since = 0;
  std::string name, message, detector;
  std::vector<StuckWait> waits;
};

class OutputWriter : public SimObserver {
 public:
  // `staging_dir` exists and is empty of this writer's files. `gzip_level`
  // 1..9: the writer's files are gzip streams named NAME.gz (0: plain).
  explicit OutputWriter(std::string staging_dir, int gzip_level = 0)
      : dir_(std::move(staging_dir)), gzip_level_(gzip_level) {}
  virtual ~OutputWriter() = default;
  // Called once after the run; writes the final file(s) into staging_dir.
  virtual void finish(const RunInfo& info) = 0;
  // A failed run, told before the tasks still live are retired and finish.
  virtual void on_device_stop(const DeviceStop&) {}
  // Relative paths of the final files (e.g. "deps.json", "scope_stats/scope_stats.jsonl").
  virtual std::vector<std::string> files() const = 0;
  // The writers read no edge records (deps.json's writer finds its edges
  // itself) unless one says so (the Perfetto writer).
  bool reads_edges() const override { return false; }

 protected:
  const std::string& dir() const { return dir_; }
  int gzip_level() const { return gzip_level_; }
  // A final file's name relative to dir(): `name`, or `name.gz` when compressed.
  std::string output_name(const std::string& name) const { return gzip_level_ ? name + ".gz" : name; }

 private:
  std::string dir_;
  int gzip_level_ = 0;
};

// Factories (each in its own .cpp). `level` is the chip-swimlane level 1..4;
// `gzip_level` 1..9 compresses the writer's files (NAME.gz), 0 does not.
// name_map is small and always plain.
std::unique_ptr<OutputWriter> make_chip_swimlane_writer(const std::string& staging_dir, int level, int gzip_level = 0);
// At level >= 3 the Perfetto writer draws the overhead counters from `overhead`,
// the records the summary's figures already collect (FiguresCollector::overhead());
// without one (a writer on its own, as in its tests) it collects its own.
class OverheadCollector;
std::unique_ptr<OutputWriter> make_perfetto_writer(const std::string& staging_dir, int level, int gzip_level = 0,
                                                   const OverheadCollector* overhead = nullptr);
std::unique_ptr<OutputWriter> make_deps_writer(const std::string& staging_dir, int gzip_level = 0);
std::unique_ptr<OutputWriter> make_scope_stats_writer(const std::string& staging_dir, int gzip_level = 0);
std::unique_ptr<OutputWriter> make_name_map_writer(const std::string& staging_dir);
std::unique_ptr<OutputWriter> make_task_stats_writer(const std::string& staging_dir, int gzip_level = 0);

}  // namespace npusim::record
