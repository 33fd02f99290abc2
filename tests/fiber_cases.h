// The fiber cases (models/aicpu/fiber.h), included by test_fiber.cpp (the
// native switch) and test_fiber_ucontext.cpp (the ucontext path), each with
// its own FIBER_CASE_TAG.
#include <cfenv>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/aicpu/fiber.h"
#include "tests/catch.h"

namespace FIBER_CASE_NS {

using npusim::Fiber;

// Two fibers and the host pass control around; each keeps its locals (in
// callee-saved registers and on its stack) across the switches.
struct PingPong {
  Fiber host;
  std::unique_ptr<Fiber> a, b;
  std::vector<std::string> log;
  double sum = 0;

  static void run_a(void* p) {
    auto& s = *static_cast<PingPong*>(p);
    double x = 1.5;
    long n = 7;
    for (int i = 0; i < 3; ++i) {
      s.log.push_back("a" + std::to_string(i));
      x *= 2;
      n += i;
      s.a->switch_to(*s.b);
    }
    s.sum += x + static_cast<double>(n);
    s.a->switch_to(s.host, true);
  }
  static void run_b(void* p) {
    auto& s = *static_cast<PingPong*>(p);
    double y = 0.25;
    for (int i = 0; i < 3; ++i) {
      s.log.push_back("b" + std::to_string(i));
      y += 1;
      s.b->switch_to(i < 2 ? *s.a : s.host);
    }
    s.sum += y;
    s.b->switch_to(s.host, true);
  }
};

// Recursion deep enough to need more than a page of stack, an exception
// thrown and caught on the fiber's stack, and a rounding mode the fiber sets:
// the host's stays as it was.
struct Worker {
  Fiber host;
  std::unique_ptr<Fiber> f;
  long depth_sum = 0;
  std::string caught;
  int fiber_round = 0;

  static long recurse(int n) {
    volatile char pad[512];
    pad[0] = static_cast<char>(n);
    return n == 0 ? pad[0] : n + recurse(n - 1);
  }
  static void run(void* p) {
    auto& s = *static_cast<Worker*>(p);
    s.depth_sum = recurse(400);
    try {
      throw std::runtime_error("thrown on the fiber");
    } catch (const std::exception& e) {
      s.caught = e.what();
    }
    std::fesetround(FE_UPWARD);
    s.f->switch_to(s.host);
    s.fiber_round = std::fegetround();
    s.f->switch_to(s.host, true);
  }
};

}  // namespace FIBER_CASE_NS

TEST_CASE("fibers (" FIBER_CASE_TAG "): control passes in the order the switches name and locals survive", "[fiber]") {
  using namespace FIBER_CASE_NS;
  PingPong s;
  s.a = std::make_unique<Fiber>(64 << 10, &PingPong::run_a, &s);
  s.b = std::make_unique<Fiber>(64 << 10, &PingPong::run_b, &s);
  s.host.switch_to(*s.a);  // a0 b0 a1 b1 a2 b2, then b gives control back here
  CHECK(s.log == std::vector<std::string>{"a0", "b0", "a1", "b1", "a2", "b2"});
  CHECK(s.sum == 0);
  s.host.switch_to(*s.a);  // a finishes: x = 12, n = 7 + 0 + 1 + 2
  CHECK(s.sum == 12 + 10);
  s.host.switch_to(*s.b);  // b finishes: y = 3.25
  CHECK(s.sum == 12 + 10 + 3.25);
}

TEST_CASE("fibers (" FIBER_CASE_TAG "): deep frames - an exception caught on the fiber - the rounding mode", "[fiber]") {
  using namespace FIBER_CASE_NS;
  Worker s;
  s.f = std::make_unique<Fiber>(1 << 20, &Worker::run, &s);
  const int before = std::fegetround();
  s.host.switch_to(*s.f);
  CHECK(s.depth_sum == 400 * 401 / 2);
  CHECK(s.caught == "thrown on the fiber");
#if !defined(NPUSIM_FIBER_UCONTEXT)
  // The native switch leaves the floating-point control state alone: the
  // rounding mode the fiber set is the one its host then runs with, and the
  // host's comes back to the fiber (models/aicpu/fiber.h: no code that runs
  // on a fiber changes it; what glibc's ucontext keeps is its own affair).
  CHECK(std::fegetround() == FE_UPWARD);
  std::fesetround(FE_TOWARDZERO);
  s.host.switch_to(*s.f);
  CHECK(s.fiber_round == FE_TOWARDZERO);
#else
  s.host.switch_to(*s.f);
#endif
  std::fesetround(before);
}

#undef FIBER_CASE_TAG
#undef FIBER_CASE_NS
