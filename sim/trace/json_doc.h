// The JSON side of the trace loader, for the readers that share its rules
// (scenes, sim/scene): the kernel and tensor definitions of the trace format.
// The document parser with the format's limits and messages is
// json_input::parse_document (sim/json/json_input.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/trace/trace.h"

namespace npusim::trace {

// A parsed trace document.
Trace trace_from_json(const nlohmann::ordered_json& root, const std::string& file, const std::string& default_name);
// Kernel definitions (a trace's `kernels` object); messages name `path`.
// A MIX kernel's named pipes pair up (each consumer lane pops what each
// producer lane pushes); throws InputError naming `file` and the pipe.
void check_mix_pipes(const KernelDef& k, const std::string& file);

std::vector<std::unique_ptr<KernelDef>> parse_kernels(const nlohmann::ordered_json& defs, const std::string& file,
                                                      const std::string& path);
// One external tensor definition ({"shape", "dtype", "data" | "fill"}).
ExternalTensor parse_tensor(const nlohmann::ordered_json& def, const std::string& name, const std::string& file,
                            const std::string& path);

}  // namespace npusim::trace
