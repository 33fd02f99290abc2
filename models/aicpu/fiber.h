// Fibers: the AICPU threads' own stacks, switched by the AICPU clock without
// the SystemC kernel (docs/architecture.md, "The AICPU clock: who runs on
// which clock").
//
// A fiber is a function running on a stack of its own; `switch_to` saves the
// running context and resumes another one where it last stopped. The switch
// saves only the registers the calling convention says a callee keeps
// (x86-64: rbx, rbp, r12-r15 and the stack pointer; AArch64: x19-x30, d8-d15
// and sp, assembled here but never run), in a few instructions of our own,
// so a hand-over between AICPU threads costs a function call instead of a
// pass of the kernel's evaluation loop. The floating-point control state
// (rounding mode, exception masks: x86-64's MXCSR and x87 control word,
// AArch64's FPCR) is not switched: every fiber runs with the process's, and
// no code that runs on one changes it (tests/test_fiber.cpp scans models/
// and sim/ for the calls that would; a user's orchestration program runs in
// a child process, never on a fiber). Reading MXCSR and the x87 control word
// waits for the floating-point work in flight: on x86-64 their save and
// restore were three quarters of the switch's time in a profile. Other
// architectures use POSIX ucontext (a signal-mask system call per switch:
// correct, slower); NPUSIM_FIBER_UCONTEXT forces that path for its test.
//
// The context that runs fibers (an SC_THREAD of the clock: the "host") is a
// Fiber made with the default constructor; it owns no stack. A fiber's
// function must not return: it ends by switching away for good
// (`switch_to(host, true)`), and is never resumed after that. Stacks are
// mapped with a 64 KiB guard below them, so an overflow faults instead of
// overwriting memory (a single frame larger than the guard could still step
// over it). The switch returns to another address than it was called from,
// so it cannot run under a hardware shadow stack (CET): fiber.cpp is compiled
// without -fcf-protection, which leaves the program unmarked for it. Under AddressSanitizer every switch is announced
// through its fiber interface, as SystemC's own coroutine switches are.
#pragma once

#include <cstddef>

#if !defined(NPUSIM_FIBER_UCONTEXT) && !defined(__x86_64__) && !defined(__aarch64__)
#define NPUSIM_FIBER_UCONTEXT 1
#endif
// The switch in use names the class's namespace, so a test can build the
// ucontext path beside the native one (tests/test_fiber_ucontext.cpp).
#if defined(NPUSIM_FIBER_UCONTEXT)
#define NPUSIM_FIBER_IMPL fiber_ucontext
#else
#define NPUSIM_FIBER_IMPL fiber_native
#endif

namespace npusim {
inline namespace NPUSIM_FIBER_IMPL {

class Fiber {
 public:
  Fiber() = default;  // the host: the context that was running when the first switch was made
  Fiber(std::size_t stack_bytes, void (*fn)(void*), void* arg);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Suspends the running fiber `*this` and resumes `to`. `finished`: *this
  // never runs again (its fake stack, under ASan, is dropped).
  void switch_to(Fiber& to, bool finished = false);

 private:
  static void entry(void* self);
  static void entry_ucontext(unsigned hi, unsigned lo);  // the ucontext path's entry
  void started();  // the ASan bookkeeping at each resumption

  static constexpr std::size_t kGuardBytes = std::size_t(64) << 10;

  void* sp_ = nullptr;     // the saved stack pointer (the asm paths) or ucontext_t*
  char* map_ = nullptr;    // the mapping: a guard page, then the stack
  std::size_t map_bytes_ = 0;
  void (*fn_)(void*) = nullptr;
  void* arg_ = nullptr;
  // AddressSanitizer's view: this fiber's stack, and the fake stack it saved.
  const void* stack_bottom_ = nullptr;
  std::size_t stack_size_ = 0;
  void* fake_stack_ = nullptr;
  Fiber* from_ = nullptr;  // who switched to this fiber last (its stack bounds are learnt here)
};

}  // namespace NPUSIM_FIBER_IMPL
}  // namespace npusim
