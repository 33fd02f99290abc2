// A fast deflate encoder (RFC 1951) for `--compress gzip` at level 1.
//
// Debian 12's libdeflate (1.14) is the only whole-buffer deflate available,
// and its level 1 is a greedy hash-chain matcher at ~600-750 MB/s on the
// outputs' text: with every output on, compressing ~540 MB kept both cores
// busy and the compressed run took 1.41x the plain run's wall. This encoder
// trades a little size for speed: greedy LZ77 with one candidate per hash
// bucket (no chains), matches extended eight bytes at a time, and one
// dynamic Huffman block per segment of the input (stored blocks where the
// text does not compress).
//
// It writes what deflate_join::make_nonfinal makes of a libdeflate stream
// directly: non-final blocks ending on a byte boundary, so pieces compressed
// one by one (by any thread) concatenate byte-wise into one deflate stream,
// ended by deflate_join::kFinalBlock. A piece refers only to its own bytes
// (no window across pieces), and its bytes depend only on its text.
#pragma once

#include <cstddef>

namespace npusim::record::deflate_fast {

// The room compress needs for n bytes of text (it writes 8 bytes at a time).
std::size_t bound(std::size_t n);

// Allocates the calling thread's matcher state now (throws std::bad_alloc),
// so that an allocation failure shows where the caller can report it.
void reserve();

// Compresses in[0, n) into `out` (bound(n) bytes) as non-final deflate
// blocks ending on a byte boundary; returns their length (0 for n == 0).
std::size_t compress(const unsigned char* in, std::size_t n, unsigned char* out);

}  // namespace npusim::record::deflate_fast
