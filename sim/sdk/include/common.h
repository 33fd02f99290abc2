// npusim orchestration SDK: the bridge to the runtime the framework binds
// before the orchestration entry runs (npusim's orchestration runner).
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include "assert_compat.h"

#ifdef __cplusplus
extern "C" {
#endif
struct PTO2Runtime;
PTO2Runtime *framework_current_runtime(void);
void framework_bind_runtime(PTO2Runtime *rt);
#ifdef __cplusplus
}
#endif
