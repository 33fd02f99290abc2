#include "sim/study/sweep.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <unistd.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "models/common/errors.h"
#include "sim/json/json_read.h"
#include "sim/json/json_util.h"
#include "sim/config/run_options.h"
#include "sim/config/suggest.h"
#include "sim/host/interrupt.h"
#include "sim/host/subprocess.h"
#include "sim/study/worker.h"
#include "sim/json/json_input.h"
#include "sim/platform/platform_loader.h"
#include "sim/report/compare.h"
#include "sim/record/json_out.h"
#include "sim/report/page_text.h"
#include "sim/report/plot.h"
#include "sim/record/whole_file.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace npusim::study {

namespace {

// The run options a grid may name (the trace's `run` block keys; each is
// the option --NAME with '-' for '_').
const std::vector<std::string> kRunOptions = {"aicpu_thread_num", "ring_task_window", "ring_heap",
                                              "ring_dep_pool",    "runtime",          "hbg_layout",
                                              "cache_policy_lowering", "seed",        "scheduler_timeout_ms"};

// A grid name for a field of a worker file: this prefix, then its JSON pointer.
const std::string kWorkerPrefix = "worker:";

struct Axis {
  std::string name;                 // a run option, a JSON pointer into the platform ("/..."), or "worker:/..."
  std::vector<std::string> values;  // as typed ("[16,16,8,8]" for a four-ring list)
  bool platform() const { return name[0] == '/'; }
  bool worker() const { return name.rfind(kWorkerPrefix, 0) == 0; }
  bool option() const { return !platform() && !worker(); }
};

// What a point's run left: its exit status and, when it wrote one, its summary.
struct Row {
  std::vector<std::string> values;  // one per axis
  std::string status;               // the summary's "ok" or "error"; "failed" without a summary
  int exit_code = -1;               // 128 + N for a death by signal N, as a shell says
  std::string error;                // the failure's name (summary error.name)
  std::vector<std::pair<std::string, double>> numbers;  // the summary's figures, dotted names
};

// "a,[1,2],b" -> {"a", "[1,2]", "b"}: commas inside brackets stay.
std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

// The most points one sweep runs (docs/sweeps.md).
constexpr std::uint64_t kMaxSweepPoints = 10000;

std::vector<Axis> parse_grid(const std::vector<std::string>& grid, const std::vector<std::string>& pointers,
                             bool worker_input) {
  if (grid.empty()) throw InputError(config::kCommandLine, "--grid", "expected at least one --grid NAME=V1,V2,...");
  std::vector<Axis> axes;
  for (const std::string& g : grid) {
    const std::size_t eq = g.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == g.size())
      throw InputError(config::kCommandLine, "--grid", "expected NAME=V1,V2,..., got \"" + g + "\"");
    Axis a{g.substr(0, eq), split_values(g.substr(eq + 1))};
    for (const std::string& v : a.values)
      if (v.empty()) throw InputError(config::kCommandLine, "--grid", "an empty value in \"" + g + "\"");
    if (a.worker() && !worker_input)
      throw InputError(config::kCommandLine, "--grid",
                       "\"" + a.name + "\" names a field of a worker file, and INPUT is not one (docs/sweeps.md)");
    const auto& names = a.platform() ? pointers : kRunOptions;
    if (a.option() && std::find(names.begin(), names.end(), a.name) == names.end()) {
      const std::string near = config::closest(a.name, names);
      throw InputError(config::kCommandLine, "--grid",
                       "unknown run option \"" + a.name + "\"" +
                           (near.empty() ? " (expected one of: " + json_input::join_names(names) +
                                               ", or a platform field by its JSON pointer such as "
                                               "/sched/dispatch_task_ns" +
                                               (worker_input ? ", or a worker file's field such as worker:/prepare/ring_heap"
                                                             : "") + ")"
                                         : "; did you mean \"" + near + "\"?"));
    }
    for (const Axis& b : axes)
      if (b.name == a.name) throw InputError(config::kCommandLine, "--grid", "\"" + a.name + "\" is given twice");
    axes.push_back(std::move(a));
  }
  // Every point is built and checked before any runs (each with its own
  // platform text), so the product is bounded before it is made: three axes
  // of 1,000 values would otherwise take gigabytes, and hours, from one line.
  std::uint64_t points = 1;
  std::string sizes;
  for (const Axis& a : axes) {
    points = points > kMaxSweepPoints ? points : points * a.values.size();
    sizes += (sizes.empty() ? "" : " x ") + std::to_string(a.values.size());
  }
  if (points > kMaxSweepPoints)
    throw InputError(config::kCommandLine, "--grid",
                     "expected at most " + std::to_string(kMaxSweepPoints) + " points, got a grid of " + sizes +
                         " values (split the sweep)");
  return axes;
}

// The cartesian product, the last axis varying fastest.
std::vector<std::vector<std::string>> points_of(const std::vector<Axis>& axes) {
  std::vector<std::vector<std::string>> pts(1);
  for (const Axis& a : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& p : pts)
      for (const std::string& v : a.values) {
        next.push_back(p);
        next.back().push_back(v);
      }
    pts = std::move(next);
  }
  return pts;
}

// A grid value for a platform or worker file field: JSON if it parses as
// JSON, else a string.
json json_value(const std::string& text) {
  json v = json_input::parse_or_discarded(text);
  return v.is_discarded() ? json(text) : v;
}

// The platform with the point's values at their pointers (a field given as
// {"value": ...} gets its value replaced). An unknown pointer is an input
// error naming the closest field.
json platform_for(const json& base, const std::vector<Axis>& axes, const std::vector<std::string>& values,
                  const std::vector<std::string>& pointers) {
  json doc = base;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (!axes[i].platform()) continue;
    json::json_pointer ptr;
    try {
      ptr = json::json_pointer(axes[i].name);
    } catch (const json::exception&) {
    }
    if (ptr.empty() || !doc.contains(ptr)) {
      const std::string near = config::closest(axes[i].name, pointers);
      throw InputError(config::kCommandLine, "--grid",
                       "the platform has no field \"" + axes[i].name + "\"" +
                           (near.empty() ? " (docs/platform.md lists them)" : "; did you mean \"" + near + "\"?"));
    }
    json& at = doc[ptr];
    (at.is_object() && at.contains("value") ? at["value"] : at) = json_value(values[i]);
  }
  return doc;
}

// The worker file INPUT is, or nullopt when INPUT is a trace or a scene: a
// JSON object with "npusim_worker" is a worker file, as `npusim worker` reads
// it (docs/workers.md); a trace or a scene is left to `npusim run` to read.
std::optional<json> read_worker_input(const std::string& path) {
  json_input::note_input(path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || text.str().find("\"npusim_worker\"") == std::string::npos) return std::nullopt;
  json doc = json_input::read_file(path);
  if (!doc.is_object() || !doc.contains("npusim_worker")) return std::nullopt;
  return doc;
}

// Every JSON pointer of `doc`, for the closest-name hint.
void pointers_of(const json& doc, const std::string& at, std::vector<std::string>& out) {
  if (doc.is_object())
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      const std::string here = json_input::pointer_join(at, it.key());
      out.push_back(here);
      pointers_of(it.value(), here, out);
    }
  if (doc.is_array())
    for (std::size_t i = 0; i < doc.size(); ++i) {
      const std::string here = json_input::pointer_join(at, i);
      out.push_back(here);
      pointers_of(doc[i], here, out);
    }
}

// Sets the worker file's field at `name` ("worker:/..."): a field it has, or
// a new key of an object it has (a null `prepare` or `config` is an empty
// one). Anything else is an input error naming the closest field.
void set_worker_field(json& doc, const std::string& name, const json& value) {
  const std::string pointer = name.substr(kWorkerPrefix.size());
  json::json_pointer ptr;
  try {
    ptr = json::json_pointer(pointer);
  } catch (const json::exception&) {
  }
  const bool settable = !ptr.empty() && (doc.contains(ptr) || (doc.contains(ptr.parent_pointer()) &&
                                                                (doc[ptr.parent_pointer()].is_object() ||
                                                                 doc[ptr.parent_pointer()].is_null())));
  if (!settable) {
    // The file's fields, and those it may add (docs/workers.md).
    std::vector<std::string> names = {"/worker/kind", "/worker/chips", "/worker/aicpu_thread_num"};
    pointers_of(doc, "", names);
    std::vector<std::string> configs = {"/prepare"};
    for (std::size_t i = 0; doc["dispatches"].is_array() && i < doc["dispatches"].size(); ++i) {
      configs.push_back(json_input::pointer_join(json_input::pointer_join("/dispatches", i), "config"));
      names.push_back(json_input::pointer_join(json_input::pointer_join("/dispatches", i), "repeat"));
    }
    for (const std::string& c : configs)
      for (const std::string& o : kRunOptions) names.push_back(json_input::pointer_join(c, o));
    for (std::string& n : names) n = kWorkerPrefix + n;
    const std::string near = config::closest(name, names);
    throw InputError(config::kCommandLine, "--grid",
                     "the worker file has no field \"" + pointer + "\"" +
                         (near.empty() ? " (docs/workers.md lists them)" : "; did you mean \"" + near + "\"?"));
  }
  doc[ptr] = value;
}

bool is_ring_option(const std::string& name) { return name.rfind("ring_", 0) == 0; }

// A run option on a worker file applies to every dispatch, as an option on
// `npusim run`'s command line applies to the trace (docs/sweeps.md, "Worker
// files"): it is set in every dispatch's config; aicpu_thread_num is also the
// worker's baseline. A distributed (L3) dispatch takes only ring_* fields.
void set_worker_option(json& doc, const std::string& name, const json& value) {
  const bool distributed = doc["worker"].is_object() && doc["worker"].value("kind", json()) == "distributed";
  if (name == "aicpu_thread_num" && doc["worker"].is_object()) doc["worker"][name] = value;
  if (distributed && !is_ring_option(name)) {
    if (name == "aicpu_thread_num") return;
    throw InputError(config::kCommandLine, "--grid",
                     "\"" + name + "\" does not apply to a distributed worker's dispatches: an L3 dispatch takes "
                     "only the ring_* fields of its config (docs/workers.md); sweep aicpu_thread_num, a ring_* "
                     "option, or a field of the worker file (worker:/...)");
  }
  if (!doc["dispatches"].is_array()) return;  // the point's check names what is missing
  for (json& d : doc["dispatches"]) {
    if (!d.is_object()) continue;
    if (!d["config"].is_object()) d["config"] = json::object();
    d["config"][name] = value;
  }
}

// The dispatches' program paths made absolute, relative to the folder of the
// worker file as given, so the point's copy (in its scratch folder, or on a
// Dask worker) runs the same programs.
void absolute_programs(json& doc, const fs::path& folder) {
  auto absolute = [&](json& p) {
    if (p.is_string() && !p.get<std::string>().empty() && fs::path(p.get<std::string>()).is_relative())
      p = (folder / p.get<std::string>()).lexically_normal().string();
  };
  if (!doc["dispatches"].is_array()) return;
  for (json& d : doc["dispatches"])
    for (const char* key : {"trace", "scene"})
      if (d.is_object() && d.contains(key)) {
        if (d[key].is_array())
          for (json& p : d[key]) absolute(p);
        else
          absolute(d[key]);
      }
}

// The point's worker file: INPUT's with its worker: fields and run options set.
json worker_for(const json& base, const fs::path& folder, const std::vector<Axis>& axes,
                const std::vector<std::string>& values) {
  json doc = base;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].worker()) set_worker_field(doc, axes[i].name, json_value(values[i]));
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].option()) set_worker_option(doc, axes[i].name, json_value(values[i]));
  absolute_programs(doc, folder);
  return doc;
}

// The point's worker file checked as `npusim worker` checks it before it
// runs: the file, the worker against the platform, the prepare and every
// dispatch's options against the platform.
void check_worker_point(const json& doc, const Platform& platform, const std::string& label) {
  const WorkerFile w = parse_worker_doc(doc, label);
  check_worker(w, platform);
  RunOptions base;
  base.aicpu_thread_num = w.aicpu_thread_num;
  config::resolve(w.prepare.value_or(RunOptions{}), platform, label);
  for (const WorkerDispatch& d : w.dispatches) config::resolve(config::merge(base, d.config), platform, label);
}

// The run options of a point on `npusim run`'s command line.
std::vector<std::string> option_args(const std::vector<Axis>& axes, const std::vector<std::string>& values) {
  std::vector<std::string> args;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (!axes[i].option()) continue;
    std::string flag = "--" + axes[i].name, v = values[i];
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
    args.push_back(flag);
    args.push_back(v);
  }
  return args;
}

// The point's run options checked as `npusim run` checks them (syntax, then
// against the point's platform): a bad value stops the sweep before it runs.
void check_option_args(const std::vector<std::string>& args, const Platform& platform) {
  RunOptions o;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& flag = args[i];
    const std::string& v = args[i + 1];
    if (flag == "--aicpu-thread-num") o.aicpu_thread_num = config::parse_thread_num_cli(v);
    if (flag == "--ring-task-window") o.ring_task_window = config::parse_ring_cli(v, "ring_task_window");
    if (flag == "--ring-heap") o.ring_heap = config::parse_ring_cli(v, "ring_heap");
    if (flag == "--ring-dep-pool") o.ring_dep_pool = config::parse_ring_cli(v, "ring_dep_pool");
    if (flag == "--runtime") o.runtime = config::parse_runtime_cli(v);
    if (flag == "--hbg-layout") o.hbg_layout = config::parse_hbg_layout_cli(v);
    if (flag == "--cache-policy-lowering") o.cache_policy_lowering = config::parse_cache_lowering_cli(v);
    if (flag == "--seed") o.seed = config::parse_seed_cli(v);
    if (flag == "--scheduler-timeout-ms") o.scheduler_timeout_ms = config::parse_scheduler_timeout_cli(v);
  }
  config::resolve(o, platform, config::kCommandLine);
}

// check_option_args, its errors naming the --grid value they are about: the
// option they name (--ring-task-window) was never on the command line.
void check_options(const std::vector<std::string>& args, const Platform& platform, const std::vector<Axis>& axes,
                   const std::vector<std::string>& values) {
  try {
    check_option_args(args, platform);
  } catch (const InputError& e) {
    if (e.file() != config::kCommandLine) throw;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      std::string flag = "--" + axes[i].name;
      std::replace(flag.begin(), flag.end(), '_', '-');
      if (axes[i].option() && e.path() == flag)
        throw InputError(config::kCommandLine, "--grid", "\"" + axes[i].name + "=" + values[i] + "\": " + e.message());
    }
    throw;
  }
}

// One point, ready to run.
struct Job {
  std::vector<std::string> run_args;  // npusim run INPUT ... and the point's options
  std::string platform;               // --platform, unless platform_text is set
  std::string platform_text;          // the point's own platform file
  std::string worker_text;            // a worker file INPUT: the point's own (run_args[1] names it)
  fs::path dir;                       // its scratch folder (local runs)
};

// The summary a point's run leaves in its --out folder.
std::string summary_name(bool worker) { return worker ? "worker_summary.json" : "summary.json"; }

// At most this many dispatches of a worker file get columns of their own.
constexpr std::size_t kMaxDispatchColumns = 16;

// `npusim run`'s arguments for a local point: its platform and outputs in its folder.
std::vector<std::string> local_args(const Job& job) {
  std::vector<std::string> args = job.run_args;
  for (const std::string& a : {std::string("--platform"),
                               job.platform_text.empty() ? job.platform : (job.dir / "platform.json").string(),
                               std::string("--out"), (job.dir / "out").string()})
    args.push_back(a);
  return args;
}

// A worker_summary.json's figures (docs/sweeps.md, "Worker files"): its
// totals, then each dispatch's arena build and device time when the file has
// at most kMaxDispatchColumns dispatches; the first failed dispatch's error.
void worker_figures(const json& s, Row& r) {
  const json& t = s["totals"];
  for (const char* key : {"host_visible_ns", "device_wall_ns", "arena_builds", "arena_build_ns", "setup_arena_build_ns"})
    if (t.is_object() && t.contains(key) && t[key].is_number())
      r.numbers.emplace_back(std::string("totals.") + key, t[key].get<double>());
  const json& ds = s["dispatches"];
  if (!ds.is_array()) return;
  for (const json& d : ds)
    if (r.error.empty() && d.is_object() && d.contains("error") && d["error"].is_string())
      r.error = d["error"].get<std::string>();
  if (ds.size() > kMaxDispatchColumns) return;
  for (std::size_t i = 0; i < ds.size(); ++i)
    for (const char* key : {"arena_build_ns", "device_wall_ns"})
      if (ds[i].is_object() && ds[i].contains(key) && ds[i][key].is_number())
        r.numbers.emplace_back("dispatches." + std::to_string(i) + "." + key, ds[i][key].get<double>());
}

// The row of a finished point: its exit code and, when the run left one
// (exit 0 or 1), its summary's (or worker summary's) figures.
Row make_row(const std::vector<std::string>& values, int exit_code, const json& summary, bool worker) {
  Row r;
  r.values = values;
  r.exit_code = exit_code;
  r.status = "failed";
  if (exit_code < 0 || exit_code > 1 || !summary.is_object() || !summary.contains("status")) return r;
  const json& s = summary;
  r.status = s["status"].get<std::string>();
  if (worker) {
    worker_figures(s, r);
    return r;
  }
  if (s["error"].is_object() && s["error"]["name"].is_string()) r.error = s["error"]["name"].get<std::string>();
  for (const char* key : {"device_wall_ns", "makespan_ns", "scheduling_window_ns"})
    if (s.contains(key) && s[key].is_number()) r.numbers.emplace_back(key, s[key].get<double>());
  if (s.contains("tasks")) report::flatten_numbers("tasks", s["tasks"], r.numbers);
  if (s.contains("figures")) report::flatten_numbers("figures", s["figures"], r.numbers);
  return r;
}

void say_failed(std::size_t i, const Row& row, const std::string& first_err_line, std::ostream& err) {
  if (row.status != "failed") return;  // a device failure is a result, not news
  err << "npusim: sweep point " << i + 1 << " failed (exit " << row.exit_code << ")"
      << (first_err_line.empty() ? "" : ": " + first_err_line) << "\n";
}

// Runs every job here, at most `jobs` at once; rows in job order.
std::vector<Row> run_local(const std::vector<Job>& todo, const std::vector<std::vector<std::string>>& values,
                           bool worker, int jobs, std::ostream& err) {
  std::vector<Row> rows(todo.size());
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && static_cast<int>(running.size()) < jobs) {
      fs::create_directories(todo[next].dir);
      if (!todo[next].platform_text.empty()) std::ofstream(todo[next].dir / "platform.json") << todo[next].platform_text;
      if (worker) std::ofstream(todo[next].run_args[1]) << todo[next].worker_text;
      const pid_t pid = host::spawn_self(local_args(todo[next]), (todo[next].dir / "stderr.txt").string());
      if (pid < 0) throw std::runtime_error("cannot start npusim for a sweep point");
      host::interrupt::add_child(pid);
      running[pid] = next++;
    }
    const auto [w, status] = host::wait_any();
    if (w < 0) throw std::runtime_error("lost the sweep's child processes");
    host::interrupt::remove_child(w);
    const auto it = running.find(w);
    if (it == running.end()) continue;
    const std::size_t i = it->second;
    running.erase(it);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
    rows[i] = make_row(values[i], code, json_input::read_output((todo[i].dir / "out" / summary_name(worker)).string()), worker);
    std::ifstream e(todo[i].dir / "stderr.txt");
    std::string line;
    std::getline(e, line);
    say_failed(i, rows[i], line, err);
  }
  return rows;
}

// tools/sweep_dask.py: next to the platforms (a build or source tree's
// tools/, an install's share/npusim/tools/).
std::string dask_driver() {
  for (const std::string& d : platform::platform_search_dirs()) {
    const fs::path p = fs::path(d).parent_path() / "tools" / "sweep_dask.py";
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  throw InputError(config::kCommandLine, "--scheduler",
                   "cannot find tools/sweep_dask.py next to the platforms (looked in " +
                       json_input::join_names(platform::platform_search_dirs()) + ")");
}

// Runs every job as a task on the Dask cluster at `scheduler`
// (tools/sweep_dask.py; docs/sweeps.md, "On a Dask cluster"); rows in job order.
std::vector<Row> run_dask(const std::vector<Job>& todo, const std::vector<std::vector<std::string>>& values,
                          bool worker, const std::string& scheduler, const fs::path& dir, std::ostream& err) {
  json points = json::array();
  for (const Job& job : todo)
    points.push_back({{"args", job.run_args},
                      {"platform", job.platform},
                      {"platform_json", job.platform_text.empty() ? json() : json(job.platform_text)},
                      {"worker_json", worker ? json(job.worker_text) : json()}});
  fs::create_directories(dir);
  std::ofstream(dir / "points.json") << json{{"npusim", host::self_exe()}, {"points", points}}.dump();
  const std::string driver = dask_driver();
  // Debian's python3-distributed is a module of Debian's python3, which a
  // python3 earlier on PATH (a virtualenv, pyenv) may not see.
  const char* python = std::getenv("NPUSIM_PYTHON");
  std::error_code ec;
  const std::string py = python && *python ? python : fs::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
  const int rc = host::run_program(
      py, {driver, "--scheduler", scheduler, (dir / "points.json").string(), (dir / "results.json").string()},
      (dir / "driver.txt").string());
  const json results = json_input::read_output((dir / "results.json").string());
  if (rc != 0 || !results.is_array() || results.size() != todo.size()) {
    std::ifstream e(dir / "driver.txt");
    std::stringstream text;
    text << e.rdbuf();
    throw InputError(config::kCommandLine, "--scheduler",
                     "the sweep did not run on the Dask scheduler " + scheduler + " (" + driver + " exit " +
                         std::to_string(rc) + "): " + text.str());
  }
  std::vector<Row> rows;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const json& res = results[i];
    rows.push_back(make_row(values[i], res.value("exit", -1), res.value("summary", json()), worker));
    say_failed(i, rows.back(), res.value("stderr", std::string()), err);
  }
  return rows;
}

std::string number_text(double v) {
  std::ostringstream o;
  o.precision(15);
  o << v;
  return o.str();
}

// A CSV cell: quoted when it holds a comma, a quote or a line break.
std::string cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Columns: the axes, status, exit_code, error, then every figure any point
// has, in the order the "ok" points first give them (then the others': a
// failed run's summary has fewer figures).
std::string csv_text(const std::vector<Axis>& axes, const std::vector<Row>& rows) {
  std::vector<std::string> names;
  for (const bool ok : {true, false})
    for (const Row& r : rows)
      if ((r.status == "ok") == ok)
        for (const auto& [name, v] : r.numbers)
          if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  std::ostringstream o;
  for (const Axis& a : axes) o << cell(a.name) << ',';
  o << "status,exit_code,error";
  for (const std::string& n : names) o << ',' << n;
  o << '\n';
  for (const Row& r : rows) {
    for (const std::string& v : r.values) o << cell(v) << ',';
    o << r.status << ',' << r.exit_code << ',' << r.error;
    std::map<std::string, double> by(r.numbers.begin(), r.numbers.end());
    for (const std::string& n : names) {
      o << ',';
      if (const auto it = by.find(n); it != by.end()) o << number_text(it->second);
    }
    o << '\n';
  }
  return o.str();
}

// The column `plotted` (device_wall_ns; a worker file's totals.host_visible_ns)
// over the first axis (its values evenly spaced, as given), one line per value
// of the second; further axes at their first value. A failed point is a gap.
void write_svg(std::ostream& o, const std::vector<Axis>& axes, const std::vector<Row>& rows, const std::string& title,
               const std::string& plotted) {
  using report::plot::fmt;
  const double W = 860, H = 440, L = 90, T = 40, B = 60, legend_w = 200, R = legend_w + 30;
  const std::vector<std::string>& xs = axes[0].values;
  const std::vector<std::string> series = axes.size() > 1 ? axes[1].values : std::vector<std::string>{""};
  auto wall = [&](const Row& r) {
    for (const auto& [n, v] : r.numbers)
      if (n == plotted && r.status == "ok") return v;
    return -1.0;
  };
  auto shown = [&](const Row& r) {
    for (std::size_t k = 2; k < axes.size(); ++k)
      if (r.values[k] != axes[k].values[0]) return false;
    return true;
  };
  double ymax = 1;
  for (const Row& r : rows)
    if (shown(r)) ymax = std::max(ymax, wall(r));
  const std::vector<double> yt = report::plot::round_ticks(ymax, 6);
  auto X = [&](std::size_t i) { return L + (W - L - R) * (xs.size() == 1 ? 0.5 : double(i) / (xs.size() - 1)); };
  auto Y = [&](double v) { return H - B - (H - T - B) * v / yt.back(); };
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<text x=\"" << L << "\" y=\"20\" font-size=\"14\">" << report::xml_escape(title) << "</text>\n";
  o << "<g class=\"axes\" stroke=\"black\">\n<line x1=\"" << L << "\" y1=\"" << H - B << "\" x2=\"" << W - R
    << "\" y2=\"" << H - B << "\"/>\n<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L << "\" y2=\"" << H - B
    << "\"/>\n</g>\n";
  for (double v : yt)
    o << "<line class=\"grid\" x1=\"" << L << "\" y1=\"" << fmt(Y(v)) << "\" x2=\"" << W - R << "\" y2=\"" << fmt(Y(v))
      << "\" stroke=\"#ddd\"/>\n<text class=\"ytick\" x=\"" << L - 8 << "\" y=\"" << fmt(Y(v) + 4)
      << "\" text-anchor=\"end\">" << report::plot::tick_text(v) << "</text>\n";
  for (std::size_t i = 0; i < xs.size(); ++i)
    o << "<text class=\"xtick\" x=\"" << fmt(X(i)) << "\" y=\"" << H - B + 18 << "\" text-anchor=\"middle\">"
      << report::xml_escape(xs[i]) << "</text>\n";
  o << "<text x=\"" << fmt((L + W - R) / 2) << "\" y=\"" << H - 14 << "\" text-anchor=\"middle\">"
    << report::xml_escape(axes[0].name) << "</text>\n";
  o << "<text x=\"18\" y=\"" << (T + H - B) / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 "
    << (T + H - B) / 2 << ")\">" << report::xml_escape(plotted) << "</text>\n";
  for (std::size_t s = 0; s < series.size(); ++s) {
    const char* c = colors[s % 8];
    const std::string label = axes.size() > 1 ? axes[1].name + "=" + series[s] : plotted;
    const double ly = T + 18.0 * s;
    o << "<g class=\"series\" data-series=\"" << report::xml_escape(label) << "\">\n";
    o << "<line x1=\"" << W - legend_w << "\" y1=\"" << ly - 4 << "\" x2=\"" << W - legend_w + 24 << "\" y2=\""
      << ly - 4 << "\" stroke=\"" << c << "\"/>\n<text x=\"" << W - legend_w + 32 << "\" y=\"" << ly << "\">"
      << report::xml_escape(label) << "</text>\n";
    std::string path;
    for (const Row& r : rows) {
      if (!shown(r) || (axes.size() > 1 && r.values[1] != series[s])) continue;
      const std::size_t i = std::find(xs.begin(), xs.end(), r.values[0]) - xs.begin();
      const double v = wall(r);
      if (v < 0) {
        path += path.empty() || path.back() == ' ' ? "" : " ";  // a gap: the next point starts a new line
        continue;
      }
      path += (path.empty() || path.back() == ' ' ? "M" : " L") + fmt(X(i)) + " " + fmt(Y(v));
      o << "<circle cx=\"" << fmt(X(i)) << "\" cy=\"" << fmt(Y(v)) << "\" r=\"4\" fill=\"" << c << "\"/>\n";
    }
    if (!path.empty()) o << "<path d=\"" << path << "\" fill=\"none\" stroke=\"" << c << "\"/>\n";
    o << "</g>\n";
  }
  o << "</svg>\n";
}

}  // namespace

int sweep(const SweepRequest& req, std::ostream& out, std::ostream& err) {
  // Every point runs INPUT again: a folder, a device or a FIFO (read once,
  // or endless: /dev/zero) is refused here, not point by point.
  if (const std::string why = json_input::not_a_regular_file(req.input, "trace, scene or worker file"); !why.empty())
    throw InputError(req.input, "", why == "no such file" ? "file not found" : why);
  const Platform base_platform = platform::load_platform(req.platform);
  const json base_doc = json_input::read_file(base_platform.path);
  const std::vector<std::string> pointers = platform::platform_field_pointers();
  const std::optional<json> worker = read_worker_input(req.input);  // else a trace or a scene
  const std::vector<Axis> axes = parse_grid(req.grid, pointers, worker.has_value());
  const std::vector<std::vector<std::string>> values = points_of(axes);
  const bool own_platform = std::any_of(axes.begin(), axes.end(), [](const Axis& a) { return a.platform(); });
  const fs::path dir = fs::temp_directory_path() / ("npusim-sweep-" + std::to_string(::getpid()));
  // Every point is checked before any runs: a bad grid is exit 2, nothing written.
  std::vector<Job> todo;
  for (std::size_t i = 0; i < values.size(); ++i) {
    Job job;
    job.dir = dir / ("p" + std::to_string(i + 1));
    job.platform = req.scheduler.empty() ? req.platform : base_platform.path;
    const std::vector<std::string> opts = option_args(axes, values[i]);
    const std::string label = "--grid point " + std::to_string(i + 1);
    if (own_platform) job.platform_text = platform_for(base_doc, axes, values[i], pointers).dump(1);
    const Platform platform = own_platform ? platform::parse_platform(job.platform_text, label) : base_platform;
    check_options(opts, platform, axes, values[i]);
    if (worker) {
      // The point's own worker file, its programs by absolute path (so they
      // resolve from its scratch folder, here or on a Dask worker).
      job.worker_text = worker_for(*worker, fs::absolute(req.input).parent_path(), axes, values[i]).dump(1);
      check_worker_point(json_input::parse_own(job.worker_text), platform, label + " of " + req.input);
      job.run_args = {"worker", (job.dir / "worker.json").string()};
    } else {
      // On a cluster the input is read where the task runs: by its absolute path.
      job.run_args = {"run", req.scheduler.empty() ? req.input : fs::absolute(req.input).string(), "--no-host-stats"};
    }
    for (const char* flag : {"--quiet", "--no-suggest", "--swimlane-level", "0", "--no-deps", "--no-scope-stats",
                             "--no-task-stats"})
      job.run_args.push_back(flag);
    if (!worker) job.run_args.insert(job.run_args.end(), opts.begin(), opts.end());
    todo.push_back(std::move(job));
  }
  // The plot goes beside the table, unless the table goes to a device or a
  // pipe (/dev/stdout): then there is no "beside" and no plot.
  record::WholeFile csv(req.csv), svg;
  fs::path svg_path = req.csv;
  svg_path.replace_extension(".svg");
  const bool plot = csv.in_folder();
  if (plot) svg.open_whole(svg_path.string());
  const int cleanup = host::interrupt::remember(host::interrupt::Kind::Tree, dir.string());
  int jobs = req.jobs > 0 ? req.jobs : static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  jobs = std::clamp(jobs, 1, host::interrupt::kMaxChildren);
  std::vector<Row> rows;
  try {
    rows = req.scheduler.empty() ? run_local(todo, values, worker.has_value(), jobs, err)
                                 : run_dask(todo, values, worker.has_value(), req.scheduler, dir, err);
  } catch (...) {  // no partial output: the CSV and the plot are as they were
    std::error_code ec;
    fs::remove_all(dir, ec);
    host::interrupt::forget(cleanup);
    throw;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  host::interrupt::forget(cleanup);

  csv.raw(csv_text(axes, rows));
  if (plot) {
    std::ostringstream o;
    write_svg(o, axes, rows, "npusim sweep of " + fs::path(req.input).filename().string() + " on " +
                                 base_platform.name + (axes.size() > 2 ? " (further axes at their first value)" : ""),
              worker ? "totals.host_visible_ns" : "device_wall_ns");
    svg.raw(o.str());
  }
  record::WholeFile::commit_together({&csv, &svg});
  if (!req.quiet) {
    const auto ok = std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.status == "ok"; });
    out << "npusim sweep: " << rows.size() << " points, " << ok << " ok, " << rows.size() - ok << " not ok; "
        << req.csv << (plot ? ", " + svg_path.string() : std::string(" (no plot beside a device or pipe)")) << "\n";
  }
  return 0;
}

}  // namespace npusim::study
