"""The l4s study: listed, its quick sweeps' scenarios valid, and one tiny coexistence
run (one Prague and one CUBIC flow through DualPI2 for a few simulated seconds) gives
the L- and C-queue rows that the figures read, with the latency split DualPI2 is for."""

import importlib.util
import json
import subprocess

import aqmlab
import polars as pl
from aqmlab import load_runs, study
from aqmlab.sweep import make_tasks, read_sweep_file, sweep
from conftest import AQMLAB, ROOT

EXPERIMENTS = {"coexistence", "latency", "capacity-step", "rfc3168", "rtt-unfairness", "burst", "residential"}


def figures_module():
    spec = importlib.util.spec_from_file_location("l4s_figures", study.study_dir("l4s") / "figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_study_is_listed_and_every_quick_scenario_validates():
    p = subprocess.run([*AQMLAB, "study", "list", "--json"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    names = {s["name"]: s for s in json.loads(p.stdout)}
    assert "l4s" in names and names["l4s"]["title"]
    files = study.experiments(study.study_dir("l4s"))
    assert EXPERIMENTS <= set(files)
    for name, f in files.items():
        sf = read_sweep_file(f)
        assert sf.quick.get("seeds") == 1, name
        # Every point of the quick sweep (with the quick overrides) is a valid scenario.
        _, _, tasks = make_tasks(sf.base, {**sf.grid, **sf.quick.get("grid", {})}, sf.zip, 1, {**sf.set, **sf.quick.get("set", {})})
        assert tasks, name
        for t in tasks:
            aqmlab.validate(t.scenario)


def test_a_tiny_coexistence_run_has_l_and_c_rows_and_the_latency_split(tmp_path):
    d = tmp_path / "coexistence"
    sweep(study.study_dir("l4s") / "scenario.toml", zip={"description": ["1:1"]}, seeds=1, out=d,
          set={"duration": "6s", "warmup": "2s"}, workers=1)
    hist = load_runs(d, "sojourn_hist")
    per_link = dict(hist.group_by("link").agg(pl.col("packets").sum()).iter_rows())
    l, c, link = per_link["L->R.L"], per_link["L->R.C"], per_link["L->R"]
    # Both queues carried traffic; their rows count every packet dequeued after the
    # warm-up, the link's only those that arrived after it: at most the packets queued
    # at 2 s more (100 Mbit/s × 20 ms base RTT ≈ 170 packets in flight each).
    assert l > 1000 and c > 1000
    assert link <= l + c <= link + 400
    child = load_runs(d, "child_queues").sort("queue")
    assert child["queue"].to_list() == [0, 1] and child["qdisc"].to_list() == ["dualpi2", "dualpi2"]
    assert child["dequeued"].to_list() == [l, c]
    # Arrivals and verdicts add up to the link's row (the warm-up cuts both the same way).
    q = load_runs(d, "queues").filter(pl.col("link") == "L->R").row(0, named=True)
    for col in ("enqueued", "drops", "marks"):
        assert child[col].sum() == q[col], col
    assert child["marks"][0] > 0  # the step and the coupled marking act on Prague
    fig = figures_module()
    qd = fig.queue_delays(d, by="description").row(0, named=True)
    # DualPI2's split: L near its 1 ms step, C near the 15 ms PI2 target.
    assert qd["L_p99_ms"] < 2.0 < 5.0 < qd["C_p50_ms"] < 25.0
    assert qd["L_p99_ms"] < qd["C_p50_ms"]
    rb = fig.rate_balance(d, "prague", "cubic", by="description").row(0, named=True)
    assert 0.25 < rb["ratio"] < 4.0 and 0.5 < rb["jain"] <= 1.0
    assert 80 < rb["a_mbps"] + rb["b_mbps"] < 100


def test_a_tiny_residential_run_has_ll_and_classic_rows_and_qp_counts(tmp_path):
    d = tmp_path / "residential"
    sweep(study.study_dir("l4s") / "residential.toml", zip={"description": ["ECT(1)"], "traffic[7].ecn": ["ect1"]}, seeds=1, out=d,
          set={"duration": "8s", "warmup": "2s"}, workers=1)
    fig = figures_module()
    qd = fig.queue_delays(d, by="description", queues=fig.LLD_QUEUES).row(0, named=True)
    # The LL service flow stays well below the Classic one.
    assert qd["L_p99_ms"] < qd["C_p50_ms"]
    qp = {r["app"]: r for r in fig.sanctions(d).iter_rows(named=True)}
    # The ECT(1) stream, the EF game and Prague are classified LL; the game is never
    # sanctioned (33 ms apart, it builds no queue).
    assert {"game", "prague-up", "flood"} <= set(qp)
    assert qp["flood"]["ll_packets"] == 6 * 10_000_000 // 8000
    assert qp["game"]["sanctioned_packets"] == 0
