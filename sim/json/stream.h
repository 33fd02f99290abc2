// Reading one long list of a JSON document without holding it as a document
// (docs/trace-format.md, "How a trace is loaded"): the checking pass is
// JsonDom with a skip key (json_read.h), which builds the document but for
// the elements of one list member of the root object, checked and dropped;
// here, a cursor that hands that list's elements out one at a time as text,
// once the checking pass has accepted the whole text. Both have a quick path
// for the plain text a trace generator writes (quick_accept, quick_parse):
// whatever it does not recognise at once goes the way above, so every
// message stays that parser's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/json/json_read.h"
#include "sim/json/json_util.h"

namespace npusim::json_input {

// Offset in `text` (a JSON object, already accepted by a parser) of the value
// of its member `key`, or npos. Keys are compared decoded.
std::size_t json_member_at(std::string_view text, std::string_view key);

// A quick scan of `text` that says yes only when JsonDom (json_read.h) would
// accept the whole text without an error: JSON syntax, no object repeating a
// key, no nesting beyond kMaxJsonNesting, no number beyond a double's range.
// It says no to what it does not check itself (any byte outside printable
// ASCII but white space, a \u escape, an escape in a key), so that a no
// costs only a parse the old way, which finds the error or accepts the text.
// On yes, when the root is an object whose member `list_key` is a list,
// *list_at and *list_end are the offsets of that list's '[' and just after
// its ']' (else npos both).
bool quick_accept(std::string_view text, std::string_view list_key, std::size_t* list_at, std::size_t* list_end);

// `text` (one value of a text quick_accept or JsonDom accepted) as the
// ordered document JsonDom builds, without nlohmann's lexer and parser: the
// same values, key order and number types (a non-negative integer unsigned,
// a negative one signed). False, `out` unspecified, on what it leaves to
// JsonDom: a string with an escape, a number with a fraction or an exponent,
// an integer of more than 18 digits.
bool quick_parse(std::string_view text, nlohmann::ordered_json& out);

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
