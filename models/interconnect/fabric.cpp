#include "models/interconnect/fabric.h"

#include <algorithm>

#include "models/common/present.h"

namespace npusim {

Time PeerPort::execute(const PhaseCtx& ctx, Time t) {
  const Phase& ph = *ctx.phase;
  Links& links = fabric_.links();
  switch (ph.kind) {
    case PhaseKind::Notify: {
      const int peer = links.peer(rank_, ph.peer_offset);
      fabric_.post(peer, ph.flag, links.transfer(rank_, peer, kNotifyBytes, t));
      return t;  // posted: the core does not wait for it
    }
    case PhaseKind::WaitFlag: {
      if (flags_[ph.flag] >= ph.count) return t;
      waiters_[ph.flag].push_back(Waiter{ctx.core, ctx.task, ctx.block, ph.count, t});
      return kNever;
    }
    default: {  // a load or store of a peer's memory
      const int peer = links.peer(rank_, ph.peer_offset);
      const BlockEnv env(ctx.block, ctx.block_num);
      const std::uint64_t bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, ph.bytes.eval_or(env, 0)));
      return ph.kind == PhaseKind::Load ? links.transfer(peer, rank_, bytes, t) : links.transfer(rank_, peer, bytes, t);
    }
  }
}

void PeerPort::arrive(int flag, Time t) {
  const std::int64_t value = ++flags_[flag];
  auto it = waiters_.find(flag);
  if (it == waiters_.end()) return;
  std::vector<Waiter>& w = it->second;
  std::vector<Waiter> keep;
  std::vector<int> done;
  for (const Waiter& x : w) {
    if (x.count <= value) done.push_back(x.core);
    else keep.push_back(x);
  }
  w.swap(keep);
  for (int core : done) cores_->resume(core, t);
}

std::vector<PeerPort::OpenWait> PeerPort::open_waits() const {
  std::vector<OpenWait> out;
  for (const auto& [flag, ws] : waiters_) {
    auto v = flags_.find(flag);
    for (const Waiter& x : ws)
      out.push_back(OpenWait{x.core, x.task, x.block, flag, x.count, v == flags_.end() ? 0 : v->second, x.since});
  }
  return out;
}

Fabric::Fabric(sc_core::sc_module_name name, const InterconnectCosts& costs, int chips)
    : sc_core::sc_module(name), links_(costs, chips) {
  for (int r = 0; r < chips; ++r) ports_.push_back(std::make_unique<PeerPort>(*this, r));
  SC_METHOD(deliver);
  sensitive << ev_;
  dont_initialize();
}

void Fabric::post(int to, int flag, Time t) {
  queue_.push(Delivery{t, seq_++, to, flag});
  const Time present = model_present(), kernel = sc_core::sc_time_stamp().value();  // as AicoreComplex::schedule
  ev_.notify(sc_core::sc_time::from_value((t > present ? t : present) - kernel));
}

void Fabric::deliver() {
  const Time now = sc_core::sc_time_stamp().value();
  while (!queue_.empty() && queue_.top().t <= now) {
    const Delivery d = queue_.top();
    queue_.pop();
    port(d.to).arrive(d.flag, now);
  }
  if (!queue_.empty()) ev_.notify(sc_core::sc_time::from_value(queue_.top().t - now));
}

}  // namespace npusim
