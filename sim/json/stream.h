// Reading one long list of a JSON document without holding it as a document
// (docs/trace-format.md, "How a trace is loaded"): a checking pass that builds
// the document but for the elements of one list member of the root object,
// which it checks as JsonDom would (syntax, duplicate keys, nesting) and
// drops; and a cursor that hands that list's elements out one at a time as
// text, once the checking pass has accepted the whole text.
#pragma once

#include <cstddef>
#include <new>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/json/json_read.h"
#include "sim/json/json_util.h"

namespace npusim::json_input {

// A document built from nlohmann's parser events, as JsonDom builds it (the
// same errors, in the same fields), except that the elements of the root
// object's member `skip_key`, when that member is a list, are checked and
// not kept: the document holds an empty list there and `skipped` is true.
template <class J>
class JsonSkimDom : public nlohmann::json_sax<J> {
 public:
  using Error = typename JsonDom<J>::Error;
  Error error = Error::None;
  std::string error_pointer;
  std::string error_key;
  std::size_t error_at = 0;
  int error_id = 0;
  std::string error_text;
  bool skipped = false;         // the member was a list, its elements were dropped
  std::size_t skipped_count = 0;  // its elements

  explicit JsonSkimDom(std::string skip_key) : skip_key_(std::move(skip_key)) {}

  bool parse(const std::string& text) {
    try {
      J::sax_parse(text, this);
    } catch (const std::bad_alloc&) {
      frames_.clear();
      dismantle(root_);
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
      duplicate = false;  // few keys: a scan is cheaper than a set
      for (const std::string& s : top.few) duplicate = duplicate || s == k;
      if (!duplicate) top.few.push_back(k);
    } else {
      if (top.keys.empty())
        for (std::string& s : top.few) top.keys.insert(std::move(s));
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
    J* value = nullptr;  // nullptr: a container inside the skipped list, checked only
    bool object = false;
    bool skipping = false;  // the skipped list itself
    std::size_t count = 0;
    std::string key;
    std::vector<std::string> few;           // the keys while there are few
    std::unordered_set<std::string> keys;   // then all of them
  };

  bool inside_skip() const { return !frames_.empty() && (frames_.back().skipping || !frames_.back().value); }

  // Places `v` in the innermost container (or as the root); returns where
  // (nullptr inside the skipped list).
  J* place(J&& v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& top = frames_.back();
    ++top.count;
    if (top.skipping || !top.value) return nullptr;
    if (top.object) {
      auto& obj = top.value->template get_ref<typename J::object_t&>();
      if constexpr (std::is_base_of_v<std::vector<std::pair<const std::string, J>>, typename J::object_t>) {
        auto& members = static_cast<std::vector<std::pair<const std::string, J>>&>(obj);
        members.emplace_back(top.key, std::move(v));
        return &members.back().second;
      } else {
        return &obj.emplace(top.key, std::move(v)).first->second;
      }
    }
    auto& a = top.value->template get_ref<typename J::array_t&>();
    a.push_back(std::move(v));
    return &a.back();
  }
  bool add(J&& v) {
    if (inside_skip()) {
      ++frames_.back().count;
      return true;
    }
    place(std::move(v));
    return true;
  }
  bool open(bool object) {
    Frame f;
    f.object = object;
    const bool skip_this = !object && frames_.size() == 1 && frames_[0].object && frames_[0].key == skip_key_;
    if (inside_skip()) {
      ++frames_.back().count;
    } else {
      f.value = place(object ? J::object() : J::array());
      f.skipping = skip_this;
      if (skip_this) skipped = true;
    }
    frames_.push_back(std::move(f));
    if (frames_.size() > static_cast<std::size_t>(kMaxJsonNesting)) {
      error = Error::Nesting;
      error_pointer = pointer(frames_.size());
      return false;
    }
    return true;
  }
  bool close() {
    if (frames_.back().skipping) skipped_count = frames_.back().count;
    frames_.pop_back();
    return true;
  }
  std::string pointer(std::size_t n) const {
    std::string path;
    for (std::size_t i = 1; i < n; ++i) {
      const Frame& parent = frames_[i - 1];
      path = parent.object ? pointer_join(path, parent.key) : pointer_join(path, parent.count - 1);
    }
    return path;
  }

  std::string skip_key_;
  J root_;
  std::vector<Frame> frames_;
};

// Offset in `text` (a JSON object, already accepted by a parser) of the value
// of its member `key`, or npos. Keys are compared decoded.
std::size_t json_member_at(std::string_view text, std::string_view key);

// The elements of a list in JSON text already accepted by a parser, one at a
// time: `at` is the offset of the list's '['.
class JsonListCursor {
 public:
  JsonListCursor(std::string_view text, std::size_t at);
  // The next element's text (without surrounding white space); false after
  // the last.
  bool next(std::string_view& element);

 private:
  std::string_view text_;
  std::size_t pos_;
  bool done_ = false;
};

}  // namespace npusim::json_input
