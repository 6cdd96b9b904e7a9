"""Statistics for sweeps: Student-t quantiles and mean ± 95 % confidence intervals.

This module is the one place confidence intervals are computed: `summary_exprs` and
`with_ci` (polars) serve the aggregated sweep table, `mean_ci` (one list of values)
is the same code on a one-column frame.

The t quantile is computed here (no SciPy dependency): the Student-t CDF through the
regularized incomplete beta function (continued fraction, Lentz's method, as in
Numerical Recipes §6.4), inverted by bisection. It matches printed tables to every
digit they show (t(0.975, 2) = 4.303, t(0.975, 9) = 2.262, ...).
"""

from __future__ import annotations

import math
from functools import lru_cache


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t >= 0 else tail


@lru_cache(maxsize=4096)
def t_ppf(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if df <= 0:
        raise ValueError("df must be positive")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def summary_exprs(col: str) -> list:
    """Polars aggregations ``n``, ``mean``, ``std`` of ``col``: NaN, ±inf and nulls are
    left out (a run without a value for a metric does not count towards n)."""
    import polars as pl

    v = pl.when(pl.col(col).is_finite()).then(pl.col(col))
    return [v.count().alias("n"), v.mean().alias("mean"), v.std(ddof=1).alias("std")]


def with_ci(df, level: float = 0.95):
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


def mean_ci(values, level: float = 0.95) -> dict:
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
