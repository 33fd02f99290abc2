// npusim orchestration SDK: argument dumps are a DFX feature npusim does not
// model; Arg::dump() accepts its arguments and records nothing.
#pragma once
