"""The rtp-codel-drr study in quick mode on two bottleneck rates: every figure is drawn,
and the two disciplines share a 1 Mbit/s bottleneck as they must (DRR: equal shares of
the unresponsive RTP flows; CoDel, a single FIFO: shares in proportion to the offered
2015 : 2890 packets of the same mean size)."""

import subprocess

import matplotlib.image as mpimg
import numpy as np
import polars as pl

import aqmlab
from aqmlab import study
from aqmlab.sweep import read_sweep_file
from conftest import AQMLAB, ROOT

RATE = "topology.links.2.rate"
QDISC = "topology.links.2.qdisc"
ACCESS = "topology.links.0.rate"


def test_sweep_covers_the_studys_grid():
    sf = read_sweep_file(study.study_dir("rtp-codel-drr") / "sweep.toml")
    assert sf.grid[RATE] == ["1Mbit", "2Mbit", "3Mbit", "4Mbit", "5Mbit", "7Mbit", "10Mbit"]
    assert [q["kind"] for q in sf.grid[QDISC]] == ["codel", "drr"] and sf.grid[ACCESS] == ["1Mbit", "5Mbit"]
    assert sf.seeds == 20 and sf.quick["seeds"] == 5
    aqmlab.validate(sf.base)


def test_quick_study_draws_every_figure_and_shares_the_bottleneck_as_expected(tmp_path):
    p = subprocess.run(
        [*AQMLAB, "study", "run", "rtp-codel-drr", "--quick", "--out", tmp_path / "sweep", "--report-out", tmp_path / "report.html",
         "--figures", tmp_path / "figures", "--set", 'topology.links.2.rate=["1Mbit", "5Mbit"]', "--quiet"],
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
        return gp.filter((pl.col(QDISC).cast(pl.Utf8).str.contains(f"kind={kind},") & (pl.col("entity") == app)))["mean"][0]

    def s1_fraction(kind):
        return share(kind, "s1") / (share(kind, "s1") + share(kind, "s2"))

    # The split of the link between the two sessions is what the disciplines decide.
    # DRR: equal halves (each session offers more than half the link).
    assert abs(s1_fraction("drr") - 0.5) < 0.015
    # CoDel: one FIFO, drops in proportion to arrivals → 2015 / 4905 = 0.41.
    assert abs(s1_fraction("codel") - 0.41) < 0.04
