#include "models/gm/gm.h"

#include <algorithm>
#include <cstdio>

#include "models/runtime/runtime.h"

namespace npusim {

namespace {

constexpr std::size_t kPruneMin = 4096;  // runs tracked before the first prune
constexpr std::size_t kIoSweepMin = 64;  // tasks with bypass loads tracked before the first sweep
constexpr std::size_t kSpareMax = 4096;  // run nodes kept for reuse

const char* kKindNames[] = {"coherency_stale_read", "coherency_unfenced_read", "coherency_partial_invalidate",
                            "coherency_bypass_write", "coherency_syncall_timeout", "coherency_bypass_stale_read"};

// The first entry of an ordered map of ranges [key, value.hi) that ends after `a`.
template <class M>
typename M::iterator first_overlap(M& m, std::uint64_t a) {
  auto it = m.upper_bound(a);
  if (it != m.begin()) {
    auto p = std::prev(it);
    if (p->second.hi > a) return p;
  }
  return it;
}

// The first range of a sorted, disjoint vector of ranges that ends after `a`.
template <class V, class Hi>
std::size_t first_after(const V& v, std::uint64_t a, Hi hi) {
  return static_cast<std::size_t>(
      std::partition_point(v.begin(), v.end(), [&](const auto& x) { return hi(x) <= a; }) - v.begin());
}

std::uint64_t view_base(const Tensor& v) {
  return v.addr + static_cast<std::uint64_t>(v.start_offset()) * static_cast<std::uint64_t>(dtype_bytes(v.dtype));
}

// A view's bytes, taken as contiguous from its first element (docs/gm.md).
std::uint64_t view_bytes(const Tensor& v) {
  return static_cast<std::uint64_t>(v.view_numel()) * static_cast<std::uint64_t>(dtype_bytes(v.dtype));
}

template <class T>
std::string format(const char* f, T v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string hex(std::uint64_t v) { return format("0x%llx", static_cast<unsigned long long>(v)); }

std::string task_label(TaskId id, const KernelDef* k) {
  return task_display(id) + " (" + (k ? k->name : std::string("?")) + ")";
}

}  // namespace

GmModel::GmModel(AicoreComplex& cores, const Platform& platform, const DataStore& data, const Runtime& runtime,
                 SimObserver* observer, CacheLowering lowering)
    : cores_(cores), gm_(platform.gm), data_(data), rt_(runtime), obs_(observer), line_bytes_(platform.gm.line_bytes), prune_at_(kPruneMin),
      io_sweep_at_(kIoSweepMin), l2_(platform.gm.l2_bytes, platform.gm.l2_line_bytes, platform.gm.l2_ways),
      lowering_(lowering) {
  core_.resize(static_cast<std::size_t>(cores.map().total()));
}

Time gm_transfer(const GmCosts& gm, std::uint64_t bytes) {
  double stream_ns = gm.bytes_per_ns > 0 ? static_cast<double>(bytes) / gm.bytes_per_ns : 0;
  return gm.line_latency + from_ns(stream_ns);
}

Time GmModel::transfer(std::uint64_t bytes) const { return gm_transfer(gm_, bytes); }

// The core streams its bytes at gm.bytes_per_ns; the lines that miss (and
// the dirty lines they evict) cross the HBM link, one transfer at a time in
// the order they are issued (FIFO: a transfer reserves bytes /
// hbm_bytes_per_ns from when the link is free). The first byte takes the
// hit latency, or the miss latency if any line misses, and for a load comes
// no earlier than the lines it finds in flight are ready (another access's
// fill arriving, another store ending); the access is through when both its
// own stream from its first byte and its HBM share are. A load's fills are
// ready when they arrive (their HBM share + the miss latency); a store's
// lines when the store ends (store() marks them).
Time GmModel::through_l2(const PhaseCtx& ctx, std::uint64_t lo, std::uint64_t hi, bool write, Time t) {
  const L2Cache::Access a = l2_.access(lo, hi, write, ctx.task->id);
  const std::uint64_t hbm = a.fill_bytes + a.writeback_bytes;
  const double stream_ns = gm_.bytes_per_ns > 0 ? static_cast<double>(hi - lo) / gm_.bytes_per_ns : 0;
  const Time latency = a.fill_bytes ? gm_.l2_miss_latency : gm_.l2_hit_latency;
  const Time first = write ? t + latency : std::max<Time>(t + latency, a.ready);
  Time end = first + from_ns(stream_ns);
  if (hbm) {
    const Time crossed = hbm_transfer(hbm, t);
    end = std::max(end, crossed + latency);
    if (!write) l2_.mark_ready(crossed + gm_.l2_miss_latency);
  }
  if (obs_ && a.lines) obs_->on_l2_access(*ctx.task, a.lines, a.hits, hbm);
  return end;
}

Time GmModel::hbm_transfer(std::uint64_t bytes, Time t) {
  const Time start = std::max(t, hbm_free_);
  hbm_free_ = start + from_ns(static_cast<double>(bytes) / gm_.hbm_bytes_per_ns);
  hbm_bytes_ += bytes;
  return hbm_free_;
}

// The whole L2 lines the bytes touch cross the link, as a fill would move
// them, but nothing is looked up or allocated: the first byte takes the miss
// latency (the way to HBM), and the L2's lines stay as they were.
Time GmModel::from_hbm(const PhaseCtx& ctx, std::uint64_t lo, std::uint64_t hi, Time t) {
  if (hi <= lo) return t + gm_.l2_hit_latency;  // nothing to read: as an empty cached load
  const std::uint64_t line = l2_.line_bytes();
  const std::uint64_t bytes = (hi - 1) / line * line + line - lo / line * line;
  const double stream_ns = gm_.bytes_per_ns > 0 ? static_cast<double>(hi - lo) / gm_.bytes_per_ns : 0;
  const Time end = std::max(t + from_ns(stream_ns), hbm_transfer(bytes, t));
  if (obs_) obs_->on_l2_access(*ctx.task, 0, 0, bytes);
  return end + gm_.l2_miss_latency;
}

bool GmModel::bypass_of(const PhaseCtx& ctx) {
  const Phase& ph = *ctx.phase;
  if (ph.cache != CacheMode::Inherit) return ph.cache == CacheMode::Bypass;
  return ph.arg >= 0 && static_cast<std::size_t>(ph.arg) < Task::kBypassArgs && ((ctx.task->scope_bypass >> ph.arg) & 1u);
}

void GmModel::warn_not_lowered(const PhaseCtx& ctx) {
  const Tensor& v = ctx.task->args[static_cast<std::size_t>(ctx.phase->arg)];
  const std::string kernel = ctx.task->kernel ? ctx.task->kernel->name : std::string("?");
  const std::string tensor = tensor_label(v);
  if (!obs_ || !not_lowered_.insert(kernel + '\n' + tensor).second) return;
  obs_->on_warning("cache_bypass_not_lowered",
                   "kernel \"" + kernel + "\" " + tensor + " (first load: task " + task_display(ctx.task->id) +
                       ", " + ctx.phase->path + "): BYPASS accepted but lowered to a cached read by today's toolchain "
                       "(no bypass path yet, PTOAS#1356): the load allocates in the L2 as a default one; "
                       "--cache-policy-lowering intended shows what it buys once the toolchain lands it");
}

GmModel::Span GmModel::span_of(const PhaseCtx& ctx) {
  const Phase& ph = *ctx.phase;
  BlockEnv env(ctx.block, ctx.block_num);
  const std::int64_t off = std::max<std::int64_t>(0, ph.offset.eval_or(env, 0));
  const std::int64_t n = std::max<std::int64_t>(0, ph.bytes.eval_or(env, 0));
  const Tensor& v = ctx.task->args[static_cast<std::size_t>(ph.arg)];
  const std::uint64_t lo = view_base(v) + static_cast<std::uint64_t>(off);
  const std::uint64_t end = static_cast<std::uint64_t>(off) + static_cast<std::uint64_t>(n);
  // Bytes beyond the argument's view belong to whatever lies next in GM: a
  // trace bug, reported once per phase of a kernel.
  if (end > view_bytes(v) && out_of_view_.insert(&ph).second)
    obs_->on_warning("phase_out_of_view",
                     "phase " + ph.path + " of kernel " + (ctx.task->kernel ? ctx.task->kernel->name : "?") +
                         " (task " + task_display(ctx.task->id) + " block " + std::to_string(ctx.block) +
                         ") touches bytes [" + std::to_string(off) + ", " + std::to_string(end) + ") of argument " +
                         std::to_string(ph.arg) + ", whose view has " + std::to_string(view_bytes(v)) + " bytes");
  return Span{lo, lo + static_cast<std::uint64_t>(n)};
}

const GmModel::KernelInfo& GmModel::kernel_info(const Task& task) {
  auto [it, fresh] = kernels_.try_emplace(task.kernel);
  if (!fresh || !task.kernel) return it->second;
  bool hard = false, soft = false;
  for (const LaneBody& l : task.kernel->lanes)
    for (const Phase& p : l.phases) {
      if (p.kind == PhaseKind::Load && p.cache == CacheMode::Bypass) it->second.bypass = true;
      if (p.kind == PhaseKind::Syncall) (p.sync_mode == SyncMode::Hard ? hard : soft) = true;
    }
  if (hard && soft && obs_)
    obs_->on_warning("syncall_mixed_modes",
                     "kernel \"" + task.kernel->name + "\" (first launch: task " + task_display(task.id) +
                         ") mixes HARD and SOFT syncall: the FFTS barrier waits for every physical core of its "
                         "type while the GM counter counts used_cores, and neither orders the other's arrivals; "
                         "use one mode per kernel");
  return it->second;
}

GmModel::CoreState& GmModel::enter(const PhaseCtx& ctx, Time t) {
  CoreState& c = core_[static_cast<std::size_t>(ctx.core)];
  if (c.live && c.task == ctx.task->id && c.block == ctx.block) return c;
  // A new block: the AICore starts it with an empty cache.
  if (c.live && c.end == kNever) flush(ctx.core, t, true);  // its end was not reported
  c.task = ctx.task->id;
  c.block = ctx.block;
  ++c.epoch;
  c.live = true;
  c.start = t;
  c.end = kNever;
  c.cache.clear();
  c.regions.clear();
  c.dirty.clear();
  c.dirty_lines = 0;
  c.track_io = kernel_info(*ctx.task).bypass || ctx.task->scope_bypass != 0;
  return c;
}

void GmModel::block_end(int core, const Task& task, int block, Time end) {
  CoreState& c = core_[static_cast<std::size_t>(core)];
  if (!c.live || c.task != task.id || c.block != block || c.end != kNever) return;
  flush(core, end, true);  // the end of a block writes its stores back
  c.end = end;
  c.cache.clear();
  c.regions.clear();
}

Time GmModel::execute(const PhaseCtx& ctx, Time t) {
  switch (ctx.phase->kind) {
    case PhaseKind::Load: return load(ctx, t);
    case PhaseKind::Store: return store(ctx, t);
    case PhaseKind::Fence: return fence(ctx, t);
    case PhaseKind::CacheInvalid: return cacheinvalid(ctx, t);
    case PhaseKind::Syncall: return soft_syncall(ctx, t);
    default: return t;
  }
}

// ------------------------------------------------------------------ phases

Time GmModel::load(const PhaseCtx& ctx, Time t) {
  CoreState& c = enter(ctx, t);
  const Span s = span_of(ctx);
  const bool bypass = bypass_of(ctx);
  if (bypass && lowering_ == CacheLowering::Today) warn_not_lowered(ctx);
  if (bypass && lowering_ == CacheLowering::Intended) check_bypass_stale(ctx, s, t);
  const Time done = bypass && lowering_ == CacheLowering::Intended ? from_hbm(ctx, s.lo, s.hi, t)
                                                                    : through_l2(ctx, s.lo, s.hi, false, t);
  if (s.hi <= s.lo) return done;
  const Line a = line_of(s.lo), b = line_of(s.hi - 1) + 1;
  const Reader rd{ctx.task, ctx.core, ctx.block, ctx.phase->arg, t};
  for (auto it = first_overlap(runs_, a); it != runs_.end() && it->first < b; ++it) {
    Run& r = it->second;
    settle(r, t);
    const Line rl = std::max(a, it->first), rh = std::min(b, r.hi);
    // Bytes another core stored and has not made visible yet.
    for (const Pending& p : r.pending) {
      if (p.core == ctx.core) continue;
      const std::uint64_t lo = std::max({s.lo, p.lo, rl * line_bytes_});
      const std::uint64_t hi = std::min({s.hi, p.hi, rh * line_bytes_});
      if (lo >= hi) continue;
      auto what = [&] {
        return "bytes that " + writer_label(p.core, p.block, p.task, p.kernel, *ctx.task) + " stored at " +
               us_text(p.stored_at) +
               (p.visible_at == kNever ? " and has not fenced" : " and makes visible only at " + us_text(p.visible_at)) +
               ": they may still sit in that core's cache";
      };
      const std::string missing = "fence on core " + std::to_string(p.core) + " after its store, before the hand-off";
      for (Line x = line_of(lo); x <= line_of(hi - 1); ++x) report(kUnfenced, rd, x, what, missing);
    }
    if (bypass) continue;
    // Lines this core fetched before another core's stores to them became visible.
    const Pub& o = r.latest.core != ctx.core ? r.latest : r.other;
    if (o.core < 0) continue;
    for (std::size_t i = first_after(c.cache, rl, [](const CacheSeg& x) { return x.hi; });
         i < c.cache.size() && c.cache[i].lo < rh; ++i) {
      const CacheSeg& seg = c.cache[i];
      if (seg.at >= o.at) continue;
      const Line lo = std::max(rl, seg.lo), hi = std::min(rh, seg.hi);
      auto what = [&] {
        return "which " + writer_label(o.core, o.block, o.task, o.kernel, *ctx.task) + " wrote and made visible at " +
               us_text(o.at) + (o.at_end ? " (the end of its block)" : " (its fence)") +
               ", after this core cached it at " + us_text(seg.at);
      };
      for (Line x = lo; x < hi; ++x) {
        const Region* g = nullptr;
        for (const Region& reg : c.regions)
          if (reg.lo <= x && x < reg.hi && reg.at >= o.at) g = &reg;
        if (g)
          report(kPartial, rd, x,
                 [&] {
                   return what() + "; the region cacheinvalid at " + us_text(g->at) +
                          " dropped only the line of its view's base address (GM " + hex(g->base * line_bytes_) +
                          "), not this one: the cached copy is stale";
                 },
                 "cacheinvalid \"all\" (the region form drops only the line of the view's base address)");
        else
          report(kStale, rd, x, [&] { return what() + ": the cached copy is stale"; },
                 "cacheinvalid of this line (or cacheinvalid \"all\") after the hand-off, before the load");
      }
    }
  }
  if (bypass) {
    if (c.track_io) check_bypass(ctx, s, false, t);
  } else {
    cache_insert(c, a, b, t);
  }
  return done;
}

Time GmModel::store(const PhaseCtx& ctx, Time t) {
  CoreState& c = enter(ctx, t);
  const Span s = span_of(ctx);
  if (s.hi <= s.lo) return t + gm_.l2_hit_latency;
  const Line a = line_of(s.lo), b = line_of(s.hi - 1) + 1;
  // Ownership of lines another core stored to and still holds: the store
  // waits for their owner's access to complete and costs one line_serialize
  // more (the ownership transfers of a multi-line store overlap).
  Time start = t;
  bool taken = false;
  for (auto it = first_overlap(runs_, a); it != runs_.end() && it->first < b; ++it) {
    const Run& r = it->second;
    if (r.writer < 0 || r.writer == ctx.core || !owner_live(r, t)) continue;
    taken = true;
    start = std::max(start, r.owner_until);
  }
  const Time done = through_l2(ctx, s.lo, s.hi, true, start) + (taken ? gm_.line_serialize : 0);
  l2_.mark_ready(done);  // its lines are in flight until it ends
  if (start > t && obs_) obs_->on_core_wait(ctx.core, *ctx.task, ctx.block, WaitKind::Memory, t, start);
  split(a);
  split(b);
  Line cur = a;
  auto it = runs_.lower_bound(a);
  while (cur < b) {
    if (it == runs_.end() || it->first > cur) it = new_run(it, cur, it == runs_.end() ? b : std::min(b, it->first));
    Run& r = it->second;
    settle(r, t);
    r.writer = ctx.core;
    r.writer_epoch = c.epoch;
    r.owner_until = std::max(r.owner_until, done);
    bool merged = false;
    for (Pending& p : r.pending)
      if (p.core == ctx.core && p.visible_at == kNever) {
        p.lo = std::min(p.lo, s.lo);
        p.hi = std::max(p.hi, s.hi);
        merged = true;
        break;
      }
    if (!merged)
      r.pending.push_back(Pending{ctx.core, ctx.block, ctx.task->id, ctx.task->kernel, s.lo, s.hi, t, kNever, false});
    cur = r.hi;
    ++it;
  }
  dirty_insert(c, a, b);
  cache_insert(c, a, b, t);  // write-allocate
  if (c.track_io) check_bypass(ctx, s, true, t);
  if (runs_.size() > prune_at_) prune(t);
  return done;
}

Time GmModel::fence(const PhaseCtx& ctx, Time t) {
  CoreState& c = enter(ctx, t);
  // The fence waits for the write-back of the core's dirty lines.
  const Time cost = gm_.fence + (c.dirty_lines ? transfer(c.dirty_lines * line_bytes_) : 0);
  flush(ctx.core, t + cost, false);
  return t + cost;
}

Time GmModel::cacheinvalid(const PhaseCtx& ctx, Time t) {
  CoreState& c = enter(ctx, t);
  if (ctx.phase->all) {
    c.cache.clear();
    return t + gm_.cacheinvalid_all;
  }
  // The region form drops only the line of the view's base address.
  const Tensor& v = ctx.task->args[static_cast<std::size_t>(ctx.phase->arg)];
  const std::uint64_t base = view_base(v), bytes = view_bytes(v);
  const Line lo = line_of(base), hi = bytes ? line_of(base + bytes - 1) + 1 : lo + 1;
  cache_erase(c, lo);
  if (hi > lo + 1) c.regions.push_back(Region{lo, hi, lo, t});
  return t + gm_.cacheinvalid_line;
}

// SOFT syncall, as PTO-ISA's a2a3 SYNCALL_SOFT_ATOMIC_BARRIER does it
// (include/pto/common/syncall_soft.hpp, simpler's pinned PTO-ISA; docs/gm.md):
//   pipe_barrier(PIPE_ALL); dsb(DSB_DDR);
//   before = ld_dev(counter)                       SYNCALL_SOFT_ARRIVE
//   dcci(counter); st_atomic(+1); dcci(counter); dsb(DSB_DDR)
//   target = (before / used_cores + 1) * used_cores
//   while (ld_dev(counter) < target)               SYNCALL_SOFT_POLL
//     every 16th poll pipe_barrier(PIPE_ALL); after 1,000,000 polls give up
//   dsb(DSB_DDR); pipe_barrier(PIPE_ALL)
// Costs: dsb gm.fence, ld_dev (a load from GM) gm.line_latency, dcci
// gm.cacheinvalid_line, pipe_barrier nothing (a core's phases are sequential).
// The atomic add takes a GM round trip (line_latency) and the adds to one
// counter are applied one at a time, at least gm.line_serialize apart. A
// poll completing at x sees the adds visible by x.
namespace {
// SYNCALL_SOFT_MAX_POLL_ITERATIONS (include/pto/common/type.hpp): the poll
// loop breaks after this many polls below the target and the kernel goes on.
constexpr std::uint64_t kSoftMaxPolls = 1000000;
}  // namespace

std::vector<GmModel::OpenSoftBarrier> GmModel::open_soft_barriers() const {
  std::vector<OpenSoftBarrier> v;
  for (const auto& [line, c] : counters_) {
    if (c.waiting.empty()) continue;
    OpenSoftBarrier o{line * line_bytes_, c.waiting.front().used_cores, {}};
    for (const SoftWaiter& w : c.waiting) o.arrived.push_back(w.core);
    v.push_back(std::move(o));
  }
  std::sort(v.begin(), v.end(), [](const OpenSoftBarrier& a, const OpenSoftBarrier& b) { return a.line_addr < b.line_addr; });
  return v;
}

// The poll loop started at `polls_from` ends with the first poll completing
// at or after `reached` (at least one poll), then dsb(DSB_DDR).
Time GmModel::soft_exit(Time polls_from, Time reached) const {
  const Time poll = gm_.line_latency;
  std::uint64_t k = 1;
  if (poll > 0 && reached > polls_from + poll) k = (reached - polls_from + poll - 1) / poll;
  return polls_from + k * poll + gm_.fence;
}

Time GmModel::soft_syncall(const PhaseCtx& ctx, Time t) {
  if (!syncall_runs_on(ctx.phase->sync_core_type, cores_.map().kind(ctx.core))) return t;
  enter(ctx, t);
  const Tensor& ws = ctx.task->args[static_cast<std::size_t>(ctx.phase->workspace_arg)];
  SoftCounter& c = counters_[line_of(view_base(ws))];
  BlockEnv env(ctx.block, ctx.block_num);
  const std::int64_t n = std::max<std::int64_t>(1, ctx.phase->used_cores.eval_or(env, 1));
  // Adds visible by now are visible to every read from now on.
  const auto seen = std::upper_bound(c.added.begin(), c.added.end(), t);
  c.base += static_cast<std::uint64_t>(seen - c.added.begin());
  c.added.erase(c.added.begin(), seen);
  // dsb, then ld_dev: the count before this core's add.
  const Time read = t + gm_.fence + gm_.line_latency;
  const std::uint64_t before =
      c.base + static_cast<std::uint64_t>(std::upper_bound(c.added.begin(), c.added.end(), read) - c.added.begin());
  const std::uint64_t un = static_cast<std::uint64_t>(n);
  const std::uint64_t target = (before / un + 1) * un;
  // dcci, st_atomic: the add, applied after the previous one.
  const Time issue = read + gm_.cacheinvalid_line;
  Time added = issue + gm_.line_latency;
  if (c.adds()) added = std::max(added, c.last_add + gm_.line_serialize);
  c.added.push_back(added);
  c.last_add = added;
  // dcci, dsb(DSB_DDR): waits for the add to complete; then the polls.
  const Time polls_from = std::max(issue + gm_.cacheinvalid_line, added) + gm_.fence;
  // The waiters whose count this add completes.
  const std::uint64_t count = c.adds();
  for (std::size_t i = 0; i < c.waiting.size();) {
    const SoftWaiter& w = c.waiting[i];
    const Time exit = w.target == count ? soft_exit(w.polls_from, added) : kNever;
    if (exit < w.deadline) {
      cores_.resume(w.core, exit);
      c.waiting.erase(c.waiting.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;  // its count is not reached yet, or it gives up first (its timer)
    }
  }
  const Time deadline = polls_from + kSoftMaxPolls * gm_.line_latency + gm_.fence;
  if (count >= target) {
    const Time reached = target <= c.base ? 0 : c.added[static_cast<std::size_t>(target - c.base - 1)];
    const Time exit = soft_exit(polls_from, reached);
    if (exit < deadline) return exit;
  }
  c.waiting.push_back(SoftWaiter{ctx.core, ctx.task->id, ctx.block, n, target, polls_from, deadline});
  cores_.set_timer(ctx.core, deadline, this);
  return kNever;
}

// A waiter that is still polling at its deadline gives up: the loop breaks
// and the kernel goes on without the barrier.
Time GmModel::on_timer(const PhaseCtx& ctx, Time t) {
  for (auto& [line, c] : counters_)
    for (auto it = c.waiting.begin(); it != c.waiting.end(); ++it) {
      if (it->core != ctx.core || it->deadline != t) continue;
      const SoftWaiter w = *it;
      c.waiting.erase(it);
      if (reported_.insert(ReportKey{w.task, line, kSyncallTimeout}).second && ++reports_ && obs_) {
        const std::uint64_t seen =
            c.base + static_cast<std::uint64_t>(std::upper_bound(c.added.begin(), c.added.end(), t) - c.added.begin());
        obs_->on_warning(
            kKindNames[kSyncallTimeout],
            "task " + task_label(w.task, ctx.task->kernel) + " block " + std::to_string(w.block) + " on core " +
                std::to_string(w.core) + ": a SOFT syncall (workspace line GM " + hex(line * line_bytes_) +
                ", used_cores=" + std::to_string(w.used_cores) + ") gave up at " + us_text(t) + " after " +
                std::to_string(kSoftMaxPolls) + " polls: the counter is at " + std::to_string(seen) + ", the barrier waits for " +
                std::to_string(w.target) + "; PTO-ISA's poll loop then breaks and the kernel runs on unsynchronised, "
                "so what follows the barrier can read stale data; used_cores must count the cores that take part "
                "(mix: AIC and AIV)");
      }
      return t;
    }
  return kNever;
}

// ------------------------------------------------------------------ runs

GmModel::RunIt GmModel::new_run(RunIt hint, Line lo, Line hi) {
  RunIt it;
  if (spare_.empty()) {
    it = runs_.emplace_hint(hint, lo, Run{});
  } else {
    auto nh = std::move(spare_.back());
    spare_.pop_back();
    nh.key() = lo;
    Run& r = nh.mapped();
    std::vector<Pending> keep = std::move(r.pending);  // its capacity
    keep.clear();
    r = Run{};
    r.pending = std::move(keep);
    it = runs_.insert(hint, std::move(nh));
  }
  it->second.hi = hi;
  return it;
}

GmModel::RunIt GmModel::drop_run(RunIt it) {
  RunIt next = std::next(it);
  if (spare_.size() < kSpareMax)
    spare_.push_back(runs_.extract(it));
  else
    runs_.erase(it);
  return next;
}

void GmModel::split(Line x) {
  auto it = runs_.upper_bound(x);
  if (it == runs_.begin()) return;
  --it;
  if (!(it->first < x && x < it->second.hi)) return;
  const Line hi = it->second.hi;
  it->second.hi = x;
  Run& head = it->second;
  Run& tail = new_run(std::next(it), x, hi)->second;
  // The same state, the pending writes copied into the tail's own storage.
  std::vector<Pending> keep = std::move(tail.pending), pending = std::move(head.pending);
  tail = head;
  tail.hi = hi;
  keep.assign(pending.begin(), pending.end());
  tail.pending = std::move(keep);
  head.pending = std::move(pending);
}

void GmModel::publish(Run& r, const Pending& p) {
  const Pub np{p.visible_at, p.core, p.block, p.task, p.kernel, p.at_end};
  if (r.latest.core < 0) {
    r.latest = np;
  } else if (np.at >= r.latest.at) {
    if (np.core != r.latest.core) r.other = r.latest;
    r.latest = np;
  } else if (np.core != r.latest.core && (r.other.core < 0 || np.at > r.other.at)) {
    r.other = np;
  }
}

void GmModel::settle(Run& r, Time t) {
  if (r.pending.empty()) return;
  std::size_t keep = 0;
  for (std::size_t i = 0; i < r.pending.size(); ++i) {
    if (r.pending[i].visible_at <= t)
      publish(r, r.pending[i]);
    else
      r.pending[keep++] = r.pending[i];
  }
  r.pending.resize(keep);
}

bool GmModel::owner_live(const Run& r, Time t) const {
  if (r.writer < 0) return false;
  const CoreState& w = core_[static_cast<std::size_t>(r.writer)];
  return w.epoch == r.writer_epoch && (w.end == kNever || w.end > t);
}

void GmModel::flush(int core, Time visible_at, bool at_end) {
  CoreState& c = core_[static_cast<std::size_t>(core)];
  for (const auto& [lo, hi] : c.dirty)
    for (RunIt it = first_overlap(runs_, lo); it != runs_.end() && it->first < hi; ++it)
      for (Pending& p : it->second.pending)
        if (p.core == core && p.visible_at == kNever) {
          p.visible_at = visible_at;
          p.at_end = at_end;
        }
  c.dirty.clear();
  c.dirty_lines = 0;
}

// Drops the runs nobody can be affected by any more: nothing pending, the
// owner's block over, and the latest publication no later than the start of
// every live core's block (whose cache was empty then).
void GmModel::prune(Time t) {
  Time horizon = t;
  for (const CoreState& c : core_)
    if (c.live && (c.end == kNever || c.end > t)) horizon = std::min(horizon, c.start);
  for (auto it = runs_.begin(); it != runs_.end();) {
    Run& r = it->second;
    settle(r, t);
    if (r.pending.empty() && !owner_live(r, t) && (r.latest.core < 0 || r.latest.at <= horizon))
      it = drop_run(it);
    else
      ++it;
  }
  prune_at_ = std::max(kPruneMin, 2 * runs_.size());
}

// ------------------------------------------------------------------ caches

void GmModel::cache_insert(CoreState& c, Line a, Line b, Time t) {
  // Lines already cached keep their (older) copy: only the gaps are fetched.
  std::vector<CacheSeg>& v = c.cache;
  std::size_t i = first_after(v, a, [](const CacheSeg& x) { return x.hi; });
  Line cur = a;
  while (cur < b) {
    if (i < v.size() && v[i].lo <= cur) {
      cur = std::max(cur, v[i].hi);
      ++i;
      continue;
    }
    const Line gap_end = i < v.size() ? std::min(b, v[i].lo) : b;
    // Extend the previous segment when it was fetched at the same time.
    if (i > 0 && v[i - 1].hi == cur && v[i - 1].at == t) {
      v[i - 1].hi = gap_end;
    } else {
      v.insert(v.begin() + static_cast<std::ptrdiff_t>(i), CacheSeg{cur, gap_end, t});
      ++i;
    }
    cur = gap_end;
  }
}

void GmModel::cache_erase(CoreState& c, Line x) {
  std::vector<CacheSeg>& v = c.cache;
  const std::size_t i = first_after(v, x, [](const CacheSeg& s) { return s.hi; });
  if (i == v.size() || v[i].lo > x) return;
  const CacheSeg s = v[i];
  if (s.lo < x && x + 1 < s.hi) {
    v[i].hi = x;
    v.insert(v.begin() + static_cast<std::ptrdiff_t>(i) + 1, CacheSeg{x + 1, s.hi, s.at});
  } else if (s.lo < x) {
    v[i].hi = x;
  } else if (x + 1 < s.hi) {
    v[i].lo = x + 1;
  } else {
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void GmModel::dirty_insert(CoreState& c, Line a, Line b) {
  auto& v = c.dirty;
  // The first range ending at or after `a` (adjacent ranges merge).
  const std::size_t i = static_cast<std::size_t>(
      std::partition_point(v.begin(), v.end(), [a](const std::pair<Line, Line>& x) { return x.second < a; }) -
      v.begin());
  Line lo = a, hi = b;
  std::uint64_t had = 0;
  std::size_t j = i;
  for (; j < v.size() && v[j].first <= hi; ++j) {
    lo = std::min(lo, v[j].first);
    hi = std::max(hi, v[j].second);
    had += v[j].second - v[j].first;
  }
  if (j > i) {
    v[i] = {lo, hi};
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i) + 1, v.begin() + static_cast<std::ptrdiff_t>(j));
  } else {
    v.insert(v.begin() + static_cast<std::ptrdiff_t>(i), {lo, hi});
  }
  c.dirty_lines += (hi - lo) - had;
}

// ------------------------------------------------------------------ reports

// A task whose kernel has bypass loads: its stores and bypass loads are
// matched, whichever comes first in time.
void GmModel::check_bypass(const PhaseCtx& ctx, Span s, bool is_store, Time t) {
  TaskIo& io = task_io_[ctx.task->id];
  const IoRange me{s.lo, s.hi, ctx.core, ctx.block, ctx.phase->arg, t};
  for (const IoRange& o : is_store ? io.bypass : io.stores) {
    const std::uint64_t lo = std::max(me.lo, o.lo), hi = std::min(me.hi, o.hi);
    if (lo >= hi) continue;
    const IoRange& rd = is_store ? o : me;
    const IoRange& wr = is_store ? me : o;
    const Reader reader{ctx.task, rd.core, rd.block, rd.arg, rd.at};
    auto what = [&] {
      return "which " +
             (wr.block == rd.block && wr.core == rd.core
                  ? std::string("this block")
                  : "block " + std::to_string(wr.block) + " (core " + std::to_string(wr.core) + ")") +
             " of the same task stores at " + us_text(wr.at) +
             ": a bypass load reads GM directly and is not ordered with the kernel's own stores";
    };
    for (Line x = line_of(lo); x <= line_of(hi - 1); ++x)
      report(kBypass, reader, x, what,
             "a cached load (cache \"default\") after the writer's fence, the barrier and cacheinvalid");
  }
  (is_store ? io.stores : io.bypass).push_back(me);
  if (task_io_.size() > io_sweep_at_) {
    for (auto it = task_io_.begin(); it != task_io_.end();) {
      const Task* x = rt_.find(it->first);  // null once retired
      if (!x || x->state != TaskState::Pending)
        it = task_io_.erase(it);
      else
        ++it;
    }
    io_sweep_at_ = std::max(kIoSweepMin, 2 * task_io_.size());
  }
}

// The bytes of a dirty L2 line sit in the L2 only; HBM holds their older
// value. A store dirties its lines when it is issued, so a store still in
// flight counts. The reading task's own stores are coherency_bypass_write's.
void GmModel::check_bypass_stale(const PhaseCtx& ctx, Span s, Time t) {
  const Reader rd{ctx.task, ctx.core, ctx.block, ctx.phase->arg, t};
  const std::uint64_t l2_line = l2_.line_bytes();
  for (const L2Cache::Dirty& d : l2_.dirty_lines(s.lo, s.hi)) {
    if (d.writer == ctx.task->id) continue;
    const std::uint64_t lo = std::max(s.lo, d.line * l2_line), hi = std::min(s.hi, (d.line + 1) * l2_line);
    auto what = [&] {
      return "whose L2 line (GM " + hex(d.line * l2_line) + ", " + std::to_string(l2_line) + " B) holds a write by task " +
             task_display(d.writer) + " not yet written back to HBM: the intended lowering reads HBM directly and "
             "gets the bytes from before that write";
    };
    for (Line x = line_of(lo); x <= line_of(hi - 1); ++x)
      report(kBypassStale, rd, x, what, "a cached load (cache \"default\") of bytes written through the L2");
  }
}

std::string GmModel::tensor_label(const Tensor& v) const {
  const std::string n = data_.name(v.buffer);
  return n.empty() ? "buffer " + hex(v.addr) : "tensor \"" + n + "\"";
}

std::string GmModel::writer_label(int core, int block, TaskId task, const KernelDef* kernel, const Task& reader) const {
  std::string s = "core " + std::to_string(core) + " (block " + std::to_string(block);
  if (task != reader.id) s += " of task " + task_label(task, kernel);
  return s + ")";
}

template <class What>
void GmModel::report(int kind, const Reader& rd, Line line, const What& what, std::string_view missing) {
  if (!reported_.insert(ReportKey{rd.task->id, line, kind}).second) return;
  ++reports_;
  if (!obs_) return;
  const Tensor& v = rd.task->args[static_cast<std::size_t>(rd.arg)];
  const Line first = line_of(view_base(v));
  std::string msg = "task " + task_label(rd.task->id, rd.task->kernel) + " block " + std::to_string(rd.block) +
                    " on core " + std::to_string(rd.core) + " at " + us_text(rd.at) + ": " +
                    (kind == kBypass || kind == kBypassStale ? "a cache \"bypass\" load" : "a load") + " reads line " +
                    std::to_string(line - first) + " of " + tensor_label(v) + " (GM " + hex(line * line_bytes_) +
                    "), " + what() + "; missing: " + std::string(missing);
  obs_->on_warning(kKindNames[kind], msg);
}

}  // namespace npusim
