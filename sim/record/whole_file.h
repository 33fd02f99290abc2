// A file the user named for one output of a command (`report -o`, `record
// -o`, `import -o`, `sweep --csv`, `barrier-cost --csv/--svg/--html`,
// `scope-stats --html/--svg`): written whole or not at all (docs/outputs.md,
// "Files named on the command line").
//
// - A regular file, or a name that does not exist yet, is written to a
//   temporary file beside it (same folder, so the same file system) and
//   renamed over it by commit(): until then the old file is untouched, and a
//   write error, an input error or a signal leaves it as it was and removes
//   the temporary. A symbolic link is followed: the file it points to is
//   replaced and the link kept.
// - A device, a FIFO or a socket (/dev/null, /dev/stdout, a pipe) is written
//   in place: it is never renamed over or replaced by a regular file.
// - A folder, a dangling link, or a file this process has read as an input
//   (json_input::note_input) is refused before anything is written.
// Every error throws IoError naming the path as the user gave it.
#pragma once

#include <initializer_list>
#include <string>

#include "sim/record/json_out.h"

namespace npusim::record {

class WholeFile : public OutFile {
 public:
  WholeFile() = default;
  explicit WholeFile(const std::string& path, int gzip_level = 0) { open_whole(path, gzip_level); }
  // Uncommitted: the temporary file is removed; the target is as it was
  // (a device or FIFO target has had whatever was flushed to it).
  ~WholeFile();
  WholeFile(const WholeFile&) = delete;
  WholeFile& operator=(const WholeFile&) = delete;

  // Checks the target and opens what is written (see above).
  void open_whole(const std::string& path, int gzip_level = 0);
  // Writes the rest and gives the file its name. Throws IoError naming the
  // path as given (the temporary is removed then).
  void commit() { commit_together({this}); }
  // Several outputs of one command: every file is written to its end before
  // any is renamed, so a write error leaves every target as it was. Files
  // never opened (an output not asked for) are skipped.
  static void commit_together(std::initializer_list<WholeFile*> files);
  // The path as given (empty before open_whole).
  const std::string& target() const { return given_; }
  // False when the target is a device, a FIFO or a socket (written in place).
  bool in_folder() const { return temporary_; }

 private:
  void finish();           // writes the rest; refuses an input read since open_whole
  void publish();          // renames the temporary over the target
  void discard() noexcept;
  std::string given_;    // as the user gave it, for messages
  std::string final_;    // where the bytes go: the target, links resolved
  bool temporary_ = false;
  int handle_ = -1;      // the temporary's registration with the signal handler
};

// `text` as the whole content of `path` (a WholeFile, committed).
void write_whole(const std::string& path, const std::string& text);

}  // namespace npusim::record
