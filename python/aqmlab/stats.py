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


@lru_cache(maxsize=EXACT_BOOTSTRAP_N + 1)
def _multisets(n: int) -> tuple[Any, Any]:
    """Every way to draw n of n values with replacement, as counts ``(k_1..k_n)`` summing
    to n (an int array, one row per multiset, in lexicographic order of the counts), and
    each multiset's probability n!/(∏k_i!)·n^−n (float array). The probabilities do not
    depend on the values: computed once per n, term by term in the order below."""
    import numpy as np

    lf = [math.lgamma(k + 1) for k in range(n + 1)]
    base = lf[n] - n * math.log(n)
    counts: list[tuple[int, ...]] = []
    weights: list[float] = []

    def walk(i: int, left: int, ks: tuple[int, ...], logw: float) -> None:
        if i == n - 1:
            counts.append((*ks, left))
            weights.append(math.exp(base + logw - lf[left]))
            return
        for k in range(left + 1):
            walk(i + 1, left - k, (*ks, k), logw - lf[k])

    walk(0, n, (), 0.0)
    return np.array(counts, dtype=np.float64), np.array(weights, dtype=np.float64)


#: Cells of one block of `_exact_bootstrap_quantiles` (rows × multisets): bounds memory.
_BLOCK_CELLS = 1 << 20


def _exact_bootstrap_quantiles(rows: list[list[float]], probs: tuple[float, float]) -> list[tuple[float, float]]:
    """For each row (n sorted values, every row the same n): the ``probs`` quantiles of
    the mean of n draws with replacement, enumerated exactly. A multiset's mean is
    ((k_1·x_1 + k_2·x_2) + ...)/n summed left to right; multisets with equal means are
    one value whose probability is their sum in multiset order; a quantile is the
    smallest value whose cumulative probability (values ascending) reaches p − 1e-12,
    else the largest value. Whole blocks of rows at once (numpy)."""
    import numpy as np

    n = len(rows[0])
    counts, weights = _multisets(n)
    step = max(1, _BLOCK_CELLS // len(weights))
    out: list[tuple[float, float]] = []
    for at in range(0, len(rows), step):
        xs = np.array(rows[at:at + step], dtype=np.float64)
        total = np.zeros((len(xs), len(weights)))
        for i in range(n - 1):
            total = total + counts[:, i] * xs[:, i:i + 1]
        means = (total + counts[:, n - 1] * xs[:, n - 1:n]) / n
        lo, hi = _quantiles_of(means, weights, probs)
        out += zip(lo.tolist(), hi.tolist(), strict=True)
    return out


def _quantiles_of(means: Any, weights: Any, probs: tuple[float, float]) -> tuple[Any, Any]:
    """Per row of ``means`` (one column per multiset, probability ``weights``): the two
    quantiles of `_exact_bootstrap_quantiles`, each value's probability summed in
    multiset order and the cumulative sum taken over values in ascending order."""
    import numpy as np

    rows, cols = means.shape
    order = np.argsort(means, axis=1, kind="stable")  # equal means keep multiset order
    m = np.take_along_axis(means, order, axis=1)
    w = weights[order]
    found = [np.full(rows, np.nan), np.full(rows, np.nan)]
    limits = [p - 1e-12 for p in probs]
    acc = np.zeros(rows)
    value = m[:, 0].copy()  # the value being summed: its first multiset's mean
    mass = w[:, 0].copy()
    for j in range(1, cols + 1):
        last = j == cols
        closes = np.ones(rows, dtype=bool) if last else m[:, j] != m[:, j - 1]
        summed = np.where(closes, acc + mass, acc)
        for q, limit in enumerate(limits):
            hit = closes & np.isnan(found[q]) & (summed >= limit)
            found[q][hit] = value[hit]
        acc = summed
        if not last:
            mass = np.where(closes, w[:, j], mass + w[:, j])
            value = np.where(closes, m[:, j], value)
    largest = value  # the last value, as first seen (only -0.0 and 0.0 can differ)
    return (np.where(np.isnan(found[0]), largest, found[0]), np.where(np.isnan(found[1]), largest, found[1]))


def bootstrap_mean_cis(samples: list[list[float]], level: float = 0.95) -> list[tuple[float, float]]:
    """`bootstrap_mean_ci` of many samples (each finite, n ≥ 2) at once: the exact ones
    grouped by n and enumerated together."""
    probs = (0.5 - level / 2.0, 0.5 + level / 2.0)
    rows = [sorted(float(v) for v in values) for values in samples]
    out: list[tuple[float, float]] = [(math.nan, math.nan)] * len(rows)
    by_n: dict[int, list[int]] = {}
    for i, xs in enumerate(rows):
        if len(xs) <= EXACT_BOOTSTRAP_N:
            by_n.setdefault(len(xs), []).append(i)
        else:
            out[i] = _resampled_quantiles(xs, probs)
    for idx in by_n.values():
        for i, q in zip(idx, _exact_bootstrap_quantiles([rows[i] for i in idx], probs), strict=True):
            out[i] = q
    return out


def bootstrap_mean_ci(values: Iterable[Any], level: float = 0.95) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean of ``values`` (finite, n ≥ 2)."""
    return bootstrap_mean_cis([list(values)], level)[0]


def _resampled_quantiles(xs: list[float], probs: tuple[float, float]) -> tuple[float, float]:
    """The ``probs`` quantiles of `BOOTSTRAP_RESAMPLES` resampled means of ``xs``
    (sorted; fixed seed)."""
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

    ranges = {m: metric_range(m) for m in agg["metric"].unique().to_list()}  # a few names, millions of rows
    agg = agg.with_columns(
        pl.col("metric").replace_strict({m: lo for m, (lo, _) in ranges.items()}, return_dtype=pl.Float64).alias("_lo"),
        pl.col("metric").replace_strict({m: hi for m, (_, hi) in ranges.items()}, return_dtype=pl.Float64).alias("_hi"),
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
        cis = bootstrap_mean_cis(vals["value"].to_list(), level)
        boot = vals.select(*[pl.col(k).cast(agg.schema[k]) for k in keys], pl.col("metric").cast(pl.Utf8)).with_columns(
            pl.Series("_blo", [lo for lo, _ in cis], pl.Float64), pl.Series("_bhi", [hi for _, hi in cis], pl.Float64))
        agg = agg.join(boot, on=[*keys, "metric"], how="left", nulls_equal=True)
        agg = agg.with_columns(
            pl.coalesce("_blo", "ci_low").alias("ci_low"),
            pl.coalesce("_bhi", "ci_high").alias("ci_high"),
        ).with_columns(
            # asymmetric: "mean ± half" would misstate it, so only the ends are given
            pl.when(pl.col("ci_method") == "bootstrap").then(None).otherwise(pl.col("ci_half")).alias("ci_half")
        ).drop("_blo", "_bhi")
    return agg.drop("_lo", "_hi")
