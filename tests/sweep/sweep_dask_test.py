#!/usr/bin/env python3
"""`npusim sweep --scheduler` against a local Dask cluster started here
(docs/sweeps.md, "On a Dask cluster"): a sweep of 20 points through the
cluster and through local processes gives byte-identical CSVs, and a failed
point is a row with its exit status in both.

    sweep_dask_test.py NPUSIM SOURCE_DIR SCRATCH
"""

import os
import shutil
import subprocess
import sys


def main():
    npusim, source, scratch = sys.argv[1:4]
    try:
        from distributed import LocalCluster
    except ImportError:
        print("FAIL: Dask distributed is not installed: run ./setup.sh (it installs python3-distributed)")
        return 1
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    # 5 dispatch costs x 4 task windows = 20 points of chain.json on tiny (enough
    # for both workers to take points out of order; each point is one npusim run,
    # about 0.5 s under ASan);
    # the window of 4 is SCOPE_DEADLOCK (exit 1), a row in both CSVs.
    grid = ["--grid", "/sched/dispatch_task_ns=" + ",".join(str(10 * i) for i in range(5)),
            "--grid", "ring_task_window=4,8,16,64"]
    base = [npusim, "sweep", "traces/chain.json", "--platform", "tiny", "-q"] + grid
    local_csv = os.path.join(scratch, "local.csv")
    dask_csv = os.path.join(scratch, "dask.csv")
    subprocess.run(base + ["--jobs", "2", "--csv", local_csv], cwd=source, check=True)
    # A worker file sweep (4 points): its programs, relative to the worker
    # file's folder, must resolve where the tasks run too.
    wbase = [npusim, "sweep", "tests/data/worker/sweep_chip.json", "--platform", "tiny", "-q",
             "--grid", "worker:/prepare/ring_task_window=64,128", "--grid", "ring_task_window=64,4"]
    wlocal_csv = os.path.join(scratch, "wlocal.csv")
    wdask_csv = os.path.join(scratch, "wdask.csv")
    subprocess.run(wbase + ["--jobs", "2", "--csv", wlocal_csv], cwd=source, check=True)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                      dashboard_address=None) as cluster:
        proc = subprocess.run(base + ["--scheduler", cluster.scheduler_address, "--csv", dask_csv], cwd=source)
        wproc = subprocess.run(wbase + ["--scheduler", cluster.scheduler_address, "--csv", wdask_csv], cwd=source)
    if proc.returncode != 0:
        print("FAIL: the sweep through Dask exited %d" % proc.returncode)
        return 1
    with open(local_csv) as f:
        local = f.read()
    with open(dask_csv) as f:
        dask = f.read()
    rows = local.splitlines()
    failures = []
    if len(rows) != 21:
        failures.append("expected 20 rows and the header, got %d lines" % len(rows))
    if dask != local:
        failures.append("the CSVs differ")
    if not rows[1].startswith("0,4,error,1,SCOPE_DEADLOCK,600,"):
        failures.append("row 1 is not the failed point: " + rows[1][:80])
    if not rows[4].startswith("0,64,ok,0,,29700,"):
        failures.append("row 4 is not the completed point: " + rows[4][:80])
    if wproc.returncode != 0:
        failures.append("the worker file sweep through Dask exited %d" % wproc.returncode)
    else:
        with open(wlocal_csv) as f:
            wlocal = f.read()
        with open(wdask_csv) as f:
            wdask = f.read()
        if wdask != wlocal:
            failures.append("the worker file sweep's CSVs differ")
        if "\n128,64,ok,0,,800089100,89100,1," not in wlocal:
            failures.append("the worker file sweep's row 128,64 is not the miss: " + wlocal[:400])
    # An unreachable scheduler is exit 2 and writes nothing.
    # A 1 s connect timeout (NPUSIM_DASK_CONNECT_TIMEOUT) instead of the default 10 s.
    bad = subprocess.run(base + ["--scheduler", "tcp://127.0.0.1:9", "--csv", os.path.join(scratch, "x.csv")],
                         cwd=source, stderr=subprocess.PIPE, env=dict(os.environ, NPUSIM_DASK_CONNECT_TIMEOUT="1"))
    if bad.returncode != 2 or b"cannot reach the Dask scheduler" not in bad.stderr or b"after 1 s" not in bad.stderr:
        failures.append("an unreachable scheduler: exit %d, %r" % (bad.returncode, bad.stderr[-300:]))
    nan = subprocess.run(base + ["--scheduler", "tcp://127.0.0.1:9", "--csv", os.path.join(scratch, "x.csv")],
                         cwd=source, stderr=subprocess.PIPE, env=dict(os.environ, NPUSIM_DASK_CONNECT_TIMEOUT="soon"))
    if nan.returncode != 2 or b"NPUSIM_DASK_CONNECT_TIMEOUT must be a number of seconds above 0, not 'soon'" not in nan.stderr:
        failures.append("a bad connect timeout: exit %d, %r" % (nan.returncode, nan.stderr[-300:]))
    if os.path.exists(os.path.join(scratch, "x.csv")):
        failures.append("an unreachable scheduler left x.csv")
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("OK: 20 points (and a worker file's 4) through Dask and through local processes, identical CSVs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
