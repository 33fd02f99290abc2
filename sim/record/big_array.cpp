#include "sim/record/big_array.h"

#include <cstdint>

#include <sys/mman.h>

#include "models/common/errors.h"

namespace npusim::record::huge_pages {
namespace {
constexpr std::size_t kHuge = std::size_t{2} << 20;  // x86-64's and arm64's (4 KB granule) PMD page
std::size_t rounded(std::size_t bytes) { return (bytes + kHuge - 1) & ~(kHuge - 1); }
}  // namespace

void* allocate(std::size_t bytes) {
  const std::size_t len = rounded(bytes);
  // One huge page more than asked, so a 2 MB-aligned start is inside; the
  // parts before and after it are unmapped again.
  void* m = ::mmap(nullptr, len + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    out_of_memory() = true;
    throw std::bad_alloc();
  }
  const auto at = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t start = (at + kHuge - 1) & ~(std::uintptr_t{kHuge} - 1);
  if (start > at) ::munmap(m, start - at);
  if (const std::size_t tail = at + len + kHuge - (start + len)) ::munmap(reinterpret_cast<void*>(start + len), tail);
  ::madvise(reinterpret_cast<void*>(start), len, MADV_HUGEPAGE);  // a hint: refused, 4 KB pages as before
  return reinterpret_cast<void*>(start);
}

void release(void* p, std::size_t bytes) { ::munmap(p, rounded(bytes)); }

}  // namespace npusim::record::huge_pages
