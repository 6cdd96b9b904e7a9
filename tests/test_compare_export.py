"""`aqmlab compare` (runs, sweeps, side by side with Welch's interval) and `aqmlab export`."""

import json
import math

import aqmlab
import polars as pl
import pytest
from aqmlab import compare
from conftest import EXAMPLES
from test_plots_report import cli

FAST = {"duration": "6s", "warmup": "1s"}


@pytest.fixture(scope="module")
def two_sweeps(tmp_path_factory):
    root = tmp_path_factory.mktemp("cmp")
    grid = {"bottleneck.rate": ["2Mbit", "5Mbit"]}
    for kind in ("pfifo", "codel"):
        res = aqmlab.sweep(EXAMPLES / "five-tcp.toml", grid=grid, seeds=3, out=root / kind, workers=2,
                           set={**FAST, "bottleneck": {"rate": "2Mbit", "delay": "10ms", "qdisc": {"kind": kind, "limit": "200pkt"}}})
        assert res.ok == 6
    return root / "pfifo", root / "codel"


def test_welch_interval_by_hand():
    # means 10 and 14, s = 2 and 3, n = 4 each: v = 1 + 2.25 = 3.25; df = 3.25² / (1/3 + 2.25²/3) = 5.2479...
    lo, hi = compare.welch(10.0, 2.0, 4, 14.0, 3.0, 4)
    df = 3.25**2 / (1.0 / 3 + 2.25**2 / 3)
    from scipy.stats import t

    half = t.ppf(0.975, df) * math.sqrt(3.25)
    assert (lo, hi) == pytest.approx((4.0 - half, 4.0 + half))
    assert compare.welch(10.0, 2.0, 2, 14.0, 3.0, 4) is None  # n < 3: no interval


def test_compare_two_sweeps_matches_points_and_flags_a_real_change(two_sweeps):
    a, b = two_sweeps
    df = compare.table([a, b], metrics=["sojourn_ms_mean"], tables=["queues"])
    link = df.filter(pl.col("entity") == "L->R")
    assert link.height == 2  # both rates matched by point
    for r in link.iter_rows(named=True):
        assert r["n_pfifo"] == 3 and r["n_codel"] == 3
        assert r["diff_codel"] == pytest.approx(r["mean_codel"] - r["mean_pfifo"])
        # CoDel's 5 ms target against a 200-packet FIFO full of five uploads
        assert r["mean_codel"] < r["mean_pfifo"] and r["changed_codel"] is True
        assert r["diff_high_codel"] < 0


def test_compare_two_runs_and_the_cli(two_sweeps, tmp_path):
    runs = []
    for kind in ("pfifo", "codel"):
        out = tmp_path / kind
        res = aqmlab.run(EXAMPLES / "five-tcp.toml", set={**FAST, "bottleneck": {"rate": "2Mbit", "delay": "10ms", "qdisc": {"kind": kind, "limit": "200pkt"}}})
        res.write_parquet(out)
        runs.append(out)
    df = compare.table(runs, metrics=["sojourn_ms_mean"])
    row = df.filter(pl.col("entity") == "L->R").row(0, named=True)
    assert row["n_pfifo"] == 1 and row["changed_codel"] is None  # one run each: no interval
    p = cli("compare", *runs, "--metric", "sojourn_ms_mean", "--out", tmp_path / "cmp")
    assert p.returncode == 0, p.stderr
    assert "pfifo vs codel" in p.stdout and (tmp_path / "cmp" / "compare.csv").exists()
    assert (tmp_path / "cmp" / "compare-sojourn_ms_mean.png").exists()
    p = cli("compare", *two_sweeps, "--metric", "sojourn_ms_mean", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)
    p = cli("compare", runs[0], "--metric", "sojourn_ms_mean")
    assert p.returncode == 2 and "at least two" in p.stderr
    p = cli("compare", *runs, "--metric", "no_such")
    assert p.returncode == 2 and "--metric no_such" in p.stderr and "Traceback" not in p.stderr


def test_export_every_format(two_sweeps, tmp_path):
    a, _ = two_sweeps
    for fmt in ("csv", "parquet", "json"):
        p = cli("export", a, "--out", tmp_path / fmt, "--format", fmt)
        assert p.returncode == 0, p.stderr
        agg = tmp_path / fmt / f"aggregated.{fmt}"
        assert agg.exists() and (tmp_path / fmt / f"runs-queues.{fmt}").exists()
    back = pl.read_csv(tmp_path / "csv" / "aggregated.csv")
    assert {"metric", "mean", "ci_low", "ci_high", "ci_method"} <= set(back.columns)
    assert json.loads((tmp_path / "json" / "aggregated.json").read_text())[0]["metric"]
    p = cli("export", a, "--out", tmp_path / "x", "--format", "xlsx")
    assert p.returncode == 2 and "csv, parquet, json" in p.stderr
