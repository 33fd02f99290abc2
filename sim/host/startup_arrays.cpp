// Arrays the shared libraries allocate while they are loaded, on huge pages
// (docs/architecture.md, "Where a run's fixed cost goes").
//
// SystemC 2.3.4's initialiser allocates a 3 MB scratch heap and zero-fills
// it before main (sc_core::sc_temp_heap: `new char[0x300000]`, then
// `memset`; for the temporaries of sc_dt concatenations, which npusim never
// forms). On 4 KiB pages that is 768 page faults, and in a virtual machine a
// page fault is dear: 6-7 ms of every npusim run, a quarter of a small
// trace's. Only the executable can act before that initialiser runs, by
// replacing the global array operator new (the library's call binds to the
// executable's definition, as for any program that replaces it): an array
// of 2 MiB or more requested while the libraries are being loaded is
// mapped on its own, 2 MiB aligned and marked MADV_HUGEPAGE, so the fill
// takes two faults. Everything else, and every request once the
// executable's own initialisers run, goes to the default path (operator
// new, i.e. malloc). host::prepare_process() then gives the pages back
// (MADV_DONTNEED), as it did on small pages.
//
// Only in the npusim executable (not in the library, the Python module or
// the test binary: replacing operator new is a whole-program decision), and
// not under AddressSanitizer, whose own operator new[] must stay in place.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NPUSIM_NO_STARTUP_ARRAYS 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define NPUSIM_NO_STARTUP_ARRAYS 1
#endif

#if !defined(NPUSIM_NO_STARTUP_ARRAYS)

namespace {

constexpr std::size_t kHuge = std::size_t{2} << 20;  // x86-64's transparent huge page

// The one array placed so (constant-initialised: zero before any initialiser
// runs). More than one such request while loading would take the default path.
struct StartupArray {
  void* mapping;
  std::size_t mapping_bytes;
  void* array;
  std::size_t bytes;  // asked for
  std::size_t huge_bytes;  // marked for huge pages, from `array`
};
StartupArray g_array{};

// True until the executable's initialisers run: the shared libraries' run
// first (a library before what depends on it, the executable last).
bool g_loading_libraries = true;
__attribute__((constructor)) void libraries_loaded() {
  g_loading_libraries = false;
  // The last huge page's part past the array was filled with zeros by the
  // fault and is never used: give it back.
  if (!g_array.array) return;
  const std::size_t page = 4096;
  const std::size_t used = (g_array.bytes + page - 1) / page * page;
  if (used < g_array.huge_bytes)
    ::madvise(static_cast<char*>(g_array.array) + used, g_array.huge_bytes - used, MADV_DONTNEED);
}

void* place_on_huge_pages(std::size_t n) {
  const std::size_t bytes = (n + kHuge - 1) / kHuge * kHuge;
  const std::size_t mapping_bytes = bytes + kHuge;  // room to align the start
  void* m = ::mmap(nullptr, mapping_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto start = (reinterpret_cast<std::uintptr_t>(m) + kHuge - 1) & ~(kHuge - 1);
  void* a = reinterpret_cast<void*>(start);
  ::madvise(a, bytes, MADV_HUGEPAGE);  // a hint: without it the array is on small pages, as before
  g_array = {m, mapping_bytes, a, n, bytes};
  return a;
}

}  // namespace

void* operator new[](std::size_t n) {
  if (g_loading_libraries && n >= kHuge && !g_array.array)
    if (void* a = place_on_huge_pages(n)) return a;
  return ::operator new(n);  // what the default operator new[] does
}

void operator delete[](void* p) noexcept {
  if (p && p == g_array.array) {
    ::munmap(g_array.mapping, g_array.mapping_bytes);
    g_array = {};
    return;
  }
  ::operator delete(p);
}

void operator delete[](void* p, std::size_t) noexcept { operator delete[](p); }

#endif
