// task_stats.csv (npusim's own file, RFC 4180): one line per task with what it cost the
// runtime: how many blocks, how many dispatch operations (pops that placed
// blocks: one for a whole SPMD grid that fits, more when it runs in waves or
// several threads place it), how many blocks were early-staged, and its
// milestones (first_release is the dispatch that let it start: the doorbell of
// an early-staged block). Streamed at retirement, when the task is final. A
// moment that never came is an empty field, never 0 (docs/outputs.md).
#include <algorithm>

#include "sim/record/json_out.h"
#include "sim/record/writer.h"

namespace npusim::record {
namespace {

constexpr const char* kTaskStatsFile = "task_stats.csv";

const char* kind_name(const Task& t) {
  if (t.kind == TaskKind::Alloc) return "alloc";
  if (t.kind == TaskKind::Dummy) return "dummy";
  if (t.predicate_false) return "predicated_skip";
  return "kernel";
}

class TaskStatsWriter : public OutputWriter {
 public:
  TaskStatsWriter(const std::string& dir, int gzip_level)
      : OutputWriter(dir, gzip_level), out_(dir + "/" + output_name(kTaskStatsFile), gzip_level) {
    out_.raw("task_id,task,kind,kernel,func_id,ring,block_num,dispatch_ops,staged_blocks,"
             "submit_ns,ready_ns,first_dispatch_ns,first_release_ns,first_start_ns,last_start_ns,last_end_ns,complete_ns\n");
  }

  void on_retired(Task& t) override {
    // first_release: when the first block could start: its dispatch, or for
    // an early-staged block its doorbell.
    // A failed run: a block's moments after the stop had not come (a
    // kernel still computing then has no end).
    const BlockTimes b = t.block_times(until_);
    out_.u(t.id).ch(',').task(t.id).ch(',').raw(kind_name(t)).ch(',');
    if (t.kernel) csv_field(t.kernel->name).ch(',').i(t.kernel->func_id);
    else out_.ch(',');
    {
      // Four integers and eight times with their separators.
      JsonBuf::Direct d(out_, 320);
      d.ch(',').i(t.ring).ch(',').i(t.block_num).ch(',').i(t.dispatch_ops).ch(',').i(t.staged_blocks).ch(',');
      ns(d, t.submit_end).ch(',');
      ns(d, t.ready_time).ch(',');
      ns(d, b.first_dispatch).ch(',');
      ns(d, b.first_release).ch(',');
      ns(d, b.first_start).ch(',');
      // The last start (end) is the task's once every one of its blocks has
      // started (ended); until then it has not come.
      ns(d, b.started == t.total_subtasks ? b.last_start : kNever).ch(',');
      ns(d, b.ended == t.total_subtasks ? b.last_end : kNever).ch(',');
      ns(d, t.complete_time).ch('\n');
    }
    out_.commit();
  }

  void on_device_stop(const DeviceStop& stop) override { until_ = stop.time; }
  void finish(const RunInfo&) override { out_.close(); }
  std::vector<std::string> files() const override { return {output_name(kTaskStatsFile)}; }

 private:
  // A text field as RFC 4180 has it: quoted (quotes doubled) when it holds a
  // comma, a quote or a line break.
  OutFile& csv_field(const std::string& v) {
    // One pass over the name (find_first_of called memchr once per character).
    if (std::none_of(v.begin(), v.end(), [](char c) { return c == ',' || c == '"' || c == '\r' || c == '\n'; })) {
      out_.raw(v);
      return out_;
    }
    out_.ch('"');
    for (char c : v) (c == '"' ? out_.raw("\"\"") : out_.ch(c));
    out_.ch('"');
    return out_;
  }

  // Nanoseconds with three decimals (all three kept: "12.500"), none for a
  // whole nanosecond; empty for a moment that never came. 21 bytes at most.
  static JsonBuf::Direct& ns(JsonBuf::Direct& d, Time t) {
    if (t == kNever) return d;
    d.u(t / 1000);
    if (const auto frac = static_cast<unsigned>(t % 1000))
      d.ch('.').ch(static_cast<char>('0' + frac / 100)).ch(static_cast<char>('0' + frac / 10 % 10)).ch(
          static_cast<char>('0' + frac % 10));
    return d;
  }

  OutFile out_;
  Time until_ = kNever;  // a failed run: progress stopped
};

}  // namespace

std::unique_ptr<OutputWriter> make_task_stats_writer(const std::string& staging_dir, int gzip_level) {
  return std::make_unique<TaskStatsWriter>(staging_dir, gzip_level);
}

}  // namespace npusim::record
