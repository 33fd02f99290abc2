// The documentation against the repository: figures the docs quote from
// example runs match the golden baselines (traces/golden/*.summary.json),
// every relative link and repository path the docs mention exists, and no doc
// cites a project issue number. Reads files only, runs no simulation.
//
// A quoted figure is marked with an HTML comment the page does not show, on a
// line of its own:
//   <!-- golden: TRACE KEY = VALUE [UNIT] -->
// TRACE names traces/golden/TRACE.summary.json, KEY a dotted path into it
// (device_wall_ns, tasks.completed), UNIT is ns, us or nothing (a count);
// VALUE is written as the page shows it (11,166 or 37.301).
// VALUE in UNIT must equal the golden figure, and "VALUE UNIT" (or VALUE
// alone for a count) must appear in the page within the next lines, so the
// figure the reader sees is the one checked.
#include "tests/catch.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"
#include "tests/test_paths.h"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kRepo = NPUSIM_SOURCE_DIR;

// The shared helpers (a unity build puts this file in one translation unit
// with others that use them: a second definition would be ambiguous there).
using cli::lines_of;
using cli::slurp;

// README.md, docs/*.md and (with_spec) docs/spec/*.md, sorted, relative to
// the repository.
std::vector<fs::path> doc_files(bool with_spec = true) {
  std::vector<fs::path> out{"README.md"};
  for (const char* dir : {"docs", "docs/spec"}) {
    if (!with_spec && std::string(dir) == "docs/spec") continue;
    std::vector<fs::path> here;
    for (const auto& e : fs::directory_iterator(kRepo / dir))
      if (e.is_regular_file() && e.path().extension() == ".md") here.push_back(fs::path(dir) / e.path().filename());
    std::sort(here.begin(), here.end());
    out.insert(out.end(), here.begin(), here.end());
  }
  return out;
}

// The lines outside fenced code blocks (a block quotes a program's output,
// which may name the runtime's own files), with their 1-based numbers.
std::vector<std::pair<int, std::string>> prose_lines(const std::string& text) {
  std::vector<std::pair<int, std::string>> out;
  bool in_block = false;
  int n = 0;
  for (const auto& l : lines_of(text)) {
    ++n;
    const auto first = l.find_first_not_of(' ');
    if (first != std::string::npos && l.compare(first, 3, "```") == 0) {
      in_block = !in_block;
      continue;
    }
    if (!in_block) out.emplace_back(n, l);
  }
  return out;
}

bool path_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/' || c == '.' || c == '-';
}

std::string format_value(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Checks the golden markers of one page; returns one message per mismatch.
// `count` receives the number of markers found.
std::vector<std::string> check_golden_markers(const std::string& page_name, const std::string& text,
                                              const fs::path& golden_dir, int& count) {
  static const std::regex marker(R"(<!--\s*golden:\s*([A-Za-z0-9_]+)\s+([A-Za-z0-9_.]+)\s*=\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(ns|us)?\s*-->)");
  std::vector<std::string> errors;
  const auto lines = lines_of(text);
  count = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    // A marker is a line of its own; the syntax quoted inside a sentence is not one.
    if (lines[i].rfind("<!-- golden:", 0) != 0) continue;
    const std::string where = page_name + ":" + std::to_string(i + 1) + ": ";
    if (!std::regex_search(lines[i], m, marker)) {
      errors.push_back(where + "malformed golden marker: " + lines[i]);
      continue;
    }
    ++count;
    const std::string trace = m[1], key = m[2], value = m[3], unit = m[4];
    const fs::path golden = golden_dir / (trace + ".summary.json");
    if (!fs::exists(golden)) {
      errors.push_back(where + "no golden baseline " + golden.string());
      continue;
    }
    const json summary = json::parse(slurp(golden));
    const json* node = &summary;
    std::istringstream parts(key);
    for (std::string part; std::getline(parts, part, '.');) {
      if (!node->is_object() || !node->contains(part)) {
        node = nullptr;
        break;
      }
      node = &(*node)[part];
    }
    if (node == nullptr || !node->is_number()) {
      errors.push_back(where + trace + ".summary.json has no number at " + key);
      continue;
    }
    const double scale = unit == "us" ? 1000.0 : 1.0;
    std::string digits = value;  // 11,166: the thousands separator the page shows
    digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
    const double quoted = std::stod(digits) * scale;
    const double expected = node->get<double>();
    if (std::fabs(quoted - expected) > 1e-6 * std::max(1.0, std::fabs(expected)))
      errors.push_back(where + trace + " " + key + ": the page says " + value + (unit.empty() ? "" : " " + unit) +
                       ", the golden baseline " + format_value(expected / scale) + (unit.empty() ? "" : " " + unit));
    // The figure must be visible near its marker, not only in the comment.
    const std::string shown = unit.empty() ? value : value + " " + unit;
    bool seen = false;
    for (size_t j = i + 1; j < lines.size() && j <= i + 12 && !seen; ++j) {
      if (lines[j].find("<!--") != std::string::npos) continue;
      for (size_t at = lines[j].find(shown); at != std::string::npos; at = lines[j].find(shown, at + 1)) {
        const size_t end = at + shown.size();
        const bool left_ok = at == 0 || !(std::isdigit(static_cast<unsigned char>(lines[j][at - 1])) || lines[j][at - 1] == '.');
        const bool right_ok = end >= lines[j].size() || !std::isdigit(static_cast<unsigned char>(lines[j][end]));
        if (left_ok && right_ok) {
          seen = true;
          break;
        }
      }
    }
    if (!seen) errors.push_back(where + "the figure '" + shown + "' is not shown within 12 lines after its marker");
  }
  return errors;
}

}  // namespace

TEST_CASE("docs: the figures the tutorial quotes match traces/golden", "[docs]") {
  const fs::path golden_dir = kRepo / "traces" / "golden";
  int tutorial_markers = 0;
  std::vector<std::string> errors;
  for (const auto& doc : doc_files()) {
    int n = 0;
    const auto e = check_golden_markers(doc.string(), slurp(kRepo / doc), golden_dir, n);
    errors.insert(errors.end(), e.begin(), e.end());
    if (doc == fs::path("docs/tutorial.md")) tutorial_markers = n;
  }
  for (const auto& e : errors) UNSCOPED_INFO(e);
  CHECK(errors.empty());
  // chain's device_wall, makespan and task count, rings_deep_nest's two.
  CHECK(tutorial_markers >= 5);
}

TEST_CASE("docs: a golden marker whose figure moved is reported", "[docs]") {
  const fs::path golden_dir = kRepo / "traces" / "golden";
  // traces/golden/chain.summary.json: device_wall_ns 37301, 8 tasks.
  int n = 0;
  auto errors = check_golden_markers("page.md",
                                     "<!-- golden: chain device_wall_ns = 37.301 us -->\n"
                                     "status ok: 8/8 tasks completed, device_wall 37.301 us\n",
                                     golden_dir, n);
  CHECK(n == 1);
  CHECK(errors.empty());

  // The one message a page with one wrong marker gets.
  const auto only_error = [&](const std::string& page) {
    const auto found = check_golden_markers("page.md", page, golden_dir, n);
    REQUIRE(found.size() == 1);
    return found[0];
  };
  CHECK(only_error("<!-- golden: chain device_wall_ns = 37.900 us -->\ndevice_wall 37.900 us\n") ==
        "page.md:1: chain device_wall_ns: the page says 37.900 us, the golden baseline 37.301 us");
  // The comment right, the shown figure stale.
  CHECK(only_error("<!-- golden: chain tasks.completed = 8 -->\nstatus ok: 9/9 tasks completed\n") ==
        "page.md:1: the figure '8' is not shown within 12 lines after its marker");
  CHECK(only_error("<!-- golden: qwen3_decode tasks.submitted = 11,167 -->\n11,167 tasks\n") ==
        "page.md:1: qwen3_decode tasks.submitted: the page says 11,167, the golden baseline 11166");
  CHECK(only_error("<!-- golden: chain no_such_figure = 1 -->\n1\n") ==
        "page.md:1: chain.summary.json has no number at no_such_figure");
  CHECK(only_error("<!-- golden: no_such_trace makespan_ns = 1 ns -->\n1 ns\n").find("no golden baseline") !=
        std::string::npos);
  // The syntax quoted inside a sentence is not a marker.
  CHECK(check_golden_markers("page.md", "write `<!-- golden: chain makespan_ns = 1 ns -->` above it\n", golden_dir, n)
            .empty());
  CHECK(n == 0);
}

TEST_CASE("docs: every relative link and repository path in the docs exists", "[docs]") {
  // Paths of this repository's own folders. A path right after the name of an
  // upstream project (simpler's or its huawei-csl fork's, PyPTO's, PTO-ISA's)
  // is that project's and is not looked up here; a path whose last
  // part has an upper-case placeholder (tp_ffn_N.json, NAME.gz) is a pattern.
  static const std::vector<std::string> kRoots = {"docs/",        "traces/",     "tools/",
                                                  "platforms/",   "tests/test_", "tests/data/",
                                                  "tests/conformance/"};
  static const std::vector<std::string> kUpstream = {"simpler", "pypto",   "PyPTO", "PTOAS", "pto-isa",
                                                     "PTO-ISA", "upstream"};
  static const std::regex placeholder(R"((^|[_.-])[A-Z]+([_.-]|$))");
  static const std::regex link(R"(\]\(([^)\s]+)\))");
  std::vector<std::string> missing;
  int links = 0, paths = 0;
  for (const auto& doc : doc_files()) {
    for (const auto& [n, line] : prose_lines(slurp(kRepo / doc))) {
      const std::string where = doc.string() + ":" + std::to_string(n) + ": ";
      for (auto it = std::sregex_iterator(line.begin(), line.end(), link); it != std::sregex_iterator(); ++it) {
        std::string target = (*it)[1];
        if (target.empty() || target[0] == '#' || target.find("://") != std::string::npos ||
            target.rfind("mailto:", 0) == 0)
          continue;
        target = target.substr(0, target.find('#'));
        ++links;
        if (!fs::exists(kRepo / doc.parent_path() / target)) missing.push_back(where + "link " + target);
      }
      for (const auto& root : kRoots) {
        for (size_t at = line.find(root); at != std::string::npos; at = line.find(root, at + 1)) {
          if (at > 0 && path_char(line[at - 1])) continue;
          size_t end = at;
          while (end < line.size() && (path_char(line[end]) || line[end] == '*')) ++end;
          std::string path = line.substr(at, end - at);
          while (!path.empty() && path.back() == '.') path.pop_back();
          if (path.find('*') != std::string::npos) continue;
          std::string last = path;
          if (!last.empty() && last.back() == '/') last.pop_back();
          last = last.substr(last.rfind('/') + 1);
          if (std::regex_search(last, placeholder)) continue;
          const std::string before = line.substr(at < 20 ? 0 : at - 20, at < 20 ? at : 20);
          if (std::any_of(kUpstream.begin(), kUpstream.end(),
                          [&](const std::string& u) { return before.find(u) != std::string::npos; }))
            continue;
          ++paths;
          if (!fs::exists(kRepo / path)) missing.push_back(where + "path " + path);
        }
      }
    }
  }
  for (const auto& m : missing) UNSCOPED_INFO(m);
  CHECK(missing.empty());
  // The scan found what the docs are made of (README alone links 22 times into docs/).
  CHECK(links > 30);
  CHECK(paths > 100);
}

TEST_CASE("docs: no project issue numbers or private documents are cited", "[docs]") {
  // "issue 16", a bare "#27": the reader cannot follow either. An upstream
  // number stays when its repository is named (simpler#1924, PTOAS#1356).
  // docs/spec/ is the normative specification kept verbatim; its header says
  // which of its references name background documents.
  static const std::regex issue(R"(\b[Ii]ssue [0-9]+)");
  static const std::regex bare_number(R"((^|[^A-Za-z0-9#&])#[0-9]+($|[^A-Za-z0-9_-]))");
  std::vector<std::string> found;
  for (const auto& doc : doc_files(false)) {
    for (const auto& [n, line] : prose_lines(slurp(kRepo / doc))) {
      const std::string where = doc.string() + ":" + std::to_string(n) + ": ";
      std::smatch m;
      if (std::regex_search(line, m, issue)) found.push_back(where + m.str());
      if (std::regex_search(line, m, bare_number)) found.push_back(where + m.str());
      for (const char* word : {"../shared/", "DEVELOPERS.md", "seed page"})
        if (line.find(word) != std::string::npos) found.push_back(where + word);
    }
  }
  for (const auto& f : found) UNSCOPED_INFO(f);
  CHECK(found.empty());
}
