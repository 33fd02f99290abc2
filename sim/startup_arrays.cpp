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
// (MADV_DONTNEED), as it did on small pages. The mapping is huge_pages's
// (sim/record/big_array.h), as for the writers' large arrays.
//
// Only in the npusim executable (not in the library, the Python module or
// the test binary: replacing operator new is a whole-program decision), and
// not under AddressSanitizer, whose own operator new[] must stay in place.
#include <sys/mman.h>

#include <cstddef>
#include <new>

#include "sim/record/big_array.h"

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

namespace huge_pages = npusim::record::huge_pages;

// The one array placed so (constant-initialised: zero before any initialiser
// runs). More than one such request while loading would take the default path.
struct StartupArray {
  void* array;
  std::size_t bytes;  // asked for
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
  const std::size_t mapped = (g_array.bytes + huge_pages::kPage - 1) / huge_pages::kPage * huge_pages::kPage;
  if (used < mapped) ::madvise(static_cast<char*>(g_array.array) + used, mapped - used, MADV_DONTNEED);
}

}  // namespace

void* operator new[](std::size_t n) {
  if (g_loading_libraries && n >= huge_pages::kPage && !g_array.array)
    if (void* a = huge_pages::try_allocate(n)) {  // without it the array is on small pages, as before
      g_array = {a, n};
      return a;
    }
  return ::operator new(n);  // what the default operator new[] does
}

void operator delete[](void* p) noexcept {
  if (p && p == g_array.array) {
    huge_pages::release(p, g_array.bytes);
    g_array = {};
    return;
  }
  ::operator delete(p);
}

void operator delete[](void* p, std::size_t) noexcept { operator delete[](p); }

#endif
