#include "sim/engine/watch.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include <systemc>

#include "models/common/present.h"
#include "sim/record/json_out.h"

namespace npusim::engine {

std::string bytes_text(std::uint64_t b) {
  char s[32];
  if (b < 1000) std::snprintf(s, sizeof s, "%llu B", static_cast<unsigned long long>(b));
  else if (b < 1000000) std::snprintf(s, sizeof s, "%.1f kB", b / 1e3);
  else if (b < 1000000000) std::snprintf(s, sizeof s, "%.1f MB", b / 1e6);
  else std::snprintf(s, sizeof s, "%.2f GB", b / 1e9);
  return s;
}

std::string output_cap_reached(std::uint64_t max_output, std::uint64_t written, std::uint64_t submitted) {
  if (max_output == 0 || written <= max_output) return "";
  return "the run reached --max-output " + std::to_string(max_output) + " bytes (" + bytes_text(written) +
         " written after " + std::to_string(submitted) + " tasks)";
}

namespace {
// The progress line's period: 500 ms, or NPUSIM_PROGRESS_MS (the tests set 0).
std::chrono::milliseconds progress_period() {
  const char* v = std::getenv("NPUSIM_PROGRESS_MS");
  return std::chrono::milliseconds(v && *v ? std::strtoll(v, nullptr, 10) : 500);
}
}  // namespace

RunWatch::RunWatch(const WatchLimits& limits, int progress_fd)
    : limits_(limits), tasks_cap_(limits.max_tasks ? limits.max_tasks : ~std::uint64_t{0}), fd_(progress_fd), period_(progress_period()), start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

RunWatch::~RunWatch() { clear_progress(); }

void RunWatch::check_periodic() {
  if (record::write_failed()) stop("writing an output file failed");
  const std::string cap = output_cap_reached(limits_.max_output, record::bytes_written(), submitted_);
  if (!cap.empty()) stop(cap);
  if (limits_.progress && (events_ & 4095) == 0) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_print_ >= period_) {
      last_print_ = now;
      print_progress();
    }
  }
}

void RunWatch::stop_max_tasks() {
  stop("the run reached --max-tasks " + std::to_string(limits_.max_tasks) + " (task " + std::to_string(submitted_) +
       " was submitted at " + us_text(model_present()) + " of simulated time)");
}

void RunWatch::stop(const std::string& why) {
  if (!stopped_.empty()) return;
  stopped_ = why;
  stop_simulation();  // and the AICPU clock no longer runs ahead
}

void RunWatch::put(const char* s) const {
  for (std::size_t n = std::strlen(s); n > 0;) {
    const ssize_t w = ::write(fd_, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

void RunWatch::print_progress() {
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char line[200];
  std::snprintf(line, sizeof line, "\rnpusim: %llu tasks submitted, %llu completed, %s simulated, %s written, %.0f s\033[K",
                static_cast<unsigned long long>(submitted_), static_cast<unsigned long long>(completed_),
                us_text(model_present()).c_str(), bytes_text(record::bytes_written()).c_str(), wall);
  put(line);
  printed_ = true;
}

void RunWatch::clear_progress() {
  if (!printed_) return;
  put("\r\033[K");
  printed_ = false;
}

}  // namespace npusim::engine
