// The plain-C++ runtime driven by hand, as the orchestrator and a scheduler
// would drive it, without SystemC: for test_runtime.cpp and
// test_runtime_limits.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/runtime/runtime.h"
#include "tests/runtime_fixture.h"

namespace testing_support {

// Records what the runtime reports.
struct Recorder : npusim::RuntimeHooks {
  std::vector<std::vector<npusim::EdgeInfo>> edges;
  std::vector<npusim::TaskId> retired;
  std::vector<npusim::ScopeSample> samples;
  std::vector<std::string> sites;
  std::vector<std::pair<std::string, std::string>> warnings;  // (kind, message)
  void on_warning(const std::string& kind, const std::string& message) override { warnings.emplace_back(kind, message); }
  void on_submitted(const npusim::Task&, const npusim::SubmitRequest&, const std::vector<npusim::EdgeInfo>& e) override {
    edges.push_back(e);
  }
  void on_retired(npusim::Task& t) override { retired.push_back(t.id); }
  void on_scope_sample(const npusim::ScopeSample& s) override {
    samples.push_back(s);
    sites.push_back(*s.site);
  }
};

// A runtime on the tiny platform; `tweak` may change the platform and the
// resolved configuration before the runtime is built.
struct Harness {
  npusim::Platform platform = tiny_platform();
  npusim::RunConfig config;
  npusim::DataStore data;
  Recorder rec;
  std::unique_ptr<npusim::Runtime> rt;
  std::unique_ptr<npusim::KernelDef> k = kernel("K", 0, npusim::CoreType::AIV, 1000);
  npusim::SubmitStatus last;
  npusim::SubmitProgress progress;  // of the last submit, kept while it is blocked

  explicit Harness(npusim::RunOptions o = {},
                   const std::function<void(npusim::Platform&, npusim::RunConfig&)>& tweak = {}) {
    config = config_for(platform, o);
    if (tweak) tweak(platform, config);
    rt = std::make_unique<npusim::Runtime>(platform, config, data, &rec);
    rt->begin_orchestration();
  }
  npusim::Tensor ext(std::int64_t n) { return data.add_external("x", npusim::DType::FP32, {n}, 0, {}); }
  // Submits and commits; returns the task (or nullptr if blocked/fatal).
  npusim::Task* sub(const npusim::SubmitRequest& r, bool alloc = false) {
    progress.reset();
    return resume(r, alloc);
  }
  // Retries the last submit from where it was blocked (a fresh one after a Done).
  npusim::Task* resume(const npusim::SubmitRequest& r, bool alloc = false) {
    if (progress.stage == npusim::SubmitProgress::Stage::Done) progress.reset();
    last = rt->submit_prepare(r, progress, alloc, 0);
    if (last.kind == npusim::SubmitStatus::Kind::Done) last = rt->submit_wire(progress);
    if (last.kind != npusim::SubmitStatus::Kind::Done) return nullptr;
    rt->submit_commit(r, progress, 0);
    return progress.task;
  }
  // Runs a task to completion and release, as a scheduler would.
  void finish(npusim::Task* t) {
    npusim::SubmitWork w;
    rt->complete_task(*t, 0, w);
    rt->release_task(*t);
  }
  npusim::Tensor output(npusim::Task* t, int i = 0) {
    std::vector<npusim::Tensor> outs;
    rt->outputs_of(*t, outs);
    return outs.at(i);
  }
};

}  // namespace testing_support
