// The pipe structure of simpler's spmd_paged_attention ST kernel as a scene:
// one MIX task composed (MixedKernels) of an AIC incore and an AIV incore
// that both declare the kernel's three TPipes (sij C2V, pij V2C, oi C2V,
// FIFO depth 2), as the kernel's cube and vector halves both construct them
// (paged_attention_parallel.cpp run_aic / run_aiv). The same kernel as
// traces/mix_three_pipes.json; docs/overhead.md derives its timeline.
#include <stdint.h>

#include "pto_orchestration_api.h"

namespace {
constexpr int32_t kPaAic = 0;
constexpr int32_t kPaAiv = 1;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &) {
    PTO2OrchestrationConfig c;
    c.expected_arg_count = 2;
    return c;
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &query = args.tensor(0).ref();
    const ChipTensor &out = args.tensor(1).ref();
    CoreTaskArgs pa;
    pa.add_input(query);
    pa.add_inout(out);
    MixedKernels mk;
    mk.aic_kernel_id = kPaAic;
    mk.aiv0_kernel_id = kPaAiv;
    mk.aiv1_kernel_id = kPaAiv;
    rt_submit_task(mk, pa);
}

}  // extern "C"
