#include "models/aicpu/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(NPUSIM_FIBER_UCONTEXT)
#include <ucontext.h>
#else
// npusim_fiber_switch(void** save, void* resume): pushes the callee-saved
// registers on the running stack, stores the stack pointer in *save, loads
// `resume` as the stack pointer and pops what that stack's own switch pushed
// (or what Fiber's constructor laid out: then `ret` enters
// npusim_fiber_start, which calls Fiber::entry with the fiber in a
// callee-saved register).
extern "C" void npusim_fiber_switch(void** save, void* resume);
extern "C" void npusim_fiber_start();
#if defined(__x86_64__)
asm(R"(
  .text
  .globl npusim_fiber_switch
  .hidden npusim_fiber_switch
  .type npusim_fiber_switch, @function
npusim_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size npusim_fiber_switch, .-npusim_fiber_switch

  .globl npusim_fiber_start
  .hidden npusim_fiber_start
  .type npusim_fiber_start, @function
npusim_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%r13
  ud2
  .cfi_endproc
  .size npusim_fiber_start, .-npusim_fiber_start
)");
#elif defined(__aarch64__)
asm(R"(
  .text
  .globl npusim_fiber_switch
  .hidden npusim_fiber_switch
  .type npusim_fiber_switch, %function
npusim_fiber_switch:
  sub sp, sp, #160
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x2, sp
  str x2, [x0]
  mov sp, x1
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #160
  ret
  .size npusim_fiber_switch, .-npusim_fiber_switch

  .globl npusim_fiber_start
  .hidden npusim_fiber_start
  .type npusim_fiber_start, %function
npusim_fiber_start:
  .cfi_startproc
  .cfi_undefined x30
  mov x0, x19
  blr x20
  brk #0
  .cfi_endproc
  .size npusim_fiber_start, .-npusim_fiber_start
)");
#endif
#endif

namespace npusim {
inline namespace NPUSIM_FIBER_IMPL {

namespace {

std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return p;
}

#if defined(NPUSIM_FIBER_UCONTEXT)
ucontext_t* context_of(void*& sp) {
  if (!sp) sp = new ucontext_t{};
  return static_cast<ucontext_t*>(sp);
}
#endif

}  // namespace

#if defined(NPUSIM_FIBER_UCONTEXT)
// makecontext passes int arguments: the fiber's address in two halves (the
// high one 0 where a pointer fits in one).
void Fiber::entry_ucontext(unsigned hi, unsigned lo) {
  std::uint64_t p = hi;
  p = p << 32 | lo;
  entry(reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)));
}
#endif

Fiber::Fiber(std::size_t stack_bytes, void (*fn)(void*), void* arg) : fn_(fn), arg_(arg) {
  const std::size_t page = page_size();
  const auto whole_pages = [page](std::size_t n) { return (n + page - 1) / page * page; };
  const std::size_t stack = whole_pages(stack_bytes);
  // The guard below the stack: 64 KiB, so that a frame larger than a page
  // (which would step over a one-page guard without touching it) still lands
  // in it rather than in whatever is mapped below. Untouched, it costs nothing.
  const std::size_t guard = whole_pages(kGuardBytes);
  map_bytes_ = stack + guard;
  void* m = ::mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  map_ = static_cast<char*>(m);
  if (::mprotect(map_, guard, PROT_NONE) != 0) {
    ::munmap(map_, map_bytes_);
    throw std::bad_alloc();
  }
  stack_bottom_ = map_ + guard;
  stack_size_ = stack;
#if defined(NPUSIM_FIBER_UCONTEXT)
  ucontext_t* c = context_of(sp_);
  ::getcontext(c);
  c->uc_stack.ss_sp = map_ + guard;
  c->uc_stack.ss_size = stack;
  c->uc_link = nullptr;
  const std::uint64_t p = reinterpret_cast<std::uintptr_t>(this);
  ::makecontext(c, reinterpret_cast<void (*)()>(&Fiber::entry_ucontext), 2, static_cast<unsigned>(p >> 32),
                static_cast<unsigned>(p & 0xffffffffu));
#else
  // The first switch to this fiber pops this frame: the registers its
  // npusim_fiber_switch restores (the fiber in one, Fiber::entry in another),
  // then returns into npusim_fiber_start with the stack aligned as a call
  // expects.
  auto* top = reinterpret_cast<std::uintptr_t*>(map_ + map_bytes_);
#if defined(__x86_64__)
  std::uintptr_t* s = top - 7;  // r15, r14, r13, r12, rbx, rbp, return address; top 16-aligned
  s[0] = 0;                                             // r15
  s[1] = 0;                                             // r14
  s[2] = reinterpret_cast<std::uintptr_t>(&Fiber::entry);  // r13
  s[3] = reinterpret_cast<std::uintptr_t>(this);        // r12
  s[4] = 0;                                             // rbx
  s[5] = 0;                                             // rbp
  s[6] = reinterpret_cast<std::uintptr_t>(&npusim_fiber_start);
  sp_ = s;
#elif defined(__aarch64__)
  std::uintptr_t* s = top - 20;  // x19..x30, d8..d15: 160 bytes, 16-aligned
  for (int i = 0; i < 20; ++i) s[i] = 0;
  s[0] = reinterpret_cast<std::uintptr_t>(this);        // x19
  s[1] = reinterpret_cast<std::uintptr_t>(&Fiber::entry);  // x20
  s[11] = reinterpret_cast<std::uintptr_t>(&npusim_fiber_start);  // x30
  sp_ = s;
#endif
#endif
}

Fiber::~Fiber() {
#if defined(__SANITIZE_ADDRESS__)
  // A fiber left suspended (a run that ended with its threads waiting) has
  // instrumented frames on its stack whose poisoned shadow would outlive the
  // mapping (ASan does not intercept munmap) and hit the next stack mapped there.
  if (map_) __asan_unpoison_memory_region(stack_bottom_, stack_size_);
#endif
  if (map_) ::munmap(map_, map_bytes_);
#if defined(NPUSIM_FIBER_UCONTEXT)
  delete static_cast<ucontext_t*>(sp_);
#endif
}

void Fiber::entry(void* self) {
  Fiber* f = static_cast<Fiber*>(self);
  f->started();
  f->fn_(f->arg_);
  std::abort();  // a fiber's function switches away for good instead of returning
}

void Fiber::started() {
#if defined(__SANITIZE_ADDRESS__)
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(fake_stack_, &bottom, &size);
  // The host's stack (an SC_THREAD's, which SystemC announced to ASan) is
  // learnt when it first switches to a fiber: switching back names it.
  if (from_ && !from_->map_ && !from_->stack_bottom_) {
    from_->stack_bottom_ = bottom;
    from_->stack_size_ = size;
  }
#endif
}

void Fiber::switch_to(Fiber& to, bool finished) {
  to.from_ = this;
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(finished ? nullptr : &fake_stack_, to.stack_bottom_, to.stack_size_);
#else
  (void)finished;
#endif
#if defined(NPUSIM_FIBER_UCONTEXT)
  ::swapcontext(context_of(sp_), context_of(to.sp_));
#else
  npusim_fiber_switch(&sp_, to.sp_);
#endif
  started();
}

}  // namespace NPUSIM_FIBER_IMPL
}  // namespace npusim
