#include "sim/record/big_array.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "models/common/errors.h"

namespace npusim::record::huge_pages {
namespace {
constexpr std::size_t kHuge = kPage;
std::size_t rounded(std::size_t bytes) { return (bytes + kHuge - 1) & ~(kHuge - 1); }

// A private anonymous mapping of `len` (a multiple of 2 MB) bytes with
// protection `prot` and extra `flags`, starting on a 2 MB boundary, or null:
// one huge page more than asked is mapped, so an aligned start is inside,
// and the parts before and after it are unmapped again.
void* map_aligned(std::size_t len, int prot, int flags) {
  void* m = ::mmap(nullptr, len + kHuge, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto at = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t start = (at + kHuge - 1) & ~(std::uintptr_t{kHuge} - 1);
  if (start > at) ::munmap(m, start - at);
  if (const std::size_t tail = at + len + kHuge - (start + len)) ::munmap(reinterpret_cast<void*>(start + len), tail);
  return reinterpret_cast<void*>(start);
}
}  // namespace

void* allocate(std::size_t bytes) {
  void* p = try_allocate(bytes);
  if (!p) {
    out_of_memory() = true;
    throw std::bad_alloc();
  }
  return p;
}

void* try_allocate(std::size_t bytes) noexcept {
  const std::size_t len = rounded(bytes);
  void* p = map_aligned(len, PROT_READ | PROT_WRITE, 0);
  if (p) ::madvise(p, len, MADV_HUGEPAGE);  // a hint: refused, 4 KB pages as before
  return p;
}

void release(void* p, std::size_t bytes) { ::munmap(p, rounded(bytes)); }

void* grow(void* p, std::size_t old_bytes, std::size_t new_bytes) {
  const std::size_t old_len = rounded(old_bytes), len = rounded(new_bytes);
  if (len <= old_len) return p;
#if defined(__linux__) && defined(MREMAP_FIXED)
  // In place when the addresses above are free (the start, so the 2 MB
  // alignment, stays).
  if (::mremap(p, old_len, len, 0) != MAP_FAILED) return p;
  // Otherwise a 2 MB-aligned place for the new length (reserved, not
  // touched: no access), and the old pages moved into its start, their huge
  // pages whole. If that move fails the reservation is left as it is (no
  // access, address space only): the kernel may already have unmapped it,
  // and another thread may have mapped something there since.
  if (void* place = map_aligned(len, PROT_NONE, MAP_NORESERVE)) {
    void* q = ::mremap(p, old_len, len, MREMAP_MAYMOVE | MREMAP_FIXED, place);
    if (q != MAP_FAILED) return q;  // the moved mapping keeps its protection and its huge-page hint
  }
#endif
  // Where the pages cannot be moved: a new mapping and a copy.
  void* q = allocate(new_bytes);
  std::memcpy(q, p, old_bytes);
  release(p, old_bytes);
  return q;
}

namespace {
bool tuning_allowed = false;
}  // namespace

void allow_heap_tuning() { tuning_allowed = true; }

// A run with every output on touched about 6,500 fresh 4 KB pages of the
// heap and its mappings, about 5,000 of them whatever the task count (the
// output blocks of some 85 files, each grown from empty; the chip swimlane's
// per-core rows; the containers' first growth), at several microseconds a
// fault on a virtual machine: most of why paged_attention_case1 cost more
// per task than bench_pa_100k. glibc's own switch for this (the tunable
// glibc.malloc.hugetlb=1) is read from the environment at start-up only, so
// the same is done here: the heap is grown once by `bytes` (M_TOP_PAD, the
// room malloc asks the kernel for beyond a request) and that room marked
// MADV_HUGEPAGE, the way glibc marks what it adds to the heap under that
// tunable. Nothing is touched here: memory is still taken as it is used, by
// whole 2 MB pages. Blocks up to 32 MB (the output blocks, most vectors)
// come from this heap instead of mappings of their own (M_MMAP_THRESHOLD),
// and freed heap memory is kept for the next allocation instead of being
// handed back and faulted in again (M_TRIM_THRESHOLD).
void heap_on_huge_pages(std::size_t bytes) {
#if defined(__GLIBC__)
  static bool done = false;
  if (done || !tuning_allowed) return;
  done = true;
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::min<std::size_t>(bytes * 2, 1u << 30)));
  ::mallopt(M_TOP_PAD, static_cast<int>(std::min<std::size_t>(bytes, 1u << 30)));
  // A request larger than what the heap has free makes malloc grow it by the
  // request and M_TOP_PAD; freed, the block stays at the heap's top (below
  // the trim threshold) for the allocations that follow.
  void* probe = std::malloc(std::size_t{1} << 20);
  if (!probe) return;
  const auto from = reinterpret_cast<std::uintptr_t>(probe);
  std::free(probe);
  const auto to = reinterpret_cast<std::uintptr_t>(::sbrk(0));
  if (to == static_cast<std::uintptr_t>(-1) || to <= from) return;  // not a brk heap above the block
  const std::uintptr_t start = (from + kHuge - 1) & ~(std::uintptr_t{kHuge} - 1);
  const std::uintptr_t end = to & ~(std::uintptr_t{kHuge} - 1);
  if (end > start) ::madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);  // a hint, as allocate's
#else
  (void)bytes;
#endif
}

}  // namespace npusim::record::huge_pages
