"""Figures of the l4s study (see README.md), and the numbers its README quotes
(`headline`, also ``python studies/l4s/figures.py OUT`` for a finished run)."""

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from aqmlab import load_runs
from aqmlab.plots import LINESTYLES, MARKERS, OKABE_ITO, _legend_below, _style
from aqmlab.report import Figure

LINK = "L->R"
QUEUES = {"L": f"{LINK}.L", "C": f"{LINK}.C"}
QDISC = "topology.bottleneck.qdisc"

# Published steady-state rates (Mbit/s) of Heist and Morton's l4s-tests
# (github.com/heistp/l4s-tests, commit e21cd91, README.md "Scenario 1 Fairness Table"
# and "Scenario 6 Fairness Table"), for the rows this study repeats.
# Scenario 1, 50 Mbit/s, 160 ms vs 10 ms: (long-RTT rate, short-RTT rate).
HEIST_S1 = {
    ("dualpi2", "prague/prague"): (1.56, 45.46),
    ("dualpi2", "cubic/prague"): (4.87, 41.67),
    ("dualpi2", "prague/cubic"): (10.13, 37.28),
    ("dualpi2", "cubic/cubic"): (10.74, 36.50),
    ("fq_codel", "prague/prague"): (23.87, 23.83),
    ("fq_codel", "cubic/prague"): (21.35, 25.55),
    ("fq_codel", "prague/cubic"): (23.87, 23.49),
    ("fq_codel", "cubic/cubic"): (21.32, 25.36),
}
# Scenario 6, 50 Mbit/s, 20 ms: (Prague, CUBIC) by qdisc and CUBIC's ECN.
HEIST_S6 = {
    ("fq_codel(1q)", True): (45.70, 1.94),
    ("fq_codel(1q,1ms/20ms)", True): (45.94, 1.68),
    ("pie", True): (45.69, 1.98),
    ("fq_codel(1q)", False): (45.81, 1.81),
    ("fq_codel(1q,1ms/20ms)", False): (45.76, 1.83),
    ("pie", False): (45.57, 2.01),
}
# "Underutilization with Bursty Traffic" (same README), 20 Mbit/s, 160 ms: steady-state
# goodput (Mbit/s) of the bulk flow alone and with Skype video in L or C.
HEIST_BURST = {
    "prague": 18.27, "prague + video in L": 2.29, "prague + video in C": 12.64,
    "cubic": 16.22, "cubic + video in L": 13.39, "cubic + video in C": 14.53,
}


def qdisc_name(q) -> str:
    """A short name of a swept qdisc table (as l4s-tests writes it)."""
    if not isinstance(q, dict):
        q = dict(kv.split("=", 1) for kv in str(q).split(","))
    kind = q.get("kind", "")
    if kind == "fq_codel" and str(q.get("flows")) == "1":
        return "fq_codel(1q,1ms/20ms)" if q.get("target") == "1ms" else "fq_codel(1q)"
    return kind


def hist_quantile(h: pl.DataFrame, q: float) -> float:
    """The q-quantile of pooled sojourn buckets: the middle of the bucket holding it
    (as the simulator's own histogram quantiles)."""
    h = h.group_by(["sojourn_ms_low", "sojourn_ms_high"]).agg(pl.col("packets").sum()).sort("sojourn_ms_low")
    if h.height == 0:
        return float("nan")
    cum = np.cumsum(h["packets"].to_numpy())
    i = int(np.searchsorted(cum, q * cum[-1]))
    return float((h["sojourn_ms_low"][i] + h["sojourn_ms_high"][i]) / 2)


def queue_delays(sweep_dir: Path, by: str = "label", queues: dict[str, str] = QUEUES) -> pl.DataFrame:
    """Per point: the L and C queues' sojourn p50 and p99 (ms), seeds pooled."""
    h = load_runs(sweep_dir, "sojourn_hist")
    rows = []
    for key in dict.fromkeys(h[by].to_list()):
        row = {by: key}
        for name, link in queues.items():
            hq = h.filter((pl.col(by) == key) & (pl.col("link") == link))
            row[f"{name}_p50_ms"] = hist_quantile(hq, 0.5)
            row[f"{name}_p99_ms"] = hist_quantile(hq, 0.99)
        rows.append(row)
    return pl.DataFrame(rows)


def jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum())) if len(x) and x.sum() > 0 else float("nan")


def rate_balance(sweep_dir: Path, a: str, b: str, by: str = "label") -> pl.DataFrame:
    """Per run: the mean per-flow window goodput of the flows of app `a` over that of
    app `b`, and Jain's index over every flow; then the mean over the seeds."""
    f = load_runs(sweep_dir, "flows")
    rows = []
    for (key, seed), g in f.group_by([by, "seed"], maintain_order=True):
        ra = g.filter(pl.col("app") == a)["goodput_window_bps"].to_numpy()
        rb = g.filter(pl.col("app") == b)["goodput_window_bps"].to_numpy()
        rows.append({by: key, "seed": seed, "a_mbps": ra.mean() / 1e6, "b_mbps": rb.mean() / 1e6,
                     "ratio": ra.mean() / rb.mean(), "jain": jain(g["goodput_window_bps"].to_numpy())})
    return pl.DataFrame(rows).group_by(by, maintain_order=True).agg(pl.all().exclude("seed").mean(), pl.len().alias("n"))


def delay_cdf_figure(sweep_dir: Path, by: str, title: str, queues: dict[str, str] = QUEUES) -> object:
    """L (solid) and C (dashed) per-packet sojourn CDFs, one colour per point."""
    h = load_runs(sweep_dir, "sojourn_hist")
    with _style():
        fig, ax = plt.subplots()
        for i, key in enumerate(dict.fromkeys(h[by].to_list())):
            for j, (name, link) in enumerate(queues.items()):
                g = (h.filter((pl.col(by) == key) & (pl.col("link") == link))
                     .group_by("sojourn_ms_high").agg(pl.col("packets").sum()).sort("sojourn_ms_high"))
                if g.height == 0:
                    continue
                y = np.cumsum(g["packets"].to_numpy()) / g["packets"].sum()
                ax.step(g["sojourn_ms_high"].to_numpy(), y, where="post", color=OKABE_ITO[i % len(OKABE_ITO)],
                        linestyle=LINESTYLES[j], label=f"{key} {name}")
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(left=0)
        ax.set_ylim(0, 1.01)
        ax.set_xlabel("sojourn time (ms)")
        ax.set_ylabel("fraction of packets ≤ x")
        ax.set_title(title)
        _legend_below(ax)
        fig.tight_layout()
    return fig


def bar_figure(labels: list[str], series: dict[str, list[float]], ylabel: str, title: str, logy: bool = False,
               hline: float | None = None) -> object:
    with _style():
        fig, ax = plt.subplots()
        x = np.arange(len(labels))
        w = 0.8 / max(len(series), 1)
        for i, (name, vals) in enumerate(series.items()):
            ax.bar(x + (i - (len(series) - 1) / 2) * w, vals, w, color=OKABE_ITO[i % len(OKABE_ITO)], label=name)
        if hline is not None:
            ax.axhline(hline, color="#555", linewidth=0.8, linestyle=":")
        ax.set_xticks(x, labels, rotation=20, ha="right")
        ax.set_ylabel(ylabel)
        if logy:
            ax.set_yscale("log")
        if len(series) > 1:
            # Above the axes: the slanted category labels take the room below.
            ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
            ax.set_title(title, pad=12 + 12 * -(-len(series) // 2))
        else:
            ax.set_title(title)
        fig.tight_layout()
    return fig


def coexistence_figures(d: Path) -> list[Figure]:
    rb = rate_balance(d, "prague", "cubic", by="description")
    qd = queue_delays(d, by="description")
    labels = rb["description"].to_list()
    n = int(rb["n"].max())
    return [
        Figure("coexistence-cdf", "L- and C-queue sojourn CDFs per Prague:CUBIC mix",
               delay_cdf_figure(d, "description", "DualPI2, 100 Mbit/s, 20 ms: L (solid) and C (dashed) queue"),
               f"Every packet dequeued after the warm-up, from the per-queue histograms (rows L->R.L, L->R.C), {n} seed(s) pooled. "
               f"L p99 per mix: {', '.join(f'{k} {v:.2f} ms' for k, v in zip(qd['description'], qd['L_p99_ms']))}; "
               f"C p99: {', '.join(f'{k} {v:.1f} ms' for k, v in zip(qd['description'], qd['C_p99_ms']))}."),
        Figure("coexistence-ratio", "Per-flow rate balance Prague:CUBIC versus the flow mix",
               bar_figure(labels, {"Prague / CUBIC per-flow goodput": rb["ratio"].to_list()}, "rate ratio",
                          "Per-flow rate balance (1 = equal per-flow rates)", hline=1.0),
               f"Mean Prague flow's window goodput over the mean CUBIC flow's, mean of {n} seed(s). RFC 9332 §2.4 aims at roughly 1 with k = 2."),
        Figure("coexistence-jain", "Jain's fairness index over all flows versus the flow mix",
               bar_figure(labels, {"Jain's index": rb["jain"].to_list()}, "Jain's index", "Jain's index over every bulk flow", hline=1.0),
               f"(Σx)²/(n·Σx²) over every flow's window goodput; mean of {n} seed(s)."),
    ]


def latency_figures(d: Path) -> list[Figure]:
    qd = queue_delays(d, by="description")
    labels = qd["description"].to_list()
    return [
        Figure("latency-percentiles", "L- and C-queue median and 99th percentile sojourn per base RTT and jitter",
               bar_figure(labels, {"L p50": qd["L_p50_ms"].to_list(), "L p99": qd["L_p99_ms"].to_list(),
                                   "C p50": qd["C_p50_ms"].to_list(), "C p99": qd["C_p99_ms"].to_list()},
                          "sojourn (ms)", "One Prague + one CUBIC flow, DualPI2, 100 Mbit/s", logy=True),
               "Percentiles of every packet's sojourn in each queue, seeds pooled. Jitter is added after the bottleneck "
               "(it moves arrivals at the receiver and the ACK clock, not the bottleneck queue itself)."),
        Figure("latency-cdf", "L- and C-queue sojourn CDFs per base RTT and jitter",
               delay_cdf_figure(d, "description", "L (solid) and C (dashed) queue"), "Seeds pooled."),
    ]


def capacity_step_figures(d: Path) -> list[Figure]:
    ts = load_runs(d, "timeseries").filter(pl.col("link") == LINK)
    fs = load_runs(d, "flow_series")
    flows = load_runs(d, "flows").select(["run_id", "flow", "app"])
    figs = []
    for desc in dict.fromkeys(ts["description"].to_list()):
        t = ts.filter(pl.col("description") == desc)
        rid = t["run_id"][0]
        t = t.filter(pl.col("run_id") == rid).sort("time_ns")
        f = fs.filter(pl.col("run_id") == rid).join(flows, on=["run_id", "flow"]).sort(["flow", "time_ns"])
        with _style():
            fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True)
            ax1.plot(t["time_ns"].to_numpy() / 1e9, t["sojourn_ms"].to_numpy(), color=OKABE_ITO[0], linewidth=0.8)
            ax1.set_ylabel("sojourn (ms)")
            ax1.set_title(f"Capacity step {desc}: last dequeued packet's sojourn, per-flow goodput")
            for i, (app, g) in enumerate(f.group_by("app", maintain_order=True)):
                tt = g["time_ns"].to_numpy() / 1e9
                b = g["bytes_delivered"].to_numpy().astype(float)
                rate = np.diff(b) * 8 / np.diff(tt) / 1e6
                # The counters restart at the warm-up: no rate across that sample.
                rate[rate < 0] = np.nan
                ax2.plot(tt[1:], rate, color=OKABE_ITO[i + 1], linestyle=LINESTYLES[i], marker=MARKERS[i],
                         markevery=20, markersize=3, linewidth=0.8, label=str(app[0]))
            ax2.set_ylabel("goodput (Mbit/s)")
            ax2.set_xlabel("time (s)")
            ax2.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
            fig.tight_layout()
        figs.append(Figure(f"capacity-step-{len(figs)}", f"Capacity step {desc}", fig,
                           "First seed; 100 ms samples. The goodput is the difference of the delivered-bytes counters (restarted at the warm-up)."))
    return figs


def rfc3168_table(d: Path) -> pl.DataFrame:
    f = load_runs(d, "flows")
    f = f.with_columns(pl.col(QDISC).map_elements(qdisc_name, return_dtype=pl.Utf8).alias("qdisc"))
    f = f.with_columns(pl.col("traffic[0].cc").cast(pl.Utf8).str.contains("ecn_fallback=1").alias("fallback"))
    rows = []
    for (q, ecn, fb), g in f.group_by(["qdisc", "traffic[1].ecn", "fallback"], maintain_order=True):
        p = g.filter(pl.col("app") == "prague")["goodput_window_bps"].mean() / 1e6
        c = g.filter(pl.col("app") == "cubic")["goodput_window_bps"].mean() / 1e6
        pub = None if fb else HEIST_S6.get((q, bool(ecn)))
        rows.append({"qdisc": q, "cubic_ecn": bool(ecn), "prague_fallback": bool(fb), "prague_mbps": p, "cubic_mbps": c,
                     "ratio": p / c, "published_ratio": pub[0] / pub[1] if pub else float("nan")})
    return pl.DataFrame(rows)


def rfc3168_figures(d: Path) -> list[Figure]:
    t = rfc3168_table(d)
    labels = [f"{q}, CUBIC {'ECN' if e else 'no ECN'}{', fallback' if fb else ''}"
              for q, e, fb in zip(t["qdisc"], t["cubic_ecn"], t["prague_fallback"])]
    return [Figure("rfc3168-ratio", "Prague:CUBIC rate ratio at a single RFC 3168 queue",
                   bar_figure(labels, {"aqmlab": t["ratio"].to_list(), "l4s-tests (published)": t["published_ratio"].to_list()},
                              "Prague / CUBIC goodput", "One Prague vs one CUBIC flow, 50 Mbit/s, 20 ms", logy=True, hline=1.0),
                   "Window goodput ratio (mean over seeds) next to Heist and Morton's steady-state ratio (l4s-tests scenario 6; "
                   "no published number for DualPI2 or for Prague with its classic-ECN fallback on, `fallback`).")]


def rtt_table(d: Path) -> pl.DataFrame:
    f = load_runs(d, "flows")
    f = f.with_columns(pl.col(QDISC).map_elements(qdisc_name, return_dtype=pl.Utf8).alias("qdisc"))
    rows = []
    for (q, desc), g in f.group_by(["qdisc", "description"], maintain_order=True):
        lo = g.filter(pl.col("app") == "long")["goodput_window_bps"].mean() / 1e6
        sh = g.filter(pl.col("app") == "short")["goodput_window_bps"].mean() / 1e6
        pub = HEIST_S1.get((q, desc))
        rows.append({"qdisc": q, "pair": desc, "long_mbps": lo, "short_mbps": sh, "ratio": sh / lo,
                     "published_ratio": pub[1] / pub[0] if pub else float("nan")})
    return pl.DataFrame(rows)


def rtt_figures(d: Path) -> list[Figure]:
    t = rtt_table(d)
    labels = [f"{q}: {p}" for q, p in zip(t["qdisc"], t["pair"])]
    return [Figure("rtt-unfairness", "RTT unfairness: 10 ms over 160 ms flow's rate",
                   bar_figure(labels, {"aqmlab": t["ratio"].to_list(), "l4s-tests (published)": t["published_ratio"].to_list()},
                              "short-RTT / long-RTT goodput", "160 ms vs 10 ms base RTT, 50 Mbit/s (pair: long/short CC)",
                              logy=True, hline=1.0),
                   "Window goodput of the 10 ms flow over the 160 ms flow's (mean over seeds), next to Heist and Morton's "
                   "steady-state ratio (l4s-tests scenario 1). The base-RTT ratio is 16.")]


def burst_table(d: Path) -> pl.DataFrame:
    a = load_runs(d, "apps").filter(pl.col("app") == "bulk")
    t = a.group_by("description", maintain_order=True).agg((pl.col("goodput_window_bps").mean() / 1e6).alias("bulk_mbps"))
    return t.with_columns(pl.col("description").replace_strict(HEIST_BURST, default=None).alias("published_mbps"))


def burst_figures(d: Path) -> list[Figure]:
    t = burst_table(d)
    qd = queue_delays(d, by="description")
    return [
        Figure("burst-goodput", "Bulk goodput next to a bursty video stream in L or C",
               bar_figure(t["description"].to_list(), {"aqmlab": t["bulk_mbps"].to_list(), "l4s-tests (published, Skype)": t["published_mbps"].to_list()},
                          "bulk goodput (Mbit/s)", "One bulk flow, 20 Mbit/s, 160 ms, DualPI2"),
               "Window goodput of the bulk flow (mean over seeds) next to Heist and Morton's steady-state goodput with a real Skype call "
               "(l4s-tests, \"Underutilization with Bursty Traffic\"). The video here is aqmlab's GOP model at about Skype's measured rate."),
        Figure("burst-cdf", "L- and C-queue sojourn CDFs with and without the bursty video",
               delay_cdf_figure(d, "description", "L (solid) and C (dashed) queue, 20 Mbit/s, 160 ms"),
               f"Seeds pooled. L p99: {', '.join(f'{k} {v:.2f} ms' for k, v in zip(qd['description'], qd['L_p99_ms']) if v == v)}."),
    ]


# The LLD modem's service-flow queues (docs/access/lld.md).
LLD_QUEUES = {"L": "upstream.ll", "C": "upstream.classic"}


def residential_apps(d: Path) -> pl.DataFrame:
    """Per point and app: window goodput (Mbit/s), mean and 99th percentile one-way
    delay (ms, mean over the app's flows and seeds)."""
    f = load_runs(d, "flows")
    return (f.group_by(["description", "app"], maintain_order=True)
            .agg((pl.col("goodput_window_bps").sum() / pl.col("seed").n_unique() / 1e6).alias("goodput_mbps"),
                 pl.col("owd_ms_mean").mean(), pl.col("owd_ms_p99").mean()))


def sanctions(d: Path) -> pl.DataFrame:
    """Queue Protection per point and app: packets classified to the LL SF and those
    sanctioned into the Classic SF (table lld_flows), summed over seeds."""
    q = load_runs(d, "lld_flows")
    if q.height == 0:
        return pl.DataFrame(schema={"description": pl.Utf8, "app": pl.Utf8, "ll_packets": pl.UInt64,
                                    "sanctioned_packets": pl.UInt64, "sanctioned_share": pl.Float64})
    apps = load_runs(d, "flows").select(["run_id", "flow", "app"])
    return (q.join(apps, on=["run_id", "flow"]).group_by(["description", "app"], maintain_order=True)
            .agg(pl.col("ll_packets").sum(), pl.col("sanctioned_packets").sum())
            .with_columns((pl.col("sanctioned_packets") / pl.col("ll_packets")).alias("sanctioned_share")))


def residential_figures(d: Path) -> list[Figure]:
    qd = queue_delays(d, "description", LLD_QUEUES)
    apps = residential_apps(d)
    sq = sanctions(d)
    labels = list(dict.fromkeys(apps["description"].to_list()))
    names = ["game", "udp-be", "prague-up", "tcp-up", "flood"]

    def per(col: str, app: str) -> list[float]:
        return [apps.filter((pl.col("description") == k) & (pl.col("app") == app))[col].mean() for k in labels]

    sanc = [f"{r['description']}: {r['app']} {r['sanctioned_packets']} of {r['ll_packets']}" for r in sq.iter_rows(named=True)]
    return [
        Figure("residential-cdf", "LLD upstream: LL and Classic service-flow sojourn CDFs",
               delay_cdf_figure(d, "description", "LLD modem upstream: LL (solid) and Classic (dashed) SF", LLD_QUEUES),
               "Every packet through the modem's two service-flow queues after the warm-up (rows upstream.ll, upstream.classic), "
               f"seeds pooled. LL p99: {', '.join(f'{k} {v:.2f} ms' for k, v in zip(qd['description'], qd['L_p99_ms']))}; "
               f"Classic p99: {', '.join(f'{k} {v:.1f} ms' for k, v in zip(qd['description'], qd['C_p99_ms']))}."),
        Figure("residential-owd", "Upstream one-way delay per application",
               bar_figure(labels, {f"{a} p99": per("owd_ms_p99", a) for a in names[:3]}, "one-way delay (ms)",
                          "99th percentile one-way delay, upstream apps", logy=True),
               "Per flow, then averaged over the app's flows and seeds; base one-way delay 3 ms (1 ms modem latency, 2 ms to the server)."),
        Figure("residential-sanctions", "Queue Protection sanctions per application",
               bar_figure(labels, {a: [sq.filter((pl.col("description") == k) & (pl.col("app") == a))["sanctioned_share"].sum()
                                        for k in labels] for a in ("game", "prague-up", "flood")},
                          "sanctioned / LL-classified packets", "Queue Protection: share of each app's LL packets sanctioned"),
               "From the LLD model's lld_flows table (packets classified to the LL SF and those Queue Protection moved to the "
               f"Classic SF), seeds summed. {'; '.join(sanc) if sanc else 'No packet was sanctioned.'}"),
    ]


def figures(dirs: dict[str, Path]) -> list[Figure]:
    figs = []
    for name, make in (("coexistence", coexistence_figures), ("latency", latency_figures),
                       ("capacity-step", capacity_step_figures), ("rfc3168", rfc3168_figures),
                       ("rtt-unfairness", rtt_figures), ("burst", burst_figures), ("residential", residential_figures)):
        if name in dirs:
            figs += make(dirs[name])
    return figs


def headline(out: Path) -> None:
    """Print the numbers the README quotes."""
    pl.Config.set_tbl_rows(50)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_float_precision(3)
    pl.Config.set_tbl_width_chars(200)
    if (out / "coexistence").is_dir():
        d = out / "coexistence"
        print(queue_delays(d, "description").join(rate_balance(d, "prague", "cubic", "description"), on="description"))
    if (out / "latency").is_dir():
        print(queue_delays(out / "latency", "description"))
    if (out / "rfc3168").is_dir():
        print(rfc3168_table(out / "rfc3168"))
    if (out / "rtt-unfairness").is_dir():
        print(rtt_table(out / "rtt-unfairness"))
    if (out / "residential").is_dir():
        d = out / "residential"
        print(queue_delays(d, "description", LLD_QUEUES))
        print(residential_apps(d))
        print(sanctions(d))
    if (out / "burst").is_dir():
        print(burst_table(out / "burst").join(queue_delays(out / "burst", "description"), on="description"))


if __name__ == "__main__":
    headline(Path(sys.argv[1]))
