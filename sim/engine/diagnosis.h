// What went wrong in a failed run, said twice: first as the device would say
// it (the runtime's host log lines and codes), then as only a simulator can
// (what is waiting on what, why it can never proceed, and what would have
// been enough).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/chip/chip.h"

namespace npusim::engine {

struct Failure {
  std::string name;          // e.g. HEAP_RING_DEADLOCK, SCHEDULER_TIMEOUT
  int orch_error_code = 0;
  int sched_error_code = 0;
  int host_code = 0;         // what the host sees (507018, 207001, ...)
  std::string message;       // the device's FATAL line
  std::string hint;          // the runtime's hint for the code
  std::string sub_class;     // SCHEDULER_TIMEOUT only: S1..S5
  std::string detector;      // which of the device's detectors fired
  Time stall_time = 0;       // simulated time the run stopped making progress
  Time device_time = 0;      // when the device reports it
  int ring = -1;             // the ring whose capacity failed, if any
  std::string size_field;    // the RunConfig field that sizes it (ring_heap, ...), if any
  std::vector<std::string> device_lines;     // host log lines, as the runtime prints them
  std::vector<std::string> diagnosis_lines;  // npusim's explanation
  nlohmann::json diagnosis = nlohmann::json::object();

  nlohmann::json to_json() const;
};

// The failure of a run that ended with a latched error or without finishing.
// `chip` is inspected after sc_start returned.
Failure diagnose(Chip& chip);

// The runtime's static arena: task slots, heaps, dep and fanin-spill pools of
// all four rings. A run whose arena exceeds the device's memory fails in
// rtMalloc before the first task (207001).
std::uint64_t arena_bytes(const Platform& p, const RunConfig& c);
Failure arena_failure(const Platform& p, const RunConfig& c);

}  // namespace npusim::engine
