// Global memory seen through each core's cache lines (docs/gm.md).
//
// The GM model executes the phases that touch GM at their simulated time:
// `load`, `store`, `fence`, `cacheinvalid`, and SOFT `syncall` (a barrier by
// GM polling). It times them from the platform's `gm` section, serializes the
// accesses that need ownership of one line, and checks coherency: every read
// that could see stale data on silicon is reported through
// SimObserver::on_warning (kinds coherency_stale_read, coherency_unfenced_read,
// coherency_partial_invalidate, coherency_bypass_write and, under the
// intended cache-policy lowering, coherency_bypass_stale_read), once per
// (task, line, kind).
//
// State is kept by ranges, not by line, so a large streaming load of a
// read-only input costs a few ordered-map steps whatever its size:
//  - per core, for the block it runs: the line ranges it holds cached (with
//    the time each was fetched), the line ranges it stored to and has not
//    fenced, and the regions it invalidated with the region form;
//  - per range of lines somebody stored to (a "run"): the stores not yet
//    visible (writer, bytes), the latest publication by each of two distinct
//    cores, and the line's owner for serialization. Runs nobody can still be
//    affected by are pruned.
// A block starts with an empty cache (the AICore's dcci of its payload and
// cache at task start) and its stores become visible when it ends at the
// latest (the FIN protocol writes back), so hazards live within a kernel run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "models/aicore/aicore.h"
#include "models/common/run_config.h"
#include "models/gm/l2.h"
#include "models/runtime/data_store.h"

namespace npusim {

class Runtime;

// One transfer of `bytes` between a core and GM (a load, a store, a TSTORE /
// TLOAD of a cross-core pipe slot): a line round trip plus streaming at the
// per-core bandwidth.
Time gm_transfer(const GmCosts& gm, std::uint64_t bytes);

class GmModel : public PhaseHandler {
 public:
  // `runtime` answers whether a task is still running (the bypass matching's
  // sweep, check_bypass), by id.
  GmModel(AicoreComplex& cores, const Platform& platform, const DataStore& data, const Runtime& runtime,
          SimObserver* observer, CacheLowering lowering = CacheLowering::Today);

  bool handles(const Phase& ph) const override {
    if (ph.peer) return false;  // a peer chip's memory: the interconnect (models/interconnect)
    switch (ph.kind) {
      case PhaseKind::Load:
      case PhaseKind::Store:
      case PhaseKind::Fence:
      case PhaseKind::CacheInvalid: return true;
      case PhaseKind::Syncall: return ph.sync_mode == SyncMode::Soft;
      default: return false;
    }
  }
  Time execute(const PhaseCtx& ctx, Time t) override;
  void block_end(int core, const Task& task, int block, Time end) override;
  bool ends_blocks() const override { return true; }
  Time on_timer(const PhaseCtx& ctx, Time t) override;  // a SOFT barrier's waiter stops polling

  // Coherency reports made so far (after deduplication).
  std::uint64_t reports() const { return reports_; }
  // Bytes moved over the HBM link so far (L2 fills and write-backs).
  std::uint64_t hbm_bytes() const { return hbm_bytes_; }
  // Ranges of stored lines currently tracked (host-cost introspection).
  std::size_t tracked_runs() const { return runs_.size(); }

  // SOFT barriers still waiting (for a hang's diagnosis), by workspace line address.
  struct OpenSoftBarrier {
    std::uint64_t line_addr;
    std::int64_t used_cores;   // of the first waiter
    std::vector<int> arrived;  // cores
  };
  std::vector<OpenSoftBarrier> open_soft_barriers() const;

 private:
  using Line = std::uint64_t;

  // A publication: stores of `core` becoming visible to the other cores.
  struct Pub {
    Time at = 0;
    int core = -1;  // -1: none
    int block = 0;
    TaskId task = kNoTask;
    const KernelDef* kernel = nullptr;
    bool at_end = false;  // by the end of the writer's block, not by a fence
  };
  // Stores of one core to a run, not yet visible to the others.
  struct Pending {
    int core;
    int block;
    TaskId task;
    const KernelDef* kernel;
    std::uint64_t lo, hi;  // bytes written (hull)
    Time stored_at;
    Time visible_at;       // kNever until the writer fences or its block ends
    bool at_end;
  };
  // Lines [key, hi) with one state.
  struct Run {
    Line hi = 0;
    int writer = -1;                // last core that stored to the lines
    std::uint64_t writer_epoch = 0; // ... in which of its blocks
    Time owner_until = 0;           // its store completes: the next owner waits
    Pub latest;                     // latest publication
    Pub other;                      // latest publication by a core other than latest.core
    std::vector<Pending> pending;
  };
  struct CacheSeg {
    Line lo, hi;
    Time at;  // fetched into the cache
  };
  struct Region {  // a region-form cacheinvalid: the view's lines, of which only `base` was dropped
    Line lo, hi, base;
    Time at;
  };
  struct CoreState {
    TaskId task = kNoTask;
    int block = -1;
    std::uint64_t epoch = 0;  // blocks seen on this core
    bool live = false;
    bool track_io = false;    // the kernel has bypass loads: record its stores and bypass loads
    Time start = 0;           // first GM phase of the block
    Time end = kNever;        // the block's end, once known
    // Sorted, disjoint; vectors keep their capacity from block to block.
    std::vector<CacheSeg> cache;
    std::vector<Region> regions;
    std::vector<std::pair<Line, Line>> dirty;  // line ranges with stores not yet fenced
    std::uint64_t dirty_lines = 0;
  };
  // SOFT syncall: the counter in the first int32 of a workspace, per line.
  // It is never reset (PTO-ISA's epoch barrier). Its atomic adds are applied
  // one at a time; `added` holds, in order, the times the adds not yet folded
  // into `base` became visible.
  struct SoftWaiter {
    int core;
    TaskId task;
    int block;
    std::int64_t used_cores;
    std::uint64_t target;  // the count it polls for
    Time polls_from;       // its first poll starts
    Time deadline;         // it gives up (SYNCALL_SOFT_MAX_POLL_ITERATIONS polls)
  };
  struct SoftCounter {
    std::uint64_t base = 0;
    std::vector<Time> added;
    Time last_add = 0;
    std::vector<SoftWaiter> waiting;
    std::uint64_t adds() const { return base + added.size(); }
  };
  // Bytes a task with bypass loads stores and loads with "bypass".
  struct IoRange {
    std::uint64_t lo, hi;
    int core, block, arg;
    Time at;
  };
  struct TaskIo {  // by task id: a retired task's slot may hold a newer task, or be gone
    std::vector<IoRange> stores, bypass;
  };
  struct KernelInfo {
    bool bypass = false;
  };
  struct ReportKey {
    TaskId task;
    Line line;
    int kind;
    bool operator==(const ReportKey& o) const { return task == o.task && line == o.line && kind == o.kind; }
  };
  struct ReportKeyHash {
    std::size_t operator()(const ReportKey& k) const {
      std::uint64_t h = k.task * 0x9E3779B97F4A7C15ull;
      h ^= k.line + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
      h ^= static_cast<std::uint64_t>(k.kind) * 0xBF58476D1CE4E5B9ull;
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };
  // The read a report is about.
  struct Reader {
    const Task* task;
    int core, block, arg;
    Time at;
  };
  enum ReportKind : int { kStale = 0, kUnfenced, kPartial, kBypass, kSyncallTimeout, kBypassStale };

  // Phases.
  Time load(const PhaseCtx& ctx, Time t);
  Time store(const PhaseCtx& ctx, Time t);
  Time fence(const PhaseCtx& ctx, Time t);
  Time cacheinvalid(const PhaseCtx& ctx, Time t);
  Time soft_syncall(const PhaseCtx& ctx, Time t);
  Time soft_exit(Time polls_from, Time reached) const;

  CoreState& enter(const PhaseCtx& ctx, Time t);
  const KernelInfo& kernel_info(const Task& task);
  Time transfer(std::uint64_t bytes) const;
  // A load or store of [s.lo, s.hi) through the L2 starting at t: when its
  // last byte is through (docs/gm.md "L2 and HBM").
  Time through_l2(const PhaseCtx& ctx, std::uint64_t lo, std::uint64_t hi, bool write, Time t);
  // A BYPASS load as the intended toolchain lowers it: HBM directly, no L2
  // allocation (docs/gm.md "Cache policy").
  Time from_hbm(const PhaseCtx& ctx, std::uint64_t lo, std::uint64_t hi, Time t);
  // The reserved HBM link: `bytes` issued at t cross it by the returned time.
  Time hbm_transfer(std::uint64_t bytes, Time t);
  // The load's effective policy: its own `cache`, else the scope's for its argument.
  static bool bypass_of(const PhaseCtx& ctx);
  // Today's toolchain: once per (kernel, tensor), BYPASS accepted and lowered to a cached read.
  void warn_not_lowered(const PhaseCtx& ctx);
  Line line_of(std::uint64_t addr) const { return addr / line_bytes_; }
  struct Span {
    std::uint64_t lo, hi;  // bytes
  };
  Span span_of(const PhaseCtx& ctx);  // warns once per phase that leaves its view

  // Runs.
  using RunIt = std::map<Line, Run>::iterator;
  RunIt new_run(RunIt hint, Line lo, Line hi);
  RunIt drop_run(RunIt it);
  void split(Line x);
  void settle(Run& r, Time t);
  static void publish(Run& r, const Pending& p);
  bool owner_live(const Run& r, Time t) const;
  void flush(int core, Time visible_at, bool at_end);
  void prune(Time t);

  // Caches.
  static void cache_insert(CoreState& c, Line a, Line b, Time t);
  static void cache_erase(CoreState& c, Line x);
  static void dirty_insert(CoreState& c, Line a, Line b);

  // Reports.
  void check_bypass(const PhaseCtx& ctx, Span s, bool is_store, Time t);
  // An intended BYPASS load reads HBM: the L2's dirty lines among its bytes
  // (written by another task, not yet written back) are stale there.
  void check_bypass_stale(const PhaseCtx& ctx, Span s, Time t);
  // Reports (task, line, kind) once; `what()` builds the explanation only
  // for a report that is emitted (a repeated stale load costs a lookup).
  template <class What>
  void report(int kind, const Reader& rd, Line line, const What& what, std::string_view missing);
  std::string writer_label(int core, int block, TaskId task, const KernelDef* kernel, const Task& reader) const;
  std::string tensor_label(const Tensor& v) const;

  AicoreComplex& cores_;
  const GmCosts& gm_;
  const DataStore& data_;
  const Runtime& rt_;
  SimObserver* obs_;
  std::uint64_t line_bytes_;
  std::vector<CoreState> core_;
  std::map<Line, Run> runs_;
  std::vector<std::map<Line, Run>::node_type> spare_;  // dropped runs' nodes, reused
  std::size_t prune_at_;
  std::unordered_map<Line, SoftCounter> counters_;
  std::unordered_set<const Phase*> out_of_view_;  // phases already reported
  std::unordered_map<TaskId, TaskIo> task_io_;
  std::size_t io_sweep_at_;
  std::unordered_map<const KernelDef*, KernelInfo> kernels_;
  std::unordered_set<ReportKey, ReportKeyHash> reported_;
  std::uint64_t reports_ = 0;
  L2Cache l2_;
  CacheLowering lowering_;
  std::unordered_set<std::string> not_lowered_;  // (kernel, tensor) warned
  Time hbm_free_ = 0;           // the HBM link is reserved until then
  std::uint64_t hbm_bytes_ = 0;
};

}  // namespace npusim
