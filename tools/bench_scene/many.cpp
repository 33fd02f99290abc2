#include "pto_orchestration_api.h"
extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &x = args.tensor(0).ref();
    const int n = static_cast<int>(args.scalar(0));
    uint32_t shape[1] = {64};
    for (int i = 0; i < n; i += 1000) {
        PTO2_SCOPE() {
            for (int j = 0; j < 1000; j++) {
                uint32_t at[1] = {static_cast<uint32_t>((j % 16) * 64)};
                ChipTensor v = x.view(shape, at);
                CoreTaskArgs a;
                a.add_input(v);
                rt_submit_aiv_task(0, a);
            }
        }
    }
}
