#include "sim/engine/output_dir.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/common/errors.h"
#include "sim/host/interrupt.h"
#include "sim/record/whole_file.h"

namespace fs = std::filesystem;

namespace npusim::engine {

namespace {

std::string hash_hex(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

// Length of the valid, printable UTF-8 sequence at s[i] (>= U+00A0, no
// invisible or direction-changing characters), or 0.
std::size_t printable_utf8(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (c >= 0xF5) n = 0;
  if (n == 0 || i + n > s.size()) return 0;
  std::uint32_t cp = c & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (b(i + k) & 0x3F);
  }
  const std::uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong, surrogate
  if (cp < 0xA0 || cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
      (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF || (cp >= 0xFFF0 && cp <= 0xFFFF))
    return 0;  // C1 controls, soft hyphen, zero-width and bidi controls, specials
  return n;
}

// The first `max` bytes of a sanitised name, not splitting a UTF-8 sequence.
std::string cut_utf8(const std::string& s, std::size_t max) {
  std::size_t n = std::min(max, s.size());
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

// The output folder's name in the names of its lock and staging folders.
std::string sibling_tag(const std::string& name) {
  return name.size() <= 64 ? name : cut_utf8(name, 47) + "~" + hash_hex(name);
}

// Outputs of npusim versions that wrote no manifest: these files, and
// name_map_<trace>.json.
const char* const kLegacyFiles[] = {"summary.json",     "chip_swimlane_records.json",   "merged_swimlane.json",
                                    "deps.json",        "scope_stats/scope_stats.jsonl", "task_stats.csv"};
bool legacy_output(const std::string& rel) {
  for (const char* f : kLegacyFiles)
    if (rel == f) return true;
  return rel.rfind("name_map_", 0) == 0 && rel.size() > 14 && rel.compare(rel.size() - 5, 5, ".json") == 0 &&
         rel.find('/') == std::string::npos;
}

// The deepest output npusim writes: a worker's
// dispatch_N/chip_M/scope_stats/scope_stats.jsonl.
constexpr int kMaxComponents = 4;

// A manifest line: one to kMaxComponents safe components.
bool listable(const std::string& rel) {
  if (rel.empty() || rel.size() > 512) return false;
  auto ok = [](const std::string& c) { return !c.empty() && c != "." && c != ".." && c.find('\0') == std::string::npos; };
  int parts = 0;
  for (std::size_t at = 0;; ++parts) {
    const std::size_t slash = rel.find('/', at);
    if (!ok(rel.substr(at, slash == std::string::npos ? std::string::npos : slash - at))) return false;
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  return parts < kMaxComponents;
}

std::set<std::string> read_manifest(const fs::path& dir) {
  std::set<std::string> files;
  std::ifstream in(dir / kManifest);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#' && listable(line)) files.insert(line);
  return files;
}

bool is_private(const std::string& name) {
  // In-place staging and lock (a mount point as the output folder).
  return name.rfind(".npusim-staging-", 0) == 0 || name == ".npusim-lock";
}

// The first entry of `dir` that npusim did not write, or nothing. Reads the
// folder and only the subfolders that hold a file the manifest lists (at
// most kMaxComponents - 1 levels down), never a foreign tree.
std::optional<std::string> foreign_entry(const fs::path& dir) {
  const std::set<std::string> listed = read_manifest(dir);
  auto ours = [&](const std::string& rel, const fs::directory_entry& e) {
    std::error_code ec;
    if (e.symlink_status(ec).type() != fs::file_type::regular) return false;
    return listed.count(rel) > 0 || legacy_output(rel);
  };
  auto holds_listed = [&](const std::string& folder) {
    auto it = listed.lower_bound(folder + "/");
    return it != listed.end() && it->rfind(folder + "/", 0) == 0;
  };
  std::optional<std::string> found;
  std::function<void(const fs::path&, const std::string&)> walk = [&](const fs::path& at, const std::string& prefix) {
    for (const fs::directory_entry& e : fs::directory_iterator(at)) {
      const std::string name = e.path().filename().string();
      if (prefix.empty() && (name == kManifest || is_private(name))) continue;
      const std::string rel = prefix + name;
      std::error_code ec;
      if (e.symlink_status(ec).type() == fs::file_type::directory) {
        if (!holds_listed(rel) && rel != "scope_stats") {
          found = rel + "/";
          return;
        }
        walk(e.path(), rel + "/");
        if (found) return;
        continue;
      }
      if (!ours(rel, e)) {
        found = rel;
        return;
      }
    }
  };
  walk(dir, "");
  return found;
}

// Root of a mount (a file system, or a bind mount): nothing can be renamed
// across its boundary.
bool mount_root(const std::string& dir, const std::string& parent) {
  struct statx sx {};
  if (::statx(AT_FDCWD, dir.c_str(), AT_SYMLINK_NOFOLLOW, STATX_INO, &sx) == 0 &&
      (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
    return (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
  struct stat a {}, b {};
  if (::stat(dir.c_str(), &a) != 0 || ::stat(parent.c_str(), &b) != 0) return false;
  return a.st_dev != b.st_dev || a.st_ino == b.st_ino;
}

std::string errno_text(int e) { return std::strerror(e); }

std::string g_shown_staging, g_shown_given;  // for OutputDir::shown

}  // namespace

std::string file_component(const std::string& name) {
  constexpr std::size_t kMax = 100;
  std::string out;
  for (std::size_t i = 0; i < name.size();) {
    const char c = name[i];
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                       c == '_' || c == '-' || c == '+';
    if (plain) {
      out += c;
      ++i;
    } else if (std::size_t n = static_cast<unsigned char>(c) >= 0x80 ? printable_utf8(name, i) : 0) {
      out.append(name, i, n);
      i += n;
    } else {
      out += '_';
      ++i;
    }
  }
  if (out.empty()) out = "_";
  if (out[0] == '.' || out[0] == '-') out[0] = '_';
  if (out.size() > kMax) out = cut_utf8(out, kMax - 17) + "~" + hash_hex(name);
  return out;
}

OutputDir::OutputDir(const std::string& dir) : given_(dir) {
  try {
    open();
  } catch (...) {
    release();  // no destructor for a half-built object: the lock and created parents go here
    throw;
  }
}

void OutputDir::open() {
  host::interrupt::install();
  const std::string& dir = given_;
  if (dir.empty()) fail("expected a folder name");
  if (dir.find('\0') != std::string::npos) fail("a folder name cannot contain a NUL character");
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(dir), ec);
  // A symbolic link to a folder not made yet (weakly_canonical keeps a
  // dangling last component): the outputs go where it points.
  for (int hops = 0; !ec; ++hops) {
    std::error_code lec;
    if (!fs::is_symlink(fs::symlink_status(abs, lec))) break;
    if (hops == 40) fail("cannot resolve the folder: too many levels of symbolic links");
    const fs::path target = fs::read_symlink(abs, ec);
    if (!ec) abs = fs::weakly_canonical(abs.parent_path() / target, ec);
  }
  if (ec) fail("cannot resolve the folder: " + ec.message());
  dir_ = abs.string();
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  parent_ = fs::path(dir_).parent_path().string();
  if (parent_.empty()) parent_ = "/";

  const fs::file_status st = fs::status(dir_, ec);
  const bool exists = !ec && st.type() != fs::file_type::not_found;
  if (ec && ec != std::errc::no_such_file_or_directory) fail("cannot use the folder: " + ec.message());
  if (exists) {
    if (st.type() != fs::file_type::directory)
      fail("not a folder (npusim run writes several files into the folder --out names)");
    if (::access(dir_.c_str(), R_OK | W_OK | X_OK) != 0) fail("the output folder is not writable: " + errno_text(errno));
    // A mount point cannot be swapped, nor should the current folder be
    // (the shell would be left in the removed one): their files move in one
    // by one.
    in_place_ = dir_ == "/" || mount_root(dir_, parent_) || fs::equivalent(dir_, fs::current_path(ec), ec);
    try {
      if (std::optional<std::string> f = foreign_entry(dir_))
        fail("holds \"" + *f + "\", which npusim did not write; npusim replaces its output folder whole: give a new or "
             "empty folder, or one an earlier npusim run wrote");
    } catch (const fs::filesystem_error& e) {
      fail("cannot read the output folder: " + e.code().message());
    }
  } else {
    prepare_parents();
  }
  tag_ = sibling_tag(fs::path(dir_).filename().string());
  lock();
  sweep();
  staging_ = in_place_ ? dir_ + "/.npusim-staging-" + std::to_string(::getpid())
                       : parent_ + "/." + tag_ + ".npusim-staging-" + std::to_string(::getpid());
  fs::remove_all(staging_, ec);
  // Registered before it exists: an interruption just after mkdir removes it too.
  handles_.push_back(host::interrupt::remember(host::interrupt::Kind::Tree, staging_));
  if (::mkdir(staging_.c_str(), 0755) != 0) fail("cannot create a folder in " + (in_place_ ? dir_ : parent_) + ": " + errno_text(errno));
  g_shown_staging = staging_;
  g_shown_given = given_;
  while (g_shown_given.size() > 1 && g_shown_given.back() == '/') g_shown_given.pop_back();
}

void OutputDir::prepare_parents() {
  std::vector<fs::path> missing;
  for (fs::path p = parent_; !p.empty() && p != p.root_path(); p = p.parent_path()) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (st.type() == fs::file_type::directory) break;
    if (st.type() != fs::file_type::not_found)
      fail("cannot create the folder: " + p.string() + " is not a folder");
    missing.push_back(p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    // Registered before it exists: an interruption just after mkdir removes it too.
    const int handle = host::interrupt::remember(host::interrupt::Kind::EmptyDir, it->string());
    if (::mkdir(it->c_str(), 0755) != 0) {
      const int e = errno;
      host::interrupt::forget(handle);  // not made here (another process made it), or not made at all
      if (e == EEXIST) continue;
      fail("cannot create the folder " + it->string() + ": " + errno_text(e));
    }
    created_.push_back(it->string());
    handles_.push_back(handle);
  }
}

void OutputDir::lock() {
  lock_path_ = in_place_ ? dir_ + "/.npusim-lock" : parent_ + "/." + tag_ + ".npusim-lock";
  for (int attempt = 0; attempt < 16; ++attempt) {
    lock_fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (lock_fd_ < 0)
      fail("cannot write in " + (in_place_ ? dir_ : parent_) + ": " + errno_text(errno));
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      char pid[32] = {};
      const ssize_t n = ::pread(lock_fd_, pid, sizeof pid - 1, 0);
      ::close(lock_fd_);
      lock_fd_ = -1;
      std::string who = n > 0 ? " (pid " + std::string(pid, static_cast<std::size_t>(n)) + ")" : "";
      while (!who.empty() && (who.back() == '\n' || who.back() == ')')) who.pop_back();
      if (!who.empty()) who += ")";
      fail("another npusim run" + who + " is writing this output folder; wait for it or choose another --out");
    }
    // The previous holder may have removed the file between our open and
    // our lock: the lock counts only if it is on the file the path names.
    struct stat a {}, b {};
    if (::fstat(lock_fd_, &a) == 0 && ::lstat(lock_path_.c_str(), &b) == 0 && a.st_ino == b.st_ino &&
        a.st_dev == b.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(lock_fd_, 0) == 0 && ::pwrite(lock_fd_, pid.data(), pid.size(), 0) < 0) {
      }
      lock_handle_ = host::interrupt::remember(host::interrupt::Kind::File, lock_path_);
      return;
    }
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  fail("cannot lock the output folder (its lock file " + lock_path_ + " keeps changing)");
}

// Staging folders of this output folder left by runs that died: no live run
// can own one while we hold the lock.
void OutputDir::sweep() const {
  const std::string prefix = in_place_ ? ".npusim-staging-" : "." + tag_ + ".npusim-staging-";
  std::error_code ec;
  for (fs::directory_iterator it(in_place_ ? dir_ : parent_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::error_code rm;
    fs::remove_all(it->path(), rm);
  }
}

std::string OutputDir::shown(const std::string& message) {
  std::string s = message;
  if (g_shown_staging.empty()) return s;
  for (std::size_t at; (at = s.find(g_shown_staging)) != std::string::npos;)
    s.replace(at, g_shown_staging.size(), g_shown_given);
  return s;
}

void OutputDir::fail(const std::string& message) const { throw InputError(given_, "", message); }

void OutputDir::commit(const std::vector<std::string>& files) {
  {
    std::string m = "# files npusim run wrote in this folder; its next run here replaces them\n";
    for (const std::string& f : files) m += f + "\n";
    record::write_whole(staging_ + "/" + kManifest, m);  // an error names the folder as given (shown())
  }
  // Nothing foreign may have appeared meanwhile (a process that does not
  // take the lock).
  std::error_code ec;
  if (fs::is_directory(dir_, ec)) {
    try {
      if (std::optional<std::string> f = foreign_entry(dir_))
        fail("\"" + *f + "\" appeared in the output folder during the run; nothing was replaced");
    } catch (const fs::filesystem_error& e) {
      fail("cannot read the output folder: " + e.code().message());
    }
  }
  if (in_place_) commit_in_place(files);
  else commit_swap();
  committed_ = true;
  for (int h : handles_) host::interrupt::forget(h);
  handles_.clear();
}

void OutputDir::commit_swap() {
  if (::rename(staging_.c_str(), dir_.c_str()) == 0) return;  // there was no folder
  if (errno != EEXIST && errno != ENOTEMPTY) fail("cannot move the outputs into place: " + errno_text(errno));
  // Swap the two folders in one step; where the file system cannot, move the
  // old one aside first (the folder is then briefly absent, never mixed).
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0) {
    if (errno != EINVAL && errno != ENOSYS) fail("cannot move the outputs into place: " + errno_text(errno));
    const std::string old = staging_ + "-old";
    if (::rename(dir_.c_str(), old.c_str()) != 0) fail("cannot move the previous outputs aside: " + errno_text(errno));
    if (::rename(staging_.c_str(), dir_.c_str()) != 0) {
      const int e = errno;
      if (::rename(old.c_str(), dir_.c_str()) != 0) {
      }
      fail("cannot move the outputs into place: " + errno_text(e));
    }
    if (::rename(old.c_str(), staging_.c_str()) != 0) {
    }
  }
  // The previous outputs (npusim's only, checked) are now in the staging folder.
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

void OutputDir::commit_in_place(const std::vector<std::string>& files) {
  // A mount point cannot be swapped: files move in one by one.
  const std::set<std::string> fresh(files.begin(), files.end());
  std::set<std::string> old = read_manifest(dir_);
  std::error_code ec;
  for (const std::string& f : files) {
    const fs::path dst = fs::path(dir_) / f;
    if (f.find('/') != std::string::npos) {
      fs::create_directories(dst.parent_path(), ec);
      if (ec) fail("cannot create " + dst.parent_path().string() + ": " + ec.message());
    }
    if (::rename((staging_ + "/" + f).c_str(), dst.c_str()) != 0)
      fail("cannot move " + f + " into place: " + errno_text(errno));
  }
  // The previous run's files this run did not write again, then the folders
  // they leave empty (deepest first).
  std::set<std::string> gone;
  for (const std::string& rel : old)
    if (!fresh.count(rel)) gone.insert(rel);
  for (const char* rel : kLegacyFiles)  // scope_stats/ is below the folder the scan reads
    if (!fresh.count(rel)) gone.insert(rel);
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (!fresh.count(name) && legacy_output(name)) gone.insert(name);
  }
  std::set<std::string, std::greater<std::string>> folders;
  for (const std::string& rel : gone) {
    const fs::path p = fs::path(dir_) / rel;
    std::error_code sec;
    if (fs::symlink_status(p, sec).type() == fs::file_type::regular) fs::remove(p, sec);
    for (std::size_t slash = rel.rfind('/'); slash != std::string::npos && slash > 0; slash = rel.rfind('/', slash - 1))
      folders.insert(rel.substr(0, slash));
  }
  for (const std::string& folder : folders) ::rmdir((dir_ + "/" + folder).c_str());  // only if now empty
  if (::rename((staging_ + "/" + kManifest).c_str(), (dir_ + "/" + kManifest).c_str()) != 0)
    fail(std::string("cannot move ") + kManifest + " into place: " + errno_text(errno));
  fs::remove_all(staging_, ec);
}

OutputDir::~OutputDir() { release(); }

void OutputDir::release() noexcept {
  if (!committed_) {
    std::error_code ec;
    if (!staging_.empty()) fs::remove_all(staging_, ec);
  }
  if (lock_fd_ >= 0) {
    ::unlink(lock_path_.c_str());  // still holding the lock: see lock()
    ::close(lock_fd_);
  }
  lock_fd_ = -1;
  host::interrupt::forget(lock_handle_);
  lock_handle_ = -1;
  if (!committed_)
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) ::rmdir(it->c_str());
  created_.clear();
  for (int h : handles_) host::interrupt::forget(h);
  handles_.clear();
}

}  // namespace npusim::engine
