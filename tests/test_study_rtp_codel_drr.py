"""The rtp-codel-drr study in quick mode on a shortened setting: every figure is drawn,
and the two disciplines share a 1 Mbit/s bottleneck as they must (DRR: equal shares of
the unresponsive RTP flows; CoDel, a single FIFO: shares in proportion to the offered
0.8 : 1.2 Mbit/s)."""

import subprocess

import matplotlib.image as mpimg
import numpy as np
import polars as pl

import aqmlab
from aqmlab import study
from aqmlab.sweep import read_sweep_file
from conftest import AQMLAB, ROOT

RATE = "topology.links.2.rate"
KIND = "topology.links.2.qdisc.kind"
ACCESS = "topology.links.0.rate"


def test_sweep_covers_the_studys_grid():
    sf = read_sweep_file(study.study_dir("rtp-codel-drr") / "sweep.toml")
    assert sf.grid[RATE] == ["1Mbit", "2Mbit", "3Mbit", "4Mbit", "5Mbit", "7Mbit", "10Mbit"]
    assert sf.grid[KIND] == ["codel", "drr"] and sf.grid[ACCESS] == ["1Mbit", "5Mbit"]
    assert sf.seeds == 20 and sf.quick["seeds"] == 5
    aqmlab.validate(sf.base)


def test_quick_study_draws_every_figure_and_shares_the_bottleneck_as_expected(tmp_path):
    p = subprocess.run(
        [*AQMLAB, "study", "run", "rtp-codel-drr", "--quick", "--out", tmp_path / "sweep", "--report-out", tmp_path / "report.html",
         "--figures", tmp_path / "figures", "--set", "duration=4s", "--set", 'topology.links.2.rate=["1Mbit", "5Mbit"]', "--quiet"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    figs = {f.stem for f in (tmp_path / "figures").glob("*.png")}
    assert figs >= {"utilization", "delay", "drops", "throughput", "receiver-throughput", "sent", "received", "received-size", "rr-loss"}
    for f in (tmp_path / "figures").glob("*.png"):
        assert float(np.var(mpimg.imread(f)[..., :3])) > 1e-3, f
    assert "CoDel versus DRR" in (tmp_path / "report.html").read_text()
    agg = aqmlab.load(tmp_path / "sweep")
    gp = agg.filter((pl.col("table") == "apps") & (pl.col("metric") == "goodput_window_bps") & (pl.col(RATE) == "1Mbit") & (pl.col(ACCESS) == "5Mbit"))

    def share(kind, app):
        return gp.filter((pl.col(KIND) == kind) & (pl.col("entity") == app))["mean"][0]

    # DRR: 0.5 / 0.5 Mbit/s (each session offers more than half the link).
    assert abs(share("drr", "s1") - 0.5e6) < 0.03e6 and abs(share("drr", "s2") - 0.5e6) < 0.03e6
    # CoDel: one FIFO, drops in proportion to arrivals → ≈ 0.4 / 0.6 Mbit/s.
    assert abs(share("codel", "s1") / (share("codel", "s1") + share("codel", "s2")) - 0.4) < 0.04
