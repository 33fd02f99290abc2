// Provenance of the numbers and citations: every value in platforms/*.json
// names a public source, says it is an assumption, or says what it was fitted
// to; nothing under docs/, platforms/, README.md, models/ or sim/ cites the
// project's private background documents (a timing reference and a runtime
// summary that are not in this repository) or their source keys, which a
// reader cannot follow; and docs/platform.md's table and the docs' list of
// fitted values say what the platform files say. Reads files only.
#include "tests/catch.h"

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"
#include "tests/test_paths.h"

namespace sources_test {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kSourceRoot = NPUSIM_SOURCE_DIR;

// A citation of a private document: its file names, the "timing §X" /
// "semantics §X" / "timing A.1" forms the files used for them, and the
// timing reference's source keys (HS, CSL, PY, PL) in place of a repository.
const std::regex& private_citation() {
  static const std::regex r(
      R"(a2a3-timing|runtime-semantics|a2a3sim-oracle|systemc-engineering|timing §|semantics §|timing [A-E]\.[0-9]|\b(HS|CSL|PY|PL)\b)");
  return r;
}

// Every file a reader of the repository is pointed at for numbers and
// behaviour: README.md and what is under docs/, platforms/, models/, sim/.
std::vector<fs::path> cited_files() {
  std::vector<fs::path> out{"README.md"};
  for (const char* dir : {"docs", "platforms", "models", "sim"})
    for (const auto& e : fs::recursive_directory_iterator(kSourceRoot / dir))
      if (e.is_regular_file()) out.push_back(fs::relative(e.path(), kSourceRoot));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> private_hits(const std::string& where, const std::string& text) {
  std::vector<std::string> hits;
  int n = 0;
  for (const auto& line : cli::lines_of(text)) {
    ++n;
    std::smatch m;
    if (std::regex_search(line, m, private_citation()))
      hits.push_back(where + ":" + std::to_string(n) + ": " + m.str());
  }
  return hits;
}

// The numeric leaves of a platform file: JSON pointer -> leaf object.
std::map<std::string, json> leaves(const json& doc) {
  std::map<std::string, json> out;
  for (const auto& [section, fields] : doc.items()) {
    if (!fields.is_object()) continue;
    for (const auto& [key, leaf] : fields.items())
      if (key.rfind("x_", 0) != 0) out["/" + section + "/" + key] = leaf;
  }
  return out;
}

// docs/platform.md renders a leaf's provenance as its table's last cell.
std::string rendered(const json& leaf) {
  std::string t;
  if (leaf.contains("source"))
    t = leaf["source"].get<std::string>();
  else if (leaf.contains("fitted"))
    t = "*fitted* " + leaf["fitted"].get<std::string>();
  else
    t = "*assumption:* " + leaf["assumption"].get<std::string>();
  if (leaf.contains("note")) t += " *Note:* " + leaf["note"].get<std::string>();
  return t;
}

}  // namespace sources_test

using namespace sources_test;

TEST_CASE("sources: no file cites the private background documents or their keys", "[docs][platform]") {
  // The check itself: each form it must catch, and a public citation it must not.
  CHECK(private_hits("x", "see timing §A.1").size() == 1);
  CHECK(private_hits("x", "(semantics §5.5 step 5)").size() == 1);
  CHECK(private_hits("x", "timing B.1b says").size() == 1);
  CHECK(private_hits("x", "the project's runtime-semantics.md").size() == 1);
  CHECK(private_hits("x", "(HS docs/hardware/mmio-performance.md)").size() == 1);
  CHECK(private_hits("x", "CSL calibration.md").size() == 1);
  CHECK(private_hits("x", "(simpler docs/hardware/mmio-performance.md; huawei-csl/simpler docs/asim/calibration.md)")
            .empty());
  CHECK(private_hits("x", "HSV, PLATFORM_MAX, PYTHON, timing A").empty());

  std::vector<std::string> found;
  int files = 0;
  for (const auto& f : cited_files()) {
    ++files;
    for (const auto& h : private_hits(f.string(), cli::slurp(kSourceRoot / f))) found.push_back(h);
  }
  for (const auto& h : found) UNSCOPED_INFO(h);
  CHECK(found.empty());
  CHECK(files > 100);  // the walk reached the code, not only the docs
}

TEST_CASE("sources: every platform value has a source, an assumption or what it was fitted to", "[platform]") {
  // The shipped platforms and nothing else under platforms/.
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(kSourceRoot / "platforms"))
    if (e.path().extension() == ".json") names.insert(e.path().stem().string());
  CHECK(names == std::set<std::string>{"a2a3", "tiny"});
  for (const auto& name : names) {
    const json doc = json::parse(cli::slurp(kSourceRoot / "platforms" / (name + ".json")));
    const auto all = leaves(doc);
    CHECK(all.size() == 84);
    for (const auto& [ptr, leaf] : all) {
      INFO(name << ptr);
      REQUIRE(leaf.is_object());
      REQUIRE(leaf.contains("value"));
      int kinds = 0;
      for (const char* k : {"source", "assumption", "fitted"})
        if (leaf.contains(k)) {
          ++kinds;
          CHECK(leaf[k].is_string());
          CHECK(leaf[k].get<std::string>().size() > 10);
        }
      CHECK(kinds == 1);
      // A source names a public repository or the arithmetic it derives from;
      // a fit is said with its own key, never under "source".
      if (leaf.contains("source")) {
        const std::string s = leaf["source"];
        CHECK(s.find("fitted") == std::string::npos);
        CHECK(s.find("[F]") == std::string::npos);
        const bool names_origin = s.find("simpler") != std::string::npos || s.find("pypto") != std::string::npos ||
                                  s.find("pto-isa") != std::string::npos || s.find("[D]") != std::string::npos;
        CHECK(names_origin);
      }
      if (leaf.contains("fitted")) CHECK(leaf["fitted"].get<std::string>().rfind("to ", 0) == 0);
    }
  }
}

TEST_CASE("sources: docs/platform.md's a2a3 table says what platforms/a2a3.json says", "[docs][platform]") {
  const json doc = json::parse(cli::slurp(kSourceRoot / "platforms/a2a3.json"));
  const auto all = leaves(doc);
  // Table rows "| `key` | value | meaning | provenance |" under "### `section`"
  // of the "## a2a3 parameters" chapter.
  static const std::regex heading(R"(^### `(\w+)`)");
  static const std::regex row(R"(^\| `(\w+)` \| [^|]* \| [^|]* \| (.*) \|$)");
  std::map<std::string, std::string> cells;
  bool in_a2a3 = false;
  std::string section;
  for (const auto& line : cli::lines_of(cli::slurp(kSourceRoot / "docs/platform.md"))) {
    if (line.rfind("## ", 0) == 0) in_a2a3 = line == "## a2a3 parameters";
    std::smatch m;
    if (std::regex_search(line, m, heading)) section = m[1];
    if (line.rfind("### Removed", 0) == 0) section.clear();
    if (in_a2a3 && !section.empty() && std::regex_match(line, m, row)) cells["/" + section + "/" + m[1].str()] = m[2];
  }
  std::vector<std::string> missing;
  for (const auto& [ptr, leaf] : all) {
    INFO(ptr);
    if (!cells.count(ptr)) {
      missing.push_back(ptr);
      continue;
    }
    CHECK(cells.at(ptr) == rendered(leaf));
  }
  for (const auto& m : missing) UNSCOPED_INFO("no row for " << m);
  CHECK(missing.empty());
}

TEST_CASE("sources: the docs name every fitted value and what it was fitted to", "[docs][platform]") {
  const json doc = json::parse(cli::slurp(kSourceRoot / "platforms/a2a3.json"));
  std::vector<std::string> fitted;
  for (const auto& [ptr, leaf] : leaves(doc))
    if (leaf.contains("fitted")) fitted.push_back(ptr.substr(1, ptr.find('/', 1) - 1) + "." + ptr.substr(ptr.rfind('/') + 1));
  CHECK(fitted == std::vector<std::string>{"sched.dispatch_task_ns"});
  // Each page that says which values are fitted names each one on a line
  // that says "fitted", and says how many there are.
  for (const char* page : {"docs/platform.md", "docs/calibration.md"}) {
    const std::string text = cli::slurp(kSourceRoot / page);
    for (const auto& f : fitted) {
      INFO(page << " " << f);
      bool named = false;
      for (const auto& line : cli::lines_of(text))
        named = named || (line.find("`" + f + "`") != std::string::npos && line.find("fitted") != std::string::npos);
      CHECK(named);
    }
    static const char* const counts[] = {"No value is", "One value is", "Two values are", "Three values are"};
    REQUIRE(fitted.size() < 4);
    INFO(page);
    CHECK(text.find(std::string(counts[fitted.size()]) + " fitted") != std::string::npos);
  }
}
