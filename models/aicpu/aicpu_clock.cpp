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

// Control passes from thread to thread without a process in between: the
// thread that stops running (`self`: it sleeps, or its function returned; -1:
// the start) finds the thread first in (due, index) and, when that one is due
// later than the kernel's time, waits on the kernel itself until then or
// until a kick (a wake-up from outside the AICPU threads), whichever comes
// first. Then it starts that thread (`running_`), or, being it, just goes on.
// Which process does the kernel wait changes nothing of the order: the due
// times and the kicks decide, as when one driver process did all the waits.
void AicpuClock::pass(int self) {
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
    if (i != self) s.go->notify();
    return;
  }
}

// The start: the first thread (all are due at time 0) is started from here.
void AicpuClock::drive() { pass(-1); }

void AicpuClock::sleep(int id, Time t, bool wakeable) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  s.due = t;
  s.wakeable = wakeable;
  running_ = -1;
  ++handovers_;
  pass(id);
  if (running_ != id) sc_core::wait(*s.go);
}

void AicpuClock::exit(int id) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  s.due = kNever;
  s.wakeable = false;
  running_ = -1;
  pass(id);
}

void AicpuClock::wake(int id) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  if (!s.wakeable) return;
  s.due = sc_core::sc_time_stamp().value();
  s.wakeable = false;
  if (running_ < 0) kick_.notify();  // from outside the AICPU threads: a thread waits on the kernel in pass()
}

bool AicpuClock::others_pending(int self) const {
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i)
    if (i != self && slots_[static_cast<std::size_t>(i)].due != kNever) return true;
  return sc_core::sc_pending_activity();
}

}  // namespace npusim
