#!/usr/bin/env python3
"""What the host charges for memory a run touches for the first time.

    tools/host_memory.py DIR

Prints two figures, CPU (user + system) of this process per 100 MiB:

- fresh memory: 128 MiB of private anonymous memory marked for transparent
  huge pages (as npusim's heap and its collectors' arrays are:
  sim/record/big_array.h), each 4 KiB page written once;
- page-cache writes: 128 MiB written to a new file in DIR with write(2), 256
  KiB a write from one buffer filled once (as npusim's I/O thread writes its
  chunks: OutFile::kChunk), then the file removed.

tools/bench.sh prints the medians of N runs under its floors: the rows with
every output on pay both prices in system time (docs/speed.md, "The
seventeenth speed session"). Not a test: the figures are the host's.
"""
import mmap
import os
import resource
import sys

MIB = 1 << 20
SIZE = 128 * MIB
CHUNK = 256 * 1024


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def per_100_mib(seconds):
    return seconds * 1000 * 100 * MIB / SIZE


def fresh_memory():
    m = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(m, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    zeros = bytes(SIZE // 4096)
    t = cpu()
    m[::4096] = zeros
    t = cpu() - t
    m.close()
    return per_100_mib(t)


def page_cache_writes(directory):
    path = os.path.join(directory, "host_memory.probe")
    buf = b"x" * CHUNK
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        t = cpu()
        for _ in range(SIZE // CHUNK):
            os.write(fd, buf)
        t = cpu() - t
    finally:
        os.close(fd)
        os.unlink(path)
    return per_100_mib(t)


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.stderr.write("usage: tools/host_memory.py DIR\n")
        return 2
    print("%.1f %.1f" % (fresh_memory(), page_cache_writes(sys.argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
