// chip_swimlane_records.json, levels 1-4 (runtime-semantics.md §8.2).
//
// Cycle values need the platform's system counter, which a writer only learns
// in finish() (OutputWriter's interface); so the event records are appended
// as they are (fixed-size binary rows in simulated picoseconds) to scratch
// files: the blocks (read twice, for aicore_tasks and aicpu_tasks), the
// orchestrator's submits and one file of phases per scheduler thread; finish()
// formats them in order, converting with Platform::sys_cnt. The per-event cost
// is one small copy.
#include <algorithm>
#include <array>
#include <type_traits>

#include "models/common/core_map.h"
#include "sim/record/json_out.h"
#include "sim/record/writer.h"

namespace npusim::record {
namespace {

constexpr const char* kFile = "chip_swimlane_records.json";
constexpr int kMinSchedArrays = 4;  // PLATFORM_MAX_AICPU_THREADS: always 4 inner arrays

// The event records are plain data and are stored as they are.
struct BlockRow {
  TaskId task;
  BlockRecord b;
};
static_assert(std::is_trivially_copyable_v<SchedPhaseRecord> && std::is_trivially_copyable_v<OrchSubmitRecord>);

// Ready-queue depths as the device stores them (int16).
int clamp16(int v) { return std::clamp(v, -32768, 32767); }

void put_depths(JsonBuf& b, const std::array<int, 3>& d) {
  b.ch('[').i(clamp16(d[0])).ch(',').i(clamp16(d[1])).ch(',').i(clamp16(d[2])).ch(']');
}

class ChipSwimlaneWriter : public OutputWriter {
 public:
  ChipSwimlaneWriter(const std::string& dir, int level)
      : OutputWriter(dir), level_(std::clamp(level, 1, 4)), blocks_(dir, "swimlane_blocks"),
        orch_(dir, "swimlane_orch") {}

  void on_block_finished(const Task& t, const BlockRecord& b) override { blocks_.record(BlockRow{t.id, b}); }

  void on_sched_phase(const SchedPhaseRecord& x) override {
    if (level_ < 3 || x.thread < 0) return;
    while (static_cast<int>(phases_.size()) <= x.thread)
      phases_.push_back(std::make_unique<ScratchFile>(
          dir(), ("swimlane_sched" + std::to_string(phases_.size())).c_str()));
    phases_[x.thread]->record(x);
  }

  void on_orch_submit(const OrchSubmitRecord& x) override {
    if (level_ >= 4) orch_.record(x);
  }

  void finish(const RunInfo& info) override {
    Platform none;
    const Platform& p = info.platform ? *info.platform : none;
    OutFile out(dir() + "/" + kFile);
    out.raw("{\n  \"chip_swimlane_level\": ").i(level_).raw(",\n");
    put_metadata(out, p, info.sched_threads);

    out.raw("  \"aicore_tasks\": ");
    put_rows<BlockRow>(out, blocks_, [&](JsonBuf& b, const BlockRow& r) {
      std::uint64_t start = p.sys_cnt(r.b.start), receive = p.sys_cnt(r.b.receive);
      b.ch('[').i(r.b.core).raw(", ").u(r.task).raw(", ").u(r.b.token).raw(", ").u(start);
      b.raw(", ").u(p.sys_cnt(r.b.end)).raw(", ").u(span(receive, start)).ch(']');
    });
    out.raw(",\n  \"aicpu_tasks\": ");
    if (level_ >= 2)
      put_rows<BlockRow>(out, blocks_, [&](JsonBuf& b, const BlockRow& r) {
        b.ch('[').i(r.b.core).raw(", ").u(r.b.token).raw(", ").u(p.sys_cnt(r.b.dispatch));
        b.raw(", ").u(p.sys_cnt(r.b.finish)).ch(']');
      });
    else
      out.raw("[]");

    if (level_ >= 3) {
      // One array per AICPU thread index; threads that ran no scheduler loop
      // (the orchestrator's) are [].
      out.raw(",\n  \"aicpu_scheduler_phases\": [");
      const int arrays = std::max<int>(kMinSchedArrays, static_cast<int>(phases_.size()));
      for (int t = 0; t < arrays; ++t) {
        if (t) out.raw(", ");
        if (t < static_cast<int>(phases_.size()))
          put_rows<SchedPhaseRecord>(out, *phases_[t], [&](JsonBuf& b, const SchedPhaseRecord& r) { put_phase(b, p, r); });
        else
          out.raw("[]");
      }
      out.ch(']');
    }
    if (level_ >= 4) {
      out.raw(",\n  \"aicpu_orchestrator_phases\": [");
      put_rows<OrchSubmitRecord>(out, orch_, [&](JsonBuf& b, const OrchSubmitRecord& r) {
        b.raw("{\"submit_idx\": ").u(r.submit_idx).raw(", \"task_id\": ").u(r.task_id);
        b.raw(", \"start_cycles\": ").u(p.sys_cnt(r.start)).raw(", \"end_cycles\": ").u(p.sys_cnt(r.end)).ch('}');
      });
      out.ch(']');
    }
    out.raw("\n}\n");
    out.close();
    blocks_.close_and_remove();
    orch_.close_and_remove();
    for (auto& f : phases_) f->close_and_remove();
  }

  std::vector<std::string> files() const override { return {kFile}; }

 private:
  void put_metadata(OutFile& out, const Platform& p, int sched_threads) const {
    const int clusters = p.topo.clusters;
    const int cores = p.topo.total_cores();
    out.raw("  \"metadata\": {\"clock_freq_hz\": ").u(p.topo.sys_cnt_freq_hz);
    out.raw(", \"num_cores\": ").i(cores).raw(", \"core_types\": [");
    for (int c = 0; c < cores; ++c) (c ? out.raw(", ") : out).raw(c < clusters ? "\"aic\"" : "\"aiv\"");
    out.ch(']');
    if (level_ >= 3) {
      // Core -> scheduler thread (CoreMap::thread_of).
      out.raw(", \"core_to_thread\": [");
      const CoreMap m{clusters};
      for (int c = 0; c < cores; ++c) (c ? out.raw(", ") : out).i(sched_threads > 0 ? m.thread_of(c, sched_threads) : -1);
      out.ch(']');
    }
    out.raw("},\n");
  }

  static void put_phase(JsonBuf& b, const Platform& p, const SchedPhaseRecord& r) {
    const SchedPhase kind = r.kind;
    b.raw("{\"kind\": \"").raw(sched_phase_name(kind));
    b.raw("\", \"start_cycles\": ").u(p.sys_cnt(r.start)).raw(", \"end_cycles\": ").u(p.sys_cnt(r.end));
    b.raw(", \"loop_iter\": ").u(r.loop_iter).raw(", \"tasks_processed\": ").i(r.tasks_processed);
    if (kind == SchedPhase::Dispatch)
      b.raw(", \"pop_hit\": ").i(std::max(r.pop_hit, 0)).raw(", \"pop_miss\": ").i(std::max(r.pop_miss, 0));
    if (kind == SchedPhase::DummyTask || kind == SchedPhase::PredicatedSkip)
      b.raw(", \"task_id\": ").u(r.task_id);
    b.raw(", \"shared_at_start\": ");
    put_depths(b, r.shared_at_start);
    b.raw(", \"shared_at_end\": ");
    put_depths(b, r.shared_at_end);
    b.ch('}');
  }

  // One JSON array of a scratch file's rows, one row a line: "[\n    row,\n    row\n  ]".
  template <class Row, class F>
  static void put_rows(OutFile& out, ScratchFile& rows, F&& put) {
    rows.close();
    out.ch('[');
    bool first = true;
    for_each_record<Row>(rows.path(), [&](const Row& r) {
      out.raw(first ? "\n    " : ",\n    ");
      first = false;
      put(out, r);
      out.commit();
    });
    out.raw(first ? "]" : "\n  ]");
  }

  int level_;
  ScratchFile blocks_, orch_;
  std::vector<std::unique_ptr<ScratchFile>> phases_;  // one per scheduler thread
};

}  // namespace

std::unique_ptr<OutputWriter> make_chip_swimlane_writer(const std::string& staging_dir, int level) {
  return std::make_unique<ChipSwimlaneWriter>(staging_dir, level);
}

}  // namespace npusim::record
