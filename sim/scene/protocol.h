// The wire between npusim and the orchestration runner (the child process
// that runs a scene's orchestration program, docs/scenes.md): length-framed
// little-endian messages over two pipes. Plain C++, shared by both sides.
//
// The runner moves both pipes to descriptors above kFirstPrivateFd (close on
// exec) before the program runs, so a program writing to fd 3 or closing it
// does not reach the channel.
//
// Runner -> npusim, on fd kOpsFd: one message per orchestration API call
// that is a runtime operation (scope begin/end, a task, get/set_tensor_data,
// a reported fatal), plus the config check and the end (done / exception).
// Calls that return nothing the program could act on are sent without
// waiting; only get_tensor_data waits for its reply on fd kReplyFd. Task ids
// and output tensors are decided by the runner (the runtime's rules make
// them predictable: ring = scope depth capped at 3, or ring 0 for every task
// under host_build_graph (Init::rings), a counter per ring) and checked by
// npusim when the task is submitted.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace npusim::scene::wire {

constexpr int kOpsFd = 3;    // runner writes, npusim reads
constexpr int kReplyFd = 4;  // npusim writes, runner reads
constexpr std::uint32_t kMagic = 0x4e505553;  // "NPUS"
constexpr std::uint32_t kVersion = 3;
constexpr std::uint32_t kMaxMessage = 1u << 20;  // runner -> npusim (the init message may be larger)
constexpr int kFirstPrivateFd = 100;  // where the runner keeps the pipes while the program runs
// A text the program gives (an exception's what(), a fatal's message, a
// scope site) is cut to this many bytes on the wire (truncated() says so).
constexpr std::size_t kMaxText = 4096;
// A submit's explicit deps beyond this many go ahead of its Task message in
// Deps messages (a message stays under kMaxMessage whatever the count).
constexpr std::uint32_t kDepsPerMessage = 65536;

// Runner -> npusim.
enum class Msg : std::uint8_t {
  Config = 1,      // i32 expected_arg_count (-1: the program has no config function)
  ScopeBegin = 2,  // u8 mode, str site
  ScopeEnd = 3,
  Task = 4,        // see TaskMsg
  Get = 5,         // TensorWire, u64 element (linear, into the buffer) -> reply u64 bits
  Set = 6,         // TensorWire, u64 element, u64 bits
  Fatal = 7,       // i32 code, str message
  Done = 8,        // the entry returned
  Exception = 9,   // str what: an exception escaped the entry
  LoadError = 10,  // str what: the library or its entry could not be loaded
  Unsupported = 11,  // str what: the program does what npusim does not model
  Deps = 12,         // u32 n, n x (u64 dep, u8 flag): explicit deps of the next Task, ahead of its own
  Misuse = 13,       // str what: the program called the runtime from a forked process or a second thread
};

// `s`, cut to `max` bytes with a note of its full length.
inline std::string truncated(const std::string& s, std::size_t max = kMaxText) {
  if (s.size() <= max) return s;
  return s.substr(0, max) + "... (truncated: " + std::to_string(s.size()) + " bytes in all)";
}
// What npusim accepts of a text on the wire: the runner's cut text with its note.
constexpr std::size_t kMaxWireText = kMaxText + 64;

enum class TaskKind : std::uint8_t { Submit = 0, Dummy = 1, Alloc = 2 };

// A ChipTensor as the program holds it.
struct TensorWire {
  std::uint64_t addr = 0, size = 0, owner = ~0ull, start = 0;
  std::int32_t version = 0;
  std::uint8_t ndims = 0, dtype = 0, manual_dep = 0;
  std::uint32_t shapes[5] = {}, strides[5] = {};
};

// An OUTPUT argument: the runner's address for the new buffer.
struct OutputWire {
  std::uint64_t vaddr = 0;
  std::uint8_t dtype = 0, ndims = 0, manual_dep = 0, has_init = 0;
  std::uint32_t shapes[5] = {};
  std::uint64_t init = 0;
};

struct ArgWire {
  std::uint8_t tag = 0;  // TensorArgType
  TensorWire tensor;     // tag != OUTPUT
  OutputWire output;     // tag == OUTPUT
};

struct TaskMsg {
  TaskKind kind = TaskKind::Submit;
  std::int32_t kernels[3] = {-1, -1, -1};  // aic, aiv0, aiv1 (normalized: a lone aiv1 moved to aiv0)
  std::int16_t block_num = 1;
  std::uint8_t sync_start = 0, early_resolve = 0;
  std::vector<ArgWire> args;
  std::vector<std::uint64_t> deps;
  std::vector<std::uint8_t> dep_flags;
  std::uint8_t has_predicate = 0;
  TensorWire pred_tensor;
  std::uint64_t pred_element = 0;
  std::uint8_t pred_op = 0;  // PredicateOp
  std::int64_t pred_target = 0;
  std::vector<std::uint64_t> scalars;
  std::uint64_t task_id = 0;  // what the runner handed the program
};

// npusim -> runner, once at the start.
struct Init {
  std::int32_t clusters = 0, aiv = 0;
  std::uint32_t task_window[4] = {};
  // The rings tasks go to: 4 (ring = scope depth capped at 3), or 1 under
  // host_build_graph, which puts the whole graph on ring 0.
  std::uint8_t rings = 4;
  // An argument tensor; its values (as npusim's data store keeps them) back
  // the program's direct reads of its memory.
  struct Tensor {
    std::uint64_t addr = 0;
    std::uint8_t dtype = 0, ndims = 0;
    std::uint32_t shapes[5] = {};
    std::int64_t fill = 0;
    std::vector<std::int64_t> data;
  };
  std::vector<Tensor> tensors;
  std::vector<std::uint64_t> scalars;
  std::string entry, config;
  std::int32_t log_level = 1;  // 0 error, 1 warn, 2 info, 3 debug (LOG_TIMING with info)
};

// ---- encoding ---------------------------------------------------------------
class Writer {
 public:
  std::vector<std::uint8_t> buf;
  template <typename T>
  void pod(const T& v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    buf.insert(buf.end(), p, p + sizeof(T));
  }
  void str(const std::string& s) {
    pod(static_cast<std::uint32_t>(s.size()));
    buf.insert(buf.end(), s.begin(), s.end());
  }
  void tensor(const TensorWire& t) {
    pod(t.addr), pod(t.size), pod(t.owner), pod(t.start), pod(t.version);
    pod(t.ndims), pod(t.dtype), pod(t.manual_dep);
    for (int d = 0; d < t.ndims && d < 5; ++d) pod(t.shapes[d]), pod(t.strides[d]);
  }
  // Starts a message; end() fills in its length.
  std::size_t begin(Msg m) {
    const std::size_t at = buf.size();
    pod(std::uint32_t{0});
    pod(static_cast<std::uint8_t>(m));
    return at;
  }
  void end(std::size_t at) {
    const std::uint32_t len = static_cast<std::uint32_t>(buf.size() - at - 4);
    std::memcpy(buf.data() + at, &len, 4);
  }
  // A Task message, after the Deps messages carrying all but its last
  // kDepsPerMessage explicit deps.
  void task_message(const TaskMsg& t) {
    std::size_t from = 0;
    for (; t.deps.size() - from > kDepsPerMessage; from += kDepsPerMessage) {
      const std::size_t at = begin(Msg::Deps);
      pod(kDepsPerMessage);
      for (std::size_t i = from; i < from + kDepsPerMessage; ++i) pod(t.deps[i]), pod(t.dep_flags[i]);
      end(at);
    }
    const std::size_t at = begin(Msg::Task);
    task(t, from);
    end(at);
  }
  void task(const TaskMsg& t, std::size_t first_dep = 0) {
    pod(static_cast<std::uint8_t>(t.kind));
    for (int k = 0; k < 3; ++k) pod(t.kernels[k]);
    pod(t.block_num), pod(t.sync_start), pod(t.early_resolve);
    pod(static_cast<std::uint8_t>(t.args.size()));
    for (const ArgWire& a : t.args) {
      pod(a.tag);
      if (a.tag == 1) {
        const OutputWire& o = a.output;
        pod(o.vaddr), pod(o.dtype), pod(o.ndims), pod(o.manual_dep), pod(o.has_init), pod(o.init);
        for (int d = 0; d < o.ndims && d < 5; ++d) pod(o.shapes[d]);
      } else {
        tensor(a.tensor);
      }
    }
    pod(static_cast<std::uint32_t>(t.deps.size() - first_dep));
    for (std::size_t i = first_dep; i < t.deps.size(); ++i) pod(t.deps[i]), pod(t.dep_flags[i]);
    pod(t.has_predicate);
    if (t.has_predicate) tensor(t.pred_tensor), pod(t.pred_element), pod(t.pred_op), pod(t.pred_target);
    pod(static_cast<std::uint8_t>(t.scalars.size()));
    for (std::uint64_t s : t.scalars) pod(s);
    pod(t.task_id);
  }
  void init(const Init& in) {
    pod(kMagic), pod(kVersion), pod(in.clusters), pod(in.aiv);
    for (std::uint32_t w : in.task_window) pod(w);
    pod(in.rings);
    pod(static_cast<std::uint32_t>(in.tensors.size()));
    for (const Init::Tensor& t : in.tensors) {
      pod(t.addr), pod(t.dtype), pod(t.ndims);
      for (int d = 0; d < t.ndims && d < 5; ++d) pod(t.shapes[d]);
      pod(t.fill), pod(static_cast<std::uint64_t>(t.data.size()));
      for (std::int64_t v : t.data) pod(v);
    }
    pod(static_cast<std::uint32_t>(in.scalars.size()));
    for (std::uint64_t s : in.scalars) pod(s);
    str(in.entry), str(in.config), pod(in.log_level);
  }
};

struct DecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Reader {
 public:
  Reader(const std::uint8_t* p, std::size_t n) : p_(p), end_(p + n) {}
  template <typename T>
  T pod() {
    if (static_cast<std::size_t>(end_ - p_) < sizeof(T)) throw DecodeError("message too short");
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  std::string str() {
    const std::uint32_t n = pod<std::uint32_t>();
    if (static_cast<std::size_t>(end_ - p_) < n) throw DecodeError("string too long");
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  std::uint8_t dims(std::uint8_t n) {
    if (n < 1 || n > 5) throw DecodeError("tensor rank " + std::to_string(n) + " is not in 1..5");
    return n;
  }
  TensorWire tensor() {
    TensorWire t;
    t.addr = pod<std::uint64_t>(), t.size = pod<std::uint64_t>(), t.owner = pod<std::uint64_t>();
    t.start = pod<std::uint64_t>(), t.version = pod<std::int32_t>();
    t.ndims = pod<std::uint8_t>(), t.dtype = pod<std::uint8_t>(), t.manual_dep = pod<std::uint8_t>();
    for (int d = 0; d < dims(t.ndims); ++d) t.shapes[d] = pod<std::uint32_t>(), t.strides[d] = pod<std::uint32_t>();
    return t;
  }
  TaskMsg task() {
    TaskMsg t;
    const std::uint8_t kind = pod<std::uint8_t>();
    if (kind > static_cast<std::uint8_t>(TaskKind::Alloc)) throw DecodeError("unknown task kind " + std::to_string(kind));
    t.kind = static_cast<TaskKind>(kind);
    for (int k = 0; k < 3; ++k) t.kernels[k] = pod<std::int32_t>();
    t.block_num = pod<std::int16_t>(), t.sync_start = pod<std::uint8_t>(), t.early_resolve = pod<std::uint8_t>();
    t.args.resize(pod<std::uint8_t>());
    for (ArgWire& a : t.args) {
      a.tag = pod<std::uint8_t>();
      if (a.tag == 1) {
        OutputWire& o = a.output;
        o.vaddr = pod<std::uint64_t>(), o.dtype = pod<std::uint8_t>(), o.ndims = pod<std::uint8_t>();
        o.manual_dep = pod<std::uint8_t>(), o.has_init = pod<std::uint8_t>(), o.init = pod<std::uint64_t>();
        for (int d = 0; d < dims(o.ndims); ++d) o.shapes[d] = pod<std::uint32_t>();
      } else {
        a.tensor = tensor();
      }
    }
    deps(t.deps, t.dep_flags);
    t.has_predicate = pod<std::uint8_t>();
    if (t.has_predicate) {
      t.pred_tensor = tensor(), t.pred_element = pod<std::uint64_t>();
      t.pred_op = pod<std::uint8_t>(), t.pred_target = pod<std::int64_t>();
    }
    t.scalars.resize(pod<std::uint8_t>());
    for (std::uint64_t& s : t.scalars) s = pod<std::uint64_t>();
    t.task_id = pod<std::uint64_t>();
    return t;
  }
  // A count and that many (dep, flag) pairs, appended.
  void deps(std::vector<std::uint64_t>& deps, std::vector<std::uint8_t>& flags) {
    const std::uint32_t nd = pod<std::uint32_t>();
    if (nd > static_cast<std::size_t>(end_ - p_) / 9) throw DecodeError("more deps than the message holds");
    for (std::uint32_t i = 0; i < nd; ++i) deps.push_back(pod<std::uint64_t>()), flags.push_back(pod<std::uint8_t>());
  }
  Init init() {
    Init in;
    if (pod<std::uint32_t>() != kMagic || pod<std::uint32_t>() != kVersion) throw DecodeError("bad init message");
    in.clusters = pod<std::int32_t>(), in.aiv = pod<std::int32_t>();
    for (std::uint32_t& w : in.task_window) w = pod<std::uint32_t>();
    in.rings = pod<std::uint8_t>();
    if (in.rings < 1 || in.rings > 4) throw DecodeError("bad init message");
    in.tensors.resize(pod<std::uint32_t>());
    for (Init::Tensor& t : in.tensors) {
      t.addr = pod<std::uint64_t>(), t.dtype = pod<std::uint8_t>(), t.ndims = pod<std::uint8_t>();
      for (int d = 0; d < dims(t.ndims); ++d) t.shapes[d] = pod<std::uint32_t>();
      t.fill = pod<std::int64_t>();
      t.data.resize(pod<std::uint64_t>());
      for (std::int64_t& v : t.data) v = pod<std::int64_t>();
    }
    in.scalars.resize(pod<std::uint32_t>());
    for (std::uint64_t& s : in.scalars) s = pod<std::uint64_t>();
    in.entry = str(), in.config = str(), in.log_level = pod<std::int32_t>();
    return in;
  }
  bool done() const { return p_ == end_; }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

}  // namespace npusim::scene::wire
