// What went wrong in a failed run, said twice: first as the device would say
// it (the runtime's host log lines and codes), then as only a simulator can
// (what is waiting on what, why it can never proceed, and what would have
// been enough).
#pragma once

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip.h"
#include "sim/diagnose/diagnosis_texts.h"

namespace npusim::diagnose {

struct Failure {
  std::string name;          // e.g. HEAP_RING_DEADLOCK, SCHEDULER_TIMEOUT
  int orch_error_code = 0;
  int sched_error_code = 0;
  int host_code = 0;         // what the host sees (507018, 207001, ...)
  std::string message;       // the device's FATAL line
  std::string hint;          // the runtime's hint for the code
  std::string sub_class;     // SCHEDULER_TIMEOUT only: S1..S5
  std::string detector;      // which of the device's detectors fired
  // The run's times (docs/failures.md, "When it stopped"): progress stopped
  // <= device_time, and >= every completion, dispatch and kernel start of the
  // run; the detector counts from detector_since (<= stall_time).
  Time stall_time = 0;       // when the device last did work (progress stopped)
  Time detector_since = 0;   // the detector's clock start: the latching thread's last progress, the wait's start
  Time device_time = 0;      // when the device reports it
  int ring = -1;             // the ring whose capacity failed, if any
  std::string size_field;    // the RunConfig field that sizes it (ring_heap, ...), if any
  std::vector<std::string> host_log;         // the host's log lines, as the runtime prints them
  std::vector<std::string> device_log;       // the AICPU's log lines of the detector, as it prints them
  std::vector<std::string> diagnosis_lines;  // npusim's explanation
  nlohmann::json diagnosis = nlohmann::json::object();

  nlohmann::json to_json() const;
};

// Keeps the device's log lines of a latched error as the detector prints
// them: from the chip's state at the moment of the latch, which later
// activity (a scheduler finishing its iteration) does not change. Attach it
// to the run's observers and point it at the chip before sc_start.
class FailureWitness : public SimObserver {
 public:
  void watch(Chip& chip) { chip_ = &chip; }
  void on_error(const LatchedError& e) override;
  // The AICPU's last work (a scheduler phase that processed a task, an
  // orchestrator submit): part of when progress stopped.
  void on_sched_phase(const SchedPhaseRecord& x) override {
    if (x.tasks_processed > 0) last_work_ = std::max(last_work_, x.end);
  }
  void on_orch_submit(const OrchSubmitRecord& x) override { last_work_ = std::max(last_work_, x.end); }
  // The latest end of a scheduler's records that processed something, kept
  // by the thread itself (SchedulerThread::sum_phases).
  void note_last_work(Time t) { last_work_ = std::max(last_work_, t); }
  // The hooks it reads, the three above (the fan-out calls it for these only).
  static constexpr std::uint32_t kHooks = hook::Error | hook::SchedPhase | hook::OrchSubmit;
  std::uint32_t hooks() const override { return kHooks; }
  bool reads_edges() const override { return false; }
  Time last_work() const { return last_work_; }
  bool seen() const { return seen_; }
  const std::vector<std::string>& device_log() const { return device_log_; }
  const StallSnapshot& stall() const { return stall_; }

 private:
  Chip* chip_ = nullptr;
  bool seen_ = false;
  Time last_work_ = 0;
  std::vector<std::string> device_log_;
  StallSnapshot stall_;
};

// The failure of a run that ended with a latched error or without finishing.
// `chip` is inspected after sc_start returned; `witness` (if it saw the
// latch) supplies the device's lines as they were at that moment.
Failure diagnose(Chip& chip, const FailureWitness* witness = nullptr);

// Standard error's report: the host's lines, the device log's, then npusim's
// diagnosis under its own heading.
void print_failure(const Failure& f, std::ostream& err);

// The runtime's static arena: task slots, heaps, dep and fanin-spill pools of
// all four rings. A run whose arena exceeds the device's memory fails in
// rtMalloc before the first task (207001).
std::uint64_t arena_bytes(const Platform& p, const RunConfig& c);
Failure arena_failure(const Platform& p, const RunConfig& c);

}  // namespace npusim::diagnose
