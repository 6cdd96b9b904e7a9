"""Figures for runs and sweeps: one style, a colour-blind-safe palette, units on axes.

Every function returns a matplotlib ``Figure``; `save` writes it print-ready (at most
7.16 in wide, no text under 8 pt) as PNG at 300 dpi, SVG and PDF. Nothing here needs a
display: figures are only saved, never shown.

* `cdf` — empirical CDF of sojourn time (per packet from ``sojourn_hist`` when recorded) or queue length (from the ``timeseries`` table,
  sampled every ``output.timeseries``), one line per sweep point, seeds pooled.
* `timeseries` — queue length, sojourn, drop/mark probability, link rate (and cwnd when
  a run has a ``tcp`` table) against time.
* `sweep_lines` — a metric versus a swept parameter, mean with its 95 % CI band, one line
  per value of another axis (e.g. per discipline).
* `bars` — grouped bars of a metric with 95 % CI error bars.
* `owd_cdf` — per-flow one-way delay CDF (from ``owd_hist``, ``output.owd_hist = true``).
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Any, cast

import matplotlib.pyplot as plt
import matplotlib.text
import numpy as np
import polars as pl
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from . import safefile
from .aggregate import axis_value, bottleneck_link, is_sweep, load, load_runs, point_label, read_spec
from .names import axis_name, axis_value_names, point_name

#: A run or sweep folder.
PathArg = str | os.PathLike[str]

#: Okabe & Ito (2008), "Color Universal Design": distinguishable with every common
#: colour-vision deficiency. Yellow comes late: it is faint on white.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000", "#F0E442"]
#: Most points drawn per CDF line.
CDF_POINTS = 2000
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
LINESTYLES = ["-", "--", "-.", ":"]

STYLE: dict[str, Any] = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": cycler(color=OKABE_ITO),
    "legend.frameon": False,
    "legend.fontsize": 9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "lines.linewidth": 1.6,
    "svg.fonttype": "none",
}

#: Known columns: axis label and the factor that turns the stored unit into the shown one.
LABELS: dict[str, tuple[str, float]] = {
    "sojourn_ms": ("sojourn time (ms)", 1.0),
    "qlen_pkts": ("queue length (packets)", 1.0),
    "qlen_bytes": ("queue length (KB)", 1e-3),
    "drop_prob": ("drop/mark probability", 1.0),
    "rate_bps": ("link rate (Mbit/s)", 1e-6),
    "throughput_bps": ("throughput (Mbit/s)", 1e-6),
    "goodput_bps": ("goodput over the active time (Mbit/s)", 1e-6),
    "goodput_window_bps": ("goodput over the window (Mbit/s)", 1e-6),
    "drop_rate": ("drop rate (fraction of arrivals)", 1.0),
    "loss_rate": ("loss rate (fraction)", 1.0),
    "utilization": ("utilisation (fraction of link rate)", 1.0),
    "owd_ms_mean": ("mean one-way delay (ms)", 1.0),
    "rtt_ms_mean": ("mean RTT (ms)", 1.0),
    "wall_time_s": ("wall time (s)", 1.0),
    "mos": ("MOS, worst direction (ITU-T G.107 Annex B)", 1.0),
    "mos_fwd": ("MOS, caller → callee", 1.0),
    "mos_rev": ("MOS, callee → caller", 1.0),
    "mos_call_min": ("MOS of the worst call", 1.0),
    "r_factor": ("E-model R", 1.0),
    "plt_s_median": ("median page load time (s)", 1.0),
    "plt_s_mad": ("page load time MAD (s)", 1.0),
    "plt_s_p95": ("95th pct. page load time (s)", 1.0),
    "pages_completed": ("pages completed", 1.0),
    "pages_failed": ("pages failed", 1.0),
}

#: Traffic kinds whose apps rows carry page-load-time columns.
WEB_KINDS = ("web-page", "web-packmime")


def metric_label(metric: str) -> tuple[str, float]:
    """Axis label with units and scale factor for a column name."""
    if metric in LABELS:
        return LABELS[metric]
    m = re.match(r"^(.*?)_(ms|s|bps|pkts|bytes|db)(?:_(.*))?$", metric)
    if m:
        base, unit, stat = m.groups()
        names = {"ms": ("ms", 1.0), "s": ("s", 1.0), "bps": ("Mbit/s", 1e-6), "pkts": ("packets", 1.0), "bytes": ("bytes", 1.0), "db": ("dB", 1.0)}
        u, f = names[unit]
        stat_txt = {"mean": "mean", "p50": "median", "p95": "95th pct.", "p99": "99th pct."}.get(stat or "", stat or "")
        return f"{base.replace('_', ' ')}{' ' + stat_txt if stat_txt else ''} ({u})", f
    if metric.startswith("cwnd"):
        return ("cwnd (" + ("bytes" if "bytes" in metric else "segments") + ")", 1.0)
    return metric.replace("_", " "), 1.0


def n_note(q: pl.DataFrame) -> str:
    """What the error bars of aggregated rows ``q`` are, with n: every figure states n."""
    ns = sorted({int(v) for v in q["n"].to_list() if v is not None})
    n = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]}–{ns[-1]}"
    methods = set(q["ci_method"].to_list()) if "ci_method" in q.columns else {"t"}
    if methods == {"none"}:
        return f"mean, {n} seeds, no interval"
    how = "95 % CI" if methods <= {"t", "none"} else "95 % CI (bootstrap where t leaves the range)"
    return f"mean and {how}, {n} seeds"


def _style() -> AbstractContextManager[None]:
    return plt.rc_context(cast(Any, STYLE))


#: Widest figure, inches: a two-column-wide figure in the IEEE and ACM templates (7.16 in).
PRINT_WIDTH_IN = 7.16
#: Smallest font, points, at PRINT_WIDTH_IN.
MIN_FONT_PT = 8.0


def _wrap(text: matplotlib.text.Text, width_in: float) -> None:
    """Break a title that is wider than ``width_in`` at word boundaries."""
    t = text.get_text()
    chars = max(20, int(width_in * 72 / (0.55 * float(text.get_fontsize()))))
    if "\n" not in t and len(t) > chars:
        text.set_text(textwrap.fill(t, chars))


def print_ready(fig: Figure) -> None:
    """Make ``fig`` printable as it is: no wider than `PRINT_WIDTH_IN` (a wider figure is
    narrowed, its height kept, so that its text is not shrunk when it is printed at that
    width) and no text below `MIN_FONT_PT`."""
    w, h = fig.get_size_inches()
    if w > PRINT_WIDTH_IN + 1e-9:
        fig.set_size_inches(PRINT_WIDTH_IN, h)
    for t in fig.findobj(matplotlib.text.Text):
        if t.get_text() and float(t.get_fontsize()) < MIN_FONT_PT:
            t.set_fontsize(MIN_FONT_PT)
    for ax in fig.axes:
        _wrap(ax.title, ax.get_position().width * fig.get_size_inches()[0])
        for axis in (ax.xaxis, ax.yaxis):
            ticks = axis.get_major_ticks()
            if ticks and float(ticks[0].label1.get_fontsize()) < MIN_FONT_PT:
                axis.set_tick_params(which="both", labelsize=MIN_FONT_PT)
    suptitle: matplotlib.text.Text | None = getattr(fig, "_suptitle", None)  # no public getter of the Text
    if suptitle is not None:
        _wrap(suptitle, fig.get_size_inches()[0])
    if fig.get_layout_engine() is None:
        try:
            fig.tight_layout()
        except (ValueError, RuntimeError):  # a layout that cannot be tightened is left as drawn
            pass


def save(fig: Figure, stem: PathArg, formats: Sequence[str] = ("png", "svg", "pdf"), close: bool = True) -> list[Path]:
    """Write ``fig`` as ``STEM.png`` (300 dpi), ``STEM.svg`` and ``STEM.pdf`` (each
    atomically) and close it, after `print_ready`. PDF is for papers (vector, fonts
    embedded); SVG for the web."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    with _style():
        print_ready(fig)
        for fmt in formats:
            dest = stem.with_suffix(f".{fmt}")

            def write(f: IO[Any], fmt: str = fmt) -> None:
                fig.savefig(f, format=fmt)

            safefile.write_with(dest, write)
            out.append(dest)
    if close:
        plt.close(fig)
    return out


def save_copy(fig: Figure, stem: PathArg, formats: Sequence[str] = ("png", "svg", "pdf")) -> list[Path]:
    """Like `save`, but the figure stays open (for a report that embeds it next)."""
    return save(fig, stem, formats, close=False)


def _numeric(v: Any) -> float | None:
    """``"100pkt"`` → 100.0, ``5`` → 5.0, ``"codel"`` → None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        m = re.match(r"^\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*([A-Za-z/%]*)\s*$", v)
        if m:
            return float(m.group(1))
    return None


def _unit(values: Iterable[Any]) -> str:
    for v in values:
        if isinstance(v, str):
            m = re.match(r"^\s*[-+]?\d+(?:\.\d+)?\s*([A-Za-z/%]+)\s*$", v)
            if m:
                return m.group(1)
    return ""


def axis_title(path: str, values: Iterable[Any] = ()) -> str:
    u = _unit(values)
    return f"{axis_name(path)}{f' ({u})' if u else ''}"


def _names(spec: dict[str, Any]) -> dict[str, dict[Any, str]]:
    """Per axis: stored value → readable name (`aqmlab.names`)."""
    return axis_value_names(spec, axis_value)


def _label_names(path: PathArg) -> dict[str, str]:
    """A sweep's stored point labels → readable point names."""
    if not is_sweep(path):
        return {}
    spec = read_spec(path)
    names = _names(spec)
    return {point_label(r["point"]): point_name(r["point"], names, axis_value) for r in spec["runs"]}


def _legend_below(ax: Axes, title: str | None = None) -> None:
    """A legend under the axes (off the data: CDF lines fill the plot area), in two
    columns when it has more than four entries."""
    n = len(ax.get_legend_handles_labels()[1])
    ncol = 2 if n > 4 else 1
    fig = cast(Figure, ax.get_figure())
    w, h = fig.get_size_inches()
    grow = 0.17 * -(-n // ncol) + (0.25 if title else 0.1)  # room for the rows, the axes keep their height
    fig.set_size_inches(w, h + grow)
    ax.legend(title=title, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12 * 4.0 / (h - 0.8)), ncol=ncol)


def _doubling(values: list[Any]) -> bool:
    """Positive values, at least three, each at least twice the one before (sorted)."""
    v = sorted(set(x for x in values if x is not None))
    return len(v) >= 3 and v[0] > 0 and all(b >= 2 * a for a, b in zip(v, v[1:]))


def _category_ticks(ax: Axes, labels: list[str]) -> None:
    """Category tick labels that do not overlap: slanted when they are long or many."""
    crowded = sum(len(t) for t in labels) > 60 or len(labels) > 8
    ax.set_xticks(range(len(labels)), labels, rotation=30 if crowded else 0, ha="right" if crowded else "center")


def _pick_axes(spec: dict[str, Any], x: str | None, hue: str | None) -> tuple[str | None, str | None]:
    axes = spec["axes"]
    if x is None and axes:
        numeric = [a for a in axes if all(_numeric(axis_value(r["point"].get(a))) is not None for r in spec["runs"])]
        x = numeric[0] if numeric else axes[0]
    if hue is None:
        rest = [a for a in axes if a != x]
        hue = rest[0] if rest else None
    return x, hue


def _select(agg: pl.DataFrame, metric: str, table: str | None, entity: str | None, app: str | None, several: bool = False) -> pl.DataFrame:
    q = agg.filter(pl.col("metric") == metric)
    if table:
        q = q.filter(pl.col("table") == table)
    if entity is not None:
        q = q.filter(pl.col("entity") == entity)
    if app is not None:
        q = q.filter(pl.col("app") == app)
    if not several and q.height and q["point_id"].n_unique() != q.height:
        # several entities left: the user must say which (e.g. two links)
        ents = sorted(set(q["entity"].to_list()))
        raise ValueError(f"{metric}: several rows per sweep point (entities {', '.join(map(str, ents))}); pass entity= or app=")
    return q


def default_entity(path: PathArg, table: str) -> tuple[str | None, str | None]:
    """(entity, app) defaults: the bottleneck link for queues, nothing otherwise."""
    if table == "queues":
        return bottleneck_link(path), None
    return None, None


def sweep_lines(path: PathArg, metric: str = "sojourn_ms_mean", table: str = "queues", x: str | None = None, hue: str | None = None,
                entity: str | None = None, app: str | None = None, agg: pl.DataFrame | None = None, title: str | None = None, logy: bool = False,
                logx: bool | None = None) -> Figure:
    """Metric versus swept parameter ``x``: mean and 95 % CI band, one line per ``hue``.
    ``logx`` defaults to a log axis when the swept values grow by factors of 2 or more
    (e.g. 1, 2, 4, 8 Mbit/s), linear otherwise."""
    spec = read_spec(path)
    x, hue = _pick_axes(spec, x, hue)
    if x is None:
        raise ValueError("this sweep has no axis to put on the x axis")
    if entity is None and app is None:
        entity, app = default_entity(path, table)
    agg = load(path) if agg is None else agg
    q = _select(agg, metric, table, entity, app)
    if q.height == 0:
        raise ValueError(f"no values of {table}.{metric} in {path}")
    ylabel, scale = metric_label(metric)
    names = _names(spec)
    xs_all = q[x].to_list()
    numeric_x = all(_numeric(v) is not None for v in xs_all)
    cats = list(dict.fromkeys(xs_all))
    groups = list(dict.fromkeys(q[hue].to_list())) if hue else [None]
    with _style():
        fig, ax = plt.subplots()
        for i, g in enumerate(groups):
            d = q if g is None or hue is None else q.filter(pl.col(hue) == g)
            x_at: list[Any] = [_numeric(v) if numeric_x else cats.index(v) for v in d[x].to_list()]
            order = np.argsort(x_at)
            xv = np.asarray(x_at, float)[order]
            mean = np.asarray(d["mean"].to_list(), float)[order] * scale
            lo = np.asarray([np.nan if v is None else v for v in d["ci_low"].to_list()], float)[order] * scale
            hi = np.asarray([np.nan if v is None else v for v in d["ci_high"].to_list()], float)[order] * scale
            c = OKABE_ITO[i % len(OKABE_ITO)]
            # a line and a band only where x is a number; categories get points and bars
            ls = LINESTYLES[i % len(LINESTYLES)] if numeric_x else "none"
            ax.plot(xv, mean, marker=MARKERS[i % len(MARKERS)], linestyle=ls, color=c, label=names.get(cast(str, hue), {}).get(g, str(g)) if g is not None else metric)
            if numeric_x:
                ax.fill_between(xv, lo, hi, color=c, alpha=0.18, linewidth=0)
            ax.errorbar(xv, mean, yerr=[mean - lo, hi - mean], fmt="none", ecolor=c, capsize=3, linewidth=1)
        ax.set_xlabel(axis_title(x, xs_all))
        ax.set_ylabel(ylabel)
        if not numeric_x:
            _category_ticks(ax, [names.get(x, {}).get(c, str(c)) for c in cats])
        elif logx if logx is not None else _doubling([_numeric(v) for v in cats]):
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        where = f" at {entity}" if entity else (f" of {app}" if app else "")
        ax.set_title(f"{title or ylabel.split(' (')[0] + where} — {n_note(q)}")
        if hue:
            ax.legend(title=axis_name(hue), loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
    return fig


def bars(path: PathArg, metric: str = "drop_rate", table: str = "queues", group: str | None = None, hue: str | None = None,
         entity: str | None = None, app: str | None = None, agg: pl.DataFrame | None = None, title: str | None = None,
         by_entity: bool = False) -> Figure:
    """Grouped bars of a metric per sweep point (``group`` on the x axis, ``hue`` as bar
    colour), with 95 % CI error bars. With ``by_entity`` the colours are the entities
    (links, flows or apps) instead of an axis."""
    spec = read_spec(path)
    axes = spec["axes"]
    if group is None and axes:
        group = axes[0]
    if by_entity:
        hue = "entity"
    elif hue is None:
        rest = [a for a in axes if a != group]
        hue = rest[0] if rest else None
    if entity is None and app is None and not by_entity:
        entity, app = default_entity(path, table)
    agg = load(path) if agg is None else agg
    q = _select(agg, metric, table, entity, app, several=by_entity)
    if q.height == 0:
        raise ValueError(f"no values of {table}.{metric} in {path}")
    ylabel, scale = metric_label(metric)
    names = _names(spec)
    cats = list(dict.fromkeys(q[group].to_list())) if group else ["all"]
    hues = list(dict.fromkeys(q[hue].to_list())) if hue else [None]
    width = 0.8 / len(hues)
    with _style():
        fig, ax = plt.subplots(figsize=(PRINT_WIDTH_IN, 4.0))
        for i, h in enumerate(hues):
            d = q if h is None or hue is None else q.filter(pl.col(hue) == h)
            pos, mean, below, above = [], [], [], []
            for row in d.iter_rows(named=True):
                if row["mean"] is None:  # no run of this point has the metric: leave its bar out
                    continue
                c = row[group] if group else "all"
                pos.append(cats.index(c) - 0.4 + width * (i + 0.5))
                mean.append(row["mean"] * scale)
                # asymmetric where the interval is a bootstrap one; none when n < 3
                lo, hi = row["ci_low"], row["ci_high"]
                below.append((row["mean"] - lo) * scale if lo is not None else 0.0)
                above.append((hi - row["mean"]) * scale if hi is not None else 0.0)
            ax.bar(pos, mean, width=width * 0.92, yerr=[below, above], capsize=3, color=OKABE_ITO[i % len(OKABE_ITO)], label=names.get(cast(str, hue), {}).get(h, str(h)) if h is not None else None, error_kw={"linewidth": 1})
        _category_ticks(ax, [names.get(group, {}).get(c, str(c)) for c in cats] if group else ["all"])
        if group:
            ax.set_xlabel(axis_title(group, cats))
        ax.set_ylabel(ylabel)
        ax.grid(axis="x", visible=False)
        where = f" at {entity}" if entity else (f" of {app}" if app else "")
        ax.set_title(f"{title or ylabel.split(' (')[0] + where} — {n_note(q)}")
        if hue:
            ax.legend(title=axis_name(hue) if hue != "entity" else None, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
    return fig


def _ts_frame(path: PathArg, link: str | None) -> tuple[pl.DataFrame, str]:
    ts = load_runs(path, "timeseries")
    if ts.height == 0:
        raise ValueError(f"{path}: no timeseries table (set output.timeseries in the scenario)")
    link = link or bottleneck_link(path) or ts["link"][0]
    ts = ts.filter(pl.col("link") == link)
    if ts.height == 0:
        raise ValueError(f"{path}: no time series for link {link!r} (links: {', '.join(sorted(set(load_runs(path, 'timeseries')['link'])))})")
    if "label" not in ts.columns:
        ts = ts.with_columns(pl.lit(Path(path).name).alias("label"))
    return ts, link


def cdf(path: PathArg, metric: str = "sojourn_ms", link: str | None = None, by: str = "label", title: str | None = None, logx: bool = False,
        where: dict[str, Any] | None = None, after_s: float = 0.0) -> Figure:
    """Empirical CDF of ``sojourn_ms`` or ``qlen_pkts`` samples at ``link`` (default: the
    bottleneck), one line per value of ``by`` (default: per sweep point; seeds pooled).
    ``where`` keeps only the points with these axis values, e.g.
    ``{"bottleneck.qdisc.limit": "400pkt"}``; ``after_s`` drops the samples before that
    time (e.g. the warm-up).

    For ``sojourn_ms``, runs with ``output.sojourn_hist = true`` give the CDF over every
    packet (from the per-link histograms, 0.4 % resolution, after the warm-up);
    otherwise the time-series samples are used."""
    if metric == "sojourn_ms":
        hist = load_runs(path, "sojourn_hist")
        if hist.height:
            return _packet_cdf(path, hist, link, by, title, logx, where)
    ts, link = _ts_frame(path, link)
    if after_s:
        ts = ts.filter(pl.col("time_ns") >= int(after_s * 1e9))
    for k, v in (where or {}).items():
        ts = ts.filter(pl.col(k) == v)
    if ts.height == 0:
        raise ValueError(f"no time-series samples match {where}")
    if metric not in ts.columns:
        raise ValueError(f"the timeseries table has no column {metric!r}")
    xlabel, scale = metric_label(metric)
    with _style():
        fig, ax = plt.subplots()
        groups = list(dict.fromkeys(ts[by].to_list()))
        shown = _label_names(path) if by == "label" else _names(read_spec(path)).get(by, {}) if is_sweep(path) else {}
        for i, g in enumerate(groups):
            v = ts.filter(pl.col(by) == g)[metric].cast(pl.Float64).fill_nan(None).drop_nulls().to_numpy() * scale
            if v.size == 0:
                continue
            v = np.sort(v)
            y = np.arange(1, v.size + 1) / v.size
            if v.size > CDF_POINTS:
                # thin to CDF_POINTS evenly spaced probability levels: the drawn curve is
                # the same to the eye, the SVG stays small
                idx = np.unique(np.linspace(0, v.size - 1, CDF_POINTS).round().astype(int))
                v, y = v[idx], y[idx]
            ax.step(v, y, where="post", color=OKABE_ITO[i % len(OKABE_ITO)], linestyle=LINESTYLES[(i // len(OKABE_ITO)) % 4], label=shown.get(g, str(g)))
        if by != "label":
            _legend_below(ax, title=axis_name(by))
        ax.set_xlabel(xlabel)
        ax.set_ylabel("fraction of samples ≤ x")
        ax.set_ylim(0, 1.01)
        if logx:
            ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(left=0)
        ax.set_title(title or f"CDF of {xlabel.split(' (')[0]} at {link}")
        if len(groups) > 1 and by == "label":
            _legend_below(ax)
        fig.tight_layout()
    return fig


def _packet_cdf(path: PathArg, hist: pl.DataFrame, link: str | None, by: str, title: str | None, logx: bool,
                where: dict[str, Any] | None) -> Figure:
    """Per-packet sojourn CDF from the ``sojourn_hist`` tables, seeds pooled."""
    link = link or bottleneck_link(path) or hist["link"][0]
    hist = hist.filter(pl.col("link") == link)
    if "label" not in hist.columns:
        hist = hist.with_columns(pl.lit(Path(path).name).alias("label"))
    for k, v in (where or {}).items():
        hist = hist.filter(pl.col(k) == v)
    if hist.height == 0:
        raise ValueError(f"no sojourn histogram for link {link!r} matches {where}")
    with _style():
        fig, ax = plt.subplots()
        groups = list(dict.fromkeys(hist[by].to_list()))
        shown = _label_names(path) if by == "label" else _names(read_spec(path)).get(by, {}) if is_sweep(path) else {}
        for i, g in enumerate(groups):
            h = (
                hist.filter(pl.col(by) == g)
                .group_by("sojourn_ms_high")
                .agg(pl.col("packets").sum())
                .sort("sojourn_ms_high")
            )
            x = h["sojourn_ms_high"].to_numpy()
            y = np.cumsum(h["packets"].to_numpy()) / h["packets"].sum()
            ax.step(x, y, where="post", color=OKABE_ITO[i % len(OKABE_ITO)], linestyle=LINESTYLES[(i // len(OKABE_ITO)) % 4], label=shown.get(g, str(g)))
        ax.set_xlabel(metric_label("sojourn_ms")[0])
        ax.set_ylabel("fraction of packets ≤ x")
        ax.set_ylim(0, 1.01)
        if logx:
            ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(left=0)
        ax.set_title(title or f"CDF of packet sojourn time at {link}")
        if len(groups) > 1:
            _legend_below(ax, title=None if by == "label" else axis_name(by))
        fig.tight_layout()
    return fig


#: Flows drawn per one-way delay CDF at most.
OWD_MAX_FLOWS = 8


def owd_cdf(path: PathArg, flows: Sequence[int] | None = None, app: str | None = None, title: str | None = None,
            logx: bool = False) -> Figure:
    """Per-flow one-way delay CDF over every delivered packet, from the ``owd_hist``
    tables (runs with ``output.owd_hist = true``), seeds of a point pooled: one line per
    (sweep point, flow). ``flows`` picks flow ids, ``app`` the flows of one traffic entry;
    by default the first flows (at most 8)."""
    hist = load_runs(path, "owd_hist")
    if hist.height == 0:
        raise ValueError(f"{path}: no owd_hist table (run with output.owd_hist = true)")
    if "label" not in hist.columns:
        hist = hist.with_columns(pl.lit(Path(path).name).alias("label"))
    if app is not None:
        hist = hist.filter(pl.col("app") == app)
    ids = list(dict.fromkeys(hist["flow"].to_list())) if flows is None else [int(f) for f in flows]
    hist = hist.filter(pl.col("flow").is_in(ids[:OWD_MAX_FLOWS]))
    if hist.height == 0:
        raise ValueError(f"no one-way delay histogram matches flows={flows} app={app}")
    labels = list(dict.fromkeys(hist["label"].to_list()))
    shown = _label_names(path)
    with _style():
        fig, ax = plt.subplots()
        keys = list(dict.fromkeys(zip(hist["label"].to_list(), hist["flow"].to_list(), hist["app"].to_list())))
        for i, (lab, flow, a) in enumerate(keys):
            h = (
                hist.filter((pl.col("label") == lab) & (pl.col("flow") == flow))
                .group_by("owd_ms_high")
                .agg(pl.col("packets").sum())
                .sort("owd_ms_high")
            )
            x = h["owd_ms_high"].to_numpy()
            y = np.cumsum(h["packets"].to_numpy()) / h["packets"].sum()
            name = f"flow {flow} ({a})" + (f", {shown.get(lab, lab)}" if len(labels) > 1 else "")
            ax.step(x, y, where="post", color=OKABE_ITO[i % len(OKABE_ITO)], linestyle=LINESTYLES[(i // len(OKABE_ITO)) % 4], label=name)
        ax.set_xlabel("one-way delay (ms)")
        ax.set_ylabel("fraction of packets ≤ x")
        ax.set_ylim(0, 1.01)
        if logx:
            ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(left=0)
        ax.set_title(title or "CDF of per-flow one-way delay")
        _legend_below(ax)
        fig.tight_layout()
    return fig


#: Time-series panels drawn by default, in order (when the run has them).
TS_DEFAULT = ("qlen_pkts", "sojourn_ms", "drop_prob", "rate_bps")
#: Runs (sweep points) drawn side by side at most; flows per cwnd panel at most.
TS_MAX_RUNS = 3
TS_MAX_FLOWS = 8
#: Runs side by side in a time-series figure (more wrap into further rows).
TS_COLUMNS = 3


def _window(df: pl.DataFrame, t_from: float | None, t_to: float | None) -> pl.DataFrame:
    if t_from is not None:
        df = df.filter(pl.col("time_ns") >= int(t_from * 1e9))
    if t_to is not None:
        df = df.filter(pl.col("time_ns") <= int(t_to * 1e9))
    return df


def timeseries(path: PathArg, link: str | None = None, metrics: Sequence[str] | None = None, seed: int | None = None, title: str | None = None,
               t_from: float | None = None, t_to: float | None = None) -> Figure:
    """Time-series panels at ``link``: queue length, sojourn, drop/mark probability
    (when the discipline has one), link rate, and cwnd per flow when the run has a
    ``tcp`` table. A sweep gets one column of panels per point (its first seed, or
    ``seed``), so runs are never mixed in one line; at most `TS_MAX_RUNS` points and
    `TS_MAX_FLOWS` flows per panel are drawn and the titles say how many there are.
    ``t_from``/``t_to`` (seconds) limit the time axis."""
    ts, link = _ts_frame(path, link)
    if t_from is not None and t_to is not None and t_from >= t_to:
        raise ValueError(f"--from {t_from:g} s is not before --to {t_to:g} s")
    available = [c for c in ts.columns if c in TS_DEFAULT or c in ("qlen_bytes",)]
    tcp = load_runs(path, "tcp")
    tcp_cols = [c for c in tcp.columns if c in ("cwnd_bytes", "ssthresh_bytes", "srtt_ms", "bytes_in_flight")] if tcp.height else []
    if metrics is None:  # the default panels that have data and vary (a constant link rate says nothing)
        metrics = [m for m in TS_DEFAULT if m in ts.columns
                   and cast(int, ts.group_by("label").agg(pl.col(m).cast(pl.Float64).fill_nan(None).drop_nulls().n_unique().alias("u"))["u"].max()) > 1]
        metrics += ["cwnd_bytes"] if "cwnd_bytes" in tcp_cols else []
    for m in metrics:
        if m not in available and m not in tcp_cols:
            raise ValueError(f"--metric {m}: not a time-series column here; available: {', '.join(available + tcp_cols) or 'none'}")
    if "seed" in ts.columns:
        first = ts.group_by("label", maintain_order=True).agg(pl.col("seed").min().alias("_s")) if seed is None else None
        ts = ts.join(first, on="label").filter(pl.col("seed") == pl.col("_s")).drop("_s") if first is not None else ts.filter(pl.col("seed") == seed)
        if ts.height == 0:
            raise ValueError(f"no time series for seed {seed}")
    ts = _window(ts, t_from, t_to)
    runs = list(dict.fromkeys(ts["label"].to_list())) or [Path(path).name]
    shown = runs[:TS_MAX_RUNS]
    if tcp.height and "run_id" in ts.columns and "run_id" in tcp.columns:
        tcp = _window(tcp.filter(pl.col("run_id").is_in(ts["run_id"].unique().implode())), t_from, t_to)
    names = _label_names(path)
    with _style():
        # at most TS_COLUMNS runs side by side; more runs wrap into further blocks of rows
        ncol = min(len(shown), TS_COLUMNS)
        blocks = -(-len(shown) // ncol)
        nm = len(metrics)
        fig, axs = plt.subplots(nm * blocks, ncol, sharex=True, figsize=(PRINT_WIDTH_IN if ncol > 1 else 6.4, (1.7 * nm + 0.6) * blocks + 0.3), squeeze=False)
        for c, run in enumerate(shown):
            b, col = divmod(c, ncol)
            d_run = ts.filter(pl.col("label") == run).sort("time_ns")
            rid = d_run["run_id"][0] if "run_id" in d_run.columns and d_run.height else None
            for r, m in enumerate(metrics):
                ax = axs[b * nm + r, col]
                label, scale = metric_label(m)
                if m in tcp_cols:
                    e_run = tcp.filter(pl.col("run_id") == rid) if rid is not None and "run_id" in tcp.columns else tcp
                    flows = list(dict.fromkeys(e_run["flow"].to_list()))
                    for i, f in enumerate(flows[:TS_MAX_FLOWS]):
                        e = e_run.filter(pl.col("flow") == f).sort("time_ns")
                        ax.plot(e["time_ns"].to_numpy() / 1e9, e[m].cast(pl.Float64).to_numpy() * scale, color=OKABE_ITO[i % 8], linewidth=1.0, label=f"flow {f}")
                    if flows:  # a count above the panel, not a legend over the data
                        more = f"{min(len(flows), TS_MAX_FLOWS)} of {len(flows)} flows" if len(flows) > TS_MAX_FLOWS else (f"{len(flows)} flows" if len(flows) > 1 else "1 flow")
                        ax.annotate(more, xy=(1.0, 1.01), xycoords="axes fraction", ha="right", va="bottom", fontsize=8)
                else:
                    ax.plot(d_run["time_ns"].to_numpy() / 1e9, d_run[m].cast(pl.Float64).to_numpy() * scale, color=OKABE_ITO[0], linewidth=1.0)
                if col == 0:
                    ax.set_ylabel(label)
            axs[b * nm, col].set_title(names.get(run, str(run)) if len(runs) > 1 else (title or f"time series at {link}"), fontsize=8)
        for c in range(len(shown), blocks * ncol):  # empty slots of the last block
            b, col = divmod(c, ncol)
            for r in range(nm):
                axs[b * nm + r, col].set_visible(False)
        for col in range(ncol):
            axs[-1, col].set_xlabel("time (s)")
        if len(runs) > 1:
            extra = f" ({len(shown)} of {len(runs)} points shown)" if len(runs) > len(shown) else ""
            fig.suptitle((title or f"time series at {link}, first seed of each point") + extra, fontsize=9)
        fig.align_ylabels(axs[:, 0])
        fig.tight_layout()
    return fig


KINDS = ("cdf", "timeseries", "sweep", "bars", "owd-cdf", "plt-cdf", "plt-box")


def plot(path: PathArg, kind: str, out: PathArg | None = None, formats: Sequence[str] = ("png", "svg", "pdf"), **kw: Any) -> list[Path]:
    """Make one figure of ``kind`` from a run or sweep folder and save it (PNG, SVG, PDF).
    Default file stem: ``PATH/figures/KIND-METRIC``."""
    path = Path(path)
    kw = {k: v for k, v in kw.items() if v is not None}
    if kind == "cdf":
        fig = cdf(path, **kw)
    elif kind == "timeseries":
        fig = timeseries(path, **kw)
    elif kind == "owd-cdf":
        fig = owd_cdf(path, **kw)
    elif kind == "plt-cdf":
        fig = plt_cdf(path, **kw)
    elif kind == "plt-box":
        fig = plt_box(path, **kw)
    elif kind in ("sweep", "bars"):
        if not is_sweep(path):
            raise ValueError(f"{path}: `{kind}` needs a sweep folder (with sweep.json)")
        fig = sweep_lines(path, **kw) if kind == "sweep" else bars(path, **kw)
    else:
        raise ValueError(f"unknown plot kind {kind!r}; expected one of {', '.join(KINDS)}")
    metric = kw.get("metric") or {"cdf": "sojourn_ms", "timeseries": "", "sweep": "sojourn_ms_mean", "bars": "drop_rate",
                                  "owd-cdf": "", "plt-cdf": "", "plt-box": ""}[kind]
    stem = Path(out) if out else path / "figures" / (f"{kind}-{metric}" if metric else kind)
    return save(fig, stem, formats)


def _pages(path: PathArg, app: str | None) -> pl.DataFrame:
    pages = load_runs(path, "pages")
    if pages.height == 0:
        raise ValueError(f"{path}: no pages table (set page_rows = true on the web entry)")
    if app is not None:
        pages = pages.filter(pl.col("app") == app)
        if pages.height == 0:
            raise ValueError(f"no pages of app {app!r}")
    if "label" not in pages.columns:
        pages = pages.with_columns(pl.lit(Path(path).name).alias("label"))
    return pages


def plt_cdf(path: PathArg, app: str | None = None, title: str | None = None, logx: bool = True) -> Figure:
    """CDF of every page's load time per sweep point (seeds pooled). Failed pages count
    as never loading: a line ends below 1 by the share of pages that failed."""
    pages = _pages(path, app)
    names = _label_names(path)
    with _style():
        fig, ax = plt.subplots()
        for i, g in enumerate(dict.fromkeys(pages["label"].to_list())):
            d = pages.filter(pl.col("label") == g)
            v = np.sort(d["plt_s"].cast(pl.Float64).fill_nan(None).drop_nulls().to_numpy())
            if v.size == 0:
                continue
            y = np.arange(1, v.size + 1) / d.height
            ax.step(v, y, where="post", color=OKABE_ITO[i % 8], linestyle=LINESTYLES[(i // 8) % 4],
                    label=f"{names.get(g, g)} ({d.height - v.size} of {d.height} failed)" if v.size < d.height else names.get(g, g))
        ax.set_xlabel("page load time (s)")
        ax.set_ylabel("fraction of pages ≤ x")
        ax.set_ylim(0, 1.01)
        if logx:
            ax.set_xscale("log")
        ax.set_title(title or f"CDF of page load time{f' of {app}' if app else ''}, every page of every seed")
        _legend_below(ax)
        fig.tight_layout()
    return fig


def plt_box(path: PathArg, app: str | None = None, title: str | None = None, logy: bool = True) -> Figure:
    """Box plot of every completed page's load time per sweep point (seeds pooled;
    whiskers at 1.5 IQR, Tukey), with the count of failed pages under each box."""
    pages = _pages(path, app)
    names = _label_names(path)
    groups = list(dict.fromkeys(pages["label"].to_list()))
    data, labels = [], []
    for g in groups:
        d = pages.filter(pl.col("label") == g)
        v = d["plt_s"].cast(pl.Float64).fill_nan(None).drop_nulls().to_numpy()
        data.append(v if v.size else np.array([np.nan]))
        failed = d.height - v.size
        labels.append(names.get(g, g) + (f"\n{failed} failed" if failed else ""))
    with _style():
        fig, ax = plt.subplots(figsize=(PRINT_WIDTH_IN, 4.0))
        ax.boxplot(data, whis=1.5, showfliers=True, flierprops={"markersize": 2})
        ax.set_xticks(range(1, len(labels) + 1), labels, rotation=30 if sum(map(len, labels)) > 60 else 0,
                      ha="right" if sum(map(len, labels)) > 60 else "center")
        ax.set_ylabel("page load time (s)")
        if logy:
            ax.set_yscale("log")
        ax.set_title(title or f"Page load time{f' of {app}' if app else ''}: every completed page of every seed")
        fig.tight_layout()
    return fig


def mos_goodput(path: PathArg, voice_app: str, bulk_app: str, agg: pl.DataFrame | None = None, title: str | None = None) -> Figure:
    """The voice question in one picture: per sweep point the call's MOS (y) against the
    bulk traffic's goodput (x), each with its 95 % interval; up and right is better."""
    spec = read_spec(path)
    agg = load(path) if agg is None else agg
    mos = _select(agg, "mos", "apps", None, voice_app)
    gp = _select(agg, "goodput_bps", "apps", None, bulk_app)
    both = mos.join(gp, on="point_id", suffix="_gp")
    if both.height == 0:
        raise ValueError(f"no points with both {voice_app}.mos and {bulk_app}.goodput_bps")
    names = {point_label(r["point"]): n for r, n in zip(spec["runs"], [point_name(r["point"], _names(spec), axis_value) for r in spec["runs"]])}
    with _style():
        fig, ax = plt.subplots()
        for i, r in enumerate(both.iter_rows(named=True)):
            x, y = r["mean_gp"] * 1e-6, r["mean"]
            xe = [[x - r["ci_low_gp"] * 1e-6], [r["ci_high_gp"] * 1e-6 - x]] if r["ci_low_gp"] is not None else None
            ye = [[y - r["ci_low"]], [r["ci_high"] - y]] if r["ci_low"] is not None else None
            ax.errorbar([x], [y], xerr=xe, yerr=ye, fmt=MARKERS[i % len(MARKERS)], color=OKABE_ITO[i % 8], capsize=3,
                        label=names.get(r["label"], r["label"]))
        ax.set_xlabel(f"goodput of {bulk_app} (Mbit/s)")
        ax.set_ylabel(f"MOS of {voice_app}, worst direction")
        ax.set_ylim(1.0, 4.5)
        ax.set_title(title or f"Call quality against upload goodput — {n_note(both)}")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
        fig.tight_layout()
    return fig
