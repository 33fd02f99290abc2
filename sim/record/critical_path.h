// The critical path of a run (summary.json's `critical_path`, docs/outputs.md
// "summary.json: critical_path"): from the end of the makespan (the last
// kernel end) back to its start (the first kernel start), every interval
// attributed to one part, so that the parts add up to makespan_ns exactly
// (integer picoseconds).
//
// The walk starts at the task whose kernel ends last and steps back, task by
// task, through the moment that held each one up:
//   kernel          its kernel time, first block start to last block end
//   sched_overhead  dispatch (or, early-staged, its doorbell) to kernel start;
//                   ready to dispatch while its core was free; a task
//                   without a kernel (dummy), ready to complete
//   core_wait       ready while the core its first block ran on was still
//                   busy with an earlier block
//   producer_wait   its producer's last kernel end (a task without kernels:
//                   its completion) to its own ready moment: the runtime
//                   seeing the producer finish and releasing its consumers
//   orchestrator    the task became ready at its submit (its producers were
//                   done before, or it had none): the orchestrator had not
//                   reached it; the path ends there, the rest of the window
//                   back to the first kernel start is the orchestrator's
// A step's producer is the one (deps edge with the WAIT flag) that completed
// last, when it completed after the task was submitted.
//
// The same walk as the runtime's own tool (simpler_setup/tools/critical_path.py,
// observed_path / analyze_rank) in its end and its tiling of [first start,
// last end]; it differs where that tool follows a core predecessor or counts
// a stall (docs/outputs.md lists the differences).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/runtime/observer.h"
#include "sim/record/big_array.h"
#include "sim/record/json_out.h"

namespace npusim::record {

enum class PathPart : std::uint8_t { Kernel, SchedOverhead, CoreWait, ProducerWait, Orchestrator };
constexpr int kPathParts = 5;
const char* path_part_name(PathPart p);

// What the walk needs of one task (times in ps, kNever for a moment that never came).
struct PathTask {
  TaskId id = kNoTask;
  const char* kind = "kernel";         // task_stats.csv's kind: kernel, dummy, alloc, predicated_skip
  std::string_view kernel;             // its kernel's name (the trace outlives the walk); empty without one
  Time submit = kNever;                // its submit began
  Time ready = kNever;
  Time release = kNever;               // first dispatch, or an early-staged block's doorbell
  Time start = kNever, end = kNever;   // first kernel start, last kernel end (kNever: running at the stop)
  Time complete = kNever;
  Time core_free = kNever;             // the core of its first block: the previous block there ended
  // Its producers (indices into the task list; WAIT edges) are
  // pool[preds_from, preds_to) of the list's pool (PathTasks): one array for
  // every task's, not a vector allocated per task.
  std::uint32_t preds_from = 0, preds_to = 0;
};

// One interval of the path.
struct PathSegment {
  PathPart part;
  Time from, to;
};

// One task on the path, its segments in time order.
struct PathStepRec {
  std::uint32_t task;
  std::vector<PathSegment> segments;
};

struct CriticalPath {
  Time from = 0, to = 0;                // the window: first kernel start, makespan end
  std::vector<PathStepRec> steps;       // in time order
  std::array<Time, kPathParts> parts{}; // sum to - from
};

// The task list the walk reads and the pool of their producers: the
// collector's GrowArrays (or a test's vectors), without a copy.
class PathTasks {
 public:
  PathTasks() = default;  // none
  PathTasks(const GrowArray<PathTask>& v, const GrowArray<std::uint32_t>& pool)
      : p_(v.data()), n_(v.size()), pool_(pool.data()) {}
  PathTasks(const std::vector<PathTask>& v, const std::vector<std::uint32_t>& pool)
      : p_(v.data()), n_(v.size()), pool_(pool.data()) {}
  const PathTask& operator[](std::size_t i) const { return p_[i]; }
  std::size_t size() const { return n_; }
  // Task i's producers, [first, second).
  std::pair<const std::uint32_t*, const std::uint32_t*> preds(std::size_t i) const {
    const PathTask& t = p_[i];
    return {pool_ + t.preds_from, pool_ + t.preds_to};
  }

 private:
  const PathTask* p_ = nullptr;
  std::size_t n_ = 0;
  const std::uint32_t* pool_ = nullptr;
};

// The walk over [w0, w1]; `tasks` with started kernels (start != kNever)
// are the candidates for its end. No candidate or an empty window: no steps,
// the whole window (if any) is the orchestrator's.
CriticalPath walk_critical_path(PathTasks tasks, Time w0, Time w1);

constexpr std::size_t kPathListed = 40;  // steps summary.json lists (the path's end)

// summary.json's `critical_path` (the last `max_steps` steps listed).
nlohmann::ordered_json critical_path_json(const CriticalPath& p, PathTasks tasks,
                                          std::size_t max_steps);

// Gathers PathTask records from a run's observer calls (every task and
// block, as the overhead sweep does).
class CriticalPathCollector : public SimObserver {
 public:
  void on_submitted(const Task& t, const SubmitRequest&, const std::vector<EdgeInfo>& edges) override;
  void on_block_finished(const Task& t, const BlockRecord& b) override;
  void on_retired(Task& t) override;
  bool reads_edges() const override { return true; }
  // The path over [w0, w1] as summary.json has it; null when no kernel started.
  nlohmann::ordered_json to_json(Time w0, Time w1);

 private:
  std::uint32_t number(TaskId id);
  void add_block(std::uint32_t task, const BlockRecord& b);
  void sort_blocks();
  struct Block { Time start, end; std::uint32_t task; };
  TaskIndex index_;
  GrowArray<PathTask> tasks_;  // on huge pages, grown in place: big_array.h
  std::vector<std::vector<Block>> blocks_;  // by core, as they arrived (sort_blocks: in start order)
  GrowArray<std::uint32_t> preds_;  // every task's producers, a range per task (PathTask::preds_from)
};

}  // namespace npusim::record
