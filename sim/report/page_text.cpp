#include "sim/report/page_text.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "models/common/errors.h"
#include "sim/record/whole_file.h"

namespace npusim::report {

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

void write_file(const std::string& path, const std::string& text) { record::write_whole(path, text); }

}  // namespace npusim::report
