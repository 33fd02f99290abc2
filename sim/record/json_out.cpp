#include "sim/record/json_out.h"

#include "models/common/errors.h"
#include "sim/record/deflate_fast.h"
#include "sim/record/deflate_join.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>

#include <boost/lockfree/spsc_queue.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zlib.h>

namespace npusim::record {

void JsonBuf::grow(std::size_t need) {
  std::size_t cap = std::max<std::size_t>(cap_ * 2, 256);
  while (cap - len_ < need) cap *= 2;
  char* b = static_cast<char*>(std::realloc(b_, cap));
  if (!b) {
    out_of_memory() = true;
    throw std::bad_alloc();
  }
  b_ = b;
  cap_ = cap;
}

JsonBuf& JsonBuf::str(std::string_view v) {
  static const char kHex[] = "0123456789abcdef";
  ch('"');
  std::size_t plain = 0;  // start of the run of characters copied as they are
  for (std::size_t k = 0; k < v.size(); ++k) {
    unsigned char c = static_cast<unsigned char>(v[k]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    put(v.data() + plain, k - plain);
    plain = k + 1;
    ch('\\');
    switch (c) {
      case '"': ch('"'); break;
      case '\\': ch('\\'); break;
      case '\n': ch('n'); break;
      case '\t': ch('t'); break;
      case '\r': ch('r'); break;
      default: raw("u00").ch(kHex[c >> 4]).ch(kHex[c & 15]);
    }
  }
  put(v.data() + plain, v.size() - plain);
  return ch('"');
}

namespace {
std::atomic<std::uint64_t> g_bytes_written{0};
std::atomic<std::size_t> g_held_bytes{0};  // OutFile::held_, all files together (kHoldBudget)
std::atomic<bool> g_write_failed{false};

// The fault-injection seam (docs/testing.md, "Write errors"): the n-th
// write(2) of the process, counted from 1 over every output file, fails with
// the given errno instead of writing. Set by NPUSIM_TEST_WRITE_FAULT=N[:ERRNO]
// (ENOSPC, EIO, EFBIG or EDQUOT; ENOSPC if none), read when the process
// starts and then removed from its environment, so the npusim processes it
// starts (a sweep's points, barrier-cost's measurements) write normally; or
// by set_write_fault.
struct WriteFault {
  std::atomic<std::uint64_t> left{0};  // writes until the failing one; 0: none armed
  std::atomic<int> err{ENOSPC};
  WriteFault() {
    const char* v = std::getenv("NPUSIM_TEST_WRITE_FAULT");
    if (!v || !*v) return;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    int e = ENOSPC;
    if (*end == ':') {
      const std::string name(end + 1);
      e = name == "EIO" ? EIO : name == "EFBIG" ? EFBIG : name == "EDQUOT" ? EDQUOT : name == "ENOSPC" ? ENOSPC : 0;
    } else if (*end) {
      e = 0;
    }
    if (n == 0 || e == 0) {  // a test's typo must not pass as "no fault"
      std::fprintf(stderr, "npusim: NPUSIM_TEST_WRITE_FAULT=%s: expected N or N:ENOSPC|EIO|EFBIG|EDQUOT, N >= 1\n", v);
      std::abort();
    }
    err.store(e);
    left.store(n);
    ::unsetenv("NPUSIM_TEST_WRITE_FAULT");
  }
  // True if this write is the one to fail (err then holds its errno).
  bool hit(int& e) {
    std::uint64_t l = left.load(std::memory_order_relaxed);
    while (l != 0)
      if (left.compare_exchange_weak(l, l - 1, std::memory_order_relaxed)) {
        if (l != 1) return false;
        e = err.load(std::memory_order_relaxed);
        return true;
      }
    return false;
  }
};

WriteFault g_write_fault;  // constructed at start-up, before any thread
WriteFault& write_fault() { return g_write_fault; }

ssize_t write_some(int fd, const char* p, std::size_t n, int& err) {
  if (n > 0 && write_fault().hit(err)) return -1;
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = w < 0 ? errno : EIO;
      return -1;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return 0;
}
}  // namespace

void set_write_fault(std::uint64_t nth, int err) {
  write_fault().err.store(err);
  write_fault().left.store(nth);
}

// The one background writer (see OutFile). Started on first use; its jobs
// are full chunks, each owned by the thread until written, then recycled as
// the next spare block. The chunks and the spare blocks travel in two
// Boost.Lockfree spsc_queues (the simulation thread is the only producer of
// chunks and the only taker of spares); the mutex and its condition
// variables are only for sleeping: the writer when it has nothing to do, the
// simulation when the queue is full or it waits for a file's last chunk.
class IoThread {
 public:
  static IoThread& get() {
    static IoThread io;
    return io;
  }

  // Queues `len` bytes of `block` (malloc'd, `cap` bytes) for `f`, and
  // returns a spare block for f to continue in (null if none yet).
  std::pair<char*, std::size_t> submit(OutFile& f, char* block, std::size_t len, std::size_t cap) {
    push(Job{&f, block, len, cap, 0, 0});
    ++f.queued_;  // after the push: a failed push leaves nothing to wait for
    wake_for_batch();
    Spare s{nullptr, 0};
    spares_.pop(s);
    return {s.block, s.cap};
  }

  // Queues `len` bytes of `block` (malloc'd) for `f`, freed once written
  // (a held chunk, OutFile::append: its size is not a buffer's).
  void submit_owned(OutFile& f, char* block, std::size_t len) {
    push(Job{&f, block, len, 0, 0, 0});
    ++f.queued_;
    wake_for_batch();
  }

  // Queues a gzip chunk the simulation thread compressed itself: `len`
  // bytes of deflate blocks at block + 10 (room for the gzip header before
  // them), the compressed `text_size` bytes of text with CRC-32 `text_crc`.
  // The I/O thread writes it in its turn and frees the block.
  void submit_packed(OutFile& f, unsigned char* block, std::size_t len, std::size_t text_size,
                     std::uint32_t text_crc) {
    push(Job{&f, reinterpret_cast<char*>(block), len, 0, text_size, text_crc});
    ++f.queued_;
    wake_for_batch();
  }

  // True when the writer has half its queue or more still to do: the
  // simulation thread then compresses its gzip chunks itself, so both cores
  // compress when compression, not the simulation, sets the pace.
  bool behind() const { return jobs_.write_available() <= kMaxJobs / 2; }

  void wait(OutFile& f) {
    wake(work_, work_sleepers_);  // chunks held back for a batch (wake_for_batch)
    sleep(done_, done_sleepers_, [&] { return f.written_.load(std::memory_order_acquire) == f.queued_; });
  }

  static bool enabled() {
    static const bool on = std::thread::hardware_concurrency() > 1;
    return on;
  }

 private:
  struct Job {
    OutFile* file;
    char* block;
    std::size_t len, cap;
    std::size_t text_size;  // > 0: a compressed gzip chunk of that much text (submit_packed)
    std::uint32_t text_crc;
  };
  void push(const Job& j) {
    while (!jobs_.push(j)) {  // full: sleep until the writer takes one
      wake(work_, work_sleepers_);
      sleep(room_, room_sleepers_, [&] { return jobs_.write_available() > 0; });
    }
  }
  struct Spare {
    char* block;
    std::size_t cap;
  };
  // Chunks queued at most (one more is being written); a chunk is the
  // buffer at its first commit() past 256 KB, so a little over 256 KB.
  static constexpr std::size_t kMaxJobs = 16;

  IoThread() : t_([this] { loop(); }) {}
  ~IoThread() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    work_.notify_one();
    t_.join();
    Spare s;
    while (spares_.pop(s)) std::free(s.block);
  }

  // Wakes the writer once kWakeBatch chunks wait, not for each one: it
  // writes a chunk faster than the simulation fills one, so woken per chunk
  // it slept after nearly every chunk, a futex wait and wake-up each (two
  // system calls and a cross-core wake-up, 3,900 futex calls in a
  // bench_pa_100k run with every output on). Held-back chunks are written
  // when a file is waited for (wait: sync, close, append) and when the
  // queue is full; only progress's and --max-output's running byte count
  // sees them later (by kWakeBatch - 1 chunks at most).
  static constexpr std::size_t kWakeBatch = 4;
  void wake_for_batch() {
    if (kMaxJobs - jobs_.write_available() >= kWakeBatch) wake(work_, work_sleepers_);
  }

  // Sleeps on `cv` until `ready`, counted in `sleepers` while it may sleep.
  template <class Ready>
  void sleep(std::condition_variable& cv, std::atomic<int>& sleepers, Ready ready) {
    std::unique_lock<std::mutex> lk(m_);
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with wake's fence
    cv.wait(lk, ready);
    sleepers.fetch_sub(1, std::memory_order_relaxed);
  }

  // Wakes the threads asleep on `cv`, if any, after the change they wait
  // for. Only a counted sleeper is notified: each job used to take the mutex
  // three times (the writer's room and done wake-ups, the simulation's work
  // wake-up) with nobody asleep, and the two threads contending for it made
  // a thousand futex calls of the run's 3,900. The fences pair (Dekker's
  // pattern): either the waker sees the sleeper's count, or the sleeper's
  // check sees the change. Notifies after taking the lock once: a thread
  // between its check and its wait holds the lock, so the notification
  // cannot fall between the two (the lost wake-up).
  void wake(std::condition_variable& cv, const std::atomic<int>& sleepers) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_relaxed) == 0) return;
    { std::lock_guard<std::mutex> lk(m_); }
    cv.notify_all();
  }

  void loop() {
    for (;;) {
      Job j;
      if (!jobs_.pop(j)) {
        sleep(work_, work_sleepers_, [&] { return stop_ || jobs_.read_available() > 0; });
        if (jobs_.read_available() == 0) return;  // stopped, every chunk written
        continue;
      }
      wake(room_, room_sleepers_);
      // write_errno_ is this thread's while the file has chunks queued.
      int err = 0;
      if (!j.file->write_errno_)
        err = j.text_size ? j.file->emit_packed(reinterpret_cast<unsigned char*>(j.block), j.len, j.text_size,
                                                j.text_crc)
                          : j.file->emit(j.block, j.len);
      if (err) j.file->note_write_error(err);
      if (j.text_size || j.cap == 0 || !spares_.push(Spare{j.block, j.cap})) std::free(j.block);
      j.file->written_.fetch_add(1, std::memory_order_release);  // publishes write_errno_ too
      wake(done_, done_sleepers_);
    }
  }

  boost::lockfree::spsc_queue<Job, boost::lockfree::capacity<kMaxJobs>> jobs_;          // simulation -> writer
  boost::lockfree::spsc_queue<Spare, boost::lockfree::capacity<kMaxJobs + 1>> spares_;  // writer -> simulation
  std::mutex m_;
  std::condition_variable work_, room_, done_;
  std::atomic<int> work_sleepers_{0}, room_sleepers_{0}, done_sleepers_{0};  // threads in sleep() on each
  bool stop_ = false;
  std::thread t_;  // last: started after the members it uses
};

// A gzip file's state: its level, an output buffer and the stream's running
// CRC-32 and length. Each chunk is compressed on its own, at level 1 by
// deflate_fast (deflate_fast.h), at 2 to 9 by libdeflate (a whole-buffer
// codec, several times faster than zlib at the same level), and joined into
// the one deflate stream (deflate_join.h), so any thread can
// compress a chunk: the I/O thread, or the simulation thread when the I/O
// thread is behind (OutFile::flush). A chunk's bytes are the same whichever
// thread compresses it.
struct OutFile::Gzip {
  int level = 0;
  std::vector<unsigned char> out;
  std::uint32_t crc = 0, size = 0;  // of the text so far (the size modulo 2^32, as RFC 1952's ISIZE)
  bool started = false;             // the header is written
};

namespace {
constexpr std::size_t kGzipHeader = 10;
std::atomic<std::uint64_t> g_chunks_compressed_here{0};
std::atomic<GzipChunkPolicy> g_gzip_chunk_policy{GzipChunkPolicy::ByLoad};

// The calling thread's libdeflate compressor for `level` (1..9), kept for the thread's life.
libdeflate_compressor* thread_compressor(int level) {
  struct Cache {
    libdeflate_compressor* c[10] = {};
    ~Cache() {
      for (libdeflate_compressor* x : c) libdeflate_free_compressor(x);
    }
  };
  thread_local Cache cache;
  libdeflate_compressor*& c = cache.c[level];
  if (!c) c = libdeflate_alloc_compressor(level);
  if (!c) {
    out_of_memory() = true;
    throw std::bad_alloc();
  }
  return c;
}

// Allocates the calling thread's compressor for `level` now, so that an
// allocation failure shows at the caller, not on the I/O thread.
void reserve_compressor(int level) {
  if (level > 1) {
    thread_compressor(level);
    return;
  }
  try {
    deflate_fast::reserve();
  } catch (const std::bad_alloc&) {
    out_of_memory() = true;
    throw;
  }
}

// The room compress_piece needs for n bytes of text.
std::size_t piece_bound(int level, std::size_t n) {
  if (level == 1) return deflate_fast::bound(n);
  return libdeflate_deflate_compress_bound(thread_compressor(level), n) + deflate_join::kSlack;
}

// Compresses p[0, n) into `out` (piece_bound bytes) as non-final deflate
// blocks ending on a byte boundary; returns their length (0: cannot happen,
// the bound is libdeflate's own and the stream its own). Level 1 (plain
// `gzip`) is deflate_fast's, which writes such blocks itself, faster than
// libdeflate 1.14's level 1 at about its ratio on the outputs' text
// (docs/architecture.md, "Outputs"); levels 2 to 9 are libdeflate's.
std::size_t compress_piece(int level, const char* p, std::size_t n, unsigned char* out) {
  if (level == 1) return deflate_fast::compress(reinterpret_cast<const unsigned char*>(p), n, out);
  libdeflate_compressor* c = thread_compressor(level);
  const std::size_t len = libdeflate_deflate_compress(c, p, n, out, libdeflate_deflate_compress_bound(c, n));
  return len ? deflate_join::make_nonfinal(out, len) : 0;
}

// RFC 1952's header: deflate, no flags (no file name), modification time 0,
// the extra flags zlib gives the level (4 fastest, 2 best), Unix.
void gzip_header(unsigned char* h, int level) {
  const unsigned char head[kGzipHeader] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0,
                                           static_cast<unsigned char>(level == 1 ? 4 : level == 9 ? 2 : 0), 3};
  std::memcpy(h, head, sizeof head);
}
}  // namespace

void OutFile::GzipDelete::operator()(Gzip* g) const { delete g; }

OutFile::~OutFile() {
  if (fd_ >= 0) {
    if (queued_) IoThread::get().wait(*this);
    give_back_reserved();
    ::close(fd_);
  }
  free_held();
}

void OutFile::free_held() {
  for (const Held& h : held_) {
    g_held_bytes.fetch_sub(h.len, std::memory_order_relaxed);
    std::free(h.block);
  }
  held_.clear();
}

bool OutFile::hold_chunk() {
  const std::size_t n = size();
  if (g_held_bytes.fetch_add(n, std::memory_order_relaxed) + n > kHoldBudget) {
    g_held_bytes.fetch_sub(n, std::memory_order_relaxed);
    spilled_ = true;  // this chunk and every later one go to the file
    return false;
  }
  // A fresh block with room for a chunk and the record that crosses its end
  // (one that grew by doubling would be twice a chunk; a longer record grows
  // it); the held one is shrunk to its text (in place: the tail goes back to
  // the heap, small enough that the held chunks lie nearly end to end).
  const std::size_t cap = kChunk + 8192;
  char* fresh = static_cast<char*>(std::malloc(cap));
  if (!fresh) {
    g_held_bytes.fetch_sub(n, std::memory_order_relaxed);
    spilled_ = true;
    return false;
  }
  char* full = swap_block(fresh, cap);
  if (char* shrunk = static_cast<char*>(std::realloc(full, n))) full = shrunk;
  held_.push_back(Held{full, n});
  g_bytes_written += n;  // as the scratch file's write counted it
  return true;
}

void OutFile::open(std::string path, int gzip_level) {
  open_flags(std::move(path), gzip_level, O_CREAT | O_TRUNC);
}

void OutFile::open_flags(std::string path, int gzip_level, int flags, int fd) {
  if (fd_ >= 0) close();
  path_ = std::move(path);
  fd_ = fd >= 0 ? ::fcntl(fd, F_DUPFD_CLOEXEC, 3) : ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | flags, 0644);
  if (fd_ < 0) fail("cannot create");
  pos_ = reserved_ = 0;
  struct stat st {};
  struct statfs fs {};
  may_reserve_ = fd < 0 && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 &&
                 ::fstatfs(fd_, &fs) == 0 && fs.f_type == kExt4Magic;
  clear();
  free_held();
  spilled_ = false;
  queued_ = 0;
  written_.store(0, std::memory_order_relaxed);
  write_errno_ = 0;
  gz_.reset();
  if (gzip_level > 0) {
    std::unique_ptr<Gzip, GzipDelete> gz(new Gzip);
    gz->level = std::min(gzip_level, 9);
    reserve_compressor(gz->level);
    gz_ = std::move(gz);
  }
}

int OutFile::emit(const char* p, std::size_t n, bool finish) {
  int err = 0;
  if (!gz_) {
    err = write_out(p, n);
    if (!err) g_bytes_written += n;
    return err;
  }
  if (n == 0 && !finish) return 0;
  // One write(2) per chunk: the header (before the first chunk), the chunk's
  // deflate blocks, and at the end the final block and the trailer.
  Gzip& g = *gz_;
  std::vector<unsigned char>& out = g.out;
  out.resize(kGzipHeader + (n ? piece_bound(g.level, n) : 0) + sizeof deflate_join::kFinalBlock + 8);
  std::size_t len = 0;
  if (!g.started) {
    gzip_header(out.data(), g.level);
    len = kGzipHeader;
    g.started = true;
  }
  if (n) {
    const std::size_t piece = compress_piece(g.level, p, n, out.data() + len);
    if (piece == 0) return EIO;
    len += piece;
    g.crc = libdeflate_crc32(g.crc, p, n);
    g.size += static_cast<std::uint32_t>(n);
  }
  if (finish) {
    std::memcpy(out.data() + len, deflate_join::kFinalBlock, sizeof deflate_join::kFinalBlock);
    len += sizeof deflate_join::kFinalBlock;
    for (std::uint32_t v : {g.crc, g.size})
      for (int b = 0; b < 4; ++b) out[len++] = static_cast<unsigned char>(v >> (8 * b));
  }
  if ((err = write_out(reinterpret_cast<const char*>(out.data()), len)) != 0) return err;
  g_bytes_written += len;
  return 0;
}

int OutFile::emit_packed(unsigned char* block, std::size_t len, std::size_t text_size, std::uint32_t text_crc) {
  Gzip& g = *gz_;
  const unsigned char* p = block + kGzipHeader;
  if (!g.started) {
    gzip_header(block, g.level);
    p = block;
    len += kGzipHeader;
    g.started = true;
  }
  g.crc = static_cast<std::uint32_t>(crc32_combine(g.crc, text_crc, static_cast<z_off_t>(text_size)));
  g.size += static_cast<std::uint32_t>(text_size);
  if (const int err = write_out(reinterpret_cast<const char*>(p), len)) return err;
  g_bytes_written += len;
  return 0;
}

// The file system's cost of a written page, on ext4, is mostly its
// delayed allocation: each page reserves its block (and its quota) as it is
// written, and is entered in the file's extent cache. Blocks reserved ahead
// in one call skip that: a page written into them finds its block already
// there. 128 MiB written 256 KiB at a time, as the I/O thread writes: 22 ms
// of CPU per 100 MiB without, 16 ms with steps of 8 MiB (ext4, four runs).
void OutFile::reserve_ahead(std::size_t n) {
  const std::uint64_t end = pos_ + n;
  if (!may_reserve_ || end <= reserved_ || end < kPreallocFrom) return;
  const std::uint64_t from = std::max(reserved_, pos_);
  const std::uint64_t len = std::max(kPreallocStep, end - from);
  // Counted as reserved even if the call fails: a failing fallocate (no
  // room, over quota) may keep what it had allocated, which close() then
  // gives back too.
  reserved_ = from + len;
  if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(from), static_cast<off_t>(len)) != 0)
    may_reserve_ = false;  // not supported here, or no room: the writes say what they meet
}

int OutFile::write_out(const char* p, std::size_t n) {
  reserve_ahead(n);
  int err = 0;
  if (write_some(fd_, p, n, err) != 0) return err;
  pos_ += n;
  return 0;
}

void OutFile::give_back_reserved() {
  // Blocks reserved past the end stay the file's until it is truncated
  // (closing does not free them); truncated to its own size, which
  // FALLOC_FL_KEEP_SIZE never moved (read from the file, not counted: a
  // write that failed part-way wrote bytes no count has), just those go.
  if (reserved_ == 0) return;
  reserved_ = 0;
  struct stat st {};
  if (::fstat(fd_, &st) == 0) (void)::ftruncate(fd_, st.st_size);
}

void OutFile::end_gzip() { gz_.reset(); }

void OutFile::fail(const char* what) const { fail(what, errno); }

void OutFile::note_write_error(int err) {
  write_errno_ = err;
  g_write_failed = true;
}

namespace {
std::string g_stop_reason;
}
bool detail::g_stop_requested = false;

void stop_run(const std::string& why) {
  if (g_stop_reason.empty()) g_stop_reason = why;
  detail::g_stop_requested = !g_stop_reason.empty();
}

const std::string& stop_reason() { return g_stop_reason; }

std::uint64_t gzip_chunks_compressed_here() { return g_chunks_compressed_here.load(std::memory_order_relaxed); }
void set_gzip_chunk_policy(GzipChunkPolicy p) { g_gzip_chunk_policy.store(p, std::memory_order_relaxed); }
std::uint64_t bytes_written() { return g_bytes_written.load(std::memory_order_relaxed); }
bool write_failed() { return g_write_failed.load(std::memory_order_relaxed); }

void OutFile::fail(const char* what, int err) const {
  throw IoError(shown_.empty() ? path_ : shown_, std::string(what) + ": " + std::strerror(err));
}

void OutFile::write_all(const char* p, std::size_t n) {
  if (const int err = emit(p, n)) fail("cannot write", err);
}

void OutFile::flush() {
  if (fd_ < 0 || size() == 0) return;
  if (hold_ && !spilled_ && !gz_ && hold_chunk()) return;
  if (!IoThread::enabled()) {
    // As on the I/O thread: a write error is reported by sync() or close(),
    // never in the middle of a simulation.
    if (!write_errno_)
      if (const int err = emit(text().data(), size())) note_write_error(err);
    clear();
    return;
  }
  const GzipChunkPolicy policy = g_gzip_chunk_policy.load(std::memory_order_relaxed);
  if (gz_ && policy != GzipChunkPolicy::IoThread &&
      (policy == GzipChunkPolicy::SimulationThread || IoThread::get().behind())) {
    // Compressed here (see Gzip); the text's block is kept.
    const std::size_t n = size();
    auto* block = static_cast<unsigned char*>(std::malloc(kGzipHeader + piece_bound(gz_->level, n)));
    if (!block) {
      out_of_memory() = true;
      throw std::bad_alloc();
    }
    const std::size_t len = compress_piece(gz_->level, text().data(), n, block + kGzipHeader);
    if (len) {
      const auto crc = static_cast<std::uint32_t>(libdeflate_crc32(0, text().data(), n));
      IoThread::get().submit_packed(*this, block, len, n, crc);
      g_chunks_compressed_here.fetch_add(1, std::memory_order_relaxed);
      clear();
      return;
    }
    std::free(block);  // cannot happen; the I/O thread reports it for the text below
  }
  std::size_t len = size(), cap = capacity();
  char* full = swap_block(nullptr, 0);
  auto spare = IoThread::get().submit(*this, full, len, cap);
  if (!spare.first) {
    // No block written back yet (the I/O thread is behind): a new one of the
    // full block's size. Grown from empty instead, it would be copied by
    // realloc at each doubling up to that size (2 % of a run's instructions
    // with every output on, and its page faults).
    spare.first = static_cast<char*>(std::malloc(cap));
    spare.second = spare.first ? cap : 0;  // out of memory: grown (and reported) at the next append
  }
  swap_block(spare.first, spare.second);  // the empty block it replaces is null
}

void OutFile::wait_written() {
  if (queued_) IoThread::get().wait(*this);
  if (write_errno_) fail("cannot write", write_errno_);
}

void OutFile::sync() {
  flush();
  wait_written();
}

namespace {

// Up to n bytes of `in` into p (0 at its end), EINTR retried; a read error
// closes `in` and fails naming `path` (fail_read, with the read's errno).
std::size_t read_or_fail(int in, char* p, std::size_t n, const std::string& path) {
  for (;;) {
    const ssize_t got = ::read(in, p, n);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(in);
    errno = err;
    fail_read(path);
  }
}

}  // namespace

void OutFile::append_file(const std::string& path) {
  if (gz_) {
    append_compressed(path);
    return;
  }
  sync();
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) fail_read(path);
  if (struct stat st {}; ::fstat(in, &st) == 0 && st.st_size > 0) reserve_ahead(static_cast<std::size_t>(st.st_size));
  // In-kernel copy first; plain reads and writes where the file system
  // cannot (copy_file_range refuses some pairs of files).
  for (;;) {
    int fault = 0;
    if (write_fault().hit(fault)) {
      ::close(in);
      fail("cannot write", fault);
    }
    ssize_t n = ::copy_file_range(in, nullptr, fd_, nullptr, kChunk * 16, 0);
    if (n > 0) {
      g_bytes_written += static_cast<std::uint64_t>(n);
      pos_ += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n == 0) {
      ::close(in);
      return;
    }
    if (errno == EINTR) continue;
    break;
  }
  std::string chunk(kChunk, '\0');
  while (const std::size_t n = read_or_fail(in, chunk.data(), chunk.size(), path)) write_all(chunk.data(), n);
  ::close(in);
}

void OutFile::append_compressed(const std::string& path) {
  // Read straight into the buffer and handed on as the text's chunks are
  // (flush): the I/O thread or, when it is behind, this thread compresses
  // them, so both cores compress an appended file (deps.json's tensors and
  // edges, the scope stats: 85 MB of bench_pa_100k's text, compressed at
  // the end of the run, when this thread has nothing else to do).
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) fail_read(path);
  for (;;) {
    const std::size_t room = room_to_chunk();
    const std::size_t n = read_or_fail(in, reserve_tail(room), room, path);
    if (n == 0) break;
    extend(n);
    commit();
  }
  ::close(in);
}

void OutFile::append(OutFile& part) {
  part.close();  // its last chunk held too, or written after the held ones
  if (!part.held_.empty()) append_held(part);
  if (!part.hold_ || part.spilled_ || part.gz_) append_file(part.path());  // its file has bytes (a gzip part holds none)
  part.close_and_remove();
}

void OutFile::append_held(OutFile& part) {
  if (gz_) {
    // The text in chunks exactly as append_compressed reads the file into
    // them (each filled to a full chunk, then handed on), so the .gz bytes
    // are the same.
    for (const Held& h : part.held_)
      for (std::size_t off = 0; off < h.len;) {
        const std::size_t n = std::min(room_to_chunk(), h.len - off);
        std::memcpy(reserve_tail(n), h.block + off, n);
        extend(n);
        off += n;
        commit();
      }
    part.free_held();
    return;
  }
  flush();  // this file's text before the part's
  for (const Held& h : part.held_) {
    g_held_bytes.fetch_sub(h.len, std::memory_order_relaxed);
    if (IoThread::enabled()) {
      IoThread::get().submit_owned(*this, h.block, h.len);  // freed once written
      continue;
    }
    if (!write_errno_)
      if (const int err = emit(h.block, h.len)) note_write_error(err);
    std::free(h.block);
  }
  part.held_.clear();
}

void fail_read(const std::string& path) {
  throw IoError(path, std::string("cannot read: ") + std::strerror(errno));
}

void OutFile::close() {
  if (fd_ < 0) return;
  try {
    sync();
    if (gz_) {
      const int err = emit(nullptr, 0, true);  // the gzip stream's end
      end_gzip();
      if (err) fail("cannot write", err);
    }
  } catch (...) {
    // The I/O thread may still hold this file's chunks (flush() can throw
    // before it waits): it finishes with them before the descriptor goes.
    if (queued_) IoThread::get().wait(*this);
    end_gzip();
    give_back_reserved();
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  give_back_reserved();
  bool bad = ::close(fd_) != 0;
  fd_ = -1;
  if (bad) fail("cannot write");
}

void OutFile::close_as(const std::string& final_path) {
  close();
  if (std::rename(path_.c_str(), final_path.c_str()) != 0) fail("cannot rename");
  path_.clear();  // the file is no longer this object's
}

void OutFile::close_and_remove() {
  if (fd_ >= 0) {
    if (queued_) IoThread::get().wait(*this);
    ::close(fd_);
  }
  free_held();
  end_gzip();
  fd_ = -1;
  clear();
  if (!path_.empty()) std::remove(path_.c_str());
}

ScratchFile::ScratchFile(const std::string& dir, const char* name, int gzip_level)
    : OutFile(dir + "/.npusim_" + name + ".part", gzip_level) {}

}  // namespace npusim::record
