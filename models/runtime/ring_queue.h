// A FIFO of trivially copyable values in one growable ring buffer, for the
// runtime's ready queues and the tensormap's per-ring insertion order.
//
// std::deque allocates a block every 512 bytes of pushes and frees it when
// the pops have passed it, so a queue that only ever holds a few entries
// still allocates and frees once per 64 pointers pushed. This ring grows to
// the largest size the queue ever held (doubling) and is reused in place:
// after warm-up a push or pop never allocates. Order is FIFO, as the deque's.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

namespace npusim {

template <typename T>
class RingQueue {
  static_assert(std::is_trivially_copyable<T>::value, "RingQueue holds plain values");

 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const T& front() const { return buf_[head_]; }
  T& front() { return buf_[head_]; }

  void push_back(const T& v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }

 private:
  // Doubles the capacity (a power of two, so wrapping is a mask), the
  // entries moved to the front of the new buffer in queue order.
  void grow() {
    std::vector<T> bigger(buf_.empty() ? 16 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> buf_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace npusim
