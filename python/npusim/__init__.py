"""npusim from Python: the simulator's engine, one import away (docs/python.md).

    import npusim
    r = npusim.run("traces/chain.json")
    r.ok, r.summary["device_wall_ns"], r.tasks["task_id"]

run, check, compare, sweep and report take the command line's options as
keyword arguments (--ring-task-window -> ring_task_window=...) and refuse
what it refuses with the same InputError (file, JSON path, message). A
device failure is a Result with ok False, never an exception. Each call runs
the engine in a child process of its own (python/_npusim.cpp): calls from
several threads run at once, and no run leaves state behind for the next.
"""

import csv
import difflib
import gzip
import html
import io
import json
import os
import pathlib
import re
import shutil
import tempfile

from . import _npusim
from .program import Program, In, InOut, Out, OutExisting, NoDep, output, dumps

try:
    import numpy as _np
except ImportError:  # the columns are lists then
    _np = None

__all__ = ["run", "check", "compare", "sweep", "report", "Result", "CheckResult", "Comparison", "SweepResult",
           "InputError", "InternalError", "Program", "In", "InOut", "Out", "OutExisting", "NoDep", "output",
           "executable"]

COMMAND_LINE = "command line"  # the file an option's InputError names, as the command line's


class InputError(ValueError):
    """Invalid input (exit status 2 of the command line): nothing was written.

    .file: the file (or "command line" for an option), .path: the JSON
    pointer (or the option, "--ring-task-window"), .message: what was expected.
    """

    def __init__(self, file, path, message):
        self.file, self.path, self.message = file, path, message
        text = (file or "<input>") + ": " + ("at " + path + ": " if path else "") + message
        super().__init__(text)


class InternalError(RuntimeError):
    """A bug in npusim (exit status 4 of the command line), never a result."""


def _find_executable():
    env = os.environ.get("NPUSIM_EXE")
    if env:
        return env
    try:
        from ._location import EXECUTABLE  # the build tree's (python/CMakeLists.txt)
        if os.path.exists(EXECUTABLE):
            return EXECUTABLE
    except ImportError:
        pass
    # An install: PREFIX/lib/python3*/{dist,site}-packages/npusim -> PREFIX/bin/npusim.
    beside = pathlib.Path(__file__).resolve().parent.parents[3] / "bin" / "npusim"
    if beside.exists():
        return str(beside)
    return shutil.which("npusim") or ""


executable = _find_executable()
"""The npusim executable the engine starts for sizing re-runs, sweeps and scenes."""
_npusim.set_executable(executable)

# The options of `npusim run` (and record) as keyword arguments.
_TEXT_OPTIONS = ("ring_task_window", "ring_heap", "ring_dep_pool", "runtime", "hbg_layout",
                 "cache_policy_lowering", "seed", "aicpu_thread_num", "scheduler_timeout_ms", "max_tasks",
                 "max_output", "compress")
_FLAG_OPTIONS = ("scope_stats", "deps", "task_stats", "suggest", "strict_coherency", "strict", "host_stats")


def _option_name(key):
    return "--" + key.replace("_", "-")


def _unknown(function, key, known):
    guess = difflib.get_close_matches(key, known, n=1)
    return TypeError("npusim.%s() got an unexpected keyword argument %r%s" %
                     (function, key, "; did you mean %r?" % guess[0] if guess else ""))


def _text(key, value):
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    value = str(value)
    if not value.strip():
        raise InputError(COMMAND_LINE, _option_name(key), 'expected a value, got "%s"' % value)
    return value


def _run_options(function, kw):
    options = {}
    for key, value in kw.items():
        if value is None:
            continue
        if key in _TEXT_OPTIONS:
            options[key] = _text(key, value)
        elif key in _FLAG_OPTIONS:
            options[key] = bool(value)
        elif key == "swimlane_level":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 4:
                raise InputError(COMMAND_LINE, "--swimlane-level", "expected a chip swimlane level 0..4, got %r" % (value,))
            options[key] = value
        else:
            raise _unknown(function, key, _TEXT_OPTIONS + _FLAG_OPTIONS + ("swimlane_level",))
    return options


def _trace_input(trace):
    """(path, text, label): a path is read by the engine; a dict or a Program is its text, read as "-"."""
    if isinstance(trace, Program):
        return "", trace.to_json(), "<npusim.Program %s>" % (trace.name or "stdin")
    if isinstance(trace, dict):
        return "", dumps(trace), "<trace dict %s>" % trace.get("name", "stdin")
    if isinstance(trace, (str, os.PathLike)):
        return os.fspath(trace), "", None
    raise TypeError("a trace is a path, a dict in the trace format or an npusim.Program, not %s" % type(trace).__name__)


def _raise_for(outcome, label=None):
    """The child's (status, stdout, stderr, input_error, internal) -> raise, or hand back."""
    status, out, err, input_error, internal = outcome
    if input_error is not None:
        file, path, message = input_error
        if label and file == "<stdin>":
            file = label
        raise InputError(file, path, message)
    if internal is not None:
        raise InternalError("npusim: internal error: %s (a bug in npusim, not a result: please report it with the "
                            "trace, the platform and the options)" % internal)
    return status, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _read_text(folder, name):
    p = os.path.join(folder, name)
    if os.path.exists(p):
        with open(p, encoding="utf-8") as f:
            return f.read()
    if os.path.exists(p + ".gz"):
        with gzip.open(p + ".gz", "rt", encoding="utf-8") as f:
            return f.read()
    return None


def _number(text):
    try:
        return int(text)
    except ValueError:
        return float(text)


def _columns(header, rows):
    """CSV rows -> {column: numpy array (or list)}: int64 where every value is an
    integer, float64 where every value is a number or blank (a blank is NaN: a
    milestone the task never reached), the strings as they are otherwise."""
    columns = {}
    for i, name in enumerate(header):
        values = [row[i] if i < len(row) else "" for row in rows]
        try:
            typed = [_number(v) if v != "" else None for v in values]
            blanks = any(v is None for v in typed)
            kind = float if blanks or any(isinstance(v, float) for v in typed) else int
            if kind is float:
                typed = [float("nan") if v is None else float(v) for v in typed]
        except ValueError:
            typed, kind = values, str
        if _np is not None:
            dtype = {int: _np.int64, float: _np.float64, str: object}[kind]
            try:
                columns[name] = _np.array(typed, dtype=dtype)
            except OverflowError:  # beyond int64: Python integers
                columns[name] = _np.array(typed, dtype=object)
        else:
            columns[name] = typed
    return columns


def _read_csv(text):
    if not text:
        return {}
    rows = list(csv.reader(io.StringIO(text)))
    return _columns(rows[0], rows[1:]) if rows else {}


class Result:
    """A run: .ok, .summary (summary.json as a dict), .error and .diagnosis after
    a failure, .tasks (task_stats.csv as columns), .out (the folder, when out= was
    given), .log (what the command line prints on standard error: warnings, the
    failure as the device reports it and npusim's diagnosis)."""

    def __init__(self, status, summary, tasks, out, log):
        self.status = status
        self.ok = status == 0
        self.summary = summary
        self.tasks = tasks
        self.out = out
        self.log = log

    @property
    def error(self):
        """The failure's name (TENSOR_WAIT_TIMEOUT...), None when the run completed."""
        e = self.summary.get("error")
        return e["name"] if e else None

    @property
    def failure(self):
        """summary.json's `error` object (None when the run completed)."""
        return self.summary.get("error")

    @property
    def diagnosis(self):
        """npusim's diagnosis of the failure (summary.json's error.diagnosis), None when ok."""
        e = self.summary.get("error")
        return e.get("diagnosis") if e else None

    def __repr__(self):
        s = self.summary
        return "<npusim.Result %s on %s: %s, device_wall_ns=%s, %s/%s tasks%s>" % (
            s.get("trace"), s.get("platform"), s.get("status"), s.get("device_wall_ns"),
            s.get("tasks", {}).get("completed"), s.get("tasks", {}).get("submitted"),
            ", error " + self.error if self.error else "")

    def _repr_html_(self):
        page = _report_page(self.summary, self.summary.get("trace") or "run")
        return ('<iframe srcdoc="%s" style="width:100%%;height:640px;border:1px solid #ddd" '
                'sandbox="allow-scripts"></iframe>' % html.escape(page, quote=True))


def _report_page(summary, title):
    _, out, _ = _raise_for(_npusim.report_page(json.dumps(summary), title))
    return out


def run(trace, platform="a2a3", out=None, **options):
    """Simulates `trace` (a path, a dict in the trace format, or a Program) on
    `platform`; returns a Result. Outputs are written to `out` only when it is
    given (the command line's --out rules: docs/outputs.md); otherwise the run
    writes into a private temporary folder, read and removed before run returns.
    Options: the command line's, as keywords (ring_task_window=[0, 0, 256, 0],
    aicpu_thread_num=4, swimlane_level=0, host_stats=False, ...)."""
    opts = _run_options("run", options)
    path, text, label = _trace_input(trace)
    tmp = None
    folder = os.fspath(out) if out is not None else None
    if folder is None:
        tmp = tempfile.mkdtemp(prefix="npusim-run-")
        folder = os.path.join(tmp, "out")
    try:
        status, _, log = _raise_for(_npusim.run(path, text, platform, folder, opts), label)
        summary = json.loads(_read_text(folder, "summary.json"))
        tasks = _read_csv(_read_text(folder, "task_stats.csv"))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return Result(status, summary, tasks, folder if tmp is None else None, log)


_FINDING = re.compile(r"^npusim check: (.*): at (.*): (error|warning) \[(\w+)\]: (.*)$")


class CheckResult:
    """npusim check: .ok (no error found), .findings (dicts: severity, rule, path,
    message), .text (what the command line prints)."""

    def __init__(self, status, out, err):
        self.ok = status == 0
        self.text = err + out
        self.findings = []
        for line in err.splitlines():
            m = _FINDING.match(line)
            if m:
                self.findings.append({"severity": m.group(3), "rule": m.group(4), "path": m.group(2),
                                      "message": m.group(5)})

    def __repr__(self):
        return "<npusim.CheckResult %s, %d finding(s)>" % ("ok" if self.ok else "failed", len(self.findings))


def check(trace, platform="a2a3"):
    """npusim check: validates the trace and evaluates the program without
    simulating; InputError for an invalid one, a CheckResult otherwise."""
    path, text, label = _trace_input(trace)
    return CheckResult(*_raise_for(_npusim.check(path, text, platform), label))


class Comparison:
    """npusim compare: .ok (no regression), .regression, .text (in the format
    asked), .data (the parsed report when format="json")."""

    def __init__(self, status, text, fmt):
        self.ok = status == 0
        self.regression = status == 3
        self.text = text
        self.data = json.loads(text) if fmt == "json" else None

    def __repr__(self):
        return "<npusim.Comparison %s>" % ("OK" if self.ok else "REGRESSION")


_COMPARE_OPTIONS = ("tolerance", "tolerance_for", "gate", "ring_threshold", "format", "allow_different")


def compare(baseline, current, **options):
    """npusim compare: each side a Result, a run folder or a summary.json.
    Options: tolerance="2%", tolerance_for=["figures.x=5"], gate="all",
    ring_threshold="80%", format="text"|"json"|"markdown"|"junit", allow_different=True."""
    opts = {}
    for key, value in options.items():
        if value is None:
            continue
        if key == "allow_different":
            opts[key] = bool(value)
        elif key == "tolerance_for":
            opts[key] = [value] if isinstance(value, str) else [str(v) for v in value]
        elif key in _COMPARE_OPTIONS:
            opts[key] = _text(key, value)
        else:
            raise _unknown("compare", key, _COMPARE_OPTIONS)
    tmp = tempfile.mkdtemp(prefix="npusim-compare-")
    try:
        sides = []
        for i, side in enumerate((baseline, current)):
            if isinstance(side, Result):
                if side.out is not None:
                    side = side.out
                else:
                    p = os.path.join(tmp, "%d.summary.json" % i)
                    with open(p, "w", encoding="utf-8") as f:
                        json.dump(side.summary, f, indent=2)
                    side = p
            sides.append(os.fspath(side))
        status, out, _ = _raise_for(_npusim.compare(sides[0], sides[1], opts))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Comparison(status, out, opts.get("format", "text"))


class SweepResult:
    """npusim sweep: .columns (the CSV as columns, numpy arrays where numpy is
    installed), .rows (one dict per point), .csv (its text), .path (the CSV
    when csv= was given)."""

    def __init__(self, text, path):
        self.csv = text
        self.path = path
        rows = list(csv.reader(io.StringIO(text)))
        self.header = rows[0] if rows else []
        self.columns = _columns(self.header, rows[1:]) if rows else {}
        self.rows = [dict(zip(self.header, r)) for r in rows[1:]]

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        return "<npusim.SweepResult %d point(s), %d column(s)>" % (len(self.rows), len(self.header))


def _grid_value(v):
    """One value of a grid: a per-ring list as the command line writes it, [64,4,4,4]."""
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(str(x) for x in v) + "]"
    return str(v)


def sweep(trace, grid, platform="a2a3", csv=None, jobs=None, scheduler=None):
    """npusim sweep: `trace` (a path, a dict or a Program; a scene or worker file
    by path) over `grid`, {NAME: [V1, V2, ...]} in order (a run option such as
    "ring_task_window", or a platform field by its JSON pointer,
    "/sched/dispatch_task_ns"). The CSV (and its plot, .svg) is written when csv=
    is given. jobs: points at once (default: the processors); scheduler: a Dask
    scheduler's address. A per-ring value is a list: {"ring_task_window":
    [[64, 4, 4, 4], [256, 4, 4, 4]]}. grid may also be the command line's
    strings, ["ring_task_window=64,256"]."""
    if isinstance(grid, dict):
        grid = ["%s=%s" % (name, ",".join(_grid_value(v) for v in (values if isinstance(values, (list, tuple))
                                                                  else [values])))
                for name, values in grid.items()]
    else:
        grid = [str(g) for g in grid]
    tmp = tempfile.mkdtemp(prefix="npusim-sweep-")
    try:
        path, text, label = _trace_input(trace)
        if not path:  # the points run the trace from a file
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", (trace.name if isinstance(trace, Program) else
                                                    trace.get("name")) or "trace")
            path = os.path.join(tmp, name + ".json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        target = os.fspath(csv) if csv is not None else os.path.join(tmp, "sweep.csv")
        _raise_for(_npusim.sweep(path, platform, grid, target, int(jobs or 0), scheduler or ""))
        with open(target, encoding="utf-8") as f:
            table = f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return SweepResult(table, target if csv is not None else None)


def report(result_or_folder, output):
    """npusim report: the HTML page of a run (a Result, or a run folder) written
    to `output`; returns its path. A Result run without out= has no folder: its
    page is made from its summary (no time series, which need the other outputs)."""
    output = os.fspath(output)
    if isinstance(result_or_folder, Result) and result_or_folder.out is None:
        page = _report_page(result_or_folder.summary, result_or_folder.summary.get("trace") or "run")
        with open(output, "w", encoding="utf-8") as f:
            f.write(page)
        return output
    folder = result_or_folder.out if isinstance(result_or_folder, Result) else os.fspath(result_or_folder)
    _raise_for(_npusim.report(folder, output))
    return output
