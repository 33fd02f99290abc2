// npusim-floor: the floor of tools/bench.sh, what a plain C++ discrete-event
// loop costs per simulated task on this machine (docs/testing.md, "Benchmark").
//
// It schedules the same shape of work as the bench traces, with none of the
// model: N tasks in chains of four (paged attention's QK -> softmax -> PV ->
// update per block), the chains independent, on 72 cores of one pool. Per task
// it does the least any task-graph simulator must: one ready-queue push and
// pop, one timed completion event pushed and popped on a binary heap, one
// fanin decrement of the successor. No SystemC, no allocation in the loop.
//
//   npusim-floor [TASKS]        (default 1,000,244)
// prints the task count, the host CPU and wall seconds, tasks per CPU second
// and the simulated makespan (a checksum: the loop cannot be optimised away).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace {

constexpr std::uint32_t kCores = 72;
constexpr std::uint32_t kChain = 4;

struct Event {
  std::uint64_t time;
  std::uint32_t task;
  std::uint32_t core;
};
// Earliest time first; equal times by task id, so the order is a total one.
bool later(const Event& a, const Event& b) { return a.time != b.time ? a.time > b.time : a.task > b.task; }

std::uint64_t duration_ns(std::uint32_t task) { return 1000 + (task * 2654435761u) % 997; }

}  // namespace

int main(int argc, char** argv) {
  const std::uint32_t n = argc > 1 ? static_cast<std::uint32_t>(std::strtoul(argv[1], nullptr, 10)) : 1000244;
  if (n == 0) {
    std::fprintf(stderr, "npusim-floor: TASKS must be a positive integer\n");
    return 2;
  }
  std::vector<std::uint8_t> fanin(n);
  for (std::uint32_t i = 0; i < n; ++i) fanin[i] = i % kChain ? 1 : 0;
  std::vector<std::uint32_t> ready(n);  // a FIFO: every task enters it once
  std::size_t ready_head = 0, ready_tail = 0;
  for (std::uint32_t i = 0; i < n; i += kChain) ready[ready_tail++] = i;
  std::vector<std::uint32_t> free_cores;
  for (std::uint32_t c = 0; c < kCores; ++c) free_cores.push_back(kCores - 1 - c);
  std::vector<Event> heap;
  heap.reserve(kCores);

  const std::clock_t cpu0 = std::clock();
  const auto wall0 = std::chrono::steady_clock::now();
  std::uint64_t now = 0, done = 0;
  while (done < n) {
    while (ready_head < ready_tail && !free_cores.empty()) {
      const std::uint32_t task = ready[ready_head++];
      heap.push_back({now + duration_ns(task), task, free_cores.back()});
      free_cores.pop_back();
      std::push_heap(heap.begin(), heap.end(), later);
    }
    std::pop_heap(heap.begin(), heap.end(), later);
    const Event ev = heap.back();
    heap.pop_back();
    now = ev.time;
    free_cores.push_back(ev.core);
    ++done;
    const std::uint32_t next = ev.task + 1;
    if (next < n && next % kChain && --fanin[next] == 0) ready[ready_tail++] = next;
  }
  const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::printf("floor: %" PRIu64 " tasks  cpu %.4f s  wall %.4f s  %.0f tasks/s (cpu)  makespan %" PRIu64 " ns\n", done,
              cpu, wall, cpu > 0 ? static_cast<double>(done) / cpu : 0.0, now);
  return 0;
}
