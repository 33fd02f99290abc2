// Errors that are the user's input, not the simulated device's failure.
//
// An InputError names the file, the JSON path (a JSON Pointer, "" = the
// document) and what was expected. npusim reports it and exits with status 2
// without passing off any partial output as a result.
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>

namespace npusim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string path, std::string message)
      : std::runtime_error(format(file, path, message)),
        file_(std::move(file)), path_(std::move(path)), message_(std::move(message)) {}

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }     // JSON Pointer
  const std::string& message() const { return message_; }

  // "FILE: at PATH: MESSAGE" (the path part is left out for whole-file errors)
  static std::string format(const std::string& file, const std::string& path,
                            const std::string& message) {
    std::string s = file.empty() ? std::string("<input>") : file;
    s += ": ";
    if (!path.empty()) s += "at " + path + ": ";
    s += message;
    return s;
  }

 private:
  std::string file_, path_, message_;
};

// A file npusim reads or writes failed it (a full disk, `ulimit -f`, a
// folder that cannot be written): the run's environment, not the model.
// Reported as an input error (exit 2) naming the file: "FILE: MESSAGE".
class IoError : public InputError {
 public:
  IoError(std::string file, std::string message) : InputError(std::move(file), "", std::move(message)) {}
};

// Set when an allocation failed (operator new's handler, or a buffer of the
// writers): npusim then reports that the host ran out of memory, exit 2,
// never a bug in npusim (docs/outputs.md, "Limits").
inline std::atomic<bool>& out_of_memory() {
  static std::atomic<bool> flag{false};
  return flag;
}

// Raised while evaluating an expression; the caller adds file and path.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace npusim
