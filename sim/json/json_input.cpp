#include "sim/json/json_input.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "sim/json/json_read.h"
#include "sim/json/json_util.h"

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

}  // namespace

json parse(const std::string& text, const std::string& file) {
  config::JsonDom<json> dom;
  if (dom.parse(text)) return dom.take();
  switch (dom.error) {
    case config::JsonDom<json>::Error::Duplicate:
      throw InputError(file, dom.error_pointer,
                       "duplicate key \"" + dom.error_key + "\" (each key may appear once per object)");
    case config::JsonDom<json>::Error::Nesting:
      throw InputError(file, dom.error_pointer,
                       "JSON nested too deeply (more than " + std::to_string(config::kMaxJsonNesting) +
                           " levels of objects and lists)");
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
  return parse(config::read_text(path, path, kMaxFileBytes, "JSON file"), path);
}

std::string child(const std::string& base, const std::string& key) { return config::pointer_join(base, key); }

std::string child(const std::string& base, std::size_t index) { return config::pointer_join(base, index); }

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
