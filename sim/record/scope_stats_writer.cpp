// scope_stats/scope_stats.jsonl, schema version 6 (simpler docs/dfx/scope-stats.md).
//
// Records stream to a scratch file as scopes open and close; the metadata line
// (which needs the record count and the run's end state) is written first in
// finish(), followed by the records.
#include <filesystem>

#include "sim/record/json_out.h"
#include "sim/record/writer.h"

namespace npusim::record {
namespace {

constexpr const char* kScopeStatsFile = "scope_stats/scope_stats.jsonl";
constexpr std::size_t kMaxBasename = 31;  // the device's site buffer

// The site as the device records it (scope_stats_collector_aicpu.cpp,
// copy_basename, and the host's "%.*s:%d"): the basename of the scope's
// file (after the last '/' or '\\', at most 31 characters), ':' and the line
// as a decimal int. The runtime's sites are __FILE__ and __LINE__; a trace's
// site that does not end in ":<line>" is all file name, at line 0, as is
// the root scope's "(unknown):0".
void put_site(JsonBuf& out, std::string_view site) {
  std::string_view file = site;
  std::int64_t line = 0;
  const std::size_t colon = site.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < site.size() && site.size() - colon - 1 <= 10) {
    std::int64_t v = 0;
    bool digits = true;
    for (char c : site.substr(colon + 1)) {
      digits = digits && c >= '0' && c <= '9';
      v = v * 10 + (c - '0');
    }
    if (digits && v <= 2147483647) {
      file = site.substr(0, colon);
      line = v;
    }
  }
  const std::size_t slash = file.find_last_of("/\\");
  if (slash != std::string_view::npos) file.remove_prefix(slash + 1);
  if (file.empty() && site.empty()) file = "(unknown)";
  out.raw(file.substr(0, kMaxBasename)).ch(':').i(line);
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
  ScopeStatsWriter(const std::string& dir, int gzip_level)
      : OutputWriter(dir, gzip_level), rows_(dir, "scope_stats") {
    rows_.hold_in_memory();  // appended to the file in finish()
  }

  void on_scope_sample(const ScopeSample& x) override {
    // The site's quoted text, kept for the next sample of the same site
    // (a scope's begin and end, a loop's scopes: the same few sites).
    const std::string_view site = x.site ? std::string_view(*x.site) : std::string_view();
    if (!site_valid_ || site != last_site_) {
      last_site_.assign(site);
      site_valid_ = true;
      site_.clear();
      put_site(site_, site);
      quoted_.clear();
      quoted_.str(site_.text());
    }
    {
      // The quoted site, 177 bytes of text, nine integers.
      JsonBuf::Direct d(rows_, quoted_.size() + 384);
      d.raw("{\"site\": ").raw(quoted_.text());
      if (x.begin) d.raw(", \"phase\": \"begin\"");
      else d.raw(", \"phase\": \"end\"");
      d.raw(", \"depth\": ").i(x.depth);
      d.raw(", \"ring\": ").i(x.ring);
      d.raw(", \"task_window_start\": ").u(x.task_window_start);
      d.raw(", \"task_window_end\": ").u(x.task_window_end);
      d.raw(", \"heap_start\": ").u(x.heap_start);
      d.raw(", \"heap_end\": ").u(x.heap_end);
      d.raw(", \"dep_pool_start\": ").u(x.dep_pool_start);
      d.raw(", \"dep_pool_end\": ").u(x.dep_pool_end);
      d.raw(", \"tensormap\": ").u(x.tensormap).raw("}\n");
    }
    rows_.commit();
    ++total_;
  }

  void finish(const RunInfo& info) override {
    std::filesystem::create_directories(dir() + "/scope_stats");
    OutFile out(dir() + "/" + output_name(kScopeStatsFile), gzip_level());
    RunConfig none;
    const RunConfig& c = info.config ? *info.config : none;
    out.raw("{\"version\": 6, \"fatal\": ").boolean(fatal_);
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

  std::vector<std::string> files() const override { return {output_name(kScopeStatsFile)}; }

  // The header's fatal_latched is set by scope_stats_on_fatal, which only
  // the orchestrator's report_fatal calls (orch_report_fatal_v): the
  // allocator and pool deadlocks and the scheduler latch their codes without it.
  void on_error(const LatchedError& e) override { fatal_ = fatal_ || via_report_fatal(e.code, e.message); }

 private:
  bool fatal_ = false;
  ScratchFile rows_;
  JsonBuf site_, quoted_;      // the last sample's site: as the device prints it, then quoted
  std::string last_site_;      // ... and as the sample named it
  bool site_valid_ = false;
  std::uint64_t total_ = 0;
};

}  // namespace

std::unique_ptr<OutputWriter> make_scope_stats_writer(const std::string& staging_dir, int gzip_level) {
  return std::make_unique<ScopeStatsWriter>(staging_dir, gzip_level);
}

}  // namespace npusim::record
