// The output folder of `npusim run` (docs/outputs.md): the one protocol by
// which outputs reach the disk.
//
// Before anything is simulated the folder is checked (a folder, writable,
// holding nothing npusim did not write) and locked against a concurrent run;
// outputs are built in a staging folder beside it, on the same file system,
// and swapped in whole when the run produced a result. Whatever stops a run
// before that (an input error found mid-run, an I/O error, a limit, a signal)
// leaves the folder as it was and removes the staging folder and any parent
// folders npusim created. Staging folders of dead runs are swept.
#pragma once

#include <string>
#include <vector>

namespace npusim::engine {

// `name` as one safe file-name component, for names that come from a trace
// (the default output folder npusim_out/<name>, name_map_<name>.json):
// letters, digits, `.`, `_`, `-`, `+` and printable non-ASCII UTF-8 are
// kept, every other byte (`/`, `\`, NUL, control and invisible characters,
// spaces, invalid UTF-8) becomes `_`; a leading `.` or `-` becomes `_` (so
// never `.`, `..`, a hidden file or an option); empty becomes `_`; beyond 100
// bytes it is cut and ends in `~` and a hash of the whole name.
std::string file_component(const std::string& name);

// The name of the file listing what npusim wrote in an output folder.
constexpr const char* kManifest = ".npusim_outputs";

class OutputDir {
 public:
  // Checks, locks and prepares `dir` (as given on the command line). Throws
  // InputError naming the folder when it cannot hold the outputs.
  explicit OutputDir(const std::string& dir);
  // Without a commit: removes the staging folder, the parent folders this
  // object created and its lock; the output folder is left as it was.
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  // Where the writers put their files (an empty folder, created here).
  const std::string& staging() const { return staging_; }
  // The folder as given, for messages.
  const std::string& given() const { return given_; }
  // A message with the staging folder's path (of the last OutputDir of the
  // process, even once it is gone) replaced by the output folder as given:
  // an I/O error names the file it would have been.
  static std::string shown(const std::string& message);

  // Makes `files` (paths relative to staging()) the folder's contents, with
  // the list of them (kManifest), replacing the previous run's outputs as a
  // whole. Throws InputError naming the folder on an I/O error; the folder
  // is then left as it was.
  void commit(const std::vector<std::string>& files);

 private:
  void open();              // the constructor's work
  void release() noexcept;  // the lock, an uncommitted staging folder, created parents
  void prepare_parents();
  void lock();
  void sweep() const;
  void commit_swap();
  void commit_in_place(const std::vector<std::string>& files);
  [[noreturn]] void fail(const std::string& message) const;

  std::string given_;
  std::string dir_;                   // absolute, symbolic links resolved
  std::string parent_;
  std::string tag_;                   // the folder's name in sibling names
  bool in_place_ = false;             // a mount point (or /): staged inside it
  std::string staging_;
  std::string lock_path_;
  int lock_fd_ = -1;
  int lock_handle_ = -1;
  std::vector<std::string> created_;  // parent folders created here, outermost first
  std::vector<int> handles_;          // interrupt registrations
  bool committed_ = false;
};

}  // namespace npusim::engine
