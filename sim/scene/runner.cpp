// npusim-orch-runner: runs a scene's orchestration program (a shared object
// built against npusim's SDK) as npusim's child process, and streams its
// runtime operations to npusim (protocol.h). It is the runtime the program's
// ops table calls: the SDK's inline wrappers call these functions.
//
// Everything the program's calls return is decided here as the runtime
// would decide it (task ids, output tensors, the fatal flag), so only
// get_tensor_data waits for npusim. A crash, an abort or an exception in the
// program ends this process, never npusim (docs/scenes.md).
//
// The program is the user's: whatever it does reaches npusim as its fault,
// never as npusim's (docs/scenes.md, "Bounds and guarantees"). The pipes move
// above fd 100 (close on exec), a runtime call from a forked process or a
// second thread is reported as such and ends the program, long texts are cut,
// the channel's writers take a lock shared with forked children (a message
// never splits another), and the runner dies with npusim: the signal the
// kernel sends when npusim ends (PR_SET_PDEATHSIG, SIGKILL included) kills
// the runner's process group, the program's children with it.
//
// Usage (by npusim only):
//   npusim-orch-runner LIBRARY NPUSIM_PID, with the pipes on fds 3 and 4 and
//     the init message waiting on fd 4;
//   npusim-orch-runner --guard NPUSIM_PID FILE... -- COMMAND ARGS...: runs
//     COMMAND (the scene compiler) and, if npusim dies first, stops it and
//     removes the FILEs (its temporary files).
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <mutex>
#include <new>
#include <thread>

#include <cerrno>
#include <cstdarg>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>
#include <vector>

#include "pto_orchestration_api.h"
#include "sim/scene/protocol.h"

namespace wire = npusim::scene::wire;

namespace {

// ---- the pipes ----------------------------------------------------------------
wire::Writer g_out;  // messages not yet written
// Bytes of g_out that are whole messages: what a crash still delivers.
volatile std::size_t g_complete = 0;
int g_ops_fd = wire::kOpsFd, g_reply_fd = wire::kReplyFd;
pid_t g_pid = 0;  // the runner's process
// Set in the thread that runs the entry, and in a forked child (cheap
// checks: rt_is_fatal may be called millions of times).
thread_local bool t_entry_thread = false;
volatile bool g_forked_child = false;

pid_t this_thread() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// The channel's writers (the runner, and a forked child or a second thread
// reporting its misuse) take this lock, a word in memory shared with forked
// children, so a message is never cut by another. Its owner is a thread id;
// a dead owner's lock is taken over.
std::atomic<pid_t>* g_write_lock = nullptr;
void lock_channel() {
  if (!g_write_lock) return;
  const pid_t me = this_thread();
  for (;;) {
    pid_t owner = 0;
    if (g_write_lock->compare_exchange_strong(owner, me) || owner == me) return;  // (me: a fault inside a write)
    if (::kill(owner, 0) != 0 && errno == ESRCH) {
      g_write_lock->compare_exchange_strong(owner, 0);
      continue;
    }
    const struct timespec ms{0, 1000000};
    ::nanosleep(&ms, nullptr);
  }
}
void unlock_channel() {
  if (g_write_lock) g_write_lock->store(0);
}

void write_all(int fd, const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(0);  // npusim stopped reading: the simulation has ended
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Guards g_out between the entry's thread and the flusher.
std::mutex g_out_mutex;
std::atomic<std::uint64_t> g_calls{0};  // runtime calls so far (the flusher's clock)

void flush() {
  if (g_out.buf.empty()) return;
  g_complete = 0;  // this write delivers them, not the fault handler
  lock_channel();
  write_all(g_ops_fd, g_out.buf.data(), g_out.buf.size());
  unlock_channel();
  g_out.buf.clear();
}

// Messages wait in g_out until 64 KiB have gathered; a program that stops
// calling the runtime (it computes, sleeps, blocks) would keep its last calls
// from npusim, and npusim's idle bound counts calls as they arrive. The
// flusher sends what waits once 20 ms have passed without a call.
void flusher() {
  std::uint64_t seen = ~0ull;
  for (;;) {
    const struct timespec wait{0, 20000000};
    ::nanosleep(&wait, nullptr);
    const std::uint64_t calls = g_calls.load(std::memory_order_relaxed);
    if (calls != seen) {
      seen = calls;
      continue;
    }
    std::unique_lock<std::mutex> lock(g_out_mutex, std::try_to_lock);
    if (lock.owns_lock()) flush();
  }
}

void read_all(int fd, void* dst, std::size_t n) {
  auto* p = static_cast<std::uint8_t*>(dst);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) _exit(0);  // npusim has gone
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

constexpr std::size_t kFlushAt = 1u << 16;
// rt_is_fatal() calls since the last runtime call the program made. A program
// that waits for a kernel to write its memory polls rt_is_fatal in its loop
// (simpler's sync_start_early_local_owner_orch.cpp, wait_for_blockers_started);
// npusim's kernels write nothing there, so after kPollLimit polls (seconds of
// spinning on the device, at a poll's 100 ns or more) the program is stopped
// as one npusim cannot model, where the CPU limit would take an hour.
std::uint64_t g_polls = 0;
constexpr std::uint64_t kPollLimit = 50000000;
// A runtime call from anywhere but the thread that runs the entry, in the
// process npusim started: said on the channel (the run ends with
// ORCHESTRATION_CRASH naming it), then this process ends.
[[noreturn]] void misuse(const std::string& what) {
  wire::Writer w;
  const std::size_t at = w.begin(wire::Msg::Misuse);
  w.str(wire::truncated(what));
  w.end(at);
  lock_channel();
  write_all(g_ops_fd, w.buf.data(), w.buf.size());
  unlock_channel();
  _exit(3);
}
void check_caller(const char* call) {
  if (g_forked_child)
    misuse(std::string("the program called ") + call + " in a forked process (pid " + std::to_string(::getpid()) +
           "): the runtime is the orchestration process's, a child it forks cannot call it");
  if (!t_entry_thread)
    misuse(std::string("the program called ") + call +
           " from a second thread: the orchestration API belongs to the thread that runs the entry (the "
           "runtime's orchestrator thread; it is not thread-safe)");
}
// A fork() by the entry's thread sends the messages not yet written first
// (the calls before the fork reach npusim before anything the child does);
// the child's copy of what is left is dropped, so only the runner's process
// sends it.
void flush_before_fork() {
  if (g_forked_child || !t_entry_thread) return;
  const std::lock_guard<std::mutex> lock(g_out_mutex);
  flush();
}
void forget_unsent_in_child() {
  g_forked_child = true;
  g_out.buf.clear();
  g_complete = 0;
}

void sent() {
  g_polls = 0;
  g_complete = g_out.buf.size();
  if (g_out.buf.size() >= kFlushAt) flush();
}

// ---- the runtime, as the program sees it --------------------------------------
struct State {
  wire::Init init;
  bool fatal = false;
  int depth = 0;                    // the root scope (the executor's) is depth 0
  std::uint32_t next_local[4] = {};  // per-ring task counters
  // The outputs of each task slot: TaskOutputTensors point into them, as into
  // the runtime's payloads, so they live until the slot is reused.
  std::vector<std::vector<std::vector<ChipTensor>>> slots{4};
  std::uint64_t next_vaddr = 0x600000000000ull;  // addresses handed out for OUTPUT buffers
  std::string pending_site;
  ChipStorageTaskArgs storage;
  ChipTaskArgs args;
};
State g;

// ---- the arguments' memory ---------------------------------------------------------
// A program may read its argument tensors' memory directly (data_as<T>(), as
// the runtime's AICPU can: a config tensor read on the host side). Each
// argument's address range is reserved inaccessible on its own (MAP_NORESERVE:
// no memory); one that cannot be reserved (an address-space limit smaller
// than the arguments, `ulimit -v`) is left unmapped. The first touch of a
// page faults; on_fault makes it readable (or maps that one page) and fills
// it with the scene's values of the tensors it holds, so only the pages a
// program touches cost memory or address space (docs/scenes.md).
struct Extern {
  std::uint64_t addr = 0, bytes = 0;
  int elem = 1;
  const wire::Init::Tensor* t = nullptr;
};
std::vector<Extern> g_ext;
struct Reserved {
  std::uint64_t lo = 0, hi = 0;  // page-aligned, PROT_NONE until touched
};
std::vector<Reserved> g_reserved;
std::uint64_t g_page = 4096;
volatile int g_map_errno = 0;  // why populate() could not map a page (0: it could)

int elem_bytes(std::uint8_t sdk_dtype) { return static_cast<int>(get_element_size(static_cast<DataType>(sdk_dtype))); }

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

void reserve_arguments() {
  g_page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<Reserved> ranges;
  for (const wire::Init::Tensor& t : g.init.tensors) {
    Extern e;
    e.addr = t.addr;
    e.elem = std::max(1, elem_bytes(t.dtype));
    e.bytes = static_cast<std::uint64_t>(e.elem);
    for (int d = 0; d < t.ndims; ++d) e.bytes *= t.shapes[d];
    e.t = &t;
    g_ext.push_back(e);
    if (e.bytes > 0) ranges.push_back({e.addr & ~(g_page - 1), (e.addr + e.bytes + g_page - 1) & ~(g_page - 1)});
  }
  // Arguments sharing a page (pages larger than their 4 KiB alignment) share a reservation.
  std::sort(ranges.begin(), ranges.end(), [](const Reserved& x, const Reserved& y) { return x.lo < y.lo; });
  std::vector<Reserved> merged;
  for (const Reserved& r : ranges)
    if (!merged.empty() && r.lo < merged.back().hi)
      merged.back().hi = std::max(merged.back().hi, r.hi);
    else
      merged.push_back(r);
  for (const Reserved& r : merged) {
    void* p = ::mmap(reinterpret_cast<void*>(r.lo), r.hi - r.lo, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == reinterpret_cast<void*>(r.lo))
      g_reserved.push_back(r);
    else if (p != MAP_FAILED)
      ::munmap(p, r.hi - r.lo);  // an old kernel placed it elsewhere: the range is left to populate()
  }
}

// Makes the page holding `a` readable and fills in its argument values.
bool populate(std::uint64_t a) {
  const std::uint64_t page = a & ~(g_page - 1);
  bool ours = false;
  for (const Extern& e : g_ext) ours = ours || (a >= e.addr && a < e.addr + e.bytes);
  if (!ours) return false;
  bool reserved = false;
  for (const Reserved& r : g_reserved) reserved = reserved || (page >= r.lo && page < r.hi);
  if (reserved) {
    if (::mprotect(reinterpret_cast<void*>(page), g_page, PROT_READ | PROT_WRITE) != 0) {
      g_map_errno = errno;
      return false;
    }
  } else {  // not reserved: map this page alone
    void* p = ::mmap(reinterpret_cast<void*>(page), g_page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != reinterpret_cast<void*>(page)) {
      g_map_errno = p == MAP_FAILED ? errno : EEXIST;
      if (p != MAP_FAILED) ::munmap(p, g_page);
      return false;
    }
  }
  for (const Extern& e : g_ext) {
    const std::uint64_t from = std::max(page, e.addr), to = std::min(page + g_page, e.addr + e.bytes);
    if (from >= to || (e.t->fill == 0 && e.t->data.empty())) continue;
    for (std::uint64_t p = from; p + static_cast<std::uint64_t>(e.elem) <= to; p += static_cast<std::uint64_t>(e.elem)) {
      const std::uint64_t i = (p - e.addr) / static_cast<std::uint64_t>(e.elem);
      const std::int64_t v = i < e.t->data.size() ? e.t->data[i] : e.t->fill;
      std::memcpy(reinterpret_cast<void*>(p), &v, static_cast<std::size_t>(e.elem));  // little-endian: the low bytes
    }
  }
  return true;
}

bool is_argument_memory(std::uint64_t a) {
  for (const Extern& e : g_ext)
    if (a >= e.addr && a < e.addr + e.bytes) return true;
  return false;
}


// The program's printf-style text, cut to kMaxText bytes (a width of a
// billion in a fatal's format allocates nothing).
std::string vformat(const char* fmt, va_list ap) {
  if (!fmt) return "";
  std::string s(wire::kMaxText + 1, '\0');
  const int n = std::vsnprintf(s.data(), s.size(), fmt, ap);
  if (n <= 0) return "";
  if (static_cast<std::size_t>(n) <= wire::kMaxText) {
    s.resize(static_cast<std::size_t>(n));
    return s;
  }
  s.resize(wire::kMaxText);
  return s + "... (truncated: " + std::to_string(n) + " bytes in all)";
}

void send_fatal(int32_t code, const std::string& message) {
  g.fatal = true;
  if (code == PTO2_ERROR_NONE) return;  // the runtime marks itself fatal and latches no code
  const std::size_t at = g_out.begin(wire::Msg::Fatal);
  g_out.pod(code);
  g_out.str(wire::truncated(message, wire::kMaxWireText));  // (vformat cut it, with its note)
  g_out.end(at);
  flush();
}

wire::TensorWire to_wire(const ChipTensor& t) {
  wire::TensorWire w;
  w.addr = t.buffer.addr;
  w.size = t.buffer.size;
  w.owner = t.owner_task_id.raw;
  w.start = t.start_offset;
  w.version = t.version;
  w.ndims = static_cast<std::uint8_t>(t.ndims);
  w.dtype = static_cast<std::uint8_t>(t.dtype);
  w.manual_dep = t.manual_dep;
  for (uint32_t d = 0; d < t.ndims && d < 5; ++d) {
    w.shapes[d] = t.shapes[d];
    w.strides[d] = t.strides[d];
  }
  return w;
}

// A task: validated as the runtime's submit validates it, then streamed; the
// outputs are materialized in the task's slot.
TaskOutputTensors submit(wire::TaskKind kind, MixedKernels mk, const CoreTaskArgs& args) {
  const char* what = kind == wire::TaskKind::Alloc ? "alloc_tensors" : kind == wire::TaskKind::Dummy
                                                                           ? "submit_dummy_task"
                                                                           : "submit_task";
  check_caller(what);
  const std::lock_guard<std::mutex> lock(g_out_mutex);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  if (g.fatal) return TaskOutputTensors{};
  if (kind == wire::TaskKind::Alloc) {
    if (args.tensor_count() <= 0) {
      send_fatal(PTO2_ERROR_INVALID_ARGS, "alloc_tensors requires at least one TensorCreateInfo");
      return TaskOutputTensors{};
    }
    bool outputs_only = args.scalar_count() == 0;
    for (int32_t i = 0; i < args.tensor_count(); ++i) outputs_only = outputs_only && args.tag(i) == TensorArgType::OUTPUT;
    if (!outputs_only) {
      send_fatal(PTO2_ERROR_INVALID_ARGS, "alloc_tensors only accepts output TensorCreateInfo args");
      return TaskOutputTensors{};
    }
  }
  if (args.has_error) {
    send_fatal(PTO2_ERROR_INVALID_ARGS, std::string("Invalid Arg in ") + what + ": " +
                                            (args.error_msg ? args.error_msg : "(unknown)"));
    return TaskOutputTensors{};
  }
  wire::TaskMsg t;
  t.kind = kind;
  if (kind == wire::TaskKind::Submit) {
    const ActiveMask mask = mk.to_active_mask();
    always_assert(static_cast<bool>(mask) && "MixedKernels must have at least one active slot");
    always_assert(args.launch_spec.block_num() >= 1 && "block_num must be >= 1");
    if (mk.aic_kernel_id == INVALID_KERNEL_ID && mk.aiv0_kernel_id == INVALID_KERNEL_ID) {  // a lone aiv1 runs as aiv0
      mk.aiv0_kernel_id = mk.aiv1_kernel_id;
      mk.aiv1_kernel_id = INVALID_KERNEL_ID;
    }
    t.kernels[0] = mk.aic_kernel_id;
    t.kernels[1] = mk.aiv0_kernel_id;
    t.kernels[2] = mk.aiv1_kernel_id;
    t.block_num = args.launch_spec.block_num();
    t.sync_start = args.launch_spec.block_num() > 1 && args.launch_spec.require_sync_start();
    const CoreTaskPredicate& p = args.predicate();
    if (p.op != PredicateOp::NONE) {
      always_assert(p.operand.tensor != nullptr);
      t.has_predicate = 1;
      t.pred_tensor = to_wire(*p.operand.tensor);
      t.pred_element = p.operand.tensor->compute_flat_offset(p.operand.indices, p.operand.ndims);
      t.pred_op = static_cast<std::uint8_t>(p.op);
      t.pred_target = p.target;
    }
  }
  if (kind != wire::TaskKind::Alloc) {
    t.early_resolve = args.allow_early_resolve();
    for (uint32_t i = 0; i < args.explicit_dep_count(); ++i) {
      const PTO2TaskId d = args.explicit_dep(i);
      if (!d.is_valid()) {
        send_fatal(PTO2_ERROR_INVALID_ARGS, "Arg.set_dependencies(...) requires valid task ids");
        return TaskOutputTensors{};
      }
      t.deps.push_back(d.raw);
      t.dep_flags.push_back(static_cast<std::uint8_t>(args.explicit_dep_kind(i)));
    }
    for (int32_t i = 0; i < args.scalar_count(); ++i) t.scalars.push_back(args.scalar(i));
  }
  const int last_ring = g.init.rings - 1;
  const int ring = g.depth < last_ring ? g.depth : last_ring;
  const PTO2TaskId id = PTO2TaskId::make(static_cast<uint8_t>(ring), g.next_local[ring]++);
  t.task_id = id.raw;
  std::vector<std::vector<ChipTensor>>& ring_slots = g.slots[ring];
  std::vector<ChipTensor>& slot = ring_slots[id.local() & (ring_slots.size() - 1)];
  slot.clear();
  slot.reserve(static_cast<std::size_t>(args.tensor_count()));
  TaskOutputTensors result;
  result.set_task_id(id);
  for (int32_t i = 0; i < args.tensor_count(); ++i) {
    wire::ArgWire a;
    a.tag = static_cast<std::uint8_t>(args.tag(i));
    if (args.tag(i) != TensorArgType::OUTPUT) {
      a.tensor = to_wire(args.tensor(i).ref());
      t.args.push_back(a);
      continue;
    }
    const TensorCreateInfo& ci = args.tensor(i).create_info();
    const uint64_t bytes = ci.buffer_size_bytes();
    wire::OutputWire& o = a.output;
    o.vaddr = g.next_vaddr;
    g.next_vaddr += (bytes + 4095) / 4096 * 4096 + 4096;
    o.dtype = static_cast<std::uint8_t>(ci.dtype);
    o.ndims = static_cast<std::uint8_t>(ci.ndims);
    o.manual_dep = ci.manual_dep;
    o.has_init = ci.has_initial_value;
    o.init = ci.initial_value;
    for (uint32_t d = 0; d < ci.ndims; ++d) o.shapes[d] = ci.shapes[d];
    t.args.push_back(a);
    slot.emplace_back();
    init_tensor_from_create_info(slot.back(), ci, reinterpret_cast<void*>(o.vaddr), bytes);
    slot.back().owner_task_id = id;
  }
  for (const ChipTensor& out : slot) result.materialize_output(out);
  g_out.task_message(t);
  sent();
  return result;
}

// ---- the ops table ----------------------------------------------------------------
TaskOutputTensors op_submit(PTO2Runtime*, const MixedKernels& mk, const CoreTaskArgs& args) {
  return submit(wire::TaskKind::Submit, mk, args);
}
TaskOutputTensors op_alloc(PTO2Runtime*, const CoreTaskArgs& args) {
  return submit(wire::TaskKind::Alloc, MixedKernels{}, args);
}
TaskOutputTensors op_dummy(PTO2Runtime*, const CoreTaskArgs& args) {
  return submit(wire::TaskKind::Dummy, MixedKernels{}, args);
}

void op_scope_begin(PTO2Runtime* rt) {
  const PTO2ScopeMode mode = rt->pending_scope_mode;
  rt->pending_scope_mode = PTO2ScopeMode::AUTO;
  check_caller("rt_scope_begin");
  const std::lock_guard<std::mutex> lock(g_out_mutex);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  if (g.fatal) return;
  ++g.depth;
  const std::size_t at = g_out.begin(wire::Msg::ScopeBegin);
  g_out.pod(static_cast<std::uint8_t>(mode));
  g_out.str(g.pending_site.empty() ? "(unknown):0" : wire::truncated(g.pending_site));
  g_out.end(at);
  g.pending_site.clear();
  sent();
}

void op_scope_end(PTO2Runtime*) {
  check_caller("rt_scope_end");
  const std::lock_guard<std::mutex> lock(g_out_mutex);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  if (g.fatal) return;
  --g.depth;
  g_out.end(g_out.begin(wire::Msg::ScopeEnd));
  sent();
}

void op_orchestration_done(PTO2Runtime*) {}
void send_end(wire::Msg m, const std::string& what);

bool op_is_fatal(PTO2Runtime*) {
  // (the flag may be read anywhere: only the entry's thread's polls count)
  if (!g_forked_child && t_entry_thread && ++g_polls > kPollLimit) {
    send_end(wire::Msg::Unsupported,
             "the program called rt_is_fatal() " + std::to_string(kPollLimit) +
                 " times in a row without another runtime call: it polls memory a kernel writes, which npusim does "
                 "not model (its kernels write nothing into the program's memory; docs/scenes.md \"Not modelled\")");
    _exit(3);
  }
  return g.fatal;
}

void op_report_fatal(PTO2Runtime*, int32_t code, const char* func, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string msg = vformat(fmt, ap);
  va_end(ap);
  (void)func;
  check_caller("rt_report_fatal");
  const std::lock_guard<std::mutex> lock(g_out_mutex);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  send_fatal(code, msg);
}

void log_at(int level, const char* tag, const char* func, const char* fmt, va_list ap) {
  if (level > g.init.log_level) return;
  std::string msg = vformat(fmt, ap);
  std::fprintf(stderr, "npusim: orchestration %s [%s] %s\n", tag, func ? func : "?", msg.c_str());
}
#define NPUSIM_LOG_OP(name, level, tag)                     \
  void name(const char* func, const char* fmt, ...) {       \
    va_list ap;                                             \
    va_start(ap, fmt);                                      \
    log_at(level, tag, func, fmt, ap);                      \
    va_end(ap);                                             \
  }
NPUSIM_LOG_OP(op_log_error, 0, "LOG_ERROR")
NPUSIM_LOG_OP(op_log_warn, 1, "LOG_WARN")
NPUSIM_LOG_OP(op_log_timing, 2, "LOG_TIMING")
NPUSIM_LOG_OP(op_log_info, 2, "LOG_INFO")
NPUSIM_LOG_OP(op_log_debug, 3, "LOG_DEBUG")

uint64_t op_get(PTO2Runtime*, const ChipTensor& t, uint32_t ndims, const uint32_t indices[]) {
  check_caller("get_tensor_data");
  const std::lock_guard<std::mutex> lock(g_out_mutex);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  if (g.fatal) return 0;
  if (t.buffer.addr == 0) {
    std::fprintf(stderr, "npusim: orchestration LOG_ERROR [get_tensor_data] buffer not allocated (addr=0)\n");
    return 0;
  }
  const std::size_t at = g_out.begin(wire::Msg::Get);
  g_out.tensor(to_wire(t));
  g_out.pod(static_cast<std::uint64_t>(t.compute_flat_offset(indices, ndims)));
  g_out.end(at);
  flush();
  g_polls = 0;
  std::uint64_t v = 0;
  read_all(g_reply_fd, &v, sizeof v);
  return v;
}

void op_set(PTO2Runtime*, const ChipTensor& t, uint32_t ndims, const uint32_t indices[], uint64_t value) {
  check_caller("set_tensor_data");
  const std::lock_guard<std::mutex> lock(g_out_mutex);
  g_calls.fetch_add(1, std::memory_order_relaxed);
  if (g.fatal) return;
  if (t.buffer.addr == 0) {
    std::fprintf(stderr, "npusim: orchestration LOG_ERROR [set_tensor_data] buffer not allocated (addr=0)\n");
    return;
  }
  const std::uint64_t flat = t.compute_flat_offset(indices, ndims);
  const std::uint64_t at_addr = t.buffer.addr + flat * get_element_size(t.dtype);
  if (is_argument_memory(at_addr))  // the program's own reads of the memory see it too
    std::memcpy(reinterpret_cast<void*>(at_addr), &value, static_cast<std::size_t>(get_element_size(t.dtype)));
  const std::size_t at = g_out.begin(wire::Msg::Set);
  g_out.tensor(to_wire(t));
  g_out.pod(static_cast<std::uint64_t>(flat));
  g_out.pod(value);
  g_out.end(at);
  sent();
}

int32_t op_clusters(PTO2Runtime*) { return g.init.clusters; }
int32_t op_aiv(PTO2Runtime*) { return g.init.aiv; }

const char* basename_of(const char* path) {
  const char* base = path;
  for (const char* p = path; p && *p; ++p)
    if (*p == '/' || *p == '\\') base = p + 1;
  return base;
}
void op_scope_set_site(const char* file, int line) {
  check_caller("rt_scope_begin");
  g.pending_site = std::string(file ? basename_of(file) : "(unknown)") + ":" + std::to_string(line);
}

const PTO2RuntimeOps kOps = {op_submit,     op_scope_begin, op_scope_end,    op_orchestration_done,
                             op_is_fatal,   op_report_fatal, op_log_error,   op_log_warn,
                             op_log_timing, op_log_info,    op_log_debug,    op_get,
                             op_set,        op_alloc,       op_dummy,        op_clusters,
                             op_aiv,        op_scope_set_site};
PTO2Runtime g_runtime{&kOps, PTO2ScopeMode::AUTO};
PTO2Runtime* g_bound = nullptr;

// ---- crashes --------------------------------------------------------------------
// A fault in an argument's memory fills its page; any other fault at an
// address npusim handed out (an OUTPUT buffer's) is the program reading
// device memory directly, which npusim does not model: say so before dying.
void on_fault(int sig, siginfo_t* info, void*) {
  const std::uint64_t a = reinterpret_cast<std::uint64_t>(info->si_addr);
  if ((sig == SIGSEGV || sig == SIGBUS) && populate(a)) return;
  // The calls made before the crash still reach the simulation, as they
  // reached the runtime on the device (the runner's own: a forked child
  // dropped its copy when it was forked).
  const std::uint8_t* p = g_out.buf.data();
  if (::getpid() == g_pid && g_complete > 0) {
    lock_channel();
    for (std::size_t n = g_complete; n > 0;) {
      const ssize_t w = ::write(g_ops_fd, p, n);
      if (w <= 0) break;
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    unlock_channel();
  }
  g_complete = 0;
  if (is_argument_memory(a) && g_map_errno != 0) {
    // An argument's page the runner could not map: not the program's fault.
    const char msg[] =
        "npusim: the orchestration program read an argument's memory directly (data_as), and the runner could not "
        "map that page for it: the process's address-space or memory limit (ulimit -v) is reached\n";
    (void)!::write(2, msg, sizeof msg - 1);
  } else if ((a >= 0x100000000ull && a < 0x2000000000ull) || (a >= 0x600000000000ull && a < 0x700000000000ull)) {
    const char msg[] =
        "npusim: the orchestration program accessed a buffer's memory directly (data_as / buffer.addr) where npusim "
        "has no copy of it: only the arguments' memory holds the scene's values; use get_tensor_data / "
        "set_tensor_data\n";
    (void)!::write(2, msg, sizeof msg - 1);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void send_end(wire::Msg m, const std::string& what) {
  const std::lock_guard<std::mutex> lock(g_out_mutex);
  const std::size_t at = g_out.begin(m);
  if (m != wire::Msg::Done) g_out.str(wire::truncated(what));
  g_out.end(at);
  flush();
}

// ---- dying with npusim ---------------------------------------------------------
// The signal the kernel sends this process when npusim ends, however it ends
// (PR_SET_PDEATHSIG; npusim itself may die of SIGKILL): the handler kills
// the process group (npusim started this process as its leader), the
// program's children with it. A real-time signal nothing else sends.
int death_signal() { return SIGRTMAX - 1; }

void on_npusim_death(int) {
  if (::getpgrp() == ::getpid()) ::kill(0, SIGKILL);  // (only a group of its own)
  _exit(137);
}

void die_with(pid_t npusim, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  ::sigaction(death_signal(), &sa, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, death_signal());
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::prctl(PR_SET_PDEATHSIG, death_signal());
  if (npusim > 0 && ::getppid() != npusim) handler(0);  // npusim ended before the line above
}

// --guard: the compiler's keeper.
char** g_guard_files = nullptr;  // NULL-terminated
pid_t g_guarded = 0;

void on_npusim_death_guarded(int) {
  // The compiler's processes are in this process group: SIGTERM them (a
  // compiler removes its own outputs), give them a moment, then remove the
  // temporary files and kill what is left.
  ::signal(SIGTERM, SIG_IGN);
  ::kill(0, SIGTERM);
  for (int i = 0; i < 200 && g_guarded > 0; ++i) {
    int st = 0;
    if (::waitpid(g_guarded, &st, WNOHANG) == g_guarded) break;
    const struct timespec ms{0, 10000000};
    ::nanosleep(&ms, nullptr);
  }
  for (char** f = g_guard_files; f && *f; ++f) ::unlink(*f);
  on_npusim_death(0);
}

int guard_main(int argc, char** argv) {
  int dash = 3;
  while (dash < argc && std::strcmp(argv[dash], "--") != 0) ++dash;
  if (argc < 4 || dash + 1 >= argc) {
    std::fprintf(stderr, "npusim-orch-runner: started by npusim only\n");
    return 2;
  }
  argv[dash] = nullptr;
  g_guard_files = argv + 3;
  sigset_t set;  // the death signal waits until the compiler is started
  sigemptyset(&set);
  sigaddset(&set, death_signal());
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  die_with(static_cast<pid_t>(std::atoll(argv[2])), on_npusim_death_guarded);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::signal(death_signal(), SIG_DFL);
    ::execvp(argv[dash + 1], argv + dash + 1);
    std::fprintf(stderr, "cannot run %s: %s\n", argv[dash + 1], std::strerror(errno));
    _exit(127);
  }
  g_guarded = child;
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  if (child < 0) {
    std::fprintf(stderr, "cannot run %s: %s\n", argv[dash + 1], std::strerror(errno));
    return 127;
  }
  int st = 0;
  while (::waitpid(child, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// Moves a pipe above the descriptors a program uses, close on exec.
int keep_private(int fd) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, wire::kFirstPrivateFd);
  if (moved < 0) return fd;
  ::close(fd);
  return moved;
}

}  // namespace

// ---- the framework symbols the program's SDK headers declare ----------------------
extern "C" __attribute__((visibility("default"))) PTO2Runtime* framework_current_runtime(void) { return g_bound; }
extern "C" __attribute__((visibility("default"))) void framework_bind_runtime(PTO2Runtime* rt) { g_bound = rt; }

std::string get_stacktrace(int) { return std::string(); }

AssertionError::AssertionError(const char* condition, const char* file, int line)
    : std::runtime_error(std::string("Assertion failed: ") + condition + " at " + file + ":" + std::to_string(line)),
      condition_(condition),
      file_(file),
      line_(line) {}

[[noreturn]] void assert_impl(const char* condition, const char* file, int line) {
  throw AssertionError(condition, file, line);
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--guard") == 0) return guard_main(argc, argv);
  if (argc != 3) {
    std::fprintf(stderr, "npusim-orch-runner: started by npusim only (npusim run SCENE)\n");
    return 2;
  }
  die_with(static_cast<pid_t>(std::atoll(argv[2])), on_npusim_death);
  g_pid = ::getpid();
  t_entry_thread = true;
  g_ops_fd = keep_private(wire::kOpsFd);
  g_reply_fd = keep_private(wire::kReplyFd);
  void* shared = ::mmap(nullptr, sizeof(std::atomic<pid_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared != MAP_FAILED) g_write_lock = new (shared) std::atomic<pid_t>(0);
  ::pthread_atfork(flush_before_fork, nullptr, forget_unsent_in_child);
  ::dup2(2, 1);  // the program's own output goes to npusim's standard error
  std::uint32_t len = 0;
  read_all(g_reply_fd, &len, sizeof len);
  std::vector<std::uint8_t> buf(len);
  read_all(g_reply_fd, buf.data(), len);
  wire::Reader r(buf.data(), buf.size());
  g.init = r.init();

  reserve_arguments();
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_DFL);
  // A program that never returns and never calls the API would hang npusim:
  // an hour of CPU time ends it (SIGXCPU, reported as its crash).
  struct rlimit cpu {3600, 3600 + 10};
  setrlimit(RLIMIT_CPU, &cpu);

  for (int ring = 0; ring < 4; ++ring) {
    std::uint32_t w = 1;
    while (w < g.init.task_window[ring]) w <<= 1;
    g.slots[ring].resize(w);
  }
  for (const wire::Init::Tensor& t : g.init.tensors) {
    uint32_t shapes[5] = {};
    for (int d = 0; d < t.ndims; ++d) shapes[d] = t.shapes[d];
    g.storage.add_tensor(make_tensor_external(reinterpret_cast<void*>(t.addr), shapes, t.ndims,
                                              static_cast<DataType>(t.dtype)));
  }
  for (std::uint64_t s : g.init.scalars) g.storage.add_scalar(s);
  g.args.create_from_chip_args(g.storage);

  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    send_end(wire::Msg::LoadError, std::string("cannot load the orchestration library: ") + dlerror());
    return 3;
  }
  using Entry = void (*)(const ChipTaskArgs&);
  using Config = PTO2OrchestrationConfig (*)(const ChipTaskArgs&);
  auto entry = reinterpret_cast<Entry>(dlsym(lib, g.init.entry.c_str()));
  if (!entry) {
    send_end(wire::Msg::LoadError, "the orchestration library has no entry function '" + g.init.entry + "'");
    return 3;
  }
  auto config = reinterpret_cast<Config>(dlsym(lib, g.init.config.c_str()));
  g_bound = &g_runtime;
  std::thread(flusher).detach();
  try {
    const std::int32_t expected = config ? config(g.args).expected_arg_count : -1;
    const std::lock_guard<std::mutex> lock(g_out_mutex);
    const std::size_t at = g_out.begin(wire::Msg::Config);
    g_out.pod(expected);
    g_out.end(at);
    flush();
  } catch (const std::exception& e) {
    send_end(wire::Msg::Exception, e.what());
    _exit(3);
  } catch (...) {
    send_end(wire::Msg::Exception, "an exception that is not a std::exception");
    _exit(3);
  }
  try {
    entry(g.args);
  } catch (const std::exception& e) {
    if (::getpid() == g_pid) send_end(wire::Msg::Exception, e.what());  // (a forked child's end is its own)
    _exit(3);
  } catch (...) {
    if (::getpid() == g_pid) send_end(wire::Msg::Exception, "an exception that is not a std::exception");
    _exit(3);
  }
  if (::getpid() == g_pid) send_end(wire::Msg::Done, "");
  _exit(0);
}
