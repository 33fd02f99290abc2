// npusim orchestration SDK: task ids, (ring << 32) | local id, as the runtime encodes them.
#pragma once

#include <cstdint>

struct PTO2TaskId {
    uint64_t raw;

    static constexpr PTO2TaskId make(uint8_t ring_id, uint32_t local_id) {
        return PTO2TaskId{(static_cast<uint64_t>(ring_id) << 32) | local_id};
    }
    static constexpr PTO2TaskId invalid() { return PTO2TaskId{~uint64_t{0}}; }

    constexpr uint8_t ring() const { return static_cast<uint8_t>(raw >> 32); }
    constexpr uint32_t local() const { return static_cast<uint32_t>(raw); }
    constexpr bool is_valid() const { return raw != ~uint64_t{0}; }
    constexpr bool is_invalid() const { return raw == ~uint64_t{0}; }
    constexpr bool operator==(const PTO2TaskId &o) const { return raw == o.raw; }
    constexpr bool operator!=(const PTO2TaskId &o) const { return raw != o.raw; }
};
static_assert(sizeof(PTO2TaskId) == 8, "PTO2TaskId is 8 bytes");
