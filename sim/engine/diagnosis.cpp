#include "sim/engine/diagnosis.h"

#include <cstdio>
#include <sstream>

namespace npusim::engine {

namespace {

std::string fmt_us(Time t) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3f us", to_us(t));
  return b;
}

const char* state_name(TaskState s) {
  switch (s) {
    case TaskState::Pending: return "PENDING";
    case TaskState::Completed: return "COMPLETED";
    case TaskState::Consumed: return "CONSUMED";
  }
  return "?";
}

std::string task_label(const Task& t) {
  std::string s = task_display(t.id);
  if (t.kind == TaskKind::Alloc) return s + " (alloc_tensors)";
  if (t.kind == TaskKind::Dummy) return s + " (dummy)";
  return s + " (" + (t.kernel ? t.kernel->name : std::string("?")) + ")";
}

// Why the oldest live task of a ring cannot be reclaimed yet.
std::string head_reason(Runtime& rt, const Task& h) {
  if (h.state == TaskState::Pending) {
    if (!h.is_ready()) return "it is still waiting for " +
                              std::to_string(h.fanin_count - h.fanin_refcount) + " producer(s)";
    return "it has not completed yet";
  }
  for (const auto& s : rt.open_scopes())
    for (TaskId id : s.tasks)
      if (id == h.id) return "it is pinned by the open scope '" + s.site + "' (depth " +
                             std::to_string(s.depth) + "), which only closes after this submit";
  std::uint32_t consumers = (h.fanout_count & ~kFanoutScopeBit) - (h.fanout_refcount & ~kFanoutScopeBit);
  if (consumers) return "it is held by " + std::to_string(consumers) + " consumer(s) not yet released";
  return "its own release step has not run yet";
}

void describe_ring(Runtime& rt, int r, std::vector<std::string>& lines, nlohmann::json& j) {
  Ring& g = rt.ring(r);
  std::ostringstream o;
  o << "ring " << r << ": " << g.live() << " live task(s) of window " << g.window() << " (max "
    << (g.window() - 1) << "), heap " << g.heap_used() << " of " << g.heap_capacity()
    << " bytes in use, dep pool " << g.dep_used() << " of " << g.dep_pool_capacity();
  lines.push_back(o.str());
  nlohmann::json rj = {{"ring", r},
                       {"live_tasks", g.live()},
                       {"task_window", g.window()},
                       {"heap_used", g.heap_used()},
                       {"heap", g.heap_capacity()},
                       {"dep_pool_used", g.dep_used()},
                       {"dep_pool", g.dep_pool_capacity()}};
  if (g.live()) {
    Task& h = g.slot(g.tail());
    std::string why = head_reason(rt, h);
    lines.push_back("  reclaim head " + task_label(h) + " is " + state_name(h.state) + ": " + why);
    rj["reclaim_head"] = {{"task", task_display(h.id)}, {"state", state_name(h.state)}, {"why", why}};
  }
  j["rings"].push_back(rj);
}

}  // namespace

nlohmann::json Failure::to_json() const {
  nlohmann::json j = {{"name", name},
                      {"orch_error_code", orch_error_code},
                      {"sched_error_code", sched_error_code},
                      {"host_code", host_code},
                      {"message", message},
                      {"stall_time_ns", to_ns(stall_time)},
                      {"device_time_ns", to_ns(device_time)}};
  if (!sub_class.empty()) j["sub_class"] = sub_class;
  j["diagnosis"] = diagnosis;
  j["diagnosis"]["explanation"] = diagnosis_lines;
  return j;
}

Failure diagnose(Chip& chip) {
  Runtime& rt = chip.runtime();
  const Platform& p = chip.platform();
  Failure f;
  const Time now = sc_core::sc_time_stamp().value();
  int code = 0;
  int running = 0;
  for (int c = 0; c < chip.cores().map().total(); ++c)
    if (!chip.cores().idle(c)) ++running;
  std::uint64_t ready = 0;
  for (int s = 0; s < 3; ++s)
    ready += rt.queue_size(static_cast<Shape>(s), false) + rt.queue_size(static_cast<Shape>(s), true);
  ready += rt.dummy_queue_size();
  const std::uint64_t total = rt.total_submitted();
  const std::uint64_t completed = rt.completed();
  std::uint64_t waiting = total > completed + ready ? total - completed - ready : 0;

  if (rt.has_error()) {
    const LatchedError& e = rt.error();
    const ErrorInfo& info = error_info(e.code);
    code = static_cast<int>(e.code);
    f.name = info.name;
    (is_sched_error(e.code) ? f.sched_error_code : f.orch_error_code) = code;
    f.message = e.message;
    f.stall_time = e.time;
    f.device_time = e.time;
  } else {
    // Nothing left to happen and the program did not finish: the device's
    // scheduler would time out (§5.9) after its no-progress window.
    code = static_cast<int>(ErrorCode::SchedulerTimeout);
    f.name = "SCHEDULER_TIMEOUT";
    f.sched_error_code = code;
    f.stall_time = now;
    f.device_time = now + p.timeouts.scheduler_no_progress;
    if (running) f.sub_class = "S1:running-stalled";
    else if (ready) f.sub_class = "S3:ready-but-all-idle";
    else if (waiting) f.sub_class = "S4:dependency-deadlock";
    else if (!rt.orchestration_done()) f.sub_class = "S5:orchestrator-starvation";
    else f.sub_class = "unknown:accounting/corruption";
    f.message = "FATAL(code=100): scheduler made no progress for " +
                std::to_string(p.timeouts.scheduler_no_progress / 1000000000ull) + " ms";
  }
  f.host_code = kAclAicpuException;
  const ErrorInfo& info = error_info(static_cast<ErrorCode>(code));

  // --- as the device says it
  const char* field = f.sched_error_code ? "sched_error_code" : "orch_error_code";
  f.device_lines.push_back("PTO2 runtime failed: orch_error_code=" + std::to_string(f.orch_error_code) +
                           " sched_error_code=" + std::to_string(f.sched_error_code) +
                           " runtime_status=-" + std::to_string(code));
  f.device_lines.push_back(std::string("error detail: ") + field + "=" + std::to_string(code) + " " +
                           info.name + " - " + info.description);
  f.device_lines.push_back(std::string("error hint: ") + info.hint +
                           ". See docs/troubleshooting/device-error-codes.md");
  if (!f.sub_class.empty()) {
    std::string sub = f.sub_class.substr(0, f.sub_class.find(':'));
    f.device_lines.push_back("PTO2 scheduler timeout sub_class=" + f.sub_class + " (detail=" +
                             (sub.size() > 1 && sub[0] == 'S' ? sub.substr(1) : std::string("99")) +
                             ") completed=" + std::to_string(completed) + "/" + std::to_string(total) +
                             " running=" + std::to_string(running) + " ready=" + std::to_string(ready) +
                             " waiting=" + std::to_string(waiting) +
                             " orch_done=" + (rt.orchestration_done() ? "1" : "0"));
  }
  if (!f.message.empty()) f.device_lines.push_back(f.message);
  f.device_lines.push_back("ACL error detail: " + std::to_string(f.host_code) +
                           " ACL_ERROR_RT_AICPU_EXCEPTION");
  f.device_lines.push_back(
      "ACL error hint: do NOT read this as 'deadlock' or 'OOM' on its own -- it is a generic "
      "host-side code. Grep the host log for 'orch_error_code=' / 'sched_error_code=' / "
      "'sub_class=' to get the device-classified reason, and read the device log for the "
      "detector that fired");

  // --- what only a simulator knows
  nlohmann::json& d = f.diagnosis;
  d["rings"] = nlohmann::json::array();
  f.diagnosis_lines.push_back("stopped making progress at " + fmt_us(f.stall_time) +
                              " of simulated time; the device would report it at " +
                              fmt_us(f.device_time));
  const OrchWait& w = chip.orchestrator().waiting();
  if (w.kind == OrchWait::Kind::Space) {
    f.diagnosis_lines.push_back("the orchestrator is blocked in the submit at " + w.path + " on the " +
                                std::string(resource_name(w.resource)) + " of ring " +
                                std::to_string(w.ring) + " since " + fmt_us(w.since));
    d["orchestrator"] = {{"waiting_for", resource_name(w.resource)}, {"ring", w.ring},
                         {"op", w.path}, {"since_ns", to_ns(w.since)}};
  } else if (w.kind == OrchWait::Kind::Read) {
    f.diagnosis_lines.push_back("the orchestrator is blocked in the read at " + w.path +
                                " waiting for task " + task_display(w.task) + " since " + fmt_us(w.since));
    d["orchestrator"] = {{"waiting_for", "read"}, {"task", task_display(w.task)}, {"op", w.path}};
  } else if (!rt.orchestration_done()) {
    f.diagnosis_lines.push_back("the orchestrator had not finished the program");
  }
  if (!rt.open_scopes().empty()) {
    std::string chain;
    for (const auto& s : rt.open_scopes())
      chain += (chain.empty() ? "" : " > ") + s.site + " (depth " + std::to_string(s.depth) + ", " +
               std::to_string(s.tasks.size()) + " tasks)";
    f.diagnosis_lines.push_back("open scopes: " + chain);
  }
  for (int r = 0; r < kNumRings; ++r)
    if (rt.ring(r).live() || (w.kind == OrchWait::Kind::Space && w.ring == r)) describe_ring(rt, r, f.diagnosis_lines, d);
  f.diagnosis_lines.push_back("tasks: " + std::to_string(completed) + " of " + std::to_string(total) +
                              " completed; " + std::to_string(running) + " core(s) running, " +
                              std::to_string(ready) + " task(s) ready, " + std::to_string(waiting) +
                              " waiting on producers");
  d["tasks"] = {{"completed", completed}, {"submitted", total}, {"running_cores", running},
                {"ready", ready}, {"waiting", waiting}};
  return f;
}

}  // namespace npusim::engine
