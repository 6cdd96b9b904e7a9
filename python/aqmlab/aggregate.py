"""Reading a sweep back: per-run tables and the aggregated (mean ± 95 % CI) table.

`load(DIR)` returns one *tidy* table, one row per (sweep point, table, entity, metric):

    <axis columns>  one per swept path (e.g. ``topology.bottleneck.qdisc.kind``)
    point_id, label the point's id and a readable ``path=value, ...`` label
    table           ``summary`` | ``queues`` | ``flows`` | ``apps``
    entity          the row's key in that table: the link (queues), the flow id (flows),
                    the app (apps), ``""`` (summary)
    app             the app a flow belongs to (flows, apps), else null
    metric          the column name (``sojourn_ms_mean``, ``goodput_bps``, ...)
    n, mean, std    over the seeds (NaN and missing values are left out of n)
    ci_low, ci_high, ci_half   the 95 % interval: mean ± t(0.975, n−1)·std/√n, or the
                    percentile bootstrap where that leaves the metric's range (then
                    ci_half is empty); empty when n < 3 (`aqmlab.stats`)
    ci_method       ``t``, ``bootstrap`` or ``none`` (n < 3)
    identical       true when the point has n ≥ 2 runs and they are identical: every
                    result of the queues/flows/apps tables is the same for every seed
                    (the scenario has no randomness, so its zero-width interval says
                    nothing). The summary table's wall-clock figures do not count.

It is a polars DataFrame; ``.to_pandas()`` gives the same for pandas.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl

from .results import CORE_TABLES
from .stats import bound_intervals, summary_exprs, with_ci

#: The column that identifies a row of each table across seeds.
KEYS = {"summary": None, "queues": "link", "flows": "flow", "apps": "app", "app_flows": "flow"}
#: Numeric columns that are identifiers or inputs, not results.
NOT_METRICS = {"seed", "flow", "src_node", "dst_node"}


def is_sweep(path: str | os.PathLike[str]) -> bool:
    return (Path(path) / "sweep.json").exists()


def is_run(path: str | os.PathLike[str]) -> bool:
    return (Path(path) / "summary.parquet").exists()


def read_spec(path: str | os.PathLike[str]) -> dict[str, Any]:
    p = Path(path) / "sweep.json"
    if not p.exists():
        raise FileNotFoundError(f"{path}: not a sweep folder (no sweep.json)")
    spec: dict[str, Any] = json.loads(p.read_text())
    return spec


def axis_value(v: Any) -> Any:
    """A swept value as a table cell: scalars stay, tables/lists become compact text."""
    if isinstance(v, dict):
        return ",".join(f"{k}={axis_value(x)}" for k, x in v.items())
    if isinstance(v, list):
        return "[" + ",".join(str(axis_value(x)) for x in v) + "]"
    return v


def point_label(point: dict[str, Any]) -> str:
    return ", ".join(f"{short_name(k)}={axis_value(v)}" for k, v in point.items()) or "base"


def short_name(path: str) -> str:
    """``topology.bottleneck.qdisc.limit`` → ``qdisc.limit``."""
    parts = path.replace("[", ".").replace("]", "").split(".")
    return ".".join(parts[-2:]) if len(parts) > 1 else path


def _axis_columns(spec: dict[str, Any]) -> dict[str, pl.Series]:
    """Per run id: the axis values, typed when an axis is homogeneous."""
    runs = spec["runs"]
    cols: dict[str, list[Any]] = {a: [axis_value(r["point"].get(a)) for r in runs] for a in spec["axes"]}
    out = {"run_id": pl.Series("run_id", [r["id"] for r in runs], pl.Utf8)}
    for a, vals in cols.items():
        types = {type(v) for v in vals if v is not None}
        if types <= {int} or types <= {float} or types <= {str} or types <= {bool}:
            out[a] = pl.Series(a, vals)
        elif types <= {int, float}:
            out[a] = pl.Series(a, [float(v) if v is not None else None for v in vals], pl.Float64)
        else:
            out[a] = pl.Series(a, [None if v is None else str(v) for v in vals], pl.Utf8)
    out["point_id"] = pl.Series("point_id", [r["point_id"] for r in runs], pl.Utf8)
    out["label"] = pl.Series("label", [point_label(r["point"]) for r in runs], pl.Utf8)
    out["seed"] = pl.Series("seed", [r["seed"] for r in runs], pl.Int64)
    return out


#: Bytes of frames `reading_once` keeps (polars' estimate): the tables a study report
#: reads again and again are small (< 30 MB each in the built-in studies) and fit; the
#: largest — a study's stacked time series, gigabytes — are read again when asked again
#: rather than held, so the report's peak memory stays what it was.
READ_ONCE_BYTES = 128 << 20


class _Reads:
    """The frames kept inside `reading_once`, least recently used out first once they
    exceed `READ_ONCE_BYTES`; a frame larger than that is never kept."""

    def __init__(self) -> None:
        self.frames: OrderedDict[tuple[Any, ...], tuple[pl.DataFrame, int]] = OrderedDict()
        self.bytes = 0

    def get(self, key: tuple[Any, ...], read: Callable[[], pl.DataFrame]) -> pl.DataFrame:
        if key in self.frames:
            self.frames.move_to_end(key)
            return self.frames[key][0]
        df = read()
        size = int(df.estimated_size())
        if size <= READ_ONCE_BYTES:
            self.frames[key] = (df, size)
            self.bytes += size
            while self.bytes > READ_ONCE_BYTES:
                _, (_, gone) = self.frames.popitem(last=False)
                self.bytes -= gone
        return df


#: The frames read inside `reading_once` (None outside it).
_read_cache: _Reads | None = None


@contextlib.contextmanager
def reading_once() -> Iterator[None]:
    """Inside this block `load_runs` and `load` read each (folder, table) once and hand
    out the same frame again when asked again (polars frames are immutable, so callers
    cannot change each other's copy), within `READ_ONCE_BYTES`. A report asks for the
    same table many times (every figure, the scorecard, the tables): one read of a
    study's thousands of Parquet files instead of dozens. The folders must not change
    inside the block — a report is built from finished runs. Nested blocks share the
    outer one's reads."""
    global _read_cache
    if _read_cache is not None:
        yield
        return
    _read_cache = _Reads()
    try:
        yield
    finally:
        _read_cache = None


def _cached(key: tuple[Any, ...], read: Callable[[], pl.DataFrame]) -> pl.DataFrame:
    """``read()``, or inside `reading_once` the frame it gave for ``key`` before."""
    return read() if _read_cache is None else _read_cache.get(key, read)


def load_runs(path: str | os.PathLike[str], table: str = "summary") -> pl.DataFrame:
    """One table of every finished run of a sweep, stacked, with the run's axis values,
    ``point_id``, ``label``, ``seed`` and ``run_id`` in front. Also accepts the folder
    of a single run (``aqmlab run --out``)."""
    path = Path(path)
    return _cached(("runs", str(path.resolve()), table), lambda: _read_runs(path, table))


def _read_runs(path: Path, table: str) -> pl.DataFrame:
    """`load_runs` without the cache."""
    if is_run(path) and not is_sweep(path):
        f = path / f"{table}.parquet"
        if not f.exists():
            return pl.DataFrame()
        return pl.read_parquet(f).with_columns(pl.lit(path.name).alias("run_id"))
    spec = read_spec(path)
    meta = pl.DataFrame(_axis_columns(spec))
    frames = []
    for rid in meta["run_id"]:
        f = path / "runs" / rid / f"{table}.parquet"
        if f.exists():
            df = pl.read_parquet(f)
            frames.append(df.drop([c for c in df.columns if c in ("seed",)]).with_columns(pl.lit(rid).alias("run_id")))
    if not frames:
        return meta.clear()
    data = pl.concat(frames, how="diagonal_relaxed")
    joined = meta.join(data, on="run_id", how="inner")
    return joined


def metric_columns(df: pl.DataFrame, exclude: set[str]) -> list[str]:
    return [c for c, t in df.schema.items() if t.is_numeric() and c not in exclude and c not in NOT_METRICS]


def aggregate(runs: pl.DataFrame, table: str, axes: list[str], level: float = 0.95) -> pl.DataFrame:
    """Mean, std, n and CI per (point, entity, metric) of a stacked per-run table."""
    if runs.height == 0:
        return pl.DataFrame()
    key = KEYS.get(table)
    front = [*axes, "point_id", "label", "seed", "run_id"]
    metrics = metric_columns(runs, set(front) | ({key} if key else set()))
    if not metrics:
        return pl.DataFrame()
    entity = pl.col(key).cast(pl.Utf8) if key else pl.lit("")
    app = pl.col("app").cast(pl.Utf8) if "app" in runs.columns and table in ("flows", "apps", "app_flows") else pl.lit(None, pl.Utf8)
    long = (
        runs.select(
            pl.col("point_id"),
            entity.alias("entity"),
            app.alias("app"),
            *[pl.col(m).cast(pl.Float64) for m in metrics],
        )
        .unpivot(index=["point_id", "entity", "app"], variable_name="metric", value_name="value")
    )
    keys = ["point_id", "entity", "app"]
    agg = with_ci(long.group_by([*keys, "metric"], maintain_order=True).agg(*summary_exprs("value")), level)
    agg = bound_intervals(agg, long, keys, level)
    points = runs.select([*axes, "point_id", "label"]).unique(subset=["point_id"], maintain_order=True)
    out = points.join(agg, on="point_id", how="inner").with_columns(pl.lit(table).alias("table"))
    order = [*axes, "point_id", "label", "table", "entity", "app", "metric", "n", "mean", "std", "ci_low", "ci_high", "ci_half", "ci_method"]
    return out.select(order)


def load(path: str | os.PathLike[str], tables: tuple[str, ...] = CORE_TABLES, level: float = 0.95) -> pl.DataFrame:
    """The aggregated tidy table of a sweep folder (see the module docs)."""
    return _cached(("load", str(Path(path).resolve()), tuple(tables), level), lambda: _aggregate_all(path, tables, level))


def _aggregate_all(path: str | os.PathLike[str], tables: tuple[str, ...], level: float) -> pl.DataFrame:
    """`load` without the cache."""
    spec = read_spec(path)
    axes = spec["axes"]
    parts = [aggregate(load_runs(path, t), t, axes, level) for t in tables]
    parts = [p for p in parts if p.height]
    if not parts:
        return pl.DataFrame()
    return flag_identical(pl.concat(parts, how="diagonal_relaxed"))


def flag_identical(agg: pl.DataFrame) -> pl.DataFrame:
    """Add the ``identical`` column (see the module docs)."""
    results = agg.filter(pl.col("table") != "summary")
    per_point = results.group_by("point_id").agg(
        ((pl.col("n").max() >= 2) & (pl.col("std").fill_null(0.0).fill_nan(0.0).max() == 0.0)).alias("identical")
    )
    return agg.join(per_point, on="point_id", how="left").with_columns(pl.col("identical").fill_null(False))


def identical_points(agg: pl.DataFrame) -> dict[str, int]:
    """``{label: n}`` of the points whose n ≥ 2 runs were identical."""
    if agg.height == 0 or "identical" not in agg.columns:
        return {}
    rows = agg.filter(pl.col("identical")).group_by("label", maintain_order=True).agg(pl.col("n").max())
    return dict(zip(rows["label"].to_list(), rows["n"].to_list()))


def identical_note(n: int) -> str:
    return f"n = {n} identical runs — the scenario has no randomness"


def select(agg: pl.DataFrame, metric: str, table: str | None = None, entity: str | None = None, app: str | None = None) -> pl.DataFrame:
    """Rows of the aggregated table for one metric (and optionally table/entity/app)."""
    q = agg.filter(pl.col("metric") == metric)
    if table:
        q = q.filter(pl.col("table") == table)
    if entity is not None:
        q = q.filter(pl.col("entity") == entity)
    if app is not None:
        q = q.filter(pl.col("app") == app)
    return q


def bottleneck_link(path: str | os.PathLike[str]) -> str | None:
    """The link that carried the most traffic (highest mean utilisation) in a run or a
    sweep: the bottleneck of a dumbbell."""
    q = load_runs(path, "queues")
    if q.height == 0 or "utilization" not in q.columns:
        return None
    by = q.group_by("link").agg(pl.col("utilization").fill_nan(None).mean().alias("u")).sort(["u", "link"], descending=[True, False], nulls_last=True)
    link: str | None = by["link"][0]
    return link


def failures(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    d = Path(path) / "failed"
    if not d.exists():
        return []
    spec_ids = {r["id"] for r in read_spec(path)["runs"]} if is_sweep(path) else None
    out = []
    for f in sorted(d.glob("*.json")):
        rec = json.loads(f.read_text())
        if spec_ids is None or rec["id"] in spec_ids:
            out.append(rec)
    return out
