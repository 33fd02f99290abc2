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

// How host_build_graph lays its AICPU threads out. `ResolutionThread` is the
// runtime's (host_build_graph scheduler_cold_path.cpp assign_cores_to_threads,
// "3S+1P"): the last thread owns no cores and resolves completions and dummy
// tasks (scheduler_dispatch.cpp run_resolution_thread); the others own the
// clusters round robin and hand finished tasks to it. `AllSchedule` is the
// earlier layout, every thread owning cores and resolving its own completions,
// with which published silicon measurements were taken.
enum class HbgLayout : std::uint8_t { ResolutionThread, AllSchedule };

inline const char* hbg_layout_name(HbgLayout l) {
  return l == HbgLayout::AllSchedule ? "all_schedule" : "resolution_thread";
}

// How the toolchain lowers a BYPASS cache policy (seed 000_*.txt, "当前状态"):
// `Today` as the toolchain does now (PTOAS#1356 open): the declaration is
// accepted and warned, and the load is an ordinary cached read; `Intended`
// as it will once the bypass path lands: the load reads HBM directly and
// does not allocate in the L2 (docs/gm.md "Cache policy").
enum class CacheLowering : std::uint8_t { Today, Intended };

inline const char* cache_lowering_name(CacheLowering l) { return l == CacheLowering::Intended ? "intended" : "today"; }

using RingValues = std::array<std::uint64_t, kNumRings>;  // 0 = platform default

struct RunOptions {
  std::optional<int> aicpu_thread_num;       // 0 or 2..max
  std::optional<RingValues> ring_task_window;
  std::optional<RingValues> ring_heap;
  std::optional<RingValues> ring_dep_pool;
  std::optional<RuntimeKind> runtime;
  std::optional<HbgLayout> hbg_layout;
  std::optional<CacheLowering> cache_policy_lowering;
  std::optional<std::uint64_t> seed;
  // SIMPLER_SCHEDULER_TIMEOUT_MS (runtime_timeout_config.h): the scheduler's
  // no-progress watchdog in ms, [1, INT32_MAX]; unset = the platform's.
  std::optional<std::uint64_t> scheduler_timeout_ms;
};

struct RunConfig {
  int aicpu_thread_num = 4;   // effective (0 resolved)
  int sched_threads = 3;      // core-owning threads: aicpu_thread_num - 1, or all of them (HBG all_schedule)
  RuntimeKind runtime = RuntimeKind::TensormapRingbuffer;
  HbgLayout hbg_layout = HbgLayout::ResolutionThread;  // meaningful for host_build_graph only
  // host_build_graph with its resolution thread (index aicpu_thread_num - 1).
  bool resolution_thread() const {
    return runtime == RuntimeKind::HostBuildGraph && hbg_layout == HbgLayout::ResolutionThread;
  }
  CacheLowering cache_policy_lowering = CacheLowering::Today;
  std::uint64_t seed = 0;
  RingValues task_window{};   // effective per ring
  RingValues heap{};
  RingValues dep_pool{};
  std::uint64_t tensormap_pool = 0;
  Time scheduler_timeout = 0; // the no-progress watchdog's override; 0: the platform's

  // Simulator outputs.
  int swimlane_level = 3;     // 0..4
  bool scope_stats = true;
  bool deps = true;
};

// The scheduler's no-progress watchdog budget (SCHEDULER_TIMEOUT_CYCLES, or
// the per-run override); 0 = no watchdog (a hand-built platform without one).
inline Time scheduler_timeout(const RunConfig& c, const Platform& p) {
  return c.scheduler_timeout ? c.scheduler_timeout : p.timeouts.scheduler_no_progress;
}

}  // namespace npusim
