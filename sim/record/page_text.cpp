#include "sim/record/page_text.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "models/common/errors.h"

namespace npusim::record {

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

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (f) f << text;
  if (f) f.close();
  if (!f) throw InputError(path, "", std::string("cannot write the file: ") + std::strerror(errno));
}

}  // namespace npusim::record
