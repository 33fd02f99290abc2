#include "sim/platform/json_input.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "sim/config/json_util.h"

namespace npusim::json_input {
namespace {

using nlohmann::json;

// Thrown from the parser callback; turned into an InputError by parse().
struct DuplicateKey {
  std::string pointer;
  std::string key;
};

// Tracks the JSON Pointer of the element being parsed, from parser events.
class PointerTracker {
 public:
  bool on_event(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        begin_element();
        frames_.push_back(Frame{event == json::parse_event_t::array_start, 0, {}, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        break;
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        const std::string& key = parsed.get_ref<const std::string&>();
        if (!f.keys.insert(key).second) throw DuplicateKey{pointer_of_parent(), key};
        f.token = key;
        break;
      }
      case json::parse_event_t::value:
        begin_element();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool is_array;
    std::size_t next_index;
    std::string token;  // reference token of the child being parsed
    std::set<std::string> keys;
  };

  // A new element starts in the innermost container: arrays number it.
  void begin_element() {
    if (!frames_.empty() && frames_.back().is_array)
      frames_.back().token = std::to_string(frames_.back().next_index++);
  }

  // Pointer of the innermost container (the object holding the duplicate).
  std::string pointer_of_parent() const {
    std::string p;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) p = child(p, frames_[i].token);
    return p;
  }

  std::vector<Frame> frames_;
};

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
  PointerTracker tracker;
  try {
    return json::parse(text, [&](int, json::parse_event_t event, json& parsed) {
      return tracker.on_event(event, parsed);
    });
  } catch (const DuplicateKey& d) {
    throw InputError(file, d.pointer,
                     "duplicate key \"" + d.key + "\" (each key may appear once per object)");
  } catch (const json::parse_error& e) {
    throw InputError(file, "", "invalid JSON: " + strip_exception_id(e.what()));
  } catch (const json::out_of_range& e) {  // a number beyond a double's range ("1e400")
    throw InputError(file, "", "invalid JSON: " + strip_exception_id(e.what()) + " (beyond a double's range)");
  }
}

json read_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, "", "file not found");
  if (fs::is_directory(path, ec)) throw InputError(path, "", "is a directory, expected a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, "", std::string("cannot read file: ") + std::strerror(errno));
  return parse(text.str(), path);
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
