#include "models/aicpu/aicpu_clock.h"

#include <string>

namespace npusim {

AicpuClock::AicpuClock(sc_core::sc_module_name name) : sc_core::sc_module(name) {
  ModelPresent::ahead = 0;
  ModelPresent::hold = false;
  SC_THREAD(drive);
}

int AicpuClock::add(void (*body)(void*), void* arg, std::size_t stack_bytes) {
  const int id = static_cast<int>(slots_.size());
  slots_.push_back(Slot{this, id, body, arg, stack_bytes, false, nullptr, nullptr});
  // Padded to a multiple of kDueGroup with slots never due (next()).
  due_.resize((slots_.size() + kDueGroup - 1) / kDueGroup * kDueGroup, kNever);
  due_[static_cast<std::size_t>(id)] = 0;
  return id;
}

// The threads are registered and the horizon is known (Chip::attach comes
// before the simulation starts): alone, each thread gets its fiber; beside
// other chips, its SC_THREAD, started by its go event (no initialisation
// run; spawned in this callback, SystemC counts it a dynamic process).
void AicpuClock::end_of_elaboration() {
  fibers_ = horizon_ != nullptr;
  for (Slot& s : slots_) {
    if (fibers_) {
      s.fiber = std::make_unique<Fiber>(s.stack_bytes, &AicpuClock::fiber_main, &s);
      continue;
    }
    s.go = std::make_unique<sc_core::sc_event>();
    sc_core::sc_spawn_options o;
    o.dont_initialize();
    o.set_sensitivity(s.go.get());
    o.set_stack_size(static_cast<int>(s.stack_bytes));
    const int id = s.id;
    sc_core::sc_spawn([this, id] { thread_main(id); }, ("thread" + std::to_string(id)).c_str(), &o);
  }
}

// The due times sit in an array of their own, padded with never-due
// entries to whole groups of four, and scanned a group at a time without a
// branch per slot: each group's first is found as a tree (two pairs, then
// the pair's winners), so its compares do not wait on one another, and the
// groups are then compared in order (a hand-over asks this several times per
// simulated task). Ties go to the lower index at every compare (a strict
// `<` with the lower index on the left). Inline in choose(), and choose() in
// sleep(): a hand-over is one function.
__attribute__((always_inline)) inline int AicpuClock::next() const {
  int best = -1;
  Time first = kNever;  // a slot due at kNever is not due
  const Time* d = due_.data();
  const int n = static_cast<int>(due_.size());
  for (int g = 0; g < n; g += kDueGroup) {
    Time a = d[g], c = d[g + 2];
    int ia = g, ic = g + 2;
    ia = d[g + 1] < a ? g + 1 : ia;
    a = d[g + 1] < a ? d[g + 1] : a;
    ic = d[g + 3] < c ? g + 3 : ic;
    c = d[g + 3] < c ? d[g + 3] : c;
    ia = c < a ? ic : ia;
    a = c < a ? c : a;
    best = a < first ? ia : best;
    first = a < first ? a : first;
  }
  return best;
}

// Who runs next: the thread first in (due, index). When it is due later than
// the clock's present, the clock runs ahead to its due time without the
// kernel if no other SystemC process can act before it (below the horizon);
// otherwise the kernel must first reach that time (-1).
//
// Why running ahead is exact: the kernel's other process (the AICore
// complex's SC_METHOD) has nothing due before the horizon, so a kernel wait
// up to the thread's due time would have run nothing but the thread. What a
// thread does while ahead reaches the complex as events at or after the
// clock's present (model_present()), which the kernel then reaches by a
// timed notification where it had a delta one; at one time stamp SystemC
// runs the methods made runnable before the threads, so the complex still
// acts before an AICPU thread due at the same time, as it did.
__attribute__((always_inline)) inline int AicpuClock::choose() {
  const int i = next();
  // Alone, the kernel's time moves only while the host waits on it, and the
  // host catches the clock up when it returns (drive): no kernel read here.
  if (!fibers_) catch_up();
  if (i < 0) return -1;
  Slot& s = slots_[static_cast<std::size_t>(i)];
  Time& due = due_[static_cast<std::size_t>(i)];
  if (due > now_) {
    if (!may_run_ahead(due)) return -1;
    now_ = due;
    ModelPresent::ahead = now_;
    ++ran_ahead_;
  }
  due = kNever;
  wakeable_ -= s.wakeable;  // no branch: whether the chosen thread waited for a wake-up varies
  s.wakeable = false;
  running_ = i;
  return i;
}

// No thread can run now (choose() gave -1): the kernel goes on until the
// first thread's due time or a kick, whichever comes first (a plain timed
// wait when no slot waits for a wake-up: no kick can come). With no thread
// due, the kernel is first brought up to the clock's present (nothing else
// can act before it), then waits for a kick.
void AicpuClock::wait_on_kernel() {
  const int i = next();
  const Time kernel = sc_core::sc_time_stamp().value();
  if (i < 0) {
    if (now_ > kernel)
      sc_core::wait(sc_core::sc_time::from_value(now_ - kernel));
    else
      sc_core::wait(kick_);
    return;
  }
  const Time due = due_[static_cast<std::size_t>(i)];
  if (wakeable_ > 0)
    sc_core::wait(sc_core::sc_time::from_value(due - kernel), kick_);
  else
    sc_core::wait(sc_core::sc_time::from_value(due - kernel));
}

// Beside other chips: the thread that stops running (`self`: it sleeps, or
// its function returned; -1: the start) waits on the kernel itself until a
// thread can run, then starts that thread with an immediate notification of
// its go event (a coroutine switch, no kernel round), or, being it, goes on.
void AicpuClock::pass(int self) {
  int i;
  while ((i = choose()) < 0) wait_on_kernel();
  if (i != self) slots_[static_cast<std::size_t>(i)].go->notify();
}

// The clock's SC_THREAD. Beside other chips: the start (all threads are due
// at time 0; the first is started from here). Alone: the host, which starts
// the thread that runs next and waits on the kernel when none can; a thread
// that stops switches to the next one itself, and back here only when the
// kernel must advance (or when its body threw: rethrown in this SC_THREAD,
// as a thread's own SC_THREAD would have).
void AicpuClock::drive() {
  if (!fibers_) {
    pass(-1);
    return;
  }
  for (;;) {
    catch_up();
    const int i = choose();
    if (i < 0) {
      wait_on_kernel();
      continue;
    }
    host_.switch_to(context(i));
    if (failed_) std::rethrow_exception(failed_);
  }
}

void AicpuClock::fiber_main(void* slot) {
  Slot& s = *static_cast<Slot*>(slot);
  AicpuClock& c = *s.clock;
  try {
    s.body(s.arg);
  } catch (...) {
    c.failed_ = std::current_exception();
  }
  c.exit(s.id);
}

void AicpuClock::thread_main(int id) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  s.body(s.arg);
  exit(id);
}

void AicpuClock::sleep(int id, Time t, bool wakeable) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  due_[static_cast<std::size_t>(id)] = t;
  s.wakeable = wakeable;
  wakeable_ += wakeable;
  running_ = -1;
  ++handovers_;
  if (!fibers_) {
    pass(id);
    if (running_ != id) sc_core::wait(*s.go);
    return;
  }
  const int i = choose();
  if (i == id) return;
  s.fiber->switch_to(context(i));
}

void AicpuClock::exit(int id) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  due_[static_cast<std::size_t>(id)] = kNever;
  if (s.wakeable) --wakeable_;
  s.wakeable = false;
  running_ = -1;
  if (!fibers_) {
    pass(id);
    return;
  }
  s.fiber->switch_to(context(failed_ ? -1 : choose()), true);
}

void AicpuClock::wake_waiting(int id) {
  Slot& s = slots_[static_cast<std::size_t>(id)];
  due_[static_cast<std::size_t>(id)] = now();  // the running thread's time, or (from an SC_METHOD) the kernel's
  s.wakeable = false;
  --wakeable_;
  if (running_ < 0) kick_.notify();  // from outside the AICPU threads: the kernel waits for it in wait_on_kernel()
}

bool AicpuClock::others_pending(int self) const {
  for (int i = 0; i < static_cast<int>(due_.size()); ++i)
    if (i != self && due_[static_cast<std::size_t>(i)] != kNever) return true;
  return sc_core::sc_pending_activity();
}

}  // namespace npusim
