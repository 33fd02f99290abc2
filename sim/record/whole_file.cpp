#include "sim/record/whole_file.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/common/errors.h"
#include "sim/json/json_read.h"
#include "sim/host/interrupt.h"

namespace npusim::record {
namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) { throw IoError(path, why); }

// Refuses `path` if it is a file this process read as an input.
void refuse_an_input(const std::string& path) {
  const std::string input = json_input::noted_input(path);
  if (input.empty()) return;
  refuse(path, input == path ? "is an input of this command: not written over"
                             : "is the same file as the input " + input + ": not written over");
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The descriptor `path` names if it is one of this process's own:
// /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N; else -1. Such a file
// (a terminal, a pipe, or the regular file a shell redirected to) is written
// through the descriptor, at its offset, as the shell's own writes are.
int own_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string p(prefix);
    if (path.compare(0, p.size(), p) != 0 || path.size() == p.size() || path.size() > p.size() + 9) continue;
    int fd = 0;
    for (std::size_t i = p.size(); i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9') return -1;
      fd = fd * 10 + (path[i] - '0');
    }
    return fd;
  }
  return -1;
}

std::string name_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

WholeFile::~WholeFile() { discard(); }

void WholeFile::open_whole(const std::string& path, int gzip_level) {
  discard();
  given_ = path;
  final_ = path;
  show_as(path);
  refuse_an_input(path);
  if (const int fd = own_descriptor(path); fd >= 0 && ::fcntl(fd, F_GETFD) != -1) {
    open_flags(path, gzip_level, 0, fd);
    return;
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) refuse(path, std::string("cannot create: ") + std::strerror(errno));
    st.st_mode = 0;  // a new file
  } else if (S_ISLNK(st.st_mode)) {
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) refuse(path, "is a symbolic link to a missing file: not written through");
      refuse(path, std::string("cannot create: ") + std::strerror(errno));
    }
    char real[PATH_MAX];
    if (!::realpath(path.c_str(), real)) refuse(path, std::string("cannot create: ") + std::strerror(errno));
    final_ = real;
  }
  if (S_ISDIR(st.st_mode)) refuse(path, std::string("cannot create: ") + std::strerror(EISDIR));
  if (st.st_mode != 0 && !S_ISREG(st.st_mode)) {  // a device, a FIFO, a socket: in place
    open_flags(final_, gzip_level, 0);
    return;
  }
  // A regular file or a new one: a temporary beside it, renamed over it by
  // commit(). A leftover of a killed process that had this pid is its own.
  const std::string tmp = parent_of(final_) + "/." + name_of(final_) + ".npusim-" + std::to_string(::getpid()) + ".tmp";
  ::unlink(tmp.c_str());
  open_flags(tmp, gzip_level, O_CREAT | O_EXCL);
  temporary_ = true;
  handle_ = host::interrupt::remember(host::interrupt::Kind::File, tmp);
  if (st.st_mode != 0) ::chmod(tmp.c_str(), st.st_mode & 07777);  // the replaced file's permissions
}

void WholeFile::commit_together(std::initializer_list<WholeFile*> files) {
  try {
    for (WholeFile* f : files)
      if (!f->given_.empty()) f->finish();
    for (WholeFile* f : files)
      if (!f->given_.empty()) f->publish();
  } catch (...) {
    for (WholeFile* f : files) f->discard();
    throw;
  }
}

void WholeFile::finish() {
  close();
  refuse_an_input(given_);  // an input read since open_whole
}

void WholeFile::publish() {
  if (!temporary_) return;
  if (::rename(path().c_str(), final_.c_str()) != 0) refuse(given_, std::string("cannot write: ") + std::strerror(errno));
  host::interrupt::forget(handle_);
  handle_ = -1;
  temporary_ = false;
}

void WholeFile::discard() noexcept {
  if (!temporary_) return;
  close_and_remove();
  host::interrupt::forget(handle_);
  handle_ = -1;
  temporary_ = false;
}

void write_whole(const std::string& path, const std::string& text) {
  WholeFile f(path);
  f.raw(text);
  f.commit();
}

}  // namespace npusim::record
