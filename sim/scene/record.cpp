// The recorder (record.h).
#include "sim/scene/record.h"

#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "models/runtime/chip_view.h"
#include "sim/json/json_input.h"
#include "sim/scene/scene.h"
#include "sim/scene/trace_text.h"

namespace npusim::scene {

namespace {
using J = nlohmann::ordered_json;

const char* cmp_name(Cmp c) {
  static const char* const n[] = {"==", "!=", ">", "<", ">=", "<="};
  return n[static_cast<int>(c)];
}

J run_json(const RunOptions& r) {
  J j = J::object();
  auto rings = [](const RingValues& v) {
    J a = J::array();
    for (std::uint64_t x : v) a.push_back(x);
    return a;
  };
  if (r.aicpu_thread_num) j["aicpu_thread_num"] = *r.aicpu_thread_num;
  if (r.ring_task_window) j["ring_task_window"] = rings(*r.ring_task_window);
  if (r.ring_heap) j["ring_heap"] = rings(*r.ring_heap);
  if (r.ring_dep_pool) j["ring_dep_pool"] = rings(*r.ring_dep_pool);
  if (r.runtime) j["runtime"] = runtime_name(*r.runtime);
  if (r.hbg_layout) j["hbg_layout"] = hbg_layout_name(*r.hbg_layout);
  if (r.cache_policy_lowering) j["cache_policy_lowering"] = cache_lowering_name(*r.cache_policy_lowering);
  if (r.seed) j["seed"] = *r.seed;
  if (r.scheduler_timeout_ms) j["scheduler_timeout_ms"] = *r.scheduler_timeout_ms;
  return j;
}
}  // namespace

struct Recorder::Impl {
  const trace::Trace& program;
  const DataStore& data;
  RunOptions run;
  std::vector<J> ops;                            // flat; scopes as begin/end markers
  std::unordered_map<std::int32_t, std::pair<std::string, Tensor>> vars;  // buffer id -> (variable, its whole view)
  std::unordered_map<TaskId, std::size_t> task_op;  // task -> index in ops
  std::unordered_set<TaskId> referenced;
  std::size_t pending = 0;  // ops index of the task awaiting its id

  Impl(const trace::Trace& p, const DataStore& d, const RunOptions& r) : program(p), data(d), run(r) {}

  // The variable a view belongs to (externals are registered first, in order).
  const std::pair<std::string, Tensor>& var_of(const Tensor& t) {
    const std::int32_t base = data.original(t.buffer).first;
    auto it = vars.find(base);
    if (it != vars.end()) return it->second;
    if (base >= 0 && static_cast<std::size_t>(base) < program.tensors.size()) {
      const trace::ExternalTensor& e = program.tensors[static_cast<std::size_t>(base)];
      Tensor whole;
      whole.buffer = base;
      whole.dtype = e.dtype;
      whole.ndims = static_cast<std::uint8_t>(e.shape.size());
      for (std::size_t d = 0; d < e.shape.size(); ++d) whole.buf_shape[d] = whole.shape[d] = e.shape[d];
      return vars.emplace(base, std::make_pair(e.name, whole)).first->second;
    }
    throw std::logic_error("record: a tensor of no known buffer");
  }

  // The view keys of `t` relative to its variable's whole view.
  void view_keys(const Tensor& t, const std::pair<std::string, Tensor>& var, J& j) {
    const Tensor& base = var.second;
    const bool same_layout = !t.strided && t.buffer == base.buffer && t.dtype == base.dtype && t.ndims == base.ndims &&
                             t.buf_shape == base.buf_shape;
    if (same_layout) {
      if (!t.is_whole()) {
        J off = J::array(), shp = J::array();
        for (int d = 0; d < t.ndims; ++d) off.push_back(t.offset[d]), shp.push_back(t.shape[d]);
        j["offset"] = off;
        j["shape"] = shp;
      }
    } else {
      const std::int64_t off = data.original(t.buffer).second * dtype_bytes(base.dtype);
      const ChipView v = chip_view_of(t, static_cast<std::uint64_t>(off));
      J shp = J::array(), str = J::array();
      for (int d = 0; d < v.ndims; ++d) shp.push_back(v.shape[d]), str.push_back(v.strides[d]);
      if (v.start) j["start"] = v.start;
      j["shape"] = shp;
      j["strides"] = str;
      if (v.dtype != base.dtype) j["dtype"] = dtype_trace_name(v.dtype);
      if (off) j["byte_offset"] = off;
      const std::int64_t dflt = (base.buffer_numel() * dtype_bytes(base.dtype) - off) / dtype_bytes(v.dtype);
      if (v.numel != dflt) j["numel"] = v.numel;
    }
    if (t.version != base.version) j["version"] = t.version;
    if (t.owner != base.owner && t.owner == kNoTask) j["creator"] = false;
  }

  // A tensor as a name: its variable, or a view bound to "_view" first.
  std::string name_of(const Tensor& t) {
    const auto& var = var_of(t);
    J keys = J::object();
    view_keys(t, var, keys);
    if (keys.empty()) return var.first;
    J v = {{"op", "view"}, {"bind", "_view"}, {"of", var.first}};
    for (auto it = keys.begin(); it != keys.end(); ++it) v[it.key()] = it.value();
    ops.push_back(std::move(v));
    return "_view";
  }

  J arg_json(const SubmitArg& a, std::size_t k) {
    static const char* const forms[] = {"in", "out", "inout", "out_existing", "no_dep"};
    J j = J::object();
    if (a.tag == ArgTag::Output) {
      j["out"] = "op" + std::to_string(ops.size()) + "_" + std::to_string(k);  // renamed when the task's id is known
      J shp = J::array();
      for (int d = 0; d < a.tensor.ndims; ++d) shp.push_back(a.tensor.shape[d]);
      j["shape"] = shp;
      j["dtype"] = dtype_trace_name(a.tensor.dtype);
      if (a.fill) j["fill"] = a.fill;
    } else {
      const auto& var = var_of(a.tensor);
      j[forms[static_cast<int>(a.tag)]] = var.first;
      view_keys(a.tensor, var, j);
    }
    if (a.manual_dep) j["manual_dep"] = true;
    return j;
  }

  void on_op(const OrchOp& op) {
    switch (op.kind) {
      case OrchOp::Kind::ScopeBegin: {
        J s = {{"op", "scope"}};
        if (op.mode == ScopeMode::Manual) s["mode"] = "manual";
        s["site"] = op.site;
        s["body"] = J::array();
        ops.push_back(std::move(s));
        return;
      }
      case OrchOp::Kind::ScopeEnd:
        ops.push_back(J{{"op", "end"}});
        return;
      case OrchOp::Kind::Alloc: {
        J a = {{"op", "alloc"}, {"outputs", J::array()}};
        for (std::size_t k = 0; k < op.alloc_outputs.size(); ++k) {
          J o = arg_json(op.alloc_outputs[k], k);
          J out = {{"bind", o["out"]}, {"shape", o["shape"]}, {"dtype", o["dtype"]}};
          if (o.contains("fill")) out["fill"] = o["fill"];
          a["outputs"].push_back(std::move(out));
        }
        pending = ops.size();
        ops.push_back(std::move(a));
        return;
      }
      case OrchOp::Kind::Submit:
      case OrchOp::Kind::Dummy: {
        const SubmitRequest& r = op.submit;
        std::string pred_name;
        if (r.predicate) pred_name = name_of(r.predicate->tensor);
        J s = {{"op", op.kind == OrchOp::Kind::Submit ? "submit" : "dummy"}};
        if (r.kernel) s["kernel"] = r.kernel->name;
        J args = J::array();
        for (std::size_t k = 0; k < r.args.size(); ++k) args.push_back(arg_json(r.args[k], k));
        s["args"] = std::move(args);
        if (r.kernel && r.block_num != 1) s["block_num"] = r.block_num;
        if (!r.deps.empty()) {
          J deps = J::array();
          for (std::size_t i = 0; i < r.deps.size(); ++i) {
            referenced.insert(r.deps[i]);
            const std::string n = task_display(r.deps[i]);
            const bool wait_only = i < r.dep_flags.size() && !(r.dep_flags[i] & 2);
            deps.push_back(wait_only ? J{{"wait", n}} : J(n));
          }
          s["deps"] = std::move(deps);
        }
        if (r.early_resolve) s["early_resolve"] = true;
        if (r.kernel && r.sync_start) s["sync_start"] = true;
        if (r.predicate)
          s["predicate"] = {{"tensor", pred_name}, {"element", r.predicate->element},
                            {"cmp", cmp_name(r.predicate->cmp)}, {"value", r.predicate->value}};
        if (!r.writes.empty()) {
          J w = J::array();
          for (const WriteSpec& x : r.writes) w.push_back({{"arg", x.arg}, {"element", x.element}, {"value", x.value}});
          s["writes"] = std::move(w);
        }
        if (!r.site.empty()) s["site"] = r.site;
        pending = ops.size();
        ops.push_back(std::move(s));
        return;
      }
      case OrchOp::Kind::Read:
      case OrchOp::Kind::Write: {
        const std::string t = name_of(op.read_tensor);
        J r = {{"op", op.kind == OrchOp::Kind::Read ? "read" : "set"}, {"tensor", t}, {"element", op.read_element}};
        if (op.kind == OrchOp::Kind::Write) r["value"] = op.write_value;
        ops.push_back(std::move(r));
        return;
      }
      case OrchOp::Kind::Fatal:
        ops.push_back(J{{"op", "fatal"}, {"code", op.fatal_code}, {"message", op.fatal_message}});
        return;
    }
  }

  void on_task(TaskId id, const std::vector<Tensor>& outputs) {
    J& j = ops[pending];
    const std::string name = task_display(id);
    std::size_t k = 0;
    auto rename = [&](J& o, const char* key) {
      o[key] = name + "_" + std::to_string(k);
      vars[outputs[k].buffer] = {o[key].get<std::string>(), outputs[k]};
      ++k;
    };
    if (j["op"] == "alloc") {
      for (J& o : j["outputs"]) rename(o, "bind");
    } else {
      for (J& a : j["args"])
        if (a.contains("out")) rename(a, "out");
    }
    task_op[id] = pending;
  }
};

class RecordingSource final : public OpSource {
 public:
  RecordingSource(std::unique_ptr<OpSource> inner, Recorder& rec) : inner_(std::move(inner)), rec_(rec) {}
  bool next(OrchOp& op) override {
    if (!inner_->next(op)) return false;
    rec_.impl_->on_op(op);
    return true;
  }
  void deliver_task(TaskId id, const std::vector<Tensor>& outputs) override {
    rec_.impl_->on_task(id, outputs);
    inner_->deliver_task(id, outputs);
  }
  void deliver_value(std::int64_t value) override {
    J& last = rec_.impl_->ops.back();
    if (last["op"] == "read") last["x_value"] = value;  // for the reader of the trace: what the program got
    inner_->deliver_value(value);
  }

 private:
  std::unique_ptr<OpSource> inner_;
  Recorder& rec_;
};

std::unique_ptr<OpSource> recording(std::unique_ptr<OpSource> inner, Recorder& rec) {
  return std::make_unique<RecordingSource>(std::move(inner), rec);
}

Recorder::Recorder(const trace::Trace& program, const DataStore& data, const RunOptions& run)
    : impl_(std::make_unique<Impl>(program, data, run)) {}
Recorder::~Recorder() = default;

std::string Recorder::trace_json() const {
  const Impl& m = *impl_;
  const SceneDef* scene = scene_of(m.program);
  TraceText t;
  t.name = m.program.name;
  t.header.emplace_back("x_recorded_from", m.program.file);
  const J run = run_json(m.run);
  if (!run.empty()) t.header.emplace_back("run", run);
  // Kernels: the incores as defined (after calibration), then the MIX kernels
  // the program composed of them, each lane keeping its incore's func_id.
  if (scene)
    for (const Incore& in : scene->incores) t.kernels.emplace_back(in.kernel->name, json_input::parse_own_ordered(in.json));
  if (m.program.external)
    for (const KernelDef* k : m.program.external->defined_kernels()) {
      J lanes = J::object();
      J pipes = J::object();  // the incores' pipes, one per name (merged as the composition merged them)
      static const char* const lane_names[] = {"aic", "aiv0", "aiv1"};
      for (int l = 0; l < kNumLanes; ++l) {
        const Incore* in = k->lanes[l].active && scene ? scene->incore(k->lanes[l].func_id) : nullptr;
        if (!in) continue;
        J def = json_input::parse_own_ordered(in->json);
        J lane = J::object();
        if (def.contains("duration")) lane["duration"] = def["duration"];
        if (def.contains("body")) lane["body"] = def["body"];
        lane["func_id"] = k->lanes[l].func_id;
        lanes[lane_names[l]] = std::move(lane);
        if (def.contains("pipes"))
          for (auto it = def["pipes"].begin(); it != def["pipes"].end(); ++it)
            if (!pipes.contains(it.key())) pipes[it.key()] = it.value();
      }
      J mix = {{"func_id", k->func_id}, {"core", "mix"}};
      if (!pipes.empty()) mix["pipes"] = std::move(pipes);
      mix["lanes"] = std::move(lanes);
      t.kernels.emplace_back(k->name, std::move(mix));
    }
  for (const trace::ExternalTensor& e : m.program.tensors) {
    J v = {{"shape", e.shape}, {"dtype", dtype_trace_name(e.dtype)}};
    if (!e.data.empty()) v["data"] = e.data;
    else if (e.fill) v["fill"] = e.fill;
    t.tensors.emplace_back(e.name, std::move(v));
  }
  std::unordered_map<std::size_t, std::string> id_at;  // tasks a later dep names get an id
  for (const auto& [id, at] : m.task_op)
    if (m.referenced.count(id)) id_at[at] = task_display(id);
  t.ops = m.ops;
  for (const auto& [at, name] : id_at) t.ops[at]["id"] = name;
  std::ostringstream o;
  write_trace(o, t);
  return o.str();
}

}  // namespace npusim::scene
