"""Figures of the rural-broadband study (see README.md). Experiments so far: E1."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl

from aqmlab import load, plots
from aqmlab.report import Figure

QDISC = "topology.bottleneck.qdisc"
LIMIT = "topology.bottleneck.qdisc.limit"
LINK = "r4->r5"
NAMES = {"pfifo": "DropTail", "ared": "ARED", "pie": "PIE", "codel": "CoDel"}


def tidy(agg: pl.DataFrame) -> pl.DataFrame:
    """The aggregate with a readable `discipline` column."""
    return agg.with_columns(pl.col(QDISC).str.extract(r"kind=(\w+)").replace_strict(NAMES, default=None).alias("discipline"))


def e1(d: Path) -> list[Figure]:
    agg = tidy(load(d))
    n = int(agg["n"].max())
    ci = f"Mean over {n} seeds with the 95 % Student-t confidence interval."
    figs = []
    for metric, table, entity, what, logy in [
        ("sojourn_ms_mean", "queues", LINK, "Mean queueing delay at the bottleneck", True),
        ("drop_rate", "queues", LINK, "Drop rate at the bottleneck", False),
        ("utilization", "queues", LINK, "Bottleneck utilisation", False),
        ("mos", "apps", "voice", "MOS of the G.729A calls (ITU-T G.107)", False),
        ("decodable_frame_loss_rate", "apps", "video", "Decodable-frame loss of the video", False),
        ("plt_s_median", "apps", "web-a", "Median response time of the 10 ms-RTT web load", True),
        ("goodput_bps", "apps", "ftp-b", "Goodput of the two 300 ms-RTT FTP flows", False),
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
    return e1(dirs["E1"]) if "E1" in dirs else []
