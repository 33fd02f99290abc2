// A memory resource that recycles the nodes of node-based containers
// (std::pmr::multimap, std::pmr::unordered_map) through free lists, one per
// size class, instead of returning them to malloc.
//
// The tensormap inserts a multimap node per tensor written and an
// unordered_map node per buffer address first written, and frees them when
// the entry is reclaimed or the address has no live entry: with the global
// heap that is a malloc and a free per output tensor. Here a freed node goes
// on its size's free list and the next insert of that size takes it back;
// nodes are carved from chunks that live as long as the pool. Requests larger
// than the largest class (a hash table's bucket array) go to operator new.
// Single-threaded, like the runtime.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <memory_resource>
#include <new>
#include <vector>

namespace npusim {

class NodePool : public std::pmr::memory_resource {
 public:
  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

 private:
  static constexpr std::size_t kGrain = alignof(std::max_align_t);  // 16 on x86-64
  static constexpr std::size_t kClasses = 8;                        // nodes up to 128 bytes
  static constexpr std::size_t kNodesPerChunk = 256;

  struct FreeNode {
    FreeNode* next;
  };

  static std::size_t size_class(std::size_t bytes) { return (bytes + kGrain - 1) / kGrain - 1; }
  static bool pooled(std::size_t bytes, std::size_t align) {
    return bytes != 0 && bytes <= kClasses * kGrain && align <= kGrain;
  }

  void* do_allocate(std::size_t bytes, std::size_t align) override {
    if (!pooled(bytes, align)) return ::operator new(bytes, std::align_val_t(align));
    const std::size_t c = size_class(bytes);
    if (!free_[c]) refill(c);
    FreeNode* n = free_[c];
    free_[c] = n->next;
    return n;
  }

  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    if (!pooled(bytes, align)) {
      ::operator delete(p, std::align_val_t(align));
      return;
    }
    const std::size_t c = size_class(bytes);
    FreeNode* n = static_cast<FreeNode*>(p);
    n->next = free_[c];
    free_[c] = n;
  }

  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  // Carves a new chunk of class `c` into nodes on its free list (in address
  // order, so the first nodes handed out are adjacent).
  void refill(std::size_t c) {
    const std::size_t node = (c + 1) * kGrain;
    chunks_.emplace_back(new Chunk[node * kNodesPerChunk / sizeof(Chunk)]);
    char* base = reinterpret_cast<char*>(chunks_.back().get());
    for (std::size_t i = kNodesPerChunk; i-- > 0;) {
      FreeNode* n = reinterpret_cast<FreeNode*>(base + i * node);
      n->next = free_[c];
      free_[c] = n;
    }
  }

  struct alignas(kGrain) Chunk {
    unsigned char bytes[kGrain];
  };
  std::array<FreeNode*, kClasses> free_{};
  std::vector<std::unique_ptr<Chunk[]>> chunks_;
};

}  // namespace npusim
