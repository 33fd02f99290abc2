// Reading JSON input in linear time and bounded memory: every reader of
// JSON input reads its text with read_text and has its document built with
// JsonDom by one of json_input.h's parse entries.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/json/json_util.h"

namespace npusim::json_input {

// The whole text of `path` (a file, a FIFO, a device; "-" = standard input),
// read once. Throws InputError naming `shown`: it cannot be opened or read,
// it is a folder ("is a folder, not a <what>"), it holds more than `max`
// bytes, or a NUL byte (no JSON text does: /dev/zero and binary files stop
// at their first block).
std::string read_text(const std::string& path, const std::string& shown, std::uint64_t max, const char* what);

// "" when `path` is a regular file (or a link to one); else what it is, for a
// message that `path` names: "no such file", "is a folder, not a <what>",
// "is a character device, not a <what>" (a block device, a FIFO, a socket).
std::string not_a_regular_file(const std::string& path, const char* what);

// The files this process has read as its inputs, by device and inode, so
// that no output replaces one (record::WholeFile refuses such a target).
// read_text notes every file it reads; a reader that opens a file its own
// way notes it here. A path that cannot be stat'ed is not noted.
void note_input(const std::string& path);
// The path an input was noted under if `path` is the same file, else "".
std::string noted_input(const std::string& path);

constexpr int kMaxJsonNesting = 256;  // levels of objects and lists

// Empties `j` without allocating. nlohmann's destructor flattens a container
// into a std::vector as large as its biggest list, so destroying a document
// holding a long list needs that much memory again: on the way out of an
// out-of-memory error it would fail inside a destructor (std::terminate).
// Recursion is bounded by kMaxJsonNesting.
template <class J>
void dismantle(J& j) noexcept {
  if (j.is_array()) {
    auto& a = j.template get_ref<typename J::array_t&>();
    for (J& c : a) dismantle(c);
    a.clear();
  } else if (j.is_object()) {
    for (auto& kv : j.items()) dismantle(kv.value());
    j.template get_ref<typename J::object_t&>().clear();
  }
}

// A document built from nlohmann's parser events (its SAX interface), in
// time linear in the text. nlohmann's own parser with a callback rescans the
// parent container after every value, and ordered_json's objects look keys
// up linearly: both are quadratic on a long list or object. A duplicate key
// or nesting deeper than kMaxJsonNesting stops the parse with `error` set.
// With a skip key (the trace's "program", docs/trace-format.md "How a trace
// is loaded"), the elements of the root object's member of that name, when
// it is a list, are checked as any other value (syntax, duplicate keys,
// nesting: the same errors) and not kept: the document holds an empty list
// there, `skipped` is true and `skipped_count` counts them.
template <class J>
class JsonDom : public nlohmann::json_sax<J> {
 public:
  enum class Error { None, Syntax, Duplicate, Nesting };
  Error error = Error::None;
  std::string error_pointer;  // Duplicate: the object; Nesting: the container
  std::string error_key;      // Duplicate
  std::size_t error_at = 0;   // Syntax: byte offset
  int error_id = 0;           // Syntax: nlohmann's exception id (406: a number out of range)
  std::string error_text;     // Syntax: nlohmann's message
  bool skipped = false;           // the skip key's member was a list, its elements dropped
  std::size_t skipped_count = 0;  // its elements

  JsonDom() = default;
  explicit JsonDom(std::string skip_key) : skip_key_(std::move(skip_key)), skipping_(true) {}

  // Parses `text`; false on an error (see the fields above).
  bool parse(const std::string& text) {
    try {
      J::sax_parse(text, this);
    } catch (const std::bad_alloc&) {
      frames_.clear();
      dismantle(root_);  // the partial document goes without allocating
      throw;
    }
    return error == Error::None;
  }
  J take() { return std::move(root_); }

  bool null() override { return add(J(nullptr)); }
  bool boolean(bool v) override { return add(J(v)); }
  bool number_integer(typename J::number_integer_t v) override { return add(J(v)); }
  bool number_unsigned(typename J::number_unsigned_t v) override { return add(J(v)); }
  bool number_float(typename J::number_float_t v, const typename J::string_t&) override { return add(J(v)); }
  bool string(typename J::string_t& v) override { return add(J(std::move(v))); }
  bool binary(typename J::binary_t& v) override { return add(J(std::move(v))); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(typename J::string_t& k) override {
    Frame& top = frames_.back();
    bool duplicate;
    if (top.count < kLinearKeys && top.keys.empty()) {
      // Few keys: a scan is cheaper than a set (of the object, or of the
      // keys seen in a dropped one).
      if (top.value) {
        duplicate = top.value->contains(k);
      } else {
        duplicate = false;
        for (const std::string& s : top.few) duplicate = duplicate || s == k;
        if (!duplicate) top.few.push_back(k);
      }
    } else {
      if (top.keys.empty()) {
        if (top.value)
          for (const auto& kv : top.value->items()) top.keys.insert(kv.key());
        else
          for (std::string& s : top.few) top.keys.insert(std::move(s));
      }
      duplicate = !top.keys.insert(k).second;
    }
    if (duplicate) {
      error = Error::Duplicate;
      error_pointer = pointer(frames_.size());
      error_key = k;
      return false;
    }
    top.key = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    error = Error::Syntax;
    error_at = position;
    error_id = ex.id;
    error_text = ex.what();
    return false;
  }

 private:
  static constexpr std::size_t kLinearKeys = 8;
  struct Frame {
    J* value = nullptr;     // nullptr: inside the skipped list (checked, not kept)
    bool object = false;
    std::size_t count = 0;                 // members or elements so far
    std::string key;                       // objects: the current key
    std::vector<std::string> few;          // a dropped object's keys while there are few
    std::unordered_set<std::string> keys;  // objects with more than kLinearKeys keys: all of them
  };

  // Places `v` in the innermost container (or as the root); returns where
  // (nullptr inside the skipped list, where nothing is kept).
  J* place(J&& v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& top = frames_.back();
    ++top.count;
    if (!top.value || frames_.size() == skip_depth_) return nullptr;
    if (top.object) return &append_member(top.value->template get_ref<typename J::object_t&>(), v, top);
    auto& a = top.value->template get_ref<typename J::array_t&>();
    a.push_back(std::move(v));
    return &a.back();
  }
  // ordered_json: append (no linear lookup; the key is new); json: insert.
  J& append_member(typename J::object_t& obj, J& v, Frame& top) {
    if constexpr (std::is_base_of_v<std::vector<std::pair<const std::string, J>>, typename J::object_t>) {
      auto& members = static_cast<std::vector<std::pair<const std::string, J>>&>(obj);
      members.emplace_back(top.key, std::move(v));
      return members.back().second;
    } else {
      return obj.emplace(top.key, std::move(v)).first->second;
    }
  }
  bool add(J&& v) {
    place(std::move(v));
    return true;
  }
  bool open(bool object) {
    // The skip key's list, in the root object: kept as an empty list, its
    // elements (and all inside them) checked and dropped.
    const bool skip_this =
        skipping_ && !object && frames_.size() == 1 && frames_[0].object && frames_[0].key == skip_key_;
    Frame f;
    f.object = object;
    f.value = place(object ? J::object() : J::array());  // filled in place: its parent does not grow until it is closed
    frames_.push_back(std::move(f));
    if (skip_this) {
      skipped = true;
      skip_depth_ = frames_.size();
    }
    if (frames_.size() > static_cast<std::size_t>(kMaxJsonNesting)) {
      error = Error::Nesting;
      error_pointer = pointer(frames_.size());
      return false;
    }
    return true;
  }
  bool close() {
    if (skip_depth_ == frames_.size()) {
      skipped_count = frames_.back().count;
      skip_depth_ = 0;
    }
    frames_.pop_back();
    return true;
  }
  // Pointer of the container frames_[n - 1] (for messages only).
  std::string pointer(std::size_t n) const {
    std::string path;
    for (std::size_t i = 1; i < n; ++i) {
      const Frame& parent = frames_[i - 1];
      path = parent.object ? pointer_join(path, parent.key) : pointer_join(path, parent.count - 1);
    }
    return path;
  }

  std::string skip_key_;
  bool skipping_ = false;       // constructed with a skip key
  std::size_t skip_depth_ = 0;  // frames_.size() of the skipped list while inside it, else 0
  J root_;
  std::vector<Frame> frames_;
};

}  // namespace npusim::json_input
