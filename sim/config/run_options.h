// Run configuration from the trace's `run` block and the command line
// (trace-format.md "Run configuration", cli-and-outputs.md), validated with
// the runtime's message style, merged field by field (command line wins),
// and resolved against a platform into the effective RunConfig.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "models/common/errors.h"
#include "models/common/platform.h"
#include "models/common/run_config.h"

namespace npusim::config {

// The file label used in InputErrors raised for command-line options.
inline const char* kCommandLine = "command line";

// One ring field from JSON: an integer (applied to all four rings) or a list
// of exactly 4 integers; 0 = keep the platform default for that ring.
// Booleans and non-integers are rejected with the same message as a bad value,
// e.g. "ring_heap must be >= 1024 (bytes per ring), got 1000".
// `field` is "ring_task_window", "ring_heap" or "ring_dep_pool".
RingValues parse_ring_json(const nlohmann::json& value, const std::string& field,
                           const std::string& file, const std::string& path);

// The same from a command-line string: "N" or "N0,N1,N2,N3". The InputError
// has file kCommandLine and path "--ring-heap" (etc.).
RingValues parse_ring_cli(const std::string& text, const std::string& field);

// `--runtime NAME`: "tensormap_and_ringbuffer" or "host_build_graph"
// (InputError with file kCommandLine and path "--runtime" otherwise).
RuntimeKind parse_runtime_cli(const std::string& text);

// `--hbg-layout NAME`: "resolution_thread" (host_build_graph's own layout,
// the default) or "all_schedule" (every AICPU thread owns cores); InputError
// with file kCommandLine and path "--hbg-layout" otherwise.
HbgLayout parse_hbg_layout_cli(const std::string& text);
// `--cache-policy-lowering today|intended` (docs/gm.md "Cache policy").
CacheLowering parse_cache_lowering_cli(const std::string& text);

// `--seed N`: a decimal integer in [0, 2^64), the range of the run block's
// `seed` (InputError with file kCommandLine and path "--seed" otherwise).
std::uint64_t parse_seed_cli(const std::string& text);

// `--scheduler-timeout-ms N`: the scheduler watchdog, as the runtime's
// SIMPLER_SCHEDULER_TIMEOUT_MS: an integer in [1, INT32_MAX].
std::uint64_t parse_scheduler_timeout_cli(const std::string& text);

// `--aicpu-thread-num N`: a decimal integer, optionally negative, that fits
// an int; its range is checked against the platform by resolve().
int parse_thread_num_cli(const std::string& text);

// The whole `run` block (unknown keys are errors, `x_` keys ignored).
// Either JSON type: the trace loader keeps the document's key order, so the
// first bad key in the file is the one reported.
RunOptions parse_run_block(const nlohmann::json& run, const std::string& file,
                           const std::string& path);
RunOptions parse_run_block(const nlohmann::ordered_json& run, const std::string& file,
                           const std::string& path);

// Field by field: a field set in `over` replaces the one in `base`.
RunOptions merge(const RunOptions& base, const RunOptions& over);

// The checks of options against a platform (aicpu_thread_num within the
// platform's range), InputError naming `file`'s field (or, for kCommandLine,
// the option).
void check_against(const RunOptions& options, const Platform& platform, const std::string& file);

// Effective configuration: defaults from the platform, aicpu_thread_num 0 ->
// platform default, range checks against the platform (InputError on failure,
// `file` names where the options came from).
RunConfig resolve(const RunOptions& options, const Platform& platform, const std::string& file);

}  // namespace npusim::config
