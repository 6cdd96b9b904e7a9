"""Figures of the docsis-codel study (see README.md): per load case (x axis) and RsQ
discipline (colour), without and with RF congestion (`matrix`); and the paper's Figs
2-9 over time (`startup`): upstream throughput and RsQ queuing delay for one and five
uploads per discipline, and the 21-packet queue's occupancy in case D04; and the
push-back vs drop-tail transmit queue (`txq`)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import polars as pl

from aqmlab import load, plots
from aqmlab.report import Figure

QDISC = "topology.links.1.qdisc"
DOCSIS = "topology.links.1.docsis"
CASE = "load case"
NAMES = {"pfifo": "DropTail", "codel": "CoDel"}
CONGESTION = {False: "no RF congestion", True: "RF congestion (grants 1250 B ± 20 % per MAP)"}


def tidy(agg: pl.DataFrame) -> pl.DataFrame:
    """The aggregate with readable axis values: `rsq` (discipline and packet limit, e.g.
    DropTail-21), `congested`."""
    return agg.with_columns(
        pl.concat_str(pl.col(QDISC).str.extract(r"kind=(\w+)").replace_strict(NAMES, default=None),
                      pl.col(QDISC).str.extract(r"limit=(\d+)pkt"), separator="-").alias("rsq"),
        pl.col(DOCSIS).str.contains("grant_mean").alias("congested"),
        pl.col("description").alias(CASE),
    )


# The paper's figure numbers for (discipline, quantity) of the start-up experiment.
PAPER_FIG = {("DropTail-417", "thr"): 2, ("DropTail-417", "delay"): 3, ("DropTail-21", "thr"): 4,
             ("DropTail-21", "delay"): 5, ("CoDel-417", "thr"): 6, ("CoDel-417", "delay"): 7}
BIN_S = 0.5  # throughput bins (five 100 ms samples)


def startup_runs(sweep_dir: Path) -> dict[tuple[str, str], pl.DataFrame]:
    """(discipline, case) -> the upstream RsQ's time series with `t` (s) and, per 0.5 s,
    the throughput `mbps` from `sent_bytes` (every packet the link carried)."""
    out = {}
    for d in sorted((sweep_dir / "runs").iterdir()):
        if not (d / "timeseries.parquet").exists():
            continue
        sc = json.loads((d / "scenario.json").read_text())
        q = sc["topology"]["links"][1]["qdisc"]
        name = f"{NAMES[q['kind']]}-{q['limit'].removesuffix('pkt')}"
        ts = (pl.read_parquet(d / "timeseries.parquet").filter(pl.col("link") == "upstream")
              .sort("time_ns").with_columns((pl.col("time_ns") / 1e9).alias("t")))
        out[(name, sc["description"])] = ts
    return out


def binned_mbps(ts: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    t, sent = ts["t"].to_numpy(), ts["sent_bytes"].to_numpy().astype(float)
    edges = np.arange(0.0, t[-1] + 1e-9, BIN_S)
    at = np.interp(edges, np.concatenate(([0.0], t)), np.concatenate(([0.0], sent)))
    return edges[1:], np.diff(at) * 8 / BIN_S / 1e6


def startup_figures(sweep_dir: Path) -> list[Figure]:
    runs = startup_runs(sweep_dir)
    figs = []
    for qty, ylabel in (("thr", "upstream throughput (Mbit/s, 0.5 s bins)"), ("delay", "RsQ queuing delay (ms)")):
        names = [n for n in ("DropTail-417", "DropTail-21", "CoDel-417") if (n, "1 TCP") in runs]
        if not names:
            continue
        fig, axes = plt.subplots(len(names), 1, figsize=(9, 2.3 * len(names) + 0.5), sharex=True)
        notes = []
        for ax, n in zip(np.atleast_1d(axes), names):
            for case in ("1 TCP", "5 TCP"):
                ts = runs[(n, case)]
                if qty == "thr":
                    t, y = binned_mbps(ts)
                    ax.plot(t, y, lw=1, label=case)
                    first = t[np.argmax(y >= 19.0)] if (y >= 19.0).any() else float("nan")
                    notes.append(f"{n} {case}: 2.5-5 s mean {y[(t > 2.5) & (t <= 5)].mean():.1f} Mbit/s, "
                                 f"first 0.5 s bin at >= 19 Mbit/s ends at {first:.1f} s")
                else:
                    ax.plot(ts["t"], ts["sojourn_ms"], lw=0.8, label=case)
                    early = ts.filter(pl.col("t") <= 15)["sojourn_ms"].max()
                    late = ts.filter(pl.col("t") > 20)["sojourn_ms"].mean()
                    notes.append(f"{n} {case}: max {early:.0f} ms in 0-15 s, mean {late:.1f} ms after 20 s")
            ax.set_ylabel(f"{n}\n(paper Fig. {PAPER_FIG[(n, qty)]})", fontsize=8)
            if qty == "thr":
                ax.axhline(20, color="grey", lw=0.5, ls="--")
            ax.legend(fontsize=7, loc="upper right")
        np.atleast_1d(axes)[-1].set_xlabel("time (s)")
        fig.suptitle(ylabel)
        fig.tight_layout()
        what = "Throughput" if qty == "thr" else "Queuing delay"
        figs.append(Figure(f"startup-{qty}", f"{what} over time, one and five CUBIC uploads (paper Figs "
                           f"{'2, 4, 6' if qty == 'thr' else '3, 5, 7'})", fig,
                           "Seed 1, base RTT 20 ms, no call or web user. " + "; ".join(notes) + "."))
    d04 = runs.get(("DropTail-21", "04"))
    if d04 is not None:
        fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.2))
        a.plot(d04["t"], d04["qlen_pkts"], lw=0.6)
        a.set_xlabel("time (s)")
        a.set_ylabel("RsQ packets")
        a.set_title("D04, DropTail-21: queue size vs time (paper Fig. 8)", fontsize=9)
        x = np.sort(d04["qlen_pkts"].to_numpy())
        b.step(x, np.arange(1, len(x) + 1) / len(x), where="post")
        b.set_xlabel("RsQ packets")
        b.set_ylabel("fraction of 100 ms samples")
        b.set_title("its distribution (paper Fig. 9)", fontsize=9)
        fig.tight_layout()
        free5 = float((x >= 16).mean())
        figs.append(Figure("startup-d04-queue", "D04 with DropTail-21: queue size over time and its CDF (paper Figs 8-9)",
                           fig, f"Seed 1, 100 ms samples of the RsQ length. 5 or fewer of the 21 places free in "
                                f"{100 * free5:.1f} % of the samples (paper: 98.5 % of the time)."))
    return figs


def txq_figures(sweep_dir: Path) -> list[Figure]:
    """The `txq` experiment: each RsQ discipline with the push-back and the drop-tail TxQ."""
    agg = tidy(load(sweep_dir)).with_columns(
        pl.concat_str(pl.col("rsq"), pl.col(DOCSIS).str.extract(r"txq_overflow=(\w+)"), separator=", TxQ ")
        .alias("rsq, TxQ"))
    n = int(agg["n"].max())
    ci = f"Cases 01, 02, 09 as in README.md. Mean over {n} seeds with its 95 % interval (none with fewer than 3 seeds; percentile bootstrap where Student t would leave the range)."
    figs = []
    for metric, table, entity, what in [
        ("plt_s_median", "apps", "web", "Median page load time"),
        ("voice_loss_rate", "apps", "voip", "VoIP packets lost in the network"),
        ("late_rate", "apps", "voip", "VoIP packets later than the 60 ms jitter buffer"),
        ("drops", "queues", "upstream.txq", "Packets dropped at the TxQ"),
    ]:
        a = agg.filter(pl.col("mean").is_not_null())
        try:
            fig = plots.bars(sweep_dir, metric=metric, table=table, entity=entity, group=CASE, hue="rsq, TxQ", agg=a,
                             title=f"{what}: push-back vs drop-tail TxQ")
        except ValueError:
            continue
        stem = f"txq-{metric}-{entity}".replace(".", "-")
        figs.append(Figure(stem, f"{what}: push-back vs drop-tail TxQ (no RF congestion)", fig, ci))
    return figs


def figures(dirs: dict[str, Path]) -> list[Figure]:
    plt.rcParams["figure.max_open_warning"] = 0  # the report holds every figure until it is written
    figs = startup_figures(dirs["startup"]) if "startup" in dirs else []
    if "txq" in dirs:
        figs += txq_figures(dirs["txq"])
    if "matrix" not in dirs:
        return figs
    sweep_dir = dirs["matrix"]
    agg = tidy(load(sweep_dir))
    n = int(agg["n"].max())
    ci = f"Load cases 01-09 as in README.md. Mean over {n} seeds with its 95 % interval (none with fewer than 3 seeds; percentile bootstrap where Student t would leave the range)."
    panels = [
        ("mos", "apps", "voip", "VoIP MOS (Cole-Rosenbluth E-model, network delay + 20 ms; the one-way upstream call)"),
        ("late_rate", "apps", "voip", "VoIP packets later than the 60 ms jitter buffer"),
        ("voice_loss_rate", "apps", "voip", "VoIP packets lost in the network"),
        ("plt_s_median", "apps", "web", "Median page load time"),
        ("plt_s_mad", "apps", "web", "Median absolute deviation of the page load time"),
        ("pages_completed", "apps", "web", "Pages completed"),
        ("bytes_delivered", "apps", "ftp", "FTP bytes delivered"),
        ("sojourn_ms_mean", "queues", "upstream", "Mean sojourn in the rate-shaping queue (RsQ)"),
        ("sojourn_ms_mean", "queues", "upstream.txq", "Mean sojourn in the DOCSIS transmit queue (TxQ)"),
    ]
    for metric, table, entity, what in panels:
        for cong, label in CONGESTION.items():
            # A PLT statistic is empty (null) when no page completed: the paper's ">600"
            # (Table 6, D04/D06); its bar is left out and `pages_completed` shows the 0.
            a = agg.filter((pl.col("congested") == cong) & pl.col("mean").is_not_null())
            try:
                fig = plots.bars(sweep_dir, metric=metric, table=table, entity=entity, group=CASE, hue="rsq", agg=a,
                                 title=f"{what}, {label}")
            except ValueError:
                continue
            stem = f"{metric}-{entity}-{'C' if cong else 'D'}".replace(".", "-")
            figs.append(Figure(stem, f"{what}, {label}", fig, ci))
    return figs
