// Vector example, written for npusim's scenes in the runtime's orchestration
// API (the structure of simpler's examples/a2a3/tensormap_and_ringbuffer/
// vector_example): f = (a + b + 1) * (a + b + 2) + (a + b), five AIV tasks.
//
//   sum  = a + b          kernel_add         root scope (ring 0)
//   { p1 = sum + 1        kernel_add_scalar  inner scope (ring 1)
//     p2 = sum + 2        kernel_add_scalar
//     prod = p1 * p2      kernel_mul
//     f = prod + sum }    kernel_add, into the caller's f
//
// Edges: sum -> p1, sum -> p2, p1 -> prod, p2 -> prod, prod -> f, sum -> f.
#include <stdint.h>

#include "pto_orchestration_api.h"

namespace {
constexpr int32_t kAdd = 0;
constexpr int32_t kAddScalar = 1;
constexpr int32_t kMul = 2;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &) {
    PTO2OrchestrationConfig c;
    c.expected_arg_count = 3;
    return c;
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &a = args.tensor(0).ref();
    const ChipTensor &b = args.tensor(1).ref();
    const ChipTensor &f = args.tensor(2).ref();
    uint32_t n[1] = {a.shapes[0]};
    TensorCreateInfo vec(n, 1, DataType::FLOAT32);

    CoreTaskArgs add;
    add.add_input(a, b);
    add.add_output(vec);
    TaskOutputTensors sum_task = rt_submit_aiv_task(kAdd, add);
    const ChipTensor &sum = sum_task.get_ref(0);

    PTO2_SCOPE() {
        CoreTaskArgs plus1;
        plus1.add_input(sum);
        plus1.add_output(vec);
        plus1.add_scalar(1.0f, n[0]);
        TaskOutputTensors p1 = rt_submit_aiv_task(kAddScalar, plus1);

        CoreTaskArgs plus2;
        plus2.add_input(sum);
        plus2.add_output(vec);
        plus2.add_scalar(2.0f, n[0]);
        TaskOutputTensors p2 = rt_submit_aiv_task(kAddScalar, plus2);

        CoreTaskArgs mul;
        mul.add_input(p1.get_ref(0), p2.get_ref(0));
        mul.add_output(vec);
        mul.add_scalar(n[0]);
        TaskOutputTensors prod = rt_submit_aiv_task(kMul, mul);

        CoreTaskArgs last;
        last.add_input(prod.get_ref(0), sum);
        last.add_output(f);  // an existing tensor: OUTPUT_EXISTING
        rt_submit_aiv_task(kAdd, last);
    }
}

}  // extern "C"
