"""The Python module npusim (python/, docs/python.md) against the command line.

Run by ctest (tests/CMakeLists.txt, "python:module") with Debian's python3 -m
pytest, PYTHONPATH=build/python. Every comparison is with what the npusim
executable of the same build writes for the same input.
"""

import concurrent.futures
import filecmp
import json
import os
import re
import subprocess
import sys

import pytest

import npusim
from npusim import In, Out, Program

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRACES = os.path.join(SRC, "traces")
CHAIN = os.path.join(TRACES, "chain.json")


def cli(*args, cwd=None):
    return subprocess.run([npusim.executable, *args], capture_output=True, text=True, cwd=cwd)


def same_folders(a, b):
    """Every file of two output folders, byte for byte; returns the files compared."""
    files = []
    for root, _, names in os.walk(a):
        for n in names:
            rel = os.path.relpath(os.path.join(root, n), a)
            files.append(rel)
            assert filecmp.cmp(os.path.join(a, rel), os.path.join(b, rel), shallow=False), rel
    others = sorted(os.path.relpath(os.path.join(r, n), b) for r, _, ns in os.walk(b) for n in ns)
    assert sorted(files) == others
    return files


def chain_program():
    """traces/chain.json, built in Python."""
    p = Program("chain", x_about="A chain of 8 tasks, cube then vector: each consumes the previous task's output "
                                 "(creator edges).")
    p.kernel("MATMUL", func_id=0, core="aic", duration={"ns": 5000})
    p.kernel("ADD", func_id=1, core="aiv", duration={"ns": 2000})
    p.tensor("x", shape=[64, 128], dtype="fp32")
    p.submit("MATMUL", In("x"), Out("t", [64, 128], "fp32"))
    with p.loop("i", to=7):
        p.submit("ADD", In("t"), Out("t", [64, 128], "fp32"))
    return p


def test_a_run_gives_the_summary_json_of_the_cli(tmp_path):
    c = cli("run", CHAIN, "--out", str(tmp_path / "cli"), "-q", "--no-host-stats")
    assert c.returncode == 0, c.stderr
    r = npusim.run(CHAIN, host_stats=False)
    with open(tmp_path / "cli" / "summary.json") as f:
        assert r.summary == json.load(f)
    assert r.ok and r.error is None and r.diagnosis is None and r.out is None
    assert r.summary["tasks"]["completed"] == 8
    # With out=, the same files, byte for byte.
    r2 = npusim.run(CHAIN, out=tmp_path / "py", host_stats=False)
    assert r2.out == str(tmp_path / "py")
    assert "summary.json" in same_folders(tmp_path / "cli", tmp_path / "py")


def test_outputs_are_written_only_when_out_is_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    npusim.run(CHAIN)
    assert os.listdir(tmp_path) == []  # the CLI would have written npusim_out/chain/


def test_run_options_are_the_cli_options(tmp_path):
    c = cli("run", CHAIN, "--out", str(tmp_path / "cli"), "-q", "--no-host-stats", "--ring-task-window", "0,0,256,0",
            "--aicpu-thread-num", "3", "--swimlane-level", "0", "--no-deps")
    assert c.returncode == 0, c.stderr
    r = npusim.run(CHAIN, out=tmp_path / "py", host_stats=False, ring_task_window=[0, 0, 256, 0],
                   aicpu_thread_num=3, swimlane_level=0, deps=False)
    assert r.summary["run"]["ring_task_window"][2] == 256 and r.summary["run"]["aicpu_thread_num"] == 3
    same_folders(tmp_path / "cli", tmp_path / "py")


def test_tasks_are_columns_of_task_stats_csv(tmp_path):
    r = npusim.run(CHAIN, out=tmp_path / "o")
    with open(tmp_path / "o" / "task_stats.csv") as f:
        lines = f.read().splitlines()
    header = lines[0].split(",")
    assert list(r.tasks) == header
    assert all(len(col) == 8 for col in r.tasks.values())
    assert [int(x) for x in r.tasks["task_id"]] == [int(line.split(",")[0]) for line in lines[1:]]
    assert list(r.tasks["kernel"]) == ["MATMUL"] + ["ADD"] * 7
    np = pytest.importorskip("numpy")
    assert r.tasks["task_id"].dtype == np.int64 and r.tasks["submit_ns"].dtype.kind in "if"
    # A task ends after it starts, and the chain's tasks one after another.
    assert (r.tasks["last_end_ns"] > r.tasks["first_start_ns"]).all()
    assert (r.tasks["first_start_ns"][1:] >= r.tasks["last_end_ns"][:-1]).all()
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(r.tasks)
    assert len(df) == 8 and df["kernel"].iloc[0] == "MATMUL"


def test_a_python_program_mirrors_the_trace_format():
    with open(CHAIN) as f:
        assert chain_program().to_dict() == json.load(f)


def test_a_python_program_and_its_json_twin_give_byte_identical_outputs(tmp_path):
    p = chain_program()
    twin = p.save(tmp_path / "chain.json")
    npusim.run(p, out=tmp_path / "from_python", host_stats=False)
    npusim.run(twin, out=tmp_path / "from_json", host_stats=False)
    npusim.run(p.to_dict(), out=tmp_path / "from_dict", host_stats=False)
    c = cli("run", str(twin), "--out", str(tmp_path / "from_cli"), "-q", "--no-host-stats")
    assert c.returncode == 0, c.stderr
    for other in ("from_json", "from_dict", "from_cli"):
        files = same_folders(tmp_path / "from_python", tmp_path / other)
    assert {"summary.json", "deps.json", "merged_swimlane.json", "task_stats.csv"} <= set(files)


def test_host_stats_are_the_only_difference_between_two_runs(tmp_path):
    a = npusim.run(CHAIN).summary
    b = npusim.run(CHAIN).summary
    assert set(a["sim"]) >= {"wall_seconds", "peak_rss_mb"}
    for s in (a, b):
        s["sim"] = {"seed": s["sim"]["seed"]}
    assert a == b


def test_input_error_names_the_file_and_path_of_a_bad_field(tmp_path):
    bad = chain_program().to_dict()
    bad["kernels"]["ADD"]["core"] = "gpu"
    with pytest.raises(npusim.InputError) as e:
        npusim.run(bad)
    assert e.value.path == "/kernels/ADD/core"
    assert e.value.file == "<trace dict chain>"
    assert "gpu" in e.value.message
    # The same from a file: the file's path, and the CLI's message.
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(npusim.InputError) as f:
        npusim.check(path)
    assert (f.value.file, f.value.path) == (str(path), "/kernels/ADD/core")
    c = cli("run", str(path), "--out", str(tmp_path / "o"), "-q")
    assert c.returncode == 2 and ("npusim: error: " + str(f.value)) in c.stderr
    assert not (tmp_path / "o").exists()


def test_an_invalid_option_is_the_cli_input_error(tmp_path):
    with pytest.raises(npusim.InputError) as e:
        npusim.run(CHAIN, ring_task_window="1,2,3")
    assert (e.value.file, e.value.path) == ("command line", "--ring-task-window")
    c = cli("run", CHAIN, "--out", str(tmp_path / "o"), "--ring-task-window", "1,2,3")
    assert c.returncode == 2 and e.value.message in c.stderr
    with pytest.raises(TypeError, match="ring_task_windw.*did you mean 'ring_task_window'"):
        npusim.run(CHAIN, ring_task_windw=64)
    with pytest.raises(npusim.InputError, match="--swimlane-level"):
        npusim.run(CHAIN, swimlane_level=7)


def test_a_device_failure_is_a_result_with_its_error_and_diagnosis(tmp_path):
    trace = os.path.join(TRACES, "fatal", "scope_deadlock.json")
    c = cli("run", trace, "--out", str(tmp_path / "cli"), "-q", "--no-host-stats")
    assert c.returncode == 1
    with open(tmp_path / "cli" / "summary.json") as f:
        cli_summary = json.load(f)
    r = npusim.run(trace, host_stats=False)
    assert not r.ok and r.status == 1
    assert r.error == "SCOPE_DEADLOCK" == cli_summary["error"]["name"]
    assert r.summary == cli_summary
    assert r.diagnosis == cli_summary["error"]["diagnosis"]
    assert any("would have been enough" in line for line in r.diagnosis["explanation"])  # the sizing re-run
    assert "npusim diagnosis:" in r.log and "SCOPE_DEADLOCK" in r.log


def sampled_program():
    """A fan of 48 tasks whose durations are sampled (the seed moves them)."""
    p = Program("sampled")
    p.kernel("MATMUL", func_id=0, core="aic", duration={"mean_ns": 5000, "sigma_ns": 800})
    p.kernel("ADD", func_id=1, core="aiv", duration={"mean_ns": 2000, "sigma_ns": 300})
    p.tensor("x", shape=[64, 128], dtype="fp32")
    with p.loop("i", to=24):
        p.submit("MATMUL", In("x"), Out("t", [64, 128], "fp32"))
        p.submit("ADD", In("t"), Out("u", [64, 128], "fp32"))
    return p


SAMPLED = sampled_program()


def test_a_scene_runs_through_the_runner_beside_npusim(tmp_path):
    """A scene's program runs in npusim-orch-runner, found beside npusim.executable, not beside python3."""
    scene = os.path.join(TRACES, "scenes", "vector_example", "vector_example.json")
    c = cli("run", scene, "--out", str(tmp_path / "cli"), "-q", "--no-host-stats")
    assert c.returncode == 0, c.stderr
    r = npusim.run(scene, out=tmp_path / "py", host_stats=False)
    assert r.ok and r.summary["tasks"]["completed"] > 0
    same_folders(tmp_path / "cli", tmp_path / "py")


def seeded(seed):
    return npusim.run(SAMPLED, seed=seed, host_stats=False)


def test_eight_runs_in_a_thread_pool_equal_eight_in_sequence():
    seeds = list(range(1, 9))
    sequential = [seeded(s) for s in seeds]
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        parallel = list(pool.map(seeded, seeds))
    for a, b in zip(sequential, parallel):
        assert a.ok and a.summary == b.summary
        assert {k: list(v) for k, v in a.tasks.items()} == {k: list(v) for k, v in b.tasks.items()}
    # The seeds sample different durations: the runs are not all the same run.
    assert len({r.summary["device_wall_ns"] for r in sequential}) > 1


def test_ctrl_c_interrupts_a_run_and_leaves_nothing(tmp_path):
    import signal
    import threading
    import time
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        npusim.run(os.path.join(TRACES, "bench_pa_1m.json"), out=tmp_path / "o", swimlane_level=0, deps=False,
                   scope_stats=False)
    timer.join()
    assert time.monotonic() - t0 < 30  # not the whole million tasks
    assert os.listdir(tmp_path) == []  # the child removed its partial outputs, as npusim run does


def test_a_sweep_equals_the_cli_csv(tmp_path):
    grid = ["ring_task_window=4,16,64", "/sched/dispatch_task_ns=300,450"]
    c = cli("sweep", CHAIN, "--grid", grid[0], "--grid", grid[1], "--csv", str(tmp_path / "cli.csv"), "-q")
    assert c.returncode == 0, c.stderr
    s = npusim.sweep(CHAIN, {"ring_task_window": [4, 16, 64], "/sched/dispatch_task_ns": [300, 450]},
                     csv=tmp_path / "py.csv", jobs=2)
    assert (tmp_path / "cli.csv").read_text() == (tmp_path / "py.csv").read_text() == s.csv
    assert len(s) == 6 and list(s.columns["ring_task_window"]) == [4, 4, 16, 16, 64, 64]
    assert (tmp_path / "py.svg").exists()
    # Without csv= nothing is left behind; a Program sweeps as its JSON twin.
    t = npusim.sweep(chain_program(), {"ring_task_window": [4, 16, 64], "/sched/dispatch_task_ns": [300, 450]})
    assert t.path is None and list(t.columns["device_wall_ns"]) == list(s.columns["device_wall_ns"])
    with pytest.raises(npusim.InputError, match="ring_task_windw"):
        npusim.sweep(CHAIN, {"ring_task_windw": [4]})


def test_compare_is_the_cli_compare(tmp_path):
    base = npusim.run(CHAIN, out=tmp_path / "base")
    slow = npusim.run(CHAIN, out=tmp_path / "slow", aicpu_thread_num=2)
    same = npusim.compare(base, npusim.run(CHAIN))
    assert same.ok and not same.regression and "compare: OK" in same.text
    c = cli("compare", str(tmp_path / "base"), str(tmp_path / "slow"), "--allow-different", "--format", "json")
    mine = npusim.compare(base, slow, allow_different=True, format="json")
    assert mine.text == c.stdout and mine.regression == (c.returncode == 3)
    assert mine.data is not None
    with pytest.raises(npusim.InputError) as e:
        npusim.compare(base, slow)  # different run options: refused, as by the CLI
    assert e.value.message


def test_report_and_the_notebook_view(tmp_path):
    r = npusim.run(CHAIN, out=tmp_path / "run")
    page = npusim.report(r, tmp_path / "page.html")
    c = cli("report", str(tmp_path / "run"), "-o", str(tmp_path / "cli.html"))
    assert c.returncode == 0
    assert (tmp_path / "page.html").read_text() == (tmp_path / "cli.html").read_text()
    assert page == str(tmp_path / "page.html")
    view = npusim.run(CHAIN)._repr_html_()
    assert view.startswith("<iframe srcdoc=") and "utilisation" in view
    assert 'data-key=&quot;/device_wall_ns&quot;' in view or "device_wall_ns" in view
    npusim.report(npusim.run(CHAIN), tmp_path / "summary_only.html")
    assert "<html" in (tmp_path / "summary_only.html").read_text()


def test_check_reports_findings_as_the_cli():
    ok = npusim.check(CHAIN)
    assert ok.ok and ok.findings == []
    bad = npusim.check(os.path.join(TRACES, "fatal", "require_sync_start_invalid.json"))
    c = cli("check", os.path.join(TRACES, "fatal", "require_sync_start_invalid.json"))
    assert bad.ok == (c.returncode == 0)
    assert bad.text == c.stderr + c.stdout


def test_the_readme_python_example_runs_as_shown(tmp_path):
    with open(os.path.join(SRC, "README.md")) as f:
        readme = f.read()
    m = re.search(r"<!-- python example -->\s*```python\n(.*?)```", readme, re.S)
    assert m, "README.md has no python example"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(npusim.__file__)))
    p = subprocess.run([sys.executable, "-c", m.group(1)], cwd=SRC, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # "As shown": each print's trailing comment is the line it prints.
    shown = [line.split("#", 1)[1].strip() for line in m.group(1).splitlines()
             if line.startswith("print(") and "#" in line]
    assert shown, "the README's example shows no output"
    assert p.stdout.splitlines() == shown


def test_an_install_puts_the_module_where_python3_finds_it(tmp_path):
    build, cmake = os.environ.get("NPUSIM_BUILD_DIR"), os.environ.get("NPUSIM_CMAKE")
    if not build or not cmake:
        pytest.skip("run by ctest (NPUSIM_BUILD_DIR, NPUSIM_CMAKE)")
    prefix = tmp_path / "prefix"
    i = subprocess.run([cmake, "--install", build, "--prefix", str(prefix)], capture_output=True, text=True)
    assert i.returncode == 0, i.stderr
    v = "%d.%d" % sys.version_info[:2]
    site = prefix / "lib" / ("python" + v) / "site-packages"  # a prefix other than /usr and /usr/local
    assert (site / "npusim" / "__init__.py").is_file()
    assert not (site / "npusim" / "_location.py").exists()  # the build tree's executable is not installed
    # The installed module, from another folder, finds bin/npusim and the
    # platforms installed beside it (the sizing re-run of a failure uses it).
    env = {k: val for k, val in os.environ.items() if k not in ("NPUSIM_EXE", "NPUSIM_PLATFORM_DIR")}
    env["PYTHONPATH"] = str(site)
    code = ("import npusim, sys; r = npusim.run(sys.argv[1], platform='tiny'); "
            "print(npusim.executable); print(r.summary['status'])")
    p = subprocess.run([sys.executable, "-c", code, os.path.join(TRACES, "chain.json")], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [str(prefix / "bin" / "npusim"), "ok"]
    # The Debian package carries it under /usr/lib/python3/dist-packages.
    c = subprocess.run([os.path.join(os.path.dirname(cmake), "cpack"), "-G", "DEB", "-B", str(tmp_path / "deb"),
                        "--config", os.path.join(build, "CPackConfig.cmake")], capture_output=True, text=True)
    assert c.returncode == 0, c.stdout + c.stderr
    deb = [f for f in os.listdir(tmp_path / "deb") if f.endswith(".deb")]
    listing = subprocess.run(["dpkg-deb", "-c", str(tmp_path / "deb" / deb[0])], capture_output=True, text=True).stdout
    assert re.search(r"\./usr/lib/python3/dist-packages/npusim/_npusim\.cpython-\S+\.so", listing), listing
    assert "./usr/lib/python3/dist-packages/npusim/__init__.py" in listing
    info = subprocess.run(["dpkg-deb", "-f", str(tmp_path / "deb" / deb[0]), "Depends"], capture_output=True,
                          text=True).stdout
    assert "python3 (>= %s)" % v in info


def test_the_python_tutorial_runs(tmp_path):
    """docs/python.md's program, run, sweep and plot, as written there."""
    with open(os.path.join(SRC, "docs", "python.md")) as f:
        doc = f.read()
    part = doc[doc.index("## Building a program"):doc.index("## Several runs at once")]
    blocks = re.findall(r"```python\n(.*?)```", part, re.S)
    assert len(blocks) >= 3
    try:
        import pandas  # noqa: F401
    except ImportError:
        blocks = [b for b in blocks if "import pandas" not in b]
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(npusim.__file__)))
    p = subprocess.run([sys.executable, "-c", "\n".join(blocks)], cwd=tmp_path, env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert re.match(r"<npusim.Result pa_py on a2a3: ok, device_wall_ns=[0-9.]+, 520/520 tasks>", lines[0]), lines
    rows = [line for line in lines if line.startswith("[0,0,")]
    assert [r.split()[1] for r in rows] == ["error", "ok", "ok", "ok"], lines
    assert rows[0].split()[2] == "SCOPE_DEADLOCK"
