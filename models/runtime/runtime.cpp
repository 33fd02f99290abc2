#include "models/runtime/runtime.h"

#include <algorithm>
#include <cassert>
#include <unordered_set>

namespace npusim {

namespace {
// GM address ranges of the four ring heaps (64 GiB apart).
constexpr std::uint64_t kHeapBase = 0x2000000000ull;
constexpr std::uint64_t kHeapStride = 0x1000000000ull;

// A power-of-two alignment (the platforms' are) rounds with a mask, not a
// 64-bit division (a few per submit).
std::uint64_t round_up(std::uint64_t v, std::uint64_t a) {
  if ((a & (a - 1)) == 0) return a ? (v + a - 1) & ~(a - 1) : v;
  return (v + a - 1) / a * a;
}

// Whether the commit registers the argument's view in the tensormap (§4.1
// step 5, pto_orchestrator.cpp submit_task_common: INOUT and
// OUTPUT_EXISTING, unless the dependency is manual). discover_fanin counts
// these and keeps one lookup hint each; commit inserts them in the same
// order, so the two must agree argument for argument.
bool inserts_view(const SubmitArg& a) {
  return (a.tag == ArgTag::Inout || a.tag == ArgTag::OutputExisting) && !a.manual_dep;
}

// The set bits of a core mask (8 bits): two table reads, not a call of
// libgcc's __popcountdi2 per submit (the build does not assume POPCNT).
std::uint32_t bits_of(std::uint8_t mask) {
  static constexpr std::uint8_t kNibble[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
  return kNibble[mask & 15u] + kNibble[mask >> 4];
}

}  // namespace

Runtime::Runtime(const Platform& platform, const RunConfig& config, DataStore& data,
                 RuntimeHooks* hooks)
    : platform_(platform), config_(config), data_(data), hooks_(hooks ? hooks : &null_hooks_),
      whole_graph_(config.runtime == RuntimeKind::HostBuildGraph),
      ready_capacity_(whole_graph_ ? platform.limits.hbg_ready_queue_capacity : platform.limits.ready_queue_capacity) {
  for (int r = 0; r < kNumRings; ++r) {
    rings_[r].init(r, config_.task_window[r], config_.heap[r], config_.dep_pool[r], whole_graph_);
    rings_[r].set_spill_inline_cap(static_cast<std::uint64_t>(platform_.limits.fanin_inline_cap));
  }
  tensormap_.init(config_.tensormap_pool, &rings_,
                  static_cast<std::uint64_t>(platform_.limits.tensormap_cleanup_interval));
}

// ----------------------------------------------------------------- scopes

void Runtime::begin_orchestration() {
  scopes_.push_back(ScopeInfo{ScopeMode::Auto, "(unknown):0", 0, 0, {}});
  sample_scope(scopes_.back(), true);
}

bool Runtime::scope_begin(ScopeMode mode, const std::string& site, Time now) {
  int depth = static_cast<int>(scopes_.size());
  if (depth > max_user_scope_depth(platform_)) {
    // The scope stack holds PTO2_MAX_SCOPE_DEPTH entries, the root scope
    // included; begin_scope asserts before pushing another
    // (pto_orchestrator.cpp PTO2OrchestratorState::begin_scope). The AICPU
    // build keeps assert() (no NDEBUG), so the orchestrator aborts.
    latch_error(ErrorCode::AicpuAssert,
                "pto_orchestrator.cpp: PTO2OrchestratorState::begin_scope: Assertion `orch->scope_stack_top < "
                "static_cast<int32_t>(orch->scope_stack_capacity - 1) && \"Scope stack overflow\"' failed. "
                "(scope '" + site + "' would be nesting level " + std::to_string(depth + 1) + " of " +
                    std::to_string(platform_.limits.max_scope_depth) + ", the root scope included)",
                now);
    return false;
  }
  if (mode == ScopeMode::Auto && in_manual_scope()) {
    latch_error(ErrorCode::InvalidArgs, "auto scope nested inside manual scope is not supported", now);
    return false;
  }
  // A closed scope's record is reused (its site and task list keep their
  // capacity): opening a scope allocates nothing in steady state.
  if (spare_scopes_.empty()) spare_scopes_.emplace_back();
  scopes_.push_back(std::move(spare_scopes_.back()));
  spare_scopes_.pop_back();
  ScopeInfo& s = scopes_.back();
  s.mode = mode;
  s.site = site;
  s.depth = depth;
  s.ring = ring_of_depth(depth);
  sample_scope(s, true);
  return true;
}

std::size_t Runtime::scope_end() {
  ScopeInfo& s = scopes_.back();
  sample_scope(s, false);  // sampled before the scope's pins are released
  ScopeInfo closed = std::move(s);
  scopes_.pop_back();
  for (TaskId id : closed.tasks) {
    Task* t = find(id);
    if (!t) continue;
    t->fanout_refcount += kFanoutScopeBit;
    check_consumed(*t);
  }
  const std::size_t n = closed.tasks.size();
  closed.tasks.clear();
  spare_scopes_.push_back(std::move(closed));
  return n;
}

void Runtime::end_orchestration() {
  while (!scopes_.empty()) scope_end();
  completed_ += alloc_count_;  // alloc tasks join `completed` when orchestration ends
  orch_done_ = true;
}

void Runtime::sample_scope(const ScopeInfo& s, bool begin) {
  const Ring& r = rings_[s.ring];
  ScopeSample x;
  x.site = &s.site;
  x.begin = begin;
  x.depth = s.depth;
  x.ring = s.ring;
  x.task_window_start = r.tail();
  x.task_window_end = r.head();
  x.heap_start = r.heap_tail_unwrapped();
  x.heap_end = r.heap_top_unwrapped();
  x.dep_pool_start = r.dep_tail();
  x.dep_pool_end = r.dep_top();
  x.tensormap = tensormap_.in_use();
  hooks_->on_scope_sample(x);
}

bool Runtime::head_pinned_by_open_scope(int ring) const {
  const Ring& r = rings_[ring];
  if (r.live() == 0) return false;
  TaskId head = make_task_id(ring, r.tail());
  for (const ScopeInfo& s : scopes_)
    for (TaskId id : s.tasks)
      if (id == head) return true;
  return false;
}

// ----------------------------------------------------------------- submit

std::uint64_t Runtime::packed_output_total(const std::vector<SubmitArg>& args) const {
  std::uint64_t total = 0;
  for (const SubmitArg& a : args)
    if (a.tag == ArgTag::Output)
      total += round_up(a.tensor.buffer_bytes(), platform_.limits.packed_output_align);
  return total;
}

// The runtime sums the padded OUTPUT sizes into an int32 (pto_runtime2_types.h
// PTO2OutputLayout::total_output_size, pto_orchestrator.cpp
// calculate_output_layout) and the allocator takes a block only for a
// positive size (pto_ring_buffer.h PTO2TaskAllocator::alloc: `output_size > 0
// ? PTO2_ALIGN_UP(...) : 0`). Outputs totalling 2 GiB or more wrap: the block
// is the wrapped size's (0 when it is negative) while the outputs are placed
// at their unwrapped offsets, beyond the block, over the heap of the tasks
// that follow (Runtime::submit_prepare warns `output_size_wrap`).
std::uint64_t Runtime::packed_output_bytes(const std::vector<SubmitArg>& args) const {
  return packed_block_of(packed_output_total(args));
}

std::uint64_t Runtime::packed_block_of(std::uint64_t total) const {
  const auto size = static_cast<std::int32_t>(static_cast<std::uint32_t>(total & 0xffffffffu));
  return size > 0 ? round_up(static_cast<std::uint64_t>(size), platform_.limits.heap_block_align) : 0;
}

SubmitStatus Runtime::submit_prepare(const SubmitRequest& req, SubmitProgress& p, bool alloc,
                                     Time now) {
  if (p.stage == SubmitProgress::Stage::Start) {
    const int depth = scope_depth();
    // host_build_graph has one ring (prepare_task: ring_id = 0).
    const int ring = whole_graph_ ? 0 : ring_of_depth(depth);
    p.ring = ring;
    // Validation (§4.1 step 0).
    if (alloc) {
      if (req.args.empty()) {
        latch_error(ErrorCode::InvalidArgs, "alloc_tensors requires at least one TensorCreateInfo", now);
        return SubmitStatus::fatal(ErrorCode::InvalidArgs, ring);
      }
    }
    if (static_cast<int>(req.args.size()) > platform_.limits.max_tensor_args) {
      // The Arg builder refuses the tensor past the cap (pto_types.h); alloc_tensors
      // reports that error, submit_task / submit_dummy_task print a banner.
      const std::string max = std::to_string(platform_.limits.max_tensor_args);
      latch_error(ErrorCode::InvalidArgs,
                  alloc ? "Too many tensor args (max " + max + ")"
                        : "submit has " + std::to_string(req.args.size()) + " tensor args (max " + max + ")",
                  now);
      return SubmitStatus::fatal(ErrorCode::InvalidArgs, ring);
    }
    if (req.kernel && req.sync_start && req.block_num > 1) {
      const int limit = sync_start_limit(platform_, req.kernel->shape());
      if (req.block_num > limit) {
        latch_error(ErrorCode::RequireSyncStartInvalid,
                    "require_sync_start block_num=" + std::to_string(req.block_num) +
                        " > limit=" + std::to_string(limit) + " (deadlock guaranteed)",
                    now);
        return SubmitStatus::fatal(ErrorCode::RequireSyncStartInvalid, ring);
      }
    }
    // Scope check before alloc (§3.4 step 1).
    if (!whole_graph_ && scopes_.back().tasks.size() >= rings_[ring].window() - 1) {
      latch_error(ErrorCode::ScopeDeadlock,
                  "FATAL: Scope Deadlock Detected! (ring " + std::to_string(ring) + ")", now, ring);
      return SubmitStatus::fatal(ErrorCode::ScopeDeadlock, ring);
    }
    const std::uint64_t total = packed_output_total(req.args);
    p.heap_bytes = packed_block_of(total);
    if (total >= (std::uint64_t{1} << 31))
      hooks_->on_warning("output_size_wrap",
                         req.path_text() + ": the task's OUTPUT buffers total " + std::to_string(total) +
                             " bytes (padded), 2 GiB or more: the runtime's int32 total_output_size wraps to " +
                             std::to_string(static_cast<std::int32_t>(static_cast<std::uint32_t>(total & 0xffffffffu))) +
                             " and the heap allocator takes a " + std::to_string(p.heap_bytes) +
                             "-byte block, as on the device; the outputs lie beyond it, over the heap of the tasks "
                             "that follow, which the device overwrites (split the outputs over several tasks)");
    // Task slot + heap (§3.4 step 2; pto_ring_buffer.h PTO2TaskAllocator::alloc):
    // the heap tail is refreshed from the watermark at every attempt, then the
    // task window is checked before the heap, and both before committing either.
    Ring& r = rings_[ring];
    r.heap_refresh_tail();
    if (!r.window_has_room())
      return whole_graph_ ? graph_exhausted(Resource::TaskWindow, ring, now)
                          : SubmitStatus::block(Resource::TaskWindow, ring);
    // The heap's plan is taken once: a block that does not fit changes nothing.
    HeapBlock block;
    if (!r.heap_try_alloc(p.heap_bytes, block))
      return whole_graph_ ? graph_exhausted(Resource::Heap, ring, now) : SubmitStatus::block(Resource::Heap, ring);
    Task& t = r.take_slot();
    p.task = &t;
    t.kind = alloc ? TaskKind::Alloc : (req.kernel ? TaskKind::Kernel : TaskKind::Dummy);
    t.kernel = req.kernel;
    t.active_mask = req.kernel ? req.kernel->active_mask() : 0;
    t.shape = shape_of_mask(t.active_mask);
    t.block_num = req.kernel ? req.block_num : 1;
    t.early_resolve = req.early_resolve || alloc;
    // The attribute exists only for a launch of more than one block
  // (pto_orchestrator.cpp submit_task): a one-block launch asking for it is
  // an ordinary task (its queue, pending slots, early dispatch).
  t.sync_start = req.sync_start && t.block_num > 1;
    t.manual_scope = in_manual_scope();
    t.scope_bypass = 0;  // set with the arguments' copies below
    // take_slot left these empty: most submits have none to copy.
    if (req.predicate) t.predicate = req.predicate, t.cold = true;
    if (!req.writes.empty()) t.writes = req.writes, t.cold = true;
    if (!req.site.empty()) t.site = req.site, t.cold = true;
    t.submit_idx = submit_counter_++;
    t.heap_begin = block.begin;
    t.heap_end = block.end;
    t.heap_end_unwrapped = block.end_unwrapped;
    t.total_subtasks = static_cast<std::uint32_t>(t.block_num) *
                       bits_of(t.active_mask);
    // Place the OUTPUT buffers in the packed block.
    std::uint64_t off = block.begin;
    t.args.reserve(req.args.size());
    for (const SubmitArg& a : req.args) {
      // Task::kBypassArgs bits (a shift past the word would be undefined).
      const std::size_t i = t.args.size();
      t.scope_bypass |= static_cast<std::uint32_t>(a.cache_bypass && i < Task::kBypassArgs) << (i % Task::kBypassArgs);
      Tensor& v = t.args.emplace_back(a.tensor);  // copied once, into its place
      if (a.tag == ArgTag::Output) {
        v.buf_shape = v.shape;
        v.offset = {};
        v.addr = kHeapBase + static_cast<std::uint64_t>(ring) * kHeapStride + off;
        v.buffer = data_.new_buffer("", a.fill);
        v.owner = t.id;
        v.version = 0;
        // buffer.size is the padded size (PTO2TaskPayload::init passes layout.buffer_sizes[i]).
        const std::uint64_t padded = round_up(v.buffer_bytes(), platform_.limits.packed_output_align);
        v.storage_bytes = padded;
        off += padded;
      }
      t.arg_tags.push_back(a.tag);
    }
    p.work.args = static_cast<int>(req.args.size());
    p.stage = SubmitProgress::Stage::Allocated;
  }

  Task& t = *p.task;
  Ring& r = rings_[p.ring];

  if (p.stage == SubmitProgress::Stage::Allocated) {
    // Tensormap validity and periodic cleanup for this task's ring
    // (pto_orchestrator.cpp submit_task_common STEP 2 -> sync_tensormap), then
    // fanin discovery, which claims each live producer's fanout pin as it is
    // found (STEP 1 explicit deps, STEP 3 compute_task_fanin ->
    // append_fanin_or_fail). alloc_tensors does neither.
    if (t.kind != TaskKind::Alloc) {
      tensormap_.sync_for_submit(p.ring, task_local(t.id), r.tail());
      discover_fanin(req, p);
      if (whole_graph_ && p.merged.size() > kWholeGraphMaxFanin) return graph_exhausted(Resource::DepPool, p.ring, now);
    }
    p.stage = SubmitProgress::Stage::LookedUp;
  }

  if (p.stage == SubmitProgress::Stage::LookedUp) {
    // Fanin spill entries are taken during the lookups, beyond the inline cap
    // (append_fanin_or_fail -> PTO2FaninPool::ensure_space).
    if (p.spill && !r.spill_has_room(p.spill)) return SubmitStatus::block(Resource::FaninSpill, p.ring);
    // TensorMap room for the inserts (STEP 4, ensure_tensormap_capacity):
    // a forced reclaim of every ring's retired entries when short.
    if (p.inserts && !tensormap_.has_room(p.inserts)) {
      if (whole_graph_) return graph_exhausted(Resource::TensorMap, p.ring, now);
      reclaim_tensormap();
      if (!tensormap_.has_room(p.inserts)) return SubmitStatus::block(Resource::TensorMap, p.ring);
    }
    p.stage = SubmitProgress::Stage::Reserved;
  }
  return SubmitStatus::done();
}

SubmitStatus Runtime::graph_exhausted(Resource r, int ring, Time now) {
  // host_build_graph reports the exhausted resource on the spot: nothing is
  // reclaimed while the graph is built (host_build_graph pto_ring_buffer.h
  // report_capacity_exhausted; pto_orchestrator.cpp append_fanin_or_fail,
  // ensure_tensormap_capacity).
  ErrorCode code = ErrorCode::None;
  std::string banner;
  switch (r) {
    case Resource::TaskWindow: code = ErrorCode::FlowControlDeadlock; banner = "FATAL: Task Window Exhausted!"; break;
    case Resource::Heap: code = ErrorCode::HeapRingDeadlock; banner = "FATAL: Graph Heap Exhausted!"; break;
    case Resource::DepPool: code = ErrorCode::DepPoolOverflow; banner = "FATAL: Fanin Capacity Exhausted!"; break;
    default: code = ErrorCode::TensormapOverflow; banner = "FATAL: TensorMap Entry Pool Exhausted!"; break;
  }
  latch_error(code, banner, now, ring);
  return SubmitStatus::fatal(code, ring);
}

void Runtime::reclaim_tensormap() {
  std::array<std::uint64_t, kNumRings> alive{};
  for (int k = 0; k < kNumRings; ++k) alive[k] = rings_[k].tail();
  tensormap_.reclaim_all(alive);
}

SubmitStatus Runtime::submit_wire(SubmitProgress& p) {
  if (p.stage != SubmitProgress::Stage::Reserved) return SubmitStatus::done();
  // STEP 6 (pto_orchestrator.cpp submit_task_common) decides once, at the end
  // of the submit, between the paths: no claimed WAIT producer still running
  // (all_claimed_fanin_completed) -> ready without dep-pool entries; else
  // orch_wire_live_fanin_task -> PTO2DepListPool::ensure_space(wait_count),
  // which spins until `wait_count` entries are free (reclaim only) or latches
  // DEP_POOL_OVERFLOW, and never looks at the producers again. A producer that
  // completes during that wait does not release the submit; it only takes no
  // entry at the wiring (wire_fanin_task re-reads each producer's state).
  if (!p.wire_decided) {
    p.wire_decided = true;
    assert(p.producers.size() == p.merged.size());  // add_edge appends to both
    for (std::size_t i = 0; i < p.merged.size(); ++i) {
      if (!(p.merged[i].flags & kDepWait)) continue;
      if (p.producers[i]->state == TaskState::Pending) p.wire_live = true;
    }
  }
  Ring& r = rings_[p.ring];
  if (p.wire_live && !r.dep_has_room(p.wait_edges)) {
    r.dep_reclaim(static_cast<std::uint64_t>(platform_.limits.dep_pool_cleanup_interval));
    if (!r.dep_has_room(p.wait_edges)) return SubmitStatus::block(Resource::DepPool, p.ring);
  }
  p.stage = SubmitProgress::Stage::Wired;
  return SubmitStatus::done();
}

void Runtime::submit_commit(const SubmitRequest& req, SubmitProgress& p, Time now) {
  if (p.stage == SubmitProgress::Stage::Reserved) submit_wire(p);
  commit(req, p, now);
  p.stage = SubmitProgress::Stage::Done;
}

// The submit's edge records (deps.json lists each one, "a pair may repeat"),
// built in place at the end of p.edges, only when a hook reads them
// (RuntimeHooks::reads_edges). Without one every submit built ~2.5 records
// nobody read.
void Runtime::record_edge(SubmitProgress& p, EdgeSource source, int arg, TaskId pred, std::uint8_t flags,
                          Overlap overlap) {
  EdgeInfo& e = p.edges.emplace_back();
  e.source = source;
  e.arg = arg;
  e.pred = pred;
  e.flags = flags;
  e.overlap = overlap;
}

void Runtime::add_edge(SubmitProgress& p, TaskId pred, std::uint8_t flags) {
  // A producer already claimed by this submit: fold the flags into its edge,
  // no second pin (append_fanin_or_fail's mark_seen / or_flags_into_existing).
  for (FaninRef& f : p.merged)
    if (f.producer == pred) {
      f.flags |= flags;
      return;
    }
  // Decide-and-claim: a retired or CONSUMED producer is no dependency; a live
  // one is pinned now (fanout_count++), so it cannot be CONSUMED before this
  // task is wired (append_fanin_or_fail).
  Task* prod = find(pred);
  if (!prod || prod->state == TaskState::Consumed) return;
  prod->fanout_count++;
  // Every consumer, for the Perfetto writer's fanout hints (reads_edges).
  if (keep_edges()) prod->all_consumers.push_back(p.task->id), prod->cold = true;
  p.merged.push_back(FaninRef{pred, flags});
  p.producers.push_back(prod);
}

void Runtime::discover_fanin(const SubmitRequest& req, SubmitProgress& p) {
  Task& t = *p.task;
  // Explicit deps (§4.1 step 3): a retired dep is silently skipped.
  for (std::size_t i = 0; i < req.deps.size(); ++i) {
    const TaskId d = req.deps[i];
    if (d == t.id || retired(d)) continue;
    // add_dep_wait: ordering only, the producer is not retained (pto_types.h, DepFlags).
    const std::uint8_t flags = i < req.dep_flags.size() ? req.dep_flags[i] : kDepWait | kDepRetain;
    if (keep_edges()) record_edge(p, EdgeSource::Explicit, -1, d, flags, Overlap::Other);
    add_edge(p, d, flags);
  }
  if (!t.manual_scope) {
    for (std::size_t i = 0; i < req.args.size(); ++i) {
      const SubmitArg& a = req.args[i];
      if (a.tag == ArgTag::Output) continue;
      const Tensor& v = a.tensor;
      // Step A: creator retention.
      if (v.owner != kNoTask && v.owner != t.id && !retired(v.owner)) {
        if (keep_edges()) record_edge(p, EdgeSource::Creator, static_cast<int>(i), v.owner, kDepWait | kDepRetain, Overlap::Other);
        add_edge(p, v.owner, kDepWait | kDepRetain);
      }
      // Step B: tensormap lookup for INPUT / INOUT. An argument the commit
      // inserts (INOUT) takes the lookup's overlap of its view with itself
      // along as the insert's hint.
      const bool inserts = inserts_view(a);
      std::uint8_t self = TensorMap::kSelfUnknown;
      if ((a.tag == ArgTag::Input || a.tag == ArgTag::Inout) && !a.manual_dep) {
        ++p.work.lookups;
        scratch_matches_.clear();
        p.work.lookup_entries += tensormap_.lookup(v, a.tag == ArgTag::Inout, scratch_matches_, inserts ? &self : nullptr);
        for (const TensorMap::Match& m : scratch_matches_) {
          if (m.producer == t.id) continue;
          if (keep_edges()) record_edge(p, EdgeSource::Tensormap, static_cast<int>(i), m.producer, kDepWait, m.overlap);
          add_edge(p, m.producer, kDepWait);
        }
      }
      if (inserts) {
        ++p.inserts;
        p.self_hints.push_back(self);
      }
    }
  }
  for (const FaninRef& f : p.merged)
    if (f.flags & kDepWait) ++p.wait_edges;
  p.spill = rings_[p.ring].spill_of(p.merged.size());
}

void Runtime::commit(const SubmitRequest& req, SubmitProgress& p, Time now) {
  Task& t = *p.task;
  Ring& r = rings_[p.ring];
  // TensorMap inserts (§4.1 step 5). discover_fanin counted them
  // (p.inserts): most submits have none, and skip the walk of their arguments.
  if (!t.manual_scope && p.inserts) {
    assert(p.self_hints.size() == p.inserts);  // discover_fanin pushes one per insert
    std::size_t k = 0;
    for (std::size_t i = 0; i < req.args.size(); ++i) {
      const SubmitArg& a = req.args[i];
      if (inserts_view(a)) {
        tensormap_.insert(t.args[i], t.id, p.self_hints[k++]);  // t.args[i] is the looked-up view (not an OUTPUT)
      }
    }
  }
  // Wiring (STEP 6, wire_fanin_task): the fanout pins were claimed at lookup.
  // A WAIT producer still running takes one dep-pool entry (the consumer on
  // its fanout list); a completed one counts towards readiness at once.
  std::uint32_t waits = 0, done = 0;
  t.all_flagged = true;
  for (std::size_t i = 0; i < p.merged.size(); ++i) {
    const FaninRef& f = p.merged[i];
    Task* prod = p.producers[i];  // pinned: live and not CONSUMED
    t.fanin.push_back(f);
    if (f.flags & kDepWait) {
      ++waits;
      // Early dispatch (§5.8): an unflagged producer disqualifies the consumer
      // even if it already completed; alloc tasks always carry the flag.
      if (!prod->early_resolve) t.all_flagged = false;
      if (prod->state != TaskState::Pending || prod->published) ++t.dispatch_fanin;
      if (prod->state != TaskState::Pending) {
        ++done;
      } else {
        prod->fanout.push_back(t.id);
        r.dep_take(1);
      }
    }
  }
  r.spill_take(r.spill_of(t.fanin.size()));
  if (t.kind != TaskKind::Alloc) r.set_dep_mark(t, r.dep_top());
  // WAIT-only edges release their lifetime pin at wiring time (t.fanin is
  // p.merged). Consuming one producer retires no other: each is still pinned.
  for (std::size_t i = 0; i < p.merged.size(); ++i)
    if (!(p.merged[i].flags & kDepRetain)) {
      Task* prod = p.producers[i];
      prod->fanout_refcount++;
      check_consumed(*prod);
    }
  scopes_.back().tasks.push_back(t.id);
  if (t.cold && t.predicate) check_predicate_producers(t, req.path_text());
  hooks_->on_submitted(t, req, p.edges);

  if (t.kind == TaskKind::Alloc) {
    // Completed inline by the orchestrator, never queued (§4.3).
    t.fanin_count = t.fanin_refcount = 1;
    t.state = TaskState::Completed;
    t.complete_time = now;
    t.self_released = true;
    ++alloc_count_;
    hooks_->on_completed(t);
    return;
  }
  if (t.kind == TaskKind::Dummy) ++dummy_count_;
  t.wait_edges = waits;
  t.fanin_count = waits + 1;
  t.fanin_refcount += done + 1;
  // host_build_graph classifies the graph after it is built, in the boot
  // scan (boot_classify): nothing is queued or registered at the submit.
  if (whole_graph_) return;
  if (t.is_ready())
    route_ready(t, now, p.work);
  else
    maybe_candidate(t);
}

// host_build_graph's boot scan, one task (host_build_graph/runtime/scheduler/
// scheduler_cold_path.cpp classify_partition): a task completed on the host
// (an alloc_tensors task: its completion flag is set) is skipped; one whose
// producers have all completed is pushed ready (push_ready_routed, which
// latches READY_QUEUE_OVERFLOW on a full queue); any other registers on the
// wake list of its last unmet producer (classify_fanin_state, register_wake).
// No dispatch runs before every thread's slice is classified, so nothing
// completes during the scan and the outcome does not depend on its timing;
// only the order of the pushes and registrations does.
BootClass Runtime::boot_classify(std::uint64_t local, Time now, SubmitWork& work) {
  Task* t = rings_[0].find(local);
  if (!t || t->state != TaskState::Pending) return BootClass::Skipped;
  if (t->is_ready()) {
    route_ready(*t, now, work);
    return BootClass::Ready;
  }
  register_wake(*t);
  return BootClass::Waiting;
}

// The tasks host_build_graph's boot scan finds ready, per queue, whether or
// not the scan got to them: the roots of the graph (every WAIT producer an
// alloc_tensors task or none). A predicated root counts in its shape's queue
// (its predicate is read at the push).
BootRoots Runtime::boot_roots() {
  BootRoots b;
  if (!whole_graph_) return b;
  for (std::uint64_t local = 0; local < rings_[0].head(); ++local) {
    Task* t = rings_[0].find(local);
    if (!t || t->kind == TaskKind::Alloc || !t->is_ready() || t->state != TaskState::Pending) continue;
    if (t->shape == Shape::DUMMY)
      ++b.dummy;
    else
      ++(t->sync_start ? b.sync : b.ready)[static_cast<int>(t->shape)];
  }
  return b;
}

// host_build_graph's readiness (host_build_graph/runtime/scheduler/
// pto_scheduler.h classify_fanin_state, register_wake; the boot scan
// scheduler_cold_path.cpp classify_partition): a task with unmet producers
// waits on the wake list of the last unmet one in its fanin order (the
// builder's append order: explicit deps, then each argument's producers), the
// latest-submitted.
void Runtime::register_wake(Task& c) {
  for (auto it = c.fanin.rbegin(); it != c.fanin.rend(); ++it) {
    if (!(it->flags & kDepWait)) continue;
    Task* prod = find(it->producer);
    if (prod && prod->state == TaskState::Pending) {
      prod->wake.push_back(c.id);
      prod->cold = true;
      return;
    }
  }
}

// pl.spmd(..., predicate=) requires the operand's producer among the task's
// deps; the compiler can prove it only in simple cases. A producer that has
// not completed and that the task does not wait on, directly or through other
// tasks' WAIT edges, may write the operand after the scheduler read it: the
// decision is taken on a stale value. (The scheduler reads the element when
// the task is ready, pto_submit_types.h PredicateOp: every ancestor through
// WAIT edges has completed by then.)
// Whether `t` waits on `w` through WAIT edges, directly or through other
// tasks. Only unfinished tasks submitted after `w` can lead to it (a completed
// task's ancestors have completed; a task's producers were submitted before it).
bool Runtime::waits_on(const Task& t, const Task& w) {
  std::vector<const Task*> todo{&t};
  std::unordered_set<TaskId> seen;
  while (!todo.empty()) {
    const Task* c = todo.back();
    todo.pop_back();
    for (const FaninRef& f : c->fanin) {
      if (!(f.flags & kDepWait)) continue;
      if (f.producer == w.id) return true;
      const Task* p = find(f.producer);
      if (p && p->state != TaskState::Completed && p->submit_idx > w.submit_idx && seen.insert(p->id).second)
        todo.push_back(p);
    }
  }
  return false;
}

void Runtime::check_predicate_producers(const Task& t, const std::string& path) {
  const PredicateSpec& pr = *t.predicate;
  Tensor cell = pr.tensor;  // the one element the predicate reads
  std::int64_t rest = pr.element;
  if (cell.strided) cell.start = rest;
  for (int d = cell.ndims - 1; d >= 0; --d) {
    cell.shape[d] = 1;
    if (cell.strided) continue;
    cell.offset[d] = rest % cell.buf_shape[d];
    rest /= cell.buf_shape[d];
  }
  std::vector<TaskId> writers;
  if (cell.owner != kNoTask) writers.push_back(cell.owner);
  scratch_matches_.clear();
  tensormap_.lookup(cell, false, scratch_matches_);
  for (const TensorMap::Match& m : scratch_matches_) writers.push_back(m.producer);
  for (TaskId w : writers) {
    Task* prod = find(w);
    if (!prod || prod->state != TaskState::Pending || w == t.id) continue;
    if (waits_on(t, *prod)) continue;
    hooks_->on_warning("stale_predicate",
                       "the predicate of " + task_display(t.id) + (path.empty() ? "" : " (" + path + ")") +
                           " reads an element written by " + task_display(w) +
                           (prod->kernel ? " (" + prod->kernel->name + ")" : std::string()) +
                           ", which is not among its dependencies: the scheduler may read it before " +
                           task_display(w) + " writes it and decide on a stale value (add it to deps)");
  }
}

void Runtime::outputs_of(const Task& t, std::vector<Tensor>& out) const {
  out.clear();
  for (std::size_t i = 0; i < t.args.size(); ++i)
    if (t.arg_tags[i] == ArgTag::Output) out.push_back(t.args[i]);
}

void Runtime::read_producers(const Tensor& t, std::vector<TaskId>& out) {
  out.clear();
  if (t.owner != kNoTask) out.push_back(t.owner);
  scratch_matches_.clear();
  tensormap_.lookup(t, false, scratch_matches_);
  for (const TensorMap::Match& m : scratch_matches_)
    if (std::find(out.begin(), out.end(), m.producer) == out.end()) out.push_back(m.producer);
}

bool Runtime::producer_done(TaskId id) const {
  const Ring& r = rings_[task_ring(id)];
  std::uint64_t local = task_local(id);
  if (local < r.tail()) {
    // Retired: its slot (local mod window) may hold a newer live task.
    const std::uint64_t w = r.window();
    if (w == 0 || r.whole_graph()) return true;
    local += (r.tail() - local + w - 1) / w * w;
    if (local >= r.head()) return true;
  }
  if (local >= r.head()) return true;
  return r.slot(local).state != TaskState::Pending;
}

// set_tensor_data's wait_one_consumers (pto_runtime2.cpp
// wait_for_tensor_ready, wait_for_consumers = true): the producer has been
// released by all of its consumers (fanout_refcount reaches fanout_count, the
// scope bit aside). A retired producer has.
bool Runtime::consumers_done(TaskId id) {
  if (retired(id)) return true;
  const Task* p = find(id);
  if (!p) return true;
  return (p->fanout_refcount & ~kFanoutScopeBit) >= (p->fanout_count & ~kFanoutScopeBit);
}

// ------------------------------------------------------------------ ready

void Runtime::route_ready(Task& t, Time now, SubmitWork& work) {
  t.ready_claimed = true;
  t.ready_time = now;
  if (t.early == Task::Early::Staging && t.sync_start) {
    // try_early_dispatch_release + publish_ready_to_early_sync_drain: the
    // producers released it; its staged cores launch at the rendezvous
    // (rung by the scheduler); a cohort whose staging a thread owns is not
    // queued (that thread stages the rest, gated).
    t.early = Task::Early::Released;
    t.sync_ready = true;
    if (t.staged_cores > 0) work.released.push_back({&t, work.walk_edges, work.ready_pushes, work.predicate_evals});
    if (t.sync_owner || t.blocks_remaining() == 0) {
      hooks_->on_ready(t);
      return;
    }
  } else if (t.early == Task::Early::Staging) {
    if (t.staged_blocks > 0) {
      // Pre-staged: release by doorbell instead of queueing (§5.8); blocks
      // not staged yet go through the normal ready queue.
      t.early = Task::Early::Released;
      work.released.push_back({&t, work.walk_edges, work.ready_pushes, work.predicate_evals});
      if (t.blocks_remaining() > 0) {
        push_ready_entry(ready_queues_[static_cast<int>(t.shape)], t, now);
        ++work.ready_pushes;
      }
      hooks_->on_ready(t);
      return;
    }
    t.early = Task::Early::None;  // still queued as a candidate: dropped when popped
  }
  ++work.ready_pushes;
  if (t.cold && t.predicate) {
    ++work.predicate_evals;
    const PredicateSpec& pr = *t.predicate;
    std::int64_t v = data_.get(pr.tensor.buffer, pr.element);
    if (!compare(pr.cmp, v, pr.value)) {
      t.predicate_false = true;
      ++predicated_skip_count_;
    }
  }
  if (t.shape == Shape::DUMMY || t.predicate_false)
    push_ready_entry(dummy_queue_, t, now);
  else if (t.sync_start)
    push_ready_entry(sync_queues_[static_cast<int>(t.shape)], t, now);
  else
    push_ready_entry(ready_queues_[static_cast<int>(t.shape)], t, now);
  hooks_->on_ready(t);
}

void Runtime::requeue(Task& t) {
  push_ready_entry((t.sync_start ? sync_queues_ : ready_queues_)[static_cast<int>(t.shape)], t, t.ready_time);
}

// The device's ready queues are bounded (PTO2_READY_QUEUE_SIZE entries each,
// pto_runtime2_types.h: limits.ready_queue_capacity, and host_build_graph's
// own, limits.hbg_ready_queue_capacity). Stale entries (early candidates
// released since they were queued) hold their slots, as on the device.
// - The tensormap runtime's callers do not check a failed push
//   (pto_scheduler.h PTO2ReadyQueue::push returns false; push_ready_routed,
//   route_ready_once): the task is lost, never runs, and the run hangs until
//   the watchdog. npusim drops it the same way and says so.
// - host_build_graph checks it (its pto_scheduler.h push_ready_routed,
//   latch_ready_queue_overflow): READY_QUEUE_OVERFLOW (104) in
//   sched_error_code, and the run stops.
// The push itself is inline (push_ready_entry, runtime.h); here the queue is full.
void Runtime::push_full(Task& t, Time now) {
  const std::uint64_t capacity = ready_capacity_;
  dropped_ready_.push_back(t.id);
  if (whole_graph_) {
    LatchedError e;
    e.code = ErrorCode::ReadyQueueOverflow;
    e.by_scheduler = true;
    e.time = now;
    e.message = "a ready queue is full (" + std::to_string(capacity) + " entries): the push of " +
                task_display(t.id) + " fails";
    latch_error(e);
    return;
  }
  if (dropped_ready_.size() == 1)
    hooks_->on_warning("ready_queue_overflow",
                       "a ready queue is full (" + std::to_string(capacity) + " entries): the push of " +
                           task_display(t.id) +
                           " fails and the task is lost, as on the device (PTO2ReadyQueue::push returns false, "
                           "unchecked); it never runs and the run hangs (reported once per run)");
}

void Runtime::maybe_candidate(Task& c) {
  // host_build_graph stubs early dispatch: its propagate_dispatch_fanin is
  // empty ("Milestone 1", host_build_graph/runtime/scheduler/pto_scheduler.h),
  // so nothing enters its early-dispatch queues and every task reaches a core
  // through the ready queues; early_resolve has no effect there.
  if (whole_graph_) return;
  if (c.early != Task::Early::None || c.ready_claimed || !c.all_flagged || (c.cold && c.predicate) ||
      c.shape == Shape::DUMMY || c.wait_edges == 0 || c.dispatch_fanin < c.wait_edges)
    return;
  // A sync-start cohort waits in its own queue, for one owner to stage it
  // whole (try_enqueue_early_dispatch_candidate).
  auto& q = c.sync_start ? early_sync_queue_ : early_queues_[static_cast<int>(c.shape)];
  if (q.size() >= platform_.limits.early_dispatch_queue_capacity) return;  // queue full: stays NONE
  c.early = Task::Early::Staging;
  q.push_back(c.id);
  hooks_->on_early_candidate(c);
}

void Runtime::task_published(Task& t, Time /*now*/) {
  if (t.published) return;
  t.published = true;
  if (!t.early_resolve) return;
  for (auto it = t.fanout.rbegin(); it != t.fanout.rend(); ++it) {  // from fanout_head, newest first
    const TaskId cid = *it;
    Task* c = find(cid);
    if (!c || c->ready_claimed) continue;
    ++c->dispatch_fanin;
    maybe_candidate(*c);
  }
}

TaskId Runtime::pop_early(Shape s) {
  auto& q = early_queues_[static_cast<int>(s)];
  if (q.empty()) return kNoTask;
  const TaskId id = q.front();
  q.pop_front();
  return id;
}

Task* Runtime::pop_early_sync() {
  if (early_sync_queue_.empty()) return nullptr;
  const TaskId id = early_sync_queue_.front();
  early_sync_queue_.pop_front();
  return early_entry(id);
}

void Runtime::cancel_early_sync(Task& t) {
  t.sync_owner = false;
  if (t.sync_ready) {
    t.sync_ready = false;
    push_ready_entry(sync_queues_[static_cast<int>(t.shape)], t, t.ready_time);
    return;
  }
  if (t.early == Task::Early::Staging) early_sync_queue_.push_back(t.id);
}

// Asked at every scheduler iteration, mostly of empty queues: each queue is
// dropped of its stale front entries in place, without a call per shape.
bool Runtime::any_early_walk() {
  while (!early_sync_queue_.empty() && !early_entry(early_sync_queue_.front())) early_sync_queue_.pop_front();
  if (!early_sync_queue_.empty()) return true;
  for (RingQueue<TaskId>& q : early_queues_) {
    while (!q.empty() && !early_entry(q.front())) q.pop_front();
    if (!q.empty()) return true;
  }
  return false;
}

Task* Runtime::pop_dummy() {
  if (dummy_queue_.empty()) return nullptr;
  Task* t = dummy_queue_.front();
  dummy_queue_.pop_front();
  return t;
}

// ------------------------------------------------------ complete / release

int Runtime::complete_task(Task& t, Time now, SubmitWork& work) {
  t.state = TaskState::Completed;
  t.complete_time = now;
  if (t.cold && !t.predicate_false)
    for (const WriteSpec& w : t.writes) data_.set(t.args[w.arg].buffer, w.element, w.value);
  ++completed_;
  hooks_->on_completed(t);
  int visited = 0;
  if (whole_graph_) {
    // host_build_graph (pto_scheduler.h on_mixed_task_complete): the
    // completion flag is set (the consumers' counts below are the model's
    // bookkeeping, free), then the wake list is drained newest registration
    // first; each waiter is one visit: routed when every producer has
    // completed, else re-registered on its last unmet producer. Consumers
    // waiting on another producer's list cost this completion nothing.
    // `t` is Completed, so a waiter re-registers on another producer's list,
    // never on this one: the list is walked in place and cleared after
    // (its capacity kept with the slot, as the slot's other lists are).
    for (const TaskId cid : t.fanout)
      if (Task* c = find(cid)) c->fanin_refcount++;
    for (auto it = t.wake.rbegin(); it != t.wake.rend(); ++it) {
      work.walk_edges = ++visited;
      Task* c = find(*it);
      if (!c) continue;
      if (c->is_ready()) {
        if (!c->ready_claimed) route_ready(*c, now, work);
      } else {
        register_wake(*c);
      }
    }
    t.wake.clear();
    return visited;
  }
  // The fanout list is a prepend-linked list (wire_fanin_task prepends each
  // new consumer to fanout_head): walked newest consumer first.
  for (auto it = t.fanout.rbegin(); it != t.fanout.rend(); ++it) {
    const TaskId cid = *it;
    work.walk_edges = ++visited;
    Task* c = find(cid);
    if (!c) continue;
    c->fanin_refcount++;
    if (c->is_ready() && !c->ready_claimed) route_ready(*c, now, work);
  }
  return visited;
}

void Runtime::release_task(Task& t) {
  for (const FaninRef& f : t.fanin) {
    if (!(f.flags & kDepRetain)) continue;
    Task* prod = find(f.producer);
    if (!prod) continue;
    prod->fanout_refcount++;
    check_consumed(*prod);
  }
  t.self_released = true;
  hooks_->on_released(t);
  if (retired(t.id))
    rings_[t.ring].release_memory();  // CONSUMED (and retired) before this release
  else
    check_consumed(t);
}

// CONSUMED when COMPLETED and every fanout reference released, the scope's
// included, whether or not the task's own deferred release has run yet
// (pto_scheduler.h check_and_handle_consumed).
void Runtime::check_consumed(Task& t) {
  if (t.state == TaskState::Completed && t.fanout_refcount == t.fanout_count) consume(t);
}

void Runtime::consume(Task& t) {
  t.state = TaskState::Consumed;
  const int ring = t.ring;  // the advance below may release `t`'s slot chunk
  std::uint64_t n = rings_[ring].advance([this](Task& x) { hooks_->on_retired(x); });
  if (n) hooks_->on_ring_progress(ring);
}

// ------------------------------------------------------------- inspection

std::uint64_t Runtime::total_submitted() const {
  std::uint64_t n = 0;
  for (const Ring& r : rings_) n += r.head();
  return n;
}

bool Runtime::latch_error(ErrorCode code, const std::string& message, Time now, int ring) {
  LatchedError e;
  e.code = code;
  e.message = message;
  e.time = now;
  e.ring = ring;
  return latch_error(e);
}

bool Runtime::latch_error(const LatchedError& e) {
  LatchedError& slot = e.by_scheduler ? sched_error_ : orch_error_;
  if (slot.code != ErrorCode::None) return false;
  slot = e;
  hooks_->on_error(slot);
  return true;
}

}  // namespace npusim
