// npusim orchestration SDK: the communication context a program may receive
// as a scalar (a device pointer). npusim models no inter-chip communication;
// the layout is the runtime's so that programs that only pass it on compile.
#pragma once

#include <cstddef>
#include <cstdint>

static constexpr uint32_t COMM_MAX_RANK_NUM = 64;

struct CommContext {
    uint64_t workSpace;
    uint64_t workSpaceSize;
    uint32_t rankId;
    uint32_t rankNum;
    uint64_t winSize;
    uint64_t windowsIn[COMM_MAX_RANK_NUM];
    uint64_t windowsOut[COMM_MAX_RANK_NUM];
};
static_assert(sizeof(CommContext) == 1056, "CommContext layout");
