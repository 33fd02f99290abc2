#include "sim/engine/cli_options.h"

#include <cstdint>
#include <stdexcept>

#include "models/common/errors.h"
#include "sim/config/run_options.h"

namespace npusim::engine {

namespace cfg = npusim::config;

namespace {

// "--compress": none, gzip (level 1: npusim's own fast encoder,
// sim/record/deflate_fast.h) or gzip:1..9 (2..9: libdeflate's); the gzip
// level, 0 for none. Plain gzip is the fast level, not zlib's default 6:
// the outputs are transient traces that Perfetto and the runtime's tools
// read, and compressing must stay cheap beside the simulation (level 1 is
// about three times as fast as 6, docs/outputs.md); gzip:6..9 remain for
// smaller files.
int parse_compress(const std::string& text) {
  if (text == "none") return 0;
  if (text == "gzip") return 1;
  if (text.size() == 6 && text.compare(0, 5, "gzip:") == 0 && text[5] >= '1' && text[5] <= '9') return text[5] - '0';
  throw npusim::InputError(cfg::kCommandLine, "--compress",
                           "expected none, gzip or gzip:LEVEL with LEVEL 1..9, got \"" + text + "\"");
}

// "--max-output": N, or N followed by K, M, G or T (powers of 1024).
std::uint64_t parse_size(const std::string& text, const char* option) {
  std::uint64_t v = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text[i] - '0', &v)) i = text.size() + 1;
  int shift = 0;
  if (i + 1 == text.size()) {
    const char u = static_cast<char>(text[i] & ~0x20);
    shift = u == 'K' ? 10 : u == 'M' ? 20 : u == 'G' ? 30 : u == 'T' ? 40 : -1;
    ++i;
  }
  if (i == 0 || i != text.size() || shift < 0 || (shift && v > (UINT64_MAX >> shift)) || v == 0)
    throw npusim::InputError(cfg::kCommandLine, option,
                             "expected a positive number of bytes (N, or N followed by K, M, G or T), got \"" + text +
                                 "\"");
  return v << shift;
}

}  // namespace

void to_options(RunRequest& req, const SimText& t) {
  if (!t.max_tasks.empty()) {
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = t.max_tasks[0] == '-' ? 0 : std::stoull(t.max_tasks, &used);
    } catch (const std::exception&) {
    }
    if (v == 0 || used != t.max_tasks.size())
      throw npusim::InputError(cfg::kCommandLine, "--max-tasks",
                               "expected a positive integer, got \"" + t.max_tasks + "\"");
    req.max_tasks = v;
  }
  if (!t.max_output.empty()) req.max_output = parse_size(t.max_output, "--max-output");
  if (!t.compress.empty()) req.gzip_level = parse_compress(t.compress);
  if (!t.rtw.empty()) req.cli.ring_task_window = cfg::parse_ring_cli(t.rtw, "ring_task_window");
  if (!t.rh.empty()) req.cli.ring_heap = cfg::parse_ring_cli(t.rh, "ring_heap");
  if (!t.rdp.empty()) req.cli.ring_dep_pool = cfg::parse_ring_cli(t.rdp, "ring_dep_pool");
  if (!t.runtime.empty()) req.cli.runtime = cfg::parse_runtime_cli(t.runtime);
  if (!t.layout.empty()) req.cli.hbg_layout = cfg::parse_hbg_layout_cli(t.layout);
  if (!t.lowering.empty()) req.cli.cache_policy_lowering = cfg::parse_cache_lowering_cli(t.lowering);
  if (!t.seed.empty()) req.cli.seed = cfg::parse_seed_cli(t.seed);
  if (!t.threads.empty()) req.cli.aicpu_thread_num = cfg::parse_thread_num_cli(t.threads);
  if (!t.sched_timeout.empty()) req.cli.scheduler_timeout_ms = cfg::parse_scheduler_timeout_cli(t.sched_timeout);
}

}  // namespace npusim::engine
