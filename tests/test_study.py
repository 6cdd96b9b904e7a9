"""Studies: listing, errors, experiments, `run-all` and its index, and the `make run`
command (every study in quick mode; here the bufferbloat-basics study on a shortened
setting)."""

import json
import os
import re
import subprocess

import aqmlab
import matplotlib.image as mpimg
import numpy as np
import polars as pl
from aqmlab import study
from aqmlab.sweep import read_sweep_file
from conftest import AQMLAB, ROOT


def cli(*args):
    return subprocess.run([*AQMLAB, *map(str, args)], capture_output=True, text=True, timeout=600, cwd=ROOT)


def make_run_command():
    """The `run:` target's command, read from the Makefile so the test follows it."""
    text = (ROOT / "Makefile").read_text()
    m = re.search(r"^run: install\n\t(.+)$", text, re.M)
    assert m, "the Makefile has a run target with one command"
    cmd = m.group(1).replace("$(VENV)/bin/aqmlab", "AQMLAB").split()
    assert cmd[:4] == ["AQMLAB", "study", "run-all", "--quick"]
    return cmd[1:]


def test_study_list_names_the_builtin_study():
    p = cli("study", "list", "--json")
    assert p.returncode == 0, p.stderr
    names = {s["name"]: s for s in json.loads(p.stdout)}
    assert "bufferbloat-basics" in names and names["bufferbloat-basics"]["title"]
    d = study.study_dir("bufferbloat-basics")
    for f in ("scenario.toml", "sweep.toml", "figures.py", "README.md"):
        assert (d / f).exists(), f
    p = cli("study", "run", "no-such-study")
    assert p.returncode == 2 and "no such study" in p.stderr and "bufferbloat-basics" in p.stderr


def test_study_sweep_has_the_promised_points_and_seeds():
    sf = read_sweep_file(study.study_dir("bufferbloat-basics") / "sweep.toml")
    kinds = sf.grid["topology.bottleneck.qdisc.kind"]
    assert {"pfifo", "ared", "pie", "codel", "fq_codel"} <= set(kinds)
    assert sf.grid["topology.bottleneck.qdisc.limit"] == ["100pkt", "200pkt", "400pkt"]
    assert sf.seeds == 20 and sf.quick["seeds"] == 5
    aqmlab.validate(sf.base)


def test_make_run_writes_the_report_and_the_figures(tmp_path):
    args = make_run_command()
    # the same command into a temporary folder, with 20 s runs instead of 300 s
    args = [str(tmp_path) if a == "out" else a for a in args]
    assert str(tmp_path) in args
    p = cli(*args, "--study", "bufferbloat-basics", "--set", "duration=20s", "--set", "warmup=5s", "--quiet")
    assert p.returncode == 0, p.stderr
    index = (tmp_path / "index.html").read_text()
    assert 'href="bufferbloat-basics/report.html"' in index
    report = tmp_path / "bufferbloat-basics" / "report.html"
    assert report.exists()
    text = report.read_text()
    assert text.count("<svg") >= 8
    assert "bufferbloat" in text and "one-way delay" in text.lower()
    figs = sorted((tmp_path / "bufferbloat-basics" / "figures").glob("*.png"))
    assert {f.stem for f in figs} >= {"probe-owd", "sojourn", "sojourn-cdf-400pkt", "drop-rate", "utilization"}
    for f in figs:
        assert f.with_suffix(".svg").exists() and f.with_suffix(".pdf").exists()
        img = mpimg.imread(f)
        assert float(np.var(img[..., :3])) > 1e-3, f
    # every run is there; the probe's delay under DropTail grows with the buffer
    agg = aqmlab.load(tmp_path / "bufferbloat-basics")
    owd = agg.filter((pl.col("metric") == "owd_ms_mean") & (pl.col("table") == "apps") & (pl.col("entity") == "probe"))
    assert set(owd["n"]) == {5}
    fifo = owd.filter(pl.col("topology.bottleneck.qdisc.kind") == "pfifo").sort("topology.bottleneck.qdisc.limit")
    assert fifo.height == 3
    assert fifo["mean"][0] < fifo["mean"][1] < fifo["mean"][2]
    # the rerun reuses every run
    p = cli("study", "run", "bufferbloat-basics", "--quick", "--out", tmp_path / "bufferbloat-basics",
            "--set", "duration=20s", "--set", "warmup=5s", "--json", "--no-report")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["ran"] == 0 and doc["skipped"] == doc["total"]


TINY = """
name = "tiny"
duration = "2s"
[topology]
kind = "graph"
nodes = [{ name = "a" }, { name = "b" }]
links = [{ from = "a", to = "b", rate = "10Mbit", delay = "1ms", qdisc = { kind = "pfifo", limit = "100pkt" } }]
[[traffic]]
kind = "udp-cbr"
name = "cbr"
src = "a"
dst = "b"
rate = "1Mbit"
"""

FIGS = """
from aqmlab.report import Figure
import matplotlib.pyplot as plt

def figures(dirs):
    fig, ax = plt.subplots()
    ax.bar(list(dirs), [1] * len(dirs))
    return [Figure("experiments", "Experiments run: " + ", ".join(sorted(dirs)), fig, "")]
"""


def make_study(root, name, experiments, scenario=TINY):
    d = root / name
    (d / "experiments").mkdir(parents=True)
    (d / "scenario.toml").write_text(scenario)
    (d / "README.md").write_text(f"# {name}: does it work?\n")
    (d / "figures.py").write_text(FIGS)
    for e in experiments:
        (d / "experiments" / f"{e}.toml").write_text(
            f'name = "{name}-{e}"\nbase = "../scenario.toml"\nseeds = 2\n[grid]\n"traffic[0].rate" = ["1Mbit", "2Mbit"]\n[quick]\nseeds = 1\n')
    return d


def test_a_study_with_experiments_runs_each_into_its_folder_and_links_them(tmp_path, monkeypatch):
    root = tmp_path / "studies"
    make_study(root, "two-exp", ["E1", "E2"])
    env_cli = lambda *a: subprocess.run([*AQMLAB, *map(str, a)], capture_output=True, text=True, timeout=600, cwd=ROOT,
                                       env={**os.environ, "AQMLAB_STUDIES": str(root)})
    p = env_cli("study", "list", "--json")
    s = {x["name"]: x for x in json.loads(p.stdout)}["two-exp"]
    assert s["experiments"] == ["E1", "E2"]
    out = tmp_path / "o"
    p = env_cli("study", "run", "two-exp", "-e", "E2", "--quick", "--out", out, "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert list(doc) == ["E2"] and doc["E2"]["total"] == 2  # 2 points × 1 quick seed
    assert (out / "E2" / "sweep.json").exists() and not (out / "E1").exists()
    page = (out / "report.html").read_text()
    assert 'href="E2/report.html"' in page and "E1/report.html" not in page
    assert "Experiments run: E2" in page and "does it work?" in page
    assert (out / "E2" / "report.html").exists() and (out / "figures" / "experiments.png").exists()
    p = env_cli("study", "run", "two-exp", "-e", "E9")
    assert p.returncode == 2 and "E9" in p.stderr and "E1, E2" in p.stderr


def test_run_all_keeps_going_past_a_broken_study_and_says_so_in_the_index(tmp_path):
    root = tmp_path / "studies"
    make_study(root, "good", ["E1"])
    make_study(root, "broken", ["E1"], scenario=TINY.replace('kind = "udp-cbr"', 'kind = "udp-nonsense"'))
    out = tmp_path / "o"
    p = subprocess.run([*AQMLAB, "study", "run-all", "--quick", "--out", str(out), "--study", "good", "--study", "broken", "--json"],
                       capture_output=True, text=True, timeout=600, cwd=ROOT, env={**os.environ, "AQMLAB_STUDIES": str(root)})
    assert p.returncode == 1, p.stderr
    recs = {r["name"]: r for r in json.loads(p.stdout)}
    assert "error" not in recs["good"] and recs["good"]["runs"] == 2
    assert recs["good"]["sim_s"] == 4.0 and recs["good"]["events"] > 0  # 2 runs of 2 s
    # the runs' CPU time, summed from their run.json (the cost on one worker, load aside)
    cpus = [json.loads(f.read_text())["cpu_s"] for f in (out / "good").glob("*/runs/*/run.json")]
    assert len(cpus) == 2 and all(c > 0 for c in cpus) and recs["good"]["cpu_s"] == sum(cpus)
    assert recs["broken"].get("cpu_s") is None
    assert "udp-nonsense" in recs["broken"]["error"]
    index = (out / "index.html").read_text()
    assert 'href="good/report.html"' in index and "udp-nonsense" in index
    assert "simulated time (h)" in index and "run CPU (s)" in index
    assert (out / "good" / "E1" / "sweep.json").exists()


def test_a_study_runs_on_a_dask_cluster_with_the_same_tables_as_on_the_local_pool(tmp_path):
    root = tmp_path / "studies"
    make_study(root, "dual", ["E1"])
    env = {**os.environ, "AQMLAB_STUDIES": str(root)}
    outs = {}
    for executor in ("local", "dask"):
        outs[executor] = tmp_path / executor
        p = subprocess.run([*AQMLAB, "study", "run", "dual", "--quick", "--out", str(outs[executor]), "--executor", executor,
                            "--workers", "2"], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
        assert p.returncode == 0, p.stderr
    for executor in ("local", "dask"):
        metas = [json.loads(f.read_text()) for f in (outs[executor] / "E1" / "runs").glob("*/run.json")]
        assert len(metas) == 2 and {m["executor"] for m in metas} == {executor}
    runs = sorted(p.name for p in (outs["local"] / "E1" / "runs").iterdir())
    assert runs == sorted(p.name for p in (outs["dask"] / "E1" / "runs").iterdir()) and len(runs) == 2
    for r in runs:
        for table in ("flows", "queues"):
            a = pl.read_parquet(outs["local"] / "E1" / "runs" / r / f"{table}.parquet")
            b = pl.read_parquet(outs["dask"] / "E1" / "runs" / r / f"{table}.parquet")
            assert a.equals(b), (r, table)


PREPARE = """
from pathlib import Path

def prepare(cache):
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    n = cache / "calls"
    n.write_text(str(int(n.read_text()) + 1 if n.exists() else 1))
    return {"duration": "3s", "traffic[0].rate": "3Mbit"}
"""


def test_a_studys_prepare_hook_gets_its_cache_folder_and_sets_every_experiment(tmp_path, monkeypatch):
    """prepare.py runs once per study run with cache_dir()/NAME; its overrides reach
    every experiment's runs, and the user's --set wins over them."""
    root = tmp_path / "studies"
    d = make_study(root, "prep", ["E1", "E2"])
    (d / "prepare.py").write_text(PREPARE)
    monkeypatch.setenv("AQMLAB_STUDIES", str(root))
    monkeypatch.setenv("AQMLAB_CACHE", str(tmp_path / "cache"))
    assert study.cache_dir() == tmp_path / "cache"
    out = study.run("prep", quick=True, out=tmp_path / "o", only=["E1"], set=["duration=4s"])
    assert (tmp_path / "cache" / "prep" / "calls").read_text() == "1"
    out.update(study.run("prep", quick=True, out=tmp_path / "o", only=["E2"]))
    assert (tmp_path / "cache" / "prep" / "calls").read_text() == "2"
    for e, duration in (("E1", "4s"), ("E2", "3s")):
        assert out[e].total == 2
        docs = [json.loads((r / "scenario.json").read_text()) for r in (tmp_path / "o" / e / "runs").iterdir()]
        assert {doc["duration"] for doc in docs} == {duration}, e
        # the grid's per-point value wins over prepare's
        assert sorted(doc["traffic"][0]["rate"] for doc in docs) == ["1Mbit", "2Mbit"]
    assert study.prepare("prep") == {"duration": "3s", "traffic[0].rate": "3Mbit"}


def test_a_user_study_hides_the_built_in_study_of_the_same_name(tmp_path, monkeypatch):
    root = tmp_path / "studies"
    make_study(root, "bufferbloat-basics", ["E1"])
    monkeypatch.setenv("AQMLAB_STUDIES", str(root))
    found = [s for s in study.list_studies() if s["name"] == "bufferbloat-basics"]
    assert len(found) == 1 and found[0]["path"] == str(root / "bufferbloat-basics")
    assert study.study_dir("bufferbloat-basics") == root / "bufferbloat-basics"
