// Reading one long list of a JSON document without holding it as a document
// (docs/trace-format.md, "How a trace is loaded"): the checking pass is
// JsonDom with a skip key (json_read.h), which builds the document but for
// the elements of one list member of the root object, checked and dropped;
// here, a cursor that hands that list's elements out one at a time as text,
// once the checking pass has accepted the whole text.
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
