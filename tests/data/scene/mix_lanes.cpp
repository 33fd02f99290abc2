// tests/test_round_trips.cpp: two MIX tasks composed of the same incores on
// other lanes (c on the AIC with v on AIV0, then with v on AIV1): both are
// "c+v" by their incores' names; npusim record wrote both under that name.
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &) {
    MixedKernels a;
    a.aic_kernel_id = 0;
    a.aiv0_kernel_id = 1;
    CoreTaskArgs args;
    rt_submit_task(a, args);
    MixedKernels b;
    b.aic_kernel_id = 0;
    b.aiv1_kernel_id = 1;
    rt_submit_task(b, args);
}

}  // extern "C"
