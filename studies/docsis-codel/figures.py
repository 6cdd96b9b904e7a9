"""Figures of the docsis-codel study (see README.md): per load case (x axis) and RsQ
discipline (colour), without and with RF congestion."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl

from aqmlab import load, plots
from aqmlab.report import Figure

QDISC = "topology.links.1.qdisc"
DOCSIS = "topology.links.1.docsis"
CASE = "load case"
NAMES = {"pfifo": "DropTail-417", "codel": "CoDel-417"}
CONGESTION = {False: "no RF congestion", True: "RF congestion (grants 1250 B ± 20 % per MAP)"}


def tidy(agg: pl.DataFrame) -> pl.DataFrame:
    """The aggregate with readable axis values: `rsq` (discipline), `congested`."""
    return agg.with_columns(
        pl.col(QDISC).str.extract(r"kind=(\w+)").replace_strict(NAMES, default=None).alias("rsq"),
        pl.col(DOCSIS).str.contains("grant_mean").alias("congested"),
        pl.col("description").alias(CASE),
    )


def figures(dirs: dict[str, Path]) -> list[Figure]:
    plt.rcParams["figure.max_open_warning"] = 0  # the report holds every figure until it is written
    if "matrix" not in dirs:
        return []
    sweep_dir = dirs["matrix"]
    agg = tidy(load(sweep_dir))
    n = int(agg["n"].max())
    ci = f"Load cases 01-09 as in README.md. Mean over {n} seeds with the 95 % Student-t confidence interval."
    figs = []
    panels = [
        ("mos", "apps", "voip", "VoIP MOS (Cole-Rosenbluth E-model, network delay + 20 ms; the one-way upstream call)"),
        ("late_rate", "apps", "voip", "VoIP packets later than the 60 ms jitter buffer"),
        ("voice_loss_rate", "apps", "voip", "VoIP packets lost in the network"),
        ("plt_s_median", "apps", "web", "Median page load time"),
        ("pages_completed", "apps", "web", "Pages completed"),
        ("bytes_delivered", "apps", "ftp", "FTP bytes delivered"),
        ("sojourn_ms_mean", "queues", "upstream", "Mean sojourn in the rate-shaping queue (RsQ)"),
        ("sojourn_ms_mean", "queues", "upstream.txq", "Mean sojourn in the DOCSIS transmit queue (TxQ)"),
    ]
    for metric, table, entity, what in panels:
        for cong, label in CONGESTION.items():
            a = agg.filter(pl.col("congested") == cong)
            try:
                fig = plots.bars(sweep_dir, metric=metric, table=table, entity=entity, group=CASE, hue="rsq", agg=a,
                                 title=f"{what}, {label}")
            except ValueError:
                continue
            stem = f"{metric}-{entity}-{'C' if cong else 'D'}".replace(".", "-")
            figs.append(Figure(stem, f"{what}, {label}", fig, ci))
    return figs
