// Typed getters in the "expected ..., got <describe_json>" style of the
// trace format's readers: each checks one value and throws the one
// InputError (file, JSON pointer, what was expected). The keyed forms take
// an object, its pointer and a key: the object must hold the key, and a bad
// value is named at the key's own pointer. A reader with values of its own
// (a dtype, a decimal-string id) derives from Getters and adds them here in
// the same style.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "models/common/errors.h"
#include "sim/json/json_util.h"

namespace npusim::json_input {

template <class J>
class Getters {
 public:
  explicit Getters(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }
  [[noreturn]] void fail(const std::string& path, const std::string& what) const { throw InputError(file_, path, what); }

  // The member `key` of `obj` (at `path`): "expected an object" or "missing key".
  const J& field(const J& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, "expected an object, got " + describe_json(obj));
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, std::string("missing key \"") + key + "\"");
    return *it;
  }
  // The member `key` of `obj`, or nullptr.
  static const J* opt(const J& obj, const char* key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  const J& list(const J& v, const std::string& path) const {
    if (!v.is_array()) fail(path, "expected a list, got " + describe_json(v));
    return v;
  }
  const J& list(const J& obj, const std::string& path, const char* key) const {
    return list(field(obj, path, key), pointer_join(path, key));
  }
  // fn(element, its pointer) for each element of the list `key` of `obj`.
  template <class Fn>
  void each(const J& obj, const std::string& path, const char* key, Fn&& fn) const {
    const std::string at = pointer_join(path, key);
    const J& v = list(obj, path, key);
    for (std::size_t i = 0; i < v.size(); ++i) fn(v[i], pointer_join(at, i));
  }
  // A JSON integer in [lo, hi].
  std::int64_t integer(const J& v, const std::string& path, std::int64_t lo, std::int64_t hi) const {
    std::int64_t i = 0;
    if (!json_int64(v, i) || i < lo || i > hi)
      fail(path, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                     describe_json(v));
    return i;
  }
  std::int64_t integer(const J& obj, const std::string& path, const char* key, std::int64_t lo, std::int64_t hi) const {
    return integer(field(obj, path, key), pointer_join(path, key), lo, hi);
  }
  std::string string(const J& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a string, got " + describe_json(v));
    return v.template get<std::string>();
  }
  std::string string(const J& obj, const std::string& path, const char* key) const {
    return string(field(obj, path, key), pointer_join(path, key));
  }

 private:
  std::string file_;
};

}  // namespace npusim::json_input
