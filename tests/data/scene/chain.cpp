// A producer, two consumers in a nested scope and a join writing the
// caller's tensor: the orchestration API's basic calls, and the same
// program as chain_trace.json (tests/test_scenes.cpp runs both).
#include "pto_orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &in = args.tensor(0).ref();
    const ChipTensor &out = args.tensor(1).ref();
    uint32_t rows[2] = {64, 128};
    TensorCreateInfo tile(rows, 2, DataType::FLOAT32);

    CoreTaskArgs p;
    p.add_input(in);
    p.add_output(tile);
    TaskOutputTensors a = rt_submit_aic_task(0, p);
    PTO2_SCOPE() {
        uint32_t half[2] = {32, 128}, top[2] = {0, 0}, bottom[2] = {32, 0};
        ChipTensor t0 = a.get_ref(0).view(half, top);
        ChipTensor t1 = a.get_ref(0).view(half, bottom);
        CoreTaskArgs c0, c1;
        c0.add_input(t0);
        c0.add_output(tile);
        c1.add_input(t1);
        c1.add_output(tile);
        TaskOutputTensors b = rt_submit_aiv_task(1, c0);
        TaskOutputTensors c = rt_submit_aiv_task(1, c1);
        CoreTaskArgs j;
        j.add_input(b.get_ref(0), c.get_ref(0));
        j.add_inout(out);
        j.launch_spec.set_block_num(2);
        rt_submit_aiv_task(2, j);
    }
}
