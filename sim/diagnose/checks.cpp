#include "sim/diagnose/checks.h"

#include <map>
#include <utility>

#include "models/runtime/runtime.h"
#include "sim/json/json_util.h"
#include "sim/trace/trace.h"

namespace npusim::diagnose {

namespace {

const char* type_word(CoreType t) { return t == CoreType::AIC ? "aic" : t == CoreType::AIV ? "aiv" : "mix"; }

// The first HARD syncall of the kernel, if any.
const Phase* hard_syncall(const KernelDef& k) {
  for (const LaneBody& l : k.lanes)
    for (const Phase& ph : l.phases)
      if (ph.kind == PhaseKind::Syncall && ph.sync_mode == SyncMode::Hard) return &ph;
  return nullptr;
}

}  // namespace

std::vector<Finding> check_kernel(const KernelDef& k) {
  std::vector<Finding> out;
  bool hard = false, soft = false;
  for (const LaneBody& l : k.lanes)
    for (const Phase& ph : l.phases)
      if (ph.kind == PhaseKind::Syncall) (ph.sync_mode == SyncMode::Hard ? hard : soft) = true;
  if (hard && soft)
    out.push_back({false, "SyncallModes", k.path,
                   "kernel " + k.name + " mixes HARD and SOFT pl.system.syncall: the two barriers do not wait for each "
                   "other, so blocks can be at different barriers at once; use one mode per kernel"});
  return out;
}

std::vector<Finding> check_launch(const Platform& p, const SubmitRequest& req, const std::string& path) {
  std::vector<Finding> out;
  if (!req.kernel) return out;
  const KernelDef& k = *req.kernel;
  // The runtime refuses a cohort larger than the cores it needs at once.
  if (const int limit = Runtime::sync_start_limit(p, k.shape()); req.sync_start && req.block_num > limit) {
    out.push_back({true, "SyncStartLimit", path,
                   "kernel " + k.name + " is launched with sync_start and block_num=" + std::to_string(req.block_num) +
                       ", more than the " + std::to_string(limit) +
                       (k.shape() == Shape::AIV ? " AIV cores" : " clusters") +
                       " its blocks must hold at once: the runtime refuses the submit with "
                       "REQUIRE_SYNC_START_INVALID (\"require_sync_start block_num=" + std::to_string(req.block_num) +
                       " > limit=" + std::to_string(limit) + " (deadlock guaranteed)\")"});
  }
  const Phase* bar = hard_syncall(k);
  if (!bar) return out;
  const std::string head = "hard pl.system.syncall(core_type=" + std::string(type_word(bar->sync_core_type)) +
                           ") in kernel " + k.name;
  // A single-core-type kernel whose barrier waits for the other type too.
  if (k.core != CoreType::MIX && bar->sync_core_type != k.core) {
    out.push_back({true, "HardSyncallOccupancy", path,
                   head + " can never complete: the barrier waits for every " +
                       (bar->sync_core_type == CoreType::MIX ? std::string("AIC and AIV") : std::string(type_word(bar->sync_core_type))) +
                       " core, and a " + type_word(k.core) + " kernel runs on none of them"});
    return out;
  }
  // The launch must fill every physical core of the barrier's type.
  const bool vector = k.core == CoreType::AIV;
  const int width = vector ? p.topo.aiv_cores() : p.topo.clusters;
  if (req.block_num != width)
    out.push_back({true, "HardSyncallOccupancy", path,
                   head + " requires the SPMD launch to fill all " + std::to_string(width) + " " +
                       (vector ? "AIV cores" : "clusters") + " (one block per physical core, " +
                       (vector ? "pl.system.available_aiv_count()" : "pl.system.available_cluster_count()") +
                       "), but the launch has " + std::to_string(req.block_num) +
                       " blocks. Use mode=\"soft\" (GM-polling) for partial occupancy."});
  if (!req.sync_start)
    out.push_back({true, "HardSyncallOccupancy", path,
                   head + " requires the SPMD launch to set sync_start=True so all blocks are co-resident at the "
                          "FFTS barrier; without it blocks can run in waves and the launch deadlocks on device (507018)"});
  return out;
}

void StaticRules::cross_chip(const trace::Trace& t, int chips) {
  for (const auto& k : t.kernels)
    for (const LaneBody& lane : k->lanes)
      for (const Phase& ph : lane.phases) {
        if (!ph.cross_chip()) continue;
        const std::string at = json_input::pointer_join(ph.path, phase_key(ph.kind));
        if (chips < 2)
          throw InputError(t.file, at,
                           std::string("a ") + phase_key(ph.kind) + " on a peer chip needs an L3 dispatch of several "
                           "chips (a distributed worker, docs/workers.md); this run has one chip");
        if (ph.kind != PhaseKind::WaitFlag && ph.peer_offset % chips == 0)
          throw InputError(t.file, json_input::pointer_join(at, "peer_offset"),
                           "peer_offset " + std::to_string(ph.peer_offset) + " names the chip itself in a dispatch of " +
                               std::to_string(chips) + " chips (the peer is (rank + peer_offset) mod chips)");
      }
}

void StaticRules::check_op(const OrchOp& op) {
  switch (op.kind) {
    case OrchOp::Kind::Read:
    case OrchOp::Kind::Write:
      if (config_.runtime == RuntimeKind::HostBuildGraph)
        throw InputError(file_, op.path_text(),
                         std::string(op.kind == OrchOp::Kind::Read ? "read (get_tensor_data)" : "set (set_tensor_data)") +
                             " is not available with runtime host_build_graph: the graph is built on the host before "
                             "the run");
      break;
    case OrchOp::Kind::Submit:
      for (Finding& f : check_launch(platform_, op.submit, op.path_text()))
        if (seen_.insert(f.path + "\n" + f.message).second) launches_.push_back(std::move(f));
      break;
    default:
      break;
  }
}

bool StaticRules::find_hard_syncall(const KernelDef* k) {
  const bool hard = hard_syncall(*k) != nullptr;
  if (hard_syncall_.size() < kKernels) hard_syncall_.emplace_back(k, hard);
  return hard;
}

std::vector<Finding> StaticRules::findings(const std::vector<const KernelDef*>& kernels) const {
  std::vector<Finding> out;
  for (const KernelDef* k : kernels)
    for (Finding& f : check_kernel(*k)) out.push_back(std::move(f));
  out.insert(out.end(), launches_.begin(), launches_.end());
  return out;
}

namespace {

class RuledSource final : public OpSource {
 public:
  RuledSource(std::unique_ptr<OpSource> inner, StaticRules& rules) : inner_(std::move(inner)), rules_(rules) {}
  bool next(OrchOp& op) override {
    if (!inner_->next(op)) return false;
    rules_.on_op(op);
    return true;
  }
  void deliver_task(TaskId id, const std::vector<Tensor>& outputs) override { inner_->deliver_task(id, outputs); }
  bool deliver_task_args(TaskId id, const std::vector<Tensor>& args, const std::vector<ArgTag>& tags) override {
    return inner_->deliver_task_args(id, args, tags);
  }
  void deliver_value(std::int64_t value) override { inner_->deliver_value(value); }

 private:
  std::unique_ptr<OpSource> inner_;
  StaticRules& rules_;
};

// Elements whose value a read sees depends on timing on the device: a task
// wrote them through an argument the runtime does not record as a producer
// (INPUT or no-dependency), so get_tensor_data does not wait for it.
class Uncertain {
 public:
  explicit Uncertain(DataStore& data) : data_(data) {}
  void mark(std::int32_t buffer, std::int64_t element, std::string why) {
    cells_.insert_or_assign(key(buffer, element), std::move(why));
  }
  const std::string* find(std::int32_t buffer, std::int64_t element) const {
    if (cells_.empty()) return nullptr;
    auto it = cells_.find(key(buffer, element));
    return it == cells_.end() ? nullptr : &it->second;
  }

 private:
  std::pair<std::int32_t, std::int64_t> key(std::int32_t buffer, std::int64_t element) const {
    auto [b, off] = data_.original(buffer);
    return {b, off + element};
  }
  DataStore& data_;
  std::map<std::pair<std::int32_t, std::int64_t>, std::string> cells_;
};

}  // namespace

std::unique_ptr<OpSource> ruled(std::unique_ptr<OpSource> src, StaticRules& rules) {
  return std::make_unique<RuledSource>(std::move(src), rules);
}

std::uint64_t dry_run(OpSource& src0, DataStore& data, const Platform& p, StaticRules& rules,
                      std::vector<Finding>& findings) {
  trace::DryRunOutputs outputs(data);
  Uncertain uncertain(data);
  std::set<std::string> seen;  // a read in a loop is reported once
  OrchOp op;
  std::uint64_t n = 0;
  int depth = 0;
  std::uint64_t next_local[kNumRings] = {};
  std::vector<Tensor> args;
  while (src0.next(op)) {
    rules.on_op(op);
    switch (op.kind) {
      case OrchOp::Kind::Alloc:
      case OrchOp::Kind::Submit:
      case OrchOp::Kind::Dummy: {
        const auto& in = op.kind == OrchOp::Kind::Alloc ? op.alloc_outputs : op.submit.args;
        // The id the runtime would give: the ring of the scope depth, its next local id.
        const int ring = Runtime::ring_of_depth(depth);
        const TaskId id = make_task_id(ring, next_local[ring]++);
        ++n;
        const std::vector<Tensor>& outs = outputs.make(in, id);
        // The task completes at once: its predicate is decided on the data as
        // it stands, then its declared writes land (Runtime::complete_task).
        if (op.kind != OrchOp::Kind::Alloc) {
          const SubmitRequest& q = op.submit;
          args.clear();
          std::size_t o = 0;
          for (const SubmitArg& a : q.args) args.push_back(a.tag == ArgTag::Output ? outs[o++] : a.tensor);
          const std::string* unsure =
              q.predicate ? uncertain.find(q.predicate->tensor.buffer, q.predicate->element) : nullptr;
          const bool runs = !q.predicate || compare(q.predicate->cmp, data.get(q.predicate->tensor.buffer,
                                                                               q.predicate->element),
                                                    q.predicate->value);
          for (const WriteSpec& w : q.writes) {
            const std::size_t a = static_cast<std::size_t>(w.arg);
            const ArgTag tag = q.args[a].tag;
            const std::string who = task_display(id) + (q.kernel ? " (kernel " + q.kernel->name + ", " : " (") + op.path_text() + ")";
            if (unsure)
              uncertain.mark(args[a].buffer, w.element, who + " is predicated on a value check cannot know: " + *unsure);
            else if (tag == ArgTag::Input || tag == ArgTag::NoDep)
              uncertain.mark(args[a].buffer, w.element,
                             who + " writes it through its " + arg_tag_name(tag) + " argument " + std::to_string(a) +
                                 ", which the runtime does not record as a producer, so get_tensor_data does not "
                                 "wait for it");
            if (runs) data.set(args[a].buffer, w.element, w.value);
          }
        }
        src0.deliver_task(id, outs);
        break;
      }
      case OrchOp::Kind::ScopeBegin:
        if (++depth > Runtime::max_user_scope_depth(p)) {  // the device asserts here and stops
          findings.push_back(Finding{true, "ScopeDepth", op.path_text(),
                                     "scope nesting reaches " + std::to_string(depth) + " levels, more than the " +
                                         std::to_string(Runtime::max_user_scope_depth(p)) +
                                         " the runtime's scope stack holds besides its root scope: begin_scope "
                                         "asserts (\"Scope stack overflow\"), the run fails with host code 507018"});
          return n;
        }
        break;
      case OrchOp::Kind::ScopeEnd:
        --depth;
        break;
      case OrchOp::Kind::Read: {
        const std::int64_t v = data.get(op.read_tensor.buffer, op.read_element);
        if (const std::string* why = uncertain.find(op.read_tensor.buffer, op.read_element);
            why && seen.insert(op.path_text()).second)
          findings.push_back(Finding{false, "ReadValueUnknown", op.path_text(),
                                     "check cannot know the value this read returns on the device (it answered " +
                                         std::to_string(v) + ", every task done in submit order): " + *why +
                                         "; what the program does after it may differ in a run"});
        src0.deliver_value(v);
        break;
      }
      case OrchOp::Kind::Write:
        data.set(op.read_tensor.buffer, op.read_element, op.write_value);
        break;
      case OrchOp::Kind::Fatal:  // the device stops here: nothing after it runs
        findings.push_back(Finding{true, "ReportedFatal", op.path_text(),
                                   "the program reports FATAL(code=" + std::to_string(op.fatal_code) + ")" +
                                       (op.fatal_message.empty() ? "" : ": " + op.fatal_message)});
        return n;
    }
  }
  return n;
}

}  // namespace npusim::diagnose
