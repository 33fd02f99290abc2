// What a hand-over between AICPU threads costs, as fibers and as stackless
// state machines (docs/speed.md, "The thirteenth speed session").
//
// The AICPU clock (models/aicpu/aicpu_clock.h) runs the orchestrator and the
// scheduler threads as fibers: a thread that sleeps switches stacks to the
// next one, which returns from its own sleep at whatever call site it slept.
// This program replays one sequence of hand-overs two ways and prints the
// time each takes beyond the threads' own work:
//
//   fibers     npusim's Fiber (models/aicpu/fiber.cpp), each thread a loop
//              that sleeps at one of several call sites, some of them one
//              function deeper (a phase that sleeps inside it);
//   stackless  each thread a step function that resumes by a switch on the
//              site it stopped at and returns to one dispatcher loop, which
//              calls the next thread's step.
//
// The sequence is drawn once (splitmix64, a fixed seed) and replayed by both:
// at hand-over k the running thread does work[k], stops at site[k], and
// thread next[k] runs. Four threads: 0 stops at one of 3 sites, 1 to 3 at
// one of 7, in the proportions of a bench_pa_100k census (the twelfth speed
// session: idle sleep, ready-queue read, early-dispatch read, dummy read,
// loop top, and two one call deeper: a completion and a release).
//
//   npusim-handover-bench [hand-overs] [work] [chain|branchy]
//                                  (defaults 4000000, 60 and chain)
//
// Output: ns per hand-over for each, beyond a run of the same work without
// hand-overs; the median of 7 alternating rounds. The two replays must end
// with the same state (each thread's work and the code after each site, in
// the same order), or the program exits 1.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "models/aicpu/fiber.h"
#include "models/common/rng.h"

namespace {

// The next draw of the splitmix64 sequence whose state is `s`: the
// project's mixer (models/common/rng.h) of the state, which then steps.
std::uint64_t splitmix(std::uint64_t& s) {
  const std::uint64_t z = npusim::splitmix64(s);
  s += 0x9E3779B97F4A7C15ull;
  return z;
}

struct Plan {
  std::vector<std::uint8_t> next, site;
  std::vector<std::uint16_t> work;
};

constexpr int kThreads = 4;

Plan make_plan(std::size_t n, int work) {
  Plan p;
  p.next.resize(n);
  p.site.resize(n);
  p.work.resize(n);
  std::uint64_t s = 20261206;
  // Per-thread site weights (per mille): the orchestrator's three, the
  // schedulers' seven (idle 1.92, queue read 1.67, early 0.92, dummy 0.84,
  // top 0.20, completion 0.69, release 0.26 switches a task).
  const int orch[3] = {800, 100, 100};
  const int sched[7] = {295, 257, 142, 129, 31, 106, 40};
  int cur = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const int r = static_cast<int>(splitmix(s) % 1000);
    const int* w = cur == 0 ? orch : sched;
    const int sites = cur == 0 ? 3 : 7;
    int acc = 0, site = sites - 1;
    for (int i = 0; i < sites; ++i)
      if (r < (acc += w[i])) {
        site = i;
        break;
      }
    p.site[k] = static_cast<std::uint8_t>(site);
    // Another thread runs next (a sleep that returns to itself is no switch).
    int nx = static_cast<int>(splitmix(s) % (kThreads - 1));
    if (nx >= cur) ++nx;
    p.next[k] = static_cast<std::uint8_t>(nx);
    p.work[k] = static_cast<std::uint16_t>(work / 2 + splitmix(s) % static_cast<std::uint64_t>(work));
    cur = nx;
  }
  return p;
}

// The threads' own work between hand-overs: a dependent chain of multiplies
// (g_branchy false), or table reads with a data-dependent branch each, whose
// mispredictions are not hidden behind a long chain (true).
bool g_branchy = false;
std::uint64_t g_table[256];

__attribute__((noinline)) std::uint64_t work(std::uint64_t x, int n) {
  if (!g_branchy) {
    for (int i = 0; i < n; ++i) x = x * 6364136223846793005ull + static_cast<std::uint64_t>(i);
    return x;
  }
  for (int i = 0; i < n; ++i) {
    x ^= g_table[(x >> 7) & 255];
    if (x & 1)
      x += static_cast<std::uint64_t>(i);
    else
      x -= 3 * static_cast<std::uint64_t>(i);
  }
  return x;
}

volatile std::uint64_t g_sink;
std::uint64_t g_sum_fibers = 0, g_sum_stackless = 0;  // the two replays' results: the same work, in the same order

// ------------------------------------------------------------ work only

double run_work_only(const Plan& p) {
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t x = 1;
  for (std::size_t k = 0; k < p.site.size(); ++k) x = work(x, p.work[k]) + p.site[k];
  g_sink = x;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ------------------------------------------------------------ fibers

struct FiberRun {
  const Plan* p;
  std::size_t k = 0;
  int cur = 0;
  npusim::Fiber host;
  std::vector<std::unique_ptr<npusim::Fiber>> f;
  std::uint64_t x[kThreads] = {1, 2, 3, 4};
};

// Hands over to the plan's next thread (as AicpuClock::sleep does).
__attribute__((noinline)) void sleep(FiberRun& r) {
  const int me = r.cur;
  if (++r.k >= r.p->site.size()) {
    r.f[static_cast<std::size_t>(me)]->switch_to(r.host);
    return;
  }
  r.cur = r.p->next[r.k - 1];
  r.f[static_cast<std::size_t>(me)]->switch_to(*r.f[static_cast<std::size_t>(r.cur)]);
}

// A phase that sleeps inside it: one frame deeper.
__attribute__((noinline)) void deep_a(FiberRun& r, int id) {
  sleep(r);
  r.x[id] += 11;
}
__attribute__((noinline)) void deep_b(FiberRun& r, int id) {
  sleep(r);
  r.x[id] += 13;
}

void fiber_body(void* arg) {
  auto* pr = static_cast<std::pair<FiberRun*, int>*>(arg);
  FiberRun& r = *pr->first;
  const int id = pr->second;
  for (;;) {
    r.x[id] = work(r.x[id], r.p->work[r.k]);
    // Each site its own call instruction, each followed by its own code.
    switch (r.p->site[r.k]) {
      case 0: sleep(r); r.x[id] += 1; break;
      case 1: sleep(r); r.x[id] += 2; break;
      case 2: sleep(r); r.x[id] += 3; break;
      case 3: sleep(r); r.x[id] += 5; break;
      case 4: sleep(r); r.x[id] += 7; break;
      case 5: deep_a(r, id); break;
      default: deep_b(r, id); break;
    }
  }
}

double run_fibers(const Plan& p) {
  FiberRun r;
  r.p = &p;
  std::pair<FiberRun*, int> args[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    args[i] = {&r, i};
    r.f.push_back(std::make_unique<npusim::Fiber>(std::size_t(1) << 16, &fiber_body, &args[i]));
  }
  const auto t0 = std::chrono::steady_clock::now();
  r.host.switch_to(*r.f[0]);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  g_sum_fibers = r.x[0] ^ (r.x[1] << 1) ^ (r.x[2] << 2) ^ (r.x[3] << 3);
  g_sink = g_sum_fibers;
  return s;
}

// ------------------------------------------------------------ stackless

struct Stackless {
  const Plan* p;
  std::size_t k = 0;
  std::uint64_t x[kThreads] = {1, 2, 3, 4};
  std::uint8_t state[kThreads] = {0, 0, 0, 0};  // 0: not started, else the site + 1
};

// One turn of thread `id`: the code after the site it stopped at, its work,
// the site it stops at next. Returns to the dispatcher.
__attribute__((noinline)) void step(Stackless& s, int id) {
  switch (s.state[id]) {
    case 1: s.x[id] += 1; break;
    case 2: s.x[id] += 2; break;
    case 3: s.x[id] += 3; break;
    case 4: s.x[id] += 5; break;
    case 5: s.x[id] += 7; break;
    case 6: s.x[id] += 11; break;
    case 7: s.x[id] += 13; break;
    default: break;
  }
  s.x[id] = work(s.x[id], s.p->work[s.k]);
  s.state[id] = static_cast<std::uint8_t>(s.p->site[s.k] + 1);
}

using StepFn = void (*)(Stackless&, int);
StepFn g_steps[kThreads] = {&step, &step, &step, &step};  // the orchestrator's and the schedulers'

double run_stackless(const Plan& p) {
  Stackless s;
  s.p = &p;
  const auto t0 = std::chrono::steady_clock::now();
  int cur = 0;
  const std::size_t n = p.site.size();
  for (s.k = 0; s.k < n; ++s.k) {
    g_steps[cur](s, cur);
    cur = p.next[s.k];
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  g_sum_stackless = s.x[0] ^ (s.x[1] << 1) ^ (s.x[2] << 2) ^ (s.x[3] << 3);
  g_sink = g_sum_stackless;
  return sec;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4000000;
  const int w = argc > 2 ? std::atoi(argv[2]) : 60;
  const std::string kind = argc > 3 ? argv[3] : "chain";
  // A hand-over's work is at most 3/2 of `work` steps, kept in 16 bits.
  if (n == 0 || w <= 0 || w > 40000 || (kind != "chain" && kind != "branchy")) {
    std::fprintf(stderr, "usage: npusim-handover-bench [hand-overs > 0] [work 1..40000] [chain|branchy]\n");
    return 2;
  }
  g_branchy = kind == "branchy";
  std::uint64_t seed = 7;
  for (std::uint64_t& e : g_table) e = splitmix(seed);
  const Plan p = make_plan(n, w);
  std::vector<double> base, fib, sl;
  for (int round = 0; round < 7; ++round) {
    base.push_back(run_work_only(p));
    if (round % 2) {
      fib.push_back(run_fibers(p));
      sl.push_back(run_stackless(p));
    } else {
      sl.push_back(run_stackless(p));
      fib.push_back(run_fibers(p));
    }
  }
  if (g_sum_fibers != g_sum_stackless) {  // not the same replay: the comparison would mean nothing
    std::fprintf(stderr, "npusim-handover-bench: the two replays differ (%llx, %llx)\n",
                 static_cast<unsigned long long>(g_sum_fibers), static_cast<unsigned long long>(g_sum_stackless));
    return 1;
  }
  const double b = median(base), f = median(fib), s = median(sl);
  const double per = 1e9 / static_cast<double>(n);
  std::printf("hand-overs %zu, %s work of %d-%d steps each: work alone %.1f ns a hand-over\n", n, kind.c_str(), w / 2,
              w / 2 + w - 1, b * per);
  std::printf("fibers     %6.1f ns a hand-over beyond the work\n", (f - b) * per);
  std::printf("stackless  %6.1f ns a hand-over beyond the work\n", (s - b) * per);
  return 0;
}
