"""compare-real's arithmetic without an emulator: ratios (0/0 shown as such), spreads
over seeds, the overlap test and the trust rule for emulated runs."""

from __future__ import annotations

import math

import polars as pl
from aqmlab.emulate.compare import METRICS, ratio, ratio_text, spread, table, trustworthy


def test_ratio_shows_zero_over_zero():
    assert ratio_text(0.0, 0.0) == "0/0"
    assert ratio_text(3.0, 0.0) == "3/0"
    assert ratio_text(3.0, 2.0) == "1.500"
    assert ratio_text(math.nan, 2.0) == "nan"
    assert math.isnan(ratio(0.0, 0.0))


def test_spread_is_mean_sample_sd_min_max():
    m, sd, lo, hi = spread([1.0, 2.0, 6.0])
    assert (m, lo, hi) == (3.0, 1.0, 6.0)
    assert math.isclose(sd, math.sqrt(((1 - 3) ** 2 + (2 - 3) ** 2 + (6 - 3) ** 2) / 2))
    assert math.isnan(spread([4.0])[1])
    assert all(math.isnan(x) for x in spread([math.nan]))


def _m(v: float) -> dict[str, float]:
    return {name: v for name, _ in METRICS}


def test_table_leaves_out_untrusted_runs_and_tests_overlap():
    t = table([_m(1.0), _m(2.0)], [_m(3.0), _m(100.0)], [True, False])
    r = t.filter(pl.col("metric") == "drop_pct").row(0, named=True)
    assert (r["simulated"], r["simulated_min"], r["simulated_max"]) == (1.5, 1.0, 2.0)
    assert (r["emulated"], r["emulated_min"], r["emulated_max"]) == (3.0, 3.0, 3.0)
    assert r["ranges_overlap"] is False
    assert r["ratio_text"] == "2.000"
    t = table([_m(1.0), _m(3.0)], [_m(2.0)], [True])
    assert t["ranges_overlap"].to_list() == [True] * len(METRICS)


class _Res:
    def __init__(self, p99: float, late: int, n: int):
        self.emulation = pl.DataFrame({"sched_err_us_p99": [p99], "datagrams": [n], "late_over_1ms": [late]})


def test_trust_rule():
    assert trustworthy(_Res(114.0, 10, 10_000))
    assert not trustworthy(_Res(1500.0, 0, 10_000))  # p99 above 1 ms
    assert not trustworthy(_Res(50.0, 11, 10_000))  # more than 0.1 % late by > 1 ms
    assert not trustworthy(_Res(math.nan, 0, 10))
