"""Side by side: two or more runs, sweeps or study folders, for "did my change help?".

`results(paths)` reads each source into the aggregated tidy table (`aqmlab.aggregate`):
a run folder is one point with n = 1, a sweep folder its points, a folder of sweeps (a
study's output) every sweep inside, its points named ``EXPERIMENT: point``. Rows are
matched on (point, table, entity, app, metric); the first source is the baseline.

`table(paths)` gives one row per matched metric with each source's ``n``, mean and 95 %
interval (as in the aggregated table: none when n < 3, Student t, or the percentile
bootstrap where t leaves the metric's range) and, for every further source, the
difference to the baseline:

* ``diff_S`` = mean_S − mean_base, ``diff_pct_S`` = 100 · diff / |mean_base|;
* ``diff_low_S``/``diff_high_S``: Welch's 95 % interval of the difference of two means
  (B. L. Welch, "The generalization of 'Student's' problem when several different
  population variances are involved", *Biometrika* 34, 1947), when both sides have
  n ≥ 3; ``changed_S`` is true when that interval excludes 0. With fewer seeds there is
  no interval and ``changed_S`` is empty: the difference alone says nothing about noise.

`figure(paths, metric)` overlays the sources: per point a bar per source with its
interval.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from .aggregate import aggregate, is_run, is_sweep, load, load_runs
from .results import CORE_TABLES
from .stats import MIN_N_FOR_CI, t_ppf

if TYPE_CHECKING:
    from matplotlib.figure import Figure

KEY = ["point", "table", "entity", "app", "metric"]


def _run_table(path: Path) -> pl.DataFrame:
    """A single run as an aggregated table: one point, n = 1."""
    parts = []
    for t in CORE_TABLES:
        runs = load_runs(path, t)
        if runs.height == 0:
            continue
        runs = runs.with_columns(pl.lit("run").alias("point_id"), pl.lit("base").alias("label"), pl.lit(0).alias("seed"))
        part = aggregate(runs, t, [])
        if part.height:
            parts.append(part)
    return pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()


def _sweeps_in(path: Path) -> list[Path]:
    return sorted(p.parent for p in path.glob("*/sweep.json"))


def results(path: str | os.PathLike[str]) -> pl.DataFrame:
    """One source as ``point, table, entity, app, metric, n, mean, std, ci_low, ci_high,
    ci_method`` (see the module docs)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such folder")
    if is_sweep(path):
        frames: list[tuple[str | None, pl.DataFrame]] = [(None, load(path))]
    elif is_run(path):
        frames = [(None, _run_table(path))]
    else:
        sweeps = _sweeps_in(path)
        if not sweeps:
            raise ValueError(f"{path}: not a run (summary.parquet), a sweep (sweep.json) or a folder of sweeps")
        frames = [(s.name, load(s)) for s in sweeps]
    out = []
    for exp, df in frames:
        if df.height == 0:
            continue
        point = pl.col("label") if exp is None else pl.lit(f"{exp}: ") + pl.col("label")
        out.append(df.select(point.alias("point"), "table", pl.col("entity").cast(pl.Utf8), pl.col("app").cast(pl.Utf8), "metric",
                             "n", "mean", "std", "ci_low", "ci_high", "ci_method"))
    if not out:
        raise ValueError(f"{path}: no finished runs")
    return pl.concat(out, how="vertical_relaxed")


def _names(paths: list[Path]) -> list[str]:
    """Short distinct names for the sources: the folder names, made unique."""
    names: list[str] = []
    for p in paths:
        base = p.name or str(p)
        name, k = base, 2
        while name in names:
            name, k = f"{base}#{k}", k + 1
        names.append(name)
    return names


def welch(m1: float, s1: float | None, n1: int, m2: float, s2: float | None, n2: int, level: float = 0.95) -> tuple[float, float] | None:
    """Welch's interval of m2 − m1, or None when either side has n < 3."""
    if n1 < MIN_N_FOR_CI or n2 < MIN_N_FOR_CI or s1 is None or s2 is None:
        return None
    v1, v2 = s1 * s1 / n1, s2 * s2 / n2
    d = m2 - m1
    if v1 + v2 == 0.0:
        return (d, d)
    df = (v1 + v2) ** 2 / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1))
    half = t_ppf(0.5 + level / 2.0, df) * math.sqrt(v1 + v2)
    return (d - half, d + half)


def table(paths: Sequence[str | os.PathLike[str]], metrics: list[str] | None = None, tables: list[str] | None = None) -> pl.DataFrame:
    """The side-by-side table (see the module docs). ``metrics``/``tables`` keep only those."""
    folders = [Path(p) for p in paths]
    if len(folders) < 2:
        raise ValueError("compare needs at least two runs, sweeps or study folders")
    names = _names(folders)
    frames = []
    for name, p in zip(names, folders):
        df = results(p)
        if metrics:
            unknown = [m for m in metrics if m not in set(df["metric"].to_list())]
            if unknown:
                raise ValueError(f"--metric {unknown[0]}: not a metric of {p}; it has: {', '.join(sorted(set(df['metric'].to_list()))[:40])}")
            df = df.filter(pl.col("metric").is_in(metrics))
        if tables:
            df = df.filter(pl.col("table").is_in(tables))
        frames.append(df.rename({c: f"{c}_{name}" for c in ("n", "mean", "std", "ci_low", "ci_high", "ci_method")}))
    out = frames[0]
    for f in frames[1:]:
        out = out.join(f, on=KEY, how="full", coalesce=True, nulls_equal=True)
    base = names[0]
    for name in names[1:]:
        rows = out.select(f"mean_{base}", f"std_{base}", f"n_{base}", f"mean_{name}", f"std_{name}", f"n_{name}").rows()
        lo: list[float | None] = []
        hi: list[float | None] = []
        diff: list[float | None] = []
        pct: list[float | None] = []
        for m1, s1, n1, m2, s2, n2 in rows:
            if m1 is None or m2 is None:
                for column in (lo, hi, diff, pct):
                    column.append(None)
                continue
            diff.append(m2 - m1)
            pct.append(100.0 * (m2 - m1) / abs(m1) if m1 else None)
            w = welch(m1, s1, n1 or 0, m2, s2, n2 or 0)
            lo.append(w[0] if w else None)
            hi.append(w[1] if w else None)
        out = out.with_columns(
            pl.Series(f"diff_{name}", diff, pl.Float64), pl.Series(f"diff_pct_{name}", pct, pl.Float64),
            pl.Series(f"diff_low_{name}", lo, pl.Float64), pl.Series(f"diff_high_{name}", hi, pl.Float64),
        ).with_columns(
            pl.when(pl.col(f"diff_low_{name}").is_null()).then(None)
            .otherwise((pl.col(f"diff_low_{name}") > 0) | (pl.col(f"diff_high_{name}") < 0)).alias(f"changed_{name}")
        )
    return out.sort(["table", "point", "entity", "metric"], nulls_last=True)


def figure(paths: Sequence[str | os.PathLike[str]], metric: str, table_name: str | None = None, entity: str | None = None, app: str | None = None) -> Figure:
    """Bars of ``metric`` per point, one colour per source, with their intervals."""
    import matplotlib.pyplot as plt

    from . import plots

    folders = [Path(p) for p in paths]
    names = _names(folders)
    df = table(folders, metrics=[metric], tables=[table_name] if table_name else None)
    if entity is not None:
        df = df.filter(pl.col("entity") == entity)
    if app is not None:
        df = df.filter(pl.col("app") == app)
    keys = df.select("point", "table", "entity", "app").unique(maintain_order=True)
    if keys.height == 0:
        raise ValueError(f"no values of {metric}")
    ylabel, scale = plots.metric_label(metric)
    cats = [" · ".join(str(v) for v in (r["point"], r["entity"] or r["app"]) if v not in (None, "", "base")) or metric for r in keys.iter_rows(named=True)]
    width = 0.8 / len(names)
    with plots._style():
        fig, ax = plt.subplots(figsize=(plots.PRINT_WIDTH_IN, 4.0))
        for i, name in enumerate(names):
            mean = [(v or 0.0) * scale for v in df[f"mean_{name}"].to_list()]
            lo, hi = df[f"ci_low_{name}"].to_list(), df[f"ci_high_{name}"].to_list()
            below = [(m - (a * scale)) if a is not None else 0.0 for m, a in zip(mean, lo)]
            above = [((b * scale) - m) if b is not None else 0.0 for m, b in zip(mean, hi)]
            pos = [j - 0.4 + width * (i + 0.5) for j in range(len(cats))]
            ax.bar(pos, mean, width=width * 0.92, yerr=[below, above], capsize=3, color=plots.OKABE_ITO[i % 8], label=name, error_kw={"linewidth": 1})
        plots._category_ticks(ax, cats)
        ax.set_ylabel(ylabel)
        ax.grid(axis="x", visible=False)
        ns = sorted({int(v) for n in names for v in df[f"n_{n}"].to_list() if v is not None})
        ax.set_title(f"{ylabel.split(' (')[0]}: {' vs '.join(names)} — n = {'–'.join(map(str, sorted({ns[0], ns[-1]})))} seeds")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
    return fig
