// Scalar data between the orchestrator and the kernels (the structure of
// simpler's examples/a2a3/tensormap_and_ringbuffer/scalar_data):
// get_tensor_data waits for a tensor's writers, set_tensor_data also for
// their readers (write-after-write and write-after-read), an alloc_tensors
// output starts at its initial value. What each step read is stored into
// the `check` argument, as the example checks it.
#include <stdint.h>

#include "pto_orchestration_api.h"

namespace {
enum : int32_t { kAdd = 0, kNoop = 1 };

float get(const ChipTensor &t, uint32_t i) {
    uint32_t idx[1] = {i};
    return get_tensor_data<float>(t, 1, idx);
}
void set(const ChipTensor &t, uint32_t i, float v) {
    uint32_t idx[1] = {i};
    set_tensor_data(t, 1, idx, v);
}
}  // namespace

extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &a = args.tensor(0).ref(), &b = args.tensor(1).ref();
    const ChipTensor &result = args.tensor(2).ref(), &check = args.tensor(3).ref();
    uint32_t n[1] = {a.shapes[0]}, one[1] = {1};
    TensorCreateInfo vec(n, 1, DataType::FLOAT32);

    CoreTaskArgs add;  // c = a + b: the scene declares what it writes at 0 and 100
    add.add_input(a, b);
    add.add_output(vec);
    TaskOutputTensors c_task = rt_submit_aiv_task(kAdd, add);
    const ChipTensor &c = c_task.get_ref(0);
    set(check, 0, get(c, 0));    // waits for c's producer
    set(check, 1, get(c, 100));

    TensorCreateInfo scalar_ci(one, 1, DataType::FLOAT32);
    scalar_ci.set_initial_value(77.0f);
    TaskOutputTensors s_task = alloc_tensors(scalar_ci);
    const ChipTensor &s = s_task.get_ref(0);
    set(check, 2, get(s, 0));  // 77: the initial value
    CoreTaskArgs noop;
    noop.add_inout(s);
    rt_submit_aiv_task(kNoop, noop);
    set(check, 3, get(s, 0));  // waits for the noop, still 77
    set(s, 0, 42.0f);          // waits for the noop and its readers
    set(check, 4, get(s, 0));

    TaskOutputTensors d_task = alloc_tensors(vec);  // d, set by the orchestrator, read by a kernel
    const ChipTensor &d = d_task.get_ref(0);
    set(d, 0, 10.0f);
    CoreTaskArgs add_d;
    add_d.add_input(d, a);
    add_d.add_output(vec);
    TaskOutputTensors e_task = rt_submit_aiv_task(kAdd, add_d);
    set(check, 5, get(e_task.get_ref(0), 0));

    CoreTaskArgs read_c;  // a reader of c: the next set waits for it (write after read)
    read_c.add_input(c, a);
    read_c.add_output(vec);
    rt_submit_aiv_task(kAdd, read_c);
    set(c, 0, 88.0f);
    set(check, 6, get(c, 0));

    CoreTaskArgs touch_b;  // an external tensor with a writer: set waits for it
    touch_b.add_inout(b);
    rt_submit_aiv_task(kNoop, touch_b);
    set(b, 0, 55.0f);
    set(check, 7, get(b, 0));

    CoreTaskArgs last;
    last.add_input(a, b);
    last.add_inout(result);
    rt_submit_aiv_task(kAdd, last);
}
