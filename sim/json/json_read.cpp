#include "sim/json/json_read.h"

#include <cerrno>
#include <cstring>
#include <mutex>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npusim::json_input {

namespace {
struct NotedInput {
  dev_t dev;
  ino_t ino;
  std::string path;
};
std::mutex g_inputs_mutex;
std::vector<NotedInput> g_inputs;  // a command reads a handful of files
}  // namespace

void note_input(const std::string& path) {
  struct stat st {};
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  std::lock_guard<std::mutex> lk(g_inputs_mutex);
  for (const NotedInput& n : g_inputs)
    if (n.dev == st.st_dev && n.ino == st.st_ino) return;
  g_inputs.push_back({st.st_dev, st.st_ino, path});
}

std::string noted_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  std::lock_guard<std::mutex> lk(g_inputs_mutex);
  for (const NotedInput& n : g_inputs)
    if (n.dev == st.st_dev && n.ino == st.st_ino) return n.path;
  return "";
}

std::string not_a_regular_file(const std::string& path, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return errno == ENOENT || errno == ENOTDIR ? "no such file" : std::string("cannot read it: ") + std::strerror(errno);
  const mode_t m = st.st_mode;
  if (S_ISREG(m)) return "";
  const char* kind = S_ISDIR(m)    ? "a folder"
                     : S_ISCHR(m)  ? "a character device"
                     : S_ISBLK(m)  ? "a block device"
                     : S_ISFIFO(m) ? "a FIFO"
                     : S_ISSOCK(m) ? "a socket"
                                   : "a special file";
  return std::string("is ") + kind + ", not a " + what;
}

std::string read_text(const std::string& path, const std::string& shown, std::uint64_t max, const char* what) {
  const bool stdin_ = path == "-";
  const int fd = stdin_ ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(shown, "", std::string("cannot open the ") + what + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    bool own;
    ~Closer() {
      if (own) ::close(fd);
    }
  } closer{fd, !stdin_};
  const std::string too_big = std::string("more than ") + std::to_string(max) + " bytes, the limit of a " + what;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(shown, "", std::string("is a folder, not a ") + what);
  if (!stdin_) note_input(path);
  std::string text;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    if (static_cast<std::uint64_t>(st.st_size) > max) throw InputError(shown, "", too_big);
    text.reserve(static_cast<std::size_t>(st.st_size));
  }
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (errno == EISDIR) throw InputError(shown, "", std::string("is a folder, not a ") + what);
      throw InputError(shown, "", std::string("cannot read the ") + what + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > max) throw InputError(shown, "", too_big);
    // JSON text never holds a NUL byte: stop at once on binary input (/dev/zero, /dev/urandom).
    if (const void* nul = std::memchr(buf, 0, static_cast<std::size_t>(n)))
      throw InputError(shown, "", "not JSON text: a NUL byte at offset " +
                                      std::to_string(text.size() + static_cast<std::size_t>(
                                                                       static_cast<const char*>(nul) - buf)));
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace npusim::json_input
