// A fresh SystemC kernel (SystemC 2.3.4 has no reset API and cannot restart
// a simulation): swaps the global simulation context for a new one and, when
// destroyed, deletes it and restores the one before. Used by `npusim worker`
// (one simulation per dispatch in one process) and by the unit tests (a
// kernel per test). Create it before any module, so that the modules built
// under it are destroyed first.
#pragma once

#include <systemc>

namespace sc_core {
extern sc_simcontext* sc_curr_simcontext;
extern sc_simcontext* sc_default_global_context;
}  // namespace sc_core

namespace npusim::engine {

class FreshKernel {
 public:
  FreshKernel()
      : saved_curr_(sc_core::sc_curr_simcontext), saved_default_(sc_core::sc_default_global_context),
        ctx_(new sc_core::sc_simcontext()) {
    sc_core::sc_curr_simcontext = ctx_;
    sc_core::sc_default_global_context = ctx_;
  }
  ~FreshKernel() {
    delete ctx_;
    sc_core::sc_curr_simcontext = saved_curr_;
    sc_core::sc_default_global_context = saved_default_;
  }
  FreshKernel(const FreshKernel&) = delete;
  FreshKernel& operator=(const FreshKernel&) = delete;

 private:
  sc_core::sc_simcontext* saved_curr_;
  sc_core::sc_simcontext* saved_default_;
  sc_core::sc_simcontext* ctx_;
};

}  // namespace npusim::engine
