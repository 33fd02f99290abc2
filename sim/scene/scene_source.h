// The op source of a scene run: the orchestration program running in
// npusim-orch-runner, its calls read from the pipe and made into the runtime
// operations they are (OrchOps), exactly as the trace interpreter makes a
// trace's operations, so both go through the same orchestrator.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/common/platform.h"
#include "models/common/run_config.h"
#include "models/runtime/data_store.h"
#include "models/runtime/orch_ops.h"
#include "sim/scene/scene.h"

namespace npusim::scene {

// `composed` receives the MIX kernels the program composes of per-lane incores.
std::unique_ptr<OpSource> make_scene_source(const SceneDef& def, const std::string& library,
                                            const trace::Trace& trace, DataStore& data, const Platform& platform,
                                            const RunConfig& config,
                                            std::vector<std::unique_ptr<KernelDef>>& composed,
                                            const SceneHooks& hooks);

// The SDK's DataType numbering -> npusim's; false for the A5-only types.
bool dtype_from_sdk(std::uint8_t sdk, DType& out);
std::uint8_t dtype_to_sdk(DType d);

}  // namespace npusim::scene
