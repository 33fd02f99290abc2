#include "sim/record/json_out.h"

#include "models/common/errors.h"

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
#include <unistd.h>
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

JsonBuf& JsonBuf::us(Time t) {
  // Formatted in place (one capacity check for the whole number): the whole
  // microseconds with to_chars, then the fraction's six digits two at a time
  // from a table, trailing zeros dropped ("0" if all six are).
  static const char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  if (cap_ - len_ < 32) grow(32);  // 20 digits, '.', 6 digits
  char* p = std::to_chars(b_ + len_, b_ + len_ + 20, t / 1000000ull).ptr;
  *p++ = '.';
  const auto frac = static_cast<std::uint32_t>(t % 1000000ull);
  if (frac == 0) {
    *p++ = '0';
  } else {
    std::memcpy(p, kPairs + 2 * (frac / 10000), 2);
    std::memcpy(p + 2, kPairs + 2 * (frac / 100 % 100), 2);
    std::memcpy(p + 4, kPairs + 2 * (frac % 100), 2);
    std::size_t n = 6;
    while (p[n - 1] == '0') --n;
    p += n;
  }
  len_ = static_cast<std::size_t>(p - b_);
  return *this;
}

namespace {
std::atomic<std::uint64_t> g_bytes_written{0};
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
    const Job j{&f, block, len, cap};
    while (!jobs_.push(j)) {  // full: sleep until the writer takes one
      std::unique_lock<std::mutex> lk(m_);
      room_.wait(lk, [&] { return jobs_.write_available() > 0; });
    }
    ++f.queued_;  // after the push: a failed push leaves nothing to wait for
    wake(work_);
    Spare s{nullptr, 0};
    spares_.pop(s);
    return {s.block, s.cap};
  }

  void wait(OutFile& f) {
    std::unique_lock<std::mutex> lk(m_);
    done_.wait(lk, [&] { return f.written_.load(std::memory_order_acquire) == f.queued_; });
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
  };
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

  // Notifies after taking the lock once: a thread between its predicate
  // check and its wait holds the lock, so the notification cannot fall
  // between the two (the lost wake-up).
  void wake(std::condition_variable& cv) {
    { std::lock_guard<std::mutex> lk(m_); }
    cv.notify_all();
  }

  void loop() {
    for (;;) {
      Job j;
      if (!jobs_.pop(j)) {
        std::unique_lock<std::mutex> lk(m_);
        work_.wait(lk, [&] { return stop_ || jobs_.read_available() > 0; });
        if (jobs_.read_available() == 0) return;  // stopped, every chunk written
        continue;
      }
      wake(room_);
      // write_errno_ is this thread's while the file has chunks queued.
      const int err = j.file->write_errno_ ? 0 : j.file->emit(j.block, j.len);
      if (err) j.file->note_write_error(err);
      if (!spares_.push(Spare{j.block, j.cap})) std::free(j.block);
      j.file->written_.fetch_add(1, std::memory_order_release);  // publishes write_errno_ too
      wake(done_);
    }
  }

  boost::lockfree::spsc_queue<Job, boost::lockfree::capacity<kMaxJobs>> jobs_;          // simulation -> writer
  boost::lockfree::spsc_queue<Spare, boost::lockfree::capacity<kMaxJobs + 1>> spares_;  // writer -> simulation
  std::mutex m_;
  std::condition_variable work_, room_, done_;
  bool stop_ = false;
  std::thread t_;  // last: started after the members it uses
};

// A gzip file's compressor and its output buffer.
struct OutFile::Gzip {
  z_stream z{};
  std::vector<unsigned char> out = std::vector<unsigned char>(1u << 16);
  ~Gzip() { deflateEnd(&z); }
};

void OutFile::GzipDelete::operator()(Gzip* g) const { delete g; }

OutFile::~OutFile() {
  if (fd_ >= 0) {
    if (queued_) IoThread::get().wait(*this);
    ::close(fd_);
  }
}

void OutFile::open(std::string path, int gzip_level) {
  open_flags(std::move(path), gzip_level, O_CREAT | O_TRUNC);
}

void OutFile::open_flags(std::string path, int gzip_level, int flags, int fd) {
  if (fd_ >= 0) close();
  path_ = std::move(path);
  fd_ = fd >= 0 ? ::fcntl(fd, F_DUPFD_CLOEXEC, 3) : ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | flags, 0644);
  if (fd_ < 0) fail("cannot create");
  clear();
  queued_ = 0;
  written_.store(0, std::memory_order_relaxed);
  write_errno_ = 0;
  gz_.reset();
  if (gzip_level > 0) {
    // windowBits 15 + 16: a gzip wrapper. With no deflateSetHeader, zlib
    // writes the minimal header: no file name, modification time 0.
    std::unique_ptr<Gzip, GzipDelete> gz(new Gzip);
    if (deflateInit2(&gz->z, std::min(gzip_level, 9), Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      out_of_memory() = true;
      throw std::bad_alloc();
    }
    gz_ = std::move(gz);
  }
}

int OutFile::emit(const char* p, std::size_t n, bool finish) {
  int err = 0;
  if (!gz_) {
    if (write_some(fd_, p, n, err) == 0) g_bytes_written += n;
    return err;
  }
  if (n == 0 && !finish) return 0;
  z_stream& z = gz_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
  z.avail_in = static_cast<uInt>(n);  // a chunk, far below 4 GB
  for (;;) {
    z.next_out = gz_->out.data();
    z.avail_out = static_cast<uInt>(gz_->out.size());
    const int rc = deflate(&z, finish ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) return EIO;
    const std::size_t have = gz_->out.size() - z.avail_out;
    if (have && write_some(fd_, reinterpret_cast<const char*>(gz_->out.data()), have, err) != 0) return err;
    g_bytes_written += have;
    if (finish ? rc == Z_STREAM_END : z.avail_in == 0 && z.avail_out != 0) return 0;
  }
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

void stop_run(const std::string& why) {
  if (g_stop_reason.empty()) g_stop_reason = why;
}

const std::string& stop_reason() { return g_stop_reason; }

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
  if (!IoThread::enabled()) {
    // As on the I/O thread: a write error is reported by sync() or close(),
    // never in the middle of a simulation.
    if (!write_errno_)
      if (const int err = emit(text().data(), size())) note_write_error(err);
    clear();
    return;
  }
  std::size_t len = size(), cap = capacity();
  char* full = swap_block(nullptr, 0);
  auto spare = IoThread::get().submit(*this, full, len, cap);
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

void OutFile::append_file(const std::string& path) {
  sync();
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) fail_read(path);
  // In-kernel copy first; plain reads and writes where the file system
  // cannot (copy_file_range refuses some pairs of files) or the bytes must
  // be compressed.
  while (!gz_) {
    int fault = 0;
    if (write_fault().hit(fault)) {
      ::close(in);
      fail("cannot write", fault);
    }
    ssize_t n = ::copy_file_range(in, nullptr, fd_, nullptr, kChunk * 16, 0);
    if (n > 0) {
      g_bytes_written += static_cast<std::uint64_t>(n);
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
  for (;;) {
    ssize_t n = ::read(in, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(in);
      errno = err;
      fail_read(path);
    }
    if (n == 0) break;
    write_all(chunk.data(), static_cast<std::size_t>(n));
  }
  ::close(in);
}

void OutFile::append(OutFile& part) {
  part.close();
  append_file(part.path());
  part.close_and_remove();
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
    end_gzip();
    ::close(fd_);
    fd_ = -1;
    throw;
  }
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
  end_gzip();
  fd_ = -1;
  clear();
  if (!path_.empty()) std::remove(path_.c_str());
}

ScratchFile::ScratchFile(const std::string& dir, const char* name, int gzip_level)
    : OutFile(dir + "/.npusim_" + name + ".part", gzip_level) {}

}  // namespace npusim::record
