#include "sim/json/stream.h"

#include <nlohmann/json.hpp>

namespace npusim::json_input {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_space(std::string_view t, std::size_t i) {
  while (i < t.size() && is_space(t[i])) ++i;
  return i;
}

// `i` at a string's opening quote: the offset after its closing quote.
std::size_t skip_string(std::string_view t, std::size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') ++i;
    else if (t[i] == '"') return i + 1;
  }
  return t.size();
}

// `i` at a value: the offset after it.
std::size_t skip_value(std::string_view t, std::size_t i) {
  int depth = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == '"') {
      i = skip_string(t, i);
      if (depth == 0) return i;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return i;  // a scalar's end at its container's close
      if (--depth == 0) return i + 1;
    } else if (depth == 0 && (c == ',' || is_space(c))) {
      return i;
    }
    ++i;
  }
  return i;
}

// The decoded text of the JSON string starting at `i` (at its quote); the
// text was accepted by a parser, so the token is a valid string.
std::string decode_key(std::string_view t, std::size_t i) {
  return nlohmann::json::parse(t.substr(i, skip_string(t, i) - i)).get<std::string>();
}

}  // namespace

std::size_t json_member_at(std::string_view text, std::string_view key) {
  std::size_t i = skip_space(text, 0);
  if (i >= text.size() || text[i] != '{') return std::string_view::npos;
  i = skip_space(text, i + 1);
  while (i < text.size() && text[i] == '"') {
    const std::string k = decode_key(text, i);
    i = skip_space(text, skip_string(text, i));
    i = skip_space(text, i + 1);  // ':'
    if (k == key) return i;
    i = skip_space(text, skip_value(text, i));
    if (i < text.size() && text[i] == ',') i = skip_space(text, i + 1);
  }
  return std::string_view::npos;
}

JsonListCursor::JsonListCursor(std::string_view text, std::size_t at) : text_(text), pos_(at + 1) {}

bool JsonListCursor::next(std::string_view& element) {
  if (done_) return false;
  pos_ = skip_space(text_, pos_);
  if (pos_ >= text_.size() || text_[pos_] == ']') {
    done_ = true;
    return false;
  }
  const std::size_t end = skip_value(text_, pos_);
  element = text_.substr(pos_, end - pos_);
  pos_ = skip_space(text_, end);
  if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
  return true;
}

}  // namespace npusim::json_input
