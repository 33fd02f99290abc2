// npusim-timed FILE CMD [ARG...]: runs CMD and writes "WALL USER SYS MAXRSS_KB"
// to FILE, the times in seconds to the microsecond (tools/bench.sh). What GNU
// time reports, at a finer grain: its %U and %S print hundredths, too coarse
// for a 0.1 s target. The times and the peak memory are CMD's own (wait4's
// rusage of the child); this process is small, so the pages the child has
// before its exec do not reach its peak. Exit status: CMD's (127 if it could
// not be started, 2 on a usage error).
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: npusim-timed FILE CMD [ARG...]\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("npusim-timed: fork");
    return 2;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    std::perror("npusim-timed: exec");
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (wait4(pid, &status, 0, &ru) < 0) {
    std::perror("npusim-timed: wait4");
    return 2;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto seconds = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  std::FILE* f = std::fopen(argv[1], "w");
  if (!f) {
    std::perror("npusim-timed: the result file");
    return 2;
  }
  std::fprintf(f, "%.6f %.6f %.6f %ld\n", wall, seconds(ru.ru_utime), seconds(ru.ru_stime), ru.ru_maxrss);
  std::fclose(f);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
