// What went wrong in a failed run, said twice: first as the device would say
// it (the runtime's host log lines and codes), then as only a simulator can
// (what is waiting on what, and why it can never proceed).
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
  std::string sub_class;     // SCHEDULER_TIMEOUT only: S1..S5
  Time stall_time = 0;       // simulated time the run stopped making progress
  Time device_time = 0;      // when the device would report it
  std::vector<std::string> device_lines;     // host log lines, as the runtime prints them
  std::vector<std::string> diagnosis_lines;  // npusim's explanation
  nlohmann::json diagnosis = nlohmann::json::object();

  nlohmann::json to_json() const;
};

// Builds the failure of a run that ended with a latched error or without
// finishing. `chip` is inspected after sc_start returned.
Failure diagnose(Chip& chip);

}  // namespace npusim::engine
