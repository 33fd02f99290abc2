// merged_swimlane.json: Chrome/Perfetto trace events, as the runtime's
// swimlane converter draws the chip-swimlane records (simpler
// simpler_setup/tools/swimlane_converter.py, docs/dfx/chip-swimlane-profiling.md),
// written directly from the simulation's events.
//
// Time base: the converter's base is the smallest non-zero cycle value of the
// records; here ts/dur are simply simulated time in µs (exact decimals of the
// ps clock), i.e. the base is simulated time 0, the moment the run starts.
//
// Streaming: events are appended to a scratch file as they happen; finish()
// adds the orchestrator's alloc markers (their AICPU lane is the
// orchestrator's thread index, known at the end) and the process/thread
// metadata events (which lanes exist is known only at the end; trace viewers
// take them anywhere in the array), closes the array and renames the file.
// A task's Worker View bars, its dispatch flows and its incoming dependency
// flows are drawn at on_retired, when fanin, consumers and blocks are final.
// A small summary per task (kernel, block_num, where its last block ended) is kept while
// the task is live or a consumer of it may still draw a flow from it.
// Flow starts sit 0.01 µs inside the end of the bar they leave (as the
// converter's `complete` flow does), so viewers bind them to that bar and not
// to whatever starts at the same instant.
//
// A failed run (docs/outputs.md, "A failed run"): the timeline is drawn to
// scale up to where progress stopped; the detector's wait after it (the
// watchdog's 10 s, the allocator's 500 ms backstop) is a labelled slice of
// the "device stop" lane, drawn not to scale when it would dwarf the run,
// and what the device did after it is drawn after that slice (at() maps the
// times). Blocks still on their cores are bars held through that wait, with
// their open wait nested; tokens no core read are Scheduler View slices. Events
// that come after the latch (on_error) are held until on_device_stop gives
// the mapping.
//
// Level gating follows the records the converter would have: Worker View
// always; Scheduler View at level >= 2; scheduler phases, dispatch, complete
// and complete->ready flows, the overhead counters and AICPU markers at >= 3;
// the orchestrator and its submit->dispatch flows at 4.
#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sim/record/figures.h"
#include "sim/record/json_out.h"
#include "sim/record/writer.h"

namespace npusim::record {
namespace {

constexpr const char* kSwimlaneFile = "merged_swimlane.json";
constexpr int kPidOrch = 1, kPidSched = 2, kPidSchedView = 3, kPidWorker = 4;
constexpr int kTidOrch = 4000, kTidQueue = 3999;
constexpr Time kMarkerMin = 20000;  // 0.02 µs: zero-width markers stay visible
constexpr Time kFlowInset = 10000;  // 0.01 µs: a flow leaves from inside its bar
constexpr int kTidStop = 9000;      // Worker View lane of a failed run's stop
constexpr Time kMinGap = 1000000;   // 1 µs: the narrowest drawn detector wait

int sched_tid(int thread) { return 30000 + 10 * thread; }
int core_tid(int core) { return 10000 + 10 * core; }
int aicpu_tid(int thread) { return 19000 + thread; }

const char* phase_color(SchedPhase k) {
  switch (k) {
    case SchedPhase::Complete: return "good";
    case SchedPhase::Dispatch: return "terrible";
    case SchedPhase::AsyncPoll: return "yellow";
    case SchedPhase::Release: return "olive";
    case SchedPhase::Dummy: return "grey";
    case SchedPhase::EarlyDispatch: return "rail_animation";
    case SchedPhase::Drain: return "cq_build_running";
    case SchedPhase::DrainPrepare: return "cq_build_running";
    case SchedPhase::DrainPublish: return "cq_build_passed";
    case SchedPhase::Resolve: return "good";
    case SchedPhase::DummyTask:
    case SchedPhase::PredicatedSkip: break;
  }
  return "grey";
}

// The converter's label: "<kernel>(<disp>)", "_spmd" added before "(" for
// SPMD tasks unless the name says so already; "dummy(<disp>)" for dummies.
void make_label(JsonBuf& b, const KernelDef* k, int block_num, TaskId id) {
  b.clear();
  if (!k) {
    b.raw("dummy");
  } else {
    b.raw(k->name);
    if (block_num > 1 && k->name.find("spmd") == std::string::npos) b.raw("_spmd");
  }
  b.ch('(').task(id).ch(')');
}

// "<n>: [<disp>, ...]"
template <class List, class Id>
void put_hint(JsonBuf& b, const List& list, Id id_of) {
  b.u(list.size()).raw(": [");
  for (std::size_t k = 0; k < list.size(); ++k) (k ? b.raw(", ") : b).task(id_of(list[k]));
  b.ch(']');
}

// Per-task state kept between events.
struct TaskSummary {
  const KernelDef* kernel = nullptr;
  int block_num = 1;
  int last_core = -1;           // core of the block that ended last
  Time last_begin = 0, last_end = 0;  // that block's bar
  Time last_finish = 0;         // the AICPU's observation of the FIN that completed the task ...
  int finish_thread = -1;       // ... and the thread whose complete phase observed it
  Time submit_begin = kNever, submit_end = kNever;  // its orch_submit slice (level 4)
  std::uint32_t consumers = 0;  // consumers that have yet to draw their flow from this task
  bool retired = false;
  // The task's L2 figures (all its blocks together), as summary.json's per kernel.
  std::uint64_t l2_lines = 0, l2_hits = 0, hbm_bytes = 0;
  std::vector<BlockRecord> blocks;  // finished blocks, drawn when the task retires (its hints are final then)
};

// Block records held for unretired tasks, all tasks together: beyond it the
// run stops (exit 2) rather than grow without bound (docs/outputs.md, "Limits").
constexpr std::size_t kMaxHeldBlocks = std::size_t(1) << 21;

// Lanes that received events, for the metadata.
struct Lanes {
  std::vector<std::uint8_t> worker_cores, view_cores;  // view: bit 1 main, bit 2 overflow
  std::vector<std::uint8_t> aicpu;
  int sched_threads = 0;
  static void mark(std::vector<std::uint8_t>& v, int index, std::uint8_t bits = 1) {
    if (index < 0) return;
    if (static_cast<std::size_t>(index) >= v.size()) v.resize(index + 1, 0);
    v[index] |= bits;
  }
};

class PerfettoWriter : public OutputWriter {
 public:
  PerfettoWriter(const std::string& dir, int level, int gzip_level, const OverheadCollector* overhead)
      : OutputWriter(dir, gzip_level), level_(std::clamp(level, 1, 4)), events_(dir, "perfetto_events", gzip_level),
        allocs_(dir, "perfetto_allocs") {
    if (level_ >= 3 && !overhead) own_overhead_ = std::make_unique<OverheadCollector>();
    overhead_ = overhead ? overhead : own_overhead_.get();
    live_.reserve(4096);
    events_.raw("{\"traceEvents\": [\n");
  }

  void on_submitted(const Task& t, const SubmitRequest&, const std::vector<EdgeInfo>& edges) override {
    for (const FaninRef& f : t.fanin) {
      auto it = live_.find(f.producer);
      if (it != live_.end()) ++it->second.consumers;
    }
    TaskSummary& s = live_[t.id];
    s.kernel = t.kernel;
    s.block_num = t.block_num;
    if (own_overhead_) own_overhead_->on_submitted(t, edges);
  }

  void on_block_finished(const Task& t, const BlockRecord& b) override {
    TaskSummary& s = live_[t.id];
    s.blocks.push_back(b);
    if (++held_ == kMaxHeldBlocks + 1)
      stop_run("the Perfetto swimlane (merged_swimlane.json) would hold the block records of unretired tasks "
               "beyond its limit of " + std::to_string(kMaxHeldBlocks) +
               " records; --swimlane-level 0 runs without it");
    if (s.last_core < 0 || b.end >= s.last_end) {
      s.last_core = b.core;
      s.last_begin = bar_start(b);
      s.last_end = b.end;
    }
    if (s.finish_thread < 0 || b.finish >= s.last_finish) {
      s.last_finish = b.finish;
      s.finish_thread = b.thread;
    }
    if (own_overhead_) own_overhead_->on_block_finished(t, b);
    if (level_ < 2) return;
    if (latched_) {
      late_.push_back([this, id = t.id, kernel = t.kernel, block_num = t.block_num, b] {
        put_view(id, kernel, block_num, b, false);
      });
      return;
    }
    put_view(t.id, t.kernel, t.block_num, b, false);
  }

  void on_error(const LatchedError&) override { latched_ = true; }

  void on_l2_access(const Task& t, std::uint64_t lines, std::uint64_t hits, std::uint64_t hbm) override {
    TaskSummary& s = live_[t.id];
    s.l2_lines += lines;
    s.l2_hits += hits;
    s.hbm_bytes += hbm;
  }

  void on_retired(Task& t) override {
    // The task's blocks in dispatch order: those finished, then any still in
    // flight (a run that ended early).
    // One lookup of the task's summary: erasing its producers below leaves
    // the iterator valid (a task is never its own producer, and it is not
    // marked retired yet).
    drawn_.clear();
    const auto self = live_.find(t.id);
    if (self != live_.end()) {
      drawn_.swap(self->second.blocks);
      held_ -= drawn_.size();
    }
    for (const BlockRecord& b : t.blocks)
      if (b.core >= 0) drawn_.push_back(b);
    std::sort(drawn_.begin(), drawn_.end(), [](const BlockRecord& a, const BlockRecord& b) { return a.seq < b.seq; });
    if (!drawn_.empty()) draw_task(t, self);
    if (level_ >= 3 && !drawn_.empty()) {
      if (t.complete_time != kNever) put_complete(t, self);
      put_complete_to_ready(t);
    }
    // The task's incoming dependency flows; then forget producers no
    // consumer needs any more.
    const BlockRecord* first = first_block();
    for (const FaninRef& f : t.fanin) {
      auto it = live_.find(f.producer);
      if (it == live_.end()) continue;
      TaskSummary& p = it->second;
      if (first && p.last_core >= 0) put_dependency(p, *first);
      if (p.consumers) --p.consumers;
      if (p.retired && p.consumers == 0) live_.erase(it);
    }
    if (self != live_.end()) {
      if (self->second.consumers == 0)
        live_.erase(self);
      else
        self->second.retired = true;
    }
  }

  // Level 3 and up writes the pop counts and queue snapshots.
  bool reads_sched_detail() const override { return level_ >= 3; }
  // The flows (the submits' edges) and the fanout hints (all_consumers).
  bool reads_edges() const override { return true; }
  void on_sched_phase(const SchedPhaseRecord& x) override {
    if (level_ < 3) return;
    if (latched_) {
      late_.push_back([this, x] { put_phase(x); });
      return;
    }
    put_phase(x);
  }

  void put_phase(const SchedPhaseRecord& x) {
    lanes_.sched_threads = std::max(lanes_.sched_threads, x.thread + 1);
    if (x.kind == SchedPhase::DummyTask || x.kind == SchedPhase::PredicatedSkip) {
      put_marker(x);
      return;
    }
    const std::string_view phase = sched_phase_name(x.kind), color = phase_color(x.kind);
    {
      // The phase's name twice and its colour, 253 bytes of text at most, seven integers, two depths.
      JsonBuf::Direct d(events_, 2 * phase.size() + color.size() + 512);
      d.raw("{\"args\": ");  // begin_event()
      d.raw("{\"phase\": \"").raw(phase).raw("\", \"loop_iter\": ").u(x.loop_iter);
      d.raw(", \"tasks_processed\": ").small_i(x.tasks_processed);
      if (x.kind == SchedPhase::Dispatch) d.raw(", \"pop_hit\": ").u(x.pop_hit).raw(", \"pop_miss\": ").u(x.pop_miss);
      d.raw(", \"shared_at_start (aic,aiv,mix)\": ");
      put_depths(d, x.shared_at_start);
      d.raw(", \"shared_at_end (aic,aiv,mix)\": ");
      put_depths(d, x.shared_at_end);
      if (x.kind == SchedPhase::Complete) {
        d.raw(", \"finishes_processed\": ").small_i(x.tasks_processed);
        d.raw(", \"finish_rows_attributed\": ").small_i(x.tasks_processed);
      }
      d.raw("}, \"cat\": \"scheduler\", \"cname\": \"").raw(color);
      d.raw("\", \"name\": \"").raw(phase).ch('(').small_i(x.tasks_processed).raw(")\"");
    }
    end_x(kPidSched, sched_tid(x.thread), x.start, span(x.start, x.end));
    if (x.kind == SchedPhase::Complete || x.kind == SchedPhase::Dispatch) {
      {
        JsonBuf::Direct d(events_, 288);  // 121 bytes of text, five integers, a time
        d.raw("{\"args\": {\"AIC\": ").small_i(x.shared_at_end[0]).raw(", \"AIV\": ").small_i(x.shared_at_end[1]);
        d.raw(", \"MIX\": ").small_i(x.shared_at_end[2]).raw("}, \"cat\": \"queue\", \"name\": \"shared_ready_queue\"");
        d.raw(", \"ph\": \"C\", \"pid\": ").i(kPidSched).raw(", \"tid\": ").i(kTidQueue);
        d.raw(", \"ts\": ").us(at(x.end)).raw("},\n");
      }
      events_.commit();
    }
  }

  // A core waiting inside a block (doorbell, cross-core slot, barrier, GM):
  // a slice nested in the task's bar on its Worker View lane.
  void on_core_wait(int core, const Task& t, int block, WaitKind kind, Time start, Time end) override {
    if (latched_) {
      late_.push_back([this, core, id = t.id, block, kind, start, end] {
        put_wait(core, id, block, wait_kind_name(kind), wait_kind_name(kind), start, end, false);
      });
      return;
    }
    put_wait(core, t.id, block, wait_kind_name(kind), wait_kind_name(kind), start, end, false);
  }

  // A wait nested in a Worker View bar; `never_ends`: still waiting when the
  // device stopped (drawn up to the stop).
  void put_wait(int core, TaskId id, int block, std::string_view kind, std::string_view what, Time start, Time end,
                bool never_ends) {
    begin_event();
    events_.raw("{\"wait\": ").str(kind).raw(", \"block\": ").i(block);
    events_.raw(", \"taskId\": ").u(id);
    if (never_ends) events_.raw(", \"never_ends\": true, \"since-us\": ").us(start);
    events_.raw("}, \"cat\": \"stall\", \"cname\": \"bad\", \"name\": ");
    if (never_ends) events_.str("wait " + std::string(what));
    else events_.raw("\"wait ").raw(what).ch('"');  // a wait kind's name: nothing to escape
    end_x(kPidWorker, core_tid(core), start, span(start, end));
  }

  void on_orch_submit(const OrchSubmitRecord& x) override {
    if (level_ < 4) return;
    begin_event();
    put_submit_args(events_, x.submit_idx, x.task_id).raw(", \"cat\": \"orchestrator\", \"name\": \"submit(");
    events_.task(x.task_id).raw(")\"");
    end_x(kPidOrch, kTidOrch, x.start, span(x.start, x.end));
    if (x.kind == TaskKind::Alloc) {
      allocs_.record(x);
    } else if (auto it = live_.find(x.task_id); it != live_.end()) {
      it->second.submit_begin = x.start;
      it->second.submit_end = x.end;
    }
  }

  void finish(const RunInfo& info) override {
    replay_late();  // latched, yet not stopped: drawn as they came
    const int clusters = info.platform ? info.platform->topo.clusters : Topology{}.clusters;
    const int orch = info.orchestrator_thread >= 0 ? info.orchestrator_thread : info.sched_threads;
    allocs_.close();
    for_each_record<OrchSubmitRecord>(allocs_.path(), [&](const OrchSubmitRecord& r) {
      Lanes::mark(lanes_.aicpu, orch);
      events_.raw("{\"args\": ");
      put_submit_args(events_, r.submit_idx, r.task_id).raw(", \"cat\": \"orchestrator\", \"name\": \"alloc(");
      events_.task(r.task_id).raw(")\"");
      end_x(kPidWorker, aicpu_tid(orch), r.start, span(r.start, r.end));
    });
    allocs_.close_and_remove();
    if (level_ >= 3) put_overhead_counters(clusters);

    if (level_ >= 4) {
      put_process(kPidOrch, "AICPU Orchestrator");
      put_thread(kPidOrch, kTidOrch, "Orch_0", kTidOrch);
    }
    if (level_ >= 3) {
      put_process(kPidSched, "AICPU Scheduler");
      const int threads = std::max(info.sched_threads, lanes_.sched_threads);
      for (int t = 0; t < threads; ++t) put_thread(kPidSched, sched_tid(t), "Sched_" + std::to_string(t), sched_tid(t));
      put_thread(kPidSched, kTidQueue, "shared_ready_queue (global)", 100);
    }
    if (level_ >= 2) {
      put_process(kPidSchedView, "Scheduler View");
      for (int c = 0; c < static_cast<int>(lanes_.view_cores.size()); ++c)
        for (int lane = 0; lane < 2; ++lane)
          if (lanes_.view_cores[c] & (1 << lane))
            put_thread(kPidSchedView, core_tid(c) + lane, core_name(c, clusters), core_tid(c) + lane);
    }
    put_process(kPidWorker, "Worker View");
    if (stopped_ && stop_.device_time > stop_.time) put_thread(kPidWorker, kTidStop, "device stop", kTidStop);
    for (int c = 0; c < static_cast<int>(lanes_.worker_cores.size()); ++c)
      if (lanes_.worker_cores[c]) put_thread(kPidWorker, core_tid(c), core_name(c, clusters), core_tid(c));
    for (int k = 0; k < static_cast<int>(lanes_.aicpu.size()); ++k)
      if (lanes_.aicpu[k]) put_thread(kPidWorker, aicpu_tid(k), "AICPU_" + std::to_string(k), aicpu_tid(k));
    if (stopped_) put_stop();
    events_.unput(2);  // the last event's ",\n" (the metadata is never empty)
    events_.raw("\n],\n");
    put_other_data(info);
    events_.close_as(dir() + "/" + output_name(kSwimlaneFile));
  }

  std::vector<std::string> files() const override { return {output_name(kSwimlaneFile)}; }

  // A failed run: the detector's wait after progress stopped is one slice,
  // not to scale when wider than a tenth of the run (at least kMinGap);
  // blocks still on their cores are held through it; finish() marks where
  // progress stopped with the fatal's name. The events held since the latch
  // are drawn now that the mapping is known.
  void on_device_stop(const DeviceStop& stop) override {
    stop_ = stop;
    stopped_ = true;
    const Time wait = span(stop.time, stop.device_time);
    const Time widest = std::max(kMinGap, stop.time / 10);
    gap_ = std::min(wait, widest);
    replay_late();
  }

  void replay_late() {
    latched_ = false;
    std::vector<std::function<void()>> late;
    late.swap(late_);
    for (auto& f : late) f();
  }

 private:
  // The trace's metadata (`otherData`, shown by Perfetto's "Info and stats"):
  // what the run was made from (docs/outputs.md, "Provenance"), then the end of the file.
  void put_other_data(const RunInfo& info) {
    events_.raw("\"otherData\": {\"npusim_version\": ").str(info.provenance.version);
    events_.raw(", \"trace\": ").str(info.trace_name).raw(", \"trace_digest\": ").str(info.provenance.trace_digest);
    events_.raw(", \"platform\": ").str(info.platform ? info.platform->name : std::string());
    events_.raw(", \"platform_digest\": ").str(info.provenance.platform_digest).raw("}}\n");
  }

  // Every event is followed by ",\n"; the metadata events, written last,
  // take back the final one.
  void begin_event() { events_.raw("{\"args\": "); }

  // `"ph": "X", "pid": .., "tid": .., "ts": .., "dur": ..}` and commit.
  void end_x(int pid, int tid, Time ts, Time dur) {
    const Time from = at(ts), to = at(ts + dur);
    {
      JsonBuf::Direct d(events_, 192);  // 49 bytes of text, two integers, two times
      d.raw(", \"ph\": \"X\", \"pid\": ").i(pid).raw(", \"tid\": ").i(tid);
      d.raw(", \"ts\": ").us(from).raw(", \"dur\": ").us(to - from).raw("},\n");
    }
    events_.commit();
  }

  // Where simulated time t is drawn: as it is up to the stop; a failed run's
  // detector wait (stop, device_time] squeezed into gap_; later events
  // shifted back by what was squeezed out.
  Time at(Time t) const {
    if (!stopped_ || t <= stop_.time) return t;
    const Time wait = span(stop_.time, stop_.device_time);
    if (t <= stop_.device_time)
      return stop_.time + static_cast<Time>(static_cast<unsigned __int128>(t - stop_.time) * gap_ / wait);
    return t - (wait - gap_);
  }

  // make_label's text as a quoted JSON string (JsonBuf::str of it), the
  // same bytes: the part before the task's display form is escaped once per
  // kernel (and per SPMD form) and kept, the display form ("t5", "r2t5")
  // and ")" need no escaping. Escaping the whole label again for every bar
  // and Scheduler View slice walked it character by character.
  void put_label(const KernelDef* kernel, int block_num, TaskId id) {
    const std::string& head = label_head(kernel, block_num);
    events_.raw(head).task(id).raw(")\"");
  }
  // `"<escaped kernel name>[_spmd](`, or `"dummy(` without a kernel.
  const std::string& label_head(const KernelDef* kernel, int block_num) {
    static const std::string kDummy = "\"dummy(";
    if (!kernel) return kDummy;
    const bool spmd = block_num > 1;
    auto& heads = label_heads_[kernel];  // a kernel's definition lives for the run
    std::string& head = heads[spmd];
    if (head.empty()) {
      make_label(label_, kernel, block_num, 0);  // "<name>[_spmd](t0)"
      const std::string_view label = label_.text();
      label_.clear();
      JsonBuf quoted;
      quoted.str(label.substr(0, label.size() - 3));  // without "t0)"
      head.assign(quoted.text().substr(0, quoted.size() - 1));  // without the closing quote
    }
    return head;
  }

  // 39 bytes of text, the task's display form, two integers.
  static JsonBuf::Direct& put_event_hint(JsonBuf::Direct& d, TaskId id, const KernelDef* kernel, int core) {
    d.raw("{\"event-hint\": \"Task:").task(id).raw(", FuncId:").i(kernel ? kernel->func_id : -1);
    return d.raw(", CoreId:").i(core).ch('"');
  }

  // Scheduler View: dispatch -> finish; a block dispatched into the pending
  // slot while the core still runs the previous one goes on the +1 lane. A
  // block unfinished when the device stopped runs to the stop; one whose
  // token no core read by then (`queued`) is named so, on the +1 lane.
  void put_view(TaskId id, const KernelDef* kernel, int block_num, const BlockRecord& b, bool queued) {
    if (b.core >= static_cast<int>(view_finish_.size())) view_finish_.resize(b.core + 1, 0);
    const bool unfinished = b.finish == kNever;
    const bool overflow = queued || b.dispatch < view_finish_[b.core];
    const Time finish = unfinished ? std::max(held_until(), b.dispatch) : b.finish;
    if (!overflow) view_finish_[b.core] = finish;
    Lanes::mark(lanes_.view_cores, b.core, overflow ? 2 : 1);
    const Time dur = span(b.dispatch, finish);
    {
      // The label's head, 250 bytes of text at most, five integers, three times, two task ids.
      const std::string& head = label_head(kernel, block_num);
      JsonBuf::Direct d(events_, head.size() + 512);
      d.raw("{\"args\": ");  // begin_event()
      put_event_hint(d, id, kernel, b.core).raw(", \"dispatch-time-us\": ").us(b.dispatch);
      if (!unfinished)
        d.raw(", \"finish-time-us\": ").us(b.finish).raw(", \"aicpu-duration-us\": ").us(dur);
      else if (queued)
        d.raw(", \"unfinished\": \"queued: its core had not read the token when the device stopped\"");
      else
        d.raw(", \"unfinished\": \"on its core when the device stopped\"");
      d.raw(", \"taskId\": ").u(id).raw("}, \"cat\": \"event\", \"id\": ").u(next_id_++);
      d.raw(", \"name\": ");
      if (!queued) d.raw(head).task(id).raw(")\"");  // put_label
    }
    if (queued) {
      make_label(label_, kernel, block_num, id);
      events_.str("queued " + std::string(label_.text()));
    }
    end_x(kPidSchedView, core_tid(b.core) + (overflow ? 1 : 0), b.dispatch, dur);
  }

  static JsonBuf& put_submit_args(JsonBuf& b, std::uint64_t submit_idx, TaskId id) {
    return b.raw("{\"phase\": \"orch_submit\", \"submit_idx\": ").u(submit_idx).raw(", \"task_id\": ").u(id).ch('}');
  }

  static void put_depths(JsonBuf::Direct& w, const std::array<int, 3>& d) {  // 6 bytes of text, three integers
    w.ch('[').small_i(d[0]).raw(", ").small_i(d[1]).raw(", ").small_i(d[2]).ch(']');
  }

  // A Worker View bar starts when the core reads the dispatch token
  // (receive) and ends at the kernel's end. A block still in flight when
  // progress stopped is held on its core through the detector's wait: its
  // bar ends where the device reported the failure (or at later work),
  // drawn at the end of the stop lane's slice.
  Time held_until() const { return std::max(stop_.time, stop_.device_time); }
  Time bar_start(const BlockRecord& b) const { return std::min(b.receive, b.start); }
  Time bar_end(const BlockRecord& b) const { return b.finish != kNever ? b.end : std::min(b.end, held_until()); }
  // Whether a block has a Worker View bar: its core read the token (by the
  // stop, in a failed run).
  bool has_bar(const BlockRecord& b) const {
    return b.finish != kNever || (b.receive != kNever && b.receive <= stop_.time);
  }

  // The task's earliest bar (of its finished blocks only: `finished`).
  const BlockRecord* first_block(bool finished = false) const {
    const BlockRecord* first = nullptr;
    for (const BlockRecord& b : drawn_)
      if (has_bar(b) && (!finished || b.finish != kNever) && (!first || bar_start(b) < bar_start(*first))) first = &b;
    return first;
  }

  // A dependency arrow leaves the producer's bar (its block that ended last)
  // just inside its end and lands where the consumer's first bar starts. A
  // consumer staged early (early resolve: its bar starts while the producer
  // still runs) is the converter's happens-before exception: the arrow is
  // named "hb_violation" and leaves from the producer bar's start, as
  // swimlane_converter.py draws every dependency arrow, so that no arrow
  // runs backwards in time. The consumer's kernel cannot start before the
  // producer ends, so its bar is still open where the arrow lands.
  void put_dependency(const TaskSummary& p, const BlockRecord& first) {
    const Time to = bar_start(first);
    const int from_tid = core_tid(p.last_core), to_tid = core_tid(first.core);
    if (p.last_end <= to) {
      const Time from = std::max(p.last_begin, p.last_end > kFlowInset ? p.last_end - kFlowInset : 0);
      put_flow("dependency", kPidWorker, from_tid, from, kPidWorker, to_tid, to);
      return;
    }
    const Time from = std::min(p.last_begin + kFlowInset, p.last_end);
    put_flow("hb_violation", kPidWorker, from_tid, from, kPidWorker, to_tid, std::max(to, from));
  }

  // Worker View bars (receive -> end, one per block) and dispatch flows.
  // A task whose GM phases met the L2 (or crossed HBM) carries its figures
  // on every bar: l2_lines, l2_hits, hbm_bytes (the task's, all its blocks).
  void draw_task(const Task& t, std::unordered_map<TaskId, TaskSummary>::const_iterator self) {
    hints_.clear();
    hints_.raw(", \"fanout-hint\": \"");
    put_hint(hints_, t.all_consumers, [](TaskId id) { return id; });
    hints_.raw("\", \"fanin-hint\": \"");
    put_hint(hints_, t.fanin, [](const FaninRef& f) { return f.producer; });
    hints_.ch('"');
    if (self != live_.end() && (self->second.l2_lines || self->second.hbm_bytes)) {
      hints_.raw(", \"l2_lines\": ").u(self->second.l2_lines).raw(", \"l2_hits\": ").u(self->second.l2_hits);
      hints_.raw(", \"hbm_bytes\": ").u(self->second.hbm_bytes);
    }
    const std::string& head = label_head(t.kernel, t.block_num);
    for (const BlockRecord& b : drawn_) {
      const bool finished = b.finish != kNever;
      if (!finished && level_ >= 2) put_view(t.id, t.kernel, t.block_num, b, !has_bar(b));
      if (!has_bar(b)) {
        // A token no core read: no bar; its dispatch arrow ends at the Scheduler View slice.
        if (level_ >= 3 && b.thread >= 0)
          put_flow("dispatch", kPidSched, sched_tid(b.thread), b.dispatch, kPidSchedView, core_tid(b.core) + 1,
                   b.dispatch);
        continue;
      }
      Lanes::mark(lanes_.worker_cores, b.core);
      const Time ts = bar_start(b), end = bar_end(b);
      const Time dur = span(ts, end);
      const Time start = std::min(b.start, end);  // the kernel start, or the bar's end if it never started
      {
        // The hints and the label's head, 270 bytes of text at most, five integers, three times, two task ids.
        JsonBuf::Direct d(events_, hints_.size() + head.size() + 512);
        d.raw("{\"args\": ");  // begin_event()
        put_event_hint(d, t.id, t.kernel, b.core).raw(hints_.text()).raw(", \"duration-us\": ").us(dur);
        d.raw(", \"kernel-duration-us\": ").us(span(start, end));
        d.raw(", \"local_setup_us\": ").us(start - ts).raw(", \"taskId\": ").u(t.id);
        if (!finished) d.raw(", \"unfinished\": \"on its core when the device stopped\"");
        d.raw("}, \"cat\": \"event\", \"id\": ").u(next_id_++).raw(", \"name\": ");
        d.raw(head).task(t.id).raw(")\"");  // put_label
      }
      end_x(kPidWorker, core_tid(b.core), ts, dur);
      if (!finished)
        for (const StuckWait& w : stop_.waits)
          if (w.core == b.core && w.task == t.id && w.block == b.block_idx && w.since <= end)
            put_wait(w.core, t.id, w.block, w.kind, w.what, w.since, end, true);
      if (level_ >= 3 && b.thread >= 0)
        put_flow("dispatch", kPidSched, sched_tid(b.thread), b.dispatch, kPidWorker, core_tid(b.core),
                 b.start <= end ? b.start : ts);
      // submit->dispatch: the orchestrator's submit of the task to this block's dispatch.
      if (level_ >= 4 && b.thread >= 0 && self != live_.end() && self->second.submit_end != kNever &&
          self->second.submit_end <= b.dispatch)
        put_flow("submit\u2192dispatch", kPidOrch, kTidOrch, inset_end(self->second.submit_begin, self->second.submit_end),
                 kPidSched, sched_tid(b.thread), b.dispatch);
      // An early-staged block starts on its doorbell, rung when its producer completed.
      if (level_ >= 3 && b.gated && b.release_thread >= 0 && b.release <= end)
        put_flow("doorbell", kPidSched, sched_tid(b.release_thread), b.release, kPidWorker, core_tid(b.core),
                 std::min(b.start, end));
    }
  }

  // A point 0.01 µs inside the end of the slice [begin, end] (its begin if shorter).
  static Time inset_end(Time begin, Time end) { return std::max(begin, end > kFlowInset ? end - kFlowInset : 0); }

  // `complete` (swimlane_converter.py, generate_chrome_trace_json, "Inbound"):
  // from the task's Worker View bar, 0.01 µs inside its end, to the complete
  // phase of the scheduler thread that observed the FIN completing the task,
  // at that observation. One arrow per bar; an SPMD task's from its earliest bar.
  void put_complete(const Task& t, std::unordered_map<TaskId, TaskSummary>::const_iterator self) {
    if (self == live_.end() || self->second.finish_thread < 0) return;
    const TaskSummary& s = self->second;
    auto from = [&](const BlockRecord& b) {
      put_flow("complete", kPidWorker, core_tid(b.core), inset_end(bar_start(b), bar_end(b)), kPidSched,
               sched_tid(s.finish_thread), s.last_finish);
    };
    if (t.block_num > 1) {
      if (const BlockRecord* first = first_block(true)) from(*first);
    } else {
      for (const BlockRecord& b : drawn_)
        if (b.finish != kNever) from(b);
    }
  }

  // `complete→ready` (the same function, "Outbound"): from the complete
  // phase that completed the consumer's last producer (the one whose FIN was
  // observed last), at that observation, to the consumer's first dispatch on
  // the dispatching thread's lane. Drawn only when every producer ran on a
  // core, and, as the converter skips them, not for a consumer dispatched
  // before that completion (an early-staged one: its doorbell arrow says it).
  void put_complete_to_ready(const Task& t) {
    const TaskSummary* last = nullptr;
    for (const FaninRef& f : t.fanin) {
      auto it = live_.find(f.producer);
      if (it == live_.end() || it->second.finish_thread < 0) return;
      if (!last || it->second.last_finish > last->last_finish) last = &it->second;
    }
    const BlockRecord* first = nullptr;
    for (const BlockRecord& b : drawn_)
      if (b.thread >= 0 && (!first || b.dispatch < first->dispatch)) first = &b;
    if (!last || !first || first->dispatch < last->last_finish) return;
    put_flow("complete\u2192ready", kPidSched, sched_tid(last->finish_thread), last->last_finish, kPidSched,
             sched_tid(first->thread), first->dispatch);
  }

  // The converter's overhead counters (build_overhead_counter_events,
  // `--overhead`): eight "ph": "C" tracks under the AICPU Scheduler, each
  // written where its value changes, from the figures' own sweep.
  void put_overhead_counters(int clusters) {
    struct Track { const char* name; int tid; };
    static constexpr Track kTracks[8] = {{"oh_aic_idle", 9101}, {"oh_aic_ready", 9102}, {"oh_aic_overhead", 9103},
                                         {"oh_aiv_idle", 9111}, {"oh_aiv_ready", 9112}, {"oh_aiv_overhead", 9113},
                                         {"oh_all_overhead", 9121}, {"oh_has_overhead", 9122}};
    // Each track's text before its value and between its value and the
    // time, made once (an event formatted the name twice and the pid and tid
    // each time, most of a counter event's instructions), in fixed-size
    // blocks that are copied without a call to memcpy; an interval's time is
    // formatted once for the events that start there.
    struct TrackText {
      char head[32];
      char middle[96];
      std::size_t head_size, middle_size;
    };
    std::array<TrackText, 8> text{};
    for (std::size_t k = 0; k < 8; ++k) {
      const std::string name = kTracks[k].name;
      const std::string head = "{\"args\": {\"" + name + "\": ";
      const std::string middle = "}, \"cat\": \"overhead\", \"name\": \"" + name + "\", \"ph\": \"C\", \"pid\": " +
                                 std::to_string(kPidSched) + ", \"tid\": " + std::to_string(kTracks[k].tid) +
                                 ", \"ts\": ";
      // kTracks' names fit (a longer one would be a bug, never output).
      if (head.size() > sizeof text[k].head || middle.size() > sizeof text[k].middle) std::abort();
      std::memcpy(text[k].head, head.data(), head.size());
      std::memcpy(text[k].middle, middle.data(), middle.size());
      text[k].head_size = head.size();
      text[k].middle_size = middle.size();
    }
    std::array<long, 8> prev;
    prev.fill(-1);
    Text32 ts;
    sweep_overhead(overhead_->steps(clusters), [&](Time from, Time, const OverheadLevels& l) {
      const long v[8] = {l.idle[0], l.ready[0], l.over[0], l.idle[1], l.ready[1], l.over[1], l.all, l.has};
      bool ts_made = false;
      for (std::size_t k = 0; k < 8; ++k) {
        if ((k < 3 && !l.present[0]) || (k >= 3 && k < 6 && !l.present[1]) || v[k] == prev[k]) continue;
        prev[k] = v[k];
        if (!ts_made) {
          ts.set_us(at(from));
          ts_made = true;
        }
        {
          // The track's two texts (fixed-size copies of 32 and 96 bytes), 3
          // bytes of text, an integer, the time (32 bytes, a Text32).
          JsonBuf::Direct d(events_, sizeof(TrackText::head) + sizeof(TrackText::middle) + 96);
          d.raw_block(text[k].head, text[k].head_size).i(v[k]);
          d.raw_block(text[k].middle, text[k].middle_size).raw(ts).raw("},\n");
        }
        events_.commit();
      }
    });
  }

  // A flow pair: "s" on the source lane, "f" (bound to the enclosing slice) on the target.
  // The name a literal: its two copies are fixed-size stores (a strlen and
  // two calls to memcpy when it was a pointer).
  template <std::size_t N>
  void put_flow(const char (&name)[N], int pid0, int tid0, Time ts0, int pid1, int tid1, Time ts1) {
    const std::uint64_t id = next_flow_++;
    ts0 = at(ts0);
    ts1 = at(ts1);
    {
      JsonBuf::Direct d(events_, 2 * N + 400);  // the name twice, 160 bytes of text, six integers, two times
      d.raw("{\"cat\": \"flow\", \"id\": ").u(id).raw(", \"name\": \"").raw(name);
      d.raw("\", \"ph\": \"s\", \"pid\": ").i(pid0).raw(", \"tid\": ").i(tid0).raw(", \"ts\": ").us(ts0);
      d.raw("},\n{\"cat\": \"flow\", \"id\": ").u(id).raw(", \"name\": \"").raw(name);
      d.raw("\", \"ph\": \"f\", \"pid\": ").i(pid1).raw(", \"tid\": ").i(tid1).raw(", \"ts\": ").us(ts1);
      d.raw(", \"bp\": \"e\"},\n");
    }
    events_.commit();
  }

  // Zero-width markers of the scheduler's inline completions, on the
  // thread's AICPU lane of the Worker View.
  void put_marker(const SchedPhaseRecord& x) {
    const bool dummy = x.kind == SchedPhase::DummyTask;
    Lanes::mark(lanes_.aicpu, x.thread);
    const KernelDef* kernel = nullptr;
    int block_num = 1;
    if (!dummy) {
      auto it = live_.find(x.task_id);
      if (it != live_.end()) {
        kernel = it->second.kernel;
        block_num = it->second.block_num;
      }
    }
    begin_event();
    events_.raw(dummy ? "{\"phase\": \"dummy_task\"" : "{\"phase\": \"predicated_skip\", \"predicated_pass\": false");
    events_.raw(", \"task_id\": ").u(x.task_id).raw("}, \"cat\": \"scheduler\", \"name\": ");
    put_label(kernel, block_num, x.task_id);
    end_x(kPidWorker, aicpu_tid(x.thread), x.start, std::max(span(x.start, x.end), kMarkerMin));
  }

  // A failed run's last events: the detector's wait after progress stopped,
  // a slice of the "device stop" lane (not to scale when squeezed), and a
  // global instant where progress stopped, named after the fatal.
  void put_stop() {
    const Time wait = span(stop_.time, stop_.device_time);
    if (wait) {
      const bool to_scale = gap_ == wait;
      begin_event();
      events_.raw("{\"detector\": ").str(stop_.detector).raw(", \"progress_stopped_us\": ").us(stop_.time);
      events_.raw(", \"detector_since_us\": ").us(stop_.detector_since);
      events_.raw(", \"device_time_us\": ").us(stop_.device_time).raw(", \"waited_us\": ").us(wait);
      events_.raw(", \"to_scale\": ").raw(to_scale ? "true" : "false");
      events_.raw("}, \"cat\": \"fatal\", \"cname\": \"grey\", \"name\": ");
      events_.str(stop_.detector + ": " + us_text(wait) + " without progress" + (to_scale ? "" : " (not to scale)"));
      end_x(kPidWorker, kTidStop, stop_.time, wait);
    }
    events_.raw("{\"args\": {\"fatal\": ").str(stop_.name).raw(", \"message\": ").str(stop_.message);
    events_.raw(", \"detector\": ").str(stop_.detector).raw(", \"progress_stopped_us\": ").us(stop_.time);
    events_.raw(", \"device_time_us\": ").us(stop_.device_time).raw("}, \"cat\": \"fatal\", \"name\": ");
    events_.str("FATAL: " + stop_.name).raw(", \"ph\": \"i\", \"s\": \"g\", \"pid\": ").i(kPidWorker);
    events_.raw(", \"tid\": 0, \"ts\": ").us(stop_.time).raw("},\n");
    events_.commit();
  }

  static std::string core_name(int core, int clusters) {
    return (core < clusters ? "AIC_" : "AIV_") + std::to_string(core);
  }

  // Metadata events (written at the end, after every lane is known).
  void put_process(int pid, const char* name) {
    events_.raw("{\"args\": {\"name\": ").str(name).raw("}, \"cat\": \"__metadata\", \"name\": \"process_name\"");
    events_.raw(", \"ph\": \"M\", \"pid\": ").i(pid).raw("},\n{\"args\": {\"sort_index\": ").i(pid);
    events_.raw("}, \"cat\": \"__metadata\", \"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": ").i(pid);
    events_.raw("},\n");
  }
  void put_thread(int pid, int tid, const std::string& name, int sort) {
    events_.raw("{\"args\": {\"name\": ").str(name).raw("}, \"cat\": \"__metadata\", \"name\": \"thread_name\"");
    events_.raw(", \"ph\": \"M\", \"pid\": ").i(pid).raw(", \"tid\": ").i(tid);
    events_.raw("},\n{\"args\": {\"sort_index\": ").i(sort);
    events_.raw("}, \"cat\": \"__metadata\", \"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": ").i(pid);
    events_.raw(", \"tid\": ").i(tid).raw("},\n");
  }

  int level_;
  ScratchFile events_, allocs_;
  std::unordered_map<TaskId, TaskSummary> live_;  // looked up by id only, never iterated
  std::vector<BlockRecord> drawn_;  // the retiring task's blocks
  std::size_t held_ = 0;            // block records in live_
  std::vector<Time> view_finish_;             // per core: finish of the last main-lane block
  // The overhead counters' records (level >= 3): the figures' (shared), or
  // the writer's own when it runs without them.
  std::unique_ptr<OverheadCollector> own_overhead_;
  const OverheadCollector* overhead_ = nullptr;
  Lanes lanes_;
  DeviceStop stop_{kNever, kNever, kNever, "", "", "", {}};  // a failed run: where progress stopped, ...
  bool stopped_ = false;  // ... once on_device_stop told it
  Time gap_ = 0;          // the drawn width of the detector's wait
  // Events after a latch (on_error), drawn once on_device_stop gives their place.
  bool latched_ = false;
  std::vector<std::function<void()>> late_;
  JsonBuf label_, hints_;
  std::unordered_map<const KernelDef*, std::array<std::string, 2>> label_heads_;  // label_head's, by SPMD form
  std::uint64_t next_id_ = 0, next_flow_ = 0;
};

}  // namespace

std::unique_ptr<OutputWriter> make_perfetto_writer(const std::string& staging_dir, int level, int gzip_level,
                                                   const OverheadCollector* overhead) {
  return std::make_unique<PerfettoWriter>(staging_dir, level, gzip_level, overhead);
}

}  // namespace npusim::record
