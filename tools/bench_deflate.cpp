// npusim-bench-deflate: the level-1 encoder of `--compress gzip`
// (sim/record/deflate_fast) alone, on files, as OutFile uses it: each file
// compressed in 256 KiB pieces (OutFile::kChunk), `reps` times. Prints, per
// file, the median MB/s of the thread's CPU time, the compressed size and a
// hash (FNV-1a, 64 bits) of the compressed bytes, so two builds can be
// compared for speed and for identical output. Not a test (timings flake).
//
//   npusim-bench-deflate REPS FILE...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "sim/record/deflate_fast.h"

namespace {

double thread_cpu() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

bool read_file(const char* path, std::vector<unsigned char>& v) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  v.clear();
  unsigned char buf[1 << 16];
  for (std::size_t k; (k = std::fread(buf, 1, sizeof buf, f)) > 0;) v.insert(v.end(), buf, buf + k);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::atoi(argv[1]) < 1) {
    std::fprintf(stderr, "usage: %s REPS FILE...\n", argv[0]);
    return 2;
  }
  const int reps = std::atoi(argv[1]);
  constexpr std::size_t kPiece = std::size_t{1} << 18;  // OutFile::kChunk
  namespace df = npusim::record::deflate_fast;
  df::reserve();
  std::vector<unsigned char> text, out(df::bound(kPiece));
  for (int i = 2; i < argc; ++i) {
    if (!read_file(argv[i], text)) {
      std::perror(argv[i]);
      return 1;
    }
    std::vector<double> secs;
    std::uint64_t hash = 0xcbf29ce484222325ull, size = 0;
    for (int r = 0; r < reps; ++r) {
      const double t0 = thread_cpu();
      for (std::size_t o = 0; o < text.size(); o += kPiece) {
        const std::size_t n = df::compress(text.data() + o, std::min(kPiece, text.size() - o), out.data());
        if (r == 0) {  // the bytes are the same each time
          size += n;
          for (std::size_t k = 0; k < n; ++k) hash = (hash ^ out[k]) * 0x100000001b3ull;
        }
      }
      secs.push_back(thread_cpu() - t0);
    }
    // (the first pass also hashes: its time is left out when there are more)
    if (secs.size() > 1) secs.erase(secs.begin());
    std::sort(secs.begin(), secs.end());
    const double med = secs[secs.size() / 2];
    std::printf("%-40s %8.1f MB/s  %zu -> %llu bytes (%.2f:1)  fnv %016llx\n", argv[i],
                med > 0 ? static_cast<double>(text.size()) / med / 1e6 : 0.0, text.size(), static_cast<unsigned long long>(size),
                size ? static_cast<double>(text.size()) / static_cast<double>(size) : 0.0,
                static_cast<unsigned long long>(hash));
  }
  return 0;
}
