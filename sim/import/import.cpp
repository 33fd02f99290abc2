// Importing a device capture (import.h, docs/scenes.md).
#include "sim/import/import.h"

#include "sim/engine/engine.h"
#include "sim/platform/platform_loader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "models/common/dtype.h"
#include "sim/record/whole_file.h"
#include "models/common/errors.h"
#include "models/runtime/tensor.h"
#include "sim/json/json_getters.h"
#include "sim/json/json_input.h"
#include "sim/json/json_read.h"
#include "sim/json/json_util.h"
#include "sim/config/run_options.h"
#include "sim/scene/trace_text.h"
#include "sim/trace/json_doc.h"
#include "sim/trace/trace.h"

namespace fs = std::filesystem;

namespace npusim::capture {

namespace {

using J = nlohmann::ordered_json;
using json_input::pointer_join;

constexpr std::int64_t kMaxBlocks = 32767;

struct TensorInfo {
  std::uint64_t addr = 0;
  std::uint32_t version = 0;
  DType dtype = DType::FP32;
  std::int64_t numel = 0;
};

struct ArgInfo {
  ArgTag tag = ArgTag::Input;
  std::uint64_t tensor = 0;  // tensor_id (not OUTPUT)
  DType dtype = DType::FP32;
  std::vector<std::int64_t> shape, strides;
  std::int64_t start = 0;
};

struct TaskInfo {
  TaskId id = kNoTask;
  bool manual = false, early = false, alloc = false;
  int kernels[3] = {-1, -1, -1};
  int block_num = 1;
  std::vector<ArgInfo> args;
  std::vector<TaskId> deps;           // explicit
  std::vector<std::uint64_t> outputs; // buffer addresses of its OUTPUT args, in order (0: unknown)
};

// Strict readers of the capture's JSON: every surprise is an InputError
// (json_input::Getters, and the capture's own values).
class Reader : public json_input::Getters<J> {
 public:
  using Getters::Getters;
  using Getters::integer;
  using Getters::list;
  using Getters::string;
  // A u64 written as a decimal string (the runtime's convention for ids and addresses).
  std::uint64_t u64(const J& v, const std::string& path) const {
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      if (!s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos) {
        errno = 0;
        char* end = nullptr;
        const unsigned long long x = std::strtoull(s.c_str(), &end, 10);
        if (errno == 0 && end && *end == '\0') return x;
      }
    }
    std::uint64_t u = 0;
    if (json_input::json_uint64(v, u)) return u;
    fail(path, "expected an unsigned 64-bit integer (a decimal string), got " + json_input::describe_json(v));
  }
  std::uint64_t u64(const J& obj, const std::string& path, const char* key) const {
    return u64(field(obj, path, key), pointer_join(path, key));
  }
  DType dtype(const J& v, const std::string& path) const {
    const std::string s = string(v, path);
    for (int i = 0; i <= static_cast<int>(DType::BOOL); ++i)
      if (s == dtype_runtime_name(static_cast<DType>(i))) return static_cast<DType>(i);
    fail(path, "expected a dtype (FLOAT32, FLOAT16, BFLOAT16, INT8 ... UINT64, BOOL), got " + json_input::describe_json(v));
  }
  DType dtype(const J& obj, const std::string& path, const char* key) const {
    return dtype(field(obj, path, key), pointer_join(path, key));
  }
  // A list of 1 to kMaxDims integers in [lo, 2^32 - 1].
  std::vector<std::int64_t> dims(const J& obj, const std::string& at, const char* key, std::int64_t lo) const {
    const std::string path = pointer_join(at, key);
    const J& v = list(obj, at, key);
    if (v.empty() || v.size() > static_cast<std::size_t>(kMaxDims))
      fail(path, "expected a list of 1 to " + std::to_string(kMaxDims) + " integers");
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(integer(v[i], pointer_join(path, i), lo, 0xffffffffll));
    return out;
  }
};

struct Capture {
  std::vector<TaskInfo> tasks;  // deps.json order: submission order
  std::unordered_map<std::uint64_t, TensorInfo> tensors;
  std::map<std::pair<TaskId, int>, TaskId> creator_of_arg;  // (consumer, arg) -> creator
  std::unordered_map<TaskId, std::set<std::uint64_t>> created;  // creator -> buffer addresses
};

void read_deps(const std::string& text, const std::string& file, Capture& c) {
  Reader r(file);
  const J root = json_input::parse_document(text, file);
  for (const char* key : {"tasks", "tensors", "edges"}) r.list(root, "", key);
  r.each(root, "", "tensors", [&](const J& t, const std::string& p) {
    TensorInfo info;
    info.addr = r.u64(t, p, "buffer_addr");
    info.version = static_cast<std::uint32_t>(r.integer(t, p, "version", 0, 0x7fffffff));
    info.dtype = r.dtype(t, p, "dtype");
    const std::uint64_t numel = r.u64(t, p, "buffer_numel");
    if (numel < 1 || numel > (1ull << 40)) r.fail(pointer_join(p, "buffer_numel"), "expected 1 to 2^40 elements");
    info.numel = static_cast<std::int64_t>(numel);
    c.tensors[r.u64(t, p, "tensor_id")] = info;
  });
  std::set<TaskId> seen;
  r.each(root, "", "tasks", [&](const J& t, const std::string& p) {
    TaskInfo k;
    k.id = r.u64(t, p, "task_id");
    if (task_ring(k.id) >= kNumRings) r.fail(pointer_join(p, "task_id"), "ring " + std::to_string(task_ring(k.id)) + " is not 0..3");
    if (!seen.insert(k.id).second) r.fail(pointer_join(p, "task_id"), "task " + task_display(k.id) + " is listed twice");
    const std::string scope = r.string(t, p, "scope");
    if (scope != "auto" && scope != "manual") r.fail(pointer_join(p, "scope"), "expected \"auto\" or \"manual\"");
    k.manual = scope == "manual";
    const J& early = r.field(t, p, "early_dispatch");
    if (!early.is_boolean()) r.fail(pointer_join(p, "early_dispatch"), "expected true or false");
    k.early = early.get<bool>();
    const J& ids = r.list(t, p, "kernel_ids");
    if (ids.size() != 3) r.fail(pointer_join(p, "kernel_ids"), "expected 3 kernel ids (aic, aiv0, aiv1)");
    for (int l = 0; l < 3; ++l)
      k.kernels[l] = static_cast<int>(r.integer(ids[l], pointer_join(pointer_join(p, "kernel_ids"), l), -1, 0x7fffffff));
    k.block_num = static_cast<int>(r.integer(t, p, "block_num", 1, kMaxBlocks));
    const J& args = r.list(t, p, "args");
    if (args.size() > 32) r.fail(pointer_join(p, "args"), "at most 32 tensor arguments");
    for (std::size_t a = 0; a < args.size(); ++a) {
      const std::string ap = pointer_join(pointer_join(p, "args"), a);
      const J& arg = args[a];
      ArgInfo x;
      const std::string type = r.string(arg, ap, "type");
      static const std::pair<const char*, ArgTag> tags[] = {{"INPUT", ArgTag::Input}, {"OUTPUT", ArgTag::Output},
                                                            {"INOUT", ArgTag::Inout},
                                                            {"OUTPUT_EXISTING", ArgTag::OutputExisting},
                                                            {"UNKNOWN", ArgTag::NoDep}};
      bool known = false;
      for (const auto& [name, tag] : tags)
        if (type == name) x.tag = tag, known = true;
      if (!known) r.fail(pointer_join(ap, "type"), "expected INPUT, OUTPUT, INOUT, OUTPUT_EXISTING or UNKNOWN");
      if (x.tag != ArgTag::Output) {
        x.tensor = r.u64(arg, ap, "tensor_id");
        if (!c.tensors.count(x.tensor)) r.fail(pointer_join(ap, "tensor_id"), "no such tensor in /tensors");
        x.dtype = r.dtype(arg, ap, "dtype");
        x.shape = r.dims(arg, ap, "shape", 0);
        x.strides = r.dims(arg, ap, "strides", 1);
        if (x.strides.size() != x.shape.size()) r.fail(pointer_join(ap, "strides"), "expected as many strides as shape entries");
        const std::uint64_t start = r.u64(arg, ap, "start_offset");
        if (start > (1ull << 40)) r.fail(pointer_join(ap, "start_offset"), "expected at most 2^40");
        x.start = static_cast<std::int64_t>(start);
      }
      k.args.push_back(std::move(x));
    }
    c.tasks.push_back(std::move(k));
  });
  std::unordered_map<TaskId, std::size_t> index;
  for (std::size_t i = 0; i < c.tasks.size(); ++i) index[c.tasks[i].id] = i;
  r.each(root, "", "edges", [&](const J& e, const std::string& p) {
    const TaskId pred = r.u64(e, p, "pred");
    const TaskId succ = r.u64(e, p, "succ");
    if (task_ring(pred) >= kNumRings) r.fail(pointer_join(p, "pred"), "ring is not 0..3");
    auto s = index.find(succ);
    if (s == index.end()) r.fail(pointer_join(p, "succ"), "no task " + task_display(succ) + " in /tasks");
    const std::string source = r.string(e, p, "source");
    const int arg = static_cast<int>(r.integer(e, p, "arg", -1, 31));
    if (source == "explicit") {
      std::vector<TaskId>& deps = c.tasks[s->second].deps;
      if (std::find(deps.begin(), deps.end(), pred) == deps.end()) deps.push_back(pred);
    } else if (source == "creator") {
      const std::uint64_t tid = r.u64(e, p, "tensor_id");
      auto t = c.tensors.find(tid);
      if (t == c.tensors.end()) r.fail(pointer_join(p, "tensor_id"), "no such tensor in /tensors");
      c.creator_of_arg[{succ, arg}] = pred;
      c.created[pred].insert(t->second.addr);
    } else if (source != "tensormap") {
      r.fail(pointer_join(p, "source"), "expected \"explicit\", \"creator\" or \"tensormap\"");
    }
  });
}

// Per task and lane: the kernel time of each block, from the AICore rows.
struct Timing {
  std::map<TaskId, std::array<std::vector<double>, 3>> lanes;  // ns per block, by start time
  std::set<TaskId> predicated_skip;
  int sched_threads = 0;
};

void read_swimlane(const std::string& text, const std::string& file, Timing& tm) {
  Reader r(file);
  const J root = json_input::parse_document(text, file);
  const J& meta = r.field(root, "", "metadata");
  const double freq = static_cast<double>(r.integer(meta, "/metadata", "clock_freq_hz", 1, 1ll << 40));
  const J& types = r.list(meta, "/metadata", "core_types");
  std::vector<bool> aic;
  int clusters = 0;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string t = r.string(types[i], pointer_join("/metadata/core_types", i));
    if (t != "aic" && t != "aiv") r.fail(pointer_join("/metadata/core_types", i), "expected \"aic\" or \"aiv\"");
    aic.push_back(t == "aic");
    clusters += t == "aic";
  }
  if (const J* ct = r.opt(meta, "core_to_thread")) {
    r.list(*ct, "/metadata/core_to_thread");
    for (std::size_t i = 0; i < ct->size(); ++i)
      tm.sched_threads = std::max(tm.sched_threads, static_cast<int>(r.integer((*ct)[i], pointer_join("/metadata/core_to_thread", i), -1, 64)) + 1);
  }
  const J& rows = r.list(root, "", "aicore_tasks");
  struct Row {
    std::int64_t start, end;
    int core;
  };
  std::map<TaskId, std::array<std::vector<Row>, 3>> by_task;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string p = pointer_join("/aicore_tasks", i);
    const J& row = r.list(rows[i], p);
    if (row.size() < 5) r.fail(p, "expected [core_id, task_id, reg_task_id, start_cycles, end_cycles, ...]");
    const int core = static_cast<int>(r.integer(row[0], pointer_join(p, 0), 0, static_cast<std::int64_t>(aic.size()) - 1));
    const TaskId id = r.u64(row[1], pointer_join(p, 1));
    const std::int64_t start = r.integer(row[3], pointer_join(p, 3), 0, 1ll << 62);
    const std::int64_t end = r.integer(row[4], pointer_join(p, 4), start, 1ll << 62);
    // A trace's kernel time is at most an hour (trace::kMaxDuration): a longer
    // block cannot be replayed.
    if (const double ns = static_cast<double>(end - start) * 1e9 / freq; ns > trace::kMaxDuration)
      r.fail(pointer_join(p, 4), "a block of " + std::to_string(end - start) + " cycles (" + std::to_string(ns / 1e9) +
                                     " s at clock_freq_hz), longer than the hour (3.6e12 ns) a trace's kernel may take");
    // The lane: the AIC, or the AIV's place in its cluster (AIV0 the even worker).
    const int lane = aic[core] ? 0 : ((core - clusters) % 2 == 0 ? 1 : 2);
    by_task[id][lane].push_back(Row{start, end, core});
  }
  for (auto& [id, lanes] : by_task)
    for (int l = 0; l < 3; ++l) {
      std::vector<Row>& v = lanes[l];
      std::sort(v.begin(), v.end(), [](const Row& a, const Row& b) { return a.start != b.start ? a.start < b.start : a.core < b.core; });
      for (const Row& x : v) tm.lanes[id][l].push_back(static_cast<double>(x.end - x.start) * 1e9 / freq);
    }
  if (const J* phases = r.opt(root, "aicpu_scheduler_phases")) {
    r.list(*phases, "/aicpu_scheduler_phases");
    for (std::size_t t = 0; t < phases->size(); ++t) {
      const std::string tp = pointer_join("/aicpu_scheduler_phases", t);
      const J& recs = r.list((*phases)[t], tp);
      for (std::size_t i = 0; i < recs.size(); ++i) {
        const J& rec = recs[i];
        if (!rec.is_object()) r.fail(pointer_join(tp, i), "expected an object");
        auto kind = rec.find("kind");
        if (kind == rec.end() || *kind != "predicated_skip") continue;
        tm.predicated_skip.insert(r.u64(rec, pointer_join(tp, i), "task_id"));
      }
    }
  }
}

// The scopes of scope_stats.jsonl: each with its ring and the range of local
// ids submitted on that ring while it was open.
struct ScopeNode {
  int depth = 0, ring = 0;
  std::uint64_t begin = 0, end = ~0ull;
  std::string site;
  int parent = -1;
};

struct ScopeInfo {
  std::vector<ScopeNode> nodes;
  J run = J::object();
  std::array<std::uint64_t, kNumRings> heads{};  // each ring's last head: its tasks, allocs included
};

void read_scope_stats(const std::string& text, const std::string& file, ScopeInfo& si) {
  Reader r(file);
  std::istringstream in(text);
  std::string line;
  std::vector<int> open;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const Reader lr(file + ":" + std::to_string(n));
    J rec;
    try {
      rec = json_input::parse_document(line, file + ":" + std::to_string(n));
    } catch (const InputError&) {
      throw;
    }
    if (!rec.is_object()) lr.fail("", "expected an object");
    if (rec.contains("version")) {  // the metadata line: the ring sizes of the run
      for (const char* k : {"task_window_max", "heap_max", "dep_pool_max"}) {
        const J* v = lr.opt(rec, k);
        if (!v) continue;
        lr.list(*v, std::string("/") + k);
        if (v->size() != kNumRings) lr.fail(std::string("/") + k, "expected 4 values");
        for (std::size_t i = 0; i < v->size(); ++i) lr.integer((*v)[i], pointer_join(std::string("/") + k, i), 0, 1ll << 40);
        const std::string key = std::string("ring_") + std::string(k).substr(0, std::string(k).size() - 4);
        // The sizes the replay's run block gets must be ones run accepts.
        try {
          config::parse_ring_json(json_input::unordered(*v), key, file + ":" + std::to_string(n),
                                  std::string("/") + k);
        } catch (const InputError& e) {
          throw InputError(e.file(), e.path(), e.message() + " (the replay's run block would take it as " + key + ")");
        }
        si.run[key] = *v;
      }
      continue;
    }
    const std::string phase = lr.string(rec, "", "phase");
    const int depth = static_cast<int>(lr.integer(rec, "", "depth", 0, 64));
    const int ring = static_cast<int>(lr.integer(rec, "", "ring", 0, kNumRings - 1));
    const std::uint64_t head = lr.u64(rec, "", "task_window_end");
    if (head > (1ull << 32)) lr.fail("/task_window_end", "expected a local task id (at most 2^32)");
    si.heads[ring] = std::max(si.heads[ring], head);
    if (depth == 0) continue;  // the runtime's root scope
    if (phase == "begin") {
      ScopeNode s;
      s.depth = depth;
      s.ring = ring;
      s.begin = head;
      s.site = lr.string(rec, "", "site");
      s.parent = open.empty() ? -1 : open.back();
      open.push_back(static_cast<int>(si.nodes.size()));
      si.nodes.push_back(s);
    } else if (phase == "end") {
      if (open.empty() || si.nodes[open.back()].depth != depth) lr.fail("/depth", "a scope end without its begin");
      si.nodes[open.back()].end = head;
      open.pop_back();
    } else {
      lr.fail("/phase", "expected \"begin\" or \"end\"");
    }
  }
}

// A capture file's text, bounded as a trace is (a name map that is a folder
// or a link to /dev/zero is an error naming it, not an empty map or a read
// without end).
std::string read_text(const std::string& path, const char* what) {
  return json_input::read_text(path, path, trace::kMaxTraceBytes, what);
}

}  // namespace

CaptureFiles capture_files(const std::string& dir) {
  CaptureFiles f;
  if (!fs::is_directory(dir)) throw InputError(dir, "", "not a folder (a capture: deps.json, chip_swimlane_records.json, ...)");
  f.deps = (fs::path(dir) / "deps.json").string();
  f.swimlane = (fs::path(dir) / "chip_swimlane_records.json").string();
  for (const std::string& p : {f.deps, f.swimlane}) {
    const std::string why = json_input::not_a_regular_file(p, "capture file");
    if (why == "no such file") throw InputError(p, "", "missing: a capture needs deps.json and chip_swimlane_records.json");
    if (!why.empty()) throw InputError(p, "", why);
  }
  std::vector<std::string> maps;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("name_map", 0) == 0 && e.path().extension() == ".json") maps.push_back(e.path().string());
  }
  std::sort(maps.begin(), maps.end());
  if (maps.size() > 1) throw InputError(dir, "", "several name_map*.json files: keep the one of this run");
  if (!maps.empty()) f.name_map = maps[0];
  const fs::path ss = fs::path(dir) / "scope_stats" / "scope_stats.jsonl";
  if (fs::is_regular_file(ss)) f.scope_stats = ss.string();
  return f;
}

std::string import_capture(const std::string& deps_text, const std::string& swimlane_text,
                           const std::string& name_map_text, const std::string& scope_stats_text,
                           const CaptureFiles& names, const std::string& name) {
  Capture c;
  read_deps(deps_text, names.deps, c);
  Timing tm;
  read_swimlane(swimlane_text, names.swimlane, tm);
  std::map<int, std::string> fname;  // func_id -> name
  std::string orchestrator;
  if (!name_map_text.empty()) {
    Reader r(names.name_map);
    const J m = json_input::parse_document(name_map_text, names.name_map);
    const J& ids = r.field(m, "", "callable_id_to_name");
    if (!ids.is_object()) r.fail("/callable_id_to_name", "expected an object");
    for (auto it = ids.begin(); it != ids.end(); ++it) {
      std::int64_t id = -1;
      try {
        std::size_t used = 0;
        id = std::stoll(it.key(), &used);
        if (used != it.key().size()) id = -1;
      } catch (const std::exception&) {
      }
      if (id < 0 || id > 0x7fffffff) r.fail(pointer_join("/callable_id_to_name", it.key()), "expected a func_id key");
      fname[static_cast<int>(id)] = r.string(it.value(), pointer_join("/callable_id_to_name", it.key()));
    }
    if (const J* o = r.opt(m, "orchestrator_name"); o && o->is_string()) orchestrator = o->get<std::string>();
  }
  ScopeInfo si;
  if (!scope_stats_text.empty()) read_scope_stats(scope_stats_text, names.scope_stats, si);

  // ---- the tasks in submission order, with the alloc_tensors tasks (absent
  // from deps.json) where the rings' local ids leave room for them.
  std::unordered_map<TaskId, bool> listed;
  for (const TaskInfo& t : c.tasks) listed[t.id] = true;
  std::vector<TaskInfo> order;
  std::array<std::uint64_t, kNumRings> next{};
  auto fill_gap = [&](int ring, std::uint64_t upto) {
    for (; next[ring] < upto; ++next[ring]) {
      TaskInfo a;
      a.id = make_task_id(ring, next[ring]);
      a.alloc = true;
      order.push_back(std::move(a));
    }
  };
  for (TaskInfo& t : c.tasks) {
    // An unlisted producer it names (an alloc) is submitted before it.
    std::vector<TaskId> named = t.deps;
    for (std::size_t i = 0; i < t.args.size(); ++i)
      if (auto it = c.creator_of_arg.find({t.id, static_cast<int>(i)}); it != c.creator_of_arg.end())
        named.push_back(it->second);
    for (TaskId p : named)  // (a later id on the task's own ring cannot be a producer: the check below says so)
      if (!listed.count(p) && task_local(p) >= next[task_ring(p)] &&
          (task_ring(p) != task_ring(t.id) || task_local(p) < task_local(t.id)))
        fill_gap(task_ring(p), task_local(p) + 1);
    const int ring = task_ring(t.id);
    if (task_local(t.id) >= next[ring]) fill_gap(ring, task_local(t.id));
    next[ring] = std::max<std::uint64_t>(next[ring], task_local(t.id) + 1);
    order.push_back(std::move(t));
  }
  for (int r = 0; r < kNumRings; ++r) fill_gap(r, si.heads[r]);  // allocs after a ring's last listed task

  // ---- buffers. A task's OUTPUTs are the buffers the capture's creator
  // edges say it created, in address order (the runtime packs them in
  // argument order). Walking the tasks in submission order, an argument
  // reads the output its creator edge names, else the latest output at its
  // address (a manual scope records no creator edges), else an external
  // tensor. An output's size and dtype are what its readers' views show (the
  // tensor list keeps one entry per address and version, so a reused heap
  // address lists only its first buffer).
  struct Out {
    std::int64_t numel = 1;
    DType dtype = DType::INT8;
    bool seen = false;
  };
  std::map<std::pair<TaskId, std::uint64_t>, Out> outs;          // (creator, address)
  std::vector<std::vector<std::pair<TaskId, std::uint64_t>>> arg_buffer(order.size());  // creator == kNoTask: external
  std::map<std::uint64_t, TensorInfo> external;                   // by address
  {
    std::unordered_map<std::uint64_t, TaskId> latest;
    for (std::size_t i = 0; i < order.size(); ++i) {
      TaskInfo& t = order[i];
      auto it = c.created.find(t.id);
      std::vector<std::uint64_t> addrs;
      if (it != c.created.end()) addrs.assign(it->second.begin(), it->second.end());
      if (t.alloc) {
        t.outputs = addrs;
      } else {
        std::size_t k = 0;
        for (const ArgInfo& a : t.args)
          if (a.tag == ArgTag::Output) t.outputs.push_back(k < addrs.size() ? addrs[k++] : 0);
      }
      arg_buffer[i].resize(t.args.size(), {kNoTask, 0});
      for (std::size_t k = 0; k < t.args.size(); ++k) {
        const ArgInfo& a = t.args[k];
        if (a.tag == ArgTag::Output) continue;
        const TensorInfo& info = c.tensors.at(a.tensor);
        TaskId creator = kNoTask;
        if (auto e = c.creator_of_arg.find({t.id, static_cast<int>(k)}); e != c.creator_of_arg.end()) creator = e->second;
        else if (auto l = latest.find(info.addr); l != latest.end()) creator = l->second;
        arg_buffer[i][k] = {creator, info.addr};
        std::int64_t last = a.start;
        for (std::size_t d = 0; d < a.shape.size(); ++d) last += (a.shape[d] - 1) * a.strides[d];
        if (creator == kNoTask) {
          TensorInfo& x = external[info.addr];
          if (x.numel == 0) x = info;
          x.numel = std::max(x.numel, last + 1);
          continue;
        }
        Out& o = outs[{creator, info.addr}];
        if (!o.seen) o.dtype = a.dtype, o.numel = 0, o.seen = true;
        o.numel = std::max(o.numel, last + 1);
      }
      for (std::uint64_t addr : t.outputs)
        if (addr) latest[addr] = t.id;
    }
  }

  scene::TraceText out;
  out.name = !name.empty() ? name : !orchestrator.empty() ? orchestrator : "imported";
  out.header.emplace_back("x_imported_from", names.deps);
  // The runtime and thread count: scope_stats is written by tensormap_and_
  // ringbuffer only (one orchestrator thread besides the schedulers); four
  // scheduler threads cannot be that runtime on a2a3 (4 threads at most), so
  // they are host_build_graph's in its all-schedule layout (the
  // resolution-thread layout has three core-owning threads); otherwise the capture does not say.
  J run = si.run;
  if (tm.sched_threads > 0 && !scope_stats_text.empty()) {
    run["aicpu_thread_num"] = tm.sched_threads + 1;
  } else if (tm.sched_threads == 4) {
    run["runtime"] = "host_build_graph";
    run["aicpu_thread_num"] = 4;
    run["hbg_layout"] = "all_schedule";  // every thread owned cores in the capture
  }
  if (!run.empty()) out.header.emplace_back("run", run);

  // External tensors in address order; gaps as npusim lays its arguments out
  // (4096-byte aligned from 0x100000000) are padded so the addresses match.
  std::map<std::uint64_t, std::string> ext_name;
  std::uint64_t at = 0x100000000ull;
  const bool npusim_layout = !external.empty() && external.begin()->first >= at;
  int pad = 0, n = 0;
  for (const auto& [addr, info] : external) {
    if (npusim_layout && addr > at && (addr - at) % 4096 == 0) {
      out.tensors.emplace_back("pad" + std::to_string(pad++), J{{"shape", {(addr - at)}}, {"dtype", "int8"}});
      at = addr;
    }
    const std::string nm = "ext" + std::to_string(n++);
    ext_name[addr] = nm;
    out.tensors.emplace_back(nm, J{{"shape", {info.numel}}, {"dtype", dtype_trace_name(info.dtype)}});
    const std::uint64_t bytes = static_cast<std::uint64_t>(info.numel) * static_cast<std::uint64_t>(dtype_bytes(info.dtype));
    at = addr + (bytes + 4095) / 4096 * 4096 + (bytes == 0 ? 4096 : 0);
  }
  bool any_skip = false;
  for (const TaskInfo& t : order) any_skip = any_skip || tm.predicated_skip.count(t.id);
  if (any_skip) out.tensors.emplace_back("skipped", J{{"shape", {1}}, {"dtype", "int32"}});

  // ---- kernels. Per func_id and lane kind (AIC, AIV) the durations most of
  // its tasks ran with, and its usual shape: one core, or every lane of a MIX
  // task with that func_id on each (a trace's own mix kernel). A task that
  // ran otherwise gets a kernel of its own, whose lanes keep their func_ids.
  auto spec_of = [](const std::vector<double>& ns) {
    bool same = true;
    for (double x : ns) same = same && x == ns[0];
    return same ? J{{"ns", ns[0]}} : J{{"ns_by_block", ns}};
  };
  auto kind = [](int lane) { return lane == 0 ? 0 : 1; };
  auto uniform_mask = [](const TaskInfo& t) {  // lanes of a task whose active lanes share one func_id, else 0
    int id = -1, mask = 0, lanes = 0;
    for (int l = 0; l < 3; ++l) {
      if (t.kernels[l] < 0) continue;
      ++lanes;
      if (id >= 0 && t.kernels[l] != id) return 0;
      id = t.kernels[l];
      mask |= 1 << l;
    }
    return lanes >= 2 ? mask : 0;
  };
  int max_id = -1;
  for (const TaskInfo& t : order)
    for (int k : t.kernels) max_id = std::max(max_id, k);
  for (const auto& [id, nm] : fname) max_id = std::max(max_id, id);
  std::map<std::pair<int, int>, std::map<std::string, int>> votes;  // (func_id, lane kind) -> duration -> tasks
  std::map<int, std::map<int, int>> shapes;  // func_id -> lane mask (uniform MIX) or 8 + lane (one core) -> tasks
  for (const TaskInfo& t : order) {
    auto it = tm.lanes.find(t.id);
    const int mask = uniform_mask(t);
    for (int l = 0; l < 3; ++l) {
      if (t.kernels[l] < 0) continue;
      if (!mask) ++shapes[t.kernels[l]][8 + kind(l)];
      if (it != tm.lanes.end() && !it->second[l].empty()) ++votes[{t.kernels[l], kind(l)}][spec_of(it->second[l]).dump()];
    }
    if (mask) ++shapes[t.kernels[__builtin_ctz(mask)]][mask];
  }
  auto most = [](const auto& counts) {
    return std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  };
  std::map<std::pair<int, int>, J> primary;
  for (const auto& [key, v] : votes) primary[key] = json_input::parse_own_ordered(most(v));
  auto primary_of = [&](int id, int lane) {
    auto p = primary.find({id, kind(lane)});
    return p != primary.end() ? p->second : J{{"ns", 0}};
  };
  // A func_id's kernel name: the name map's, unique and a name a trace can
  // hold (an empty name, or one starting with x_, which a trace reads as an
  // annotation, gets k<func_id> in front; a name taken by a lower func_id
  // gets #2, #3, ...), decided in func_id order.
  std::map<int, std::string> unique_name;
  std::set<std::string> taken_names;
  auto kname = [&](int id) -> std::string {
    if (auto it = unique_name.find(id); it != unique_name.end()) return it->second;
    const auto f = fname.find(id);
    std::string base = f != fname.end() ? f->second : "";
    if (base.empty()) base = "k" + std::to_string(id);
    else if (json_input::is_annotation_key(base)) base = "k" + std::to_string(id) + "_" + base;
    std::string nm = base;
    for (int i = 2; taken_names.count(nm); ++i) nm = base + "#" + std::to_string(i);
    taken_names.insert(nm);
    return unique_name[id] = nm;
  };
  static const char* const lane_names[] = {"aic", "aiv0", "aiv1"};
  std::set<int> base_ids;
  for (const auto& [id, s] : shapes) base_ids.insert(id);
  for (const auto& [id, nm] : fname) base_ids.insert(id);
  std::set<std::string> used_names;
  std::map<int, int> base_shape;  // func_id -> its kernel's shape (mask, or 8 + lane kind)
  for (int id : base_ids) {
    const int shape = shapes.count(id) ? most(shapes[id]) : 9;
    base_shape[id] = shape;
    J def = {{"func_id", id}};
    if (shape >= 8) {
      def["core"] = shape == 8 ? "aic" : "aiv";
      def["duration"] = primary_of(id, shape == 8 ? 0 : 1);
    } else {
      def["core"] = "mix";
      J ls = J::object();
      for (int l = 0; l < 3; ++l)
        if (shape & (1 << l)) ls[lane_names[l]] = {{"duration", primary_of(id, l)}};
      def["lanes"] = ls;
    }
    out.kernels.emplace_back(kname(id), def);
    used_names.insert(kname(id));
  }
  std::map<std::string, std::string> variants;  // key -> kernel name
  int next_id = max_id + 1;
  auto kernel_of = [&](const TaskInfo& t) -> std::string {
    auto it = tm.lanes.find(t.id);
    std::array<J, 3> spec;
    bool usual = true;
    int lane = -1;
    for (int l = 0; l < 3; ++l) {
      if (t.kernels[l] < 0) continue;
      lane = l;
      spec[l] = it != tm.lanes.end() && !it->second[l].empty() ? spec_of(it->second[l]) : primary_of(t.kernels[l], l);
      usual = usual && spec[l] == primary_of(t.kernels[l], l);
    }
    const int mask = uniform_mask(t);
    const int id = t.kernels[lane];
    if (usual && (mask ? base_shape[id] == mask : base_shape[id] == 8 + kind(lane))) return kname(id);
    std::string key;
    for (int l = 0; l < 3; ++l) key += std::to_string(t.kernels[l]) + "=" + spec[l].dump() + ";";
    auto v = variants.find(key);
    if (v != variants.end()) return v->second;
    std::string base;
    for (int l = 0; l < 3; ++l)
      if (t.kernels[l] >= 0) base += (base.empty() ? "" : "+") + kname(t.kernels[l]);
    std::string nm = base;
    for (int i = 2; used_names.count(nm); ++i) nm = base + "#" + std::to_string(i);
    used_names.insert(nm);
    J ls = J::object();
    for (int l = 0; l < 3; ++l)
      if (t.kernels[l] >= 0) ls[lane_names[l]] = {{"duration", spec[l]}, {"func_id", t.kernels[l]}};
    out.kernels.emplace_back(nm, J{{"func_id", next_id++}, {"core", "mix"}, {"lanes", ls}});
    variants[key] = nm;
    return nm;
  };

  // ---- scopes: from scope_stats when the capture has it, else one scope
  // per run of tasks at a depth (ring r < 3 is depth r; ring 3 depth 3).
  std::vector<int> path;  // open scope nodes (scope_stats) or depths (inferred)
  int inferred = 0;
  auto scope_of = [&](const TaskInfo& t) {
    int best = -1;
    for (std::size_t i = 0; i < si.nodes.size(); ++i) {
      const ScopeNode& s = si.nodes[i];
      if (s.ring == task_ring(t.id) && task_local(t.id) >= s.begin && task_local(t.id) < s.end &&
          (best < 0 || s.depth > si.nodes[best].depth))
        best = static_cast<int>(i);
    }
    return best;
  };
  std::set<TaskId> referenced;
  for (const TaskInfo& t : order)
    for (TaskId d : t.deps) referenced.insert(d);
  // A scope's mode: that of the listed tasks submitted in it (allocs carry none).
  std::vector<bool> node_manual(si.nodes.size(), false);
  std::vector<bool> order_manual(order.size(), false);  // inferred scopes: the next listed task at the depth
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (si.nodes.empty() || order[i].alloc || !order[i].manual) continue;
    if (const int n = scope_of(order[i]); n >= 0) node_manual[static_cast<std::size_t>(n)] = true;
  }
  for (std::size_t i = order.size(); i-- > 0;) {
    order_manual[i] = order[i].manual;
    if (order[i].alloc)
      for (std::size_t k = i + 1; k < order.size(); ++k)
        if (task_ring(order[k].id) == task_ring(order[i].id) && !order[k].alloc) {
          order_manual[i] = order[k].manual;
          break;
        }
  }
  // Heap buffers by address: the variable of each creator's output.
  std::map<std::pair<TaskId, std::uint64_t>, std::string> heap_var;
  auto open_to = [&](const TaskInfo& t, bool manual) {
    if (!si.nodes.empty()) {
      std::vector<int> want;
      for (int s = scope_of(t); s >= 0; s = si.nodes[s].parent) want.insert(want.begin(), s);
      std::size_t keep = 0;
      while (keep < path.size() && keep < want.size() && path[keep] == want[keep]) ++keep;
      while (path.size() > keep) out.ops.push_back(J{{"op", "end"}}), path.pop_back();
      for (std::size_t i = keep; i < want.size(); ++i) {
        J s = {{"op", "scope"}};
        if (node_manual[want[i]]) s["mode"] = "manual";
        s["site"] = si.nodes[want[i]].site;
        out.ops.push_back(s);
        path.push_back(want[i]);
      }
      return;
    }
    const int depth = task_ring(t.id);
    while (static_cast<int>(path.size()) > depth) out.ops.push_back(J{{"op", "end"}}), path.pop_back();
    while (static_cast<int>(path.size()) < depth) {
      J s = {{"op", "scope"}};
      if (manual && static_cast<int>(path.size()) + 1 == depth) s["mode"] = "manual";
      s["site"] = "(imported):" + std::to_string(++inferred);
      out.ops.push_back(s);
      path.push_back(static_cast<int>(path.size()) + 1);
    }
  };

  static const char* const forms[] = {"in", "out", "inout", "out_existing", "no_dep"};
  std::set<TaskId> emitted;
  for (std::size_t oi = 0; oi < order.size(); ++oi) {
    const TaskInfo& t = order[oi];
    open_to(t, order_manual[oi]);
    const std::string tname = task_display(t.id);
    J op;
    auto out_arg = [&](std::uint64_t addr, std::size_t k) {
      const std::string v = tname + "_" + std::to_string(k);
      Out info;
      if (auto b = outs.find({t.id, addr}); addr && b != outs.end()) info = b->second;
      J o = {{"shape", {std::max<std::int64_t>(info.numel, 1)}}, {"dtype", dtype_trace_name(info.dtype)}};
      if (addr) heap_var[{t.id, addr}] = v;
      return std::make_pair(v, o);
    };
    if (t.alloc) {
      op = {{"op", "alloc"}, {"outputs", J::array()}};
      std::vector<std::uint64_t> outs = t.outputs.empty() ? std::vector<std::uint64_t>{0} : t.outputs;
      for (std::size_t k = 0; k < outs.size(); ++k) {
        auto [v, o] = out_arg(outs[k], k);
        J b = {{"bind", v}};
        b.update(o);
        op["outputs"].push_back(b);
      }
    } else {
      const bool dummy = t.kernels[0] < 0 && t.kernels[1] < 0 && t.kernels[2] < 0;
      op = {{"op", dummy ? "dummy" : "submit"}};
      if (!dummy) op["kernel"] = kernel_of(t);
      J args = J::array();
      std::size_t k = 0;
      for (std::size_t i = 0; i < t.args.size(); ++i) {
        const ArgInfo& a = t.args[i];
        if (a.tag == ArgTag::Output) {
          auto [v, o] = out_arg(t.outputs[k], k);
          ++k;
          J j = {{"out", v}};
          j.update(o);
          args.push_back(j);
          continue;
        }
        const TensorInfo& info = c.tensors.at(a.tensor);
        const auto [creator, addr] = arg_buffer[oi][i];
        std::string var;
        std::int64_t numel = 0;
        DType dtype = info.dtype;
        if (creator == kNoTask) {
          var = ext_name.at(addr);
          numel = external.at(addr).numel;
        } else if (auto hv = heap_var.find({creator, addr}); hv != heap_var.end()) {
          var = hv->second;
          const Out& o = outs.at({creator, addr});
          numel = o.numel;
          dtype = o.dtype;
        } else {
          throw InputError(names.deps, "/edges", "task " + tname + " reads a buffer of " + task_display(creator) +
                                                     ", which the capture does not list before it");
        }
        J j = {{forms[static_cast<int>(a.tag)], var}};
        const bool whole = a.start == 0 && a.shape.size() == 1 && a.strides[0] == 1 && a.shape[0] == numel &&
                           a.dtype == dtype;
        if (!whole) {
          if (a.start) j["start"] = a.start;
          j["shape"] = a.shape;
          j["strides"] = a.strides;
          if (a.dtype != dtype) j["dtype"] = dtype_trace_name(a.dtype);
        }
        if (info.version) j["version"] = info.version;
        args.push_back(j);
      }
      op["args"] = args;
      if (!dummy && t.block_num != 1) op["block_num"] = t.block_num;
      if (!t.deps.empty()) {
        J deps = J::array();
        for (TaskId d : t.deps) {
          if (!emitted.count(d))
            throw InputError(names.deps, "/edges", "task " + tname + " depends explicitly on " + task_display(d) +
                                                       ", which the capture does not list before it");
          deps.push_back(task_display(d));
        }
        op["deps"] = deps;
      }
      if (t.early) op["early_resolve"] = true;
      if (!dummy && tm.predicated_skip.count(t.id))
        op["predicate"] = {{"tensor", "skipped"}, {"element", 0}, {"cmp", "=="}, {"value", 1}};
    }
    if (referenced.count(t.id)) op["id"] = tname;
    out.ops.push_back(op);
    emitted.insert(t.id);
  }
  std::ostringstream o;
  scene::write_trace(o, out);
  return o.str();
}

void import_to_file(const std::string& dir, const std::string& out_path, const std::string& name) {
  const CaptureFiles f = capture_files(dir);
  const std::string text = import_capture(read_text(f.deps, "capture file"), read_text(f.swimlane, "capture file"),
                                          f.name_map.empty() ? "" : read_text(f.name_map, "capture file"),
                                          f.scope_stats.empty() ? "" : read_text(f.scope_stats, "capture file"), f, name);
  engine::check_runnable(text, platform::load_platform("a2a3"), dir, "npusim import");  // a trace run accepts, or nothing
  record::write_whole(out_path, text);
}

}  // namespace npusim::capture
