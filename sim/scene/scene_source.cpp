// SceneSource (scene_source.h): the runner's calls as OrchOps.
#include "sim/scene/scene_source.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_set>

#include "models/common/errors.h"
#include "models/runtime/chip_view.h"
#include "models/runtime/error_codes.h"
#include "sim/host/interrupt.h"
#include "sim/scene/protocol.h"
#include "sim/trace/json_doc.h"

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
    case SIGPIPE: return "SIGPIPE, a write to a closed pipe";
    default: return "a signal";
  }
}

// How long npusim waits for the program (docs/scenes.md, "Bounds and
// guarantees"): for one message (the idle bound) and in all (the wall-clock
// bound, the sum of its waits: the time npusim simulates is not the
// program's). Seconds, from the environment.
struct Bounds {
  double idle = 60, total = 3600;
};

double bound_from_env(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  const double s = std::strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !(s > 0) || s > 1e7)
    throw InputError(std::string("$") + name, "", std::string("expected a number of seconds in (0, 1e7], got \"") + v + "\"");
  return s;
}

Bounds bounds_from_env() {
  Bounds b;
  b.idle = bound_from_env("NPUSIM_ORCH_IDLE_TIMEOUT", b.idle);
  b.total = bound_from_env("NPUSIM_ORCH_TIMEOUT", b.total);
  return b;
}

std::string seconds_text(double s) {
  char t[32];
  std::snprintf(t, sizeof t, "%g s", s);
  return t;
}

// The runner process and its two pipes. The runner leads a process group of
// its own (the program's children join it), killed whole when the runner's
// part ends, when npusim is interrupted (interrupt.h) and, through the
// runner's parent-death signal, when npusim dies.
class Child {
 public:
  void spawn(const std::string& runner, const std::string& library, const Bounds& bounds) {
    bounds_ = bounds;
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
    posix_spawn_file_actions_adddup2(&fa, 2, 1);  // the program's output goes to standard error, never npusim's stdout
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    const std::string parent = std::to_string(::getpid());
    std::vector<char*> argv = {const_cast<char*>(runner.c_str()), const_cast<char*>(library.c_str()),
                               const_cast<char*>(parent.c_str()), nullptr};
    const int err = posix_spawn(&pid_, runner.c_str(), &fa, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(ops[1]);
    ::close(reply[0]);
    in_ = ops[0];
    out_ = reply[1];
    if (err != 0) {
      pid_ = -1;
      throw InputError(runner, "", std::string("cannot start the orchestration runner: ") + std::strerror(err) +
                                       " (set NPUSIM_ORCH_RUNNER to its path)");
    }
    host::interrupt::add_group(pid_);
  }

  ~Child() {
    if (in_ >= 0) ::close(in_);
    if (out_ >= 0) ::close(out_);
    stop();
  }

  // One framed message; false at the end of the stream (the runner ended,
  // closed the channel, or a bound stopped it: end_text says which).
  bool read_message(std::vector<std::uint8_t>& msg) {
    std::uint32_t len = 0;
    if (!read_exact(&len, sizeof len)) return false;
    if (len == 0 || len > wire::kMaxMessage)
      throw wire::DecodeError("a message of " + std::to_string(len) + " bytes (at most " +
                              std::to_string(wire::kMaxMessage) + ")");
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

  // Why the stream ended, after read_message returned false: a bound, or
  // how the runner ended ("" for a clean exit with status 0). A runner that
  // closed the channel but lives on is given the idle bound to end.
  std::string end_text() {
    if (!stopped_.empty()) return stopped_;
    if (pid_ > 0 && !ended_within(bounds_.idle)) {
      stop();
      return "the orchestration program closed npusim's channel and did not end within " + seconds_text(bounds_.idle) +
             " (the idle bound, NPUSIM_ORCH_IDLE_TIMEOUT): stopped";
    }
    const int st = reap();
    if (WIFSIGNALED(st)) {
      const int sig = WTERMSIG(st);
      return "the orchestration program was killed by signal " + std::to_string(sig) + " (" + signal_text(sig) + ")";
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
      return "the orchestration program exited with status " + std::to_string(WEXITSTATUS(st));
    return "";
  }

  // Kills the runner's process group (the program's children with it) and reaps the runner.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGKILL);
    reap();
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

  // Whether the runner has ended (not reaped: its process group stays
  // addressable until stop()).
  bool has_ended() {
    siginfo_t info{};
    return pid_ <= 0 || (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0);
  }
  bool ended_within(double seconds) {
    for (const auto t = Clock::now(); !has_ended();) {
      if (since(t) >= seconds) return false;
      ::usleep(10000);
    }
    return true;
  }

  // Reads what the pipe holds into buf_: false at its end. The end is the
  // runner's death, not the pipe's EOF (a child the program forked may hold
  // the pipe open): once the runner has ended, its group is killed and what
  // it wrote is read to the last byte.
  bool fill() {
    const Clock::time_point start = Clock::now();
    for (;;) {
      const double waited = since(start);
      int slice = 0;
      if (!drained_) {
        const double left = std::min(bounds_.idle - waited, bounds_.total - total_waited_ - waited);
        if (left <= 0) {
          stopped_ = bounds_.idle - waited <= bounds_.total - total_waited_ - waited
                         ? "the orchestration program made no runtime call for " + seconds_text(bounds_.idle) +
                               " (the idle bound, NPUSIM_ORCH_IDLE_TIMEOUT): it sleeps, waits or computes without "
                               "calling the runtime; stopped"
                         : "the orchestration program ran for " + seconds_text(bounds_.total) +
                               " of npusim's waiting for it (the wall-clock bound, NPUSIM_ORCH_TIMEOUT): stopped";
          stop();
          return false;
        }
        slice = static_cast<int>(std::clamp(std::ceil(left * 1000), 1.0, 50.0));
      }
      pollfd p{in_, POLLIN, 0};
      const int n = ::poll(&p, 1, slice);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        const ssize_t r = ::read(in_, buf_, sizeof buf_);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        total_waited_ += since(start);
        if (r <= 0) return false;
        pos_ = 0;
        len_ = static_cast<std::size_t>(r);
        return true;
      }
      if (drained_) return false;
      if (has_ended()) {
        // Its children cannot write any more; then read what is left.
        ::kill(-pid_, SIGKILL);
        drained_ = true;
      }
    }
  }

  bool read_exact(void* dst, std::size_t n) {
    auto* p = static_cast<std::uint8_t*>(dst);
    while (n > 0) {
      if (pos_ == len_ && !fill()) return false;
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
    ::kill(-pid_, SIGKILL);  // whatever the program left running (the runner itself may still be exiting)
    host::interrupt::remove_group(pid_);
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status_;
  }

  Bounds bounds_;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  int status_ = 0;
  double total_waited_ = 0;
  bool drained_ = false;
  std::string stopped_;
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
    for (const Incore& in : def.incores) {
      next_composed_id_ = std::max(next_composed_id_, in.kernel->func_id + 1);
      kernel_names_.insert(in.kernel->name);
    }
    child_.spawn(runner_path(), library, bounds_from_env());
    wire::Writer w;
    w.pod(std::uint32_t{0});
    w.init(init);
    const std::uint32_t len = static_cast<std::uint32_t>(w.buf.size() - 4);
    std::memcpy(w.buf.data(), &len, 4);
    child_.write(w.buf.data(), w.buf.size());
  }

  // The channel is the runner's, but the program runs in the runner's process
  // and can write to it: a message that does not decode is the program's
  // fault (ORCHESTRATION_CRASH), never npusim's.
  bool next(OrchOp& op) override {
    if (ended_) return false;
    try {
      return next_message(op);
    } catch (const wire::DecodeError& e) {
      child_.stop();
      return crashed(op, std::string("npusim's channel from the orchestration runner carried a malformed message (") +
                             e.what() +
                             "): something in the program wrote to it (a write to the runner's file descriptors, "
                             "or a runtime call from a forked process or a second thread)");
    }
  }

 private:
  bool next_message(OrchOp& op) {
    for (;;) {
      if (!child_.read_message(msg_)) return crashed(op, "");
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
          op.site = wire::truncated(r.str(), wire::kMaxWireText);
          op.path += " (scope_begin at " + op.site + ")";
          return true;
        case wire::Msg::ScopeEnd:
          op.kind = OrchOp::Kind::ScopeEnd;
          op.path += " (scope_end)";
          return true;
        case wire::Msg::Deps:  // the first of a Task's explicit deps
          --calls_;
          r.deps(pending_deps_, pending_flags_);
          continue;
        case wire::Msg::Task: {
          wire::TaskMsg t = r.task();
          if (!pending_deps_.empty()) {
            t.deps.insert(t.deps.begin(), pending_deps_.begin(), pending_deps_.end());
            t.dep_flags.insert(t.dep_flags.begin(), pending_flags_.begin(), pending_flags_.end());
            pending_deps_.clear();
            pending_flags_.clear();
          }
          task(t, op);
          return true;
        }
        case wire::Msg::Get:
        case wire::Msg::Set: {
          const bool set = kind == wire::Msg::Set;
          op.kind = set ? OrchOp::Kind::Write : OrchOp::Kind::Read;
          op.path += set ? " (set_tensor_data)" : " (get_tensor_data)";
          const wire::TensorWire w = r.tensor();
          const Backing& buffer = backing_of(w.addr, op.path);
          op.read_tensor = tensor_in(buffer, w, op.path);
          const std::uint64_t e = r.pod<std::uint64_t>();
          if (e >= static_cast<std::uint64_t>(op.read_tensor.buffer_numel()))
            throw InputError(def_.file, op.path, "element " + std::to_string(e) + " is beyond the tensor's buffer (" +
                                                     std::to_string(op.read_tensor.buffer_numel()) + " elements)");
          op.read_element = static_cast<std::int64_t>(e);
          if (set) {
            op.write_value = element_from_bits(r.pod<std::uint64_t>(), op.read_tensor.dtype);
          } else {
            get_dtype_ = op.read_tensor.dtype;
            warn_unmodelled_read(buffer.base.addr, op.path);
          }
          return true;
        }
        case wire::Msg::Fatal:
          op.kind = OrchOp::Kind::Fatal;
          op.fatal_code = r.pod<std::int32_t>();
          op.fatal_message = wire::truncated(r.str(), wire::kMaxWireText);
          op.path += " (rt_report_fatal)";
          return true;
        case wire::Msg::Done:
          ended_ = true;
          child_.stop();  // what the program left running ends with it
          return false;
        case wire::Msg::Exception:
          return crashed(op, "an exception escaped the orchestration entry: " + wire::truncated(r.str(), wire::kMaxWireText));
        case wire::Msg::Misuse: {
          const std::string what = wire::truncated(r.str(), wire::kMaxWireText);
          child_.stop();
          return crashed(op, what);
        }
        case wire::Msg::LoadError:
        case wire::Msg::Unsupported: {
          const std::string what = wire::truncated(r.str(), wire::kMaxWireText);
          child_.stop();
          throw InputError(def_.file, "/orchestration", what);
        }
      }
      throw wire::DecodeError("unknown message kind " + std::to_string(static_cast<int>(kind)));
    }
  }

 public:
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
    // An OUTPUT's buffer exists from here: the ones the task's kernel writes
    // without declaring values (incore_writes) are noted now.
    for (const auto& [k, kernel] : undeclared_outputs_) undeclared_.emplace(outputs[k].addr, kernel);
    undeclared_outputs_.clear();
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
    if (why.empty()) why = how.empty() ? "the orchestration program ended without returning from its entry" : how;
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
    return tensor_in(backing_of(w.addr, path), w, path);
  }
  // The view `w` of the buffer `b` (backing_of(w.addr)).
  Tensor tensor_in(const Backing& b, const wire::TensorWire& w, const std::string& path) {
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

  // A composed MIX kernel's pipes: each incore's, one per name (both halves
  // of a TPipe are the same type: TPipe<FlagID, DirType, SlotSize, SlotNum>
  // in the cube's and the vectors' code), the lane's phases renumbered.
  void merge_pipes(const KernelDef& incore, KernelDef& mix, LaneBody& lane) const {
    std::vector<int> index(incore.pipes.size());
    for (std::size_t i = 0; i < incore.pipes.size(); ++i) {
      const PipeDef& p = incore.pipes[i];
      auto it = std::find_if(mix.pipes.begin(), mix.pipes.end(), [&](const PipeDef& q) { return q.name == p.name; });
      if (it == mix.pipes.end()) {
        index[i] = static_cast<int>(mix.pipes.size());
        mix.pipes.push_back(p);
        continue;
      }
      if (it->dir != p.dir || it->slots != p.slots || (it->flag_id >= 0 && p.flag_id >= 0 && it->flag_id != p.flag_id))
        throw InputError(def_.file, p.path,
                         "pipe \"" + p.name + "\" is " + pipe_dir_name(p.dir) + " with " + std::to_string(p.slots) +
                             " slot(s) here but " + pipe_dir_name(it->dir) + " with " + std::to_string(it->slots) +
                             " at " + it->path + ": the two halves of a TPipe are one type (direction, slots, flag)");
      if (it->flag_id < 0) it->flag_id = p.flag_id;
      index[i] = static_cast<int>(it - mix.pipes.begin());
    }
    for (Phase& ph : lane.phases)
      if (ph.pipe >= 0) ph.pipe = index[static_cast<std::size_t>(ph.pipe)];
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
      std::string qualified;  // the lanes named: aic:c+aiv1:v
      for (int l = 0; l < 3; ++l) {
        if (!lanes[l]) continue;
        mix->name += (mix->name.empty() ? "" : "+") + lanes[l]->kernel->name;
        qualified += (qualified.empty() ? "" : "+") + std::string(lane_names[l]) + ":" + lanes[l]->kernel->name;
        mix->lanes[l] = lanes[l]->kernel->lanes[l == 0 ? kLaneAic : kLaneAiv0];
        mix->lanes[l].func_id = lanes[l]->kernel->func_id;
        merge_pipes(*lanes[l]->kernel, *mix, mix->lanes[l]);
      }
      trace::check_mix_pipes(*mix, def_.file);
      // A kernel name is a trace's key (npusim record writes it): unique,
      // in the order the program composes them. Two compositions of the same
      // incores on other lanes (c on the AIC with v on AIV0, then on AIV1)
      // are both "c+v": the later one names its lanes, then counts.
      if (!kernel_names_.insert(mix->name).second) {
        const std::string base = qualified;
        mix->name = base;
        for (int i = 2; !kernel_names_.insert(mix->name).second; ++i) mix->name = base + "#" + std::to_string(i);
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
    undeclared_outputs_.clear();
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
    // An incore with a `writes` key declares every argument of the task: what
    // it does not list, it leaves as it was.
    bool declared = false;
    for (int l = 0; l < 3; ++l) {
      const Incore* in = t.kernels[l] >= 0 ? def_.incore(t.kernels[l]) : nullptr;
      if (!in) continue;
      declared = declared || in->declares_writes;
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
      }
    }
    // When none has, reading a buffer the task writes warns
    // (warn_unmodelled_read), keyed by the buffer's address, whatever view
    // of it the program reads. An OUTPUT has no buffer yet (the runtime
    // allocates it at the submit): noted by its place among the outputs, and
    // its buffer in deliver_task.
    if (declared) return;
    std::size_t output = 0;
    for (std::size_t i = 0; i < req.args.size(); ++i) {
      const ArgTag tag = req.args[i].tag;
      if (tag == ArgTag::Output) {
        undeclared_outputs_.emplace_back(output, req.kernel->name);
        ++output;
      } else if (tag == ArgTag::Inout || tag == ArgTag::OutputExisting) {
        undeclared_.emplace(backing_of(t.args[i].tensor.addr, path).base.addr, req.kernel->name);
      }
    }
  }

  void warn_unmodelled_read(std::uint64_t buffer_addr, const std::string& path) {
    auto it = undeclared_.find(buffer_addr);
    if (it == undeclared_.end() || !warned_.insert(buffer_addr).second || !hooks_.warning) return;
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
  std::vector<std::uint64_t> pending_deps_;  // from Deps messages, for the next Task
  std::vector<std::uint8_t> pending_flags_;
  std::vector<Backing> backings_;  // sorted by vaddr
  std::map<std::tuple<int, int, int>, const KernelDef*> kernels_;
  int next_composed_id_ = 0;
  std::unordered_set<std::string> kernel_names_;  // the incores' and the composed kernels' names
  std::uint64_t calls_ = 0;
  bool ended_ = false;
  TaskId predicted_ = kNoTask;
  std::vector<std::uint64_t> output_vaddrs_;
  DType get_dtype_ = DType::FP32;
  std::unordered_map<std::uint64_t, std::string> undeclared_;  // buffer address -> a kernel writing it undeclared
  std::vector<std::pair<std::size_t, std::string>> undeclared_outputs_;  // this task's: (output index, kernel)
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
