// npusim orchestration SDK: the spin-wait hint (a no-op, as on the device).
#pragma once
#define SPIN_WAIT_HINT() ((void)0)
