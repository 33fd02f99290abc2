#include "models/aicpu/aicpu_clock.h"

namespace npusim {

AicpuClock::AicpuClock(sc_core::sc_module_name name) : sc_core::sc_module(name) { SC_THREAD(drive); }

int AicpuClock::add(sc_core::sc_event& go) {
  slots_.push_back(Slot{&go, 0, false});
  return static_cast<int>(slots_.size()) - 1;
}

int AicpuClock::next() const {
  int best = -1;
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
    const Slot& s = slots_[static_cast<std::size_t>(i)];
    if (s.due == kNever) continue;
    if (best < 0) {
      best = i;
      continue;
    }
    if (s.due < slots_[static_cast<std::size_t>(best)].due) best = i;  // ties: the lower index
  }
  return best;
}

// The one process of the AICPU threads that waits on simulated time: it runs
// the thread first in (due, index) once the kernel's time reaches its due time,
// and waits for that thread to hand control back (sleep or exit) before it
// picks the next one. A kick (a wake-up from outside the AICPU threads) makes
// it look again.
void AicpuClock::drive() {
  for (;;) {
    const int i = next();
    if (i < 0) {
      sc_core::wait(kick_);
      continue;
    }
    Slot& s = slots_[static_cast<std::size_t>(i)];
    const Time now = sc_core::sc_time_stamp().value();
    if (s.due > now) {
      sc_core::wait(sc_core::sc_time::from_value(s.due - now), kick_);
      continue;
    }
    s.due = kNever;
    s.wakeable = false;
    running_ = i;
    s.go->notify();
    sc_core::wait(yield_);
  }
}

void AicpuClock::sleep(int id, Time t, bool wakeable) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  s.due = t;
  s.wakeable = wakeable;
  running_ = -1;
  ++handovers_;
  yield_.notify();
  sc_core::wait(*s.go);
}

void AicpuClock::exit(int id) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  s.due = kNever;
  s.wakeable = false;
  running_ = -1;
  yield_.notify();
}

void AicpuClock::wake(int id) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  if (!s.wakeable) return;
  s.due = sc_core::sc_time_stamp().value();
  s.wakeable = false;
  if (running_ < 0) kick_.notify();  // from outside the AICPU threads: the driver sleeps in the kernel
}

bool AicpuClock::others_pending(int self) const {
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i)
    if (i != self && slots_[static_cast<std::size_t>(i)].due != kNever) return true;
  return sc_core::sc_pending_activity();
}

}  // namespace npusim
