#include "sim/scene/trace_text.h"

namespace npusim::scene {

using J = nlohmann::ordered_json;

void write_trace(std::ostream& o, const TraceText& t) {
  o << "{\n \"npusim_trace\": 1,\n \"name\": " << J(t.name).dump();
  for (const auto& [key, value] : t.header) o << ",\n " << J(key).dump() << ": " << value.dump();
  auto section = [&](const char* key, const std::vector<std::pair<std::string, J>>& entries) {
    o << ",\n \"" << key << "\": {";
    for (std::size_t i = 0; i < entries.size(); ++i)
      o << (i ? ",\n  " : "\n  ") << J(entries[i].first).dump() << ": " << entries[i].second.dump();
    o << (entries.empty() ? "}" : "\n }");
  };
  section("kernels", t.kernels);
  section("tensors", t.tensors);
  o << ",\n \"program\": [";
  int depth = 1;
  bool first = true;
  auto indent = [&] { return std::string(static_cast<std::size_t>(depth) * 2, ' '); };
  for (const J& op : t.ops) {
    const std::string kind = op.value("op", "");
    if (kind == "end") {
      if (depth == 1) continue;
      --depth;
      o << "\n" << indent() << "]}";
      first = false;
      continue;
    }
    o << (first ? "\n" : ",\n") << indent();
    first = false;
    if (kind == "scope") {
      J s = op;
      s["body"] = J::array();
      std::string text = s.dump();
      o << text.substr(0, text.size() - 2);  // "...\"body\":[" without "]}"
      ++depth;
      first = true;
      continue;
    }
    o << op.dump();
  }
  while (depth > 1) {
    --depth;
    o << "\n" << indent() << "]}";
  }
  o << "\n ]\n}\n";
}

}  // namespace npusim::scene
