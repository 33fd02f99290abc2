// A fresh SystemC kernel per test (SystemC 2.3.4 has no reset API): swaps the
// global simulation context. Create it first in a TEST_CASE so modules built
// in the test are destroyed before it.
#pragma once

#include <systemc>

namespace sc_core {
extern sc_simcontext* sc_curr_simcontext;
extern sc_simcontext* sc_default_global_context;
}  // namespace sc_core

struct ScKernelFixture {
  ScKernelFixture() {
    ctx_ = new sc_core::sc_simcontext();
    sc_core::sc_curr_simcontext = ctx_;
    sc_core::sc_default_global_context = ctx_;
  }
  ~ScKernelFixture() {
    delete ctx_;
    sc_core::sc_curr_simcontext = nullptr;
    sc_core::sc_default_global_context = nullptr;
  }
  ScKernelFixture(const ScKernelFixture&) = delete;
  ScKernelFixture& operator=(const ScKernelFixture&) = delete;

 private:
  sc_core::sc_simcontext* ctx_;
};
