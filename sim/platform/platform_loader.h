// Loads a platform description (platforms/*.json) into a Platform.
#pragma once

#include <string>
#include <vector>

#include "models/common/errors.h"
#include "models/common/platform.h"

namespace npusim::platform {

// `name_or_path`: a file path (contains '/' or ends in ".json"), or a name
// looked up as <dir>/<name>.json in platform_search_dirs(). Throws InputError
// (file, JSON path, expectation) for a missing file or a bad description.
// With `canonical`, also the file in a canonical form (dump(2) and a newline:
// key order and white space do not change it, a changed value does), from
// the same parse.
Platform load_platform(const std::string& name_or_path, std::string* canonical = nullptr);

// Parses platform JSON text; `file` labels messages.
Platform parse_platform(const std::string& text, const std::string& file);

// JSON Pointer of every leaf a platform file must give, in file order
// ("/topology/clusters", ..., "/ffts/flag_ns"); after a successful
// load each of them is a key of Platform::provenance.
std::vector<std::string> platform_field_pointers();

// Where names are looked up, in order: $NPUSIM_PLATFORM_DIR, the directory
// `platforms/` next to the executable's parent, the source tree's
// platforms/ (NPUSIM_SOURCE_DIR), ./platforms.
std::vector<std::string> platform_search_dirs();

}  // namespace npusim::platform
