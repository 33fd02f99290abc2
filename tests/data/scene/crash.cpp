// One task, then the way the program ends: its scalar argument picks a
// crash, an abort, an exception, a failed assertion, a reported fatal, an
// invalid Arg or a clean return.
#include <cstdlib>
#include <stdexcept>

#include "pto_orchestration_api.h"

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &t = args.tensor(0).ref();
    CoreTaskArgs p;
    p.add_inout(t);
    rt_submit_aiv_task(0, p);
    switch (args.scalar(0)) {
    case 0: {
        volatile int *null = nullptr;
        *null = 1;
        break;
    }
    case 1: std::abort();
    case 2: throw std::runtime_error("the program gave up");
    case 3: always_assert(args.tensor_count() == 7);
    case 4: rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "bad input %d", 42); break;
    case 5: {
        CoreTaskArgs bad;
        bad.add_scalar(1);
        bad.add_input(t);  // a tensor after a scalar: the Arg records an error
        rt_submit_aiv_task(0, bad);
        break;
    }
    case 6: {  // the runtime's own checks still hold after the program's fatal
        rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "stop");
        CoreTaskArgs more;
        more.add_inout(t);
        rt_submit_aiv_task(0, more);  // a no-op: the runtime is fatal
        break;
    }
    default: break;
    }
}
