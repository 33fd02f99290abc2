// Helpers for tests that drive the runtime or the chip with hand-built
// programs: the tiny platform, kernels, tensors and submit requests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/common/kernel.h"
#include "models/common/platform.h"
#include "models/common/run_config.h"
#include "models/runtime/data_store.h"
#include "models/runtime/orch_ops.h"
#include "sim/config/run_options.h"
#include "sim/platform/platform_loader.h"
#include "tests/test_paths.h"

namespace testing_support {

inline npusim::Platform tiny_platform() {
  return npusim::platform::load_platform(std::string(NPUSIM_SOURCE_DIR) + "/platforms/tiny.json");
}

inline npusim::RunConfig config_for(const npusim::Platform& p, npusim::RunOptions o = {}) {
  return npusim::config::resolve(o, p, "test");
}

// A compute phase of `ns` nanoseconds.
inline npusim::Phase compute(double ns) {
  npusim::Phase ph;
  ph.kind = npusim::PhaseKind::Compute;
  ph.duration.kind = npusim::Duration::Kind::Ns;
  ph.duration.a = ns;
  return ph;
}

inline std::unique_ptr<npusim::KernelDef> kernel(const std::string& name, int func_id,
                                                 npusim::CoreType core, double ns) {
  auto k = std::make_unique<npusim::KernelDef>();
  k->name = name;
  k->func_id = func_id;
  k->core = core;
  const npusim::Phase ph = compute(ns);
  auto lane = [&](int l) {
    k->lanes[l].active = true;
    k->lanes[l].phases = {ph};
  };
  if (core == npusim::CoreType::AIC) lane(npusim::kLaneAic);
  if (core == npusim::CoreType::AIV) lane(npusim::kLaneAiv0);
  if (core == npusim::CoreType::MIX) {
    lane(npusim::kLaneAic);
    lane(npusim::kLaneAiv0);
    lane(npusim::kLaneAiv1);
  }
  return k;
}

inline npusim::SubmitArg arg(npusim::ArgTag tag, const npusim::Tensor& t) {
  npusim::SubmitArg a;
  a.tag = tag;
  a.tensor = t;
  return a;
}

// A new OUTPUT of the given 1-D size (elements of fp32).
inline npusim::SubmitArg out(std::int64_t elements) {
  npusim::SubmitArg a;
  a.tag = npusim::ArgTag::Output;
  a.tensor.dtype = npusim::DType::FP32;
  a.tensor.ndims = 1;
  a.tensor.shape[0] = elements;
  a.tensor.buf_shape[0] = elements;
  return a;
}

// A 1-D view [off, off+len) of a tensor.
inline npusim::Tensor view(npusim::Tensor t, std::int64_t off, std::int64_t len) {
  t.offset[0] = off;
  t.shape[0] = len;
  return t;
}

inline npusim::SubmitRequest submit(const npusim::KernelDef* k, std::vector<npusim::SubmitArg> args,
                                    std::vector<npusim::TaskId> deps = {}) {
  npusim::SubmitRequest r;
  r.kernel = k;
  r.args = std::move(args);
  r.deps = std::move(deps);
  return r;
}

}  // namespace testing_support
