// The platform description the models consume: topology, runtime limits,
// ring defaults and every latency and cost. Loaded from platforms/*.json by
// sim/platform; nothing in models/ hard-codes a number that lives here.
//
// Costs are stored as Time (ps). Each field's source (a measurement, a
// derivation, or an assumption) is documented in the JSON file, and the loader
// refuses a value without one.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "models/common/time.h"

namespace npusim {

constexpr int kNumRings = 4;  // CHIP_MAX_RING_DEPTH / PTO2_MAX_RING_DEPTH

struct Topology {
  int clusters = 24;               // PLATFORM_MAX_BLOCKDIM; each = 1 AIC + 2 AIV
  int aicpu_threads_max = 4;       // PLATFORM_MAX_AICPU_THREADS
  int aicpu_threads_default = 4;   // aicpu_thread_num = 0 resolves to this
  int dummy_threads = 3;           // scheduler threads 0..dummy_threads-1 pop the dummy queue
  double aicore_clock_hz = 1.5e9;  // converts kernel durations given in cycles
  std::uint64_t sys_cnt_freq_hz = 50000000;  // AICPU/AICore system counter (runtime schemas)
  std::uint64_t sys_cnt_base = 0;  // counter value at simulated time 0
  std::uint64_t device_memory_bytes = 0;  // usable GM; the static arena must fit

  int aic_cores() const { return clusters; }
  int aiv_cores() const { return 2 * clusters; }
  int total_cores() const { return 3 * clusters; }
};

// Runtime compile-time limits and defaults (simpler's tensormap_and_ringbuffer pto_runtime2_types.h).
struct RuntimeLimits {
  std::array<std::uint64_t, kNumRings> task_window{};  // slots per ring (power of 2)
  std::array<std::uint64_t, kNumRings> heap{};         // bytes per ring
  std::array<std::uint64_t, kNumRings> dep_pool{};     // entries per ring
  std::uint64_t tensormap_pool = 65536;                // global entries
  int max_scope_depth = 64;
  int max_tensor_args = 32;
  int fanin_inline_cap = 64;
  int dep_pool_cleanup_interval = 64;
  int tensormap_cleanup_interval = 64;
  std::uint64_t ready_queue_capacity = 65536;
  std::uint64_t early_dispatch_queue_capacity = 256;
  // host_build_graph's own queue sizes (its pto_runtime2_types.h).
  std::uint64_t hbg_ready_queue_capacity = 8192;
  std::uint64_t hbg_early_dispatch_queue_capacity = 64;
  int deferred_release_cap = 256;
  int dummy_pop_max = 8;
  std::uint64_t packed_output_align = 1024;  // PTO2_PACKED_OUTPUT_ALIGN
  std::uint64_t heap_block_align = 64;
  // Bytes of static arena per task slot (descriptor + slot state + payload),
  // per dep-list pool entry and per fanin spill pool entry (both pools have
  // dep_pool entries); with the heaps they size the arena (rtMalloc check).
  std::uint64_t arena_bytes_per_slot = 4968;
  std::uint64_t arena_bytes_per_dep_entry = 16;
  std::uint64_t arena_bytes_per_fanin_spill_entry = 8;
  // Host time to build the runtime arena for a ring-sizing vector not in the
  // worker's single-slot cache (npusim worker, docs/workers.md).
  Time arena_build = 0;
};

struct Timeouts {
  Time scheduler_no_progress = 0;  // SCHEDULER_TIMEOUT_MS
  Time alloc_no_progress = 0;      // PTO2_ALLOC_DEADLOCK_TIMEOUT_CYCLES (500 ms)
  Time tensor_wait = 0;            // PTO2_TENSOR_DATA_TIMEOUT_MS (15 s)
};

// Costs of the AICPU scheduler loop (simpler's tensormap_and_ringbuffer scheduler_dispatch.cpp).
struct SchedCosts {
  Time loop = 0;              // one loop iteration's fixed bookkeeping
  Time poll_cond = 0;         // one serial COND read of a running core
  Time complete_task = 0;     // on_task_complete of one task (mark, lock)
  Time complete_subtask = 0;  // decode of one FIN that is not the task's last
  Time fanout_edge = 0;       // visiting one consumer in the fanout walk
  Time ready_push = 0;        // pushing one task onto a ready queue
  Time dispatch_pop = 0;      // one ready-queue batch pop that returns tasks (empty pops: part of `loop`)
  Time dispatch_task = 0;     // one dispatch operation: a popped task's block claim and shared payload work
  Time dispatch_block = 0;    // building one core's payload (a MIX block: one per used lane)
  Time wmb = 0;               // the write barrier before publishing a batch
  Time mmio_write = 0;        // one DATA_MAIN_BASE store
  Time dummy_task = 0;        // retiring one dummy-queue task inline
  Time release_task = 0;      // on_task_release of one deferred task
  Time predicate_eval = 0;    // reading and comparing one predicate operand
};

// Costs of the orchestrator thread (simpler's tensormap_and_ringbuffer pto_orchestrator.cpp).
struct OrchCosts {
  Time start = 0;           // orchestration SO entry after the run starts
  Time submit_base = 0;     // fixed part of one submit (ring alloc, heap, finalize, sync)
  Time submit_arg = 0;      // copying one tensor argument into the payload
  Time lookup = 0;          // one tensormap lookup (per INPUT/INOUT arg)
  Time lookup_entry = 0;    // per entry of the bucket chain a lookup walks
  Time edge = 0;            // wiring one fanin edge (claim + fanout list node)
  Time insert = 0;          // one tensormap insert (per INOUT/OUTPUT_EXISTING arg)
  Time alloc_tensors = 0;   // alloc_tensors fixed cost
  Time scope_begin = 0;
  Time scope_end_task = 0;  // per task of the closing scope
  Time read_poll = 0;       // one spin of get_tensor_data on the producer's state
  Time spin = 0;            // one back-pressure spin iteration of the allocator
};

// AICore side of dispatch and completion (simpler's tensormap_and_ringbuffer aicore_executor.cpp).
struct CoreCosts {
  Time dmb_arrival = 0;         // AICPU DATA_MAIN_BASE store reaches the core
  Time entry_poll = 0;          // an idle core's DMB spin loop notices it
  Time receive_to_start = 0;    // payload invalidate + ACK before the kernel starts
  Time ack_write = 0;           // the ACK write (set_cond) itself, part of receive_to_start
  Time first_task_extra = 0;    // cold first task on a core
  Time loop = 0;                // FIN to the next DMB read on a busy core
  Time fin_notice = 0;          // COND write until an AICPU read can see it
};

// GM and cache-line model (issue 5); single figures for now.
struct GmCosts {
  std::uint64_t line_bytes = 64;
  Time line_latency = 0;        // one line fetch/write-back through GM
  double bytes_per_ns = 0;      // per-core streaming bandwidth
  Time fence = 0;
  Time cacheinvalid_line = 0;
  Time cacheinvalid_all = 0;
  Time line_serialize = 0;      // extra time per queued update of one hot line
  // The shared L2 in front of HBM (docs/gm.md "L2 and HBM").
  std::uint64_t l2_bytes = 0;       // capacity
  std::uint64_t l2_line_bytes = 0;  // allocation granularity
  std::uint64_t l2_ways = 1;        // associativity (LRU within a set)
  Time l2_hit_latency = 0;          // first byte of a load whose lines are all resident
  Time l2_miss_latency = 0;         // first byte of a load with a line to fetch from HBM
  double hbm_bytes_per_ns = 0;      // the HBM link, shared by every core
};

struct FftsCosts {
  Time barrier_release = 0;  // a mode-0 barrier: last arrival until every waiter resumes
  Time flag = 0;             // a cluster-local cross-core flag: set until the waiter resumes
};

// Several chips of one L3 (distributed) dispatch and the links between them
// (docs/platform.md "interconnect"): a node's chips are a full mesh, one
// link per ordered pair of chips, each link serialising its transfers.
struct InterconnectCosts {
  int chips_per_node = 8;         // the chips one full mesh joins
  Time link_latency = 0;          // a transfer's first byte from one chip to a peer
  double link_bytes_per_ns = 0;   // one link's bandwidth, one direction
  Time host_dispatch = 0;         // the host's cost of one L3 dispatch to its chips
};

struct Platform {
  std::string name;
  std::string description;
  std::string path;  // file it was loaded from
  Topology topo;
  RuntimeLimits limits;
  Timeouts timeouts;
  SchedCosts sched;
  OrchCosts orch;
  CoreCosts core;
  GmCosts gm;
  FftsCosts ffts;
  InterconnectCosts interconnect;
  // JSON pointer of every value -> its "source" or "assumption" text.
  std::map<std::string, std::string> provenance;

  // Converts a cycle count at the AICore clock to time.
  Time aicore_cycles(double cycles) const {
    return from_ns(cycles * 1e9 / topo.aicore_clock_hz);
  }
  // Simulated time -> system-counter ticks as the device writes them. The
  // same value in 64 bits where the product fits (every time below 0.37 s
  // at 50 MHz): a division by a constant is then a multiply, where the
  // 128-bit one calls __udivti3, a hardware divide (the swimlane writers
  // convert five or so times a row).
  std::uint64_t sys_cnt(Time t) const {
    std::uint64_t prod;
    if (!__builtin_mul_overflow(t, topo.sys_cnt_freq_hz, &prod)) return topo.sys_cnt_base + prod / 1000000000000ull;
    return topo.sys_cnt_base + static_cast<std::uint64_t>(
        (static_cast<unsigned __int128>(t) * topo.sys_cnt_freq_hz) / 1000000000000ull);
  }
};

}  // namespace npusim
