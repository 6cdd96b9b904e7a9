"""Studies: listing, errors, and the `make run` command (the bufferbloat-basics study in
quick mode) on a shortened setting."""

import json
import re
import subprocess

import matplotlib.image as mpimg
import numpy as np
import polars as pl

import aqmlab
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
    assert cmd[:5] == ["AQMLAB", "study", "run", "bufferbloat-basics", "--quick"]
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
    args = [a.replace("out/", f"{tmp_path}/") for a in args]
    p = cli(*args, "--set", "duration=20s", "--set", "warmup=5s", "--quiet")
    assert p.returncode == 0, p.stderr
    report = tmp_path / "report.html"
    assert report.exists()
    text = report.read_text()
    assert text.count("<svg") >= 8
    assert "bufferbloat" in text and "one-way delay" in text.lower()
    figs = sorted((tmp_path / "figures").glob("*.png"))
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
    p = cli(*args, "--set", "duration=20s", "--set", "warmup=5s", "--json", "--no-report")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["ran"] == 0 and doc["skipped"] == doc["total"]
