// The Python module's native half, `npusim._npusim` (docs/python.md): the
// engine's run, check, sweep, compare and report, each executed in a forked
// child process.
//
// Why a child per call: SystemC's kernel is a process-wide singleton
// (sc_curr_simcontext is a plain global, an SC_THREAD is a coroutine of the
// thread that calls sc_start), so two simulations cannot share a process at
// the same time, and one that ended leaves its context behind. Each call
// forks; the child starts from this process's kernel, which never ran
// anything (this process never simulates), runs the engine, writes its
// outcome on a pipe and leaves with _exit (no Python object, no atexit
// handler, no stdio buffer of the parent's is touched in the child). The
// calling thread waits on the pipe with the GIL released, so a thread pool
// runs as many simulations at once as it has threads, each in its own
// process, and nothing of one run reaches the next. The outputs are written
// by the child; the Python half reads them (npusim/__init__.py).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "models/common/errors.h"
#include "sim/json/json_input.h"
#include "sim/engine/cli_options.h"
#include "sim/engine/engine.h"
#include "sim/host/interrupt.h"
#include "sim/host/subprocess.h"
#include "sim/study/sweep.h"
#include "sim/report/compare.h"
#include "sim/report/report.h"

namespace py = pybind11;
namespace engine = npusim::engine;
namespace host = npusim::host;
namespace study = npusim::study;

namespace {

// What a call in the child came to: its exit status (the command line's),
// what it printed, and the input error or internal error that stopped it.
struct Outcome {
  int status = 0;
  std::string out, err;
  bool input_error = false;
  std::string file, path, message;  // the input error's
  std::string internal;             // an internal error's message (status 4)
};

void put(std::string& buf, const std::string& s) {
  const std::uint64_t n = s.size();
  buf.append(reinterpret_cast<const char*>(&n), sizeof n);
  buf += s;
}

bool get(const std::string& buf, std::size_t& at, std::string& s) {
  std::uint64_t n = 0;
  if (buf.size() - at < sizeof n) return false;
  std::memcpy(&n, buf.data() + at, sizeof n);
  at += sizeof n;
  if (buf.size() - at < n) return false;
  s.assign(buf, at, n);
  at += n;
  return true;
}

std::string encode(const Outcome& o) {
  std::string b;
  put(b, std::to_string(o.status));
  put(b, o.out);
  put(b, o.err);
  put(b, o.input_error ? "1" : "0");
  put(b, o.file);
  put(b, o.path);
  put(b, o.message);
  put(b, o.internal);
  return b;
}

bool decode(const std::string& b, Outcome& o) {
  std::size_t at = 0;
  std::string status, ie;
  if (!(get(b, at, status) && get(b, at, o.out) && get(b, at, o.err) && get(b, at, ie) && get(b, at, o.file) &&
        get(b, at, o.path) && get(b, at, o.message) && get(b, at, o.internal)))
    return false;
  o.status = std::atoi(status.c_str());
  o.input_error = ie == "1";
  return at == b.size();
}

void write_all(int fd, const std::string& b) {
  std::size_t done = 0;
  while (done < b.size()) {
    const ssize_t n = ::write(fd, b.data() + done, b.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// `stdin_text`: the trace the child reads as its standard input (a trace
// given as a dict or built in Python, run as `npusim run -`); null: none.
template <class Body>
Outcome in_child(Body body, const std::string* stdin_text = nullptr) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("npusim: cannot create a pipe");
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("npusim: cannot fork the run's process");
  }
  if (pid == 0) {  // the child: C++ only, then _exit
    // Only its own pipe: a copy of another thread's pipe (a run forked at
    // the same time) would hold that run's reader until this child ends.
    const int w = fds[1];
    if (w > 3) ::close_range(3, static_cast<unsigned>(w - 1), 0);
    ::close_range(static_cast<unsigned>(w + 1), ~0u, 0);
    ::setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    host::interrupt::install();  // an interrupted run removes its partial outputs (docs/outputs.md)
    Outcome o;
    try {
      if (stdin_text) {
        const int mfd = ::memfd_create("npusim-trace", 0);
        if (mfd < 0) throw std::runtime_error("memfd_create failed");
        write_all(mfd, *stdin_text);
        ::lseek(mfd, 0, SEEK_SET);
        ::dup2(mfd, 0);
        ::close(mfd);
      }
      std::ostringstream out, err;
      o.status = body(out, err);
      o.out = out.str();
      o.err = err.str();
    } catch (const npusim::InputError& e) {
      o.status = engine::kExitInputError;
      o.input_error = true;
      o.file = e.file();
      o.path = e.path();
      o.message = e.message();
    } catch (const std::bad_alloc&) {
      o.status = engine::kExitInputError;
      o.input_error = true;
      o.message = "out of host memory: the run needs more memory than this process may use; nothing written";
    } catch (const std::exception& e) {  // SystemC's sc_report included
      if (npusim::out_of_memory()) {
        o.status = engine::kExitInputError;
        o.input_error = true;
        o.message = "out of host memory: the run needs more memory than this process may use; nothing written";
      } else {
        o.status = engine::kExitInternalError;
        o.internal = e.what();
      }
    }
    write_all(fds[1], encode(o));
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string buf;
  int wstatus = 0;
  bool interrupted = false;
  {
    py::gil_scoped_release nogil;
    char chunk[65536];
    for (;;) {
      const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) {
        // A signal for Python (Ctrl-C in a notebook): its handler runs now;
        // if it raised, the run is interrupted as `npusim run` would be
        // (SIGINT: the child removes its partial outputs and dies of it).
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
          interrupted = true;
          ::kill(pid, SIGINT);
          break;
        }
        continue;
      }
      if (n <= 0) break;
      buf.append(chunk, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }
  if (interrupted) throw py::error_already_set();
  Outcome o;
  if (!decode(buf, o)) {
    o = Outcome{};
    o.status = engine::kExitInternalError;
    o.internal = WIFSIGNALED(wstatus) ? "the run's process died of signal " + std::to_string(WTERMSIG(wstatus))
                                      : "the run's process ended without its outcome (exit status " +
                                            std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) + ")";
  }
  return o;
}

py::tuple to_python(const Outcome& o) {
  py::object ie = py::none();
  if (o.input_error) ie = py::make_tuple(o.file, o.path, o.message);
  py::object internal = o.internal.empty() ? py::object(py::none()) : py::object(py::str(o.internal));
  return py::make_tuple(o.status, py::bytes(o.out), py::bytes(o.err), ie, internal);
}

std::string text_of(const py::dict& d, const char* key) {
  return d.contains(key) ? d[key].cast<std::string>() : std::string();
}

// The Python half's keyword arguments (already strings, bools and ints)
// -> a RunRequest, through the command line's own conversion (cli_options.h).
void fill_request(engine::RunRequest& req, engine::SimText& t, const py::dict& o) {
  using T = engine::SimText;
  static const std::pair<const char*, std::string T::*> kText[] = {
      {"ring_task_window", &T::rtw},       {"ring_heap", &T::rh},
      {"ring_dep_pool", &T::rdp},          {"runtime", &T::runtime},
      {"hbg_layout", &T::layout},          {"cache_policy_lowering", &T::lowering},
      {"seed", &T::seed},                  {"aicpu_thread_num", &T::threads},
      {"scheduler_timeout_ms", &T::sched_timeout}, {"max_tasks", &T::max_tasks},
      {"max_output", &T::max_output},      {"compress", &T::compress}};
  using R = engine::RunRequest;
  static const std::pair<const char*, bool R::*> kFlags[] = {
      {"scope_stats", &R::scope_stats}, {"deps", &R::deps},     {"task_stats", &R::task_stats},
      {"suggest", &R::suggest},         {"strict_coherency", &R::strict_coherency},
      {"strict", &R::strict},           {"host_stats", &R::host_stats}};
  for (const auto& [key, member] : kText) t.*member = text_of(o, key);
  for (const auto& [key, member] : kFlags)
    if (o.contains(key)) req.*member = o[key].cast<bool>();
  if (o.contains("swimlane_level")) req.swimlane_level = o["swimlane_level"].cast<int>();
}

// npusim run: `trace` a path, or "" with `text` the trace itself (read as
// standard input, "-").
py::tuple run(const std::string& trace, const std::string& text, const std::string& platform,
              const std::string& out_dir, const py::dict& options) {
  engine::RunRequest req;
  engine::SimText t;
  fill_request(req, t, options);
  req.trace_path = trace.empty() ? "-" : trace;
  req.platform = platform;
  req.out_dir = out_dir;
  req.quiet = true;
  req.throw_input_errors = true;
  return to_python(in_child(
      [&](std::ostream& out, std::ostream& err) {
        engine::to_options(req, t);
        return engine::run(req, out, err);
      },
      trace.empty() ? &text : nullptr));
}

py::tuple check(const std::string& trace, const std::string& text, const std::string& platform) {
  engine::RunRequest req;
  req.trace_path = trace.empty() ? "-" : trace;
  req.platform = platform;
  req.throw_input_errors = true;
  return to_python(in_child([&](std::ostream& out, std::ostream& err) { return engine::check(req, out, err); },
                            trace.empty() ? &text : nullptr));
}

py::tuple sweep(const std::string& input, const std::string& platform, const std::vector<std::string>& grid,
                const std::string& csv, int jobs, const std::string& scheduler) {
  const study::SweepRequest req{input, platform, grid, csv, jobs, scheduler, /*quiet=*/true};
  return to_python(in_child([&](std::ostream& out, std::ostream& err) { return study::sweep(req, out, err); }));
}

py::tuple compare(const std::string& base, const std::string& cur, const py::dict& o) {
  namespace rep = npusim::report;
  const std::string tolerance = text_of(o, "tolerance"), threshold = text_of(o, "ring_threshold"),
                    gate = text_of(o, "gate"), format = text_of(o, "format");
  std::vector<std::string> tolerance_for;
  if (o.contains("tolerance_for")) tolerance_for = o["tolerance_for"].cast<std::vector<std::string>>();
  const bool allow_different = o.contains("allow_different") && o["allow_different"].cast<bool>();
  return to_python(in_child([&](std::ostream& out, std::ostream&) {
    rep::CompareOptions c;
    if (!tolerance.empty()) c.tolerance_pct = rep::parse_percentage(tolerance, "--tolerance");
    if (!threshold.empty()) c.ring_threshold_pct = rep::parse_percentage(threshold, "--ring-threshold");
    if (!gate.empty()) c.gate = rep::parse_compare_gate(gate);
    if (!format.empty()) c.format = rep::parse_compare_format(format);
    c.tolerance_for = tolerance_for;
    c.allow_different = allow_different;
    return rep::compare_summaries(base, cur, c, out);
  }));
}

py::tuple report(const std::string& run_dir, const std::string& out_path) {
  return to_python(in_child(
      [&](std::ostream& out, std::ostream&) { return npusim::report::report_command(run_dir, out_path, out); }));
}

// The report's page for a summary (JSON text), without the time series: a
// Result's notebook view. In a child too: the page's code is the engine's.
py::tuple report_page(const std::string& summary_text, const std::string& title) {
  return to_python(in_child([&](std::ostream& out, std::ostream&) {
    out << npusim::report::report_html(npusim::json_input::parse_own(summary_text), title);
    return 0;
  }));
}

}  // namespace

// libsystemc's own main (sc_elab_and_sim) calls sc_main, so the library
// needs the symbol from whatever loads it; the module never calls it.
extern "C" __attribute__((visibility("default"))) int sc_main(int, char*[]) { return 0; }

PYBIND11_MODULE(_npusim, m) {
  m.doc() = "npusim's engine (docs/python.md); use the npusim package, not this module";
  m.def("set_executable", &host::set_self_exe, py::arg("path"),
        "the npusim executable that sizing re-runs, sweeps and scenes start, and beside which platforms are found");
  m.def("run", &run, py::arg("trace"), py::arg("text"), py::arg("platform"), py::arg("out_dir"), py::arg("options"));
  m.def("check", &check, py::arg("trace"), py::arg("text"), py::arg("platform"));
  m.def("sweep", &sweep, py::arg("input"), py::arg("platform"), py::arg("grid"), py::arg("csv"), py::arg("jobs"),
        py::arg("scheduler"));
  m.def("compare", &compare, py::arg("baseline"), py::arg("current"), py::arg("options"));
  m.def("report", &report, py::arg("run_dir"), py::arg("out_path"));
  m.def("report_page", &report_page, py::arg("summary"), py::arg("title"));
}
