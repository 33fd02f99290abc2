// `npusim record SCENE -o TRACE` (docs/scenes.md): the trace equivalent of a
// scene run. A Recorder stands between the program's op source and the
// orchestrator and writes down every operation the orchestrator consumed,
// with the values it was given back, as a flat trace: running that trace
// performs the same runtime operations, so it gives the same schedule.
#pragma once

#include <memory>
#include <string>

#include "models/common/run_config.h"
#include "models/runtime/data_store.h"
#include "models/runtime/orch_ops.h"
#include "sim/trace/trace.h"

namespace npusim::scene {

class Recorder;

// Wraps `inner` (the op source of the run of `program`); the returned source
// records into `rec`, which must outlive it.
std::unique_ptr<OpSource> recording(std::unique_ptr<OpSource> inner, Recorder& rec);

class Recorder {
 public:
  Recorder(const trace::Trace& program, const DataStore& data, const RunOptions& run);
  ~Recorder();
  // The trace, once the run has ended (open scopes are closed where the run stopped).
  std::string trace_json() const;

 private:
  friend class RecordingSource;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace npusim::scene
