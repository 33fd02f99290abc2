// SceneSource (scene_source.h): the runner's calls as OrchOps.
#include "sim/scene/scene_source.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_set>

#include "models/common/errors.h"
#include "models/runtime/chip_view.h"
#include "models/runtime/error_codes.h"
#include "sim/scene/protocol.h"

extern char** environ;

namespace npusim::scene {

namespace {

constexpr DType kSdkTypes[] = {DType::FP32, DType::FP16, DType::INT32, DType::INT16, DType::INT8,   DType::UINT8,
                               DType::BF16, DType::INT64, DType::UINT64, DType::UINT16, DType::UINT32, DType::BOOL};

const char* signal_text(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV, a segmentation fault";
    case SIGABRT: return "SIGABRT, an abort";
    case SIGBUS: return "SIGBUS, a bus error";
    case SIGFPE: return "SIGFPE, an arithmetic error";
    case SIGILL: return "SIGILL, an illegal instruction";
    case SIGKILL: return "SIGKILL";
    case SIGXCPU: return "SIGXCPU: it ran for an hour of CPU time";
    default: return "a signal";
  }
}

// The runner process and its two pipes.
class Child {
 public:
  void spawn(const std::string& runner, const std::string& library) {
    int ops[2], reply[2];
    if (::pipe2(ops, O_CLOEXEC) != 0 || ::pipe2(reply, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("cannot create the orchestration pipes: ") + std::strerror(errno));
#ifdef F_SETPIPE_SZ
    ::fcntl(ops[1], F_SETPIPE_SZ, 1 << 20);  // the runner runs ahead of the simulation by up to a megabyte
#endif
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, ops[1], wire::kOpsFd);
    posix_spawn_file_actions_adddup2(&fa, reply[0], wire::kReplyFd);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    std::vector<char*> argv = {const_cast<char*>(runner.c_str()), const_cast<char*>(library.c_str()), nullptr};
    const int err = posix_spawn(&pid_, runner.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(ops[1]);
    ::close(reply[0]);
    in_ = ops[0];
    out_ = reply[1];
    if (err != 0) {
      pid_ = -1;
      throw InputError(runner, "", std::string("cannot start the orchestration runner: ") + std::strerror(err) +
                                       " (set NPUSIM_ORCH_RUNNER to its path)");
    }
  }

  ~Child() {
    if (in_ >= 0) ::close(in_);
    if (out_ >= 0) ::close(out_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      reap();
    }
  }

  // One framed message; false at the end of the stream.
  bool read_message(std::vector<std::uint8_t>& msg) {
    std::uint32_t len = 0;
    if (!read_exact(&len, sizeof len)) return false;
    if (len == 0 || len > wire::kMaxMessage) throw wire::DecodeError("bad message length " + std::to_string(len));
    msg.resize(len);
    return read_exact(msg.data(), len);
  }

  bool write(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    while (n > 0) {
      const ssize_t w = ::write(out_, b, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;  // the runner has gone (SIGPIPE is ignored): the next read says why
      b += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }

  // How the runner ended: "" for a clean exit with status 0.
  std::string end_text() {
    const int st = reap();
    if (WIFSIGNALED(st)) {
      const int sig = WTERMSIG(st);
      return "killed by signal " + std::to_string(sig) + " (" + signal_text(sig) + ")";
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0) return "exited with status " + std::to_string(WEXITSTATUS(st));
    return "";
  }

 private:
  bool read_exact(void* dst, std::size_t n) {
    auto* p = static_cast<std::uint8_t*>(dst);
    while (n > 0) {
      if (pos_ == len_) {
        const ssize_t r = ::read(in_, buf_, sizeof buf_);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        pos_ = 0;
        len_ = static_cast<std::size_t>(r);
      }
      const std::size_t k = std::min(n, len_ - pos_);
      std::memcpy(p, buf_ + pos_, k);
      pos_ += k;
      p += k;
      n -= k;
    }
    return true;
  }
  int reap() {
    if (pid_ <= 0) return status_;
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status_;
  }

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  int status_ = 0;
  std::uint8_t buf_[1 << 16];
  std::size_t pos_ = 0, len_ = 0;
};

// A buffer the program can name by address: an argument (at its own
// address) or an OUTPUT (at the address the runner gave it).
struct Backing {
  std::uint64_t vaddr = 0, bytes = 0;
  Tensor base;  // addr, buffer, dtype of the buffer
};

class SceneSource final : public OpSource {
 public:
  SceneSource(const SceneDef& def, const std::string& library, const trace::Trace& trace, DataStore& data,
              const Platform& platform, const RunConfig& config, std::vector<std::unique_ptr<KernelDef>>& composed,
              const SceneHooks& hooks)
      : def_(def), data_(data), composed_(composed), hooks_(hooks), launch_(def.file) {
    ::signal(SIGPIPE, SIG_IGN);
    wire::Init init;
    init.clusters = platform.topo.clusters;
    init.aiv = platform.topo.aiv_cores();
    for (int r = 0; r < kNumRings; ++r) init.task_window[r] = static_cast<std::uint32_t>(std::min<std::uint64_t>(config.task_window[r], 1u << 20));
    init.rings = config.runtime == RuntimeKind::HostBuildGraph ? 1 : kNumRings;  // Runtime: whole_graph_ on ring 0
    for (const trace::ExternalTensor& e : trace.tensors) {
      Tensor t = data.add_external(e.name, e.dtype, e.shape, e.fill, e.data);
      backings_.push_back(Backing{t.addr, t.buffer_bytes(), t});
      wire::Init::Tensor w;
      w.addr = t.addr;
      w.dtype = dtype_to_sdk(e.dtype);
      w.ndims = static_cast<std::uint8_t>(e.shape.size());
      for (std::size_t d = 0; d < e.shape.size(); ++d) w.shapes[d] = static_cast<std::uint32_t>(e.shape[d]);
      w.fill = e.fill;
      w.data = e.data;
      init.tensors.push_back(w);
    }
    init.scalars = def.scalars;
    init.entry = def.entry;
    init.config = def.config;
    if (const char* lv = std::getenv("NPUSIM_ORCH_LOG"))
      for (int i = 0; i < 4; ++i)
        if (std::string(lv) == std::vector<std::string>{"error", "warn", "info", "debug"}[i]) init.log_level = i;
    for (const Incore& in : def.incores) next_composed_id_ = std::max(next_composed_id_, in.kernel->func_id + 1);
    child_.spawn(runner_path(), library);
    wire::Writer w;
    w.pod(std::uint32_t{0});
    w.init(init);
    const std::uint32_t len = static_cast<std::uint32_t>(w.buf.size() - 4);
    std::memcpy(w.buf.data(), &len, 4);
    child_.write(w.buf.data(), w.buf.size());
  }

  bool next(OrchOp& op) override {
    if (ended_) return false;
    for (;;) {
      bool got = false;
      try {
        got = child_.read_message(msg_);
      } catch (const wire::DecodeError& e) {
        throw std::runtime_error(std::string("orchestration runner protocol: ") + e.what());
      }
      if (!got) return crashed(op, "");
      ++calls_;
      wire::Reader r(msg_.data(), msg_.size());
      const auto kind = static_cast<wire::Msg>(r.pod<std::uint8_t>());
      op.path = "call " + std::to_string(calls_);
      switch (kind) {
        case wire::Msg::Config: {
          const std::int32_t expected = r.pod<std::int32_t>();
          const std::size_t actual = def_.arg_order.size();
          if (expected > 0 && actual < static_cast<std::size_t>(expected))
            throw InputError(def_.file, "/args", "the program's " + def_.config + " expects " +
                                                     std::to_string(expected) + " arguments, the scene gives " +
                                                     std::to_string(actual));
          continue;
        }
        case wire::Msg::ScopeBegin:
          op.kind = OrchOp::Kind::ScopeBegin;
          op.mode = r.pod<std::uint8_t>() ? ScopeMode::Manual : ScopeMode::Auto;
          op.site = r.str();
          op.path += " (scope_begin at " + op.site + ")";
          return true;
        case wire::Msg::ScopeEnd:
          op.kind = OrchOp::Kind::ScopeEnd;
          op.path += " (scope_end)";
          return true;
        case wire::Msg::Task:
          task(r.task(), op);
          return true;
        case wire::Msg::Get:
        case wire::Msg::Set: {
          const bool set = kind == wire::Msg::Set;
          op.kind = set ? OrchOp::Kind::Write : OrchOp::Kind::Read;
          op.path += set ? " (set_tensor_data)" : " (get_tensor_data)";
          op.read_tensor = tensor_of(r.tensor(), op.path);
          const std::uint64_t e = r.pod<std::uint64_t>();
          if (e >= static_cast<std::uint64_t>(op.read_tensor.buffer_numel()))
            throw InputError(def_.file, op.path, "element " + std::to_string(e) + " is beyond the tensor's buffer (" +
                                                     std::to_string(op.read_tensor.buffer_numel()) + " elements)");
          op.read_element = static_cast<std::int64_t>(e);
          if (set) {
            op.write_value = element_from_bits(r.pod<std::uint64_t>(), op.read_tensor.dtype);
          } else {
            get_dtype_ = op.read_tensor.dtype;
            warn_unmodelled_read(op.read_tensor, op.path);
          }
          return true;
        }
        case wire::Msg::Fatal:
          op.kind = OrchOp::Kind::Fatal;
          op.fatal_code = r.pod<std::int32_t>();
          op.fatal_message = r.str();
          op.path += " (rt_report_fatal)";
          return true;
        case wire::Msg::Done:
          ended_ = true;
          return false;
        case wire::Msg::Exception:
          return crashed(op, "an exception escaped the orchestration entry: " + r.str());
        case wire::Msg::LoadError:
        case wire::Msg::Unsupported:
          throw InputError(def_.file, "/orchestration", r.str());
      }
      throw std::runtime_error("orchestration runner protocol: unknown message " +
                               std::to_string(static_cast<int>(kind)));
    }
  }

  void deliver_task(TaskId id, const std::vector<Tensor>& outputs) override {
    if (id != predicted_)
      throw std::logic_error("scene: the runtime gave task " + task_display(id) + ", the runner predicted " +
                             task_display(predicted_));
    if (outputs.size() != output_vaddrs_.size())
      throw std::logic_error("scene: " + std::to_string(outputs.size()) + " outputs delivered for " +
                             std::to_string(output_vaddrs_.size()));
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      if (!backings_.empty() && output_vaddrs_[k] <= backings_.back().vaddr)
        throw std::logic_error("scene: output addresses out of order");
      backings_.push_back(Backing{output_vaddrs_[k], outputs[k].buffer_bytes(), outputs[k]});
    }
  }

  void deliver_value(std::int64_t value) override {
    const std::uint64_t bits = element_bits(value, get_dtype_);
    child_.write(&bits, sizeof bits);
  }

 private:
  // The program ended without returning: an OrchestrationCrash op (once).
  bool crashed(OrchOp& op, std::string why) {
    ended_ = true;
    const std::string how = child_.end_text();
    if (why.empty()) why = how.empty() ? "the orchestration program ended without returning from its entry" : "the orchestration program was " + how;
    op.kind = OrchOp::Kind::Fatal;
    op.fatal_code = static_cast<int>(ErrorCode::OrchestrationCrash);
    op.fatal_message = why;
    op.path = "call " + std::to_string(calls_ + 1);
    return true;
  }

  const Backing& backing_of(std::uint64_t addr, const std::string& path) const {
    auto it = std::upper_bound(backings_.begin(), backings_.end(), addr,
                               [](std::uint64_t a, const Backing& b) { return a < b.vaddr; });
    if (it != backings_.begin()) {
      --it;
      if (addr < it->vaddr + std::max<std::uint64_t>(it->bytes, 1)) return *it;
    }
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(addr));
    throw InputError(def_.file, path, std::string("the program passes a tensor at address ") + hex +
                                          ", which is no argument's and no output's (an uninitialized ChipTensor?)");
  }

  DType dtype(std::uint8_t sdk, const std::string& path) const {
    DType d;
    if (!dtype_from_sdk(sdk, d))
      throw InputError(def_.file, path, "DataType " + std::to_string(sdk) + " is not an a2a3 type (FP8/FP4 are A5 only)");
    return d;
  }

  Tensor tensor_of(const wire::TensorWire& w, const std::string& path) {
    const Backing& b = backing_of(w.addr, path);
    ChipView v;
    v.byte_offset = w.addr - b.vaddr;
    v.dtype = dtype(w.dtype, path);
    v.numel = static_cast<std::int64_t>(w.size / static_cast<std::uint64_t>(dtype_bytes(v.dtype)));
    v.ndims = w.ndims;
    std::int64_t last = static_cast<std::int64_t>(w.start);
    bool empty = false;
    for (int d = 0; d < w.ndims; ++d) {
      v.shape[d] = w.shapes[d];
      v.strides[d] = w.strides[d];
      empty = empty || w.shapes[d] == 0;
      if (w.shapes[d] > 0) last += (static_cast<std::int64_t>(w.shapes[d]) - 1) * w.strides[d];
    }
    v.start = static_cast<std::int64_t>(w.start);
    if (!empty && (last >= v.numel || w.start > (1ull << 62)))
      throw InputError(def_.file, path, "a tensor view reaches element " + std::to_string(last) +
                                            ", beyond its buffer's " + std::to_string(v.numel) + " elements");
    v.version = static_cast<std::uint32_t>(std::max(0, w.version));
    v.owner = w.owner == ~0ull ? kNoTask : w.owner;
    return make_chip_view(data_, b.base, v);
  }

  // The kernel of a task's lanes: an incore, or a MIX kernel composed of one per lane.
  const KernelDef* kernel_for(const std::int32_t ids[3], const std::string& path) {
    const auto key = std::make_tuple(ids[0], ids[1], ids[2]);
    if (auto it = kernels_.find(key); it != kernels_.end()) return it->second;
    static const char* const lane_names[] = {"aic", "aiv0", "aiv1"};
    const Incore* lanes[3] = {};
    int active = 0;
    for (int l = 0; l < 3; ++l) {
      if (ids[l] < 0) continue;
      ++active;
      lanes[l] = def_.incore(ids[l]);
      if (!lanes[l]) {
        auto ann = def_.annotated_incores.find(ids[l]);
        throw InputError(def_.file, "/incores",
                         "the program submits func_id " + std::to_string(ids[l]) + " on the " + lane_names[l] +
                             " lane (" + path + "), but no incore has it" +
                             (ann == def_.annotated_incores.end()
                                  ? std::string()
                                  : ": \"" + ann->second +
                                        "\" names it, but a key starting with x_ is an annotation, ignored (rename it)"));
      }
      const CoreType want = l == 0 ? CoreType::AIC : CoreType::AIV;
      if (lanes[l]->kernel->core != want)
        throw InputError(def_.file, lanes[l]->kernel->path,
                         "incore \"" + lanes[l]->kernel->name + "\" is an " + (want == CoreType::AIC ? "aiv" : "aic") +
                             " kernel, but the program submits it on the " + lane_names[l] + " lane (" + path + ")");
    }
    const KernelDef* k = nullptr;
    if (active == 1) {
      for (const Incore* in : lanes)
        if (in) k = in->kernel;
    } else {
      auto mix = std::make_unique<KernelDef>();
      mix->core = CoreType::MIX;
      mix->func_id = next_composed_id_++;
      mix->path = "/incores";
      for (int l = 0; l < 3; ++l) {
        if (!lanes[l]) continue;
        mix->name += (mix->name.empty() ? "" : "+") + lanes[l]->kernel->name;
        mix->lanes[l] = lanes[l]->kernel->lanes[l == 0 ? kLaneAic : kLaneAiv0];
        mix->lanes[l].func_id = lanes[l]->kernel->func_id;
      }
      k = mix.get();
      composed_.push_back(std::move(mix));
    }
    kernels_.emplace(key, k);
    return k;
  }

  void task(const wire::TaskMsg& t, OrchOp& op) {
    static const char* const what[] = {"submit", "submit_dummy_task", "alloc_tensors"};
    op.path += std::string(" (") + what[static_cast<int>(t.kind)] + ", task " + task_display(t.task_id) + ")";
    const std::string& path = op.path;
    predicted_ = t.task_id;
    output_vaddrs_.clear();
    op.kind = t.kind == wire::TaskKind::Alloc ? OrchOp::Kind::Alloc
              : t.kind == wire::TaskKind::Dummy ? OrchOp::Kind::Dummy
                                                : OrchOp::Kind::Submit;
    std::vector<SubmitArg>& args = t.kind == wire::TaskKind::Alloc ? op.alloc_outputs : op.submit.args;
    args.clear();
    for (const wire::ArgWire& a : t.args) {
      SubmitArg& s = args.emplace_back();
      if (a.tag > 4) throw InputError(def_.file, path, "unknown TensorArgType " + std::to_string(a.tag));
      s.tag = static_cast<ArgTag>(a.tag);
      if (s.tag != ArgTag::Output) {
        s.tensor = tensor_of(a.tensor, path);
        s.manual_dep = a.tensor.manual_dep;
        continue;
      }
      const wire::OutputWire& o = a.output;
      s.tensor = Tensor{};
      s.tensor.dtype = dtype(o.dtype, path);
      s.tensor.ndims = o.ndims;
      for (int d = 0; d < o.ndims; ++d) {
        if (o.shapes[d] == 0) throw InputError(def_.file, path, "an output tensor has a zero extent");
        s.tensor.shape[d] = s.tensor.buf_shape[d] = o.shapes[d];
      }
      s.manual_dep = o.manual_dep;
      s.fill = o.has_init ? element_from_bits(o.init, s.tensor.dtype) : 0;
      output_vaddrs_.push_back(o.vaddr);
    }
    if (t.kind == wire::TaskKind::Alloc) return;
    SubmitRequest& req = op.submit;
    req.kernel = t.kind == wire::TaskKind::Submit ? kernel_for(t.kernels, path) : nullptr;
    req.block_num = t.block_num;
    req.sync_start = t.sync_start;
    req.early_resolve = t.early_resolve;
    req.deps.assign(t.deps.begin(), t.deps.end());
    req.dep_flags = t.dep_flags;
    req.predicate.reset();
    if (t.has_predicate) {
      PredicateSpec& p = req.predicate.emplace();
      p.tensor = tensor_of(t.pred_tensor, path);
      if (t.pred_element >= static_cast<std::uint64_t>(p.tensor.buffer_numel()))
        throw InputError(def_.file, path, "the predicate's element is beyond its tensor's buffer");
      p.element = static_cast<std::int64_t>(t.pred_element);
      if (t.pred_op < 1 || t.pred_op > 6) throw InputError(def_.file, path, "unknown PredicateOp");
      p.cmp = static_cast<Cmp>(t.pred_op - 1);
      p.value = t.pred_target;
    }
    req.writes.clear();
    req.site.clear();
    req.path = path;
    if (!req.kernel) return;
    incore_writes(t, req, path);
    launch_.check(*req.kernel, req, path);
  }

  // The values the task's incores declare, and a note of the buffers a
  // kernel writes without declaring values (reading them warns).
  void incore_writes(const wire::TaskMsg& t, SubmitRequest& req, const std::string& path) {
    struct Env : ExprEnv {
      const wire::TaskMsg& t;
      explicit Env(const wire::TaskMsg& m) : t(m) {}
      bool get(int slot, std::int64_t& v) const override {
        if (slot == 16) {
          v = t.block_num;
          return true;
        }
        if (slot < 0 || static_cast<std::size_t>(slot) >= t.scalars.size()) return false;
        v = static_cast<std::int64_t>(t.scalars[slot]);
        return true;
      }
      std::string describe(int slot) const override {
        return "s" + std::to_string(slot) + " (the task has " + std::to_string(t.scalars.size()) + " scalars)";
      }
    } env(t);
    std::uint32_t declared = 0;  // args some incore writes
    for (int l = 0; l < 3; ++l) {
      const Incore* in = t.kernels[l] >= 0 ? def_.incore(t.kernels[l]) : nullptr;
      if (!in) continue;
      if (in->declares_writes) declared = ~0u;  // what it does not list, it leaves as it was
      for (const IncoreWrite& w : in->writes) {
        if (w.arg >= static_cast<int>(req.args.size()))
          throw InputError(def_.file, w.path, "writes argument " + std::to_string(w.arg) + ", but the task has " +
                                                  std::to_string(req.args.size()) + " (" + path + ")");
        const Tensor& v = req.args[w.arg].tensor;
        std::int64_t e = 0, value = 0;
        try {
          if (w.index.empty()) {
            e = w.element.eval(env);
          } else {
            if (w.index.size() != v.ndims)
              throw InputError(def_.file, w.path, "index has " + std::to_string(w.index.size()) +
                                                      " entries but the argument has rank " + std::to_string(v.ndims));
            e = v.start_offset();
            for (std::size_t d = 0; d < w.index.size(); ++d) {
              const std::int64_t i = w.index[d].eval(env);
              if (i < 0 || i >= v.shape[d])
                throw InputError(def_.file, w.path, "index out of bounds in dim " + std::to_string(d) + ": " +
                                                        std::to_string(i) + " (" + path + ")");
              e += i * v.stride(static_cast<int>(d));
            }
          }
          value = w.value.eval(env);
        } catch (const EvalError& x) {
          throw InputError(def_.file, w.path, std::string(x.what()) + " (" + path + ")");
        }
        if (e < 0 || e >= v.buffer_numel())
          throw InputError(def_.file, w.path, "element " + std::to_string(e) + " is beyond the argument's buffer (" + path + ")");
        req.writes.push_back(WriteSpec{w.arg, e, value});
        declared |= 1u << w.arg;
      }
    }
    for (std::size_t i = 0; i < req.args.size(); ++i) {
      const ArgTag tag = req.args[i].tag;
      if ((tag == ArgTag::Output || tag == ArgTag::Inout || tag == ArgTag::OutputExisting) && !(declared & (1u << i)))
        undeclared_.emplace(req.args[i].tensor.addr, req.kernel->name);
    }
  }

  void warn_unmodelled_read(const Tensor& t, const std::string& path) {
    auto it = undeclared_.find(t.addr);
    if (it == undeclared_.end() || !warned_.insert(t.addr).second || !hooks_.warning) return;
    hooks_.warning("data_not_modelled",
                   "get_tensor_data at " + path + " reads a tensor that kernel " + it->second +
                       " writes, and the scene declares no `writes` for it: the value read is the buffer's earlier "
                       "content (zero unless set), not what the kernel would compute");
  }

  const SceneDef& def_;
  DataStore& data_;
  std::vector<std::unique_ptr<KernelDef>>& composed_;
  const SceneHooks& hooks_;
  trace::LaunchChecker launch_;
  Child child_;
  std::vector<std::uint8_t> msg_;
  std::vector<Backing> backings_;  // sorted by vaddr
  std::map<std::tuple<int, int, int>, const KernelDef*> kernels_;
  int next_composed_id_ = 0;
  std::uint64_t calls_ = 0;
  bool ended_ = false;
  TaskId predicted_ = kNoTask;
  std::vector<std::uint64_t> output_vaddrs_;
  DType get_dtype_ = DType::FP32;
  std::unordered_map<std::uint64_t, std::string> undeclared_;  // buffer address -> a kernel writing it undeclared
  std::unordered_set<std::uint64_t> warned_;
};

}  // namespace

bool dtype_from_sdk(std::uint8_t sdk, DType& out) {
  if (sdk >= sizeof(kSdkTypes) / sizeof(kSdkTypes[0])) return false;
  out = kSdkTypes[sdk];
  return true;
}

std::uint8_t dtype_to_sdk(DType d) {
  for (std::uint8_t i = 0; i < sizeof(kSdkTypes) / sizeof(kSdkTypes[0]); ++i)
    if (kSdkTypes[i] == d) return i;
  return 0;
}

std::unique_ptr<OpSource> make_scene_source(const SceneDef& def, const std::string& library,
                                            const trace::Trace& trace, DataStore& data, const Platform& platform,
                                            const RunConfig& config,
                                            std::vector<std::unique_ptr<KernelDef>>& composed,
                                            const SceneHooks& hooks) {
  return std::make_unique<SceneSource>(def, library, trace, data, platform, config, composed, hooks);
}

}  // namespace npusim::scene
