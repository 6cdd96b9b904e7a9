"""Sweeps: points, run ids, resume, failures, executors (local pool and a real Dask
LocalCluster with a worker killed mid-sweep), aggregation and its confidence intervals."""

import json
import math
import os
import shutil
import signal
import subprocess

import aqmlab
import pandas as pd
import polars as pl
import pytest
from aqmlab import ScenarioError
from aqmlab.aggregate import aggregate, load_runs
from aqmlab.stats import mean_ci, t_ppf
from aqmlab.sweep import Executor, execute, make_tasks, read_sweep_file, run_id
from conftest import AQMLAB, EXAMPLES, ROOT

#: A run of about 0.1 s: the small dumbbell example, shortened.
BASE = EXAMPLES / "dumbbell-udp.toml"
FAST = {"duration": "100s", "output": {}}
GRID = {"bottleneck.qdisc.kind": ["pfifo", "pfifo_head_drop"], "bottleneck.qdisc.limit": ["20pkt", "50pkt", "100pkt"]}


def run_dirs(out):
    return sorted(p.name for p in (out / "runs").iterdir() if not p.name.startswith("."))


def test_grid_times_seeds_gives_stable_ids_and_resume_reruns_only_what_is_missing(tmp_path):
    out = tmp_path / "sw"
    events = []
    res = aqmlab.sweep(BASE, grid=GRID, seeds=3, set=FAST, out=out, workers=2, progress=events.append)
    assert (res.total, res.ok, res.n_failed, res.skipped) == (18, 18, 0, 0)
    ids = run_dirs(out)
    assert len(ids) == 18 and all(len(i) == 16 for i in ids)
    # every run folder is complete: the four core tables, its scenario and metadata
    for i in ids:
        names = {p.name for p in (out / "runs" / i).iterdir()}
        assert {"summary.parquet", "queues.parquet", "flows.parquet", "apps.parquet", "scenario.json", "run.json"} <= names
        meta = json.loads((out / "runs" / i / "run.json").read_text())
        assert meta["wall_s"] > 0 and meta["cpu_s"] > 0  # CPU time of the run's thread
    # the id is the hash of the resolved scenario and seed: same for another axis order
    _, _, tasks = make_tasks(BASE, grid=dict(reversed(list(GRID.items()))), seeds=3, set=FAST)
    assert sorted(t.id for t in tasks) == ids
    t = tasks[0]
    assert run_id(t.scenario, t.seed) == t.id
    assert json.loads((out / "runs" / t.id / "scenario.json").read_text())["seed"] == t.seed
    assert events[0] == {"event": "start", "total": 18, "todo": 18, "skipped": 0, "broken": 0}
    assert [e["done"] for e in events[1:]] == list(range(1, 19))

    again = aqmlab.sweep(BASE, grid=GRID, seeds=3, set=FAST, out=out, workers=2)
    assert (again.ran, again.skipped) == (0, 18)

    victim = ids[4]
    shutil.rmtree(out / "runs" / victim)
    mtimes = {i: (out / "runs" / i / "run.json").stat().st_mtime_ns for i in ids if i != victim}
    seen = []
    third = aqmlab.sweep(BASE, grid=GRID, seeds=3, set=FAST, out=out, workers=2, progress=seen.append)
    assert (third.ran, third.skipped, third.ok) == (1, 17, 1)
    assert [e["id"] for e in seen if e["event"] == "run"] == [victim]
    assert run_dirs(out) == ids
    assert all((out / "runs" / i / "run.json").stat().st_mtime_ns == m for i, m in mtimes.items())

    # resume=False runs everything again
    fresh = aqmlab.sweep(BASE, grid={"bottleneck.qdisc.limit": ["20pkt"]}, seeds=2, set=FAST, out=tmp_path / "b", workers=2)
    again = aqmlab.sweep(BASE, grid={"bottleneck.qdisc.limit": ["20pkt"]}, seeds=2, set=FAST, out=tmp_path / "b", workers=2, resume=False)
    assert (fresh.ran, again.ran, again.skipped) == (2, 2, 0)


def test_a_failing_point_is_recorded_and_the_others_finish(tmp_path):
    out = tmp_path / "sw"
    grid = {"bottleneck.qdisc.limit": ["20pkt", "-3pkt", "50pkt"]}
    res = aqmlab.sweep(BASE, grid=grid, seeds=2, set=FAST, out=out, workers=2)
    assert (res.ok, res.n_failed) == (4, 2)
    assert len(run_dirs(out)) == 4
    failed = sorted((out / "failed").glob("*.json"))
    assert len(failed) == 2
    rec = json.loads(failed[0].read_text())
    assert rec["point"] == {"bottleneck.qdisc.limit": "-3pkt"}
    assert rec["error"]["type"] == "ScenarioError"
    assert rec["error"]["path"] == "topology.bottleneck.qdisc.limit"
    assert json.loads((out / "status.json").read_text())["failed"] == 2
    # the aggregate covers the good points only
    agg = aqmlab.load(out)
    assert set(agg["bottleneck.qdisc.limit"]) == {"20pkt", "50pkt"}
    # resume tries failed runs again (and they fail again); finished runs are skipped
    res2 = aqmlab.sweep(BASE, grid=grid, seeds=2, set=FAST, out=out, workers=1)
    assert (res2.skipped, res2.ran, res2.n_failed) == (4, 2, 2)


def test_local_executor_runs_in_several_processes(tmp_path):
    out = tmp_path / "sw"
    aqmlab.sweep(BASE, grid={"bottleneck.qdisc.limit": ["20pkt", "50pkt", "80pkt"]}, seeds=2, set={"duration": "300s", "output": {}}, out=out, workers=2)
    pids = {json.loads((out / "runs" / i / "run.json").read_text())["pid"] for i in run_dirs(out)}
    assert len(pids) == 2 and os.getpid() not in pids


def test_local_executor_survives_a_killed_worker(tmp_path):
    out = tmp_path / "sw"
    killed = []

    def progress(ev):
        if ev["event"] == "run" and ev["done"] == 1:
            killed.append(ev["pid"])
            os.kill(ev["pid"], signal.SIGKILL)

    res = aqmlab.sweep(BASE, grid={"bottleneck.qdisc.limit": [f"{n}pkt" for n in (10, 20, 30, 40, 50)]}, seeds=2, set={"duration": "200s", "output": {}}, out=out, workers=2, progress=progress)
    assert killed
    assert (res.ok, res.n_failed) == (10, 0)
    assert len(run_dirs(out)) == 10
    pids = {json.loads((out / "runs" / i / "run.json").read_text())["pid"] for i in run_dirs(out)}
    assert len(pids) >= 3  # the pool was rebuilt with new processes


def test_dask_cluster_with_a_worker_killed_mid_sweep_loses_nothing(tmp_path):
    from distributed import Client, LocalCluster
    from distributed.diagnostics.plugin import SchedulerPlugin

    class Transitions(SchedulerPlugin):
        def __init__(self):
            self.seen = []

        def transition(self, key, start, finish, *args, **kwargs):
            self.seen.append((str(key), start, finish))

    out = tmp_path / "sw"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        log = Transitions()
        cluster.scheduler.add_plugin(log, name="aqmlab-test-transitions")
        worker_pids = set(client.run(os.getpid).values())
        assert len(worker_pids) == 2 and os.getpid() not in worker_pids
        killed = []

        def progress(ev):
            # Right after the first result, kill the *other* worker: with 10 runs
            # queued it is in the middle of a run.
            if ev["event"] == "run" and not killed:
                victim = next(p for p in worker_pids if p != ev["pid"])
                killed.append(victim)
                os.kill(victim, signal.SIGKILL)

        res = aqmlab.sweep(
            BASE, grid={"bottleneck.qdisc.limit": [f"{n}pkt" for n in (10, 20, 30, 40, 50)]}, seeds=2,
            set={"duration": "600s", "output": {}}, out=out, executor="dask", address=cluster.scheduler_address, progress=progress,
        )
        assert killed
        assert (res.total, res.ok, res.n_failed) == (10, 10, 0)
        ids = run_dirs(out)
        assert len(ids) == 10
        written = [json.loads(l) for l in (out / "log.jsonl").read_text().splitlines()]
        written = [w["id"] for w in written if w["event"] == "written"]
        assert sorted(written) == ids  # each run written exactly once
        metas = [json.loads((out / "runs" / i / "run.json").read_text()) for i in ids]
        first = min(m["written"] for m in metas)
        # after the kill, no run came from the dead process; the others took its work
        assert all(m["pid"] != killed[0] for m in metas if m["written"] > first)
        assert sum(m["pid"] != killed[0] for m in metas) >= 9
        # the kill really hit the victim's work: some run was started on a worker twice
        # (lost while running, or its result lost with the worker before the driver
        # got it), and still it was written once
        from collections import Counter

        starts = Counter(k.rsplit("-", 1)[0] for k, a, b in log.seen if k.startswith("aqmlab-run-") and b == "processing")
        assert max(starts.values()) >= 2, "no run was lost with the killed worker"
        assert len(starts) == 10


def test_t_quantiles_match_the_printed_table():
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 9: 2.262, 19: 2.093, 29: 2.045, 120: 1.980}
    for df, t in table.items():
        assert round(t_ppf(0.975, df), 3) == t
    assert round(t_ppf(0.95, 10), 3) == 1.812
    assert t_ppf(0.025, 5) == pytest.approx(-t_ppf(0.975, 5))


def test_aggregation_matches_a_hand_computed_mean_and_ci():
    # three seeds of one point: 12, 14, 19 → mean 15, s = sqrt(((−3)² + (−1)² + 4²)/2) = sqrt(13)
    runs = pl.DataFrame(
        {
            "x": ["a", "a", "a", "b", "b"],
            "point_id": ["p1", "p1", "p1", "p2", "p2"],
            "label": ["x=a"] * 3 + ["x=b"] * 2,
            "seed": [1, 2, 3, 1, 2],
            "run_id": ["r1", "r2", "r3", "r4", "r5"],
            "link": ["L->R"] * 5,
            "qdisc": ["pfifo"] * 5,
            "sojourn_ms_mean": [12.0, 14.0, 19.0, 1.0, float("nan")],
            "drops": [1, 1, 1, 0, 0],
        }
    )
    agg = aggregate(runs, "queues", ["x"])
    row = agg.filter((pl.col("point_id") == "p1") & (pl.col("metric") == "sojourn_ms_mean")).row(0, named=True)
    s = math.sqrt(13.0)
    half = 4.303 * s / math.sqrt(3)  # t(0.975, 2) = 4.303: 15 ± 8.96 stays ≥ 0, so t
    assert row["n"] == 3 and row["mean"] == pytest.approx(15.0)
    assert row["std"] == pytest.approx(s)
    # 4.303 is rounded to 3 decimals: |error| <= 0.0005 * s / sqrt(3) < 1.1e-3
    assert row["ci_method"] == "t"
    assert row["ci_half"] == pytest.approx(half, abs=1.1e-3)
    assert row["ci_low"] == pytest.approx(15 - half, abs=1.1e-3)
    assert row["ci_high"] == pytest.approx(15 + half, abs=1.1e-3)
    assert row["entity"] == "L->R" and row["table"] == "queues" and row["x"] == "a"
    # NaN is left out: one value, no spread, no interval
    row = agg.filter((pl.col("point_id") == "p2") & (pl.col("metric") == "sojourn_ms_mean")).row(0, named=True)
    assert row["n"] == 1 and row["mean"] == 1.0 and row["std"] is None and row["ci_half"] is None
    assert row["ci_method"] == "none"
    # zero spread: a zero-width interval
    row = agg.filter((pl.col("point_id") == "p1") & (pl.col("metric") == "drops")).row(0, named=True)
    assert (row["mean"], row["std"], row["ci_half"]) == (1.0, 0.0, 0.0)
    assert mean_ci([12, 14, 19])["ci_half"] == pytest.approx(half, abs=1.1e-3)


def test_intervals_stay_inside_the_metric_range():
    """2, 4, 9 ms: the t interval 5 ± 8.96 ms would reach −3.96 ms; a delay cannot be
    negative, so the interval is the percentile bootstrap of the mean. By hand: the 27
    equally likely resamples give the mean 2 with probability 1/27 = 0.037 ≥ 0.025 and 9
    with 1/27, so the 95 % interval is [2, 9]. Two seeds give no interval at all."""
    runs = pl.DataFrame(
        {
            "point_id": ["p1"] * 3 + ["p2"] * 2 + ["p3"] * 3,
            "label": ["a"] * 3 + ["b"] * 2 + ["c"] * 3,
            "seed": [1, 2, 3, 1, 2, 1, 2, 3],
            "run_id": [f"r{i}" for i in range(8)],
            "app": ["call"] * 8,
            "owd_ms_mean": [2.0, 4.0, 9.0, 5.0, 7.0, 10.0, 11.0, 12.0],
            "mos": [1.0, 1.05, 4.4, 1.0, 4.0, 4.1, 4.3, 4.39],
        }
    )
    agg = aggregate(runs, "apps", [])
    get = lambda p, m: agg.filter((pl.col("point_id") == p) & (pl.col("metric") == m)).row(0, named=True)
    r = get("p1", "owd_ms_mean")
    assert (r["ci_method"], r["ci_low"], r["ci_high"], r["ci_half"]) == ("bootstrap", 2.0, 9.0, None)
    r = get("p2", "owd_ms_mean")
    assert (r["n"], r["mean"], r["ci_method"], r["ci_low"], r["ci_high"]) == (2, 6.0, "none", None, None)
    # MOS 1, 1.05, 4.4: t gives 2.15 ± 4.85, outside [1, 4.5] at both ends
    r = get("p1", "mos")
    assert r["ci_method"] == "bootstrap" and 1.0 <= r["ci_low"] < r["ci_high"] <= 4.5
    # inside the range: the t interval stays
    r = get("p3", "owd_ms_mean")
    assert r["ci_method"] == "t" and r["ci_half"] == pytest.approx(4.303 * 1.0 / math.sqrt(3), abs=1e-3)


def test_exact_bootstrap_matches_resampling_by_brute_force():
    import itertools

    from aqmlab.stats import bootstrap_mean_ci

    xs = [0.0, 0.0, 0.1, 0.7]
    means = sorted(sum(c) / 4 for c in itertools.product(xs, repeat=4))  # 256 equally likely
    lo = means[math.ceil(0.025 * 256) - 1]
    hi = means[math.ceil(0.975 * 256) - 1]
    assert bootstrap_mean_ci(xs) == pytest.approx((lo, hi))
    # above the exact limit: deterministic resampling, still inside the data's range
    big = [float(i % 7) for i in range(30)]
    a, b = bootstrap_mean_ci(big)
    assert (a, b) == bootstrap_mean_ci(big) and 0.0 <= a < b <= 6.0


def test_load_gives_one_tidy_table_for_polars_and_pandas(tmp_path):
    out = tmp_path / "sw"
    aqmlab.sweep(BASE, grid={"bottleneck.qdisc.kind": ["pfifo", "pfifo_head_drop"]}, seeds=3, set=FAST, out=out, workers=2)
    agg = aqmlab.load(out)
    for c in ("bottleneck.qdisc.kind", "point_id", "label", "table", "entity", "metric", "n", "mean", "std", "ci_low", "ci_high"):
        assert c in agg.columns, c
    assert set(agg["table"]) == {"summary", "queues", "flows", "apps"}
    soj = agg.filter((pl.col("metric") == "sojourn_ms_mean") & (pl.col("entity") == "L->R"))
    assert soj.height == 2 and set(soj["n"]) == {3}
    # the mean equals the mean of the per-run values
    raw = load_runs(out, "queues").filter(pl.col("link") == "L->R")
    for kind in ("pfifo", "pfifo_head_drop"):
        vals = raw.filter(pl.col("bottleneck.qdisc.kind") == kind)["sojourn_ms_mean"].to_list()
        assert len(vals) == 3
        got = soj.filter(pl.col("bottleneck.qdisc.kind") == kind).row(0, named=True)
        assert got["mean"] == pytest.approx(sum(vals) / 3)
        assert got["ci_low"] < got["mean"] < got["ci_high"]
    pdf = agg.to_pandas()
    assert isinstance(pdf, pd.DataFrame) and len(pdf) == agg.height


def test_zip_axes_move_together(tmp_path):
    _, points, tasks = make_tasks(
        BASE, grid={"bottleneck.qdisc.kind": ["pfifo", "pfifo_head_drop"]},
        zip={"bottleneck.rate": ["5Mbit", "20Mbit"], "traffic[0].rate": ["2.6Mbit", "10.4Mbit"]}, seeds=2, set=FAST,
    )
    assert len(points) == 4 and len(tasks) == 8
    assert {(p["bottleneck.rate"], p["traffic[0].rate"]) for p in points} == {("5Mbit", "2.6Mbit"), ("20Mbit", "10.4Mbit")}
    t = next(t for t in tasks if t.point["bottleneck.rate"] == "20Mbit")
    assert t.scenario["topology"]["bottleneck"]["rate"] == "20Mbit" and t.scenario["traffic"][0]["rate"] == "10.4Mbit"
    with pytest.raises(ScenarioError) as e:
        make_tasks(BASE, zip={"bottleneck.rate": ["5Mbit", "20Mbit"], "traffic[0].rate": ["1Mbit"]})
    assert e.value.path == "zip" and "same length" in e.value.message


@pytest.mark.parametrize(
    "text, path, needle",
    [
        ('base = "dumbbell-udp.toml"\nseedz = 2\n', "seedz", "unknown key"),
        ("seeds = 2\n", "base", "missing"),
        ('base = "nope.toml"\n', "base", "not found"),
        ('base = "dumbbell-udp.toml"\nseeds = 0\n', "seeds", "at least one"),
        ('base = "dumbbell-udp.toml"\n[grid]\n"bottleneck.qdisc.kind" = "pfifo"\n', "grid.bottleneck.qdisc.kind", "non-empty list"),
        ('base = "dumbbell-udp.toml"\nexecutor = "ray2"\n', "executor", "unknown executor"),
        ('base = "dumbbell-udp.toml"\n[grid]\n"traffic[9].rate" = ["1Mbit"]\n', "traffic[9]", "index out of range"),
        ('base = "dumbbell-udp.toml"\n[grid]\n"a..b" = [1]\n', "grid.a..b", "dotted path"),
    ],
)
def test_bad_sweep_files_raise_scenario_errors_with_the_key(tmp_path, text, path, needle):
    f = tmp_path / "s.toml"
    shutil.copy(BASE, tmp_path / "dumbbell-udp.toml")
    f.write_text(text)
    with pytest.raises(ScenarioError) as e:
        sf = read_sweep_file(f)
        aqmlab.sweep(sf.base, grid=sf.grid, zip=sf.zip, seeds=sf.seeds, out=tmp_path / "o")
    assert e.value.path == path
    assert needle in e.value.message


def cli(*args):
    return subprocess.run([*AQMLAB, *map(str, args)], capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_cli_sweep_json_quiet_exit_status_and_errors(tmp_path):
    out = tmp_path / "sw"
    p = cli("sweep", EXAMPLES / "sweep-small.toml", "--out", out, "--set", "duration=50s", "--json", "--workers", "2")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert (doc["total"], doc["ok"], doc["failed"]) == (4, 4, 0)
    p = cli("sweep", EXAMPLES / "sweep-small.toml", "--out", out, "--set", "duration=50s", "--quiet")
    assert p.returncode == 0 and p.stdout == "" and p.stderr == ""
    # a bad value in every run: exit status 1, the first error shown, no traceback
    p = cli("sweep", EXAMPLES / "sweep-small.toml", "--out", tmp_path / "bad", "--set", "duration=50s", "--set", "bottleneck.qdisc.limit=0pkt", "--workers", "2")
    assert p.returncode == 1
    assert "all 4 runs failed" in p.stderr and "greater than zero" in p.stderr and "Traceback" not in p.stderr
    assert json.loads((tmp_path / "bad" / "status.json").read_text())["failed"] == 4
    # a bad value in some runs: exit status 1 and the summary says how many failed
    grid = tmp_path / "half.toml"
    grid.write_text(f'base = "{EXAMPLES / "dumbbell-udp.toml"}"\nset = {{ duration = "50s" }}\n[grid]\n"bottleneck.qdisc.limit" = ["0pkt", "20pkt"]\n')
    p = cli("sweep", grid, "--out", tmp_path / "half", "--workers", "2")
    assert p.returncode == 1
    assert "1 failed" in p.stdout and "greater than zero" in p.stderr
    # a bad sweep file: exit status 2, the key named, no traceback
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "x.toml"\n')
    p = cli("sweep", bad)
    assert p.returncode == 2 and "base" in p.stderr and "not found" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_sweep_keeps_every_finished_run_and_resume_does_the_rest(tmp_path, sig):
    import time

    out = tmp_path / "sw"
    args = [*AQMLAB, "sweep", EXAMPLES / "sweep-small.toml", "--out", out, "--seeds", "12", "--set", "duration=300s", "--workers", "2", "--quiet"]
    p = subprocess.Popen(list(map(str, args)), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not (out / "runs").exists() or len(run_dirs(out)) < 3):
        time.sleep(0.05)
    os.kill(p.pid, sig)  # Ctrl-C, or a hard crash of the driver
    p.communicate(timeout=120)
    done = run_dirs(out)
    assert 3 <= len(done) < 24, "interrupted in the middle"
    for i in done:  # every run folder that exists is complete
        names = {f.name for f in (out / "runs" / i).iterdir()}
        assert {"summary.parquet", "queues.parquet", "flows.parquet", "apps.parquet", "run.json"} <= names
        pl.read_parquet(out / "runs" / i / "queues.parquet")
    res = aqmlab.sweep(EXAMPLES / "dumbbell-udp.toml", grid={"topology.bottleneck.qdisc.kind": ["pfifo", "codel"]}, seeds=12, set={"duration": "300s"}, out=out, workers=2)
    assert (res.skipped, res.ran, res.ok, res.n_failed) == (len(done), 24 - len(done), 24 - len(done), 0)
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".tmp-")]


KILLED_MID_SEND = """
import os, struct, sys, time, concurrent.futures as cf, multiprocessing as mp
from aqmlab.sweep.executors import kill_pool

def half_a_result(_):
    # A worker killed while sending its result: the frame header promises 1000 bytes
    # and only 3 follow (found through the worker loop's frame, as CPython names it).
    f = sys._getframe()
    while "result_queue" not in f.f_locals:
        f = f.f_back
    os.write(f.f_locals["result_queue"]._writer.fileno(), struct.pack("!i", 1000) + b"abc")
    time.sleep(600)

if __name__ == "__main__":
    pool = cf.ProcessPoolExecutor(1, mp_context=mp.get_context("forkserver"))
    pool.submit(half_a_result, 0)
    time.sleep(1.0)  # the manager thread now waits in recv() for the other 997 bytes
    kill_pool(pool)
    print("stopped")
"""


def test_killing_a_pool_whose_worker_died_mid_send_lets_the_driver_exit(tmp_path):
    """Ctrl-C while a worker sends a result used to hang the driver at exit (the pool's
    manager thread blocked in recv for ever; seen once in CI)."""
    script = tmp_path / "killed_mid_send.py"
    script.write_text(KILLED_MID_SEND)
    p = subprocess.run([AQMLAB[0], str(script)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "stopped" in p.stdout, p.stderr


def test_a_table_axis_and_a_path_inside_it_combine_per_point():
    """A qdisc table on one axis and its `limit` on another: every point gets its own
    copy of the table (the axis values are shared by the points and must not change)."""
    tables = [{"kind": "pfifo"}, {"kind": "codel", "target": "5ms"}]
    grid = {"bottleneck.qdisc": tables, "bottleneck.qdisc.limit": ["20pkt", "50pkt"]}
    _, points, tasks = make_tasks(BASE, grid=grid, seeds=1, set=FAST)
    got = sorted((t.scenario["topology"]["bottleneck"]["qdisc"]["kind"], t.scenario["topology"]["bottleneck"]["qdisc"]["limit"]) for t in tasks)
    assert got == [("codel", "20pkt"), ("codel", "50pkt"), ("pfifo", "20pkt"), ("pfifo", "50pkt")]
    assert tables == [{"kind": "pfifo"}, {"kind": "codel", "target": "5ms"}]
    assert all("limit" not in p["bottleneck.qdisc"] for p in points)


class RecordingExecutor(Executor):
    """Runs tasks in this process, in the order given, and remembers that order."""

    kind = "recording"

    def __init__(self):
        self.order = []

    def run(self, tasks):
        for t in tasks:
            self.order.append(t.id)
            yield t, execute(t)


def test_run_plans_runs_the_longest_first_across_sweeps_and_results_do_not_depend_on_the_order(tmp_path):
    from aqmlab.sweep import plan_sweep, run_plans

    durations = {"short": "20s", "long": "60s", "mid": "40s"}
    plans = [plan_sweep(BASE, grid={"bottleneck.qdisc.limit": ["20pkt", "50pkt"]}, seeds=1, set={**FAST, "duration": d},
                        out=tmp_path / name) for name, d in durations.items()]
    completed = []
    ex = RecordingExecutor()
    run_plans(plans, executor=ex, on_complete=lambda p: completed.append((p.out.name, p.result.ran)))
    # longest simulated time first, whatever the plan; equal times keep the plans' order
    by_plan = {t.id: p.out.name for p in plans for t in p.todo}
    assert [by_plan[i] for i in ex.order] == ["long", "long", "mid", "mid", "short", "short"]
    # each plan is complete exactly once, after its own last run
    assert completed == [("long", 2), ("mid", 2), ("short", 2)]
    outcomes = {p.out.name: p.finish() for p in plans}
    assert all((o.total, o.ok, o.n_failed) == (2, 2, 0) for o in outcomes.values())
    # the same tables as each sweep run alone, in its own order
    alone = aqmlab.sweep(BASE, grid={"bottleneck.qdisc.limit": ["20pkt", "50pkt"]}, seeds=1, set={**FAST, "duration": "20s"},
                         out=tmp_path / "alone", workers=1)
    assert alone.ok == 2
    for i in run_dirs(tmp_path / "alone"):
        for table in ("summary", "queues", "flows"):
            a = pl.read_parquet(tmp_path / "alone" / "runs" / i / f"{table}.parquet")
            b = pl.read_parquet(tmp_path / "short" / "runs" / i / f"{table}.parquet")
            cost = [c for c in a.columns if c in ("wall_time_s", "events_per_s", "arena_slots")]  # the run's cost
            assert a.drop(cost).equals(b.drop(cost)), (i, table)


def test_expected_cost_is_the_simulated_time_and_a_bad_duration_costs_nothing():
    from aqmlab.sweep import expected_cost
    from aqmlab.sweep.points import Task

    def cost(**sc):
        return expected_cost(Task("x", {}, "p", 1, sc))

    assert cost(warmup="100s", duration="20min") == 1300.0
    assert cost(duration=5) == 5.0
    assert cost(duration="soon") == 0.0  # the run reports the bad value; the order does not care
    assert cost() == 0.0
