// The model's present (docs/architecture.md, "The AICPU clock: who runs on
// which clock"): the SystemC kernel's time, or, while the AICPU clock runs
// ahead of the kernel (temporal decoupling), the clock's. Code that may be
// called from an AICPU thread reads the time here, never sc_time_stamp()
// alone: a thread running ahead is later than the kernel.
#pragma once

#include <algorithm>

#include <systemc>

#include "models/common/time.h"

namespace npusim {

struct ModelPresent {
  // The latest time an AICPU clock ran ahead to (0: never; reset at each
  // clock's construction). Only a single-chip run's clock runs ahead.
  static inline Time ahead = 0;
  // Set when the simulation is being stopped (stop_simulation): from then on
  // the clock no longer runs ahead, so what still runs in the kernel's
  // current evaluation is what ran before decoupling.
  static inline bool hold = false;
};

inline Time model_present() { return std::max<Time>(sc_core::sc_time_stamp().value(), ModelPresent::ahead); }

// sc_stop(), and no running ahead after it.
inline void stop_simulation() {
  ModelPresent::hold = true;
  sc_core::sc_stop();
}

}  // namespace npusim
