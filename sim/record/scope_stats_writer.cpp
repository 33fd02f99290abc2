// scope_stats/scope_stats.jsonl, schema version 6 (runtime-semantics.md §8.1).
//
// Records stream to a scratch file as scopes open and close; the metadata line
// (which needs the record count and the run's end state) is written first in
// finish(), followed by the records.
#include <filesystem>

#include "sim/record/json_out.h"
#include "sim/record/writer.h"

namespace npusim::record {
namespace {

constexpr const char* kFile = "scope_stats/scope_stats.jsonl";
constexpr std::size_t kMaxBasename = 31;  // the device's site buffer

// "basename:line" as the device prints it: the file's basename (at most 31
// characters) and the line; a scope without a site is "(unknown):0".
std::string_view site_name(std::string_view site, std::string_view& line) {
  line = {};
  if (site.empty()) return "(unknown):0";
  std::size_t colon = site.rfind(':');
  std::string_view file = site;
  if (colon != std::string_view::npos) {
    file = site.substr(0, colon);
    line = site.substr(colon);
  }
  std::size_t slash = file.rfind('/');
  if (slash != std::string_view::npos) file.remove_prefix(slash + 1);
  return file.substr(0, kMaxBasename);
}

void put_ring_array(JsonBuf& b, const RingValues& values) {
  b.ch('[');
  for (int r = 0; r < kNumRings; ++r) {
    if (r) b.raw(", ");
    b.u(values[r]);
  }
  b.ch(']');
}

class ScopeStatsWriter : public OutputWriter {
 public:
  explicit ScopeStatsWriter(const std::string& dir) : OutputWriter(dir), rows_(dir, "scope_stats") {}

  void on_scope_sample(const ScopeSample& x) override {
    std::string_view line;
    std::string_view file = site_name(x.site ? std::string_view(*x.site) : std::string_view(), line);
    site_.clear();
    site_.raw(file).raw(line);
    rows_.raw("{\"site\": ").str(site_.text());
    rows_.raw(x.begin ? ", \"phase\": \"begin\"" : ", \"phase\": \"end\"");
    rows_.raw(", \"depth\": ").i(x.depth);
    rows_.raw(", \"ring\": ").i(x.ring);
    rows_.raw(", \"task_window_start\": ").u(x.task_window_start);
    rows_.raw(", \"task_window_end\": ").u(x.task_window_end);
    rows_.raw(", \"heap_start\": ").u(x.heap_start);
    rows_.raw(", \"heap_end\": ").u(x.heap_end);
    rows_.raw(", \"dep_pool_start\": ").u(x.dep_pool_start);
    rows_.raw(", \"dep_pool_end\": ").u(x.dep_pool_end);
    rows_.raw(", \"tensormap\": ").u(x.tensormap).raw("}\n");
    rows_.commit();
    ++total_;
  }

  void finish(const RunInfo& info) override {
    std::filesystem::create_directories(dir() + "/scope_stats");
    OutFile out(dir() + "/" + kFile);
    RunConfig none;
    const RunConfig& c = info.config ? *info.config : none;
    out.raw("{\"version\": 6, \"fatal\": ").boolean(info.fatal);
    out.raw(", \"dropped\": 0, \"total\": ").u(total_);
    out.raw(", \"task_window_max\": ");
    put_ring_array(out, c.task_window);
    out.raw(", \"heap_max\": ");
    put_ring_array(out, c.heap);
    out.raw(", \"dep_pool_max\": ");
    put_ring_array(out, c.dep_pool);
    out.raw(", \"tensormap_max\": ").u(c.tensormap_pool).raw("}\n");
    out.append(rows_);
    out.close();
  }

  std::vector<std::string> files() const override { return {kFile}; }

 private:
  ScratchFile rows_;
  JsonBuf site_;
  std::uint64_t total_ = 0;
};

}  // namespace

std::unique_ptr<OutputWriter> make_scope_stats_writer(const std::string& staging_dir) {
  return std::make_unique<ScopeStatsWriter>(staging_dir);
}

}  // namespace npusim::record
