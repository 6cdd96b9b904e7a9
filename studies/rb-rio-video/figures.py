"""Figures of the rb-rio-video study (see README.md).

Each experiment sweeps discipline × period × seed; a period is the same run measured
over [warmup, duration) (0-10, 10-20, 20-30 s). Link and transport numbers come from
the period's own run; frame numbers come from the full run's `frames` table (the
20-30 s run simulates 0-30 s), split by each frame's send time.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import polars as pl

from aqmlab import plots
from aqmlab.aggregate import load_runs
from aqmlab.report import Figure
from aqmlab.stats import mean_ci
from aqmlab.video import plots as vplots

QDISC = "topology.bottleneck.qdisc"
LINK = "L->R"
PERIODS = ["0-10 s", "10-20 s", "20-30 s"]
NAMES = {"pfifo": "DropTail", "red": "RED", "rb_rio": "Rb-RIO"}
#: Traffic entries active only in 10-20 s.
MIDDLE_ONLY = {"ftp-extra", "mpeg-unresp"}


def qdisc_kind(v) -> str:
    """The discipline's kind from the axis value (a table, or its `kind=...,` label)."""
    if isinstance(v, dict):
        return v["kind"]
    return dict(kv.split("=", 1) for kv in str(v).split(","))["kind"]


def qdisc_name(v) -> str:
    k = qdisc_kind(v)
    return NAMES.get(k, k)


def period_of(warmup_s: float) -> str:
    return PERIODS[int(round(warmup_s / 10))]


def _secs(v) -> float:
    return float(str(v).rstrip("s"))


def jain(x) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²); NaN for no flows or all zero."""
    x = np.asarray(x, dtype=float)
    s2 = float((x * x).sum())
    return float(x.sum() ** 2 / (len(x) * s2)) if len(x) and s2 > 0 else float("nan")


def run_metrics(sweep_dir: Path) -> pl.DataFrame:
    """One row per run and group (`link`, or a traffic entry): the period's values."""
    q = load_runs(sweep_dir, "queues").filter(pl.col("link") == LINK)
    apps = load_runs(sweep_dir, "apps")
    flows = load_runs(sweep_dir, "flows")
    rows = []
    for r in q.iter_rows(named=True):
        if _secs(r["duration"]) - _secs(r["warmup"]) != 10:  # T2's 0-30 s point is Table 1's, not a period
            continue
        base = {"qdisc": qdisc_name(r[QDISC]), "period": period_of(_secs(r["warmup"])), "seed": r["seed"]}
        rows.append(base | {"group": "link", "utilization": r["utilization"], "drop_rate": r["drop_rate"],
                            "qlen_pkts_mean": r["qlen_pkts_mean"], "sojourn_ms_mean": r["sojourn_ms_mean"]})
        active = [a for a in apps.filter(pl.col("run_id") == r["run_id"])["app"].to_list()
                  if base["period"] == "10-20 s" or a not in MIDDLE_ONLY]
        run_flows = flows.filter(pl.col("run_id") == r["run_id"])
        rows[-1]["jain"] = jain(run_flows.filter(pl.col("app").is_in(active))["goodput_window_bps"].to_list())
        for a in apps.filter((pl.col("run_id") == r["run_id"]) & pl.col("app").is_in(active)).iter_rows(named=True):
            fl = run_flows.filter(pl.col("app") == a["app"])
            rows.append(base | {"group": a["app"], "throughput_bps": a["goodput_window_bps"], "loss_rate": a["loss_rate"],
                                "jain": jain(fl["goodput_window_bps"].to_list())})
    return pl.DataFrame(rows)


def frame_metrics(sweep_dir: Path) -> pl.DataFrame:
    """Frame counts per stream group and period, from each seed's full (20-30 s) run."""
    fr = load_runs(sweep_dir, "frames")
    if not fr.height:
        return pl.DataFrame()
    fr = fr.filter((pl.col("warmup") == "20s") & (pl.col("duration") == "30s")).with_columns(
        pl.col(QDISC).map_elements(qdisc_name, return_dtype=pl.Utf8).alias("qdisc"),
        (pl.col("sent_at_ns") // 10_000_000_000).cast(pl.Int64).alias("p"),
    ).filter(pl.col("p") < 3)
    out = fr.group_by(["qdisc", "seed", "app", "p"], maintain_order=True).agg(  # a fixed order of groups, so of figures
        pl.col("sent").sum().alias("frames_sent"),
        (~pl.col("sent")).sum().alias("frames_skipped"),
        pl.col("received").sum().alias("frames_received"),
        pl.col("decodable").sum().alias("frames_decodable"),
    ).with_columns(
        pl.col("p").map_elements(lambda i: PERIODS[i], return_dtype=pl.Utf8).alias("period"),
        (1 - pl.col("frames_received") / pl.col("frames_sent")).alias("frame_loss_rate"),
        (1 - pl.col("frames_decodable") / pl.col("frames_sent")).alias("decodable_frame_loss_rate"),
    ).drop("p").rename({"app": "group"})
    return out.filter(pl.col("frames_sent") > 0)


def summarise(df: pl.DataFrame, metric: str) -> pl.DataFrame:
    """Mean and 95 % CI of `metric` per (qdisc, period, group) over seeds."""
    rows = []
    for key, g in df.filter(pl.col(metric).is_not_null()).group_by(["qdisc", "period", "group"], maintain_order=True):
        rows.append(dict(zip(["qdisc", "period", "group"], key)) | mean_ci(g[metric].to_list()))
    return pl.DataFrame(rows)


def grouped_bars(s: pl.DataFrame, title: str, ylabel: str, scale: float = 1.0):
    """Bars per period (x) and discipline (colour) with 95 % CI error bars."""
    with plots._style():
        fig, ax = plt.subplots()
        qs = [q for q in NAMES.values() if q in s["qdisc"].to_list()]
        width = 0.8 / max(1, len(qs))
        for i, qd in enumerate(qs):
            for j, per in enumerate(PERIODS):
                r = s.filter((pl.col("qdisc") == qd) & (pl.col("period") == per))
                if not r.height:
                    continue
                m, lo, hi = r["mean"][0], r["ci_low"][0], r["ci_high"][0]
                err = [[(m - lo) * scale if lo is not None else 0.0], [(hi - m) * scale if hi is not None else 0.0]]
                ax.bar(j + (i - (len(qs) - 1) / 2) * width, m * scale, width, yerr=err, capsize=3,
                       color=plots.OKABE_ITO[i], label=qd if j == 0 else None)
        ax.set_xticks(range(len(PERIODS)), PERIODS)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        fig.tight_layout()
    return fig


def queue_series(sweep_dir: Path) -> list[Figure]:
    """Figure 4: the bottleneck's queue over the whole run (0-30 s, seed 1), RED and
    Rb-RIO (the paper's top and bottom panels)."""
    ts = load_runs(sweep_dir, "timeseries")
    if not ts.height:
        return []
    ts = ts.filter((pl.col("warmup") == "20s") & (pl.col("duration") == "30s") & (pl.col("seed") == 1)
                   & (pl.col("link") == LINK))
    with plots._style():
        fig, axes = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
        for ax, kind in zip(axes, ("red", "rb_rio")):
            f = ts.filter(pl.col(QDISC).map_elements(qdisc_kind, return_dtype=pl.Utf8) == kind).sort("time_ns")
            ax.plot((f["time_ns"] / 1e9).to_list(), f["qlen_pkts"].to_list(), lw=0.8, color=plots.OKABE_ITO[0])
            ax.set_ylabel("queue (packets)")
            ax.set_title(f"T1, {NAMES[kind]}: bottleneck queue")
            ax.set_ylim(0, 100)
        axes[-1].set_xlabel("time (s)")
        fig.tight_layout()
    return [Figure("T1-queue-series", "T1: bottleneck queue over time, RED and Rb-RIO (Figure 4)", fig,
                   "Seed 1, sampled every 100 ms (instantaneous queue; the average queue of the paper's "
                   "Figure 4 is not sampled). 40 flows, 20 more during 10-20 s.")]


def figures(dirs: dict[str, Path]) -> list[Figure]:
    plt.rcParams["figure.max_open_warning"] = 0  # the report holds every figure until it is written
    figs = []
    ci = "Mean over seeds with its 95 % interval (none with fewer than 3 seeds; percentile bootstrap where Student t would leave the range)."
    for exp, d in sorted(dirs.items()):
        m = run_metrics(d)
        link = m.filter(pl.col("group") == "link")
        n = int(link.group_by(["qdisc", "period"]).len()["len"].max())
        for metric, label, scale, what in [
            ("utilization", "utilisation (%)", 100, "Bottleneck utilisation"),
            ("drop_rate", "drop rate (%)", 100, "Bottleneck drop rate"),
            ("qlen_pkts_mean", "packets", 1, "Mean bottleneck queue"),
            ("jain", "Jain's index", 1, "Jain's fairness index over all active flows"),
        ]:
            figs.append(Figure(f"{exp}-{metric}", f"{exp}: {what} per period",
                               grouped_bars(summarise(link, metric), f"{exp}: {what}", label, scale),
                               f"{n} seeds. {ci}"))
        groups = [g for g in m["group"].unique(maintain_order=True).to_list() if g != "link"]
        for g in groups:
            gm = m.filter(pl.col("group") == g)
            figs.append(Figure(f"{exp}-{g}-throughput", f"{exp}: throughput of {g} per period",
                               grouped_bars(summarise(gm, "throughput_bps"), f"{exp}: {g} throughput", "Mbit/s", 1e-6),
                               f"Transport goodput of the whole group. {ci}"))
        fm = frame_metrics(d)
        for g in (fm["group"].unique(maintain_order=True).to_list() if fm.height else []):
            gf = fm.filter(pl.col("group") == g)
            for metric, what in [("decodable_frame_loss_rate", "decodable-frame loss"), ("frame_loss_rate", "frame loss")]:
                figs.append(Figure(f"{exp}-{g}-{metric}", f"{exp}: {what} of {g} per period",
                                   grouped_bars(summarise(gf, metric), f"{exp}: {g} {what}", "%", 100),
                                   f"1 − frames {'decodable' if 'decodable' in metric else 'received'} / frames sent "
                                   f"(frames sent in the period; frames skipped by media scaling are not sent). {ci}"))
    if "T1" in dirs:
        figs.extend(queue_series(dirs["T1"]))
    if "T2" in dirs:
        fr = load_runs(dirs["T2"], "frames").filter((pl.col("warmup") == "20s") & (pl.col("duration") == "30s")
                                                     & (pl.col("seed") == 1))
        for kind in ("pfifo", "rb_rio"):
            f = fr.filter(pl.col(QDISC).map_elements(qdisc_kind, return_dtype=pl.Utf8) == kind)
            if not f.height:
                continue
            flows = vplots.sample_flows(f, 3, "mpeg-resp") + vplots.sample_flows(f, 3, "mpeg-unresp")
            figs.append(Figure(f"T2-strip-{kind}", f"T2: decoded frames of sampled streams, {NAMES[kind]}",
                               vplots.strip(f, flows=flows, title=f"T2, {NAMES[kind]}: decoded frames (3 responsive, 3 unresponsive)"),
                               "Seed 1. A tick per decodable frame, coloured by type; gaps are frames lost, undecodable or skipped by media scaling. The unresponsive streams run 10-20 s."))
    return figs
