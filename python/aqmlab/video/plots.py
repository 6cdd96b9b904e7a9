"""Video figures: decoded-frame strip plot, PSNR over time, decodable frames per
discipline with confidence intervals.

The first two read a run's ``frames`` table (``frame_rows = true`` on the ``video``
traffic); the third a sweep folder (mean and 95 % CI over seeds, through
:func:`aqmlab.plots.bars`).
"""

from __future__ import annotations

import os
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.figure import Figure

from .. import plots as _plots

TYPE_COLOURS = {"I": _plots.OKABE_ITO[0], "P": _plots.OKABE_ITO[1], "B": _plots.OKABE_ITO[2]}


def sample_flows(frames: pl.DataFrame, n: int = 3, app: str | None = None) -> list[int]:
    """``n`` flows spread evenly over the (app's) flows, in flow order."""
    if app is not None:
        frames = frames.filter(pl.col("app") == app)
    flows = sorted(set(frames["flow"].to_list()))
    if len(flows) <= n:
        return flows
    idx = np.linspace(0, len(flows) - 1, n).round().astype(int)
    return [flows[i] for i in idx]


def strip(frames: pl.DataFrame, flows: list[int] | None = None, app: str | None = None, title: str | None = None) -> Figure:
    """One row per sampled stream; a tick at each successfully decoded frame (coloured
    by type) over its send time; gaps are frames lost, undecodable or skipped."""
    flows = sample_flows(frames, 3, app) if flows is None else flows
    with _plots._style():
        fig, ax = plt.subplots(figsize=(8.0, 0.6 + 0.7 * max(1, len(flows))))
        for row, f in enumerate(flows):
            d = frames.filter((pl.col("flow") == f) & pl.col("decodable"))
            for ty, colour in TYPE_COLOURS.items():
                t = d.filter(pl.col("type") == ty)["sent_at_ns"].to_numpy() / 1e9
                if len(t):
                    ax.vlines(t, row - 0.35, row + 0.35, color=colour, linewidth=0.6, label=ty if row == 0 else "_nolegend_")
        ax.set_yticks(range(len(flows)), [f"flow {f}" for f in flows])
        ax.set_xlabel("frame send time (s)")
        ax.set_ylim(-0.6, len(flows) - 0.4)
        ax.grid(axis="y", visible=False)
        ax.set_title(title or "Decoded frames of sampled streams")
        ax.legend(title="type", loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
    return fig


def psnr_over_time(frames: pl.DataFrame, flows: list[int] | None = None, app: str | None = None, title: str | None = None) -> Figure:
    """Per-frame PSNR (model or decoded, the ``psnr_db`` column) against send time for
    sampled streams, with Evalvid's MOS thresholds as guides."""
    flows = sample_flows(frames, 3, app) if flows is None else flows
    with _plots._style():
        fig, ax = plt.subplots()
        for i, f in enumerate(flows):
            d = frames.filter(pl.col("flow") == f).sort("frame")
            ax.plot(d["sent_at_ns"].to_numpy() / 1e9, d["psnr_db"].to_numpy(), color=_plots.OKABE_ITO[i % len(_plots.OKABE_ITO)],
                    linewidth=0.8, label=f"flow {f}")
        for y in (20, 25, 31, 37):
            ax.axhline(y, color="0.6", linewidth=0.5, linestyle=":")
        ax.set_xlabel("frame send time (s)")
        ax.set_ylabel("PSNR (dB)")
        ax.set_title(title or "PSNR per frame (MOS bands at 20, 25, 31, 37 dB)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
    return fig


def decodable_bars(path: str | os.PathLike[str], app: str, metric: str = "decodable_frame_loss_rate", group: str | None = None, **kw: Any) -> Figure:
    """``metric`` of video entry ``app`` per sweep point (e.g. per discipline), mean and
    95 % CI over seeds."""
    fig: Figure = _plots.bars(path, metric=metric, table="apps", app=app, group=group, **kw)
    return fig
