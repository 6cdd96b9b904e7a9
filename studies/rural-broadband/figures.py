"""Figures of the rural-broadband study (see README.md): E1-E6."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl

from aqmlab import load, plots
from aqmlab.report import Figure

QDISC = "topology.bottleneck.qdisc"
LIMIT = "topology.bottleneck.qdisc.limit"
LINK = "r4->r5"
NAMES = {"droptail": "DropTail", "ared": "ARED", "pie": "PIE", "codel": "CoDel"}


def tidy(agg: pl.DataFrame) -> pl.DataFrame:
    """The aggregate with a readable `discipline` column (E6's ARED variants get their
    initial rate: "ARED (0.5Mbit)")."""
    name = pl.col(QDISC).str.extract(r"kind=(\w+)").replace_strict(NAMES, default=None)
    rate = pl.col(QDISC).str.extract(r"rate=([\w.]+)")
    return agg.with_columns(pl.when(rate.is_not_null()).then(name + " (" + rate + ")").otherwise(name).alias("discipline"))


#: (metric, table, entity, what, log y) of the later experiments' figures.
DELAY = ("sojourn_ms_mean", "queues", LINK, "Mean queueing delay at the bottleneck", True)
DROPS = ("drop_rate", "queues", LINK, "Drop rate at the bottleneck", False)
UTIL = ("utilization", "queues", LINK, "Bottleneck utilisation", False)
MOS = ("mos", "apps", "voice", "MOS of the G.729A calls (each call's worse direction, mean over the calls)", False)
VIDEO = ("decodable_frame_loss_rate", "apps", "video", "Decodable-frame loss of the video", False)
PSNR = ("psnr_db_mean", "apps", "video", "Mean PSNR of the video (dB)", False)
VMOS = ("video_mos", "apps", "video", "Video MOS (Evalvid's PSNR grades)", False)
#: Experiment: (swept path on the x axis, what it is, the panels).
SWEEPS = {
    "E2": ("topology.bottleneck.qdisc.target", "AQM target delay", [DELAY, DROPS, MOS, VIDEO, PSNR, VMOS]),
    "E3": ("topology.bottleneck.delay", "bottleneck delay D (all RTTs 10...300 ms)", [DROPS, VIDEO, PSNR, VMOS, DELAY]),
    "E4": ("topology.hosts[2].right.delay", "d8 (the b pair's RTT 10...300 ms)", [DROPS, UTIL, DELAY]),
    "E5": ("topology.bottleneck.rate", "bottleneck rate C", [DROPS, VIDEO, PSNR, VMOS, DELAY]),
    "E5L": ("topology.bottleneck.rate", "bottleneck rate C (LEDBAT uploads)", [DROPS, VIDEO, PSNR, DELAY]),
}
CC = "traffic[0].cc"


def swept(exp: str, d: Path) -> list[Figure]:
    """E2-E5: each panel's metric against the swept path, one line per discipline (E5:
    one figure per TCP variant)."""
    x, what_x, panels = SWEEPS[exp]
    agg = tidy(load(d))
    n = int(agg["n"].max())
    ci = f"Mean over {n} seeds with the 95 % Student-t confidence interval."
    variants = agg[CC].unique(maintain_order=True).to_list() if CC in agg.columns else [None]
    figs = []
    for cc in variants:
        a = agg if cc is None else agg.filter(pl.col(CC) == cc)
        tag = "" if cc is None else f", {cc} uploads"
        for metric, table, entity, what, logy in panels:
            figs.append(Figure(f"{exp}-{metric}{'' if cc is None else '-' + cc}", f"{exp}: {what} versus {what_x}{tag}",
                               plots.sweep_lines(d, metric=metric, table=table, entity=entity, x=x, hue="discipline", agg=a,
                                                 logy=logy, title=f"{exp}: {what}{tag}"),
                               ci))
    return figs


def e6(d: Path) -> list[Figure]:
    agg = tidy(load(d)).with_columns(pl.lit("0.5-3.5 Mbit/s").alias("capacity"))
    n = int(agg["n"].max())
    ci = f"Mean over {n} seeds with the 95 % Student-t confidence interval."
    return [Figure(f"E6-{metric}", f"E6: {what} with a fluctuating capacity",
                   plots.bars(d, metric=metric, table="queues", entity=LINK, group="discipline", hue="capacity", agg=agg,
                              title=f"E6: {what}, capacity redrawn every 10-30 ms"), ci)
            for metric, _, _, what, _ in (DELAY, DROPS)]


def e1(d: Path) -> list[Figure]:
    agg = tidy(load(d))
    n = int(agg["n"].max())
    ci = f"Mean over {n} seeds with the 95 % Student-t confidence interval."
    figs = []
    for metric, table, entity, what, logy in [
        ("sojourn_ms_mean", "queues", LINK, "Mean queueing delay at the bottleneck", True),
        ("drop_rate", "queues", LINK, "Drop rate at the bottleneck", False),
        ("utilization", "queues", LINK, "Bottleneck utilisation", False),
        ("mos", "apps", "voice", "MOS of the G.729A calls (ITU-T G.107; each call's worse direction, mean over the calls)", False),
        ("decodable_frame_loss_rate", "apps", "video", "Decodable-frame loss of the video", False),
        ("psnr_db_mean", "apps", "video", "Mean PSNR of the video (dB)", False),
        ("plt_s_median", "apps", "web-a", "Median response time of the 10 ms-RTT web load", True),
        ("goodput_window_bps", "apps", "ftp-b", "Goodput of the two 300 ms-RTT FTP flows (over the window)", False),
    ]:
        figs.append(Figure(f"E1-{metric}-{entity}".replace(">", "").replace("->", "-"), f"E1: {what} versus buffer size",
                           plots.sweep_lines(d, metric=metric, table=table, entity=entity, x=LIMIT, hue="discipline", agg=agg,
                                             logy=logy, title=f"E1: {what}"),
                           ci))
    for limit in ("100pkt", "400pkt"):
        figs.append(Figure(f"E1-qlen-cdf-{limit}", f"E1: CDF of the bottleneck queue length, buffer {limit}",
                           plots.cdf(d, metric="qlen_pkts", link=LINK, by=QDISC, where={LIMIT: limit}, after_s=20.0,
                                     title=f"E1: queue length at the bottleneck, buffer {limit}"),
                           "Queue length sampled every 100 ms after the 20 s warm-up, all seeds pooled."))
    return figs


def figures(dirs: dict[str, Path]) -> list[Figure]:
    plt.rcParams["figure.max_open_warning"] = 0  # the report holds every figure until it is written
    figs = e1(dirs["E1"]) if "E1" in dirs else []
    for exp in SWEEPS:
        if exp in dirs:
            figs += swept(exp, dirs[exp])
    if "E6" in dirs:
        figs += e6(dirs["E6"])
    return figs
