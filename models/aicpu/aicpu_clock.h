// The AICPU threads' clock: the model-owned order of the orchestrator and
// scheduler threads (docs/architecture.md, "Time and events").
//
// Each AICPU thread is a sequential function (its control flow a loop) that
// never waits on simulated time or on a wake-up event itself. It tells the
// clock when it wants to run next (a time, or a wake-up, or the earlier of
// the two) and the clock runs the threads one at a time in the order (time,
// sequence): the earliest due time first, and among threads due at the same
// time the one registered first (the sequence is the registration order:
// scheduler threads by index, host_build_graph's resolution thread, then the
// orchestrator; the same rule as the boot scan's "ties in thread order"). So
// which AICPU thread goes first among those due at the same time stamp does
// not depend on the kernel's timed-event heap.
//
// How control passes depends on whether this clock's threads are the only
// ones acting on the kernel (one chip; the clock then has a horizon, below):
//  - Alone (one chip): the threads are fibers (models/aicpu/fiber.h) inside
//    one SC_THREAD of the clock, the host. The thread that stops switches to
//    the next one directly, a function call; none at all when it is also the
//    next to run. Only when the kernel must advance first (the next thread
//    is due later than the clock's present and another SystemC process may
//    act before then: the horizon; or the run is being stopped, or the time
//    limit is reached; or no thread is due at all) does control go back to
//    the host, which waits on the kernel for that time or for a kick: a
//    wake-up from outside the AICPU threads (an AICore's timeline made known
//    by an SC_METHOD).
//  - Beside other chips (or NPUSIM_AICPU_LOCKSTEP=1): each thread is an
//    SC_THREAD of its own, and control passes with an immediate event
//    notification, so another chip's threads due at the same time stamp
//    interleave with these in the kernel's runnable order, which the
//    outputs of a run of several chips follow.
// Both give the same order among one clock's threads; the fibers leave out
// the kernel's evaluation pass that each hand-over between SC_THREADs costs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include <systemc>

#include "models/aicpu/fiber.h"
#include "models/common/present.h"
#include "models/common/time.h"

namespace npusim {

class AicpuClock : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(AicpuClock);
  explicit AicpuClock(sc_core::sc_module_name name);

  // Registers a thread: `body(arg)` runs it (its first run is due at time 0;
  // its sequence: registration order). `stack_bytes`: its stack (untouched
  // pages cost nothing). When the body returns the thread is done.
  int add(void (*body)(void*), void* arg, std::size_t stack_bytes);

  // Called by thread `id` while it runs: suspends it until simulated time t
  // (> now), or until a wake-up (`wakeable`), or (t == kNever) only until a
  // wake-up.
  void sleep(int id, Time t, bool wakeable);
  // Wakes thread `id` if it sleeps wakeable: it is due now (among the threads
  // due now, in sequence order), like an immediate notification: a wake-up of
  // a thread not waiting for one is lost. Any process may call it.
  // Inline: a wake-up of a thread that does not wait for one (most of
  // wake_all's) is this test alone.
  void wake(int id) {
    if (slots_[static_cast<std::size_t>(id)].wakeable) wake_waiting(id);
  }
  // Whether anything other than thread `self` can still happen: another
  // AICPU thread due at some time, or activity in the SystemC kernel.
  bool others_pending(int self) const;

  // The AICPU side's present: while a thread runs, its time on the clock
  // (at or after the kernel's: choose() or, alone, the host's loop keeps it
  // so, without asking the kernel here); otherwise (an SC_METHOD, or after
  // the run) the later of the two.
  Time now() const {
    return running_ >= 0 ? now_ : std::max<Time>(sc_core::sc_time_stamp().value(), now_);
  }

  // now() for the thread that runs (its own code, between its sleeps): the
  // clock's present, without now()'s test of whether a thread runs.
  Time running_now() const { return now_; }

  // Running ahead (temporal decoupling): `*next` is the earliest time at
  // which any other SystemC process can act (the AICore complex's queue,
  // which keeps it current); the clock starts a thread due before that time
  // without waiting on the kernel. Without a horizon (nullptr: the default;
  // several chips) it always waits.
  void set_horizon(const Time* next) { horizon_ = next; }

  // Sleeps of the AICPU threads.
  std::uint64_t handovers() const { return handovers_; }
  // Of those, the hand-overs to a later time done without a kernel wait.
  std::uint64_t ran_ahead() const { return ran_ahead_; }

 private:
  struct Slot {
    AicpuClock* clock;
    int id;
    void (*body)(void*);
    void* arg;
    std::size_t stack_bytes;
    bool wakeable = false;
    std::unique_ptr<Fiber> fiber;                 // alone: the thread's fiber
    std::unique_ptr<sc_core::sc_event> go;        // beside other chips: its SC_THREAD's start
  };
  void end_of_elaboration() override;  // beside other chips: one SC_THREAD per thread
  void drive();                        // the clock's SC_THREAD: the host, or the start
  static void fiber_main(void* slot_and_clock);
  void thread_main(int id);            // beside other chips: a thread's SC_THREAD
  void exit(int id);                   // thread `id`'s body returned
  void wake_waiting(int id);           // wake() of a thread that waits for a wake-up
  // The slot to run now, made the running one (the clock's present moved to
  // its due time if it runs ahead), or -1: the kernel must first advance
  // (wait_on_kernel).
  int choose();
  void wait_on_kernel();  // until the first thread's due time or a kick (no thread runs now)
  void pass(int self);    // beside other chips: hands control to the next thread
  int next() const;  // the slot first in (due, index), or -1
  // The clock's present is never behind the kernel's.
  void catch_up() {
    const Time kernel = sc_core::sc_time_stamp().value();
    if (now_ < kernel) now_ = kernel;
  }
  // Alone: where control goes for choose()'s answer `i`: thread i's fiber,
  // or (-1) the host, to wait on the kernel.
  Fiber& context(int i) { return i < 0 ? host_ : *slots_[static_cast<std::size_t>(i)].fiber; }

  bool may_run_ahead(Time due) const {
    return horizon_ && !ModelPresent::hold && due < kTimeLimit && due < *horizon_;
  }

  std::vector<Slot> slots_;
  // Per slot: when it runs next; kNever: not due (running, waiting for a
  // wake-up only, or done). Padded with kNever to a multiple of kDueGroup.
  static constexpr int kDueGroup = 4;
  std::vector<Time> due_;
  bool fibers_ = false;         // decided at the end of elaboration: alone (a horizon set)
  Fiber host_;                  // alone: the context of drive(), which waits on the kernel
  std::exception_ptr failed_;   // alone: what a thread's body threw, rethrown by the host
  int running_ = -1;
  int wakeable_ = 0;  // slots waiting for a wake-up: a kick can come only when > 0
  Time now_ = 0;      // the clock's present: at or after the kernel's while a thread runs
  const Time* horizon_ = nullptr;
  sc_core::sc_event kick_;
  std::uint64_t handovers_ = 0;
  std::uint64_t ran_ahead_ = 0;
};

}  // namespace npusim
