#include "sim/record/json_out.h"

#include <algorithm>
#include <cerrno>
#include <new>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace npusim::record {

void JsonBuf::grow(std::size_t need) {
  std::size_t cap = std::max<std::size_t>(cap_ * 2, 256);
  while (cap - len_ < need) cap *= 2;
  char* b = static_cast<char*>(std::realloc(b_, cap));
  if (!b) throw std::bad_alloc();
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
  // Two digits at a time from a table; the fraction keeps 1 to 6 digits.
  static const char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  u(t / 1000000ull).ch('.');
  std::uint32_t frac = static_cast<std::uint32_t>(t % 1000000ull);
  if (frac == 0) return ch('0');
  char d[6];
  std::memcpy(d, kPairs + 2 * (frac / 10000), 2);
  std::memcpy(d + 2, kPairs + 2 * (frac / 100 % 100), 2);
  std::memcpy(d + 4, kPairs + 2 * (frac % 100), 2);
  std::size_t n = 6;
  while (d[n - 1] == '0') --n;
  return put(d, n);
}

OutFile::~OutFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutFile::open(std::string path) {
  if (fd_ >= 0) close();
  path_ = std::move(path);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("cannot create");
  clear();
}

void OutFile::fail(const char* what) const {
  throw std::runtime_error(std::string(what) + " " + path_ + ": " + std::strerror(errno));
}

void OutFile::write_all(const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("cannot write");
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void OutFile::flush() {
  if (fd_ < 0 || size() == 0) return;
  write_all(text().data(), size());
  clear();
}

void OutFile::append_file(const std::string& path) {
  flush();
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return;  // a scratch stream that never received a record
  // In-kernel copy first; plain reads and writes where the file system
  // cannot (copy_file_range refuses some pairs of files).
  for (;;) {
    ssize_t n = ::copy_file_range(in, nullptr, fd_, nullptr, kChunk * 16, 0);
    if (n > 0) continue;
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
    if (n <= 0) break;
    write_all(chunk.data(), static_cast<std::size_t>(n));
  }
  ::close(in);
}

void OutFile::close() {
  if (fd_ < 0) return;
  flush();
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
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  clear();
  if (!path_.empty()) std::remove(path_.c_str());
}

ScratchFile::ScratchFile(const std::string& dir, const char* name)
    : OutFile(dir + "/.npusim_" + name + ".part") {}

}  // namespace npusim::record
