// npusim orchestration SDK: alignment constants of the runtime.
#pragma once

#define PTO2_ALIGN_SIZE 64
#define PTO2_PACKED_OUTPUT_ALIGN 1024
#define PTO2_ALIGN_UP(x, align) (((x) + (align) - 1) & ~((align) - 1))
