#include "models/aicpu/aicpu_clock.h"

namespace npusim {

AicpuClock::AicpuClock(sc_core::sc_module_name name) : sc_core::sc_module(name) {
  ModelPresent::ahead = 0;
  ModelPresent::hold = false;
  SC_THREAD(drive);
}

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
// the start) finds the thread first in (due, index). When that one is due
// later than the clock's present, the clock either runs ahead to its due time
// without the kernel (no other SystemC process can act before it: below the
// horizon) or the thread that stops waits on the kernel itself until then or
// until a kick (a wake-up from outside the AICPU threads), whichever comes
// first (a plain timed wait when no slot waits for a wake-up: no kick can
// come). Then it starts that thread (`running_`), or, being it, just goes on.
// With no thread due, the kernel is first brought up to the clock's present
// (nothing else can act before it), then waits for a kick.
//
// Why running ahead is exact: the kernel's other process (the AICore
// complex's SC_METHOD) has nothing due before the horizon, so a kernel wait
// up to the thread's due time would have run nothing but the thread. What a
// thread does while ahead reaches the complex as events at or after the
// clock's present (model_present()), which the kernel then reaches by a
// timed notification where it had a delta one; at one time stamp SystemC
// runs the methods made runnable before the threads, so the complex still
// acts before an AICPU thread due at the same time, as it did.
void AicpuClock::pass(int self) {
  for (;;) {
    const int i = next();
    const Time kernel = sc_core::sc_time_stamp().value();
    if (now_ < kernel) now_ = kernel;
    if (i < 0) {
      if (now_ > kernel)
        sc_core::wait(sc_core::sc_time::from_value(now_ - kernel));
      else
        sc_core::wait(kick_);
      continue;
    }
    Slot& s = slots_[static_cast<std::size_t>(i)];
    if (s.due > now_) {
      if (may_run_ahead(s.due)) {
        now_ = s.due;
        ModelPresent::ahead = now_;
        ++ran_ahead_;
      } else {
        if (wakeable_ > 0)
          sc_core::wait(sc_core::sc_time::from_value(s.due - kernel), kick_);
        else
          sc_core::wait(sc_core::sc_time::from_value(s.due - kernel));
        continue;
      }
    }
    s.due = kNever;
    if (s.wakeable) --wakeable_;
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
  if (wakeable) ++wakeable_;
  running_ = -1;
  ++handovers_;
  pass(id);
  if (running_ != id) sc_core::wait(*s.go);
}

void AicpuClock::exit(int id) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  s.due = kNever;
  if (s.wakeable) --wakeable_;
  s.wakeable = false;
  running_ = -1;
  pass(id);
}

void AicpuClock::wake(int id) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  if (!s.wakeable) return;
  s.due = now();  // the running thread's time, or (from an SC_METHOD) the kernel's
  s.wakeable = false;
  --wakeable_;
  if (running_ < 0) kick_.notify();  // from outside the AICPU threads: a thread waits on the kernel in pass()
}

bool AicpuClock::others_pending(int self) const {
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i)
    if (i != self && slots_[static_cast<std::size_t>(i)].due != kNever) return true;
  return sc_core::sc_pending_activity();
}

}  // namespace npusim
