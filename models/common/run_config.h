// Run configuration: the fields of PyPTO's RunConfig that reach the runtime,
// plus the simulator's own switches.
//
// RunOptions is what a user gave (the trace's `run` block, then command-line
// options overriding it field by field); RunConfig is the effective result
// after defaults from the platform. sim/config builds both.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "models/common/platform.h"

namespace npusim {

enum class RuntimeKind : std::uint8_t { TensormapRingbuffer, HostBuildGraph };

inline const char* runtime_name(RuntimeKind k) {
  return k == RuntimeKind::HostBuildGraph ? "host_build_graph" : "tensormap_and_ringbuffer";
}

using RingValues = std::array<std::uint64_t, kNumRings>;  // 0 = platform default

struct RunOptions {
  std::optional<int> aicpu_thread_num;       // 0 or 2..max
  std::optional<RingValues> ring_task_window;
  std::optional<RingValues> ring_heap;
  std::optional<RingValues> ring_dep_pool;
  std::optional<RuntimeKind> runtime;
  std::optional<std::uint64_t> seed;
};

struct RunConfig {
  int aicpu_thread_num = 4;   // effective (0 resolved)
  int sched_threads = 3;      // T&R: aicpu_thread_num - 1; HBG: aicpu_thread_num
  RuntimeKind runtime = RuntimeKind::TensormapRingbuffer;
  std::uint64_t seed = 0;
  RingValues task_window{};   // effective per ring
  RingValues heap{};
  RingValues dep_pool{};
  std::uint64_t tensormap_pool = 0;

  // Simulator outputs.
  int swimlane_level = 3;     // 0..4
  bool scope_stats = true;
  bool deps = true;
};

}  // namespace npusim
