#!/usr/bin/env python3
"""`npusim report` in a real browser (issue 14 item 4, docs/outputs.md "npusim report").

report_browser.py NPUSIM SOURCE_DIR SCRATCH_DIR

For a clean run (traces/mix.json) and a failed one
(traces/fatal/heap_ring_deadlock.json): runs npusim, writes report.html, loads
it in Debian's headless chromium (--dump-dom: the DOM after the page's scripts
ran) and checks
  - no script error: the page's window.onerror hook writes
    data-script-error on <html>, and chromium's console log has no error;
  - the page's own script ran and counted every chart (data-charts-drawn);
  - every chart is an <svg class="chart"> with its id and drawn elements (bars
    where summary.json has data, the "no data" text where it has none), bar
    widths proportional to the summary's figures;
  - every number the page shows (span.num) carries the JSON pointer and the
    exact value of summary.json, and reads as that value formatted;
  - the utilisation-over-time series add up to summary.json's busy time per
    core type, and the critical path's line quotes its makespan_ns;
  - the failed run's page shows the error's name, host log, device log and
    npusim's diagnosis as summary.json has them, the verdict, findings and
    diagnosis before the logs (folded), and codes without separators.
Also the command's input errors: a missing folder and one without a
summary.json are exit 2 with a message naming them. Without chromium the
test fails and says to run ./setup.sh.
"""
import html.parser
import json
import os
import shutil
import subprocess
import sys

NPUSIM, SOURCE, SCRATCH = sys.argv[1:4]
CHARTS = ["chart-core-utilisation", "chart-utilisation-over-time", "chart-ready-queue", "chart-ring-occupancy",
          "chart-critical-path", "chart-sched-phases", "chart-ring-peaks", "chart-top-kernels"]
BAR_AREA = 760 - 170 - 150  # sim/report/report.cpp: kChartWidth - kLabelWidth - kValueWidth

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


VOID = {"meta", "br", "hr", "img", "input", "link", "wbr"}


class Dom(html.parser.HTMLParser):
    """The elements the checks need: <html>'s attributes, the charts and their
    drawn children, the span.num numbers, and the text of elements with an id."""

    def __init__(self):
        super().__init__()
        self.root = {}
        self.svgs = {}  # id -> list of (tag, attrs) inside it
        self.nums = []  # (attrs, text)
        self.texts = {}  # id -> text
        self.stack = []  # open elements: (tag, attrs)
        self.order = []  # ids in document order

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root = a
        if tag == "svg" and "chart" in a.get("class", "").split():
            self.svgs[a.get("id")] = []
        for t, pa in self.stack:
            if t == "svg" and pa.get("id") in self.svgs:
                self.svgs[pa["id"]].append((tag, a))
                break
        if tag not in VOID:
            self.stack.append((tag, a))
        if "id" in a:
            self.texts.setdefault(a["id"], "")
            self.order.append(a["id"])
        if tag == "span" and a.get("class") == "num":
            self.nums.append([a, ""])

    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break

    def handle_data(self, data):
        for t, a in self.stack:
            if "id" in a:
                self.texts[a["id"]] = self.texts.get(a["id"], "") + data
        if self.stack and self.stack[-1][0] == "span" and self.stack[-1][1].get("class") == "num":
            self.nums[-1][1] += data


def pointer(doc, p):
    for tok in p.split("/")[1:]:
        tok = tok.replace("~1", "/").replace("~0", "~")
        doc = doc[int(tok)] if isinstance(doc, list) else doc[tok]
    return doc


def time_text(v):
    """A time in ns as the page shows it (sim/report/report_chart.cpp, time_text())."""
    a = abs(v)
    if a < 1e4:
        return ("{:,}".format(int(v)) if float(v).is_integer() else "%.3f" % v) + " ns"
    for scale, unit in ((1e3, "us"), (1e6, "ms"), (1e9, "s")):
        if a < scale * 1e4 or unit == "s":
            return "{:,.3f}".format(v / scale) + " " + unit


def human(v, key):
    """The page's format for a number (sim/report/report_chart.cpp, human())."""
    whole = float(v).is_integer()
    grouped = "{:,}".format(int(v)) if whole else None
    if key.endswith("_code"):
        return str(int(v))
    if key.endswith("_ns") or "/p50" in key or "/p90" in key or "/p99" in key or key.endswith("/max") \
            or key.endswith("/ns"):
        return time_text(v)
    if key.endswith("heap_bytes") or "/ring_heap/" in key:
        return (grouped if whole else "%.0f" % v) + " B"
    if key.endswith("/utilisation") or "/shares/" in key:
        return "%.2f%%" % (v * 100)
    if key.endswith("/pct"):
        return "%.2f%%" % v
    return grouped if whole else "%.3f" % v


def chromium_dom(page, name):
    profile = os.path.join(SCRATCH, name + ".profile")
    shutil.rmtree(profile, ignore_errors=True)
    r = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                        "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
                        "--dump-dom", "file://" + os.path.abspath(page)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    check(r.returncode == 0, name + ": chromium exit %d: %s" % (r.returncode, r.stderr[-2000:]))
    console = [l for l in r.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    check(not console, name + ": console messages: " + "\n".join(console))
    shutil.rmtree(profile, ignore_errors=True)
    return r.stdout


def run_case(name, trace, want_status):
    out = os.path.join(SCRATCH, name)
    page = os.path.join(SCRATCH, name + ".html")
    r = subprocess.run([NPUSIM, "run", os.path.join(SOURCE, trace), "--out", out, "-q"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(r.returncode == want_status, "%s: npusim run exit %d, expected %d" % (name, r.returncode, want_status))
    r = subprocess.run([NPUSIM, "report", out, "-o", page], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    check(r.returncode == 0 and r.stdout == "npusim report: wrote %s\n" % page,
          "%s: npusim report exit %d: %s%s" % (name, r.returncode, r.stdout, r.stderr))
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    dom = Dom()
    dom.feed(chromium_dom(page, name))

    check("data-script-error" not in dom.root, name + ": script error: %s" % dom.root.get("data-script-error"))
    check(dom.root.get("data-charts-drawn") == str(len(CHARTS)),
          name + ": the page's script counted %s charts, expected %d" % (dom.root.get("data-charts-drawn"), len(CHARTS)))
    for chart in CHARTS:
        check(chart in dom.svgs, "%s: no <svg class=chart id=%s>" % (name, chart))
        drawn = dom.svgs.get(chart, [])
        bars = [a for t, a in drawn if t == "rect" and "bar" in a.get("class", "").split()]
        empty = [a for t, a in drawn if t == "text" and a.get("class") == "empty"]
        lines = [a for t, a in drawn if t in ("polyline", "circle")]  # a series; one point is a circle
        check(bars or empty or lines, "%s: %s draws nothing" % (name, chart))

    # Every number shown is summary.json's, and reads as it.
    check(len(dom.nums) > 20, "%s: only %d numbers on the page" % (name, len(dom.nums)))
    for a, text in dom.nums:
        key = a["data-key"]
        want = pointer(summary, key)
        got = json.loads(a["data-value"])
        check(got == want, "%s: %s shows %r, summary.json has %r" % (name, key, got, want))
        if isinstance(want, (int, float)) and not isinstance(want, bool):
            check(text == human(want, key), "%s: %s reads %r, expected %r" % (name, key, text, human(want, key)))
    keys = {a["data-key"] for a, _ in dom.nums}
    for key in ["/device_wall_ns", "/makespan_ns", "/tasks/submitted", "/tasks/completed"]:
        check(key in keys, "%s: the page does not show %s" % (name, key))
    check(dom.texts.get("status") == summary["status"], "%s: status %r" % (name, dom.texts.get("status")))

    # Bars drawn to scale: core-type utilisation of the bar area.
    figures = summary.get("figures", {})
    widths = [float(a["width"]) for t, a in dom.svgs.get("chart-core-utilisation", []) if t == "rect"]
    want = [max(round(v["utilisation"] * BAR_AREA, 1), 1.0) for _, v in sorted(figures.get("core_types", {}).items())]
    check(widths == want, "%s: utilisation bars %r, expected %r" % (name, widths, want))
    # The utilisation series add up to summary.json's busy time per core type:
    # sum of the bins (busy cores, mean per bin) x the bin width; the swimlane
    # counts 20 ns ticks and the bins carry 3 decimals.
    series = [a for t, a in dom.svgs.get("chart-utilisation-over-time", []) if t == "polyline"]
    types = figures.get("core_types", {})
    if summary["makespan_ns"] > 0:
        check(len(series) == len(types), "%s: %d utilisation series for %d core types" % (name, len(series), len(types)))
    else:  # no kernel ran (the failed run's device stopped first): the chart says so
        check(not series and "no kernel ran" in dom.texts.get("chart-utilisation-over-time", ""),
              "%s: makespan 0 but the utilisation chart draws %d series" % (name, len(series)))
    for a in series:
        ty = a["data-series"].split(" ")[0]
        bins = [float(v) for v in a["data-bins"].split()]
        busy = sum(bins) * float(a["data-span-ns"]) / len(bins)
        want = types.get(ty, {}).get("busy_ns", -1)
        check(abs(busy - want) <= 0.01 * want + 100, "%s: %s busy over time %.1f ns, summary.json %r" % (name, ty, busy, want))
        check(float(a["data-scale"]) == types.get(ty, {}).get("cores"), "%s: %s cores" % (name, ty))
    # Ring occupancy is drawn against the run's ring sizes: the scope records'
    # metadata line gives the same capacities as summary.json's run block.
    with open(os.path.join(out, "scope_stats", "scope_stats.jsonl")) as f:
        meta = json.loads(f.readline())
    for key, run_key in (("task_window_max", "ring_task_window"), ("heap_max", "ring_heap")):
        check(meta[key] == summary["run"][run_key], "%s: scope_stats %s %r, summary.json run.%s %r"
              % (name, key, meta[key], run_key, summary["run"][run_key]))
    # The critical path is stated against summary.json's makespan.
    if "path-length" in dom.texts:
        say = "makespan %s." % human(summary["makespan_ns"], "/makespan_ns")
        check(say in dom.texts["path-length"], "%s: path-length %r lacks %r" % (name, dom.texts["path-length"], say))
    # Every kernel (<= 10) is in the top-kernels table, the largest bar full width.
    for k in summary["kernels"]:
        check("/kernels/%s/core_busy_ns" % k in keys, "%s: kernel %s not in the table" % (name, k))
    return summary, dom


def main():
    os.makedirs(SCRATCH, exist_ok=True)
    clean, dom = run_case("mix", "traces/mix.json", 0)
    for chart in CHARTS:  # the clean run has data for every chart
        check(any((t == "rect" and "bar" in a.get("class", "")) or t == "polyline"
                  for t, a in dom.svgs.get(chart, [])), "mix: %s has no bars or lines" % chart)
    check("path-length" in dom.texts and "path-table" in dom.texts, "mix: no critical path")
    check("failure" not in dom.texts, "mix: a failure section on a clean run")
    kernels = [a for t, a in dom.svgs.get("chart-top-kernels", []) if t == "rect"]
    check(kernels and float(kernels[0]["width"]) == BAR_AREA, "mix: the top kernel's bar is not full width")

    failed, dom = run_case("heap_ring_deadlock", "traces/fatal/heap_ring_deadlock.json", 1)
    err = failed["error"]
    check(dom.texts.get("error-name") == err["name"] == "HEAP_RING_DEADLOCK",
          "failure: error name %r" % dom.texts.get("error-name"))
    for id_, lines in (("host-log", err["host_log"]), ("device-log", err["device_log"]),
                       ("diagnosis", err["diagnosis"]["explanation"])):
        check(dom.texts.get(id_) == "".join(l + "\n" for l in lines), "failure: %s differs from summary.json" % id_)
    check(err["diagnosis"]["enough"]["option"] in dom.texts.get("enough", ""), "failure: no sizes that would do")
    # A reader finds the verdict, the findings and npusim's diagnosis before the runtime's logs.
    order = dom.order
    for first, then in (("verdict", "diagnosis"), ("findings", "diagnosis"), ("diagnosis", "host-log"),
                        ("diagnosis", "device-log"), ("enough", "device-log"), ("diagnosis", "run")):
        check(first in order and then in order and order.index(first) < order.index(then),
              "failure: %s is not before %s" % (first, then))
    check(err["name"] in dom.texts.get("verdict", ""), "failure: the verdict does not name %s" % err["name"])
    # Codes read as codes: 507018, not 507,018.
    check(dom.texts.get("error-name") and "," not in "".join(t for a, t in dom.nums if a["data-key"].endswith("_code")),
          "failure: a code printed with separators")

    # Input errors: exit 2, a message naming the folder, nothing written.
    page = os.path.join(SCRATCH, "none.html")
    for folder, says in ((os.path.join(SCRATCH, "missing"), "no such folder"),
                         (os.path.join(SOURCE, "traces"), "no summary.json in this folder")):
        r = subprocess.run([NPUSIM, "report", folder, "-o", page], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        check(r.returncode == 2 and r.stderr.startswith("npusim: error: %s: %s" % (folder, says))
              and not os.path.exists(page),
              "report %s: exit %d, %r" % (folder, r.returncode, r.stderr))

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("report_browser: ok (a clean and a failed run, %d charts each)" % len(CHARTS))
    return 0


CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
if __name__ == "__main__":
    if not CHROMIUM:
        print("report_browser: chromium not found: run ./setup.sh, which installs Debian's chromium package "
              "(or: apt-get install chromium)")
        sys.exit(1)
    sys.exit(main())
