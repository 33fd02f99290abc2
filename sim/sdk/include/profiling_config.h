// npusim orchestration SDK: build switches. npusim's SDK has no DFX
// collectors (the simulator records everything itself), so SIMPLER_DFX is 0.
#ifndef NPUSIM_SDK_PROFILING_CONFIG_H
#define NPUSIM_SDK_PROFILING_CONFIG_H
#ifndef SIMPLER_DFX
#define SIMPLER_DFX 0
#endif
#ifndef SIMPLER_HOST_STRACE
#define SIMPLER_HOST_STRACE 0
#endif
#ifndef SIMPLER_ORCH_PROFILING
#define SIMPLER_ORCH_PROFILING 0
#endif
#ifndef SIMPLER_SCHED_PROFILING
#define SIMPLER_SCHED_PROFILING 0
#endif
#ifndef SIMPLER_TENSORMAP_PROFILING
#define SIMPLER_TENSORMAP_PROFILING 0
#endif
#endif
