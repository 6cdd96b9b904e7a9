"""Figures of the bufferbloat-basics study (see README.md)."""

from pathlib import Path

import polars as pl

from aqmlab import load, plots
from aqmlab.report import Figure

KIND = "topology.bottleneck.qdisc.kind"
LIMIT = "topology.bottleneck.qdisc.limit"
LINK = "L->R"


def figures(sweep_dir: Path) -> list[Figure]:
    agg = load(sweep_dir)
    n = int(agg["n"].max())
    ci = f"Mean over {n} seeds with its 95 % interval (none with fewer than 3 seeds; percentile bootstrap where Student t would leave the range)."
    figs = [
        Figure(
            "probe-owd",
            "One-way delay of the 64 kbit/s probe versus buffer size",
            plots.sweep_lines(sweep_dir, metric="owd_ms_mean", table="apps", entity="probe", x=LIMIT, hue=KIND, agg=agg, logy=True,
                              title="Probe one-way delay (interactive traffic)"),
            f"What a voice call or a game would feel: mean one-way delay of the probe's datagrams (base delay 5 ms). Log scale. {ci}",
        ),
        Figure(
            "sojourn",
            "Bottleneck sojourn time versus buffer size",
            plots.sweep_lines(sweep_dir, metric="sojourn_ms_mean", table="queues", entity=LINK, x=LIMIT, hue=KIND, agg=agg, logy=True,
                              title="Mean sojourn time at the bottleneck"),
            f"Time packets wait in the bottleneck queue (dequeue − enqueue). Log scale. {ci}",
        ),
        Figure(
            "sojourn-p99",
            "99th percentile of the bottleneck sojourn time versus buffer size",
            plots.sweep_lines(sweep_dir, metric="sojourn_ms_p99", table="queues", entity=LINK, x=LIMIT, hue=KIND, agg=agg, logy=True,
                              title="99th percentile sojourn time at the bottleneck"),
            f"The tail of the queueing delay. Log scale. {ci}",
        ),
    ]
    for limit in ("100pkt", "400pkt"):
        figs.append(Figure(
            f"sojourn-cdf-{limit}",
            f"CDF of the bottleneck sojourn time, {limit} buffer",
            plots.cdf(sweep_dir, metric="sojourn_ms", link=LINK, by=KIND, where={LIMIT: limit}, logx=True, after_s=20.0,
                      title=f"Sojourn time at the bottleneck, buffer {limit}"),
            "Sojourn time of every packet dequeued after the 20 s warm-up (per-link histograms, 0.4 % resolution), all seeds pooled. Log x axis above 1 ms, linear below.",
        ))
    figs += [
        Figure(
            "drop-rate",
            "Drop rate at the bottleneck",
            plots.bars(sweep_dir, metric="drop_rate", table="queues", entity=LINK, group=KIND, hue=LIMIT, agg=agg,
                       title="Bottleneck drop rate (overflow and AQM drops)"),
            f"Dropped / arrived packets, one bar per buffer size. {ci}",
        ),
        Figure(
            "utilization",
            "Bottleneck utilisation",
            plots.bars(sweep_dir, metric="utilization", table="queues", entity=LINK, group=KIND, hue=LIMIT, agg=agg,
                       title="Bottleneck utilisation"),
            f"Busy time / measured time of the 2 Mbit/s link. {ci}",
        ),
        Figure(
            "goodput",
            "Goodput of the 10 ms and 300 ms RTT flow pairs",
            plots.bars(sweep_dir, metric="goodput_bps", table="apps", app=None, entity=None, group=KIND, hue=None, agg=agg.filter((pl.col(LIMIT) == "200pkt") & pl.col("entity").is_in(["bulk-10ms", "bulk-300ms"])),
                       title="Goodput per RTT group, buffer 200pkt", by_entity=True),
            f"Total goodput of each pair of bulk flows (the probe is not shown). {ci}",
        ),
    ]
    return figs
