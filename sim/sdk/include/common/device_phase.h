// npusim orchestration SDK: selective task-timing slots (the tag range only;
// npusim records every task's timing itself).
#pragma once

#include <cstdint>

constexpr int NUM_TASK_TIMING_SLOTS = 16;
constexpr int32_t TASK_TIMING_SLOT_NONE = -1;
