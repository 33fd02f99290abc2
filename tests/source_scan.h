// The repository's C++ sources, for the tests that scan code rather than run
// it (tests/test_layering.cpp: includes, namespaces, JSON parses;
// tests/test_aicpu_clock.cpp: reads of the kernel's time; tests/test_fiber.cpp:
// changes of the floating-point control state). Reads files only.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_paths.h"

namespace source_scan {

struct Source {
  std::string path;  // relative to the source tree: "sim/json/json_read.h"
  std::string text;
};

// Every .h, .hpp and .cpp file under the folders `tops` of the source tree
// (recursively, or only the folder itself), sorted by path.
inline std::vector<Source> sources_under(std::initializer_list<std::string> tops, bool recursive = true) {
  namespace fs = std::filesystem;
  const fs::path root(NPUSIM_SOURCE_DIR);
  std::vector<Source> out;
  auto take = [&](const fs::directory_entry& e) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".h" && ext != ".hpp" && ext != ".cpp")) return;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    out.push_back({fs::relative(e.path(), root).generic_string(), text.str()});
  };
  for (const std::string& top : tops) {
    if (recursive)
      for (const auto& e : fs::recursive_directory_iterator(root / top)) take(e);
    else
      for (const auto& e : fs::directory_iterator(root / top)) take(e);
  }
  std::sort(out.begin(), out.end(), [](const Source& a, const Source& b) { return a.path < b.path; });
  return out;
}

// Calls f(n, line, code) for each line of `text`, numbered from 1, `code`
// being the line without its // comment: the scans look at code only and
// name the line they found.
template <class F>
void for_each_code_line(const std::string& text, F&& f) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::size_t comment = line.find("//");
    f(n, line, comment == std::string::npos ? line : line.substr(0, comment));
  }
}

// One finding a line, for a test's INFO.
inline std::string listed(const std::vector<std::string>& findings) {
  std::string s;
  for (const std::string& f : findings) s += f + "\n";
  return s;
}

}  // namespace source_scan
