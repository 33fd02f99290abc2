#include "sim/record/critical_path.h"

#include <algorithm>
#include <optional>

#include "models/runtime/tensor.h"

namespace npusim::record {

using nlohmann::ordered_json;

const char* path_part_name(PathPart p) {
  switch (p) {
    case PathPart::Kernel: return "kernel";
    case PathPart::SchedOverhead: return "sched_overhead";
    case PathPart::CoreWait: return "core_wait";
    case PathPart::ProducerWait: return "producer_wait";
    case PathPart::Orchestrator: return "orchestrator";
  }
  return "?";
}

namespace {

// The walk's state: the cursor moves from w1 back to w0, each emit
// attributing [max(from, w0), cursor) to one part of the current step.
struct Walk {
  Time w0, cursor;
  CriticalPath& p;
  void emit(PathStepRec& step, PathPart part, Time from) {
    if (from == kNever) return;
    const Time lo = std::max(from, w0);
    if (lo >= cursor) return;
    if (!step.segments.empty() && step.segments.back().part == part && step.segments.back().from == cursor)
      step.segments.back().from = lo;  // one segment per part and stretch
    else
      step.segments.push_back({part, lo, cursor});
    p.parts[static_cast<std::size_t>(part)] += cursor - lo;
    cursor = lo;
  }
};

// The moment a task's consumers wait for: its last kernel end (clipped to the
// window; kNever, still running at the stop, is the window's end), or its
// completion without kernels.
Time done_of(const PathTask& t, Time w1) {
  if (t.start == kNever) return t.complete;
  return t.end == kNever ? w1 : std::min(t.end, w1);
}

}  // namespace

CriticalPath walk_critical_path(PathTasks tasks, Time w0, Time w1) {
  CriticalPath p;
  p.from = w0;
  p.to = std::max(w0, w1);
  // The end: the task whose kernel ends last (ties: the lower id).
  std::optional<std::uint32_t> cur;
  for (std::uint32_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].start == kNever || tasks[i].start > p.to) continue;
    if (!cur) {
      cur = i;
      continue;
    }
    const Time a = done_of(tasks[i], p.to), b = done_of(tasks[*cur], p.to);
    if (a > b || (a == b && tasks[i].id < tasks[*cur].id)) cur = i;
  }
  Walk w{w0, p.to, p};
  std::vector<bool> seen(tasks.size(), false);
  while (cur && !seen[*cur]) {
    seen[*cur] = true;
    const PathTask& t = tasks[*cur];
    p.steps.push_back({*cur, {}});
    PathStepRec& step = p.steps.back();
    if (t.start != kNever) {
      // Its core was busy after it became ready: from ready until the core
      // was freed it waited for the core (also when its block was already
      // dispatched to the busy core, to start when that core's block ends).
      const Time freed = t.core_free != kNever && t.ready != kNever && t.core_free > t.ready ? t.core_free : kNever;
      w.emit(step, PathPart::Kernel, t.start);
      w.emit(step, PathPart::SchedOverhead, freed == kNever || t.release == kNever ? t.release : std::max(t.release, freed));
      if (freed != kNever) {
        w.emit(step, PathPart::SchedOverhead, freed);
        w.emit(step, PathPart::CoreWait, t.ready);
      } else {
        w.emit(step, PathPart::SchedOverhead, t.ready);
      }
    } else {
      w.emit(step, PathPart::SchedOverhead, t.ready);  // a dummy: ready to complete
    }
    // The producer that completed last; it held the task up when it
    // completed after the task's submit began.
    std::optional<std::uint32_t> prev;
    const auto [preds_first, preds_last] = tasks.preds(*cur);
    for (const std::uint32_t* it = preds_first; it != preds_last; ++it) {
      const std::uint32_t q = *it;
      if (q >= tasks.size() || tasks[q].complete == kNever || done_of(tasks[q], p.to) == kNever) continue;
      if (!prev || tasks[q].complete > tasks[*prev].complete ||
          (tasks[q].complete == tasks[*prev].complete && tasks[q].id < tasks[*prev].id))
        prev = q;
    }
    if (prev && tasks[*prev].complete >= t.submit && !seen[*prev]) {
      w.emit(step, PathPart::ProducerWait, done_of(tasks[*prev], p.to));
      cur = prev;
    } else {
      w.emit(step, PathPart::Orchestrator, w0);
      cur.reset();
    }
  }
  if (p.steps.empty())  // no kernel started in the window
    p.parts[static_cast<std::size_t>(PathPart::Orchestrator)] = p.to - p.from;
  std::reverse(p.steps.begin(), p.steps.end());
  for (PathStepRec& s : p.steps) std::reverse(s.segments.begin(), s.segments.end());
  return p;
}

ordered_json critical_path_json(const CriticalPath& p, PathTasks tasks, std::size_t max_steps) {
  ordered_json j;
  j["from_ns"] = to_ns(p.from);
  j["to_ns"] = to_ns(p.to);
  j["span_ns"] = to_ns(p.to - p.from);
  j["tasks"] = p.steps.size();
  ordered_json parts = ordered_json::object();
  for (int k = 0; k < kPathParts; ++k) parts[path_part_name(static_cast<PathPart>(k))] = to_ns(p.parts[static_cast<std::size_t>(k)]);
  j["parts_ns"] = parts;
  const std::size_t from = p.steps.size() > max_steps ? p.steps.size() - max_steps : 0;
  j["steps_omitted"] = from;
  ordered_json steps = ordered_json::array();
  for (std::size_t i = from; i < p.steps.size(); ++i) {
    const PathStepRec& s = p.steps[i];
    const PathTask& t = tasks[s.task];
    ordered_json step;
    step["task"] = task_display(t.id);
    step["task_id"] = t.id;
    step["kind"] = t.kind;
    step["kernel"] = std::string(t.kernel);
    step["from_ns"] = to_ns(s.segments.empty() ? p.from : s.segments.front().from);
    step["to_ns"] = to_ns(s.segments.empty() ? p.from : s.segments.back().to);
    ordered_json segs = ordered_json::array();
    for (const PathSegment& g : s.segments)
      segs.push_back({{"part", path_part_name(g.part)}, {"from_ns", to_ns(g.from)}, {"to_ns", to_ns(g.to)}});
    step["segments"] = segs;
    steps.push_back(step);
  }
  j["steps"] = steps;
  return j;
}

// ---------------------------------------------------------------- collector

std::uint32_t CriticalPathCollector::number(TaskId id) {
  const auto [n, fresh] = index_.insert(id);
  if (fresh) {
    tasks_.emplace_back();
    tasks_.back().id = id;
  }
  return n;
}

void CriticalPathCollector::on_submitted(const Task& t, const SubmitRequest&, const std::vector<EdgeInfo>& edges) {
  const std::uint32_t n = number(t.id);
  // The producers go to one pool, a range per task (a vector per task was
  // an allocation and a free per task); a task submitted again takes a new range.
  const std::size_t begin = preds_.size();
  for (const EdgeInfo& e : edges)
    if (e.pred != kNoTask && e.pred != t.id && (e.flags & kDepWait)) preds_.push_back(number(e.pred));
  const auto first = preds_.begin() + static_cast<std::ptrdiff_t>(begin);
  std::sort(first, preds_.end());
  preds_.erase(std::unique(first, preds_.end()), preds_.end());
  tasks_[n].preds_from = static_cast<std::uint32_t>(begin);
  tasks_[n].preds_to = static_cast<std::uint32_t>(preds_.size());
}

void CriticalPathCollector::add_block(std::uint32_t task, const BlockRecord& b) {
  // A block still running at the stop (a failed run) has no end yet.
  const Time end = b.end == kNever || b.end < b.start || b.end == 0 ? kNever : b.end;
  const auto core = static_cast<std::size_t>(b.core);
  if (core >= blocks_.size()) blocks_.resize(core + 1);
  blocks_[core].push_back({b.start, end, task});
}

void CriticalPathCollector::on_block_finished(const Task& t, const BlockRecord& b) {
  if (b.core < 0 || b.start == kNever) return;
  add_block(number(t.id), b);
}

void CriticalPathCollector::on_retired(Task& t) {
  const std::uint32_t n = number(t.id);
  PathTask& r = tasks_[n];
  r.kind = t.kind == TaskKind::Alloc ? "alloc"
           : t.kind == TaskKind::Dummy ? "dummy"
           : t.predicate_false      ? "predicated_skip"
                                    : "kernel";
  r.kernel = t.kernel ? std::string_view(t.kernel->name) : std::string_view();
  r.submit = t.submit_start;
  r.ready = t.ready_time;
  r.complete = t.complete_time;
  const BlockTimes bt = t.block_times();
  r.release = bt.count ? bt.first_release : kNever;
  // Blocks still in flight (a failed run's live tasks): those that started.
  for (const BlockRecord& b : t.blocks)
    if (b.core >= 0 && b.start != 0 && b.start != kNever) add_block(n, b);
}

// Each core's blocks in (start, task) order. A core runs its blocks one
// after another and they arrive as they finish, so they are nearly always in
// that order already; a core's list is sorted only when it is not (a failed
// run's blocks still in flight, added at retirement). A std::sort of every
// block by (core, start, task) was about a percent of a run with every output on.
void CriticalPathCollector::sort_blocks() {
  const auto before = [](const Block& a, const Block& b) { return a.start != b.start ? a.start < b.start : a.task < b.task; };
  for (std::vector<Block>& on_core : blocks_)
    if (!std::is_sorted(on_core.begin(), on_core.end(), before)) std::sort(on_core.begin(), on_core.end(), before);
}

ordered_json CriticalPathCollector::to_json(Time w0, Time w1) {
  for (PathTask& t : tasks_) t.start = t.end = t.core_free = kNever;
  // Each task's first start and last end; the moment the core of its first
  // block was freed by the block before it there (sorted by core, start).
  sort_blocks();
  std::vector<Time> last_end(tasks_.size(), 0);  // 0: no block ended yet (kNever: one is running)
  for (const std::vector<Block>& on_core : blocks_)
    for (const Block& b : on_core) {
      PathTask& t = tasks_[b.task];
      t.start = std::min(t.start, b.start);
      if (b.end == kNever || last_end[b.task] == kNever) last_end[b.task] = kNever;
      else last_end[b.task] = std::max(last_end[b.task], b.end);
    }
  for (std::size_t i = 0; i < tasks_.size(); ++i)
    if (tasks_[i].start != kNever) tasks_[i].end = last_end[i];
  for (const std::vector<Block>& on_core : blocks_) {
    Time freed = kNever;  // the latest end of the earlier blocks on this core
    for (const Block& b : on_core) {
      PathTask& t = tasks_[b.task];
      if (b.start == t.start && freed != kNever && freed <= b.start &&
          (t.core_free == kNever || freed > t.core_free))
        t.core_free = freed;
      if (b.end != kNever) freed = freed == kNever ? b.end : std::max(freed, b.end);
    }
  }
  bool any = false;
  for (const PathTask& t : tasks_) any = any || t.start != kNever;
  if (!any || w1 < w0) return nullptr;
  const PathTasks tasks(tasks_, preds_);
  return critical_path_json(walk_critical_path(tasks, w0, w1), tasks, kPathListed);
}

}  // namespace npusim::record
