// Private helpers of the output writers: a small, fast JSON text formatter and
// append-only files with their own buffer (scratch files and final files).
//
// The writers are on by default and sit on the simulator's hot path, so text
// is built by hand: integers by decimal::write_u (eight digits a word),
// times as exact decimals of the integer picosecond clock (no floating
// point, so output is identical on every run and machine).
#pragma once

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "models/common/time.h"
#include "models/runtime/tensor.h"
#include "sim/record/big_array.h"

namespace npusim::record {

// Decimal digits written straight into a buffer the caller has sized (the
// formatters of JsonBuf; exact texts in tests/test_writers.cpp).
namespace decimal {
// "00" "01" ... "99": two digits per lookup.
inline constexpr char kPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// The number of decimal digits of v (1 for 0, 20 at most): log10 from the
// bit width, corrected by one comparison (no loop).
inline int digits(std::uint64_t v) {
  static constexpr std::uint64_t kPow10[20] = {1ull,
                                               10ull,
                                               100ull,
                                               1000ull,
                                               10000ull,
                                               100000ull,
                                               1000000ull,
                                               10000000ull,
                                               100000000ull,
                                               1000000000ull,
                                               10000000000ull,
                                               100000000000ull,
                                               1000000000000ull,
                                               10000000000000ull,
                                               100000000000000ull,
                                               1000000000000000ull,
                                               10000000000000000ull,
                                               100000000000000000ull,
                                               1000000000000000000ull,
                                               10000000000000000000ull};
  v |= 1;  // same count (no power of ten >= 10 is odd), and clz is defined
  const int t = ((64 - __builtin_clzll(v)) * 1233) >> 12;  // floor(log10(2^bit_width)), 0..19
  return t + (v >= kPow10[t]);
}

// The eight decimal digits of v < 10^8 (leading zeros kept) as ASCII in one
// word, the first digit in the lowest byte (stored little-endian, the text in
// order): v split into two halves of four digits, each into two of two, each
// into two digits, every split a multiply and shift on all lanes at once
// (exact below 10^4, 100 and 10 respectively). A dozen instructions for
// eight digits where a loop of pairs took four table look-ups with a
// division chain between them.
[[gnu::always_inline]] inline std::uint64_t eight_digits(std::uint32_t v) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the word is stored as the text's bytes");
  const std::uint64_t halves = v / 10000 | static_cast<std::uint64_t>(v % 10000) << 32;  // 2 lanes of 32 bits
  const std::uint64_t hundreds = (halves * 10486) >> 20 & 0x0000007f0000007full;       // x / 100, x < 10^4
  const std::uint64_t pairs = hundreds | (halves - 100 * hundreds) << 16;              // 4 lanes of 16 bits
  const std::uint64_t tens = (pairs * 103) >> 10 & 0x000f000f000f000full;               // x / 10, x < 100
  return (tens | (pairs - 10 * tens) << 8) | 0x3030303030303030ull;                     // 8 lanes of 8 bits
}

// Writes v < 10^8 at p: digits(v) bytes, returns their end; stores up to 8
// bytes from p (the bytes after the digits are scratch, for the caller's
// next write to cover).
[[gnu::always_inline]] inline char* write_small(char* p, std::uint32_t v) {
  if (v < 100) {
    if (v < 10) {
      *p = static_cast<char>('0' + v);
      return p + 1;
    }
    std::memcpy(p, kPairs + 2 * v, 2);
    return p + 2;
  }
  const int n = digits(v);  // 3..8
  const std::uint64_t text = eight_digits(v) >> (8 * (8 - n));  // the leading zeros dropped
  std::memcpy(p, &text, 8);
  return p + n;
}

// write_u of v >= 10^8 (9 to 20 digits: cycle counts, hashed ids, addresses),
// in a call: the inline part stays small where most integers are below 10^8.
[[gnu::noinline]] inline char* write_wide(char* p, std::uint64_t v) {
  const std::uint64_t high = v / 100000000u;  // 1 .. 1.8 * 10^11
  if (high < 100000000u) {
    p = write_small(p, static_cast<std::uint32_t>(high));
  } else {
    p = write_small(p, static_cast<std::uint32_t>(high / 100000000u));  // 4 digits at most
    const std::uint64_t mid = eight_digits(static_cast<std::uint32_t>(high % 100000000u));
    std::memcpy(p, &mid, 8);
    p += 8;
  }
  const std::uint64_t low = eight_digits(static_cast<std::uint32_t>(v % 100000000u));
  std::memcpy(p, &low, 8);
  return p + 8;
}

// Writes v at p (digits(v) bytes, no sign, no leading zeros); returns the
// end. Stores up to max(8, digits(v)) bytes from p (at most 20): the bytes
// after the digits are scratch, so a caller leaves 20 bytes of room for any
// integer, as the formatters' bounds do.
inline char* write_u(char* p, std::uint64_t v) {
  if (v < 100000000u) return write_small(p, static_cast<std::uint32_t>(v));
  return write_wide(p, v);
}

// Writes v with a '-' if negative (21 bytes at most); returns the end.
inline char* write_i(char* p, std::int64_t v) {
  if (v >= 0) return write_u(p, static_cast<std::uint64_t>(v));
  *p = '-';
  return write_u(p + 1, 0 - static_cast<std::uint64_t>(v));  // INT64_MIN too
}

// Picoseconds as microseconds, exactly (27 bytes at most): the whole
// microseconds, '.', the six fraction digits with trailing zeros dropped
// ("0" if all six are): "1.234567", "80.24", "0.0".
inline char* write_us(char* p, std::uint64_t ps) {
  // Trailing zeros of a two-digit pair 00..99 (2 for 00).
  static constexpr unsigned char kPairZeros[100] = {2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  p = write_u(p, ps / 1000000u);
  *p++ = '.';
  const auto frac = static_cast<std::uint32_t>(ps % 1000000u);
  if (frac == 0) {
    *p = '0';
    return p + 1;
  }
  // Six digits as three pairs; the trailing zeros counted from the pairs (a
  // table, no loop over the digits: its exit mispredicted on most times).
  // (eight_digits here measured slower: the end of the text, which the next
  // write's position waits for, came after its chain of multiplies.)
  const std::uint32_t hi = frac / 10000, mid = frac / 100 % 100, lo = frac % 100;
  std::memcpy(p, kPairs + 2 * hi, 2);
  std::memcpy(p + 2, kPairs + 2 * mid, 2);
  std::memcpy(p + 4, kPairs + 2 * lo, 2);
  const unsigned zeros = lo ? kPairZeros[lo] : mid ? 2 + kPairZeros[mid] : 4 + kPairZeros[hi];
  return p + 6 - zeros;
}
}  // namespace decimal

struct Text32;  // below

// A text buffer with chainable JSON formatters. Appends are inline copies
// into a growable block (string literals copy with a compile-time length).
class JsonBuf {
 public:
  JsonBuf() = default;
  ~JsonBuf() { std::free(b_); }
  JsonBuf(const JsonBuf&) = delete;
  JsonBuf& operator=(const JsonBuf&) = delete;

  template <std::size_t N>
  JsonBuf& raw(const char (&s)[N]) {
    return put(s, N - 1);
  }
  JsonBuf& raw(std::string_view v) { return put(v.data(), v.size()); }
  JsonBuf& ch(char c) {
    if (len_ == cap_) grow(1);
    b_[len_++] = c;
    return *this;
  }
  JsonBuf& u(std::uint64_t v) { return num(v); }
  JsonBuf& i(std::int64_t v) { return num(v); }
  // A decimal number as a JSON string ("123"), as the runtime prints u64 ids.
  JsonBuf& qu(std::uint64_t v) { return ch('"').u(v).ch('"'); }
  JsonBuf& qi(std::int64_t v) { return ch('"').i(v).ch('"'); }
  JsonBuf& boolean(bool b) { return b ? raw("true") : raw("false"); }
  // A quoted, escaped JSON string.
  JsonBuf& str(std::string_view v);
  // Picoseconds as microseconds, exactly: "1.234567", "80.0", "0.0".
  JsonBuf& us(Time t) {
    if (cap_ - len_ < 32) grow(32);
    char* const p = b_ + len_;
    len_ += static_cast<std::size_t>(decimal::write_us(p, t) - p);
    return *this;
  }
  // A task id in the runtime's display form (task_display): "t5", "r2t5".
  JsonBuf& task(TaskId id) {
    if (int r = task_ring(id)) ch('r').i(r);
    return ch('t').u(task_local(id));
  }

  // Direct formatting of a record's bounded part: the room is checked once
  // (`room` bytes, at least what the writes take), then each append is a
  // plain store through a pointer the compiler keeps in a register (JsonBuf's
  // own appends store through char*, which may alias the buffer's fields, so
  // each one reloads them and checks the room again). The length is set when
  // the Direct goes out of scope; writing past `room` aborts there.
  class Direct {
   public:
    Direct(JsonBuf& b, std::size_t room) : b_(b) {
      if (b.cap_ - b.len_ < room) b.grow(room);
      p_ = b.b_ + b.len_;
    }
    ~Direct() {
      const auto len = static_cast<std::size_t>(p_ - b_.b_);
      if (len > b_.cap_) std::abort();  // a room too small for its writes: a bug, never output
      b_.len_ = len;
    }
    Direct(const Direct&) = delete;
    Direct& operator=(const Direct&) = delete;
    template <std::size_t N>
    Direct& raw(const char (&s)[N]) {
      std::memcpy(p_, s, N - 1);
      p_ += N - 1;
      return *this;
    }
    Direct& raw(std::string_view v) {  // v.size() bytes
      if (!v.empty()) std::memcpy(p_, v.data(), v.size());
      p_ += v.size();
      return *this;
    }
    Direct& ch(char c) {
      *p_++ = c;
      return *this;
    }
    Direct& u(std::uint64_t v) {  // 20 bytes at most
      p_ = decimal::write_u(p_, v);
      return *this;
    }
    Direct& i(std::int64_t v) {  // 20 bytes at most
      p_ = decimal::write_i(p_, v);
      return *this;
    }
    // i(v) for an integer that is nearly always 0..99 (a queue's depth, a
    // count of tasks): those written here, two stores at most, where i()
    // is a call (write_u's body does not fit the callers' inlining).
    Direct& small_i(std::int64_t v) {  // 20 bytes at most
      if (static_cast<std::uint64_t>(v) >= 100) return i(v);
      if (v < 10) return ch(static_cast<char>('0' + v));
      std::memcpy(p_, decimal::kPairs + 2 * v, 2);
      p_ += 2;
      return *this;
    }
    Direct& qu(std::uint64_t v) { return ch('"').u(v).ch('"'); }  // 22 bytes at most
    Direct& qi(std::int64_t v) { return ch('"').i(v).ch('"'); }
    Direct& task(TaskId id) {  // JsonBuf::task's text, 43 bytes at most
      if (int r = task_ring(id)) ch('r').i(r);
      return ch('t').u(task_local(id));
    }
    Direct& us(Time t) {  // 27 bytes at most
      p_ = decimal::write_us(p_, t);
      return *this;
    }
    // The first n bytes of a block of N readable bytes, as one fixed-size
    // copy of all N (no call; the bytes after the n are scratch for the
    // next write to cover): counts N against the record's room.
    template <std::size_t N>
    Direct& raw_block(const char (&block)[N], std::size_t n) {
      std::memcpy(p_, block, N);
      p_ += n;
      return *this;
    }
    // Text formatted beforehand (a Text32): its bytes, stored as one
    // fixed-size copy of 32 bytes (no call, no branch on the length; the
    // bytes after the text are scratch for the next write to cover).
    Direct& raw(const Text32& t);

   private:
    JsonBuf& b_;
    char* p_;
  };

  std::string_view text() const { return {b_, len_}; }
  std::size_t size() const { return len_; }
  void clear() { len_ = 0; }
  // Takes back the last n characters still in the buffer (a trailing separator).
  void unput(std::size_t n) { len_ -= std::min(n, len_); }

 protected:
  // Hands the filled block to the caller (who must free() it) and continues
  // in `spare` (malloc'd, `spare_cap` bytes; may be null with 0).
  char* swap_block(char* spare, std::size_t spare_cap) {
    char* full = b_;
    b_ = spare;
    cap_ = spare_cap;
    len_ = 0;
    return full;
  }
  std::size_t capacity() const { return cap_; }
  // Room for n more bytes at the end of the text (written there, then
  // counted by extend(n)).
  char* reserve_tail(std::size_t n) {
    if (cap_ - len_ < n) grow(n);
    return b_ + len_;
  }
  void extend(std::size_t n) { len_ += n; }

 private:
  JsonBuf& put(const char* p, std::size_t n) {
    if (n == 0) return *this;  // p may be null (an empty string_view); memcpy must not see it
    if (n > cap_ - len_) grow(n);
    std::memcpy(b_ + len_, p, n);
    len_ += n;
    return *this;
  }
  template <class T>
  JsonBuf& num(T v) {
    if (cap_ - len_ < 24) grow(24);
    char* const p = b_ + len_;
    if constexpr (std::is_signed_v<T>) len_ += static_cast<std::size_t>(decimal::write_i(p, v) - p);
    else len_ += static_cast<std::size_t>(decimal::write_u(p, v) - p);
    return *this;
  }
  void grow(std::size_t need);
  char* b_ = nullptr;
  std::size_t len_ = 0, cap_ = 0;
};

// At most 32 bytes of text formatted once and written many times (a
// deps.json task id that every edge of the task repeats, a tensor id the
// task's argument, its tensor entry and its creator edge repeat): written
// through a Direct as one fixed-size copy (Direct::raw), which counts 32
// bytes against the record's room.
struct Text32 {
  char text[32];
  std::uint8_t size = 0;
  // `"<v>"` (22 bytes at most), as JsonBuf::qu writes it.
  void set_quoted(std::uint64_t v) {
    text[0] = '"';
    char* e = decimal::write_u(text + 1, v);  // stores up to 20 bytes from text + 1
    *e = '"';
    size = static_cast<std::uint8_t>(e + 1 - text);
  }
  // Picoseconds as microseconds (27 bytes at most), as JsonBuf::us writes them.
  void set_us(std::uint64_t ps) { size = static_cast<std::uint8_t>(decimal::write_us(text, ps) - text); }
};

inline JsonBuf::Direct& JsonBuf::Direct::raw(const Text32& t) { return raw_block(t.text, t.size); }

// An append-only file written through a JsonBuf: format into it, then call
// `commit()` after each record; the buffer goes to disk in large chunks.
// A full chunk is handed, without a copy, to one background I/O thread that
// does the write(2) (the kernel's copy into the page cache is a quarter of a
// run's host time with every output on, and the simulation is single-threaded,
// so it runs on the otherwise idle core). Chunks of one file are written in
// order; at most a few megabytes are in flight; `close()`, `append_file()` and
// `sync()` wait for this file's chunks, and a write error is reported there.
// The destructor waits too, but drops unflushed bytes and any error: it is
// the path of a run abandoned by an exception, whose files are discarded.
//
// Opened with a gzip level (1..9), the file is a gzip stream (RFC 1952, one
// member, no file name and modification time 0, so the same text gives the
// same bytes): the I/O thread compresses each chunk (level 1 with
// deflate_fast.h's encoder, 2 to 9 with libdeflate at that level), joins it
// to the stream (deflate_join.h) and writes it, and close() writes the
// stream's end. Bytes written count the compressed bytes.
class OutFile : public JsonBuf {
 public:
  OutFile() = default;
  explicit OutFile(std::string path, int gzip_level = 0) { open(std::move(path), gzip_level); }
  ~OutFile();
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;

  // Truncates; throws IoError on failure. `gzip_level` 0: plain text.
  void open(std::string path, int gzip_level = 0);
  const std::string& path() const { return path_; }
  // The name errors give the file instead of path() (a temporary file's
  // errors name the file it becomes); empty: path().
  void show_as(std::string name) { shown_ = std::move(name); }

  void commit() {
    if (size() >= kChunk) flush();
  }
  // A fixed-size record, for binary scratch files.
  template <class T>
  void record(const T& rec) {
    static_assert(std::is_trivially_copyable_v<T>);
    raw(std::string_view(reinterpret_cast<const char*>(&rec), sizeof rec));
    commit();
  }
  // Copies another file's bytes (a closed scratch file) to the end of this
  // one, in the kernel where it can; throws if it cannot be read.
  void append_file(const std::string& path);
  // Closes `part` (a scratch stream), appends its bytes and deletes it.
  // The chunks `part` held in memory (hold_in_memory) go to this file as
  // they are (no copy: queued as this file's chunks), then the rest from its
  // file.
  void append(OutFile& part);
  // For a plain scratch stream that is only ever appended to another file
  // (append): its full chunks are kept in memory instead of being written,
  // up to a budget of all such files together (kHoldBudget); once it is
  // spent, this file's later chunks are written as usual, after the held
  // ones in the text. append() then hands the held chunks to the I/O thread
  // as the destination's own, where the file's bytes were written, read
  // back and copied in the kernel (deps.json's tensors and edges, the scope
  // stats: 85 MB of bench_pa_100k's scratch text). Held bytes count as
  // written (bytes_written) when held, as the scratch file's write counted
  // them, so --max-output sees the same totals.
  void hold_in_memory() { hold_ = true; }
  static constexpr std::size_t kHoldBudget = std::size_t(64) << 20;
  void flush();  // hands the buffer to the I/O thread
  void sync();   // flush and wait until every byte is written; throws on a write error
  void close();  // sync and close; throws on a write error
  // Closes the file and gives it its final name (no copy); the object then
  // refers to no file.
  void close_as(const std::string& final_path);
  void close_and_remove();  // for scratch files: close quietly and delete

 protected:
  // open() with other open(2) flags than O_CREAT | O_TRUNC (O_WRONLY and
  // O_CLOEXEC always); or, with `fd` >= 0, a duplicate of that descriptor
  // (sharing its offset), `path` naming it.
  void open_flags(std::string path, int gzip_level, int flags, int fd = -1);

 private:
  static constexpr std::size_t kChunk = 1u << 18;
  [[noreturn]] void fail(const char* what) const;
  [[noreturn]] void fail(const char* what, int err) const;
  void write_all(const char* p, std::size_t n);
  void append_compressed(const std::string& path);  // append_file of a gzip file
  // Writes n bytes (compressed if the file is gzip; `finish` ends the gzip
  // stream); returns 0 or an errno. Counts the bytes written.
  int emit(const char* p, std::size_t n, bool finish = false);
  // Writes a gzip chunk compressed beforehand: `len` bytes of deflate blocks
  // at block + 10 (the header goes before them if it is not written yet),
  // for `text_size` bytes of text with CRC-32 `text_crc`.
  int emit_packed(unsigned char* block, std::size_t len, std::size_t text_size, std::uint32_t text_crc);
  void end_gzip();  // releases the compressor, if any
  // The text an appended part adds before commit() hands the buffer on: up
  // to a full chunk (at least a byte). append_compressed and append_held
  // both fill by it, so a part's .gz bytes do not depend on whether it was
  // held in memory.
  std::size_t room_to_chunk() const { return std::max<std::size_t>(kChunk - std::min(size(), kChunk), 1); }
  bool hold_chunk();     // flush() of a holding file: keeps the buffer as a held chunk if the budget allows
  void append_held(OutFile& part);  // append's part for part's held chunks
  void free_held();      // drops the held chunks (a file discarded)
  struct Held {
    char* block;
    std::size_t len;
  };
  std::vector<Held> held_;  // hold_in_memory: the chunks kept, in order, before the file's bytes
  bool hold_ = false, spilled_ = false;  // spilled_: a chunk was written to the file (later ones follow it)
  void note_write_error(int err);  // the first one is kept and reported at sync()/close()
  void wait_written();  // waits for this file's chunks; throws on a write error
  int fd_ = -1;
  // A large output file's blocks are reserved ahead of its writes, in steps
  // (fallocate, FALLOC_FL_KEEP_SIZE: the file's size moves only with the
  // writes), and what is left past its end is given back when it is closed
  // (docs/architecture.md, "Outputs": the file system's cost per written
  // page). Only for a fresh regular file this object created on ext4 (where
  // it was measured); where the file system refuses, the writes go on as
  // before.
  static constexpr std::uint64_t kPreallocFrom = std::uint64_t{1} << 20;  // smaller files reserve nothing
  static constexpr std::uint64_t kPreallocStep = std::uint64_t{8} << 20;
  static constexpr long kExt4Magic = 0xEF53;  // statfs f_type of ext2/3/4
  std::uint64_t pos_ = 0;       // bytes written: the file's size
  std::uint64_t reserved_ = 0;  // the end of the blocks reserved, or asked for (0: none)
  bool may_reserve_ = false;
  void reserve_ahead(std::size_t n);  // before n more bytes are written at the end
  int write_out(const char* p, std::size_t n);  // write_some of n bytes at the end; 0 or an errno
  void give_back_reserved();          // before the descriptor is closed
  std::string path_, shown_;
  struct Gzip;
  struct GzipDelete {
    void operator()(Gzip* g) const;
  };
  std::unique_ptr<Gzip, GzipDelete> gz_;  // the compressor of a gzip file (used by one thread at a time)
  std::uint64_t queued_ = 0;  // chunks handed to the I/O thread
  friend class IoThread;
  // Chunks the I/O thread has finished (its release publishes write_errno_).
  std::atomic<std::uint64_t> written_{0};
  int write_errno_ = 0;  // first write error, 0 if none; the I/O thread's while chunks are queued
};

// A writer's scratch stream: deleted when the writer is done with it (or is
// destroyed without finishing, e.g. on an input error).
class ScratchFile : public OutFile {
 public:
  // `gzip_level` > 0: a stream that becomes a final .gz file (close_as).
  ScratchFile(const std::string& dir, const char* name, int gzip_level = 0);
  ~ScratchFile() { close_and_remove(); }
};

// Task ids numbered in the order they were first inserted (0, 1, 2, ...),
// without hashing: the runtime numbers each ring's tasks
// 0, 1, 2, ... (TaskRing::submit, make_task_id), so a ring's ids index a flat
// array directly and ids met in submit order touch neighbouring slots (a
// hashed table of every task id of a run misses the cache on nearly every
// probe). Sized by the highest local id seen per ring.
class TaskIndex {
 public:
  static constexpr std::uint32_t npos = ~0u;
  std::pair<std::uint32_t, bool> insert(TaskId id) {
    std::uint32_t& n = slot(id);
    if (n != npos) return {n, false};
    n = size_;
    return {size_++, true};
  }
  // The id's number, or npos.
  std::uint32_t find(TaskId id) const {
    const auto ring = static_cast<std::size_t>(task_ring(id));
    const std::size_t local = task_local(id);
    return ring < by_ring_.size() && local < by_ring_[ring].size() ? by_ring_[ring][local] : npos;
  }
  std::uint32_t size() const { return size_; }

 private:
  std::uint32_t& slot(TaskId id) {
    const auto ring = static_cast<std::size_t>(task_ring(id));
    const std::size_t local = task_local(id);
    if (ring >= by_ring_.size()) by_ring_.resize(ring + 1);
    std::vector<std::uint32_t>& v = by_ring_[ring];
    if (local >= v.size()) v.resize(std::max(local + 1, 2 * v.size()), npos);
    return v[local];
  }
  std::vector<std::vector<std::uint32_t>> by_ring_;
  std::uint32_t size_ = 0;
};

// A set of 64-bit keys (hashed ids: tensor ids), with open addressing: one
// probe into a flat array of the keys themselves in the common case
// (std::unordered_map chases a pointer per lookup); key 0 marks an empty slot
// and is kept aside.
class FlatSet64 {
 public:
  // True if `key` was not in the set (and is now).
  bool insert(std::uint64_t key) {
    if (key == 0) return !std::exchange(has_zero_, true);
    if (2 * (size_ + 1) > slots_.size()) rehash(slots_.empty() ? 1024 : 2 * slots_.size());
    std::uint64_t& s = slots_[slot(key)];
    if (s == key) return false;
    s = key;
    ++size_;
    return true;
  }
  // Starts loading the cache line of `key`'s first slot (a hint, no effect on the contents).
  void prefetch(std::uint64_t key) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[home(key)]);
  }

 private:
  std::size_t home(std::uint64_t key) const { return (key * 0x9e3779b97f4a7c15ull) >> 20 & (slots_.size() - 1); }
  // The position of the key's slot, or of the empty slot where it would go.
  std::size_t slot(std::uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = home(key);; i = (i + 1) & mask)
      if (slots_[i] == 0 || slots_[i] == key) return i;
  }
  void rehash(std::size_t n) {
    BigVector<std::uint64_t> old(n, 0);
    old.swap(slots_);
    for (std::uint64_t k : old)
      if (k != 0) slots_[slot(k)] = k;
  }
  // 0: empty. On huge pages from 1 MB (big_array.h): fewer page faults and
  // TLB misses for probes that land anywhere in the table.
  BigVector<std::uint64_t> slots_;
  std::size_t size_ = 0;              // keys in slots_
  bool has_zero_ = false;
};

// gzip chunks the simulation thread compressed itself so far, because the
// I/O thread was behind (OutFile::flush; for tests).
std::uint64_t gzip_chunks_compressed_here();
// For tests: who compresses gzip chunks when two cores are there. By load
// (the default: the simulation thread when the I/O thread is behind), always
// the simulation thread, or always the I/O thread. A chunk's bytes are the
// same either way.
enum class GzipChunkPolicy { ByLoad, SimulationThread, IoThread };
void set_gzip_chunk_policy(GzipChunkPolicy p);

// Bytes the output files have written to disk so far, all files together
// (for progress and --max-output), and whether any write has failed (a run
// can stop early: the error is reported when the file is closed).
std::uint64_t bytes_written();
bool write_failed();

// A writer that cannot go on without exceeding a limit asks for the run to be
// stopped (it cannot throw through the simulation); the engine stops it and
// reports `why` (exit 2, nothing written). The first reason is kept.
void stop_run(const std::string& why);
const std::string& stop_reason();  // "" if none
// Whether stop_run was called: a load, for a test per simulated event
// (engine::RunWatch).
namespace detail { extern bool g_stop_requested; }
inline bool stop_requested() { return detail::g_stop_requested; }

// The test seam of docs/testing.md, "Write errors": the nth write(2) from
// now on (1: the next one), over every output file of the process, fails with
// `err` (0 disarms). NPUSIM_TEST_WRITE_FAULT=N[:ERRNO] sets it at start-up.
void set_write_fault(std::uint64_t nth, int err);

// Throws IoError "PATH: cannot read: <errno text>".
[[noreturn]] void fail_read(const std::string& path);

// Reads a binary scratch file of fixed-size records (closed), in chunks;
// throws if it cannot be read.
template <class T, class F>
void for_each_record(const std::string& path, F&& f) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (!in) fail_read(path);
  constexpr std::size_t kN = 4096;
  std::vector<T> chunk(kN);
  std::size_t n;
  while ((n = std::fread(chunk.data(), sizeof(T), kN, in)) > 0)
    for (std::size_t k = 0; k < n; ++k) f(chunk[k]);
  const bool bad = std::ferror(in);
  std::fclose(in);
  if (bad) fail_read(path);
}

}  // namespace npusim::record
