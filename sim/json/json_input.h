// Reading JSON input files with InputError diagnostics: file read and parse
// errors, duplicate keys (rejected; nlohmann would keep the last silently),
// JSON Pointer building, and the "found ..." half of "expected X, found Y".
// Shared by the platform loader and `npusim compare`; usable by any reader of
// user JSON.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "models/common/errors.h"

namespace npusim::json_input {

// Parses `text`; `file` labels errors. Throws InputError(file, "", "invalid
// JSON: ...") on a syntax error and InputError(file, pointer, "duplicate key
// ...") when an object repeats a key.
nlohmann::json parse(const std::string& text, const std::string& file);

// Reads and parses a file. Throws InputError(path, "", ...) if the file does
// not exist, is a directory, cannot be read or is larger than kMaxFileBytes.
nlohmann::json read_file(const std::string& path);
constexpr std::uint64_t kMaxFileBytes = std::uint64_t(64) << 20;  // a platform file or a summary.json

// `base` + "/" + the escaped reference token for `key` (RFC 6901: ~ -> ~0, / -> ~1).
std::string child(const std::string& base, const std::string& key);
std::string child(const std::string& base, std::size_t index);

// A short description of a value for error messages: `string "abc"`,
// `number 2.5`, `true`, `null`, `a list of 3`, `an object`.
std::string describe(const nlohmann::json& v);

}  // namespace npusim::json_input
