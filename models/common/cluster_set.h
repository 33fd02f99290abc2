// A set of clusters as a bit set over a group's local cluster indices
// 0..n-1 (a scheduler thread's owned clusters, in order), so the scheduler's
// per-stage questions ("which of my cores are idle", "has a peer an idle
// core of this shape") are word operations, not loops over cores (plain C++).
// The words are held inline (a platform has at most 1024 clusters), so a
// test is one load.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>

namespace npusim {

class ClusterSet {
 public:
  using Word = std::uint64_t;

  static constexpr int kMaxClusters = 1024;  // the platform loader's limit on topology.clusters

  void resize(int n) {
    assert(n >= 0 && n <= kMaxClusters);
    n_ = n;
    words_ = (n + 63) / 64;
    w_.fill(0);
  }
  int size() const { return n_; }
  int words() const { return words_; }
  Word word(int i) const { return w_[static_cast<std::size_t>(i)]; }
  // The bits of word `i` that name a cluster (the tail of the last word is not).
  Word valid(int i) const {
    const int rest = n_ - 64 * i;
    return rest >= 64 ? ~Word{0} : (Word{1} << rest) - 1;
  }

  bool test(int k) const { return w_[static_cast<std::size_t>(k >> 6)] >> (k & 63) & 1; }
  void set(int k, bool on) {
    const Word b = Word{1} << (k & 63);
    Word& w = w_[static_cast<std::size_t>(k >> 6)];
    w = on ? (w | b) : (w & ~b);
  }

  // Set bits in `w` (SWAR: the build targets baseline x86-64, where
  // __builtin_popcountll is a library call).
  static int count(Word w) {
    w = w - ((w >> 1) & 0x5555555555555555ull);
    w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
    w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return static_cast<int>((w * 0x0101010101010101ull) >> 56);
  }

  // Calls f(k) for every set bit k of the word `bits` at word index `i`, in
  // increasing k.
  template <typename F>
  static void for_each_bit(int i, Word bits, F&& f) {
    while (bits) {
      f(64 * i + __builtin_ctzll(bits));
      bits &= bits - 1;
    }
  }

 private:
  int n_ = 0;
  int words_ = 0;
  std::array<Word, kMaxClusters / 64> w_{};
};

}  // namespace npusim
