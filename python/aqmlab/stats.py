"""Statistics for sweeps: mean ± 95 % confidence intervals that stay in range.

This module is the one place confidence intervals are computed: `summary_exprs` and
`with_ci` (polars) serve the aggregated sweep table, `mean_ci` (one list of values)
is the same code on a one-column frame, and `bound_intervals` makes the aggregated
table's intervals honest:

* **n < 3: no interval.** With two seeds the Student-t factor is t(0.975, 1) = 12.7;
  the interval says little and routinely leaves the metric's range. The table keeps
  n, mean and std and leaves ``ci_*`` empty (``ci_method = "none"``); figures and
  reports say "n = 2, no interval".
* **n ≥ 3: Student t** (``ci_method = "t"``), mean ± t((1 + level)/2, n − 1)·s/√n,
  the t quantile from SciPy.
* **When the t interval leaves the metric's range** (`metric_range`: MOS in [1, 4.5],
  ratios and utilisations in [0, 1], delays, rates, bytes and counts ≥ 0), the
  interval is the **percentile bootstrap** of the mean instead (Efron & Tibshirani,
  *An Introduction to the Bootstrap*, 1993, §13.3; ``ci_method = "bootstrap"``). Every
  resampled mean lies between the smallest and largest observation, so the interval
  cannot leave the range, and nothing is clipped. The interval is asymmetric, so its
  ``ci_half`` is empty and reports show its ends. For n ≤ `EXACT_BOOTSTRAP_N` the
  bootstrap distribution is enumerated exactly (every multiset of the n values with its
  multinomial probability), so the result has no Monte-Carlo noise; above it, 20 000
  resamples from a fixed seed (deterministic).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl


@lru_cache(maxsize=4096)
def t_ppf(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (SciPy)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if df <= 0:
        raise ValueError("df must be positive")
    from scipy.stats import t as student_t  # SciPy costs ~0.3 s to import: only when used

    return float(student_t.ppf(p, df))


def summary_exprs(col: str) -> list[Any]:
    """Polars aggregations ``n``, ``mean``, ``std`` of ``col``: NaN, ±inf and nulls are
    left out (a run without a value for a metric does not count towards n)."""
    import polars as pl

    v = pl.when(pl.col(col).is_finite()).then(pl.col(col))
    return [v.count().alias("n"), v.mean().alias("mean"), v.std(ddof=1).alias("std")]


def with_ci(df: pl.DataFrame, level: float = 0.95) -> pl.DataFrame:
    """Add ``ci_half``, ``ci_low``, ``ci_high`` to a frame with ``n``, ``mean``, ``std``:
    mean ± t((1 + level)/2, n − 1) · std / √n, null when n < 2."""
    import polars as pl

    ns = sorted({int(n) for n in df["n"].unique().to_list() if n is not None and n >= 2})
    t = {n: t_ppf(0.5 + level / 2.0, n - 1) for n in ns}
    tq = pl.col("n").replace_strict(t, default=None, return_dtype=pl.Float64)
    half = tq * pl.col("std") / pl.col("n").cast(pl.Float64).sqrt()
    return df.with_columns(half.alias("ci_half")).with_columns(
        (pl.col("mean") - pl.col("ci_half")).alias("ci_low"),
        (pl.col("mean") + pl.col("ci_half")).alias("ci_high"),
    )


def mean_ci(values: Iterable[Any], level: float = 0.95) -> dict[str, Any]:
    """``{"n", "mean", "std", "ci_low", "ci_high", "ci_half"}`` of the finite values.

    ``std`` is the sample standard deviation (n − 1); the interval is
    mean ± t((1 + level)/2, n − 1) · std / √n. With n < 2 std and the interval are None.
    """
    import polars as pl

    xs = pl.DataFrame({"v": pl.Series("v", [None if v is None else float(v) for v in values], pl.Float64)})
    row = with_ci(xs.select(summary_exprs("v")), level).row(0, named=True)
    if row["n"] < 2:
        row.update(std=None, ci_half=None, ci_low=None, ci_high=None)
    return {k: row[k] for k in ("n", "mean", "std", "ci_low", "ci_high", "ci_half")}


#: Smallest n that gets an interval.
MIN_N_FOR_CI = 3
#: Largest n whose bootstrap distribution is enumerated exactly (C(2n−1, n) multisets).
EXACT_BOOTSTRAP_N = 9
#: Resamples above EXACT_BOOTSTRAP_N.
BOOTSTRAP_RESAMPLES = 20_000

_INF = math.inf
#: Columns (exact names or prefixes) whose values lie in [0, 1].
_FRACTION_NAMES = ("utilization", "drop_prob", "jain")
#: Count-like columns (no unit suffix) that cannot be negative.
_COUNT_PREFIXES = (
    "drops", "marks", "packets", "frames", "pages", "retransmits", "timeouts", "transfers", "grants", "maps",
    "requests", "calls", "datagrams", "fragment", "events", "arrivals", "enqueued", "dequeued", "delivered",
    "outage", "late_over", "rtcp_packets", "connections", "objects", "rr_received", "flows", "sent", "received",
)


def metric_range(metric: str) -> tuple[float, float]:
    """The values a result column can take (docs/output.md), ``(-inf, inf)`` when not known.

    MOS (ITU-T G.107 Annex B, floored at 1) is in [1, 4.5], video MOS in [1, 5]; rates
    named ``*_rate`` (not ``*_rate_bps``), probabilities, fractions, utilisation and
    Jain's index in [0, 1]; bit rates, delays, times, sizes, PSNR and counts ≥ 0."""
    m = metric.lower()
    if m == "video_mos":
        return (1.0, 5.0)
    if m == "mos" or m.startswith("mos_"):
        return (1.0, 4.5)
    if m.endswith(("_bps", "_bps_mean", "_bps_std")) or "_bps_" in m:
        return (0.0, _INF)
    if (m.endswith("_rate") or "_rate_" in m or m.endswith("_prob") or "fraction" in m
            or m.startswith(_FRACTION_NAMES)):
        return (0.0, 1.0)
    if re.search(r"(^|_)(ms|s|us|bytes|pkts|db)(_|$)", m) or m.startswith(_COUNT_PREFIXES):
        return (0.0, _INF)
    return (-_INF, _INF)


def _exact_bootstrap_quantiles(xs: list[float], probs: tuple[float, float]) -> tuple[float, float]:
    """Quantiles of the mean of n draws with replacement from ``xs``, enumerated exactly:
    each multiset (counts k_1..k_n summing to n) has probability n!/(∏k_i!)·n^−n."""
    n = len(xs)
    lf = [math.lgamma(k + 1) for k in range(n + 1)]
    base = lf[n] - n * math.log(n)
    dist: dict[float, float] = {}

    def walk(i: int, left: int, total: float, logw: float) -> None:
        if i == n - 1:
            mean = (total + left * xs[i]) / n
            dist[mean] = dist.get(mean, 0.0) + math.exp(base + logw - lf[left])
            return
        for k in range(left + 1):
            walk(i + 1, left - k, total + k * xs[i], logw - lf[k])

    walk(0, n, 0.0, 0.0)
    out = []
    for p in probs:
        acc = 0.0
        for v in sorted(dist):
            acc += dist[v]
            if acc >= p - 1e-12:
                out.append(v)
                break
        else:  # rounding left the sum a hair under 1
            out.append(max(dist))
    return out[0], out[1]


def bootstrap_mean_ci(values: Iterable[Any], level: float = 0.95) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean of ``values`` (finite, n ≥ 2)."""
    xs = sorted(float(v) for v in values)
    probs = (0.5 - level / 2.0, 0.5 + level / 2.0)
    if len(xs) <= EXACT_BOOTSTRAP_N:
        return _exact_bootstrap_quantiles(xs, probs)
    import numpy as np

    rng = np.random.default_rng(20_231_107)
    a = np.asarray(xs)
    means = a[rng.integers(0, a.size, size=(BOOTSTRAP_RESAMPLES, a.size))].mean(axis=1)
    lo, hi = np.quantile(means, probs, method="inverted_cdf")
    return float(lo), float(hi)


def bound_intervals(agg: pl.DataFrame, values: pl.DataFrame, keys: list[str], level: float = 0.95) -> pl.DataFrame:
    """Make the intervals of an aggregated frame honest (see the module docs): ``agg``
    has ``keys`` + ``metric``, ``n``, ``mean``, ``ci_*``; ``values`` has ``keys`` +
    ``metric`` + ``value`` (one row per run). Adds ``ci_method``."""
    import polars as pl

    lo_hi = [metric_range(m) for m in agg["metric"].to_list()]
    agg = agg.with_columns(
        pl.Series("_lo", [a for a, _ in lo_hi], pl.Float64),
        pl.Series("_hi", [b for _, b in lo_hi], pl.Float64),
    )
    few = pl.col("n") < MIN_N_FOR_CI
    outside = (~few) & ((pl.col("ci_low") < pl.col("_lo")) | (pl.col("ci_high") > pl.col("_hi")))
    agg = agg.with_columns(
        pl.when(few).then(pl.lit("none")).when(outside).then(pl.lit("bootstrap")).otherwise(pl.lit("t")).alias("ci_method")
    )
    agg = agg.with_columns([pl.when(few).then(None).otherwise(pl.col(c)).alias(c) for c in ("ci_low", "ci_high", "ci_half")])
    redo = agg.filter(pl.col("ci_method") == "bootstrap").select([*keys, "metric"])
    if redo.height:
        vals = (
            values.join(redo, on=[*keys, "metric"], how="semi", nulls_equal=True)
            .filter(pl.col("value").is_finite())
            .group_by([*keys, "metric"], maintain_order=True)
            .agg(pl.col("value"))
        )
        rows = []
        for r in vals.iter_rows(named=True):
            lo, hi = bootstrap_mean_ci(r["value"], level)
            rows.append({**{k: r[k] for k in keys}, "metric": r["metric"], "_blo": lo, "_bhi": hi})
        boot = pl.DataFrame(rows, schema={**{k: agg.schema[k] for k in keys}, "metric": pl.Utf8, "_blo": pl.Float64, "_bhi": pl.Float64})
        agg = agg.join(boot, on=[*keys, "metric"], how="left", nulls_equal=True)
        agg = agg.with_columns(
            pl.coalesce("_blo", "ci_low").alias("ci_low"),
            pl.coalesce("_bhi", "ci_high").alias("ci_high"),
        ).with_columns(
            # asymmetric: "mean ± half" would misstate it, so only the ends are given
            pl.when(pl.col("ci_method") == "bootstrap").then(None).otherwise(pl.col("ci_half")).alias("ci_half")
        ).drop("_blo", "_bhi")
    return agg.drop("_lo", "_hi")
