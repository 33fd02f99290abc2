#include "sim/json/json_input.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "sim/json/json_read.h"
#include "sim/json/json_util.h"
#include "sim/json/stream.h"

namespace npusim::json_input {
namespace {

using nlohmann::json;

// nlohmann messages start with "[json.exception.parse_error.101] "; drop it.
std::string strip_exception_id(const std::string& what) {
  if (!what.empty() && what[0] == '[') {
    auto end = what.find("] ");
    if (end != std::string::npos) return what.substr(end + 2);
  }
  return what;
}

// The number token starting at `i` of JSON text.
std::string number_token(const std::string& text, std::size_t i) {
  std::size_t j = i;
  while (j < text.size() && std::strchr("+-.0123456789eE", text[j]) && text[j] != '\0') ++j;
  return text.substr(i, j - i);
}

// Offset of the first number (outside strings) whose value is beyond a
// double's range, or text.size().
std::size_t first_overflowing_number(const std::string& text) {
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::string token = number_token(text, i);
      if (std::isinf(std::strtod(token.c_str(), nullptr))) return i;
      i += token.size() - 1;
    }
  }
  return text.size();
}

InputError too_deep(const std::string& file, const std::string& pointer) {
  return InputError(file, pointer,
                    "JSON nested too deeply (more than " + std::to_string(kMaxJsonNesting) +
                        " levels of objects and lists)");
}

}  // namespace

json parse(const std::string& text, const std::string& file) {
  JsonDom<json> dom;
  if (dom.parse(text)) return dom.take();
  switch (dom.error) {
    case JsonDom<json>::Error::Duplicate:
      throw InputError(file, dom.error_pointer,
                       "duplicate key \"" + dom.error_key + "\" (each key may appear once per object)");
    case JsonDom<json>::Error::Nesting:
      throw too_deep(file, dom.error_pointer);
    default:
      if (dom.error_id == 406)  // a number beyond a double's range ("1e400")
        throw InputError(file, "", "invalid JSON: " + strip_exception_id(dom.error_text) + " (beyond a double's range)");
      throw InputError(file, "", "invalid JSON: " + strip_exception_id(dom.error_text));
  }
}

json read_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, "", "file not found");
  return parse(read_text(path, path, kMaxFileBytes, "JSON file"), path);
}

// The document `dom` parsed from `text`, or the trace format's error for its
// failure.
static nlohmann::ordered_json document_or_error(JsonDom<nlohmann::ordered_json>& dom, const std::string& text, const std::string& file) {
  auto at = [&](std::size_t idx) {
    std::size_t line = 1, line_start = 0;
    for (std::size_t i = 0; i < idx; ++i)
      if (text[i] == '\n') ++line, line_start = i + 1;
    return "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(idx - line_start + 1);
  };
  if (dom.parse(text)) return dom.take();
  if (dom.error == JsonDom<nlohmann::ordered_json>::Error::Duplicate)
    throw InputError(file, pointer_join(dom.error_pointer, dom.error_key), "duplicate key \"" + dom.error_key + "\"");
  if (dom.error == JsonDom<nlohmann::ordered_json>::Error::Nesting) throw too_deep(file, dom.error_pointer);
  if (dom.error_id == 406) {
    // A number beyond a double's range ("1e400"): nlohmann says which text but
    // not where; it is the first such number outside strings.
    std::size_t idx = first_overflowing_number(text);
    std::string number = idx < text.size() ? number_token(text, idx) : std::string();
    throw InputError(file, "", (idx < text.size() ? at(idx) : std::string("invalid JSON")) +
                                   ": number " + number + " is out of range (beyond a double's range)");
  }
  std::size_t idx = std::min<std::size_t>(dom.error_at == 0 ? 0 : dom.error_at - 1, text.size());
  const std::string& what = dom.error_text;
  std::size_t p = what.find("parse error");
  p = p == std::string::npos ? std::string::npos : what.find(": ", p);
  std::string detail = p == std::string::npos ? what : what.substr(p + 2);
  throw InputError(file, "", at(idx) + ": " + detail);
}

nlohmann::ordered_json parse_document(const std::string& text, const std::string& file) {
  JsonDom<nlohmann::ordered_json> dom;
  return document_or_error(dom, text, file);
}

nlohmann::ordered_json parse_document_skimming(const std::string& text, const std::string& file,
                                               const std::string& skip_key, bool* skipped) {
  // The quick scan accepts the whole text (stream.h): the document is the
  // text without the list's elements, which JsonDom with the skip key would
  // have checked and dropped. Anything the scan does not accept is left to
  // JsonDom, for its error or its yes.
  std::size_t list_at = 0, list_end = 0;
  if (quick_accept(text, skip_key, &list_at, &list_end) && list_at != std::string::npos) {
    std::string rest;
    rest.reserve(text.size() - (list_end - list_at) + 2);
    rest.append(text, 0, list_at).append("[]").append(text, list_end, std::string::npos);
    JsonDom<nlohmann::ordered_json> dom;
    if (dom.parse(rest)) {
      if (skipped) *skipped = true;
      return dom.take();
    }
  }
  JsonDom<nlohmann::ordered_json> dom(skip_key);
  nlohmann::ordered_json root = document_or_error(dom, text, file);
  if (skipped) *skipped = dom.skipped;
  return root;
}

nlohmann::ordered_json parse_accepted(std::string_view text) {
  nlohmann::ordered_json quick;
  try {
    if (quick_parse(text, quick)) return quick;
  } catch (const std::bad_alloc&) {
    dismantle(quick);  // see dismantle: freeing must not allocate
    throw;
  }
  dismantle(quick);
  JsonDom<nlohmann::ordered_json> dom;
  if (!dom.parse(std::string(text))) throw std::logic_error("JSON text a parser accepted did not parse again");
  return dom.take();
}

json read_output(const std::string& path) {
  std::ifstream in(path);
  return in ? json::parse(in, nullptr, false) : json();
}

json parse_or_discarded(const std::string& text) { return json::parse(text, nullptr, false); }

json parse_own(const std::string& text) { return json::parse(text); }

nlohmann::ordered_json parse_own_ordered(const std::string& text) { return nlohmann::ordered_json::parse(text); }

json unordered(const nlohmann::ordered_json& v) { return json::parse(v.dump()); }

std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::string: {
      std::string s = v.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "string " + json(s).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    case json::value_t::array: return "a list of " + std::to_string(v.size());
    case json::value_t::object: return "an object";
    default: return "number " + v.dump();
  }
}

}  // namespace npusim::json_input
