// Joining whole-buffer deflate streams into one gzip stream.
//
// libdeflate compresses a whole buffer at a time into a complete raw deflate
// stream (RFC 1951) whose last block is marked final. A gzip file made of
// several members (one per chunk) is valid RFC 1952, but Perfetto's importer
// stops at the end of the first member, so an output file must be a single
// member: one deflate stream. `make_nonfinal` turns a complete stream into a
// run of non-final blocks ending on a byte boundary (its last block's BFINAL
// bit cleared, then an empty stored block, as zlib's Z_SYNC_FLUSH ends one),
// so chunks compressed one by one concatenate byte-wise into one stream, ended
// by `kFinalBlock`. Finding the last block means walking the stream's blocks
// (decoding their Huffman codes without producing any output).
#pragma once

#include <cstddef>

namespace npusim::record::deflate_join {

// The bytes a buffer given to make_nonfinal must have beyond the stream: the
// empty stored block (at most 5 bytes) and the bit reader's 8-byte look-ahead.
constexpr std::size_t kSlack = 16;

// Makes the complete raw deflate stream p[0, n) non-final and byte-aligned
// (see above); `p` has n + kSlack bytes. Returns the new length, or 0 if
// p[0, n) is not one complete deflate stream.
std::size_t make_nonfinal(unsigned char* p, std::size_t n);

// An empty final block (fixed Huffman codes: BFINAL 1, BTYPE 01, end of
// block), which ends a stream of non-final pieces.
constexpr unsigned char kFinalBlock[2] = {0x03, 0x00};

}  // namespace npusim::record::deflate_join
