// `npusim barrier-cost`: what a SOFT (GM-polling) barrier costs against a
// HARD (FFTS) one, for a range of participant counts and core types, measured
// by simulating a kernel that is nothing but the barrier (each point is an
// `npusim run` in a child process) on the chosen platform.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace npusim::study {

struct BarrierCostRequest {
  std::string platform = "a2a3";
  std::vector<std::string> core_types = {"aiv", "aic", "mix"};
  std::vector<int> participants;  // empty: a default range per core type
  std::string csv, svg, html;     // extra outputs ("" = none)
};

// Returns an exit status (0). The core types are checked by the caller; a bad
// platform is an InputError.
int barrier_cost(const BarrierCostRequest& req, std::ostream& out);

}  // namespace npusim::study
