// Batched GEMM (the structure of simpler's examples/a2a3/tensormap_and_
// ringbuffer/benchmark_bgemm): per group a scope; per k step a GEMM on the
// cube (A and B tiles in, a fresh product out) and an ADD on a vector core
// accumulating the product into the group's slice of C. The sizes come from
// the config argument, read from its memory as the example does.
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &) {
    return PTO2OrchestrationConfig{4};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &A = args.tensor(0).ref(), &B = args.tensor(1).ref(), &C = args.tensor(2).ref();
    const ChipTensor &config = args.tensor(3).ref();
    const int64_t *cfg = config.data_as<int64_t>();  // tile_size, grid_k, groups, incore_loop
    const uint64_t tile = static_cast<uint64_t>(cfg[0]) * static_cast<uint64_t>(cfg[0]);
    const int64_t grid_k = cfg[1], groups = cfg[2];
    uint32_t group[1] = {static_cast<uint32_t>(static_cast<uint64_t>(cfg[3]) * tile)};
    TensorCreateInfo product(group, 1, DataType::FLOAT32);
    for (int64_t g = 0; g < groups; g++) {
        PTO2_SCOPE_GUARD();
        uint32_t c_at[1] = {static_cast<uint32_t>(g) * group[0]};
        ChipTensor c = C.view(group, c_at);
        for (int64_t k = 0; k < grid_k; k++) {
            uint32_t ab_at[1] = {static_cast<uint32_t>(g * grid_k + k) * group[0]};
            ChipTensor a = A.view(group, ab_at), b = B.view(group, ab_at);
            CoreTaskArgs gemm;
            gemm.add_input(a, b);
            gemm.add_output(product);
            gemm.add_input(config);
            TaskOutputTensors p = rt_submit_aic_task(0, gemm);
            CoreTaskArgs add;
            add.add_inout(c);
            add.add_input(p.get_ref(0), config);
            rt_submit_aiv_task(1, add);
        }
    }
}

}  // extern "C"
