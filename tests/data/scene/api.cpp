// The orchestration API's calls beyond submit, each leaving a mark that
// tests/test_scenes.cpp checks in the run's outputs: values the program read
// become block_nums, dependencies become deps.json edges.
#include <cstdint>

#include "pto_orchestration_api.h"

namespace {
constexpr int32_t kWork = 0, kScale = 1, kCount = 2;

int16_t blocks_from(const ChipTensor &t, uint32_t i) {
    uint32_t idx[1] = {i};
    return static_cast<int16_t>(get_tensor_data<int32_t>(t, 1, idx));
}
}  // namespace

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &) {
    return PTO2OrchestrationConfig{3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &x = args.tensor(0).ref();      // fp32 [4, 64]
    const ChipTensor &flags = args.tensor(1).ref();  // int32 [4] = {1, 0, 3, 0}
    const ChipTensor &cfg = args.tensor(2).ref();    // int64 [2] = {3, 7}
    const int64_t n = cfg.data_as<int64_t>()[0];     // the argument's memory, read directly: 3

    // t0: writes x (INOUT: a tensormap writer of the whole of x)
    CoreTaskArgs w;
    w.add_inout(x);
    TaskOutputTensors writer = rt_submit_aiv_task(kWork, w);

    // a chain of n tasks in a manual scope: explicit dependencies only
    PTO2TaskId prev = writer.task_id();
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        for (int64_t i = 0; i < n; i++) {
            CoreTaskArgs c;
            c.add_input(x);
            PTO2TaskId deps[1] = {prev};
            c.set_dependencies(deps, 1);
            prev = rt_submit_aiv_task(kWork, c).task_id();
        }
    }

    // add_dep keeps the producer (WAIT|RETAIN), add_dep_wait only orders (WAIT)
    CoreTaskArgsWithDeps<4> d;
    d.add_dep(writer.task_id());
    d.add_dep_wait(prev);
    rt_submit_aiv_task(kWork, d);

    // values: the argument's data, the program's own write, an incore's declared write
    CoreTaskArgs b1;
    b1.launch_spec.set_block_num(blocks_from(flags, 2));  // 3
    rt_submit_aiv_task(kWork, b1);
    uint32_t one[1] = {1};
    set_tensor_data<int32_t>(flags, 1, one, 2);
    CoreTaskArgs b2;
    b2.launch_spec.set_block_num(blocks_from(flags, 1));  // 2
    rt_submit_aiv_task(kWork, b2);

    uint32_t four[1] = {4};
    TensorCreateInfo counter_ci(four, 1, DataType::INT32);
    counter_ci.set_initial_value(int32_t{5});
    CoreTaskArgs cnt;
    cnt.add_output(counter_ci);
    cnt.add_scalar(int64_t{3});
    TaskOutputTensors counted = rt_submit_aiv_task(kCount, cnt);  // declares counter[0] = s0 + 1
    const ChipTensor &counter = counted.get_ref(0);
    CoreTaskArgs b3;
    b3.launch_spec.set_block_num(blocks_from(counter, 0));  // 4
    rt_submit_aiv_task(kWork, b3);
    CoreTaskArgs b4;
    b4.launch_spec.set_block_num(blocks_from(counter, 1));  // 5: the initial value
    rt_submit_aiv_task(kWork, b4);

    // views the runtime compares by linear extent only: a reshape and a transpose of x
    uint32_t flat[1] = {256};
    ChipTensor x_flat = x.reshape(flat, 1);
    ChipTensor x_t = x.transpose(0, 1);
    CoreTaskArgs r1, r2;
    r1.add_input(x_flat);
    r2.add_input(x_t);
    rt_submit_aiv_task(kScale, r1);
    rt_submit_aiv_task(kScale, r2);

    // a tensor over another's memory: flags from element 1 on, as a 3-element tensor
    uint32_t three[1] = {3};
    ChipTensor tail = make_tensor_external(reinterpret_cast<char *>(flags.data_as<void>()) + 4, three, 1,
                                           DataType::INT32);
    CoreTaskArgs b5;
    b5.launch_spec.set_block_num(blocks_from(tail, 0));  // flags[1] = 2
    rt_submit_aiv_task(kWork, b5);

    // predicates: flags[0] = 1 > 0 runs, flags[3] = 0 > 0 is skipped
    for (uint32_t i : {0u, 3u}) {
        CoreTaskArgs p;
        p.add_input(flags);
        CoreTaskPredicate pred;
        pred.operand.tensor = &flags;
        pred.operand.ndims = 1;
        pred.operand.indices[0] = i;
        pred.op = PredicateOp::GT;
        pred.target = 0;
        p.set_predicate(pred);
        rt_submit_aiv_task(kWork, p);
    }

    // geometry, a dummy that owns an output, alloc_tensors from an array
    CoreTaskArgs g;
    g.launch_spec.set_block_num(static_cast<int16_t>(rt_available_aiv_count() / rt_available_cluster_count()));  // 2
    rt_submit_aiv_task(kWork, g);
    CoreTaskArgs dummy;
    dummy.add_output(counter_ci);
    rt_submit_dummy_task(dummy);
    TensorCreateInfo cis[2] = {counter_ci, counter_ci};
    const TensorCreateInfo *first = cis;
    alloc_tensors(first, 2u);
}

}  // extern "C"
