#include "sim/diagnose/diagnosis.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "models/common/present.h"

namespace npusim::diagnose {

namespace {

std::string bytes(std::uint64_t b) {
  char s[64];
  if (b >= (1ull << 30) && b % (1ull << 20) == 0)
    std::snprintf(s, sizeof s, "%llu bytes (%.1f GiB)", static_cast<unsigned long long>(b), b / 1073741824.0);
  else if (b >= (1ull << 20))
    std::snprintf(s, sizeof s, "%llu bytes (%.1f MiB)", static_cast<unsigned long long>(b), b / 1048576.0);
  else
    std::snprintf(s, sizeof s, "%llu bytes", static_cast<unsigned long long>(b));
  return s;
}

const char* state_name(TaskState s) {
  switch (s) {
    case TaskState::Pending: return "PENDING";
    case TaskState::Completed: return "COMPLETED";
    case TaskState::Consumed: return "CONSUMED";
  }
  return "?";
}

std::string task_label(const Task& t) {
  std::string s = task_display(t.id);
  if (t.kind == TaskKind::Alloc) return s + " (alloc_tensors)";
  if (t.kind == TaskKind::Dummy) return s + " (dummy)";
  return s + " (" + (t.kernel ? t.kernel->name : std::string("?")) + ")";
}

const Runtime::ScopeInfo* scope_pinning(const Runtime& rt, TaskId id) {
  for (const auto& s : rt.open_scopes())
    for (TaskId t : s.tasks)
      if (t == id) return &s;
  return nullptr;
}

// Why the oldest live task of a ring cannot be reclaimed yet.
std::string head_reason(Runtime& rt, const Task& h) {
  if (h.state == TaskState::Pending) {
    if (!h.is_ready())
      return "it is still waiting for " + std::to_string(h.fanin_count - h.fanin_refcount) + " producer(s)";
    return "it has not completed yet";
  }
  if (const auto* s = scope_pinning(rt, h.id))
    return "it is pinned by the open scope '" + s->site + "' (depth " + std::to_string(s->depth) +
           "), which can only close after the blocked submit";
  std::uint32_t consumers =
      (h.fanout_count & ~kFanoutScopeBit) - (h.fanout_refcount & ~kFanoutScopeBit);
  if (consumers) return "it is held by " + std::to_string(consumers) + " consumer(s) not yet released";
  return "its own release step has not run yet";
}

void describe_ring(Runtime& rt, int r, std::vector<std::string>& lines, nlohmann::json& j) {
  Ring& g = rt.ring(r);
  std::ostringstream o;
  // host_build_graph's one ring has no dep pool and reclaims nothing.
  const bool whole_graph = g.whole_graph();
  o << "ring " << r << ": " << g.live() << " live task(s) of window " << g.window() << " (max "
    << (g.window() - 1) << "), heap " << g.heap_used() << " of " << g.heap_capacity() << " bytes in use";
  if (!whole_graph) o << ", dep pool " << g.dep_used() << " of " << g.dep_pool_capacity();
  lines.push_back(o.str());
  nlohmann::json rj = {{"ring", r},
                       {"live_tasks", g.live()},
                       {"task_window", g.window()},
                       {"heap_used", g.heap_used()},
                       {"heap", g.heap_capacity()},
                       {"dep_pool_used", g.dep_used()},
                       {"dep_pool", g.dep_pool_capacity()}};
  if (g.live() && !whole_graph) {
    Task& h = g.slot(g.tail());
    std::string why = head_reason(rt, h);
    lines.push_back("  reclaim head " + task_label(h) + " is " + state_name(h.state) + ": " + why);
    rj["reclaim_head"] = {{"task", task_display(h.id)}, {"state", state_name(h.state)}, {"why", why}};
    if (const auto* s = scope_pinning(rt, h.id)) rj["reclaim_head"]["pinned_by_scope"] = s->site;
  }
  j["rings"].push_back(rj);
}

// Open scopes holding live tasks on `ring`, innermost last.
std::string scopes_on_ring(const Runtime& rt, int ring) {
  std::string out;
  for (const auto& s : rt.open_scopes()) {
    std::size_t n = 0;
    for (TaskId t : s.tasks)
      if (task_ring(t) == ring) ++n;
    if (!n) continue;
    out += (out.empty() ? "" : ", ") + ("'" + s.site + "' (depth " + std::to_string(s.depth) + ", " +
                                        std::to_string(n) + " tasks)");
  }
  return out.empty() ? "none" : out;
}

const char* core_type_name(CoreType t) {
  return t == CoreType::AIC ? "AIC" : t == CoreType::AIV ? "AIV" : "MIX (AIC+AIV)";
}

std::string list_text(const std::vector<int>& v) {
  std::string out;
  for (int c : v) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out;
}

// Where each placed block of a task stuck at a HARD barrier is when the run
// stops: every block placed is in exactly one of these. A block is counted
// once, by its lanes' most telling state (a mix block: any lane at the
// barrier, else any lane queued, else staged, else running).
struct BlockCensus {
  int placed = 0, not_placed = 0, finished = 0;
  int at_barrier = 0, pending = 0, pending_elsewhere = 0, staged = 0, running = 0;
  std::vector<int> pending_cores;  // stuck cores whose pending slot holds one of its blocks
};
BlockCensus census(const Task& t, const std::set<int>& arrived) {
  enum State { Running = 0, Staged = 1, PendingElsewhere = 2, Pending = 3, AtBarrier = 4 };
  std::map<int, State> in_flight;  // block index -> state
  std::set<int> pending_cores;
  for (const BlockRecord& b : t.blocks) {
    if (b.core < 0) continue;
    State s = Running;
    if (b.receive == kNever) {  // the token sits in the core's pending slot, never read
      s = arrived.count(b.core) ? Pending : PendingElsewhere;
      if (s == Pending) pending_cores.insert(b.core);
    } else if (b.start == kNever) {
      s = Staged;
    } else if (b.end == kNever && arrived.count(b.core)) {
      s = AtBarrier;
    }
    auto [it, fresh] = in_flight.emplace(b.block_idx, s);
    if (!fresh) it->second = std::max(it->second, s);
  }
  BlockCensus n;
  n.placed = t.next_block;
  n.not_placed = t.blocks_remaining();
  for (const auto& [block, s] : in_flight) {
    int* counts[] = {&n.running, &n.staged, &n.pending_elsewhere, &n.pending, &n.at_barrier};
    ++*counts[s];
  }
  n.finished = n.placed - static_cast<int>(in_flight.size());
  n.pending_cores.assign(pending_cores.begin(), pending_cores.end());
  return n;
}

// A HARD syncall that can never complete: which cores wait, which never
// arrive and why, and the fix.
void explain_barriers(Chip& chip, std::vector<std::string>& why, nlohmann::json& d) {
  const AicoreComplex& cores = chip.cores();
  const CoreMap& m = cores.map();
  for (const FftsBarrier::Episode& e : chip.ffts().open_episodes()) {
    std::set<int> arrived(e.arrived.begin(), e.arrived.end());
    std::map<TaskId, const Task*> tasks;
    for (const auto& w : cores.waiting_cores())
      if (arrived.count(w.core)) tasks[w.task->id] = w.task;
    std::string list;
    for (int c : e.arrived) list += (list.empty() ? "" : ",") + std::to_string(c);
    why.push_back(std::to_string(e.arrived.size()) + " core(s) [" + list + "] wait at a HARD syncall (FFTS, core_type " +
                  core_type_name(e.type) + ") since " + us_text(e.first_arrival) +
                  "; the FFTS barrier releases only when all " + std::to_string(e.participants) + " physical " +
                  core_type_name(e.type) + " cores arrive, and " + std::to_string(e.participants - e.counted) +
                  " never will:");
    if (static_cast<int>(e.arrived.size()) > e.counted)
      why.push_back("  " + std::to_string(e.arrived.size() - e.counted) + " of the waiting cores are not " +
                    core_type_name(e.type) + " cores: a core_type " + core_type_name(e.type) +
                    " barrier does not count them, so it can never complete for them (a kernel whose HARD syncall "
                    "names the other core type; PyPTO's HardSyncallOccupancy verifier and `npusim check` reject it)");
    nlohmann::json ej = {{"core_type", core_type_name(e.type)}, {"participants", e.participants},
                         {"arrived", e.arrived}, {"tasks", nlohmann::json::array()}};
    for (const auto& [id, t] : tasks) {
      const BlockCensus n = census(*t, arrived);
      std::string kname = t->kernel ? t->kernel->name : "?";
      std::string parts = std::to_string(n.at_barrier) + " at the barrier";
      if (n.pending) parts += ", " + std::to_string(n.pending) + " in the pending slot of a core stuck at the barrier";
      if (n.pending_elsewhere) parts += ", " + std::to_string(n.pending_elsewhere) + " in the pending slot of a busy core";
      if (n.staged) parts += ", " + std::to_string(n.staged) + " staged, waiting for their doorbell";
      if (n.running) parts += ", " + std::to_string(n.running) + " running";
      parts += ", " + std::to_string(n.finished) + " finished";
      why.push_back("  task " + task_display(id) + " (" + kname + ") has block_num " + std::to_string(t->block_num) +
                    (t->sync_start ? " with" : " without") + " sync_start; " + std::to_string(n.placed) +
                    " block(s) placed (" + parts + "), " + std::to_string(n.not_placed) + " not placed yet");
      if (t->block_num * e.cores_per_block < e.participants)
        why.push_back("  the launch is narrower than the barrier: " +
                      std::to_string(e.participants - t->block_num * e.cores_per_block) +
                      " physical " + core_type_name(e.type) + " cores run no block of it");
      if (n.pending)
        why.push_back("  " + std::to_string(n.pending) + " block(s) were dispatched into the pending slot of cores [" +
                      list_text(n.pending_cores) + "], behind blocks now stuck at the barrier: they start only when "
                      "those leave it, and the barrier waits for them");
      if (n.not_placed > 0)
        why.push_back("  its remaining blocks wait for cores held by blocks stuck at the barrier (the grid runs in waves)");
      ej["tasks"].push_back({{"task", task_display(id)}, {"kernel", kname}, {"block_num", t->block_num},
                             {"sync_start", t->sync_start}, {"placed", n.placed}, {"at_barrier", n.at_barrier},
                             {"in_pending_slot", n.pending + n.pending_elsewhere}, {"pending_slot_cores", n.pending_cores},
                             {"staged", n.staged}, {"running", n.running}, {"finished", n.finished},
                             {"not_placed", n.not_placed}});
    }
    // The physical cores that did not arrive.
    int idle = 0, busy = 0;
    for (int c = 0; c < m.total(); ++c) {
      const bool of_type = e.type == CoreType::MIX || (e.type == CoreType::AIC) == (m.kind(c) == CoreKind::AIC);
      if (!of_type || arrived.count(c)) continue;
      if (cores.idle(c)) ++idle;
      else ++busy;
    }
    why.push_back("  of the " + std::to_string(e.participants) + " physical " + core_type_name(e.type) + " cores, " +
                  std::to_string(e.counted) + " arrived and " + std::to_string(idle + busy) + " did not: " +
                  std::to_string(idle) + " idle, " + std::to_string(busy) + " running other work");
    ej["cores"] = {{"arrived", e.counted}, {"idle", idle}, {"busy", busy}};
    const std::string width = e.type == CoreType::AIV ? "pl.system.available_aiv_count()" : "pl.system.available_cluster_count()";
    why.push_back("  fix: launch one block per physical core (block_num " + std::to_string(
                      e.participants / e.cores_per_block) + ", " + width +
                  ") with sync_start=True so all blocks are co-resident, or use mode=\"soft\" (GM polling, "
                  "works at partial occupancy) with used_cores set to the blocks that take part; "
                  "`npusim check` flags such a launch without running it");
    d["barriers"].push_back(ej);
  }
}

// A SOFT syncall whose count is never reached.
void explain_soft_barriers(Chip& chip, std::vector<std::string>& why, nlohmann::json& d) {
  for (const GmModel::OpenSoftBarrier& b : chip.gm().open_soft_barriers()) {
    std::string list;
    for (int c : b.arrived) list += (list.empty() ? "" : ",") + std::to_string(c);
    char addr[32];
    std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(b.line_addr));
    why.push_back(std::to_string(b.arrived.size()) + " core(s) [" + list + "] poll a SOFT syncall counter (workspace line " +
                  addr + ") that waits for used_cores=" + std::to_string(b.used_cores) + " participants; only " +
                  std::to_string(b.arrived.size()) + " arrived and no other block of the launch is left to arrive: "
                  "used_cores must count the blocks that take part (mix: their AIC and AIV cores)");
    d["soft_barriers"].push_back({{"workspace_line", addr}, {"used_cores", b.used_cores}, {"arrived", b.arrived}});
  }
}

// A wait_flag whose notifications never all arrive (an L3 dispatch):
// which cores wait on which flag of this chip, and how many arrived.
void explain_flag_waits(Chip& chip, std::vector<std::string>& why, nlohmann::json& d) {
  const PeerPort* port = chip.port();
  if (!port) return;  // one chip: no interconnect
  d["flag_waits"] = nlohmann::json::array();
  for (const PeerPort::OpenWait& w : port->open_waits()) {
    const std::string kname = w.task->kernel ? w.task->kernel->name : "?";
    why.push_back("core " + std::to_string(w.core) + " (" + task_label(*w.task) + " block " + std::to_string(w.block) +
                  ") waits since " + us_text(w.since) + " on chip " + std::to_string(port->rank()) + "'s flag " +
                  std::to_string(w.flag) + " for " + std::to_string(w.count) + " notification(s); " +
                  std::to_string(w.value) + " arrived and no peer chip has a notify left to send");
    d["flag_waits"].push_back({{"chip", port->rank()}, {"core", w.core}, {"task", task_display(w.task->id)},
                               {"kernel", kname}, {"block", w.block}, {"flag", w.flag}, {"count", w.count},
                               {"arrived", w.value}, {"since_ns", to_ns(w.since)}});
  }
}

// Cores that wait in a cross-core pipe phase for ever (a pop whose tile is
// never pushed, a push or ~TPipe whose credit is never freed): which pipe,
// which ring, which tile, and what it waits for (models/aicore/cross_core.h).
void explain_pipe_waits(Chip& chip, std::vector<std::string>& why, nlohmann::json& d) {
  const std::vector<CrossCorePipes::OpenWait> waits = chip.pipes().open_waits();
  if (waits.empty()) return;
  d["pipe_waits"] = nlohmann::json::array();
  static const char* const lane_names[] = {"aic", "aiv0", "aiv1"};
  for (const CrossCorePipes::OpenWait& w : waits) {
    const std::string pipe = w.pipe.empty() ? "the kernel's unnamed pipe (cross_core_slots)" : "pipe \"" + w.pipe + "\"";
    why.push_back("core " + std::to_string(w.core) + " (" + task_label(*w.task) + " block " + std::to_string(w.block) +
                  ", lane " + lane_names[w.lane] + ", cluster " + std::to_string(w.cluster) + ") waits since " +
                  us_text(w.since) + " in a " + w.op + " on " + pipe + " (" + w.dir + ", " + w.ring + " ring, tile " +
                  std::to_string(w.tile) + ") for " + w.waits_for);
    d["pipe_waits"].push_back({{"core", w.core}, {"task", task_display(w.task->id)},
                               {"kernel", w.task->kernel ? w.task->kernel->name : "?"}, {"block", w.block},
                               {"cluster", w.cluster}, {"lane", lane_names[w.lane]}, {"pipe", w.pipe}, {"dir", w.dir},
                               {"ring", w.ring}, {"op", w.op}, {"tile", w.tile}, {"waits_for", w.waits_for},
                               {"since_ns", to_ns(w.since)}});
  }
  why.push_back("  each of these waits for a flag only another of them would set (or a lane the task does not have): the "
                "pipes' pushes and pops are ordered so that no core ever proceeds; reorder them (a producer pushes before "
                "it pops what its consumer sends back) or give the pipes more slots");
}

const char* size_field_of(Resource r) {
  switch (r) {
    case Resource::Heap: return "ring_heap";
    case Resource::TaskWindow: return "ring_task_window";
    case Resource::DepPool:
    case Resource::FaninSpill: return "ring_dep_pool";
    case Resource::TensorMap: return "tensormap_pool";
    case Resource::None: break;
  }
  return "";
}

}  // namespace

nlohmann::json Failure::to_json() const {
  nlohmann::json j = {{"name", name},
                      {"orch_error_code", orch_error_code},
                      {"sched_error_code", sched_error_code},
                      {"host_code", host_code},
                      {"message", message},
                      {"hint", hint},
                      {"detector", detector},
                      {"stall_time_ns", to_ns(stall_time)},
                      {"detector_since_ns", to_ns(detector_since)},
                      {"device_time_ns", to_ns(device_time)}};
  if (!sub_class.empty()) j["sub_class"] = sub_class;
  if (ring >= 0) j["ring"] = ring;
  j["host_log"] = host_log;
  j["device_log"] = device_log;
  j["diagnosis"] = diagnosis;
  j["diagnosis"]["explanation"] = diagnosis_lines;
  return j;
}

namespace {
// The scheduler watchdog as the detector of a failure, with its budget.
std::string watchdog_detector(const Chip& chip) {
  return "scheduler no-progress timeout (" +
         std::to_string(scheduler_timeout(chip.config(), chip.platform()) / 1000000000ull) + " ms)";
}

// A scheduler latched before the orchestrator: the schedulers stopped then,
// the orchestrator went on (its waits read orch_error_code only) until its
// own detector fired.
std::string sched_first_text(const Runtime& rt, const Chip& chip) {
  const LatchedError& s = rt.sched_error();
  return "the scheduler latched " + std::string(error_info(s.code).name) + " (" +
         std::to_string(static_cast<int>(s.code)) + ") first, at " + us_text(s.time) + ", by its " +
         watchdog_detector(chip) + ", and the schedulers stopped; the orchestrator's waits break only on an orchestrator error, so it went "
         "on until " + error_info(rt.orch_error().code).name + " at " + us_text(rt.orch_error().time) +
         ", and the host reports that code (runtime_status prefers orch_error_code)";
}

// Tasks a full ready queue lost (Runtime::push_ready_entry): the device says
// nothing of them; they are why the run hung.
// The smallest power of two >= n (the device's ready queues index by mask).
std::uint64_t pow2_at_least(std::uint64_t n) {
  std::uint64_t v = 1;
  while (v < n && v < (1ull << 62)) v <<= 1;
  return v;
}

void explain_dropped_ready(const Chip& chip, Runtime& rt, const Platform& p, std::vector<std::string>& why,
                           nlohmann::json& d) {
  const std::vector<TaskId>& lost = rt.dropped_ready();
  if (lost.empty()) return;
  std::string names;
  nlohmann::json ids = nlohmann::json::array();
  for (std::size_t i = 0; i < lost.size(); ++i) {
    ids.push_back(task_display(lost[i]));
    if (i < 8) names += (i ? ", " : "") + task_display(lost[i]);
  }
  if (lost.size() > 8) names += ", ...";
  const std::uint64_t cap = p.limits.hbg_ready_queue_capacity;
  // The queue size is PTO2_READY_QUEUE_SIZE, a build constant of the runtime
  // (host_build_graph/runtime/pto_runtime2_types.h; a power of two: the
  // queue indexes by mask), not a run option.
  const std::string constant =
      "the device's queues are PTO2_READY_QUEUE_SIZE entries (host_build_graph/runtime/pto_runtime2_types.h), a "
      "build constant of the runtime (a power of two), not a run option";
  if (rt.config().runtime == RuntimeKind::HostBuildGraph && !chip.boot_done()) {
    // The boot scan pushes every root before any dispatch (classify_partition
    // and the classify_arrived_ barrier, aicpu_executor.cpp).
    const BootRoots roots = rt.boot_roots();
    std::string per;
    const char* shape_names[3] = {"AIC", "AIV", "MIX"};
    for (int s = 0; s < 3; ++s) {
      if (roots.ready[s]) per += (per.empty() ? "" : ", ") + std::to_string(roots.ready[s]) + " " + shape_names[s];
      if (roots.sync[s])
        per += (per.empty() ? "" : ", ") + std::to_string(roots.sync[s]) + " sync-start " + shape_names[s];
    }
    if (roots.dummy) per += (per.empty() ? "" : ", ") + std::to_string(roots.dummy) + " dummy";
    const std::uint64_t need = pow2_at_least(roots.largest());
    why.push_back("host_build_graph's boot scan (classify_partition: every AICPU thread classifies a slice of the "
                  "task ids, and no thread dispatches before all slices are done) puts every root of the graph "
                  "(a task with no producer left to wait for) in the ready queues at once: " + per +
                  "; the push of " + names + " found its queue full (" + std::to_string(cap) +
                  " entries, limits.hbg_ready_queue_capacity) and latched READY_QUEUE_OVERFLOW before the first "
                  "dispatch. The device fails the same way: " + constant + ". A runtime built with "
                  "PTO2_READY_QUEUE_SIZE " + std::to_string(need) + " gets this graph past its boot (in npusim: "
                  "limits.hbg_ready_queue_capacity " + std::to_string(need) +
                  " in a copy of the platform file, run with --platform FILE); or give the graph fewer roots");
    d["boot_roots"] = {{"ready", roots.ready}, {"sync_start", roots.sync}, {"dummy", roots.dummy},
                       {"queue_size_needed", need}};
  } else if (rt.config().runtime == RuntimeKind::HostBuildGraph) {
    why.push_back("the push of " + names + " found its ready queue full (" + std::to_string(cap) +
                  " entries, limits.hbg_ready_queue_capacity): host_build_graph checks the push and stops the run "
                  "with READY_QUEUE_OVERFLOW. More tasks were ready at once than that: fewer independent tasks "
                  "behind one producer, or a larger queue (" + constant + ")");
  } else
    why.push_back(std::to_string(lost.size()) + " task(s) were lost to a full ready queue (" +
                  std::to_string(p.limits.ready_queue_capacity) + " entries, limits.ready_queue_capacity): " + names +
                  "; a failed push is not checked on the device, so they never ran and whatever waits on them waits "
                  "forever. More ready tasks than that at once: split the graph into scopes that let the first "
                  "ones finish, or submit in waves");
  d["dropped_ready"] = ids;
}
// When the device last did work (docs/failures.md, "When it stopped"): the
// latest completion, dispatch or other scheduler work (`last_work`: the end
// of the last scheduler phase that processed a task, or submit), kernel
// receive, start or end, arrival at a wait that never ends, the
// orchestrator's end, and the detector's own start (`since`). Work goes on
// after a latch until the other threads notice it (a scheduler busy
// dispatching checks the latch only when idle), so this may pass
// `device_time`; a kernel still computing counts up to the report (or that
// later work). What lies ahead of the simulation's end had not come. After
// it the device only waits: schedulers spinning, cores at a barrier, a flag
// or their doorbell, tokens in pending slots.
Time progress_stopped(Chip& chip, Time since, Time device_time, Time last_work) {
  const Time end = std::max<Time>(device_time, model_present());
  Time p = since;
  auto happened = [&](Time t) {
    if (t != kNever && t <= end) p = std::max(p, t);
  };
  std::vector<Time> computing;  // ends (or waits) a kernel computes towards
  happened(last_work);
  for (const auto& s : chip.schedulers()) {
    happened(s->last_completion());
    happened(s->last_progress());
  }
  Runtime& rt = chip.runtime();
  // The orchestrator's end: the last op of a finished program (its own fatal is the detector's time).
  if (!rt.has_orch_error()) happened(chip.orchestrator().end_time());
  if (chip.orchestrator().waiting().kind != OrchWait::Kind::None) happened(chip.orchestrator().waiting().since);
  if (chip.cores().first_start() != kNever) computing.push_back(chip.cores().last_end());
  for (int r = 0; r < kNumRings; ++r) {
    Ring& g = rt.ring(r);
    for (std::uint64_t local = g.tail(); local < g.head(); ++local)
      for (const BlockRecord& b : g.slot(local).blocks) {
        if (b.core < 0) continue;
        happened(b.dispatch);
        happened(b.receive);
        happened(b.start);
        happened(b.release);
        if (b.start != kNever && b.start <= end && b.end != kNever) computing.push_back(b.end);
      }
  }
  // A core reaching a wait computes until it.
  for (const AicoreComplex::Waiting& w : chip.cores().waiting_cores()) computing.push_back(w.since);
  const Time cap = std::max(p, device_time);
  for (Time t : computing) p = std::max(p, std::min(t, cap));
  return p;
}

}  // namespace

void FailureWitness::on_error(const LatchedError& e) {
  if (!chip_) return;
  // Each latch adds its detector's lines, in time order: a scheduler's
  // watchdog, then the orchestrator's own fatal when its wait went on.
  const std::vector<std::string> lines = device_log_lines(*chip_, e);
  device_log_.insert(device_log_.end(), lines.begin(), lines.end());
  if (seen_) return;
  seen_ = true;
  stall_ = classify_stall(*chip_);
}

Failure diagnose(Chip& chip, const FailureWitness* witness) {
  Runtime& rt = chip.runtime();
  const Platform& p = chip.platform();
  const OrchestratorThread& orch = chip.orchestrator();
  const OrchWait& w = orch.waiting();
  Failure f;
  const Time now = model_present();
  int running = 0;
  for (int c = 0; c < chip.cores().map().total(); ++c)
    if (!chip.cores().idle(c)) ++running;
  const bool witnessed = witness && witness->seen();
  const StallSnapshot stall = witnessed ? witness->stall() : classify_stall(chip);
  const std::uint64_t ready = stall.ready, waiting = stall.waiting;
  const std::uint64_t total = rt.total_submitted();
  const std::uint64_t completed = rt.completed();
  f.host_code = kAclAicpuException;
  std::vector<std::string>& why = f.diagnosis_lines;
  nlohmann::json& d = f.diagnosis;
  d["rings"] = nlohmann::json::array();

  if (rt.has_error()) {
    const LatchedError& e = rt.error();
    const ErrorInfo& info = error_info(e.code);
    f.name = info.name;
    f.hint = info.hint;
    // Both latches reach the host; an assert aborts the AICPU: no runtime
    // code is latched.
    if (rt.orch_error().code != ErrorCode::AicpuAssert) f.orch_error_code = static_cast<int>(rt.orch_error().code);
    f.sched_error_code = static_cast<int>(rt.sched_error().code);
    f.device_log = witnessed ? witness->device_log() : device_log_lines(chip, e);
    f.device_time = e.time;
    f.ring = e.ring;
    f.detector_since = e.thread >= 0 ? e.since : w.kind != OrchWait::Kind::None ? w.since : e.time;
    const bool structural = w.kind == OrchWait::Kind::Space && w.resource != Resource::TensorMap &&
                            e.message.find("Provable head-of-line") != std::string::npos;
    const bool whole_graph = rt.config().runtime == RuntimeKind::HostBuildGraph;
    switch (e.code) {
      case ErrorCode::HeapRingDeadlock:
      case ErrorCode::FlowControlDeadlock:
      case ErrorCode::DepPoolOverflow:
      case ErrorCode::TensormapOverflow:
        f.detector = whole_graph ? "host_build_graph capacity check at submit (the whole graph must fit; nothing "
                                   "is reclaimed while it is built)"
                     : structural ? "structural test after 1024 spins without reclaim progress"
                                  : "no-progress backstop (" +
                                        std::to_string(p.timeouts.alloc_no_progress / 1000000000ull) + " ms)";
        // host_build_graph fails at the submit, without waiting: the code
        // names the resource (its fanin cap, PTO2_MAX_FANIN, is no size).
        f.size_field = !whole_graph                                ? size_field_of(w.resource)
                       : e.code == ErrorCode::FlowControlDeadlock ? "ring_task_window"
                       : e.code == ErrorCode::HeapRingDeadlock    ? "ring_heap"
                       : e.code == ErrorCode::TensormapOverflow   ? "tensormap_pool"
                                                                  : "";
        break;
      case ErrorCode::TensorWaitTimeout:
        f.detector = "get_tensor_data timeout (" + std::to_string(p.timeouts.tensor_wait / 1000000000ull) + " ms)";
        break;
      case ErrorCode::ScopeDeadlock:
        f.detector = "scope check at submit";
        f.size_field = "ring_task_window";
        break;
      case ErrorCode::AicpuAssert:
        f.detector = "assert() in the runtime's AICPU code";
        break;
      case ErrorCode::ExplicitOrchFatal:
        f.detector = "rt_report_fatal() in the orchestration";
        break;
      case ErrorCode::SchedulerTimeout:
        f.detector = watchdog_detector(chip);
        f.sub_class = stall.sub_class;
        break;
      case ErrorCode::ReadyQueueOverflow:
        f.detector = "host_build_graph's checked ready-queue push (push_ready_routed)";
        f.size_field = "hbg_ready_queue_capacity";
        break;
      default:
        f.detector = "argument check at submit";
        break;
    }
    if (rt.has_orch_error() && rt.sched_error().code == ErrorCode::SchedulerTimeout) {
      // The watchdog fired first; the host still prints its sub-class line.
      f.sub_class = stall.sub_class;
      why.push_back(sched_first_text(rt, chip));
    }
  } else {
    // Nothing left to happen and the program did not finish: the device's
    // scheduler times out (§5.9) after its no-progress window.
    const ErrorInfo& info = error_info(ErrorCode::SchedulerTimeout);
    f.name = info.name;
    f.hint = info.hint;
    f.sched_error_code = static_cast<int>(ErrorCode::SchedulerTimeout);
    f.detector_since = now;
    f.device_time = now + scheduler_timeout(chip.config(), p);
    f.device_log = global_watchdog_lines(chip, f.device_time);
    f.detector = watchdog_detector(chip);
    f.sub_class = stall.sub_class;
  }
  if (rt.config().runtime == RuntimeKind::HostBuildGraph && f.orch_error_code) {
    // host_build_graph orchestrates on the host: what its orchestration
    // printed is the host's log, before the refusal to upload.
    f.host_log = host_failure_lines(chip, f.orch_error_code, f.sched_error_code, stall, f.device_log);
    f.device_log.clear();
  } else {
    f.host_log = host_failure_lines(chip, f.orch_error_code, f.sched_error_code, stall);
  }
  // The device's FATAL line: the detector's banner title or report_fatal's
  // line; for a scheduler timeout, the host's sub-class line.
  for (const std::vector<std::string>* log : {&f.device_log, &f.host_log})
    for (const std::string& line : *log)
      if (f.message.empty() && line.rfind("FATAL", 0) == 0) f.message = line;
  if (f.message.empty() && rt.has_error() && rt.error().code == ErrorCode::AicpuAssert) f.message = rt.error().message;
  if (f.message.empty() && !f.host_log.empty()) f.message = f.host_log.back();

  // ---- what only a simulator knows
  f.stall_time = progress_stopped(chip, f.detector_since, f.device_time, witness ? witness->last_work() : 0);
  why.push_back("progress stopped at " + us_text(f.stall_time) + " of simulated time; the device reports it at " +
                us_text(f.device_time) + " (" + f.detector +
                (f.detector_since < f.stall_time ? ", counting from " + us_text(f.detector_since) : std::string()) +
                ")");
  const SubmitProgress& sp = orch.pending_submit();
  const std::string op = w.kind != OrchWait::Kind::None ? w.path : orch.op_path();
  d["op"] = op;
  d["detector"] = f.detector;
  switch (rt.error().code) {
    case ErrorCode::ScopeDeadlock: {
      const auto& s = rt.open_scopes().back();
      const std::uint64_t win = rt.ring(s.ring).window();
      why.push_back("the submit at " + op + " is the " + std::to_string(s.tasks.size() + 1) +
                    "th task of scope '" + s.site + "' (depth " + std::to_string(s.depth) + ", ring " +
                    std::to_string(s.ring) + "); a ring with task window " + std::to_string(win) +
                    " admits at most " + std::to_string(win - 1) +
                    " live tasks, and a scope's tasks keep their slots until its scope_end, after this submit");
      d["scope"] = {{"site", s.site}, {"depth", s.depth}, {"ring", s.ring}, {"tasks", s.tasks.size()}};
      break;
    }
    case ErrorCode::HeapRingDeadlock: {
      Ring& g = rt.ring(w.ring);
      why.push_back("the submit at " + op + " needs " + bytes(sp.heap_bytes) + " of heap on ring " +
                    std::to_string(w.ring) + " (its OUTPUT buffers, each rounded up to " +
                    std::to_string(p.limits.packed_output_align) + " bytes); the ring's heap is " +
                    bytes(g.heap_capacity()) + ", " + bytes(g.heap_used()) + " held by " + std::to_string(g.live()) +
                    " live task(s)");
      if (sp.heap_bytes > g.heap_capacity()) why.push_back("it is larger than the whole heap: no reclaim can ever admit it");
      d["needs_bytes"] = sp.heap_bytes;
      break;
    }
    case ErrorCode::FlowControlDeadlock: {
      why.push_back("the submit at " + op + " needs a task slot on ring " + std::to_string(w.ring) +
                    " whose window is full while its heap has room; the open scopes holding its live tasks: " +
                    scopes_on_ring(rt, w.ring) +
                    (w.ring == kNumRings - 1 ? " (every scope at depth >= 3 shares ring 3)" : ""));
      break;
    }
    case ErrorCode::DepPoolOverflow: {
      Ring& g = rt.ring(w.ring);
      if (w.resource == Resource::FaninSpill)
        why.push_back("the submit at " + op + " has " + std::to_string(sp.merged.size()) + " fanin edges, " +
                      std::to_string(sp.spill) + " beyond the " + std::to_string(p.limits.fanin_inline_cap) +
                      " kept inline; they spill into ring " + std::to_string(w.ring) +
                      "'s fanin spill pool, sized like its dep pool (" + std::to_string(g.dep_pool_capacity()) + ")");
      else {
        // STEP 6 decided once, at the end of the submit, that a producer was
        // still running; ensure_space then waits for one free entry per WAIT
        // edge whatever the producers do meanwhile (submit_task_common,
        // orch_wire_live_fanin_task).
        std::uint64_t running = 0;
        for (const FaninRef& f : sp.merged) {
          const Task* prod = (f.flags & kDepWait) ? rt.find(f.producer) : nullptr;
          if (prod && prod->state == TaskState::Pending) ++running;
        }
        why.push_back("the submit at " + op + " waits on " + std::to_string(sp.wait_edges) +
                      " producer(s), one dep-pool entry each; a producer was still running when the submit "
                      "ended, so the runtime wires it and waits for " + std::to_string(sp.wait_edges) +
                      " free entries without looking at the producers again (" + std::to_string(running) +
                      " still running now); ring " + std::to_string(w.ring) +
                      "'s dep pool holds " + std::to_string(g.dep_pool_capacity()) + ", " +
                      std::to_string(g.dep_used()) + " in use");
      }
      if ((w.resource == Resource::FaninSpill ? sp.spill : sp.wait_edges) > g.dep_pool_capacity())
        why.push_back("more than the whole pool: no reclaim can ever make room");
      d["needs_entries"] = w.resource == Resource::FaninSpill ? sp.spill : sp.wait_edges;
      break;
    }
    case ErrorCode::TensormapOverflow:
      why.push_back("the submit at " + op + " registers " + std::to_string(sp.inserts) +
                    " writer(s) in the global tensormap, which holds " + std::to_string(rt.tensormap().in_use()) +
                    " of " + std::to_string(rt.tensormap().capacity()) +
                    " entries; an entry is freed only when its writer retires, and every live writer is "
                    "pinned (see the rings below)");
      break;
    case ErrorCode::TensorWaitTimeout: {
      Task* t = rt.find(w.task);
      if (t) {
        std::string state = state_name(t->state);
        // The first block in flight (a finished block's slot is free: core -1).
        const auto running = std::find_if(t->blocks.begin(), t->blocks.end(),
                                          [](const BlockRecord& b) { return b.core >= 0; });
        if (running != t->blocks.end()) {
          const BlockRecord& b = *running;
          if (b.start == kNever)
            state = "dispatched to core " + std::to_string(b.core) + " at " + us_text(b.dispatch) + ", not started";
          else
            state = "running on core " + std::to_string(b.core) + " since " + us_text(b.start) +
                    (b.end == kNever ? ", not ending" : ", ending at " + us_text(b.end));
        } else if (!t->is_ready()) {
          state = "waiting for " + std::to_string(t->fanin_count - t->fanin_refcount) + " producer(s)";
        }
        why.push_back("the read at " + op + " waits for " + task_label(*t) + " to complete; it is " + state);
      }
      break;
    }
    default:
      break;
  }
  if (w.kind == OrchWait::Kind::Space) {
    why.push_back("the orchestrator is blocked on the " + std::string(resource_name(w.resource)) + " of ring " +
                  std::to_string(w.ring) + " since " + us_text(w.since));
    d["orchestrator"] = {{"waiting_for", resource_name(w.resource)}, {"ring", w.ring}, {"op", w.path},
                         {"since_ns", to_ns(w.since)}};
  } else if (!rt.orchestration_done() && !rt.has_error()) {
    why.push_back("the orchestrator had not finished the program");
  }
  if (!rt.open_scopes().empty()) {
    std::string chain;
    for (const auto& s : rt.open_scopes())
      chain += (chain.empty() ? "" : " > ") + s.site + " (depth " + std::to_string(s.depth) + ", " +
               std::to_string(s.tasks.size()) + " tasks)";
    why.push_back("open scopes: " + chain);
  }
  explain_dropped_ready(chip, rt, p, why, d);
  d["barriers"] = nlohmann::json::array();
  explain_barriers(chip, why, d);
  d["soft_barriers"] = nlohmann::json::array();
  explain_soft_barriers(chip, why, d);
  explain_flag_waits(chip, why, d);
  explain_pipe_waits(chip, why, d);
  for (int r = 0; r < kNumRings; ++r)
    if (rt.ring(r).live() || r == f.ring) describe_ring(rt, r, why, d);
  why.push_back("tasks: " + std::to_string(completed) + " of " + std::to_string(total) + " completed; " +
                std::to_string(running) + " core(s) running, " + std::to_string(ready) + " task(s) ready, " +
                std::to_string(waiting) + " waiting on producers");
  d["tasks"] = {{"completed", completed}, {"submitted", total}, {"running_cores", running},
                {"ready", ready}, {"waiting", waiting}};
  return f;
}

namespace {

// Ring sizes have no upper bound of their own (a power of two >= 1024 heap
// bytes may be 2^63), so the arena's arithmetic saturates instead of wrapping
// to a small total that would pass the memory check.
std::uint64_t sat_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

// DeviceArena::kDefaultBaseAlign (src/common/utils/device_arena.h): each
// region is committed with one allocation of its size + 1023 bytes, so the
// base can be aligned.
constexpr std::uint64_t kArenaBaseAlign = 1024;

// One ring's share of the static arena: its task slots (descriptor, payload,
// slot state) in the PTO2 shared memory, its heap, and in the runtime arena
// its dep-list pool and fanin spill pool, both with dep_pool entries.
struct RingArena {
  std::uint64_t slots, heap, deps, spill;
  std::uint64_t total() const { return sat_add(sat_add(slots, heap), sat_add(deps, spill)); }
};
RingArena ring_arena(const Platform& p, const RunConfig& c, int r) {
  return {sat_mul(c.task_window[r], p.limits.arena_bytes_per_slot), c.heap[r],
          sat_mul(c.dep_pool[r], p.limits.arena_bytes_per_dep_entry),
          sat_mul(c.dep_pool[r], p.limits.arena_bytes_per_fanin_spill_entry)};
}

// The three allocations of setup_static_arena (DeviceRunnerBase, in this
// order): the GM heap of all rings, the PTO2 shared memory, the runtime arena.
// Each asks for its size + kArenaBaseAlign - 1 bytes.
struct ArenaRegion {
  const char* name;
  std::uint64_t request;
};
std::array<ArenaRegion, 3> arena_regions(const Platform& p, const RunConfig& c) {
  std::uint64_t heap = 0, sm = 0, runtime = 0;
  for (int r = 0; r < kNumRings; ++r) {
    const RingArena a = ring_arena(p, c, r);
    heap = sat_add(heap, a.heap);
    sm = sat_add(sm, a.slots);
    runtime = sat_add(runtime, sat_add(a.deps, a.spill));
  }
  return {{{"GM heap", sat_add(heap, kArenaBaseAlign - 1)},
           {"PTO2 shared memory", sat_add(sm, kArenaBaseAlign - 1)},
           {"runtime arena", sat_add(runtime, kArenaBaseAlign - 1)}}};
}

// derive_arena_static_sizes refuses heap sizes whose sum overflows 64 bits.
bool heap_sum_overflows(const RunConfig& c) {
  std::uint64_t sum = 0;
  for (int r = 0; r < kNumRings; ++r)
    if (__builtin_add_overflow(sum, c.heap[r], &sum)) return true;
  return false;
}

}  // namespace

void print_failure(const Failure& f, std::ostream& err) {
  for (const auto& line : f.host_log) err << line << "\n";
  if (!f.device_log.empty()) {
    err << "device log (AICPU), each line without the logger's prefix:\n";
    for (const auto& line : f.device_log) err << line << "\n";
  }
  err << "npusim diagnosis:\n";
  for (const auto& line : f.diagnosis_lines) err << "  " << line << "\n";
}

std::uint64_t arena_bytes(const Platform& p, const RunConfig& c) {
  if (heap_sum_overflows(c)) return UINT64_MAX;
  std::uint64_t total = 0;
  for (const ArenaRegion& a : arena_regions(p, c)) total = sat_add(total, a.request);
  return total;
}

Failure arena_failure(const Platform& p, const RunConfig& c) {
  Failure f;
  const std::uint64_t need = arena_bytes(p, c);
  f.detector = "runtime setup, before the first task";
  f.host_log.push_back(diagnose::ring_sizes_line(c));
  if (heap_sum_overflows(c)) {
    // No allocation is attempted: binding the callable fails (-1).
    f.name = "HEAP_SIZE_OVERFLOW";
    f.host_code = -1;
    f.message = "Total ring heap size overflows uint64_t";
    f.hint = "the four rings' heaps together must fit in 64 bits; shrink ring_heap";
    f.host_log.push_back(f.message);
    f.diagnosis_lines.push_back("the heaps of the four rings add up to more than 2^64 - 1 bytes "
                                "(derive_arena_static_sizes): nothing is allocated");
  } else {
    const AclErrorInfo& acl = *acl_error_info(kAclMemoryAllocation);
    f.name = acl.name;
    f.host_code = kAclMemoryAllocation;
    f.hint = acl.hint;
    // The first allocation that does not fit in what the earlier ones left.
    std::uint64_t used = 0, size = 0;
    const char* region = "";
    for (const ArenaRegion& a : arena_regions(p, c)) {
      if (sat_add(used, a.request) > p.topo.device_memory_bytes) {
        size = a.request;
        region = a.name;
        break;
      }
      used += a.request;
    }
    for (const std::string& line : rtmalloc_failure_lines(size)) f.host_log.push_back(line);
    f.message = f.host_log[1];
    f.diagnosis_lines.push_back("the static arena needs " + bytes(need) + " in three allocations, the device has " +
                                bytes(p.topo.device_memory_bytes) + " of usable GM; the " + region + " (" +
                                bytes(size) + " with its alignment slack) is the first that does not fit:");
    f.diagnosis["failed_region"] = region;
    f.diagnosis["failed_request_bytes"] = size;
  }
  nlohmann::json rings = nlohmann::json::array();
  for (int r = 0; r < kNumRings; ++r) {
    const auto [slots, heap, deps, spill] = ring_arena(p, c, r);
    f.diagnosis_lines.push_back("  ring " + std::to_string(r) + ": task window " + std::to_string(c.task_window[r]) +
                                " x " + std::to_string(p.limits.arena_bytes_per_slot) + " = " + bytes(slots) +
                                ", heap " + bytes(heap) + ", dep pool " + std::to_string(c.dep_pool[r]) + " x (" +
                                std::to_string(p.limits.arena_bytes_per_dep_entry) + " + " +
                                std::to_string(p.limits.arena_bytes_per_fanin_spill_entry) +
                                ") = " + bytes(sat_add(deps, spill)) + " (dep list + fanin spill)");
    rings.push_back({{"ring", r}, {"slots_bytes", slots}, {"heap_bytes", heap}, {"dep_bytes", deps},
                     {"fanin_spill_bytes", spill}});
  }
  f.diagnosis_lines.push_back("a scalar ring size applies to each of the four rings: the arithmetic is per ring");
  f.diagnosis["arena_bytes"] = need;
  f.diagnosis["device_memory_bytes"] = p.topo.device_memory_bytes;
  f.diagnosis["rings"] = rings;
  return f;
}

}  // namespace npusim::diagnose
