// The parse entries of the one JSON input layer: one per kind of document.
// Every JSON text npusim reads is parsed here (tests/test_layering.cpp,
// "no JSON is parsed outside sim/json", checks that nothing else in sim/ or
// python/ parses JSON):
//  - user input, two message styles, both throwing InputError:
//      parse           unordered; "invalid JSON: <nlohmann's message>", a
//                      duplicate key named at its object (platform files,
//                      summaries, worker files, scope statistics);
//      parse_document  ordered; "invalid JSON at line L, column C: ...", a
//                      duplicate key named at itself (the trace format:
//                      traces, scenes, captures; docs/trace-format.md);
//  - a child process's output (a sweep point's summary, the driver's
//    results), which may be missing or cut short: read_output, never throws;
//  - a text npusim wrote itself (a kernel definition it serialised, a worker
//    file it built): parse_own, where a syntax error is a bug (nlohmann's
//    exception, not an InputError);
//  - a grid value that is JSON or else a string: parse_or_discarded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "models/common/errors.h"
#include "sim/json/json_read.h"
#include "sim/json/json_util.h"

namespace npusim::json_input {

// Parses `text`; `file` labels errors. Throws InputError(file, "", "invalid
// JSON: ...") on a syntax error and InputError(file, pointer, "duplicate key
// ...") when an object repeats a key.
nlohmann::json parse(const std::string& text, const std::string& file);

// Reads and parses a file. Throws InputError(path, "", ...) if the file does
// not exist, is a directory, cannot be read or is larger than kMaxFileBytes.
nlohmann::json read_file(const std::string& path);
constexpr std::uint64_t kMaxFileBytes = std::uint64_t(64) << 20;  // a platform file or a summary.json

// JSON text -> document, keys in document order: syntax errors with line and
// column, duplicate keys, nesting and number limits (docs/trace-format.md).
nlohmann::ordered_json parse_document(const std::string& text, const std::string& file);

// parse_document, except that the elements of the root object's member
// `skip_key`, when it is a list, are checked (the same errors) and not kept:
// the document holds an empty list there and *skipped is true
// (JsonDom with a skip key, json_read.h; the trace's program, docs/trace-format.md "How a
// trace is loaded"). Plain text takes stream.h's quick_accept to the same
// document; every error is JsonDom's.
nlohmann::ordered_json parse_document_skimming(const std::string& text, const std::string& file,
                                               const std::string& skip_key, bool* skipped);

// One element of a list that parse_document_skimming accepted (its text from
// JsonListCursor): ordered; since the whole text was accepted, a failure here
// is a bug (std::logic_error), never bad input. Plain text is built by
// stream.h's quick_parse, the rest by JsonDom.
nlohmann::ordered_json parse_accepted(std::string_view text);

// The file a child process wrote: null when it cannot be opened, a discarded
// value (is_discarded()) when it is not JSON.
nlohmann::json read_output(const std::string& path);

// `text` as JSON, or a discarded value (is_discarded()) when it is not JSON.
nlohmann::json parse_or_discarded(const std::string& text);

// A JSON text npusim wrote itself; throws nlohmann's parse_error if it is not
// JSON (a bug, never bad input).
nlohmann::json parse_own(const std::string& text);
nlohmann::ordered_json parse_own_ordered(const std::string& text);

// An ordered document as an unordered one (same values).
nlohmann::json unordered(const nlohmann::ordered_json& v);

// A short description of a value for error messages: `string "abc"`,
// `number 2.5`, `true`, `null`, `a list of 3`, `an object` (the "found ..."
// style of platform files, summaries and scope statistics; the trace
// format's "got ..." style is describe_json, json_util.h).
std::string describe(const nlohmann::json& v);

}  // namespace npusim::json_input
