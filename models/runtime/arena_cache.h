// The runtime arena cache of one worker (pypto
// docs/en/dev/05-runtime-ring-sizing.md, "Arena prewarm and the single-slot
// cache"): building the runtime arena for a ring-sizing
// vector costs ~800 ms; a worker keeps exactly one built arena, keyed by the
// full per-ring size vector (task window, heap and dep pool of all four rings
// together, so a per-ring list is one key), and every build overwrites that
// slot. A worker builds one at init (prewarm): the prepared vector, or the
// runtime's defaults.
//
// Upstream: simpler src/a2a3/runtime/tensormap_and_ringbuffer/host/
// runtime_maker.cpp, make_prebuilt_runtime_arena_cache_probe (the key: the
// resolved task_window / heap / dep_pool of every ring) and
// build_and_cache_prebuilt_arena (a miss builds and stores); the single slot
// is DeviceRunner's prebuilt_runtime_arena_cache_* members
// (src/a2a3/platform/sim/host/device_runner.cpp).
#pragma once

#include <optional>

#include "models/common/run_config.h"

namespace npusim {

// The cache key: the effective sizes of every ring.
struct ArenaKey {
  RingValues task_window{}, heap{}, dep_pool{};
  static ArenaKey of(const RunConfig& c) { return {c.task_window, c.heap, c.dep_pool}; }
  bool operator==(const ArenaKey& o) const {
    return task_window == o.task_window && heap == o.heap && dep_pool == o.dep_pool;
  }
  bool operator!=(const ArenaKey& o) const { return !(*this == o); }
};

// What a dispatch found in the slot.
enum class ArenaOutcome {
  Prewarmed,  // the arena the worker built at init: its first use, no build
  Hit,        // the arena a previous dispatch used: no build
  Miss,       // another vector (or none): built now, the slot overwritten
};

inline const char* arena_outcome_name(ArenaOutcome o) {
  return o == ArenaOutcome::Prewarmed ? "prewarmed" : o == ArenaOutcome::Hit ? "hit" : "miss";
}

class ArenaSlot {
 public:
  // The build at worker init (prepare(config), or the runtime's defaults).
  void prewarm(const ArenaKey& key) {
    slot_ = key;
    prewarm_unused_ = true;
    ++builds_;
  }
  // A dispatch with `key`: a miss builds and overwrites the slot.
  ArenaOutcome use(const ArenaKey& key) {
    if (slot_ && *slot_ == key) {
      const bool first = prewarm_unused_;
      prewarm_unused_ = false;
      return first ? ArenaOutcome::Prewarmed : ArenaOutcome::Hit;
    }
    slot_ = key;
    prewarm_unused_ = false;
    ++builds_;
    return ArenaOutcome::Miss;
  }
  const std::optional<ArenaKey>& slot() const { return slot_; }
  int builds() const { return builds_; }  // the prewarm included

 private:
  std::optional<ArenaKey> slot_;
  bool prewarm_unused_ = false;
  int builds_ = 0;
};

}  // namespace npusim
