// A program that waits for a kernel to write its argument's memory, as a
// program does on the device: submit, then poll with rt_is_fatal and a cache
// invalidate (the pattern of simpler's tests/st dfx/chip_swimlane
// sync_start_early_local_owner_orch.cpp, wait_for_blockers_started). npusim's
// kernels write nothing into the program's memory, so the loop never ends.
#include "aicpu/cache_maintenance.h"
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &orch_args) {
    const ChipTensor &flag = orch_args.tensor(0).ref();
    CoreTaskArgs args;
    args.add_inout(flag);
    rt_submit_aiv_task(0, args);
    volatile float *data = flag.data_as<float>();
    while (!rt_is_fatal()) {
        cache_invalidate_range(const_cast<float *>(data), sizeof(float));
        if (data[0] == 1.0F) break;
    }
}

}  // extern "C"
