// The layering of sim/ (docs/architecture.md, "sim/ by question"): the table
// there is the one statement of which folder may include which; this test
// reads it and checks every #include under sim/ and models/ against it.
// Reads files only.
#include "tests/catch.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/source_scan.h"
#include "tests/test_paths.h"

namespace layering_test {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// folder ("sim/json") -> the folders it may include, from the table's rows.
std::map<std::string, std::set<std::string>> allowed_arrows() {
  const std::string doc = slurp(fs::path(NPUSIM_SOURCE_DIR) / "docs/architecture.md");
  const std::size_t at = doc.find("## sim/ by question");
  REQUIRE(at != std::string::npos);
  std::istringstream lines(doc.substr(at));
  std::map<std::string, std::set<std::string>> arrows;
  std::string line;
  std::getline(lines, line);
  const std::regex row(R"(^\| `(sim/[a-z_]+)` \|.*\| ([^|]*) \|\s*$)");
  const std::regex folder(R"(`(sim/[a-z_]+)`)");
  while (std::getline(lines, line) && line.rfind("## ", 0) != 0) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    std::set<std::string>& to = arrows[m[1]];
    const std::string cell = m[2];
    for (std::sregex_iterator it(cell.begin(), cell.end(), folder), end; it != end; ++it) to.insert((*it)[1]);
  }
  return arrows;
}

struct Include {
  std::string file;    // relative to the repository
  std::string target;  // "sim/json/json_read.h"
};

std::vector<Include> includes_under(const std::string& top) {
  std::vector<Include> out;
  const std::regex inc(R"re(^\s*#\s*include\s*"((sim|models)/[^"]+)")re");
  for (const source_scan::Source& f : source_scan::sources_under({top})) {
    std::istringstream text(f.text);
    std::string line;
    while (std::getline(text, line)) {
      std::smatch m;
      if (std::regex_search(line, m, inc)) out.push_back({f.path, m[1]});
    }
  }
  return out;
}

std::string folder_of(const std::string& path) {  // "sim/json/x.h" -> "sim/json"; "sim/main.cpp" -> "sim"
  const std::size_t a = path.find('/');
  const std::size_t b = path.find('/', a + 1);
  return b == std::string::npos ? path.substr(0, a) : path.substr(0, b);
}

TEST_CASE("the layering table of docs/architecture.md names every folder of sim/, and each has a README") {
  const auto arrows = allowed_arrows();
  REQUIRE(arrows.size() >= 12);
  CHECK(arrows.at("sim/json").empty());
  CHECK(arrows.at("sim/engine").count("sim/diagnose") == 1);
  CHECK(arrows.at("sim/diagnose").count("sim/engine") == 0);
  for (const auto& e : fs::directory_iterator(fs::path(NPUSIM_SOURCE_DIR) / "sim")) {
    if (!e.is_directory()) continue;
    const std::string f = "sim/" + e.path().filename().string();
    INFO(f);
    CHECK(arrows.count(f) == 1);
    CHECK(fs::is_regular_file(e.path() / "README.md"));
  }
  for (const auto& [from, tos] : arrows)
    for (const std::string& to : tos) {
      INFO(from << " -> " << to);
      CHECK(arrows.count(to) == 1);  // a row names only folders that exist in the table
      CHECK(arrows.at(to).count(from) == 0);  // no cycle of two
    }
}

// The includes among `incs` that the table does not allow.
std::vector<std::string> violations(const std::map<std::string, std::set<std::string>>& arrows,
                                    const std::vector<Include>& incs) {
  std::vector<std::string> wrong;
  for (const Include& i : incs) {
    const std::string from = folder_of(i.file);
    const std::string to = folder_of(i.target);
    if (from.rfind("models", 0) == 0) {
      if (to.rfind("sim", 0) == 0) wrong.push_back(i.file + " includes " + i.target);
      continue;
    }
    if (from == "sim") continue;  // sim/main.cpp dispatches to every folder
    if (from == "sim/sdk" || i.file == "sim/scene/runner.cpp") {
      // The SDK stands alone; the runner is a program of its own: its protocol and the SDK only.
      if (i.target != "sim/scene/protocol.h") wrong.push_back(i.file + " includes " + i.target);
      continue;
    }
    if (to.rfind("models", 0) == 0 || to == from) continue;
    const auto row = arrows.find(from);
    if (row == arrows.end() || row->second.count(to) == 0) wrong.push_back(i.file + " includes " + i.target);
  }
  return wrong;
}

TEST_CASE("every #include under sim/ follows the table's arrows, and models/ includes nothing of sim/") {
  std::vector<Include> incs = includes_under("sim");
  for (const Include& i : includes_under("models")) incs.push_back(i);
  REQUIRE(incs.size() > 300);
  const std::vector<std::string> wrong = violations(allowed_arrows(), incs);
  INFO(source_scan::listed(wrong));
  CHECK(wrong.empty());
}

TEST_CASE("the layering check sees a wrong arrow") {
  const auto arrows = allowed_arrows();
  const std::vector<Include> bad = {
      {"sim/record/perfetto_writer.cpp", "sim/engine/engine.h"},  // upwards
      {"sim/json/json_read.cpp", "sim/host/interrupt.h"},          // json uses nothing of sim/
      {"sim/diagnose/sizing.cpp", "sim/study/sweep.h"},            // upwards
      {"models/gm/gm.cpp", "sim/record/json_out.h"},               // models never include sim/
      {"sim/scene/runner.cpp", "sim/host/interrupt.h"},            // the runner stands alone
  };
  CHECK(violations(arrows, bad).size() == bad.size());
  const std::vector<Include> good = {
      {"sim/engine/engine.cpp", "sim/diagnose/diagnosis.h"},
      {"sim/report/report.cpp", "sim/record/whole_file.h"},
      {"sim/json/json_read.cpp", "models/common/errors.h"},
      {"sim/main.cpp", "sim/study/sweep.h"},
      {"sim/scene/runner.cpp", "sim/scene/protocol.h"},
  };
  CHECK(violations(arrows, good).empty());
}

// ---- each folder's namespace ------------------------------------------------
// A folder's code is in the namespace its row of the table names (a name says
// where it is defined); another folder's namespace is opened only to declare
// names (`namespace npusim::config { class CommandLine; }`).

// folder ("sim/json") -> its namespace ("json_input"), from the table's rows.
std::map<std::string, std::string> folder_namespaces() {
  const std::string doc = slurp(fs::path(NPUSIM_SOURCE_DIR) / "docs/architecture.md");
  const std::size_t at = doc.find("## sim/ by question");
  REQUIRE(at != std::string::npos);
  std::istringstream lines(doc.substr(at));
  std::map<std::string, std::string> out;
  std::string line;
  std::getline(lines, line);
  const std::regex row(R"(^\| `(sim/[a-z_]+)` \| (`npusim::([a-z_]+)`|-) \|.*$)");
  while (std::getline(lines, line) && line.rfind("## ", 0) != 0) {
    std::smatch m;
    if (std::regex_match(line, m, row)) out[m[1]] = m[3];
  }
  return out;
}

// "file:line: text" for each `namespace npusim::X {` of `text` (a file of
// `folder`, whose namespace is `ns`) that opens another namespace than `ns`
// for more than declarations.
std::vector<std::string> foreign_namespaces(const std::string& file, const std::string& ns, const std::string& text) {
  static const std::regex open(R"(^namespace npusim::([a-z_]+)(::[a-z_:]+)? \{\s*$)");
  static const std::regex declaration(R"(^\s*((class|struct) [A-Za-z_]\w*;)?\s*(//.*)?$)");
  std::vector<std::string> wrong;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, open) || m[1] == ns) continue;
    bool only_declarations = true;
    std::size_t j = i + 1;
    for (; j < lines.size() && lines[j].rfind("}", 0) != 0; ++j)
      only_declarations = only_declarations && std::regex_match(lines[j], declaration);
    if (!only_declarations) wrong.push_back(file + ":" + std::to_string(i + 1) + ": " + lines[i]);
  }
  return wrong;
}

TEST_CASE("the code of each folder of sim/ is in the namespace its row of the table names") {
  const auto spaces = folder_namespaces();
  REQUIRE(spaces.size() == allowed_arrows().size());
  CHECK(spaces.at("sim/diagnose") == "diagnose");
  CHECK(spaces.at("sim/import") == "capture");
  CHECK(spaces.at("sim/sdk").empty());
  std::vector<std::string> wrong;
  std::size_t files = 0;
  for (const auto& [folder, ns] : spaces) {
    if (ns.empty()) continue;
    for (const source_scan::Source& f : source_scan::sources_under({folder}, false)) {
      if (f.path == "sim/scene/runner.cpp") continue;  // a program of its own
      ++files;
      for (const std::string& w : foreign_namespaces(f.path, ns, f.text)) wrong.push_back(w);
    }
  }
  REQUIRE(files > 100);
  INFO(source_scan::listed(wrong));
  CHECK(wrong.empty());
}

TEST_CASE("the namespace check sees code in another folder's namespace and lets declarations pass") {
  const std::string declares =
      "namespace npusim::config {\nclass CommandLine;\n}\n\nnamespace npusim::study {\nint x();\n}\n";
  CHECK(foreign_namespaces("sim/study/a.h", "study", declares).empty());
  const std::string defines =
      "namespace npusim::trace {\nstruct Trace;\n}\nnamespace npusim::engine {\n\nstruct Failure {\n  int a;\n};\n}\n";
  const auto wrong = foreign_namespaces("sim/diagnose/d.h", "diagnose", defines);
  REQUIRE(wrong.size() == 1);
  CHECK(wrong[0] == "sim/diagnose/d.h:4: namespace npusim::engine {");
  CHECK(foreign_namespaces("sim/record/r.cpp", "record",
                           "namespace npusim::record::deflate_join {\nint f() { return 1; }\n}\n")
            .empty());
}

// ---- JSON is parsed in sim/json only ----------------------------------------
// Every JSON text npusim reads goes through the one input layer (sim/json,
// json_input.h): its limits, messages and pointer paths. A parse of JSON text
// anywhere else in sim/ or python/ is a reader of its own; this scanner finds
// nlohmann's parse entries (parse, accept, sax_parse, from_cbor and the other
// binary formats, the _json literal, the SAX interface, operator>> into a
// document) on code lines (comments dropped).

// "file:line: text" for each line of `text` that parses JSON.
std::vector<std::string> json_parses(const std::string& file, const std::string& text) {
  static const std::regex parse(
      R"re(\b(json|J|ordered_json|basic_json<[^>]*>|Json)\s*::\s*(parse|accept|sax_parse|from_cbor|from_msgpack|from_ubjson|from_bjdata|from_bson)\s*\()re");
  static const std::regex other(R"re(\bsax_parse\s*\(|\bjson_sax\b|\bJsonDom\b|"\s*_json\b|>>\s*(j|json|doc|root|document)\s*;)re");
  std::vector<std::string> found;
  source_scan::for_each_code_line(text, [&](int n, const std::string& line, const std::string& code) {
    if (std::regex_search(code, parse) || std::regex_search(code, other))
      found.push_back(file + ":" + std::to_string(n) + ": " + line);
  });
  return found;
}

TEST_CASE("no JSON is parsed outside sim/json: sim/ and python/ read JSON through the input layer") {
  std::vector<std::string> found;
  std::size_t files = 0;
  for (const source_scan::Source& f : source_scan::sources_under({"sim", "python"})) {
    if (f.path.rfind("sim/json/", 0) == 0) continue;
    ++files;
    for (const std::string& p : json_parses(f.path, f.text)) found.push_back(p);
  }
  REQUIRE(files > 100);
  INFO(source_scan::listed(found));
  CHECK(found.empty());
}

TEST_CASE("the JSON-parse scanner sees a planted parse and names its file and line") {
  const std::string planted =
      "// json::parse(text) in a comment is no parse\n"
      "Expr e = Expr::parse(text, resolve);\n"
      "json v = json::parse(text, nullptr, false);\n"
      "J doc = J::parse(in.json);\n"
      "auto s = nlohmann::json::parse(summary_text);\n"
      "nlohmann::ordered_json::sax_parse(text, &dom);\n"
      "bool ok = json::accept(text);\n"
      "json c = json::from_cbor(bytes);\n"
      "auto k = R\"({\"a\": 1})\"_json;\n"
      "in >> doc;\n"
      "std::uint64_t bits = word >> shift;\n";
  const std::vector<std::string> found = json_parses("sim/x/planted.cpp", planted);
  REQUIRE(found.size() == 8);
  CHECK(found[0] == "sim/x/planted.cpp:3: json v = json::parse(text, nullptr, false);");
  CHECK(found[1] == "sim/x/planted.cpp:4: J doc = J::parse(in.json);");
  CHECK(found[2] == "sim/x/planted.cpp:5: auto s = nlohmann::json::parse(summary_text);");
  CHECK(found[3] == "sim/x/planted.cpp:6: nlohmann::ordered_json::sax_parse(text, &dom);");
  CHECK(found[4] == "sim/x/planted.cpp:7: bool ok = json::accept(text);");
  CHECK(found[5] == "sim/x/planted.cpp:8: json c = json::from_cbor(bytes);");
  CHECK(found[6] == "sim/x/planted.cpp:9: auto k = R\"({\"a\": 1})\"_json;");
  CHECK(found[7] == "sim/x/planted.cpp:10: in >> doc;");
}


// The AICore complex calls a phase handler's block_end only when the handler
// says it has one (PhaseHandler::ends_blocks, models/aicore/aicore.h): a
// handler that overrides block_end without saying so would be skipped in
// silence. Every file that overrides block_end must also override
// ends_blocks to answer true.
std::vector<std::string> block_end_without_ends_blocks(const std::string& path, const std::string& text) {
  static const std::regex overrides(R"(void\s+block_end\s*\([^)]*\)\s*(const\s*)?override)");
  static const std::regex says(R"(bool\s+ends_blocks\s*\(\s*\)\s*const\s*override\s*\{\s*return\s+true\s*;\s*\})");
  if (std::regex_search(text, overrides) && !std::regex_search(text, says)) return {path};
  return {};
}

TEST_CASE("every phase handler that overrides block_end says so in ends_blocks") {
  std::vector<std::string> found;
  int overriding = 0;
  for (const source_scan::Source& src : source_scan::sources_under({"models", "sim", "python", "tests"})) {
    if (src.path == "tests/test_layering.cpp") continue;  // the planted text below
    static const std::regex overrides(R"(void\s+block_end\s*\([^)]*\)\s*(const\s*)?override)");
    if (std::regex_search(src.text, overrides)) ++overriding;
    for (const std::string& f : block_end_without_ends_blocks(src.path, src.text)) found.push_back(f);
  }
  INFO(source_scan::listed(found));
  CHECK(found.empty());
  CHECK(overriding >= 1);  // the GM model's: the scan sees it
  // The check sees a handler that forgets it, and passes one that says it.
  CHECK(block_end_without_ends_blocks("m/x.h", "void block_end(int c, const Task& t, int b, Time e) override;\n") ==
        std::vector<std::string>{"m/x.h"});
  CHECK(block_end_without_ends_blocks(
            "m/y.h", "void block_end(int c, const Task& t, int b, Time e) override;\n"
                     "bool ends_blocks() const override { return true; }\n")
            .empty());
}

}  // namespace layering_test
