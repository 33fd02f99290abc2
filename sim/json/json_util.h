// The rules every strict JSON reader of sim/ shares (part of the one JSON
// input layer, sim/json): JSON pointers (pointer_join, the one pointer
// helper), the annotation rule, "got ..." descriptions, unknown-key
// messages, integer access. Templates so they serve nlohmann::json and
// nlohmann::ordered_json alike.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/errors.h"

namespace npusim::json_input {

// Appends one reference token to a JSON pointer ("~" -> "~0", "/" -> "~1").
// One allocation of the result's size: the loader joins a few dozen
// pointers for every op it compiles (the paths its ops keep for messages).
inline std::string pointer_join(const std::string& path, std::string_view key) {
  std::string s;
  s.reserve(path.size() + 1 + key.size());
  s.append(path).push_back('/');
  if (key.find_first_of("~/") == std::string_view::npos) return s.append(key);
  for (char c : key) {
    if (c == '~') s += "~0";
    else if (c == '/') s += "~1";
    else s += c;
  }
  return s;
}
inline std::string pointer_join(const std::string& path, std::size_t index) {
  char digits[20];
  char* const end = digits + sizeof digits;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + index % 10);
    index /= 10;
  } while (index != 0);
  std::string s;
  s.reserve(path.size() + 1 + static_cast<std::size_t>(end - p));
  s.append(path).push_back('/');
  return s.append(p, end);
}

// Keys that start with "x_" are annotations, ignored everywhere.
inline bool is_annotation_key(const std::string& key) { return key.rfind("x_", 0) == 0; }

// A JSON value as it is shown after "got": scalars as JSON text, containers by kind.
template <class Json>
std::string describe_json(const Json& v) {
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 64) s = s.substr(0, 61) + "...";
  return s;
}

// "a, b, c"
inline std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

// Throws for the first key of `obj` (in its iteration order) that is neither
// in `allowed` nor an annotation: `unknown key "inn" (expected one of: ...)`,
// with the key's own pointer as the path.
template <class Json>
void check_keys(const Json& obj, const std::string& file, const std::string& path,
                const std::vector<std::string>& allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& key = it.key();
    if (is_annotation_key(key)) continue;
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || a == key;
    if (!ok)
      throw InputError(file, pointer_join(path, key),
                       "unknown key \"" + key + "\" (" +
                           (allowed.empty() ? "expected no keys" : "expected one of: " + join_names(allowed)) + ")");
  }
}

// The value as int64 if it is a JSON integer (not a boolean, not a float) in range.
template <class Json>
bool json_int64(const Json& v, std::int64_t& out) {
  if (v.is_number_unsigned()) {
    auto u = v.template get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
    out = static_cast<std::int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    out = v.template get<std::int64_t>();
    return true;
  }
  return false;
}

// The value as uint64 if it is a non-negative JSON integer.
template <class Json>
bool json_uint64(const Json& v, std::uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.template get<std::uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.template get<std::int64_t>() >= 0) {
    out = static_cast<std::uint64_t>(v.template get<std::int64_t>());
    return true;
  }
  return false;
}

}  // namespace npusim::json_input
