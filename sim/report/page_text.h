// Small helpers of the pages npusim writes (scope-stats --html, report):
// text escaped for HTML / SVG, and a whole file written at once.
#pragma once

#include <string>

namespace npusim::report {

// `s` with & < > " ' as character references (safe in element text and in
// quoted attribute values of HTML and SVG).
std::string xml_escape(const std::string& s);

// Writes `text` to `path` (replacing it); InputError(path, "", ...) when it
// cannot be written.
void write_file(const std::string& path, const std::string& text);

}  // namespace npusim::report
