// chip_swimlane_records.json, levels 1-4, in the layout the runtime's host
// collector writes (src/common/platform/shared/host/chip_swimlane_collector.cpp
// export_swimlane_json): the metadata object one key a line, the AICore and
// AICPU task rows grouped by core (each core's rows in the order they were
// recorded), one array of phase records per AICPU thread, the orchestrator's
// phases as one array per orchestrator lane.
//
// Cycle values need the platform's system counter, which a writer only learns
// in finish() (OutputWriter's interface); so the event records are appended
// as they are (fixed-size binary rows in simulated picoseconds) to scratch
// files: the blocks of each core (read twice, for aicore_tasks and
// aicpu_tasks), the orchestrator's submits and one file of phases per
// scheduler thread; finish() formats them in order, converting with
// Platform::sys_cnt. The per-event cost is one small copy.
#include <algorithm>
#include <array>
#include <type_traits>

#include "models/common/core_map.h"
#include "sim/record/json_out.h"
#include "sim/record/writer.h"

namespace npusim::record {
namespace {

constexpr const char* kRecordsFile = "chip_swimlane_records.json";
constexpr int kMinSchedArrays = 4;  // PLATFORM_MAX_AICPU_THREADS: always 4 inner arrays

// The event records are plain data and are stored as they are.
struct BlockRow {
  TaskId task;
  BlockRecord b;
};
static_assert(std::is_trivially_copyable_v<SchedPhaseRecord> && std::is_trivially_copyable_v<OrchSubmitRecord>);

// Ready-queue depths as the device stores them (int16).
int clamp16(int v) { return std::clamp(v, -32768, 32767); }

void put_depths(JsonBuf::Direct& b, const std::array<int, 3>& d) {  // 26 bytes at most
  b.ch('[').i(clamp16(d[0])).ch(',').i(clamp16(d[1])).ch(',').i(clamp16(d[2])).ch(']');
}

class ChipSwimlaneWriter : public OutputWriter {
 public:
  ChipSwimlaneWriter(const std::string& dir, int level, int gzip_level)
      : OutputWriter(dir, gzip_level), level_(std::clamp(level, 1, 4)), orch_(dir, "swimlane_orch") {}

  void on_block_finished(const Task& t, const BlockRecord& b) override {
    if (b.core < 0) return;
    grow(blocks_, b.core, "swimlane_core");
    blocks_[static_cast<std::size_t>(b.core)]->record(BlockRow{t.id, b});
  }

  // Level 3 and up writes the pop counts and queue snapshots.
  bool reads_sched_detail() const override { return level_ >= 3; }
  void on_sched_phase(const SchedPhaseRecord& x) override {
    if (level_ < 3 || x.thread < 0) return;
    grow(phases_, x.thread, "swimlane_sched");
    phases_[static_cast<std::size_t>(x.thread)]->record(x);
  }

  void on_orch_submit(const OrchSubmitRecord& x) override {
    if (level_ >= 4) {
      orch_.record(x);
      has_orch_ = true;
    }
  }

  void finish(const RunInfo& info) override {
    Platform none;
    const Platform& p = info.platform ? *info.platform : none;
    // Every scratch file's last chunk queued at once, then closed: the I/O
    // thread writes chunks in order, so closing them one by one between the
    // rows (put_rows) would wait each time for every chunk queued before
    // (with --compress, the records file's own chunks, compressed there
    // while this thread sleeps: 31 waits, 60 ms of a bench_pa_100k run);
    // now the first close waits and the others find their chunks written.
    for (auto* v : {&blocks_, &phases_})
      for (auto& f : *v)
        if (f) f->flush();
    orch_.flush();
    for (auto* v : {&blocks_, &phases_})
      for (auto& f : *v)
        if (f) f->close();
    orch_.close();
    OutFile out(dir() + "/" + output_name(kRecordsFile), gzip_level());
    out.raw("{\n  \"chip_swimlane_level\": ").i(level_).raw(",\n");
    put_metadata(out, p, info.sched_threads);

    out.raw("  \"aicore_tasks\": [");
    bool first = true;
    for (auto& f : blocks_)
      put_rows<BlockRow>(out, f.get(), first, "\n    ", [&](JsonBuf& b, const BlockRow& r) {
        std::uint64_t start = p.sys_cnt(r.b.start), receive = p.sys_cnt(r.b.receive);
        JsonBuf::Direct d(b, 160);  // 12 bytes of text, six integers
        d.ch('[').i(r.b.core).raw(", ").u(r.task).raw(", ").u(r.b.token).raw(", ").u(start);
        d.raw(", ").u(p.sys_cnt(r.b.end)).raw(", ").u(span(receive, start)).ch(']');
      });
    out.raw(first ? "]" : "\n  ]");
    out.raw(",\n  \"aicpu_tasks\": [");
    first = true;
    if (level_ >= 2)
      for (auto& f : blocks_)
        put_rows<BlockRow>(out, f.get(), first, "\n    ", [&](JsonBuf& b, const BlockRow& r) {
          JsonBuf::Direct d(b, 112);  // 8 bytes of text, four integers
          d.ch('[').i(r.b.core).raw(", ").u(r.b.token).raw(", ").u(p.sys_cnt(r.b.dispatch));
          d.raw(", ").u(p.sys_cnt(r.b.finish)).ch(']');
        });
    out.raw(first ? "]" : "\n  ]");

    if (level_ >= 3) {
      // One array per AICPU thread index (PLATFORM_MAX_AICPU_THREADS of them);
      // threads that ran no scheduler loop (the orchestrator's) are [].
      out.raw(",\n  \"aicpu_scheduler_phases\": [\n");
      const int arrays = std::max<int>(kMinSchedArrays, static_cast<int>(phases_.size()));
      for (int t = 0; t < arrays; ++t) {
        out.raw("    [");
        bool none = true;
        if (t < static_cast<int>(phases_.size()))
          put_rows<SchedPhaseRecord>(out, phases_[static_cast<std::size_t>(t)].get(), none, "\n      ",
                                     [&](JsonBuf& b, const SchedPhaseRecord& r) { put_phase(b, p, r); });
        out.raw(none ? "]" : "\n    ]").raw(t + 1 < arrays ? ",\n" : "\n");
      }
      out.raw("  ]");
      if (has_orch_) {
        // One orchestrator lane.
        out.raw(",\n  \"aicpu_orchestrator_phases\": [\n    [");
        bool none = true;
        put_rows<OrchSubmitRecord>(out, &orch_, none, "\n      ", [&](JsonBuf& b, const OrchSubmitRecord& r) {
          JsonBuf::Direct d(b, 160);  // 66 bytes of text, four integers
          d.raw("{\"submit_idx\": ").u(r.submit_idx).raw(", \"task_id\": ").u(r.task_id);
          d.raw(", \"start_cycles\": ").u(p.sys_cnt(r.start)).raw(", \"end_cycles\": ").u(p.sys_cnt(r.end)).ch('}');
        });
        out.raw(none ? "]" : "\n    ]").raw("\n  ]");
      }
    }
    out.raw("\n}\n");
    out.close();
    for (auto& f : blocks_)
      if (f) f->close_and_remove();
    orch_.close_and_remove();
    for (auto& f : phases_)
      if (f) f->close_and_remove();
  }

  std::vector<std::string> files() const override { return {output_name(kRecordsFile)}; }

 private:
  // The scratch file of index `i` (a core, a thread), made on first use.
  void grow(std::vector<std::unique_ptr<ScratchFile>>& v, int i, const char* stem) {
    if (static_cast<int>(v.size()) <= i) v.resize(static_cast<std::size_t>(i) + 1);
    auto& f = v[static_cast<std::size_t>(i)];
    if (!f) f = std::make_unique<ScratchFile>(dir(), (std::string(stem) + std::to_string(i)).c_str());
  }

  void put_metadata(OutFile& out, const Platform& p, int sched_threads) const {
    const int clusters = p.topo.clusters;
    const int cores = p.topo.total_cores();
    out.raw("  \"metadata\": {\n    \"clock_freq_hz\": ").u(p.topo.sys_cnt_freq_hz);
    out.raw(",\n    \"num_cores\": ").i(cores).raw(",\n    \"core_types\": [");
    for (int c = 0; c < cores; ++c) (c ? out.raw(", ") : out).raw(c < clusters ? "\"aic\"" : "\"aiv\"");
    out.ch(']');
    if (level_ >= 3) {
      // Core -> scheduler thread (CoreMap::thread_of), written with the phase buffers.
      out.raw(",\n    \"core_to_thread\": [");
      const CoreMap m{clusters};
      for (int c = 0; c < cores; ++c) (c ? out.raw(", ") : out).i(sched_threads > 0 ? m.thread_of(c, sched_threads) : -1);
      out.ch(']');
    }
    out.raw("\n  },\n");
  }

  static void put_phase(JsonBuf& out, const Platform& p, const SchedPhaseRecord& r) {
    const SchedPhase kind = r.kind;
    const std::string_view name = sched_phase_name(kind);
    // The name, 172 bytes of text at most, seven integers, two depths.
    JsonBuf::Direct b(out, name.size() + 400);
    b.raw("{\"kind\": \"").raw(name);
    b.raw("\", \"start_cycles\": ").u(p.sys_cnt(r.start)).raw(", \"end_cycles\": ").u(p.sys_cnt(r.end));
    b.raw(", \"loop_iter\": ").u(r.loop_iter).raw(", \"tasks_processed\": ").i(r.tasks_processed);
    if (kind == SchedPhase::Dispatch) b.raw(", \"pop_hit\": ").u(r.pop_hit).raw(", \"pop_miss\": ").u(r.pop_miss);
    if (kind == SchedPhase::DummyTask || kind == SchedPhase::PredicatedSkip) b.raw(", \"task_id\": ").u(r.task_id);
    b.raw(", \"shared_at_start\": ");
    put_depths(b, r.shared_at_start);
    b.raw(", \"shared_at_end\": ");
    put_depths(b, r.shared_at_end);
    b.ch('}');
  }

  // The rows of one scratch file (none if `rows` is null), each preceded by
  // `sep` and, after the first row of the array (`first`), a comma.
  template <class Row, class F>
  static void put_rows(OutFile& out, ScratchFile* rows, bool& first, const char* sep, F&& put) {
    if (!rows) return;
    rows->close();
    for_each_record<Row>(rows->path(), [&](const Row& r) {
      if (!first) out.ch(',');
      out.raw(sep);
      first = false;
      put(out, r);
      out.commit();
    });
  }

  int level_;
  std::vector<std::unique_ptr<ScratchFile>> blocks_;  // one per core
  ScratchFile orch_;
  bool has_orch_ = false;
  std::vector<std::unique_ptr<ScratchFile>> phases_;  // one per scheduler thread
};

}  // namespace

std::unique_ptr<OutputWriter> make_chip_swimlane_writer(const std::string& staging_dir, int level, int gzip_level) {
  return std::make_unique<ChipSwimlaneWriter>(staging_dir, level, gzip_level);
}

}  // namespace npusim::record
