#!/usr/bin/env python3
"""Runs the points of `npusim sweep --scheduler ADDR` as tasks on a Dask
distributed cluster (docs/sweeps.md, "On a Dask cluster").

    sweep_dask.py --scheduler ADDR POINTS.json RESULTS.json

POINTS.json (written by npusim sweep): {"npusim": EXE, "points": [{"args":
["run", INPUT, ...], "platform": NAME_OR_PATH, "platform_json": TEXT or
null, "worker_json": TEXT or null}]}. Each point is one task: in a scratch
folder of the worker it writes the point's platform file (when it has one)
and, for a worker file sweep, the point's worker file (then ARGS are
["worker", FILE, ...] and FILE is replaced by the written one), runs `EXE
ARGS --platform P --out DIR` and returns {"exit": its exit status (128 + N
for a signal N), "summary": its summary.json (worker_summary.json) or null,
"stderr": the first line of its standard error}. A task that itself fails (a worker lost, npusim missing) is a point
with exit -1 and the error's text, not the end of the sweep. RESULTS.json is
the list of those results in point order; npusim sweep turns it into the
same CSV as a local sweep. Exit 0 when RESULTS.json is written, 2 when the
scheduler cannot be reached.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run_point(npusim, point):
    """One point, on a worker: npusim run in a scratch folder."""
    scratch = tempfile.mkdtemp(prefix="npusim-sweep-point-")
    try:
        platform = point["platform"]
        if point.get("platform_json") is not None:
            platform = os.path.join(scratch, "platform.json")
            with open(platform, "w") as f:
                f.write(point["platform_json"])
        args = list(point["args"])
        summary_name = "summary.json"
        if point.get("worker_json") is not None:
            args[1] = os.path.join(scratch, "worker.json")
            with open(args[1], "w") as f:
                f.write(point["worker_json"])
            summary_name = "worker_summary.json"
        exe = npusim if os.path.exists(npusim) else "npusim"
        out = os.path.join(scratch, "out")
        proc = subprocess.run([exe] + args + ["--platform", platform, "--out", out],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
        summary = None
        if code in (0, 1) and os.path.exists(os.path.join(out, summary_name)):
            with open(os.path.join(out, summary_name)) as f:
                summary = json.load(f)
        lines = proc.stderr.decode("utf-8", "replace").splitlines()
        return {"exit": code, "summary": summary, "stderr": lines[0] if lines else ""}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scheduler", required=True, help="the Dask scheduler's address, e.g. tcp://host:8786")
    ap.add_argument("points")
    ap.add_argument("results")
    args = ap.parse_args()
    with open(args.points) as f:
        job = json.load(f)
    try:
        from distributed import Client
    except ImportError:
        print("sweep_dask.py: Dask distributed is not installed (Debian: apt-get install python3-distributed)",
              file=sys.stderr)
        return 2
    # NPUSIM_DASK_CONNECT_TIMEOUT (seconds, default 10): how long to keep trying to reach the scheduler.
    try:
        timeout = float(os.environ.get("NPUSIM_DASK_CONNECT_TIMEOUT", "10"))
    except ValueError:
        timeout = -1
    if not timeout > 0:
        print("sweep_dask.py: NPUSIM_DASK_CONNECT_TIMEOUT must be a number of seconds above 0, not %r"
              % os.environ.get("NPUSIM_DASK_CONNECT_TIMEOUT"), file=sys.stderr)
        return 2
    try:
        client = Client(args.scheduler, timeout=timeout)
    except Exception as e:  # noqa: BLE001 -- any failure to connect is the same answer
        print("sweep_dask.py: cannot reach the Dask scheduler %s: %s" % (args.scheduler, e), file=sys.stderr)
        return 2
    with client:
        # pure=False: every point is its own task, even two with the same arguments.
        futures = [client.submit(run_point, job["npusim"], p, pure=False) for p in job["points"]]
        results = []
        for fut in futures:
            try:
                results.append(fut.result())
            except Exception as e:  # noqa: BLE001 -- a lost task is a failed point
                results.append({"exit": -1, "summary": None, "stderr": "the Dask task failed: %s" % e})
    with open(args.results, "w") as f:
        json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
