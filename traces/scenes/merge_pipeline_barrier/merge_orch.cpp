// Merge with a pipeline barrier (the structure of simpler's
// examples/a2a3/tensormap_and_ringbuffer/merge_pipeline_barrier): three
// stages fused into one SPMD task of 8 blocks, a barrier between stages over
// a caller-provided, zero-filled sync buffer; two scratch buffers come from
// the runtime.
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &x = args.tensor(0).ref(), &sync = args.tensor(1).ref();
    const ChipTensor &out = args.tensor(2).ref(), &timing = args.tensor(3).ref();
    uint32_t n[1] = {x.shapes[0]};
    TensorCreateInfo scratch(n, 1, DataType::FLOAT32);
    CoreTaskArgs merged;
    merged.add_input(x);
    merged.add_inout(sync);          // the barrier's slots
    merged.add_output(scratch, scratch);
    merged.add_output(out, timing);  // existing tensors: OUTPUT_EXISTING
    merged.launch_spec.set_block_num(8);
    rt_submit_aiv_task(0, merged);
}
