// sim/startup_arrays.cpp in a program of its own, as in npusim: the
// array SystemC's initialiser allocates while the library loads (its 3 MB
// scratch heap) is placed 2 MiB aligned (on huge pages where the kernel
// gives them) and reads as the zeros SystemC wrote; an array requested once
// the program runs takes the default path; both are freed by delete[] (the
// scratch heap by SystemC's destructor at exit). Exit status 0: all hold.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

#include <systemc>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what);
    ++failures;
  }
}

// The kB of the mapping holding `p` that are on huge pages (/proc/self/smaps),
// or -1 if it cannot be read.
long anon_huge_kb(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(' ') > line.find('-')) {
      inside = lo <= at && at < hi;
      continue;
    }
    long kb = 0;
    if (inside && std::sscanf(line.c_str(), "AnonHugePages: %ld kB", &kb) == 1) return kb;
  }
  return -1;
}

}  // namespace

int sc_main(int, char**) {
  const auto& heap = sc_core::sc_temp_heap;
  const std::size_t bytes = static_cast<std::size_t>(heap.m_end_p - heap.m_bgn_p);
  const auto begin = reinterpret_cast<std::uintptr_t>(heap.m_bgn_p);
  expect(bytes == 0x300000, "SystemC's scratch heap is 3 MB (SystemC 2.3.4)");
  expect(begin % (std::uintptr_t{2} << 20) == 0, "the scratch heap starts on a 2 MiB boundary (placed by startup_arrays.cpp)");
  bool zero = true;
  for (std::size_t i = 0; i < bytes; i += 4096) zero = zero && heap.m_bgn_p[i] == 0;
  expect(zero && heap.m_bgn_p[bytes - 1] == 0, "the scratch heap reads as the zeros SystemC wrote");
  std::printf("scratch heap at %p, %ld kB of its mapping on huge pages\n", static_cast<void*>(heap.m_bgn_p),
              anon_huge_kb(heap.m_bgn_p));

  // Once the program runs, a large array is an ordinary one.
  char* late = new char[0x300000];
  std::memset(late, 1, 0x300000);
  expect(late != heap.m_bgn_p && late[0x2fffff] == 1, "an array allocated in main is its own, usable block");
  delete[] late;
  int* small = new int[16]();
  expect(small[15] == 0, "a small array is value-initialised as asked");
  delete[] small;
  char* none = new (std::nothrow) char[64];
  expect(none != nullptr, "the nothrow array form allocates");
  delete[] none;
  if (failures == 0) std::printf("startup arrays: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
