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
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
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
// What allocate(old_bytes) (or grow) returned, made `new_bytes` (> old_bytes)
// long with its contents: its pages moved to a new place by the kernel
// (mremap), not copied, so none is touched again; throws std::bad_alloc.
void* grow(void* p, std::size_t old_bytes, std::size_t new_bytes);
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

// An array that only grows at its end (the collectors' per-task and
// per-block records), for trivially copyable records. Below 1 MB it is
// malloc's (realloc grows it); from 1 MB on it is a mapping on huge pages
// (huge_pages::allocate) that grows by moving its pages (huge_pages::grow),
// so each page is touched once: a std::vector doubling its storage copies
// every record into fresh memory, touching about twice the final size
// (docs/architecture.md, "Host cost per simulated task, every output on",
// its page faults: fresh pages are dear on a virtual machine). Same elements in the same order as a vector's.
template <class T>
class GrowArray {
  static_assert(std::is_trivially_copyable<T>::value, "GrowArray moves its records as bytes");
  static_assert(alignof(T) <= alignof(std::max_align_t), "realloc aligns to max_align_t only");

 public:
  GrowArray() = default;
  GrowArray(const GrowArray&) = delete;
  GrowArray& operator=(const GrowArray&) = delete;
  ~GrowArray() { free_all(); }

  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }
  T& operator[](std::size_t i) { return p_[i]; }
  const T& operator[](std::size_t i) const { return p_[i]; }
  T& back() { return p_[n_ - 1]; }

  T& emplace_back() {
    if (n_ == cap_) grow();
    return *new (p_ + n_++) T();
  }
  void push_back(const T& v) {
    if (n_ == cap_) grow();
    new (p_ + n_++) T(v);
  }
  // Only the tail: [first, end()) (after std::unique).
  void erase(T* first, T* last) {
    if (last == end()) n_ = static_cast<std::size_t>(first - p_);
    else std::abort();  // not used: the records are only ever cut at their end
  }

 private:
  void grow() {
    const std::size_t cap = cap_ ? 2 * cap_ : 64;
    const std::size_t bytes = cap * sizeof(T);
    if (bytes < huge_pages::kMin) {
      void* q = std::realloc(p_, bytes);
      if (!q) throw std::bad_alloc();
      p_ = static_cast<T*>(q);
    } else if (!mapped_) {
      void* q = huge_pages::allocate(bytes);
      if (n_) std::memcpy(q, static_cast<void*>(p_), n_ * sizeof(T));
      std::free(p_);
      p_ = static_cast<T*>(q);
      mapped_ = true;
    } else {
      p_ = static_cast<T*>(huge_pages::grow(p_, cap_ * sizeof(T), bytes));
    }
    cap_ = cap;
  }
  void free_all() {
    if (mapped_) huge_pages::release(p_, cap_ * sizeof(T));
    else std::free(p_);
  }
  T* p_ = nullptr;
  std::size_t n_ = 0, cap_ = 0;
  bool mapped_ = false;
};

}  // namespace npusim::record
