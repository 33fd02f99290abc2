// After sc_core::sc_start returns with SC_THREADs still suspended (a device
// failure, an input error found mid-run), ASan can be left believing the
// main thread runs on one of SystemC's coroutine stacks (docs/testing.md,
// "Sanitizers"). An exception thrown on the main stack then makes ASan ignore
// __asan_handle_no_return ("stack type: default top: 0x0"), the frames it
// unwinds stay poisoned, and the next use of that stack is reported as a
// stack-buffer-overflow ("nested bug"): every input error found mid-run
// exited 86 under ASan. This tells ASan, through its fiber interface, that the
// main thread is on its own stack again. No-op without ASan.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace npusim {

inline void sanitizer_back_on_main_stack() {
#if defined(__SANITIZE_ADDRESS__)
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* bottom = nullptr;
  size_t size = 0;
  const bool ok = pthread_attr_getstack(&attr, &bottom, &size) == 0;
  pthread_attr_destroy(&attr);
  if (!ok) return;
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, bottom, size);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}

}  // namespace npusim
