// What watches a run while it simulates (docs/outputs.md, "Limits" and
// "Progress"): the caps a user can set (--max-tasks, --max-output), a write
// that failed (a full disk: no point simulating on), and, on a terminal, a
// progress line. A cap that is reached stops the simulation (sc_stop); the
// engine then reports why, with exit 2 and nothing written.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "models/runtime/observer.h"
#include "sim/record/json_out.h"

namespace npusim::engine {

struct WatchLimits {
  std::uint64_t max_tasks = 0;   // tasks submitted (0 = no cap)
  std::uint64_t max_output = 0;  // bytes written to the output files, scratch files included (0 = no cap)
  bool progress = false;         // a progress line on `progress_out`
};

class RunWatch : public SimObserver {
 public:
  // The progress line goes to file descriptor `progress_fd` as it is (it
  // rewrites itself with \r and an ANSI erase).
  RunWatch(const WatchLimits& limits, int progress_fd);
  ~RunWatch() override;

  // Inline: the engine's collectors call these by name (no fan-out list, no
  // virtual call) when no writer reads the hook (every output off).
  void on_submitted(const Task&, const SubmitRequest&, const std::vector<EdgeInfo>&) override {
    ++submitted_;
    if (submitted_ > tasks_cap_) stop_max_tasks();
    check();
  }
  void on_completed(Task&) override {
    ++completed_;
    check();
  }
  void on_block_finished(const Task&, const BlockRecord&) override { check(); }
  static constexpr std::uint32_t kHooks = hook::Submitted | hook::Completed | hook::BlockFinished;
  std::uint32_t hooks() const override { return kHooks; }
  bool reads_edges() const override { return false; }

  // Why the simulation was stopped ("" if it was not).
  const std::string& stopped() const { return stopped_; }
  // Removes the progress line (before anything else is printed).
  void clear_progress();

 private:
  // Per event: a stop asked for by a writer is taken at once; the rest (a
  // failed write, the output cap, the progress line) every 256th event.
  void check() {
    if (!stopped_.empty()) return;
    if (record::stop_requested()) stop(record::stop_reason());
    if ((++events_ & 255) != 0) return;
    check_periodic();
  }
  void check_periodic();
  void stop_max_tasks();
  void stop(const std::string& why);
  void print_progress();
  void put(const char* s) const;

  WatchLimits limits_;
  std::uint64_t tasks_cap_;  // limits_.max_tasks, or the most there can be when there is no cap
  int fd_;
  std::chrono::milliseconds period_;
  std::uint64_t submitted_ = 0, completed_ = 0, events_ = 0;
  std::chrono::steady_clock::time_point start_, last_print_;
  bool printed_ = false;
  std::string stopped_;
};

// The message of a --max-output cap that `written` bytes passed ("" if none
// was passed): the watch checks it while the run goes, the engine once more
// after the last file (summary.json) is written.
std::string output_cap_reached(std::uint64_t max_output, std::uint64_t written, std::uint64_t submitted);

// Human text for a byte count: "1.5 GB".
std::string bytes_text(std::uint64_t b);

}  // namespace npusim::engine
