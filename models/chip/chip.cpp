#include "models/chip/chip.h"

#include <cstdlib>
#include <string>

namespace npusim {

Chip::Chip(sc_core::sc_module_name name, const Platform& platform, const RunConfig& config,
           OpSource& program, DataStore& data, SimObserver* observer)
    : sc_core::sc_module(name), platform_(platform), config_(config),
      obs_(observer ? observer : &null_obs_),
      runtime_(platform_, config_, data, this) {
  cores_ = std::make_unique<AicoreComplex>("aicore", platform_, config_, obs_);
  pipes_ = std::make_unique<CrossCorePipes>(*cores_, platform_);
  cores_->add_handler(pipes_.get());
  ffts_ = std::make_unique<FftsBarrier>(*cores_, platform_);
  cores_->add_handler(ffts_.get());
  gm_ = std::make_unique<GmModel>(*cores_, platform_, data, runtime_, obs_, config_.cache_policy_lowering);
  cores_->add_handler(gm_.get());
  clock_ = std::make_unique<AicpuClock>("aicpu_clock");
  ctx_.clock = clock_.get();
  // One chip: the AICore complex is the only other SystemC process, so the
  // clock may run ahead of the kernel up to its next event (attach() turns
  // this off for several chips). NPUSIM_AICPU_LOCKSTEP=1 turns it off too:
  // every AICPU due time then waits on the kernel, as before running ahead
  // (a check that running ahead changes no output, tests/test_aicpu_clock.cpp).
  const char* lockstep = std::getenv("NPUSIM_AICPU_LOCKSTEP");
  if (!lockstep || std::string(lockstep) != "1")
    clock_->set_horizon(cores_->next_event_time());
  ctx_.rt = &runtime_;
  ctx_.cores = cores_.get();
  ctx_.obs = obs_;
  ctx_.platform = &platform_;
  for (int i = 0; i < config_.sched_threads; ++i) {
    std::string n = "sched" + std::to_string(i);
    scheds_.push_back(std::make_unique<SchedulerThread>(n.c_str(), i, config_.sched_threads, ctx_));
    ctx_.threads.push_back(scheds_.back().get());
  }
  if (config_.resolution_thread()) {
    // host_build_graph's last AICPU thread: no cores, resolution and dummies
    // (scheduler_cold_path.cpp assign_cores_to_threads).
    std::string n = "sched" + std::to_string(config_.sched_threads);
    scheds_.push_back(
        std::make_unique<SchedulerThread>(n.c_str(), config_.sched_threads, config_.sched_threads, ctx_, true));
    ctx_.resolver = scheds_.back().get();
    ctx_.handoff.resize(static_cast<std::size_t>(config_.sched_threads));
  }
  orch_ = std::make_unique<OrchestratorThread>(
      "orch", *clock_, runtime_, program, *obs_, platform_,
      config_.runtime == RuntimeKind::HostBuildGraph);
  orch_->set_on_finish([this] { ctx_.wake_all(); });
}

void Chip::on_ready(Task& t) {
  obs_->on_ready(t);
  ctx_.wake_all();
}

void Chip::on_early_candidate(Task& t) {
  obs_->on_early_candidate(t);
  ctx_.wake_all();
}

void Chip::on_completed(Task& t) {
  obs_->on_completed(t);
  orch_->wake_progress();
}

void Chip::on_ring_progress(int r) {
  obs_->on_ring_progress(r);
  orch_->wake_progress();
}

// A release drops pins set_tensor_data may be waiting for.
void Chip::on_released(Task&) { orch_->wake_progress(); }

void Chip::on_error(const LatchedError& e) {
  obs_->on_error(e);
  ctx_.stop = true;  // emergency shutdown: every thread stops at its next check
  ctx_.wake_all();
  orch_->wake_progress();
}

}  // namespace npusim
