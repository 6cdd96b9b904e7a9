"""Figures of the rtp-codel-drr study (see README.md): every output the report (Ahmed, CoDel vs DRR for RTP/RTCP) shows
against the bottleneck rate, CoDel and DRR side by side, scenario a (S1 access
1 Mbit/s) and b (5 Mbit/s) in two panels."""

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import polars as pl

from aqmlab import load, plots
from aqmlab.results import CORE_TABLES
from aqmlab.report import Figure

RATE = "topology.links.2.rate"
QDISC = "topology.links.2.qdisc"  # swept as whole tables: "kind=codel,limit=50pkt,..."
KIND = "kind"
ACCESS = "topology.links.0.rate"
LINK = "bottleneck"
SCENARIOS = (("1Mbit", "a: S1 access 1 Mbit/s"), ("5Mbit", "b: S1 access 5 Mbit/s"))


def mbit(s: str) -> float:
    return float(s.removesuffix("Mbit"))


def panels(agg: pl.DataFrame, table: str, metric: str, entities: list[str], ylabel: str, scale: float = 1.0, title: str = ""):
    """Two panels (scenario a, b): mean and 95 % CI of ``metric`` per bottleneck rate,
    one line per (discipline, entity)."""
    with plots._style():
        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
        for ax, (acc, name) in zip(axes, SCENARIOS):
            i = 0
            for kind in ("codel", "drr"):
                for ent in entities:
                    d = agg.filter((pl.col("table") == table) & (pl.col("metric") == metric) & (pl.col("entity") == ent)
                                   & (pl.col(KIND) == kind) & (pl.col(ACCESS) == acc))
                    if d.height == 0:
                        continue
                    x = np.array([mbit(v) for v in d[RATE].to_list()])
                    o = np.argsort(x)
                    m = d["mean"].to_numpy()[o] * scale
                    lo = np.array([np.nan if v is None else v for v in d["ci_low"].to_list()], float)[o] * scale
                    hi = np.array([np.nan if v is None else v for v in d["ci_high"].to_list()], float)[o] * scale
                    c = plots.OKABE_ITO[i % len(plots.OKABE_ITO)]
                    label = kind if len(entities) == 1 else f"{kind}, {ent}"
                    ax.plot(x[o], m, marker=plots.MARKERS[i], linestyle=plots.LINESTYLES[i % 4], color=c, label=label)
                    ax.fill_between(x[o], lo, hi, color=c, alpha=0.18, linewidth=0)
                    i += 1
            ax.set_title(name)
            ax.set_xlabel("bottleneck rate (Mbit/s)")
            ax.legend(fontsize=8)
        axes[0].set_ylabel(ylabel)
        fig.suptitle(title, fontsize=11)
        fig.tight_layout()
    return fig


def figures(sweep_dir: Path) -> list[Figure]:
    agg = load(sweep_dir, tables=(*CORE_TABLES, "app_flows"))
    agg = agg.with_columns(pl.col(QDISC).cast(pl.Utf8).str.extract(r"kind=([a-z_]+)").alias(KIND))
    n = int(agg["n"].max())
    ci = f"Mean over {n} seeds with its 95 % interval band (none with fewer than 3 seeds; percentile bootstrap where Student t would leave the range)."
    specs = [
        ("utilization", "queues", "utilization", [LINK], "utilisation (fraction)", 1.0, "Bottleneck utilisation",
         "Busy time / run time of the A→B link."),
        ("delay", "queues", "sojourn_ms_mean", [LINK], "mean queueing delay (ms)", 1.0, "Mean queueing delay at the bottleneck",
         "Mean sojourn (dequeue − enqueue) of the packets sent on A→B."),
        ("drops", "queues", "drops", [LINK], "packets dropped", 1.0, "Packets dropped at the bottleneck",
         "Overflow (both) and CoDel drops at A→B in the 10 s run, RTCP SRs included."),
        ("throughput", "queues", "throughput_bps", [LINK], "throughput (Mbit/s)", 1e-6, "Total bottleneck throughput",
         "Bits serialised on A→B per second (RTP data and SRs)."),
        ("receiver-throughput", "apps", "goodput_window_bps", ["s1", "s2"], "throughput (Mbit/s)", 1e-6, "Throughput per receiver",
         "IP bits delivered to R1 (session s1) and R2 (s2) per second."),
        ("sent", "app_flows", "packets_sent", ["0", "1"], "RTP packets sent", 1.0, "Packets sent per sender",
         "RTP data packets each sender emitted (flow 0 = S1, flow 1 = S2)."),
        ("received", "app_flows", "packets_received", ["0", "1"], "RTP packets received", 1.0, "Packets received per receiver",
         "RTP data packets that reached R1 (flow 0) and R2 (flow 1)."),
        ("received-size", "app_flows", "mean_size_bytes", ["0", "1"], "mean received packet (bytes)", 1.0, "Mean received packet size per receiver",
         "Mean IP size of the received RTP packets (sent: uniform 300–700 B, mean 500 B)."),
        ("rr-loss", "app_flows", "loss_fraction_rr", ["0", "1"], "loss fraction from RTCP RRs", 1.0, "Loss as RTCP receiver reports tell the senders",
         "Cumulative lost / expected in the last RR each sender received (RFC 3550 A.3)."),
    ]
    figs = []
    for name, table, metric, ents, ylabel, scale, title, caption in specs:
        figs.append(Figure(name, title, panels(agg, table, metric, ents, ylabel, scale, title), f"{caption} {ci}"))
    return figs
