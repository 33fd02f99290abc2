// tests/test_host_cost.cpp: reads its small config argument (argument 1)
// through data_as while argument 0 is 8 GiB, and submits cfg[0] tasks.
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const int64_t *cfg = args.tensor(1).ref().data_as<int64_t>();
    for (int64_t i = 0; i < cfg[0]; ++i) {
        CoreTaskArgs a;
        rt_submit_aiv_task(0, a);
    }
}

}  // extern "C"
