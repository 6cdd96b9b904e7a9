"""Nothing lost, nothing hangs, nothing misleads (issue 9): dying workers, resume checks,
build fingerprints, output folders, Ctrl-C, bad input, CLI first-hour details."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import aqmlab
import crash_target
import polars as pl
import pytest
from aqmlab import ScenarioError
from aqmlab.sweep import LocalExecutor, SweepFailed, build_id, read_sweep_file
from conftest import AQMLAB, EXAMPLES, ROOT

BASE = EXAMPLES / "dumbbell-udp.toml"
FAST = {"duration": "20s", "output": {}}


def cli(*args, **kw):
    return subprocess.run([*AQMLAB, *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300, **kw)


def run_dirs(out):
    return sorted(p.name for p in (out / "runs").iterdir() if not p.name.startswith("."))


# --------------------------------------------------------------------------- workers


def test_a_run_that_kills_its_worker_fails_alone_and_every_other_run_finishes(tmp_path):
    out = tmp_path / "sw"
    grid = {"bottleneck.qdisc.limit": [f"{n}pkt" for n in (10, 20, 30)]}
    ex = LocalExecutor(workers=2, target=crash_target.die_on_seed_2)
    res = aqmlab.sweep(BASE, grid=grid, seeds=3, set=FAST, out=out, executor=ex)
    # seeds 1 and 3 of every point ran; the three seed-2 runs, and only they, failed
    assert (res.ok, res.n_failed) == (6, 3)
    assert {f["seed"] for f in res.failed} == {2}
    assert {f["error"]["type"] for f in res.failed} == {"WorkerDied"}
    seeds = sorted(json.loads((out / "runs" / i / "run.json").read_text())["seed"] for i in run_dirs(out))
    assert seeds == [1, 1, 1, 3, 3, 3]


def test_a_sweep_at_the_top_of_a_script_without_a_main_guard_works(tmp_path):
    script = tmp_path / "my_sweep.py"
    script.write_text(
        "import aqmlab\n"
        "print('top-level code ran', flush=True)\n"
        f"s = aqmlab.sweep({str(BASE)!r}, grid={{'bottleneck.qdisc.limit': ['20pkt', '50pkt']}}, seeds=2,\n"
        f"                 set={{'duration': '20s'}}, out={str(tmp_path / 'out')!r}, workers=2)\n"
        "print('ok', s.ok, s.n_failed)\n"
    )
    for how in ([str(script)], ["-m", "my_sweep"]):  # as a file, and as a module
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        p = subprocess.run([sys.executable, *how], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        # the workers did not run the script again: its top-level code ran once
        assert p.stdout.splitlines() == ["top-level code ran", "ok 4 0"]


def test_a_sweep_where_every_run_fails_raises_with_the_first_error(tmp_path):
    with pytest.raises(SweepFailed) as e:
        aqmlab.sweep(BASE, grid={"bottleneck.qdisc.limit": ["-1pkt", "-2pkt"]}, set=FAST, out=tmp_path / "sw", workers=2)
    assert "all 2 runs failed" in str(e.value) and "topology.bottleneck.qdisc.limit" in str(e.value)
    assert e.value.outcome.n_failed == 2


# --------------------------------------------------------------------------- resume


def test_resume_reruns_finished_runs_whose_tables_are_missing_or_truncated(tmp_path):
    out = tmp_path / "sw"
    grid = {"bottleneck.qdisc.limit": ["20pkt", "50pkt"]}
    aqmlab.sweep(BASE, grid=grid, seeds=2, set=FAST, out=out, workers=2)
    ids = run_dirs(out)
    (out / "runs" / ids[0] / "apps.parquet").unlink()
    f = out / "runs" / ids[1] / "queues.parquet"
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    events = []
    res = aqmlab.sweep(BASE, grid=grid, seeds=2, set=FAST, out=out, workers=2, progress=events.append)
    assert (res.skipped, res.ran, res.ok) == (2, 2, 2)
    assert sorted(b["id"] for b in res.broken) == sorted(ids[:2])
    assert {b["problem"].split(" ")[0] for b in res.broken} == {"apps.parquet", "queues.parquet"}
    assert events[0]["broken"] == 2
    agg = aqmlab.load(out)
    assert set(agg.filter(pl.col("table") == "apps")["n"].to_list()) == {2}


def test_resume_refuses_runs_of_another_build_unless_allowed(tmp_path):
    out = tmp_path / "sw"
    aqmlab.sweep(BASE, seeds=2, set=FAST, out=out, workers=1)
    ids = run_dirs(out)
    meta = json.loads((out / "runs" / ids[0] / "run.json").read_text())
    assert meta["build"] == build_id()
    assert meta["build"].startswith(aqmlab.__version__ + "+") and len(meta["build"]) > len(aqmlab.__version__) + 8
    meta["build"] = "0.0.1+000000000000"
    (out / "runs" / ids[0] / "run.json").write_text(json.dumps(meta))
    old = json.loads((out / "runs" / ids[1] / "run.json").read_text())
    del old["build"]  # a run written before builds were recorded
    (out / "runs" / ids[1] / "run.json").write_text(json.dumps(old))
    with pytest.raises(ScenarioError) as e:
        aqmlab.sweep(BASE, seeds=2, set=FAST, out=out, workers=1)
    assert "1 by 0.0.1+000000000000" in str(e.value) and "1 by unknown" in str(e.value) and "--allow-mixed" in str(e.value)
    res = aqmlab.sweep(BASE, seeds=2, set=FAST, out=out, workers=1, allow_mixed=True)
    assert (res.skipped, res.ran) == (2, 0)
    p = cli("sweep", _sweep_file(tmp_path, seeds=2), "--out", out, "--quiet")
    assert p.returncode == 2 and "--allow-mixed" in p.stderr and "Traceback" not in p.stderr
    assert cli("sweep", _sweep_file(tmp_path, seeds=2), "--out", out, "--quiet", "--allow-mixed").returncode == 0
    versions = json.loads((out / "sweep.json").read_text())["versions"]
    assert versions["build"] == build_id() and versions["git commit"]


def _sweep_file(tmp_path, seeds=1, name=None, extra=""):
    f = tmp_path / "s.toml"
    name_line = f"name = {json.dumps(name)}\n" if name is not None else ""
    f.write_text(f'{name_line}base = "{BASE}"\nseeds = {seeds}\nset = {{ duration = "20s", output = {{}} }}\n{extra}')
    return f


# --------------------------------------------------------------------------- output folders


def test_out_pointing_at_a_file_fails_before_simulating(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ScenarioError, match="is a file"):
        aqmlab.sweep(BASE, set=FAST, out=f)
    with pytest.raises(ScenarioError, match="is a file"):
        aqmlab.run(BASE, set={"duration": "1000000s"}, out=f)  # would take minutes if run
    p = cli("run", BASE, "--set", "duration=1000000s", "--out", f)
    assert p.returncode == 2 and "is a file" in p.stderr
    assert f.read_text() == "x"


def test_a_new_run_into_an_old_run_folder_leaves_no_stale_table(tmp_path):
    out = tmp_path / "run"
    assert cli("run", BASE, "--set", "duration=5s", "--set", "output.timeseries=100ms", "--out", out, "--quiet").returncode == 0
    assert (out / "timeseries.parquet").exists()
    assert cli("run", BASE, "--set", "duration=5s", "--set", "output={}", "--out", out, "--quiet").returncode == 0
    assert not (out / "timeseries.parquet").exists()
    assert aqmlab.load_runs(out, "timeseries").height == 0


def test_a_sweep_name_cannot_write_outside_out(tmp_path):
    for bad in ("../../x", "/tmp/x", "..", "a/b"):
        with pytest.raises(ScenarioError) as e:
            read_sweep_file(_sweep_file(tmp_path, name=bad))
        assert e.value.path == "name"


def test_pcap_without_out_says_where_it_wrote(tmp_path):
    p = cli("run", BASE, "--set", "duration=10s", "--set", 'output.pcap=["L->R"]', "--quiet")
    assert p.returncode == 0, p.stderr
    line = next(l for l in p.stderr.splitlines() if "pcap written to" in l)
    folder = line.split("pcap written to ")[1].split("/ ")[0]
    assert os.path.exists(os.path.join(folder, "L__R.pcap"))


# --------------------------------------------------------------------------- Ctrl-C


def _wait_for(cond, limit=120):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and not cond():
        time.sleep(0.05)


def _interruptible():
    """Children get the default SIGINT action even when this test process ignores it
    (a background job of a non-interactive shell does)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_a_quiet_run_at_once(tmp_path):
    # 10^6 s of the example takes minutes; Ctrl-C must not wait for the core.
    for flag in ("--quiet", "--json"):
        p = subprocess.Popen([*AQMLAB, "run", str(BASE), "--set", "duration=1000000s", flag], cwd=ROOT, preexec_fn=_interruptible, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(3)  # the run is under way (imports take ~1 s)
        assert p.poll() is None
        p.send_signal(signal.SIGINT)
        try:
            stdout, err = p.communicate(timeout=30)
        finally:
            p.kill()
        assert p.returncode == 130 and "Traceback" not in err
        if flag == "--json":
            # A script reading stdout learns that the run did not finish.
            assert json.loads(stdout) == {"interrupted": True, "finished": False, "scenario": str(BASE)}


def test_ctrl_c_stops_a_sweep_promptly_and_keeps_finished_runs(tmp_path):
    out = tmp_path / "sw"
    sf = tmp_path / "s.toml"
    # two quick runs and two that take minutes each; runs start longest first, so the two
    # long ones hold two workers and the third finishes the quick ones
    sf.write_text(f'base = "{BASE}"\nseeds = 2\nset = {{ output = {{}} }}\n[grid]\nduration = ["20s", "1000000s"]\n')
    p = subprocess.Popen([*AQMLAB, "sweep", str(sf), "--out", str(out), "--workers", "3", "--json"], cwd=ROOT, preexec_fn=_interruptible, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: (out / "runs").exists() and len(run_dirs(out)) >= 2)
    assert len(run_dirs(out)) == 2 and p.poll() is None
    p.send_signal(signal.SIGINT)
    try:
        stdout, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 130 and "interrupted" in err and "Traceback" not in err
    assert len(run_dirs(out)) == 2
    status = json.loads((out / "status.json").read_text())
    assert status["interrupted"] is True
    # --json still prints what finished (the round-3 fuzz finding: it printed nothing).
    printed = json.loads(stdout)
    assert printed["interrupted"] is True and printed["ok"] == status["ok"] == 2


# --------------------------------------------------------------------------- bad input


def test_nan_and_inf_anywhere_name_the_field(tmp_path):
    for value in ("nan", "inf", "-inf"):
        p = cli("run", BASE, "--set", f"traffic[0].rate_jitter={value}")
        assert p.returncode == 2 and "traffic[0].rate_jitter" in p.stderr and "finite" in p.stderr, p.stderr
        assert "JSON" not in p.stderr and "Traceback" not in p.stderr
    f = tmp_path / "s.toml"
    f.write_text("description = [1.0, nan]\n" + BASE.read_text())
    with pytest.raises(ScenarioError) as e:
        aqmlab.validate(f)
    assert e.value.path == "description[1]"
    with pytest.raises(ScenarioError) as e:
        aqmlab.sweep(BASE, grid={"bottleneck.qdisc.limit": ["20pkt", float("nan")]}, out=tmp_path / "sw")
    assert e.value.path == "grid.bottleneck.qdisc.limit[1]"
    g = tmp_path / "g.toml"
    g.write_text(f'base = "{BASE}"\n[grid]\n"bottleneck.rate" = ["5Mbit", nan]\n')
    p = cli("sweep", g, "--out", tmp_path / "o")
    assert p.returncode == 2 and 'grid.bottleneck.rate[1]' in p.stderr and "Traceback" not in p.stderr


def test_unreadable_files_and_bad_seeds_are_clean_errors(tmp_path):
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(BASE.read_bytes().replace(b'name = "', b'name = "caf\xe9 ', 1))
    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    for f, needle in ((bad, "not UTF-8"), (deep, "nested too deeply"), (tmp_path, "is a folder")):
        p = cli("run", f)
        assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr
    for seed in ("-1", str(2**64)):
        p = cli("run", BASE, "--seed", seed, "--set", "duration=1s")
        assert p.returncode == 2 and "seed" in p.stderr and "0..18446744073709551615" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert cli("run", BASE, "--seed", str(2**64 - 1), "--set", "duration=10s", "--quiet").returncode == 0
    with pytest.raises(ScenarioError):
        aqmlab.sweep(BASE, seeds=[1, -1], out=tmp_path / "sw")


def test_an_unreachable_dask_scheduler_is_a_clean_error(tmp_path, monkeypatch):
    from aqmlab.sweep import DaskExecutor

    monkeypatch.setattr(DaskExecutor, "CONNECT_TIMEOUT", 1)
    with pytest.raises(ScenarioError) as e:
        aqmlab.sweep(BASE, set=FAST, out=tmp_path / "sw", executor="dask", address="tcp://127.0.0.1:9")
    assert e.value.path == "address" and "cannot reach a Dask scheduler" in e.value.message


# --------------------------------------------------------------------------- seeds


def test_points_whose_seeds_give_identical_runs_are_flagged(tmp_path):
    from aqmlab.report import build

    # CBR with no random start: every seed gives the same packets; Poisson does not.
    out = tmp_path / "sw"
    grid = {"traffic[0].kind": ["udp-cbr", "udp-poisson"]}
    aqmlab.sweep(BASE, grid=grid, seeds=3, set=FAST, out=out, workers=2)
    agg = aqmlab.load(out)
    flag = dict(agg.group_by("traffic[0].kind").agg(pl.col("identical").all()).iter_rows())
    assert flag == {"udp-cbr": True, "udp-poisson": False}
    html = build(out, figures_dir=tmp_path / "figs").read_text()
    assert "n = 3 identical runs — the scenario has no randomness" in html
    assert html.count("identical runs") >= 2  # the note above the tables and the row
    # every app metric per point, with units; the build and commit among the versions
    apps = html[html.index("<h3>Apps"):]
    apps = apps[: apps.index("</table>")]
    assert "owd_ms_mean" in apps and "loss_rate" in apps and " ms ± " in apps and " Mbit/s" in apps and " % ± " in apps
    assert "e+0" not in apps
    assert "<td class=\"l\">git commit</td>" in html and build_id() in html
    pdfs = sorted((tmp_path / "figs").glob("*.pdf"))
    assert pdfs and all(p.with_suffix(".png").exists() for p in pdfs)


def test_one_confidence_interval_implementation():
    import inspect

    from aqmlab import aggregate, stats

    src = inspect.getsource(aggregate)
    assert "t_ppf" not in src and "sqrt" not in src  # aggregate uses stats.with_ci
    agg = aggregate.aggregate(pl.DataFrame({"point_id": ["p"] * 3, "label": ["p"] * 3, "seed": [1, 2, 3], "run_id": ["a", "b", "c"], "link": ["l"] * 3, "x": [2.0, 4.0, 9.0]}), "queues", [])
    one = stats.mean_ci([2, 4, 9])
    row = agg.row(0, named=True)
    assert {k: row[k] for k in one} == pytest.approx(one)


# --------------------------------------------------------------------------- first hour


def test_cli_first_hour_details():
    p = cli("--version")
    assert p.returncode == 0 and p.stdout.startswith(f"aqmlab {aqmlab.__version__} (build {build_id()}")
    p = cli("traffic", "udp-cbr")
    assert p.returncode == 0 and "udp-cbr" in p.stdout and "tcp-bulk" not in p.stdout
    p = cli("traffic", "nope")
    assert p.returncode == 2 and "unknown traffic kind" in p.stderr
    p = cli("sweep", "--help", env={**os.environ, "COLUMNS": "200"})
    assert "[quick]" in p.stdout and "<bool>" not in p.stdout and "--allow-mixed" in p.stdout
    assert "<bool>" not in cli("--help").stdout


def test_run_prints_the_bottleneck_and_the_flows_not_idle_access_links():
    env = {**os.environ, "COLUMNS": "200"}
    p = cli("run", EXAMPLES / "fq-isolation.toml", "--set", "duration=10s", env=env)
    assert p.returncode == 0
    assert "L->R" in p.stdout and "bulk_l0" in p.stdout and "voice" in p.stdout  # bottleneck, flows, apps
    assert "25 other links not shown" in p.stdout
    assert "Mbit/s" in p.stdout and " ms " in p.stdout  # numbers with units
    every = cli("run", EXAMPLES / "fq-isolation.toml", "--set", "duration=10s", "--all", env=env)
    assert "other links not shown" not in every.stdout and len(every.stdout.splitlines()) > len(p.stdout.splitlines()) + 20


def test_a_tool_that_cannot_be_installed_is_skipped_loudly_otherwise_the_test_fails(monkeypatch):
    from conftest import need_tool

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("AQMLAB_UNINSTALLABLE", "")
    with pytest.raises(pytest.fail.Exception, match="make test"):
        need_tool("tshark")
    monkeypatch.setenv("AQMLAB_UNINSTALLABLE", "tshark chromium")
    with pytest.raises(pytest.skip.Exception, match="SKIPPED: tshark"):
        need_tool("tshark")


# --------------------------------------------------------------------------- links in output folders


def _plant_link(path, target):
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def test_no_writer_follows_a_symlink_in_an_output_folder(tmp_path):
    """Round-3 fuzz finding: scenario.json, the parquet temp names, log.jsonl and the
    report's temp file were written through links planted in the output folder."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    # run --out: links at the final names are replaced, never written through
    out = tmp_path / "run"
    for name in ("scenario.json", "summary.parquet", ".summary.parquet.tmp"):
        _plant_link(out / name, victim)
    r = cli("run", BASE, "--set", "duration=20s", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "keep me"
    assert not (out / "scenario.json").is_symlink() and not (out / "summary.parquet").is_symlink()
    assert pl.read_parquet(out / "summary.parquet").height == 1
    # a sweep's log.jsonl that is a link is refused, the target untouched
    sw = tmp_path / "sw"
    _plant_link(sw / "log.jsonl", victim)
    sf = tmp_path / "s.toml"
    sf.write_text(f'base = "{BASE}"\nseeds = 1\nset = {{ duration = "20s", output = {{}} }}\n')
    r = cli("sweep", sf, "--out", sw, "--quiet")
    assert victim.read_text() == "keep me"
    assert r.returncode != 0 and "symlink" in (r.stderr + r.stdout)
    # the report replaces a link at its name; the figure files too
    rep = tmp_path / "run" / "report.html"
    _plant_link(rep, victim)
    r = cli("report", out, "--out", rep)
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "keep me" and not rep.is_symlink()


def test_pcap_output_refuses_a_symlink(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "run"
    r0 = cli("run", BASE, "--set", "duration=20s", "--set", 'output.pcap=["L->R"]', "--out", out, "--quiet")
    names = sorted(p.name for p in out.glob("*.pcap"))
    assert r0.returncode == 0 and names, r0.stderr
    for n in names:
        (out / n).unlink()
        os.symlink(victim, out / n)
    r = cli("run", BASE, "--set", "duration=20s", "--set", 'output.pcap=["L->R"]', "--out", out, "--quiet")
    assert r.returncode != 0 and "symlink" in r.stderr and "Traceback" not in r.stderr
    assert victim.read_text() == "keep me"
