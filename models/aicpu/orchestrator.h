// The AICPU orchestrator thread (the last AICPU thread; simpler's
// tensormap_and_ringbuffer pto_orchestrator.cpp): runs the orchestration
// program op by op, charging each API call's cost, and stalls on ring
// back-pressure the way the runtime does: spinning, retrying as reclaim frees
// space, running the structural deadlock test every 1024 spins and the
// no-progress backstop.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include <systemc>

#include "models/aicpu/aicpu_clock.h"
#include "models/common/platform.h"
#include "models/runtime/observer.h"
#include "models/runtime/orch_ops.h"
#include "models/runtime/runtime.h"

namespace npusim {

// Why the orchestrator is waiting, for diagnosis of a hang.
struct OrchWait {
  enum class Kind : std::uint8_t { None, Space, Read } kind = Kind::None;
  Resource resource = Resource::None;
  int ring = 0;
  Time since = 0;
  std::string path;   // JSON pointer of the op
  TaskId task = kNoTask;  // Read: the producer waited for
  bool consumers = false;  // Read: waiting for that producer's consumers (set_tensor_data)
};

class OrchestratorThread : public sc_core::sc_module {
 public:
  OrchestratorThread(sc_core::sc_module_name name, AicpuClock& clock, Runtime& rt, OpSource& source,
                     SimObserver& obs, const Platform& platform, bool host_build_graph);

  // Called by the chip when a ring's watermark advances or a task completes:
  // wakes the thread if it is waiting for progress.
  void wake_progress() { clock_.wake(clock_id_); }
  // Called by this thread when orchestration ends or fails (the chip wakes
  // the schedulers).
  void set_on_finish(std::function<void()> f) { on_finish_ = std::move(f); }

  bool done() const { return done_; }
  Time start_time() const { return start_; }
  Time end_time() const { return end_; }
  const OrchWait& waiting() const { return wait_; }
  // An input error raised while evaluating the program (rethrown by the engine).
  std::exception_ptr input_error() const { return input_error_; }
  // JSON pointer of the op being executed (or last executed): the op's own
  // path, which the source writes only once the next op is complete.
  const std::string& op_path() const { return op_.path_text(); }
  OrchOp::Kind op_kind() const { return op_kind_; }  // of the op at op_path()
  // The submit in progress (what it needs, once prepared up to a stall).
  const SubmitProgress& pending_submit() const { return sp_; }

 private:
  static void body(void* self);  // the thread's function, run by the AICPU clock
  void orchestrate();
  void sync(Time t);
  void sleep_or_progress(Time t);
  Time now() const { return clock_.running_now(); }  // only this thread's own code asks
  // Returns false when a fatal error was latched. The op's path is op.path_text().
  bool do_submit(const OrchOp& op, Time& t);
  bool do_access(const OrchOp& op, Time& t);  // Read or Write
  // Runs one resumable step of a submit, spinning while it is blocked; false
  // on a fatal error. A template: the stage is called in place, without a
  // std::function made (and allocated) per submit.
  template <class Stage>
  bool run_stage(Stage&& stage, const std::string& path);
  // Spins until the blocked resource frees (retrying `retry`); false on a fatal error.
  bool wait_for_space(const std::function<SubmitStatus()>& retry, SubmitStatus st, const std::string& path);
  void fatal(ErrorCode code, const std::string& message, int ring = -1);
  std::string backstop_text() const;
  std::string access_timeout_text(bool write, bool consumers, TaskId producer) const;

  AicpuClock& clock_;
  int clock_id_;
  Runtime& rt_;
  OpSource& source_;
  SimObserver& obs_;
  const Platform& platform_;
  const OrchCosts costs_;  // zero for host_build_graph (no device orchestration)
  std::function<void()> on_finish_;
  SubmitProgress sp_;
  SubmitRequest alloc_req_;
  std::vector<Tensor> outputs_;
  std::vector<TaskId> read_producers_;
  OrchWait wait_;
  // The op being performed: a member, not a local of orchestrate(), because a run
  // stopped by a limit (--max-tasks, --max-output: sc_stop) leaves orchestrate()
  // suspended for good, and a suspended frame is never unwound (its heap
  // would leak; LeakSanitizer reports it).
  OrchOp op_;
  OrchOp::Kind op_kind_ = OrchOp::Kind::Submit;
  bool done_ = false;
  Time start_ = 0, end_ = 0;
  std::exception_ptr input_error_;
};

}  // namespace npusim
