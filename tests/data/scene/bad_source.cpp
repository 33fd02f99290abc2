#include "pto_orchestration_api.h"
extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &args) { rt_submit_task(args); }
