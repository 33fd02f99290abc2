// The device: builds the runtime, the AICores and the AICPU threads from the
// platform and run configuration, and wires the runtime's events to the
// threads' wake-ups and to the observers.
#pragma once

#include <memory>
#include <vector>

#include <systemc>

#include "models/aicore/aicore.h"
#include "models/aicore/cross_core.h"
#include "models/ffts/ffts.h"
#include "models/gm/gm.h"
#include "models/interconnect/fabric.h"
#include "models/aicpu/aicpu_clock.h"
#include "models/aicpu/orchestrator.h"
#include "models/aicpu/scheduler.h"
#include "models/common/platform.h"
#include "models/common/run_config.h"
#include "models/runtime/data_store.h"
#include "models/runtime/observer.h"
#include "models/runtime/runtime.h"

namespace npusim {

class Chip : public sc_core::sc_module, private SimObserver {
 public:
  Chip(sc_core::sc_module_name name, const Platform& platform, const RunConfig& config,
       OpSource& program, DataStore& data, SimObserver* observer);

  Runtime& runtime() { return runtime_; }
  const Runtime& runtime() const { return runtime_; }
  AicoreComplex& cores() { return *cores_; }
  const AicoreComplex& cores() const { return *cores_; }
  const CrossCorePipes& pipes() const { return *pipes_; }
  OrchestratorThread& orchestrator() { return *orch_; }
  const OrchestratorThread& orchestrator() const { return *orch_; }
  const std::vector<std::unique_ptr<SchedulerThread>>& schedulers() const { return scheds_; }
  const Platform& platform() const { return platform_; }
  std::uint64_t blocks_dispatched() const { return ctx_.blocks_dispatched; }
  // host_build_graph: every thread has classified its slice of the graph
  // (SchedulerThread::boot_scan); dispatch may begin.
  bool boot_done() const { return ctx_.boot_done; }
  const FftsBarrier& ffts() const { return *ffts_; }
  const GmModel& gm() const { return *gm_; }
  const RunConfig& config() const { return config_; }
  // An L3 dispatch: the chip's port on the node's interconnect (before the
  // simulation starts); its cores' cross-chip phases go through it.
  void attach(PeerPort& port) {
    port.bind(*cores_);
    cores_->add_handler(&port);
    port_ = &port;
    // Several chips: another chip's threads and the fabric act on the kernel
    // too, and the clock does not see their times: no running ahead.
    clock_->set_horizon(nullptr);
  }
  const PeerPort* port() const { return port_; }

 private:
  // Runtime events: forwarded to the observer, and waking the threads.
  void on_submitted(const Task& t, const SubmitRequest& q, const std::vector<EdgeInfo>& e) override {
    obs_->on_submitted(t, q, e);
  }
  void on_ready(Task& t) override;
  void on_early_candidate(Task& t) override;
  void on_completed(Task& t) override;
  void on_retired(Task& t) override { obs_->on_retired(t); }
  void on_ring_progress(int r) override;
  void on_released(Task& t) override;
  void on_scope_sample(const ScopeSample& s) override { obs_->on_scope_sample(s); }
  void on_error(const LatchedError& e) override;
  void on_warning(const std::string& k, const std::string& m) override { obs_->on_warning(k, m); }
  bool reads_edges() const override { return obs_->reads_edges(); }
  const Platform& platform_;
  RunConfig config_;
  SimObserver null_obs_;
  SimObserver* obs_;
  Runtime runtime_;
  std::unique_ptr<AicoreComplex> cores_;
  std::unique_ptr<CrossCorePipes> pipes_;
  std::unique_ptr<FftsBarrier> ffts_;
  std::unique_ptr<GmModel> gm_;
  std::unique_ptr<AicpuClock> clock_;  // the AICPU threads' order (before them: it registers them)
  SchedContext ctx_;
  std::vector<std::unique_ptr<SchedulerThread>> scheds_;
  std::unique_ptr<OrchestratorThread> orch_;
  PeerPort* port_ = nullptr;
};

}  // namespace npusim
