#include "sim/host/interrupt.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <mutex>

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace npusim::host::interrupt {

namespace {

// Every signal whose default action ends the process without a core dump
// (SIGPIPE aside: it is ignored).
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGUSR1, SIGUSR2};
constexpr int kEntries = 64;
constexpr std::size_t kPathBytes = 4096;
constexpr int kDepth = 8;  // folder levels removed below a registered tree

// Every member has a constant initialiser, so the table is constant-initialised
// (zeros in .bss, untouched until used): a member left without one made the
// compiler write each entry's kind and seq at start-up, a page fault per entry
// (64 of them, in every npusim process).
struct Entry {
  std::atomic<int> kind{0};  // 0 = free, else 1 + Kind
  std::uint64_t seq = 0;     // registration order
  char path[kPathBytes] = {};
};

Entry g_entries[kEntries];
std::uint64_t g_seq = 0;
std::mutex g_mutex;  // registration (never taken by the handler)
std::atomic<pid_t> g_child{0};
std::atomic<pid_t> g_children[kMaxChildren];  // 0: a free slot
std::atomic<pid_t> g_groups[kMaxGroups];      // leaders; 0: a free slot

// getdents64's record (the kernel's struct linux_dirent64).
struct Dirent64 {
  std::uint64_t ino;
  std::int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

alignas(8) char g_dirbuf[kDepth][2048];  // one per level: the handler does not allocate

bool remove_at(int dirfd, const char* name, int depth) {
  if (::unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return true;
  if (errno != EISDIR && errno != EPERM) return false;
  if (depth >= kDepth) return false;
  const int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = true;
  // Entries are removed while the folder is read, so read it again until a
  // pass finds nothing left.
  for (bool any = true; any && ok;) {
    any = false;
    ::lseek(fd, 0, SEEK_SET);
    long n;
    while ((n = ::syscall(SYS_getdents64, fd, g_dirbuf[depth], sizeof g_dirbuf[depth])) > 0) {
      for (long off = 0; off < n;) {
        const auto* d = reinterpret_cast<const Dirent64*>(g_dirbuf[depth] + off);
        off += d->reclen;
        if (std::strcmp(d->name, ".") == 0 || std::strcmp(d->name, "..") == 0) continue;
        any = true;
        ok = remove_at(fd, d->name, depth + 1) && ok;
      }
    }
  }
  ::close(fd);
  return ::unlinkat(dirfd, name, AT_REMOVEDIR) == 0 && ok;
}

void say(const char* s) {
  for (std::size_t n = std::strlen(s); n > 0;) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGALRM: return "SIGALRM";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
  }
  return "a signal";
}

void on_signal(int sig) {
  const int saved_errno = errno;
  for (auto& slot : g_groups)
    if (const pid_t g = slot.load()) ::kill(-g, SIGKILL);
  for (auto& slot : g_groups)
    if (const pid_t g = slot.load()) {
      int status = 0;
      while (::waitpid(g, &status, 0) < 0 && errno == EINTR) {
      }
    }
  if (const pid_t c = g_child.load()) {
    ::kill(c, sig);
    int status = 0;
    while (::waitpid(c, &status, 0) < 0 && errno == EINTR) {
    }
  }
  for (auto& slot : g_children)
    if (const pid_t c = slot.load()) ::kill(c, sig);
  for (auto& slot : g_children)
    if (const pid_t c = slot.load()) {
      int status = 0;
      while (::waitpid(c, &status, 0) < 0 && errno == EINTR) {
      }
    }
  // Newest first: a staging folder before the parent folders created for it.
  bool removed = false;
  for (;;) {
    int pick = -1;
    for (int i = 0; i < kEntries; ++i)
      if (g_entries[i].kind.load() != 0 && (pick < 0 || g_entries[i].seq > g_entries[pick].seq)) pick = i;
    if (pick < 0) break;
    Entry& e = g_entries[pick];
    switch (static_cast<Kind>(e.kind.load() - 1)) {
      case Kind::Tree: remove_at(AT_FDCWD, e.path, 0); break;
      case Kind::File: ::unlink(e.path); break;
      case Kind::EmptyDir: ::rmdir(e.path); break;
    }
    e.kind.store(0);
    removed = true;
  }
  say("npusim: interrupted by ");
  say(signal_name(sig));
  say(removed ? ": stopped; nothing written, the run's partial outputs were removed\n" : ": stopped\n");
  // Die of the same signal, as if it had not been caught.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(sig, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
  errno = saved_errno;
  ::_exit(128 + sig);
}

}  // namespace

void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int s : kSignals) sigaddset(&sa.sa_mask, s);
    for (int s : kSignals) {
      struct sigaction old {};
      ::sigaction(s, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: the caller wants it ignored
      ::sigaction(s, &sa, nullptr);
    }
    std::signal(SIGXFSZ, SIG_IGN);
    std::signal(SIGPIPE, SIG_IGN);
  });
}

int remember(Kind kind, const std::string& path) {
  std::lock_guard<std::mutex> lk(g_mutex);
  if (path.size() >= kPathBytes) return -1;  // longer than PATH_MAX: nothing could have been created there
  for (int i = 0; i < kEntries; ++i) {
    Entry& e = g_entries[i];
    if (e.kind.load() != 0) continue;
    std::memcpy(e.path, path.c_str(), path.size() + 1);
    e.seq = ++g_seq;
    e.kind.store(static_cast<int>(kind) + 1);  // published last: the handler sees a complete entry
    return i;
  }
  return -1;
}

void forget(int handle) {
  if (handle < 0 || handle >= kEntries) return;
  g_entries[handle].kind.store(0);
}

void set_child(pid_t pid) { g_child.store(pid); }

bool add_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, pid)) return true;
  }
  return false;
}

bool add_group(pid_t leader) {
  for (auto& slot : g_groups) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, leader)) return true;
  }
  return false;
}

void remove_group(pid_t leader) {
  for (auto& slot : g_groups) {
    pid_t mine = leader;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

void remove_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t mine = pid;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

}  // namespace npusim::host::interrupt
