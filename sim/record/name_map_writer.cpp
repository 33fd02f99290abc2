// name_map_<trace name>.json (simpler docs/dfx/profiling-name-map.md): func_id -> kernel
// name at level 2, for the swimlane converter's --func-names. Everything it
// needs is known at the end of the run, so it observes no events.
#include <algorithm>

#include "sim/record/json_out.h"
#include "sim/record/writer.h"

namespace npusim::record {
namespace {

class NameMapWriter : public OutputWriter {
 public:
  using OutputWriter::OutputWriter;
  std::uint32_t hooks() const override { return 0; }  // no event: the fan-out never calls it

  void finish(const RunInfo& info) override {
    // The engine gives the safe component (engine::file_component); a writer
    // driven directly (tests) may leave it empty: the trace name is used.
    file_ = "name_map_" + (info.trace_file_name.empty() ? info.trace_name : info.trace_file_name) + ".json";
    std::vector<const KernelDef*> kernels;
    for (const KernelDef* k : info.kernels)
      if (k && !k->composed()) kernels.push_back(k);  // a composed MIX kernel's lanes are listed as themselves
    std::stable_sort(kernels.begin(), kernels.end(),
                     [](const KernelDef* a, const KernelDef* b) { return a->func_id < b->func_id; });
    OutFile out(dir() + "/" + file_);
    out.raw("{\"level\": 2, \"orchestrator_name\": ").str(info.trace_name);
    out.raw(", \"callable_id_to_name\": {");
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      if (k) out.raw(", ");
      out.qi(kernels[k]->func_id).raw(": ").str(kernels[k]->name);
    }
    out.raw("}}\n");
    out.close();
  }

  std::vector<std::string> files() const override {
    if (file_.empty()) return {};
    return {file_};
  }

 private:
  std::string file_;  // known once the trace name is (finish)
};

}  // namespace

std::unique_ptr<OutputWriter> make_name_map_writer(const std::string& staging_dir) {
  return std::make_unique<NameMapWriter>(staging_dir);
}

}  // namespace npusim::record
