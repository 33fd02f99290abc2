// npusim orchestration SDK: the runtime's own header, which some generated
// orchestration sources include. The runtime's internals are npusim's model;
// what a program can use of them is the orchestration API.
#pragma once

#include "pto_orchestration_api.h"
