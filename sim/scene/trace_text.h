// Writing a trace as a reviewable file (npusim record, npusim import): one
// kernel, one tensor and one operation per line, scopes nested.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::scene {

struct TraceText {
  std::string name;
  std::vector<std::pair<std::string, nlohmann::ordered_json>> header;   // extra top-level keys (x_..., run)
  std::vector<std::pair<std::string, nlohmann::ordered_json>> kernels;
  std::vector<std::pair<std::string, nlohmann::ordered_json>> tensors;
  // The program, flat: {"op": "scope", ...} opens a scope (its "body" is
  // filled from the ops that follow), {"op": "end"} closes it; scopes still
  // open at the end are closed.
  std::vector<nlohmann::ordered_json> ops;
};

void write_trace(std::ostream& o, const TraceText& t);

}  // namespace npusim::scene
