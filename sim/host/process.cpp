#include "sim/host/process.h"

#include <cstdint>
#include <iostream>
#include <new>
#include <streambuf>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <systemc>

#include "models/common/errors.h"

namespace npusim::host {

namespace process_detail {

// What npusim prints goes through this filter: names from a trace (kernels,
// scope sites, the trace's name) may hold control characters, and an escape
// sequence must not reach the terminal (or a CI log shown in one). Control
// characters other than newline and tab are printed as \xHH.
class PrintableBuf : public std::streambuf {
 public:
  explicit PrintableBuf(std::streambuf* to) : to_(to) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const unsigned char b = static_cast<unsigned char>(traits_type::to_char_type(c));
    if ((b >= 0x20 && b != 0x7f) || b == '\n' || b == '\t') return to_->sputc(static_cast<char>(b));
    static const char kHex[] = "0123456789abcdef";
    const char esc[4] = {'\\', 'x', kHex[b >> 4], kHex[b & 15]};
    return to_->sputn(esc, 4) == 4 ? c : traits_type::eof();
  }
  int sync() override { return to_->pubsync(); }

 private:
  std::streambuf* to_;
};

// Address space kept for the way out when an allocation fails (messages,
// cleanup): 16 MB mapped and never touched, so it costs no memory. Mapped
// directly, not malloc'd: LeakSanitizer reads every heap block a pointer
// reaches at exit, and reading 16 MB of untouched pages cost each npusim run
// under ASan 4,096 page faults, about a third of its start-up and exit.
constexpr std::size_t kReserveBytes = 16u << 20;
void* g_reserve = nullptr;

void keep_reserve() {
  void* p = ::mmap(nullptr, kReserveBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_reserve = p == MAP_FAILED ? nullptr : p;
}

// The first failed allocation gives the reserve back and fails: the reserve
// is for the way out (unwinding, the message), not for going on.
void on_out_of_memory() {
  npusim::out_of_memory() = true;
  if (g_reserve) {
    ::munmap(g_reserve, kReserveBytes);
    g_reserve = nullptr;
  }
  throw std::bad_alloc();
}

// SystemC 2.3.4 allocates and zero-fills a 3 MB scratch heap when it is
// loaded (sc_core::sc_temp_heap, sc_byte_heap::initialize(0x300000), for the
// temporaries of sc_dt concatenations, which npusim never forms): 3 MB of
// every run's peak memory for nothing. MADV_DONTNEED gives its whole pages
// back; private anonymous pages read as zero when next touched, so the heap
// stays exactly as SystemC left it (zero-filled) should anything use it.
void release_systemc_scratch_heap() {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto* heap = &sc_core::sc_temp_heap;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(heap->m_bgn_p) + page - 1) & ~(page - 1);
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(heap->m_end_p) & ~(page - 1);
  if (heap->m_bgn_p && end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace process_detail

void prepare_process() {
  process_detail::release_systemc_scratch_heap();
  process_detail::keep_reserve();
  std::set_new_handler(process_detail::on_out_of_memory);
}

// The filters are never destroyed: the standard streams are flushed after
// every static destructor has run (ios_base::Init), and must not reach a
// destroyed buffer.
void filter_standard_streams() {
  static process_detail::PrintableBuf* out_filter = new process_detail::PrintableBuf(std::cout.rdbuf());
  static process_detail::PrintableBuf* err_filter = new process_detail::PrintableBuf(std::cerr.rdbuf());
  std::cout.rdbuf(out_filter);
  std::cerr.rdbuf(err_filter);
}

void report_out_of_memory(std::ostream& err) {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  err << "npusim: error: out of host memory (peak " << ru.ru_maxrss / 1024
      << " MB): the run needs more memory than this process may use; nothing written "
         "(docs/outputs.md, \"Limits\", says what grows with a trace)\n";
}

}  // namespace npusim::host
