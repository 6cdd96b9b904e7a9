"""Figures and tables of the satellite-pep study (README.md; Byun's dissertation, 2007).

Every output of the dissertation (Chapters 4-6) from the runs' tables:
- output-link (`tx`) utilisation: mean over the run, and its std over 100 ms intervals
  (`timeseries.sent_bytes` differences);
- input-link (`rx`) throughput (what passes the receive queue) relative to 20 Mbit/s;
- transmit queue size mean and std (100 ms samples) and its time series;
- total drops at the receive queue (and at the transmit queue), the drop pattern of the
  first 1000 packets offered after the warm-up (experiment `pattern`, drop log);
- per-flow throughput std (server connections: page bytes / completion time) and the
  three UDP flows' throughput (experiment `fairness`);
- the marking/drop probability over time (`timeseries.drop_prob` at `rx`);
- the virtual capacity of AVQ/AVQRED/PFAVQRED over time (`timeseries.vcap_bps` at `rx`)
  next to the transmit queue;
- the fluid model (aqmlab.fluid) against the packet runs.

Per-run values are averaged over seeds with the 95 % Student-t interval.
`python studies/satellite-pep/figures.py OUT` prints the tables (README's numbers).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import polars as pl

from aqmlab.report import Figure
from aqmlab.stats import mean_ci

ORDER = ["RED1", "RED2", "RED3", "RED4", "SRED1", "SRED2", "AVQ", "AVQRED", "PFAVQRED"]
FC_ORDER = (["off", "0.97", "0.95", "0.90", "0.80", "0.50"] + [f"AVQRED {d}" for d in ("0.97", "0.95", "0.90", "0.80", "0.50")]
            + ["RED4-drop", "AVQRED-drop"])
TX_RATE = 20e6
SAMPLE_S = 0.1
PATTERN_PACKETS = 1000


def runs(sweep_dir: Path) -> list[tuple[str, int, Path, dict]]:
    """(description, seed, run folder, scenario) of every finished run."""
    out = []
    for rj in sorted((Path(sweep_dir) / "runs").glob("*/run.json")):
        r = json.loads(rj.read_text())
        if r.get("status") != "ok":
            continue
        scen = json.loads((rj.parent / "scenario.json").read_text())
        out.append((r["point"]["description"], r["seed"], rj.parent, scen))
    return out


def seconds(v) -> float:
    """A duration from a scenario ("100s", "15min", "90s", "500ms") in seconds."""
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    for unit, f in (("ms", 1e-3), ("min", 60.0), ("s", 1.0)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * f
    return float(s)


def queue_row(d: Path, link: str) -> dict:
    return pl.read_parquet(d / "queues.parquet").filter(pl.col("link") == link).to_dicts()[0]


def series(d: Path, link: str, warmup: float) -> pl.DataFrame:
    """The link's samples after the warm-up with `t` (s) and the utilisation per interval."""
    ts = pl.read_parquet(d / "timeseries.parquet").filter(pl.col("link") == link).sort("time_ns")
    ts = ts.with_columns((pl.col("time_ns") / 1e9).alias("t"))
    if "sent_bytes" in ts.columns:
        ts = ts.with_columns((pl.col("sent_bytes").diff() * 8 / (pl.col("rate_bps") * SAMPLE_S)).alias("util"))
    return ts.filter(pl.col("t") > warmup)


def flow_throughput(d: Path) -> np.ndarray:
    """Per-connection throughput (bit/s) of the server legs that carried a whole page after
    the warm-up (bytes ≥ 250 KB, the smallest page): bytes / completion time."""
    f = pl.read_parquet(d / "flows.parquet").filter(
        (pl.col("dst") == "gw") & (pl.col("bytes_delivered") >= 250_000) & pl.col("completion_s").is_finite()
        & (pl.col("completion_s") > 0))
    return (f["bytes_delivered"] * 8 / f["completion_s"]).to_numpy()


def run_metrics(d: Path, scen: dict) -> dict:
    """One run's outputs (the dissertation's metrics)."""
    warmup = seconds(scen.get("warmup", 0))
    tx, rx = queue_row(d, "tx"), queue_row(d, "rx")
    txs = series(d, "tx", warmup)
    m = {
        "tx_util": tx["utilization"],
        "tx_util_std": float(txs["util"].drop_nulls().std()) if "util" in txs.columns else math.nan,
        "rx_load": rx["throughput_bps"] / TX_RATE,
        # Byun's "input link utilisation" (Table 6.2: before the AQM marking): what is
        # offered to rx; the queues row counts arrivals in packets, so the offered bytes
        # are the passed bytes scaled by arrivals / dequeued (drops of the mean size).
        "rx_offered_mbps": rx["throughput_bps"] * rx["arrivals"] / max(rx["dequeued"], 1) / 1e6,
        "txq_mean": float(txs["qlen_pkts"].mean()),
        "txq_std": float(txs["qlen_pkts"].std()),
        "rx_drops": rx["drops"],
        "rx_drop_rate": rx["drop_rate"],
        "rx_marks": rx["marks"],
        "tx_drops": tx["drops"],
        "dp_mean": float(series(d, "rx", warmup)["drop_prob"].fill_nan(None).mean() or math.nan),
    }
    thr = flow_throughput(d)
    m["flow_thr_mean_kbps"] = float(thr.mean() / 1e3) if len(thr) else math.nan
    m["flow_thr_std_kbps"] = float(thr.std(ddof=1) / 1e3) if len(thr) > 1 else math.nan
    apps = pl.read_parquet(d / "apps.parquet")
    for a in ("udp80", "udp160", "udp320"):
        r = apps.filter(pl.col("app") == a)
        if len(r):
            m[f"{a}_kbps"] = r["goodput_window_bps"][0] / 1e3
    return m


def table(sweep_dir: Path, order: list[str]) -> pl.DataFrame:
    """Mean and 95 % CI half-width over seeds of every run metric, per point."""
    per: dict[str, list[dict]] = {}
    for desc, _, d, scen in runs(sweep_dir):
        per.setdefault(desc, []).append(run_metrics(d, scen))
    rows = []
    for desc in [o for o in order if o in per]:
        ms = per[desc]
        row = {"point": desc, "seeds": len(ms)}
        for k in ms[0]:
            vals = [m[k] for m in ms if k in m and m[k] is not None and not math.isnan(m[k])]
            if not vals:
                continue
            c = mean_ci(vals)
            row[k] = c["mean"]
            row[k + "_ci"] = c["ci_half"] if c["ci_half"] is not None else math.nan
        rows.append(row)
    return pl.DataFrame(rows)


def bar_panels(t: pl.DataFrame, panels: list[tuple[str, str]], title: str, xlabel: str):
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6))
    for ax, (k, label) in zip(np.atleast_1d(axes), panels):
        if k not in t.columns:
            ax.set_visible(False)
            continue
        ci = t[k + "_ci"].fill_null(0).fill_nan(0).to_numpy() if k + "_ci" in t.columns else None
        ax.bar(t["point"].to_list(), t[k].to_numpy(), yerr=ci, capsize=3, color="#4c78a8")
        ax.set_title(label, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.tick_params(axis="x", rotation=60, labelsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def first_seed(sweep_dir: Path) -> dict[str, tuple[Path, dict]]:
    out = {}
    for desc, seed, d, scen in sorted(runs(sweep_dir), key=lambda r: r[1]):
        out.setdefault(desc, (d, scen))
    return out


def timeseries_fig(sweep_dir: Path, column: str, link: str, ylabel: str, span: float = 60.0,
                   order: list[str] = ORDER):
    one = first_seed(sweep_dir)
    names = [o for o in order if o in one]
    fig, axes = plt.subplots(len(names), 1, figsize=(10, 1.4 * len(names) + 0.6), sharex=True)
    for ax, n in zip(np.atleast_1d(axes), names):
        d, scen = one[n]
        w = seconds(scen.get("warmup", 0))
        s = series(d, link, w).filter(pl.col("t") <= w + span)
        ax.plot(s["t"] - w, s[column], lw=0.8)
        ax.set_ylabel(n, fontsize=8)
        if column == "qlen_pkts":
            for th in (60, 120):
                ax.axhline(th, color="grey", lw=0.5, ls="--")
    np.atleast_1d(axes)[-1].set_xlabel("time after the warm-up (s)")
    fig.suptitle(ylabel)
    fig.tight_layout()
    return fig


def vcap_fig(sweep_dir: Path, span: float = 60.0):
    """The virtual capacity at rx (`timeseries.vcap_bps`) next to the transmit queue, for
    the virtual-queue disciplines (seed 1, from the start of the run: the ramp included)."""
    one = first_seed(sweep_dir)
    names = [o for o in ("AVQ", "AVQRED", "PFAVQRED") if o in one]
    fig, axes = plt.subplots(len(names), 1, figsize=(10, 1.8 * len(names) + 0.6), sharex=True, squeeze=False)
    for ax, n in zip(axes[:, 0], names):
        d, scen = one[n]
        w = seconds(scen.get("warmup", 0))
        q = series(d, "tx", 0.0).filter(pl.col("t") <= w + span)
        v = series(d, "rx", 0.0).filter(pl.col("t") <= w + span)
        ax.plot(q["t"], q["qlen_pkts"], lw=0.8, color="C0")
        ax.set_ylabel(f"{n}\ntx queue (pkts)", fontsize=8, color="C0")
        ax.axvline(w, color="grey", lw=0.5, ls="--")
        ax2 = ax.twinx()
        ax2.plot(v["t"], v["vcap_bps"] / 1e6, lw=0.8, color="C1")
        ax2.set_ylabel("virtual capacity (Mbit/s)", fontsize=8, color="C1")
        ax2.set_ylim(bottom=0)
    axes[-1, 0].set_xlabel("time (s); dashed: end of the warm-up")
    fig.suptitle("Transmit queue and the virtual capacity at rx, seed 1")
    fig.tight_layout()
    return fig


def drop_pattern(sweep_dir: Path) -> tuple[object, pl.DataFrame]:
    """The first 1000 packets offered to `rx` after the warm-up, as indices estimated from
    the drop times at the run's mean arrival rate (the drop log has the drops, not the
    arrivals): a strip per discipline, and the inter-drop gap's coefficient of variation
    (1 for random drops, < 1 spaced, > 1 clustered) over the whole measured window."""
    one = first_seed(sweep_dir)
    names = [o for o in ORDER if o in one]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(names) + 1.2))
    rows = []
    for i, n in enumerate(names):
        d, scen = one[n]
        w, end = seconds(scen.get("warmup", 0)), seconds(scen["duration"])
        rate = queue_row(d, "rx")["arrivals"] / (end - w)
        dr = pl.read_parquet(d / "drops.parquet").filter((pl.col("link") == "rx") & (pl.col("time_ns") / 1e9 > w))
        idx = ((dr["time_ns"].to_numpy() / 1e9 - w) * rate)
        first = idx[idx < PATTERN_PACKETS]
        ax.scatter(first, np.full(len(first), i), marker="|", s=60, lw=0.8)
        gaps = np.diff(idx)
        cv = float(gaps.std() / gaps.mean()) if len(gaps) > 2 else math.nan
        rows.append({"point": n, "drops_in_first_1000": len(first), "gap_cv": cv,
                     "back_to_back": float((gaps < 1.0).mean()) if len(gaps) else math.nan})
    ax.set_yticks(range(len(names)), names)
    ax.set_xlim(0, PATTERN_PACKETS)
    ax.set_xlabel("packet offered to the receive queue after the warm-up (index from the arrival rate)")
    ax.set_title("Drops among the first 1000 packets (seed 1)")
    fig.tight_layout()
    return fig, pl.DataFrame(rows)


def fluid_setting(n: int = 340):
    """The gateway as the MGT fluid model sees it (docs/access/fluid.md): N server
    connections (assumed 340, the concurrent server legs measured in the validation run),
    C = 20 Mbit/s of 1400 B packets, Tp = 70 ms (measured server-leg RTT), the RED 4
    curve on the transmit queue, windows capped at 16 000 B (11.4 packets)."""
    from aqmlab.fluid import Red, Setting
    return Setting(n=n, c=TX_RATE / (1400 * 8), tp=0.070, aqm=Red(60, 120, 0.7, 0.1), buffer=1000,
                   w_max=16000 / 1400)


def fluid_fig(sweep_dir: Path, t_end: float = 10.0):
    from aqmlab.fluid import solve
    traj = solve(fluid_setting(), t_end)
    one = first_seed(sweep_dir)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True)
    a1.plot(traj.t, traj.q, label="fluid model (from empty)", color="#e45756")
    a2.plot(traj.t, traj.p, color="#e45756", label="fluid p (marks seen by the senders)")
    if "RED4" in one:
        d, scen = one["RED4"]
        w = seconds(scen.get("warmup", 0))
        s = series(d, "tx", w).filter(pl.col("t") <= w + t_end)
        a1.plot(s["t"] - w, s["qlen_pkts"], label="packet run: transmit queue (after the warm-up)", lw=0.8)
        r = series(d, "rx", w).filter(pl.col("t") <= w + t_end)
        a2.plot(r["t"] - w, r["drop_prob"], label="packet run: RED p_b at rx", lw=0.8)
        a2.axhline(queue_row(d, "rx")["drop_rate"], color="#4c78a8", ls="--", lw=1,
                   label="packet run: fraction of rx arrivals dropped (whole run)")
    a1.set_ylabel("transmit queue (packets)")
    a2.set_ylabel("drop/mark probability")
    a2.set_xlabel("time (s)")
    a1.legend(fontsize=8)
    a2.legend(fontsize=8)
    fig.suptitle("RED 4: MGT fluid model vs the packet simulator")
    fig.tight_layout()
    return fig, traj


def figures(dirs: dict[str, Path]) -> list[Figure]:
    plt.rcParams["figure.max_open_warning"] = 0
    figs = []
    if "main" in dirs:
        t = table(dirs["main"], ORDER)
        n = int(t["seeds"].min())
        ci = f"Mean over {n} seeds with the 95 % Student-t interval."
        figs.append(Figure("main-utilisation", "Output-link utilisation and input load", bar_panels(t, [
            ("tx_util", "output-link (tx) utilisation"), ("tx_util_std", "std of tx utilisation (100 ms)"),
            ("rx_load", "rx throughput / 20 Mbit/s")], "Utilisation", "discipline at rx"), ci))
        figs.append(Figure("main-queue-drops", "Transmit queue and drops", bar_panels(t, [
            ("txq_mean", "tx queue mean (pkts)"), ("txq_std", "tx queue std (pkts)"),
            ("rx_drop_rate", "rx drop rate"), ("tx_drops", "tx overflow drops")], "Queue and drops", "discipline at rx"), ci))
        figs.append(Figure("main-flow-throughput", "Per-connection throughput", bar_panels(t, [
            ("flow_thr_mean_kbps", "server connection throughput mean (kbit/s)"),
            ("flow_thr_std_kbps", "its std across connections (kbit/s)")], "Per-flow throughput", "discipline at rx"),
            ci + " Server legs that carried ≥ 250 KB after the warm-up: bytes / completion time."))
        figs.append(Figure("main-txq-timeseries", "Transmit queue over time",
                           timeseries_fig(dirs["main"], "qlen_pkts", "tx", "transmit queue (packets), seed 1"),
                           "100 ms samples, the first 60 s after the warm-up; dashed: RED's 60/120 thresholds."))
        figs.append(Figure("main-marking-probability", "Drop probability over time",
                           timeseries_fig(dirs["main"], "drop_prob", "rx", "drop probability at rx (the discipline's own, seed 1)"),
                           "The discipline's reported probability (RED: p_b before count spacing); empty where the "
                           "discipline reports none."))
        figs.append(Figure("main-virtual-capacity", "Virtual capacity and transmit queue (AVQ, AVQRED, PFAVQRED)",
                           vcap_fig(dirs["main"]),
                           "100 ms samples from the start of the run: the virtual capacity the discipline at rx "
                           "drains its virtual queue with (`timeseries.vcap_bps`) against the real transmit queue."))
        fig, _ = fluid_fig(dirs["main"])
        figs.append(Figure("fluid", "Fluid model vs packet runs (RED 4)", fig,
                           "MGT fluid model (aqmlab.fluid) with N = 340 server connections, C = 1786 pkt/s, Tp = 70 ms, "
                           "RED 4 on the transmit queue, W ≤ 11.4 packets; packet run seed 1 after its warm-up."))
    if "pattern" in dirs:
        fig, _ = drop_pattern(dirs["pattern"])
        figs.append(Figure("pattern-first-1000", "Drop pattern of the first 1000 packets", fig,
                           "Each mark is a drop at the receive queue; packet index = time since the warm-up × the "
                           "run's mean arrival rate at rx."))
    if "fairness" in dirs:
        t = table(dirs["fairness"], ORDER)
        n = int(t["seeds"].min())
        figs.append(Figure("fairness", "Fairness: 500 users and three UDP flows", bar_panels(t, [
            ("udp80_kbps", "UDP 80 kbit/s: goodput (kbit/s)"), ("udp160_kbps", "UDP 160 kbit/s"),
            ("udp320_kbps", "UDP 320 kbit/s"), ("flow_thr_std_kbps", "TCP per-flow throughput std (kbit/s)")],
            "Fairness", "discipline at rx"), f"Mean over {n} seeds with the 95 % Student-t interval."))
    if "flowcontrol" in dirs:
        t = table(dirs["flowcontrol"], FC_ORDER)
        n = int(t["seeds"].min())
        figs.append(Figure("flowcontrol", "Buffer flow control: decr", bar_panels(t, [
            ("tx_util", "output-link utilisation"), ("txq_mean", "tx queue mean (pkts)"),
            ("tx_drops", "tx overflow drops"), ("rx_marks", "CE marks at rx")], "Buffer flow control (RED 4 marking)",
            "decr (off: no flow control)"), f"Mean over {n} seeds with the 95 % Student-t interval."))
        figs.append(Figure("flowcontrol-marking-probability", "Buffer flow control: marking probability over time",
                           timeseries_fig(dirs["flowcontrol"], "drop_prob", "rx",
                                          "marking probability at rx (the discipline's own, seed 1)", order=FC_ORDER),
                           "Byun Figs. 6.20-6.29: RED 4's p_b (RED FC) and AVQRED's RED probability on its virtual "
                           "queue (AVQRED FC), 100 ms samples, the first 60 s after the warm-up."))
    return figs


def main(out: str) -> None:
    pl.Config.set_tbl_rows(50)
    pl.Config.set_tbl_cols(40)
    pl.Config.set_tbl_width_chars(250)
    pl.Config.set_float_precision(3)
    o = Path(out)
    for exp, order in (("main", ORDER), ("fairness", ORDER), ("flowcontrol", FC_ORDER)):
        if (o / exp / "runs").is_dir():
            print(f"== {exp}")
            print(table(o / exp, order))
    if (o / "pattern" / "runs").is_dir():
        print("== pattern")
        print(drop_pattern(o / "pattern")[1])
    if (o / "main" / "runs").is_dir():
        _, traj = fluid_fig(o / "main")
        half = traj.t > traj.t[-1] / 2
        print(f"== fluid: q mean {traj.q[half].mean():.1f} pkts, p mean {traj.p[half].mean():.3f}, "
              f"W mean {traj.w[half].mean():.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
