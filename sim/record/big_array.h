// Arrays that grow with the task count (the summary figures' collectors:
// every task and block of a run) on transparent huge pages.
//
// With every output on, the collectors' arrays are the run's largest
// allocations (tens of MB for 100,000 tasks, more while a vector doubles),
// and each 4 KB page they touch first is a page fault: about 18,000 per
// bench_pa_100k run, several microseconds each on a virtual machine, most of
// the run's page faults (perf record -e page-faults). An array of 1 MB or
// more is mapped on its own, aligned to 2 MB and marked MADV_HUGEPAGE, so
// the kernel (where transparent huge pages are "madvise" or "always") backs
// it with 2 MB pages: one fault per 2 MB. Smaller arrays come from malloc as
// before. Where the kernel gives no huge page the mapping is an ordinary one.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace npusim::record {

namespace huge_pages {
constexpr std::size_t kMin = std::size_t{1} << 20;  // smaller: malloc
constexpr std::size_t kPage = std::size_t{2} << 20;  // a huge page: x86-64's and arm64's (4 KB granule) PMD page
// `bytes` (>= kMin) of zeroed memory aligned to 2 MB, its whole huge pages
// marked for transparent huge pages; throws std::bad_alloc.
void* allocate(std::size_t bytes);
// The same, or nullptr when it cannot be mapped (nothing recorded: for a
// caller with another way, as before main, sim/startup_arrays.cpp).
void* try_allocate(std::size_t bytes) noexcept;
void release(void* p, std::size_t bytes);  // what allocate(bytes) or try_allocate(bytes) returned
// Puts the next `bytes` of the malloc heap on transparent huge pages and
// keeps freed heap memory for reuse (glibc; elsewhere nothing). Called once,
// before a run allocates: the writers' output blocks and the containers of
// the writers and the model then fault once per 2 MB instead of once per
// 4 KB page (docs/architecture.md, "Page faults that do not grow with the
// tasks").
void heap_on_huge_pages(std::size_t bytes);
// Lets heap_on_huge_pages change malloc's settings, which are the whole
// process's: npusim's own main allows it; a program that embeds npusim (the
// Python module, the unit tests) keeps its allocator as it set it.
void allow_heap_tuning();
}  // namespace huge_pages

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < huge_pages::kMin) return static_cast<T*>(::operator new(bytes));
    return static_cast<T*>(huge_pages::allocate(bytes));
  }
  void deallocate(T* p, std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < huge_pages::kMin) ::operator delete(p);
    else huge_pages::release(p, bytes);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

template <class T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace npusim::record
