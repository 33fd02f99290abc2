// The program interpreter: a program counter over the compiled code
// (sim/trace/program.h) and a table of variable slots. Loops keep their
// counters in one state per `for` op; nothing is allocated per operation once
// the caller's OrchOp has grown to the program's largest op (the set of
// (kernel, block_num) pairs whose phase expressions were checked grows with
// the distinct pairs, not the operations).
#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

#include "models/runtime/chip_view.h"
#include "sim/json/json_util.h"
#include "sim/trace/program.h"
#include "sim/trace/trace.h"

namespace npusim::trace {

namespace {

struct Value {
  enum class Kind : std::uint8_t { Unbound, Int, Tensor, Task };
  Kind kind = Kind::Unbound;
  // A stamp of the last write of the slot, unique over the run (0: never
  // written): an argument filled from this slot is the same while it is.
  std::uint64_t gen = 0;
  std::int64_t i = 0;
  TaskId task = kNoTask;
  Tensor tensor;
};

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::Int: return "an integer";
    case Value::Kind::Tensor: return "a tensor";
    case Value::Kind::Task: return "a task";
    case Value::Kind::Unbound: break;
  }
  return "unbound";
}

class Interpreter final : public OpSource, private ExprEnv {
 public:
  Interpreter(const Trace& trace, DataStore& data, std::uint64_t max_loop_iterations)
      : file_(trace.file), data_(data), keep_(trace.program),
        reader_(keep_->text ? read_program(trace, streamed_) : nullptr), prog_(reader_ ? streamed_ : *keep_),
        vars_(prog_.slot_names.size()), loops_(prog_.fors.size()), iterations_max_(max_loop_iterations),
        iterations_left_(max_loop_iterations) {
    for (std::size_t i = 0; i < trace.tensors.size(); ++i) {
      const ExternalTensor& e = trace.tensors[i];
      Value& v = vars_[prog_.tensor_slots[i]];
      v.kind = Value::Kind::Tensor;
      v.gen = ++gen_;
      v.tensor = data.add_external(e.name, e.dtype, e.shape, e.fill, e.data);
    }
  }

  bool next(OrchOp& op) override {
    if (pending_task_ || pending_read_)
      throw std::logic_error("OpSource::next: the result of the previous operation was not delivered");
    const std::vector<Instr>& code = prog_.code;
    while (pc_ < code.size() || refill(op)) {
      const Instr in = code[pc_++];
      switch (in.code) {
        case Code::Let: {
          const LetOp& l = prog_.lets[in.index];
          set_int(l.slot, eval(l.value));
          break;
        }
        case Code::View: {
          const ViewOp& w = prog_.views[in.index];
          // Made in place in the bound slot, unless it is the parent's own.
          Value& v = vars_[w.bind];
          v.gen = ++gen_;  // first: a view that fails part-way has changed the slot
          if (w.bind != w.of.slot) {
            view_into(tensor_var(w.of), w.view, v.tensor);
          } else {
            view_into(tensor_var(w.of), w.view, scratch_);
            v.tensor = scratch_;
          }
          v.kind = Value::Kind::Tensor;
          break;
        }
        case Code::ForInit: {
          const ForOp& f = prog_.fors[in.index];
          Loop& l = loops_[in.index];
          l.cur = eval(f.from);
          l.to = eval(f.to);
          l.step = eval(f.step);
          if (l.step > 0 ? l.cur < l.to : l.cur > l.to) {
            charge_iterations(f, l);
            set_int(f.var, l.cur);
          } else {
            pc_ = f.exit;
          }
          break;
        }
        case Code::ForNext: {
          const ForOp& f = prog_.fors[in.index];
          Loop& l = loops_[in.index];
          std::int64_t n = 0;
          if (!__builtin_add_overflow(l.cur, l.step, &n) && (l.step > 0 ? n < l.to : n > l.to)) {
            l.cur = n;
            set_int(f.var, n);
            pc_ = f.body;
          }
          break;
        }
        case Code::ScopeBegin:
        case Code::ScopeEnd: {
          const ScopeOp& s = prog_.scopes[in.index];
          op.kind = in.code == Code::ScopeBegin ? OrchOp::Kind::ScopeBegin : OrchOp::Kind::ScopeEnd;
          op.mode = s.mode;
          // A ScopeBegin's field (orch_ops.h), which only a ScopeBegin writes:
          // a scope in a loop finds its own site still there, and is not
          // copied again. Compared, not remembered: a caller's new op at the
          // old one's address starts with no site.
          if (op.kind == OrchOp::Kind::ScopeBegin && op.site != s.site) op.site = s.site;
          op.path_ref = &s.path;
          return true;
        }
        case Code::Task: {
          const TaskOp& t = prog_.tasks[in.index];
          fill_task(t, in.index, op);
          pending_task_ = &t;
          return true;
        }
        case Code::Read: {
          const ReadOp& r = prog_.reads[in.index];
          op.kind = r.set ? OrchOp::Kind::Write : OrchOp::Kind::Read;
          op.read_tensor = tensor_var(r.tensor);
          op.read_element = element_of(op.read_tensor, r.index, r.element, r.path);
          if (r.set) op.write_value = eval(r.value);
          op.path_ref = &r.path;
          if (!r.set) pending_read_ = &r;
          return true;
        }
        case Code::Fatal: {
          const FatalOp& f = prog_.fatals[in.index];
          op.kind = OrchOp::Kind::Fatal;
          op.fatal_code = f.code;
          op.fatal_message = f.message;
          op.path_ref = &f.path;
          return true;
        }
      }
    }
    return false;
  }

  void deliver_task(TaskId id, const std::vector<Tensor>& outputs) override {
    const TaskOp& t = take_pending_task("deliver_task");
    if (t.outputs != outputs.size())
      throw std::logic_error("OpSource::deliver_task: " + std::to_string(outputs.size()) + " outputs for " +
                             std::to_string(t.outputs) + " OUTPUT arguments at " + t.path);
    std::size_t k = 0;
    for (const ArgSpec& a : t.args)
      if (a.tag == ArgTag::Output) set_tensor(a.name.slot, outputs[k++]);
    bind_task_id(t, id);
  }

  // The outputs read where the runtime keeps them: the task's arguments are
  // the op's, in order (its alloc outputs or submit args).
  bool deliver_task_args(TaskId id, const std::vector<Tensor>& args, const std::vector<ArgTag>& tags) override {
    const TaskOp& t = take_pending_task("deliver_task_args");
    if (args.size() != t.args.size() || tags.size() != t.args.size())
      throw std::logic_error("OpSource::deliver_task_args: " + std::to_string(args.size()) + " arguments for " +
                             std::to_string(t.args.size()) + " at " + t.path);
    for (const std::uint8_t *o = t.output_args.data(), *end = o + t.outputs; o != end; ++o) {
      const std::uint32_t i = *o;
      if (tags[i] != ArgTag::Output)
        throw std::logic_error("OpSource::deliver_task_args: argument " + std::to_string(i) + " is no OUTPUT at " + t.path);
      set_tensor(t.args[i].name.slot, args[i]);
    }
    bind_task_id(t, id);
    return true;
  }

  const TaskOp& take_pending_task(const char* what) {
    if (!pending_task_)
      throw std::logic_error(std::string("OpSource::") + what + ": no alloc, submit or dummy is pending");
    const TaskOp& t = *pending_task_;
    pending_task_ = nullptr;
    return t;
  }
  void bind_task_id(const TaskOp& t, TaskId id) {
    if (t.id_slot >= 0) {
      Value& v = vars_[t.id_slot];
      v.kind = Value::Kind::Task;
      v.gen = ++gen_;
      v.task = id;
    }
  }

  // finish_checks: compiles the ops not reached.
  void compile_rest() {
    if (reader_)
      while (reader_->next()) {
      }
  }

  void deliver_value(std::int64_t value) override {
    if (!pending_read_) throw std::logic_error("OpSource::deliver_value: no read is pending");
    if (pending_read_->bind >= 0) set_int(pending_read_->bind, value);
    pending_read_ = nullptr;
  }

 private:
  struct Loop {
    std::int64_t cur = 0, to = 0, step = 1;
  };

  // A streamed program: the next top-level op, compiled in place of the
  // last one (sim/trace/program.h).
  // (A top-level set_cache_policy compiles to no code.)
  // The op's path points into the program's tables, which the next op's
  // replace: it becomes the op's own string first (once per top-level op),
  // so the orchestrator still reads the last op's path if this one fails.
  bool refill(OrchOp& op) {
    if (reader_ && op.path_ref) {
      op.path = *op.path_ref;
      op.path_ref = nullptr;
      op.submit.path_ref = nullptr;  // read only during a submit
    }
    while (reader_ && reader_->next()) {
      launch_passed_.clear();  // the task ops' indices are the new op's
      for (std::vector<std::uint64_t>& st : stamps_) st.clear();  // kept allocated: a streamed program refills per top-level op
      vars_.resize(prog_.slot_names.size());
      loops_.resize(prog_.fors.size());
      pc_ = 0;
      if (!prog_.code.empty()) return true;
    }
    return false;
  }

  // A loop's whole trip count is charged when it starts (a loop always runs
  // to its end), so a loop too long for the budget fails before its first
  // iteration, and a loop with an empty body cannot spin for ever.
  void charge_iterations(const ForOp& f, const Loop& l) {
    const __int128 span = l.step > 0 ? __int128(l.to) - l.cur : __int128(l.cur) - l.to;  // > 0
    const __int128 step = l.step > 0 ? __int128(l.step) : -__int128(l.step);
    const __int128 trips = (span + step - 1) / step;
    if (trips <= __int128(iterations_left_)) {
      iterations_left_ -= static_cast<std::uint64_t>(trips);
      return;
    }
    const std::string n = std::to_string(static_cast<std::uint64_t>(trips));  // < 2^64
    const std::string limit = "the limit of " + std::to_string(iterations_max_) +
                              " loop iterations per run (all loops together)";
    if (trips > __int128(iterations_max_)) fail(f.path, "this loop runs " + n + " iterations, more than " + limit);
    fail(f.path, "this loop runs " + n + " iterations, more than the " + std::to_string(iterations_left_) +
                     " left of " + limit);
  }

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw InputError(file_, path, message);
  }

  // ---- variables -------------------------------------------------------------
  std::string kind_error(int slot, Value::Kind want) const {
    const Value& v = vars_[slot];
    std::string s = "variable '" + prog_.slot_names[slot] + "' ";
    if (v.kind == Value::Kind::Unbound) return s + "is not bound";
    return s + "is " + kind_name(v.kind) + ", not " + kind_name(want);
  }
  bool get(int slot, std::int64_t& value) const override {
    const Value& v = vars_[slot];
    value = v.i;
    return v.kind == Value::Kind::Int;
  }
  std::string describe(int slot) const override { return kind_error(slot, Value::Kind::Int); }

  void set_int(int slot, std::int64_t i) {
    Value& v = vars_[slot];
    v.kind = Value::Kind::Int;
    v.gen = ++gen_;
    v.i = i;
  }
  void set_tensor(int slot, const Tensor& t) {
    Value& v = vars_[slot];
    v.kind = Value::Kind::Tensor;
    v.gen = ++gen_;
    v.tensor = t;
  }
  const Tensor& tensor_var(const NameRef& r) const {
    const Value& v = vars_[r.slot];
    if (v.kind != Value::Kind::Tensor) fail(r.path, kind_error(r.slot, Value::Kind::Tensor));
    return v.tensor;
  }
  TaskId task_var(const NameRef& r) const {
    const Value& v = vars_[r.slot];
    if (v.kind != Value::Kind::Task) fail(r.path, kind_error(r.slot, Value::Kind::Task));
    return v.task;
  }

  // A constant is returned as it is (checked at load time), inline: most
  // fields are constants (a view's shape, a block_num), and the call cost
  // more than the test. A value in its field's range costs no message string.
  std::int64_t eval(const IntField& f) const {
    if (f.expr.is_const()) return f.expr.const_value();
    return eval_expr(f);
  }
  [[gnu::noinline]] std::int64_t eval_expr(const IntField& f) const {
    std::int64_t v = 0;
    try {
      v = f.expr.eval(*this);
    } catch (const EvalError& e) {
      fail(f.path, e.what());
    }
    if (!int_field_ok(f, v)) fail(f.path, int_field_error(f, v));
    return v;
  }

  // ---- views and elements ----------------------------------------------------
  static std::string rank_mismatch(const char* list, std::size_t n, int rank) {
    return std::string(list) + " has " + std::to_string(n) + (n == 1 ? " entry" : " entries") +
           " but the tensor has rank " + std::to_string(rank);
  }

  // The view, written into `t` (not `parent` itself): a tensor is ~200
  // bytes, and a view is made for most arguments of every submit.
  void view_into(const Tensor& parent, const ViewSpec& s, Tensor& t) const {
    if (s.strided_form)
      t = strided_view_of(parent, s);
    else
      box_view_into(parent, s, t);
    if (s.version) t.version = static_cast<std::uint32_t>(eval(*s.version));
    if (s.no_creator) t.owner = kNoTask;
  }

  // The runtime's encoding (ChipTensor), absolute in the parent's buffer.
  Tensor strided_view_of(const Tensor& parent, const ViewSpec& s) const {
    ChipView v;
    v.dtype = s.dtype ? *s.dtype : parent.dtype;
    const std::int64_t bytes = parent.buffer_numel() * dtype_bytes(parent.dtype);
    if (s.byte_offset) {
      const std::int64_t b = eval(*s.byte_offset);
      if (b >= bytes)
        fail(s.byte_offset->path, "byte_offset " + std::to_string(b) + " is beyond the buffer's " +
                                      std::to_string(bytes) + " bytes");
      v.byte_offset = static_cast<std::uint64_t>(b);
    }
    v.numel = s.numel ? eval(*s.numel) : (bytes - static_cast<std::int64_t>(v.byte_offset)) / dtype_bytes(v.dtype);
    v.ndims = static_cast<int>(s.shape.size());
    v.start = eval(s.start);
    std::int64_t last = v.start;
    bool empty = false;
    for (int d = 0; d < v.ndims; ++d) {
      v.shape[d] = eval(s.shape[d]);
      v.strides[d] = eval(s.strides[d]);
      empty = empty || v.shape[d] == 0;
      if (v.shape[d] > 0 && __builtin_add_overflow(last, (v.shape[d] - 1) * v.strides[d], &last))
        fail(s.path, "the view's last element overflows");
    }
    if (!empty && last >= v.numel)
      fail(s.path, "view out of bounds: its last element " + std::to_string(last) + " >= the buffer's " +
                       std::to_string(v.numel) + " elements");
    v.version = parent.version;
    v.owner = parent.owner;
    return make_chip_view(data_, parent, v);
  }

  void box_view_into(const Tensor& parent, const ViewSpec& s, Tensor& t) const {
    t = parent;
    if (s.offset.empty() && s.shape.empty()) return;
    if (parent.strided) fail(s.path, "offset/shape views of a strided view are not supported: use the strided form");
    const std::vector<IntField>& given = s.offset.empty() ? s.shape : s.offset;
    if (given.size() != parent.ndims)
      fail(s.path, rank_mismatch(s.offset.empty() ? "shape" : "offset", given.size(), parent.ndims));
    // A zero-size view (an extent of 0 in any dimension) captures no bytes:
    // the device keeps the parent's start, takes the shape as given and does
    // not check the offsets, which codegen leaves out of range when it
    // clamps a dynamic length to 0 (common/task_interface/tensor.h
    // ChipTensor::view, "the empty-view contract").
    // A fixed shape (constant, every extent > 0: the loader's finish_view)
    // is read as it is: nothing to evaluate, nothing negative or empty.
    if (!s.shape.empty() && !s.fixed_shape) {
      std::array<std::int64_t, kMaxDims> shp{};  // given.size() == ndims <= kMaxDims: no allocation per view
      bool empty = false;
      for (std::size_t d = 0; d < given.size(); ++d) {
        shp[d] = eval(s.shape[d]);
        if (shp[d] < 0) fail(s.path, "view shape in dim " + std::to_string(d) + " is negative: " + std::to_string(shp[d]));
        empty = empty || shp[d] == 0;
      }
      if (empty) {
        if (!s.offset.empty())
          for (std::size_t d = 0; d < given.size(); ++d) (void)eval(s.offset[d]);  // evaluated, not checked
        for (std::size_t d = 0; d < given.size(); ++d) t.shape[d] = shp[d];
        return;
      }
    }
    for (std::size_t d = 0; d < given.size(); ++d) {
      const std::int64_t extent = parent.shape[d];
      const std::int64_t off = s.offset.empty() ? 0 : eval(s.offset[d]);
      std::int64_t shp = 0;
      if (s.shape.empty()) {
        if (off >= extent)
          fail(s.path, "view out of bounds in dim " + std::to_string(d) + ": offset " + std::to_string(off) +
                           " >= " + std::to_string(extent));
        shp = extent - off;
      } else {
        shp = s.fixed_shape ? s.shape_value[d] : eval(s.shape[d]);
        if (off > extent - shp)
          fail(s.path, "view out of bounds in dim " + std::to_string(d) + ": offset " + std::to_string(off) +
                           " + shape " + std::to_string(shp) + " > " + std::to_string(extent));
      }
      t.offset[d] = parent.offset[d] + off;
      t.shape[d] = shp;
    }
  }

  // Linear buffer element of `index` (per dim, within the view), or `element`
  // itself; `path` holds the "index" list.
  std::int64_t element_of(const Tensor& view, const std::vector<IntField>& index,
                          const std::optional<IntField>& element, const std::string& path) const {
    if (element) {
      const std::int64_t e = eval(*element);
      if (e >= view.buffer_numel())
        fail(element->path, "element " + std::to_string(e) + " is beyond the buffer's " +
                                std::to_string(view.buffer_numel()) + " elements");
      return e;
    }
    if (index.size() != view.ndims)
      fail(json_input::pointer_join(path, "index"), rank_mismatch("index", index.size(), view.ndims));
    std::int64_t e = view.start_offset();
    for (std::size_t d = 0; d < index.size(); ++d) {
      std::int64_t i = eval(index[d]);
      if (i >= view.shape[d])
        fail(index[d].path, "index out of bounds in dim " + std::to_string(d) + ": " + std::to_string(i) +
                                " >= " + std::to_string(view.shape[d]));
      e += i * view.stride(static_cast<int>(d));
    }
    return e;
  }

  // ---- tasks ---------------------------------------------------------------
  // Sets every field of `out` (an argument of an earlier op, reused).
  void fill_arg(const ArgSpec& a, SubmitArg& out) const {
    out.tag = a.tag;
    out.manual_dep = a.manual_dep;
    out.fill = 0;
    out.cache_bypass = false;
    if (a.tag != ArgTag::Output) {
      view_into(tensor_var(a.name), a.view, out.tensor);
      return;
    }
    Tensor& t = out.tensor;
    t = a.out_tensor;  // dtype, rank and constant extents
    for (std::size_t d = 0; d < a.out_shape.size(); ++d)
      if (!a.out_shape[d].expr.is_const()) t.buf_shape[d] = t.shape[d] = eval(a.out_shape[d]);
    if (checked_numel(t.shape.data(), t.ndims) < 0) fail(a.path, too_many_elements());
    out.fill = a.fill ? eval(*a.fill) : 0;
  }

  // The kernel scopes' set_cache_policy for a buffer: the innermost
  // declaration naming it (the tensor or any view of it) decides; scopes
  // that are not kernel scopes carry theirs without effect. nullptr: none.
  const CachePolicyDecl* scope_policy(int set, decltype(Tensor::buffer) buffer) const {
    for (int k = set; k >= 0; k = prog_.policy_sets[static_cast<std::size_t>(k)].parent) {
      const PolicySet& ps = prog_.policy_sets[static_cast<std::size_t>(k)];
      if (!ps.lowers) continue;
      for (const CachePolicyDecl& d : ps.decls) {
        const Value& v = vars_[d.tensor.slot];
        if (v.kind == Value::Kind::Tensor && v.tensor.buffer == buffer) return &d;
      }
    }
    return nullptr;
  }

  void resolve_cache_policies(int set, std::vector<SubmitArg>& args) const {
    for (SubmitArg& a : args) {
      if (a.tag == ArgTag::Output) continue;
      const CachePolicyDecl* d = scope_policy(set, a.tensor.buffer);
      a.cache_bypass = d && d->bypass;  // set or cleared: fill_submit_args leaves an unchanged argument as it was
    }
  }

  // The compiler's check (seed 000_*.txt, "让流式操作数绕过缓存": "在作用域
  // 会写入的张量上声明 BYPASS 是错误"): in a kernel scope, BYPASS on a tensor
  // the scope's kernel writes (an OUTPUT, INOUT or OUTPUT_EXISTING argument,
  // or one its body stores to) is rejected, whether declared by
  // set_cache_policy or by a load's own `cache` (docs/gm.md, "Correctness
  // checks").
  void check_bypass_writes(const TaskOp& t, const SubmitRequest& s) const {
    const KernelDef& k = *t.kernel;
    std::vector<const Phase*> store_of(s.args.size(), nullptr), bypass_of(s.args.size(), nullptr);
    for (const LaneBody& l : k.lanes)
      for (const Phase& ph : l.phases) {
        if (ph.arg < 0 || static_cast<std::size_t>(ph.arg) >= s.args.size()) continue;
        if (ph.kind == PhaseKind::Store && !store_of[ph.arg]) store_of[ph.arg] = &ph;
        if (ph.kind == PhaseKind::Load && ph.cache == CacheMode::Bypass && !bypass_of[ph.arg]) bypass_of[ph.arg] = &ph;
      }
    for (std::size_t i = 0; i < s.args.size(); ++i) {
      const SubmitArg& a = s.args[i];
      const ArgSpec& spec = t.args[i];
      std::string how;
      if (a.tag == ArgTag::Output || a.tag == ArgTag::Inout || a.tag == ArgTag::OutputExisting)
        how = std::string("as its ") + arg_tag_name(a.tag) + " argument " + std::to_string(i) + " (" + spec.path + ")";
      else if (store_of[i])
        how = "by the store at " + store_of[i]->path + " (argument " + std::to_string(i) + ", " + spec.path + ")";
      else
        continue;
      const std::string tensor =
          spec.name.slot < 0 ? "its output" : "tensor \"" + prog_.slot_names[static_cast<std::size_t>(spec.name.slot)] + "\"";
      const std::string writes = "kernel \"" + k.name + "\", submitted at " + t.path + " in the same kernel scope, writes " +
                                 tensor + " " + how;
      const std::string rule = ": BYPASS on a tensor the scope writes is an error (the compiler's check: BYPASS asserts "
                               "that nobody writes the bytes while the kernel runs, and a cached write with a bypassed "
                               "read of the same bytes is a coherency bug); expected ";
      if (a.tag != ArgTag::Output)
        if (const CachePolicyDecl* d = scope_policy(t.policy_set, a.tensor.buffer); d && d->bypass)
          fail(json_input::pointer_join(d->path, "policy"),
               "set_cache_policy BYPASS, but " + writes + rule + "\"default\" (or no declaration) for a tensor the scope writes");
      if (bypass_of[i])
        fail(bypass_of[i]->path + "/load/cache",
             "a load with cache \"bypass\" of argument " + std::to_string(i) + ", but " + writes + rule +
                 "\"default\" (or no cache) on a load of a tensor its kernel scope writes");
    }
  }

  // An alloc's outputs (a submit's arguments: fill_submit_args): the
  // elements the last op left are filled again as
  // they are (fill_arg sets every field), not cleared and value-initialised
  // anew: a value-initialisation of a ~240-byte argument compiles to a
  // `rep stos`, slow to start, and a copy of blank_arg_ (which the compiler
  // cannot fold to a memset) to a few vector moves.
  void fill_args(const std::vector<ArgSpec>& specs, std::vector<SubmitArg>& args) const {
    if (args.size() > specs.size()) args.resize(specs.size());
    while (args.size() < specs.size()) args.push_back(blank_arg_);
    for (std::size_t i = 0; i < specs.size(); ++i) fill_arg(specs[i], args[i]);
  }

  // Each task op of the program keeps an argument list of its own length,
  // lent to the caller's submit while that op is the current one (a swap of
  // two vectors): the ops of a loop body take turns, and one list shared by
  // all of them was cut to each op's length and grown again by copies of
  // blank_arg_ at every submit. fill_submit_args refills only what can
  // have changed since the op's last submit (its stamps_).
  // The lists stay with their ops only while the caller passes the same
  // OrchOp (the orchestrator and the dry run do): another one's list would
  // take the lent op's place, so every stamp is dropped then.
  void lend_args(std::uint32_t index, std::vector<SubmitArg>& args) {
    if (&args != lent_to_) {
      for (std::vector<std::uint64_t>& st : stamps_) st.clear();
      lent_to_ = &args;
    }
    if (lent_ == index) return;
    if (lent_ != kNoneLent) args.swap(arg_lists_[lent_]);  // the last op's list back, the caller's own out
    if (index >= arg_lists_.size()) arg_lists_.resize(index + 1);
    args.swap(arg_lists_[index]);
    lent_ = index;
  }

  // A submit's arguments in its op's own list (lend_args), refilled only
  // where they can have changed since that op's last submit: a Parent
  // argument (a view with constant fields, the plain `{"in": NAME}` among
  // them) when its variable was written since (Value::gen), an Every one
  // always, a Once one (an OUTPUT of constant extents) only at the op's
  // first submit; after that only the op's `varying` list is walked.
  // Nothing else writes the list (the consumers read the submit as const),
  // but for `cache_bypass`, which resolve_cache_policies sets afterwards and
  // clears itself. On the paged-attention benches most arguments are
  // Parent or Once, and about half of them unchanged (the batch's
  // accumulators, every output).
  void fill_submit_args(const TaskOp& t, std::uint32_t index, std::vector<SubmitArg>& args) {
    const std::vector<ArgSpec>& specs = t.args;
    if (index >= stamps_.size()) stamps_.resize(index + 1);
    std::vector<std::uint64_t>& stamp = stamps_[index];
    if (args.size() != specs.size() || stamp.size() != specs.size()) {  // the op's first submit
      if (args.size() > specs.size()) args.resize(specs.size());
      while (args.size() < specs.size()) args.push_back(blank_arg_);
      stamp.clear();  // until every argument is filled (fill_arg may throw)
      for (std::size_t i = 0; i < specs.size(); ++i) fill_arg(specs[i], args[i]);
      stamp.assign(specs.size(), 0);
      for (std::uint32_t k = 0; k < t.varying_count; ++k)
        if (t.varying[k].reuse == ArgSpec::Reuse::Parent) stamp[t.varying[k].arg] = vars_[t.varying[k].slot].gen;
      for (std::size_t i = 0; i < specs.size(); ++i)
        if (specs[i].reuse == ArgSpec::Reuse::Once) stamp[i] = 1;
      return;
    }
    for (const TaskOp::Varying *it = t.varying.data(), *end = it + t.varying_count; it != end; ++it) {
      const TaskOp::Varying& w = *it;
      SubmitArg& out = args[w.arg];
      if (w.reuse == ArgSpec::Reuse::Every) {
        fill_arg(specs[w.arg], out);
        continue;
      }
      const Value& v = vars_[w.slot];
      std::uint64_t& st = stamp[w.arg];
      if (v.gen == st) continue;
      st = kNoStamp;  // set again once the argument is complete
      if (w.plain)
        out.tensor = tensor_var(specs[w.arg].name);  // the other fields are as the first submit set them
      else
        fill_arg(specs[w.arg], out);
      st = v.gen;
    }
  }

  void fill_task(const TaskOp& t, std::uint32_t index, OrchOp& op) {
    op.kind = t.kind;
    if (t.kind == OrchOp::Kind::Alloc) {
      fill_args(t.args, op.alloc_outputs);
      op.path_ref = &t.path;  // last: an op that fails leaves the last op's path (orch_ops.h)
      return;
    }
    SubmitRequest& s = op.submit;
    s.kernel = t.kernel;
    lend_args(index, s.args);
    fill_submit_args(t, index, s.args);
    s.block_num = static_cast<int>(eval(t.block_num));
    s.deps.clear();
    for (const NameRef& d : t.deps) s.deps.push_back(task_var(d));
    if (!s.dep_flags.empty() || !t.dep_flags.empty()) s.dep_flags = t.dep_flags;
    s.early_resolve = t.early_resolve;
    s.sync_start = t.sync_start;
    s.predicate.reset();
    if (t.predicate) {
      const PredicateOp& p = *t.predicate;
      PredicateSpec& ps = s.predicate.emplace();
      ps.tensor = tensor_var(p.tensor);
      if (!dtype_is_signed_int(ps.tensor.dtype))
        fail(p.tensor.path, std::string("predicate operand must be a signed integer tensor (int8, int16, int32 or "
                                        "int64), got ") + dtype_trace_name(ps.tensor.dtype));
      ps.element = element_of(ps.tensor, p.index, p.element, p.path);
      ps.cmp = p.cmp;
      ps.value = eval(p.value);
    }
    s.writes.clear();
    for (const WriteOp& w : t.writes) {
      WriteSpec& ws = s.writes.emplace_back();
      ws.arg = w.arg;
      ws.element = element_of(s.args[w.arg].tensor, w.index, w.element, w.path);
      ws.value = eval(w.value);
    }
    if (prog_.policies_lower && t.kernel) resolve_cache_policies(t.policy_set, s.args);
    if (t.kernel && t.in_kernel_scope) check_bypass_writes(t, s);
    if (t.kernel) check_launch(t, index, s);
    if (!s.site.empty() || !t.site.empty()) s.site = t.site;  // most submits name no site
    // The op's and the submit's path are the program's, read in place
    // (OrchOp::path_ref, SubmitRequest::path_ref); written last, so an op
    // that fails leaves the last op's path.
    s.path_ref = &t.path;
    op.path_ref = &t.path;
  }

  // The launch check of a task op, skipped when it passed for this op with
  // the same block_num and its kernel has no syncall workspace: it depends
  // on nothing else (the kernel and the number of arguments are the op's;
  // the (kernel, block_num) pair is then already recorded), so it would
  // pass again and change nothing. Most programs submit each op of a loop
  // body with one block_num: a call, a search of the kernels' facts and of
  // the checked pairs per submit, each time to no effect.
  struct LaunchPassed {
    bool valid = false;
    int block_num = 0;
  };
  std::vector<LaunchPassed> launch_passed_;  // by task op, for the current top-level op (refill clears it)
  void check_launch(const TaskOp& t, std::uint32_t index, const SubmitRequest& s) {
    if (index < launch_passed_.size() && launch_passed_[index].valid && launch_passed_[index].block_num == s.block_num)
      return;
    launch_.check(*t.kernel, s, t.path);
    bool workspace = false;
    for (const LaneBody& lane : t.kernel->lanes)
      for (const Phase& ph : lane.phases) workspace = workspace || ph.workspace_arg >= 0;
    if (index >= launch_passed_.size()) launch_passed_.resize(index + 1);
    launch_passed_[index] = LaunchPassed{!workspace, s.block_num};
  }

  std::string file_;
  DataStore& data_;
  std::shared_ptr<const Program> keep_;
  Program streamed_;                       // a streamed program's current top-level op
  std::unique_ptr<ProgramReader> reader_;  // a streamed program's reader, else null
  const Program& prog_;                    // streamed_ or *keep_
  std::vector<Value> vars_;
  std::vector<Loop> loops_;
  std::size_t pc_ = 0;
  std::uint64_t iterations_max_, iterations_left_;
  LaunchChecker launch_{file_};
  const TaskOp* pending_task_ = nullptr;
  const ReadOp* pending_read_ = nullptr;
  Tensor scratch_;  // a view of a tensor bound to its own name
  SubmitArg blank_arg_;  // fill_args
  static constexpr std::uint32_t kNoneLent = ~0u;
  std::vector<std::vector<SubmitArg>> arg_lists_;  // lend_args, by task op
  std::uint32_t lent_ = kNoneLent;                 // the task op whose list the caller's submit holds
  const std::vector<SubmitArg>* lent_to_ = nullptr;  // the caller's list the lent one was swapped into
  static constexpr std::uint64_t kNoStamp = ~0ull;  // matches no Value::gen
  std::vector<std::vector<std::uint64_t>> stamps_;  // fill_submit_args, by task op: per argument, the Value::gen it was filled from (Parent), 1 (Once) or 0
  std::uint64_t gen_ = 0;                           // Value::gen's last stamp
};

}  // namespace

std::unique_ptr<OpSource> make_interpreter(const Trace& trace, DataStore& data, std::uint64_t max_loop_iterations) {
  if (!trace.program) throw std::logic_error("make_interpreter: the trace has no program");
  return std::make_unique<Interpreter>(trace, data, max_loop_iterations);
}

// ---- launch checks -----------------------------------------------------------
// A kernel's phase expressions (offset, bytes, used_cores) depend only on
// block_idx and block_num, so each (kernel, block_num) pair is checked once,
// for every block, when a submit first uses it: a division by zero or an
// out-of-range value is an input error here, not a failure inside the model.
void LaunchChecker::check(const KernelDef& k, const SubmitRequest& req, const std::string& submit_path) {
  const int nargs = static_cast<int>(req.args.size());
  const KernelFacts f = facts(k);
  if (f.max_arg >= nargs)  // the phases again, for the first one out of range
    for (const LaneBody& lane : k.lanes)
      for (const Phase& ph : lane.phases)
        for (int a : {ph.arg, ph.workspace_arg})
          if (a >= nargs)
            throw InputError(file_, submit_path, "kernel \"" + k.name + "\" uses argument " + std::to_string(a) +
                                                     " (at " + ph.path + "), but the submit passes " +
                                                     std::to_string(nargs));
  if (first_use(&k, req.block_num)) {
    for (const LaneBody& lane : k.lanes)
      for (const Phase& ph : lane.phases) {
        check_block_expr(ph.offset, ph.path, phase_key(ph.kind), "offset", 0, kMaxTransferBytes, req.block_num,
                         submit_path);
        check_block_expr(ph.bytes, ph.path, phase_key(ph.kind), "bytes", 0, kMaxTransferBytes, req.block_num,
                         submit_path);
        check_block_expr(ph.used_cores, ph.path, phase_key(ph.kind), "used_cores", 1,
                         std::numeric_limits<std::int64_t>::max(), req.block_num, submit_path);
      }
  }
  if (!f.workspace) return;
  for (const LaneBody& lane : k.lanes)
    for (const Phase& ph : lane.phases) {
      if (ph.workspace_arg < 0) continue;
      const Tensor& ws = req.args[ph.workspace_arg].tensor;
      if (ws.dtype != DType::INT32 || ws.view_numel() < 16)
        throw InputError(file_, json_input::pointer_join(json_input::pointer_join(submit_path, "args"), ph.workspace_arg),
                         "syncall workspace argument " + std::to_string(ph.workspace_arg) +
                             " must be an int32 tensor of at least 16 elements, got " + dtype_trace_name(ws.dtype) +
                             " with " + std::to_string(ws.view_numel()) + " elements");
    }
}

// The pairs met first are kept in a short list too, searched before the set:
// a program submits a few pairs over and over, and a tree lookup per submit
// cost more than the rest of the check.
bool LaunchChecker::first_use(const KernelDef* k, int block_num) {
  for (const auto& [kk, n] : recent_)
    if (kk == k && n == block_num) return false;
  if (!checked_.insert({k, block_num}).second) return false;
  if (recent_.size() < kRecent) recent_.emplace_back(k, block_num);
  return true;
}

// What a kernel's phases ask of every submit, gathered once per kernel (the
// first kRecent kernels; any others each time): the check of each submit
// walked every phase twice.
LaunchChecker::KernelFacts LaunchChecker::facts(const KernelDef& k) {
  for (const KernelFacts& f : kernels_)
    if (f.kernel == &k) return f;
  KernelFacts f;
  f.kernel = &k;
  for (const LaneBody& lane : k.lanes)
    for (const Phase& ph : lane.phases) {
      f.max_arg = std::max({f.max_arg, ph.arg, ph.workspace_arg});
      f.workspace = f.workspace || ph.workspace_arg >= 0;
    }
  if (kernels_.size() < kRecent) kernels_.push_back(f);
  return f;
}

void LaunchChecker::check_block_expr(const Expr& e, const std::string& phase_path, const char* key, const char* name,
                                     std::int64_t lo, std::int64_t hi, int block_num,
                                     const std::string& submit_path) const {
  if (e.empty() || e.is_const()) return;  // constants were checked at load time
  IntField f;
  f.path = json_input::pointer_join(json_input::pointer_join(phase_path, key), name);
  f.name = name;
  f.lo = lo;
  f.hi = hi;
  for (int b = 0; b < block_num; ++b) {
    std::string err;
    try {
      err = int_field_error(f, e.eval(BlockEnv(b, block_num)));
    } catch (const EvalError& x) {
      err = x.what();
    }
    if (!err.empty())
      throw InputError(file_, f.path, err + " (block_idx " + std::to_string(b) + " of block_num " +
                                          std::to_string(block_num) + ", submitted at " + submit_path + ")");
  }
}

void finish_checks(const Trace& trace, OpSource* source) {
  if (!trace.program || !trace.program->text || trace.program->ops_checked) return;
  if (auto* in = dynamic_cast<Interpreter*>(source)) return in->compile_rest();
  Program p;
  for (auto reader = read_program(trace, p); reader->next();) {
  }
}

std::unique_ptr<OpSource> make_source(const Trace& trace, DataStore& data, const Platform& platform,
                                      const RunConfig& config) {
  if (trace.external) return trace.external->start(trace, data, platform, config);
  return make_interpreter(trace, data);
}

std::vector<const KernelDef*> Trace::all_kernels() const {
  std::vector<const KernelDef*> out;
  for (const auto& k : kernels) out.push_back(k.get());
  if (external)
    for (const KernelDef* k : external->defined_kernels()) out.push_back(k);
  return out;
}

const std::vector<Tensor>& DryRunOutputs::make(const std::vector<SubmitArg>& args, TaskId owner) {
  outs_.clear();
  for (const SubmitArg& a : args) {
    if (a.tag != ArgTag::Output) continue;
    Tensor t = a.tensor;
    t.buf_shape = t.shape;
    t.offset = {};
    t.addr = next_addr_;
    next_addr_ += (t.buffer_bytes() + 1023) / 1024 * 1024 + 1024;
    t.buffer = data_.new_buffer("", a.fill);
    t.owner = owner;
    outs_.push_back(t);
  }
  return outs_;
}

}  // namespace npusim::trace
