// The AICPU threads' clock: the model-owned order of the orchestrator and
// scheduler threads (docs/architecture.md, "Time and events").
//
// Each AICPU thread is still an SC_THREAD (its control flow a sequential
// loop), but it never waits on simulated time or on a wake-up event for
// itself. It tells the clock when it wants to run next (a time, or a
// wake-up, or the earlier of the two) and the clock runs the threads one at a
// time in the order (time, sequence): the earliest due time first, and among
// threads due at the same time the one registered first (the sequence is the
// registration order: scheduler threads by index, host_build_graph's
// resolution thread, then the orchestrator; the same rule as the boot scan's
// "ties in thread order"). So which AICPU thread goes first among those due
// at the same time stamp does not depend on the kernel's timed-event heap.
//
// Control passes from the thread that stops to the next one directly, with
// an immediate event notification (a coroutine switch, no kernel round; none
// at all when the thread that stops is also the next to run). When the next
// thread is due later than the clock's present, the clock runs ahead to that
// time without the kernel if no other SystemC process can act before it (the
// horizon, below); otherwise the thread that stops waits on the kernel for
// that time, or for a kick: a wake-up from outside the AICPU threads (an
// AICore's timeline made known by an SC_METHOD).
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

#include "models/common/present.h"
#include "models/common/time.h"

namespace npusim {

class AicpuClock : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(AicpuClock);
  explicit AicpuClock(sc_core::sc_module_name name);

  // Registers a thread (its sequence: registration order; its first run is
  // due at time 0). `go` is the event the thread's SC_THREAD is statically
  // sensitive to (dont_initialize): the clock starts it with its first
  // notification.
  int add(sc_core::sc_event& go);

  // Called by thread `id` while it runs: suspends it until simulated time t
  // (> now), or until a wake-up (`wakeable`), or (t == kNever) only until a
  // wake-up.
  void sleep(int id, Time t, bool wakeable);
  // Called by thread `id` when its SC_THREAD function returns.
  void exit(int id);
  // Wakes thread `id` if it sleeps wakeable: it is due now (among the threads
  // due now, in sequence order), like an immediate notification: a wake-up of
  // a thread not waiting for one is lost. Any process may call it.
  void wake(int id);
  // Whether anything other than thread `self` can still happen: another
  // AICPU thread due at some time, or activity in the SystemC kernel.
  bool others_pending(int self) const;

  // The AICPU side's present: while a thread runs, its time on the clock
  // (at or after the kernel's: pass() keeps it so, without asking the kernel
  // here); otherwise (an SC_METHOD, or after the run) the later of the two.
  Time now() const {
    return running_ >= 0 ? now_ : std::max<Time>(sc_core::sc_time_stamp().value(), now_);
  }

  // Running ahead (temporal decoupling): `fn(arg)` gives the earliest time
  // at which any other SystemC process can act (the AICore complex's queue);
  // the clock starts a thread due before that time without waiting on the
  // kernel. Without a horizon (the default; several chips) it always waits.
  void set_horizon(Time (*fn)(const void*), const void* arg) {
    horizon_ = fn;
    horizon_arg_ = arg;
  }

  // Sleeps of the AICPU threads.
  std::uint64_t handovers() const { return handovers_; }
  // Of those, the hand-overs to a later time done without a kernel wait.
  std::uint64_t ran_ahead() const { return ran_ahead_; }

 private:
  struct Slot {
    sc_core::sc_event* go;
    Time due = 0;             // kNever: not due (running, waiting for a wake-up only, or done)
    bool wakeable = false;
  };
  void drive();         // the start: one SC_THREAD that starts the first thread
  void pass(int self);  // hands control to the next thread (waiting on the kernel if it is due later)
  int next() const;  // the slot first in (due, index), or -1

  bool may_run_ahead(Time due) const {
    return horizon_ && !ModelPresent::hold && due < kTimeLimit && due < horizon_(horizon_arg_);
  }

  std::vector<Slot> slots_;
  int running_ = -1;
  int wakeable_ = 0;  // slots waiting for a wake-up: a kick can come only when > 0
  Time now_ = 0;      // the clock's present: at or after the kernel's while a thread runs
  Time (*horizon_)(const void*) = nullptr;
  const void* horizon_arg_ = nullptr;
  sc_core::sc_event kick_;
  std::uint64_t handovers_ = 0;
  std::uint64_t ran_ahead_ = 0;
};

}  // namespace npusim
