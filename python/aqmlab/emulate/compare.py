"""Simulated versus emulated: one scenario run both ways with the same seed
(``aqmlab compare-real``). The simulation uses TCP profile ``linux`` for every TCP
entry (the profile whose defaults follow the kernel), the emulation the kernel itself;
the side-by-side table is where the TCP model departs from Linux.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from ..runner import run as simulate
from ..scenario import ScenarioLike, load_scenario

if TYPE_CHECKING:
    from ..results import Results

#: The compared metrics: (name, what it is). All at the bottleneck `L->R` or summed
#: over the forward flows, after the warm-up; every one means the same on both sides.
METRICS = [
    ("goodput_mbps", "sum of the flows' goodput, Mbit/s"),
    ("utilization", "bottleneck busy time / measured time"),
    ("sojourn_ms_mean", "bottleneck sojourn, mean"),
    ("sojourn_ms_p95", "bottleneck sojourn, 95th percentile"),
    ("drop_pct", "bottleneck drops / arrivals, % (0/0 without arrivals)"),
    ("retransmits", "TCP retransmitted segments, all flows"),
    ("timeouts", "TCP retransmission timeouts, all flows"),
    ("jain", "Jain's fairness index of the TCP flows' goodput"),
    ("bytes_sent_mb", "TCP data on the wire, MB: payload + 52 B headers per data segment, retransmissions included"),
    ("srtt_ms_mean", "mean of each TCP sender's smoothed RTT sampled every 100 ms (simulator SRTT / kernel tcpi_rtt)"),
    ("in_flight_kb_mean", "mean of the TCP senders' bytes in flight (RFC 6675 pipe / kernel packets_out − sacked − lost + retrans), kB, sampled every 100 ms"),
]

#: Sampling interval of the TCP time series both sides record for srtt and in-flight.
TCP_SERIES = "100ms"

#: Kernel settings recorded with every comparison (read in a fresh network namespace,
#: as the emulation's namespaces start, then the scenario's own per-namespace settings).
SYSCTLS = [
    "net.core.default_qdisc", "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_sack", "net.ipv4.tcp_ecn", "net.ipv4.tcp_timestamps", "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_early_retrans", "net.ipv4.tcp_frto", "net.ipv4.tcp_dsack", "net.ipv4.tcp_comp_sack_nr",
    "net.ipv4.tcp_comp_sack_delay_ns", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_pacing_ss_ratio",
    "net.ipv4.tcp_pacing_ca_ratio", "net.ipv4.tcp_min_rtt_wlen", "net.ipv4.tcp_reordering",
]


def linux_profile(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with ``profile = "linux"`` on every TCP entry that does not name one."""
    doc = copy.deepcopy(doc)
    for t in doc.get("traffic", []):
        if str(t.get("kind", "")).startswith("tcp") and "profile" not in t:
            t["profile"] = "linux"
    return doc


def with_tcp_series(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` recording the TCP time series (srtt, in flight) at `TCP_SERIES`."""
    doc = copy.deepcopy(doc)
    doc.setdefault("output", {})["tcp_timeseries"] = TCP_SERIES
    return doc


def ratio(num: float, den: float) -> float:
    """num/den, NaN for 0/0 (`ratio_text` shows it as "0/0")."""
    if num is None or den is None or math.isnan(num) or math.isnan(den) or den == 0:
        return math.nan
    return num / den


def ratio_text(num: float, den: float) -> str:
    """How a ratio is shown: "0/0" when both are zero, "n/0" for a zero denominator,
    "nan" only when a side has no value."""
    if num is None or den is None or math.isnan(num) or math.isnan(den):
        return "nan"
    if den == 0:
        return "0/0" if num == 0 else f"{num:.4g}/0"
    return f"{num / den:.3f}"


def _series_mean(res: Results, col: str, scale: float, warmup_ns: int) -> float:
    t = getattr(res, "tcp", None)
    if t is None or t.height == 0:
        return math.nan
    v = t.filter(pl.col("time_ns") >= warmup_ns)[col].drop_nulls().drop_nans()
    return float(v.mean()) * scale if v.len() else math.nan


def metrics(res: Results, warmup_ns: int = 0) -> dict[str, float]:
    q = res.queues.filter(pl.col("link") == res.queues["link"][0]).row(0, named=True)
    tcp = res.flows.filter(pl.col("kind") == "tcp")
    g = tcp["goodput_window_bps"].to_list()
    jain = (sum(g) ** 2 / (len(g) * sum(x * x for x in g))) if g and any(g) else math.nan
    return {
        "goodput_mbps": float(res.flows["goodput_window_bps"].sum()) / 1e6,
        "utilization": q["utilization"],
        "sojourn_ms_mean": q["sojourn_ms_mean"],
        "sojourn_ms_p95": q["sojourn_ms_p95"],
        "drop_pct": 100.0 * ratio(q["drops"], q["arrivals"]),
        "retransmits": float(tcp["retransmits"].sum()) if tcp.height else 0.0,
        "timeouts": float(tcp["timeouts"].sum()) if tcp.height else 0.0,
        "jain": jain,
        "bytes_sent_mb": float(tcp["bytes_sent"].sum()) / 1e6 if tcp.height else 0.0,
        "srtt_ms_mean": _series_mean(res, "srtt_ms", 1.0, warmup_ns),
        "in_flight_kb_mean": _series_mean(res, "bytes_in_flight", 1e-3, warmup_ns),
    }


#: An emulated run is trusted only if its emulator kept up: p99 scheduling error at most
#: this (µs; docs/emulation.md measured ≤ 0.13 ms at every supported rate on a loaded
#: machine) and at most this fraction of datagrams later than 1 ms.
TRUST_P99_US = 1000.0
TRUST_LATE_FRACTION = 0.001


def emulator_health(res: Results) -> dict[str, Any]:
    """The emulator's timing in one run: p99 and p99.9 scheduling error (µs), datagrams
    later than 1 ms, datagrams, and whether it kept up (`trustworthy`)."""
    e = res.emulation.row(0, named=True)
    return {"sched_err_us_p99": e["sched_err_us_p99"], "sched_err_us_p999": e["sched_err_us_p999"],
            "late_over_1ms": e["late_over_1ms"], "datagrams": e["datagrams"], "trusted": trustworthy(res)}


def trustworthy(res: Results) -> bool:
    """Did the emulator keep up in this emulated run (p99 scheduling error ≤ 1 ms and
    at most 0.1 % of datagrams more than 1 ms late)?"""
    e = res.emulation.row(0, named=True)
    p99, n, late = e["sched_err_us_p99"], e["datagrams"], e["late_over_1ms"]
    return p99 is not None and not math.isnan(p99) and p99 <= TRUST_P99_US and late <= TRUST_LATE_FRACTION * max(n, 1)


def spread(xs: Sequence[float]) -> tuple[float, float, float, float]:
    """(mean, sample standard deviation, min, max) of the finite values; NaN when none
    (the standard deviation also for a single value)."""
    v = [x for x in xs if x is not None and not math.isnan(x)]
    if not v:
        return (math.nan,) * 4
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else math.nan
    return m, sd, min(v), max(v)


def cell_summary(cell: str, emu: list[dict[str, float]], sims: dict[str, list[dict[str, float]]],
                 trusted: list[bool]) -> dict[str, Any]:
    """Per metric: the emulated runs' mean/sd/min/max (trusted runs only) and each
    simulated variant's, plus whether the simulated and emulated ranges overlap."""
    kept = [m for m, ok in zip(emu, trusted) if ok]
    out: dict[str, Any] = {"cell": cell, "emulated_runs": len(emu), "trusted_runs": len(kept), "metrics": {}}
    for name, _ in METRICS:
        e = spread([m[name] for m in kept])
        row: dict[str, Any] = {"emulated": e}
        for label, runs in sims.items():
            s = spread([m[name] for m in runs])
            row[label] = s
            row[f"{label}_overlap"] = not (s[3] < e[2] or e[3] < s[2]) if not math.isnan(s[0] + e[0]) else None
        out["metrics"][name] = row
    return out


def table(sims: list[dict[str, float]], emus: list[dict[str, float]], trusted: list[bool]) -> pl.DataFrame:
    """One row per metric: mean, sample sd, min and max over the seeds of each side (the
    emulated side over the runs whose emulator kept up), the ratio of the means, and
    whether the two ranges overlap."""
    kept = [m for m, ok in zip(emus, trusted) if ok]
    rows = []
    for m, what in METRICS:
        s = spread([x[m] for x in sims])
        e = spread([x[m] for x in kept])
        rows.append({"metric": m,
                     "simulated": s[0], "simulated_sd": s[1], "simulated_min": s[2], "simulated_max": s[3],
                     "emulated": e[0], "emulated_sd": e[1], "emulated_min": e[2], "emulated_max": e[3],
                     "emulated_over_simulated": ratio(e[0], s[0]), "ratio_text": ratio_text(e[0], s[0]),
                     "ranges_overlap": None if math.isnan(s[0] + e[0]) else not (s[3] < e[2] or e[3] < s[2]),
                     "meaning": what})
    return pl.DataFrame(rows, schema_overrides={"ranges_overlap": pl.Boolean})


def kernel_info(sysctls: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, Any]:
    """The kernel release, `CONFIG_HZ` where the config is readable, and `SYSCTLS` as a
    fresh network namespace has them (`unshare -n sysctl`), overlaid with the
    scenario's per-namespace settings (`sysctls`: side → key → value)."""
    import os
    import subprocess

    info: dict[str, Any] = {"kernel": os.uname().release, "hz": None, "sysctls": {}}
    for path in ("/proc/config.gz", f"/boot/config-{os.uname().release}"):
        try:
            if path.endswith(".gz"):
                import gzip

                text = gzip.open(path, "rt").read()
            else:
                text = open(path).read()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("CONFIG_HZ="):
                info["hz"] = int(line.split("=", 1)[1])
        break
    r = subprocess.run(["unshare", "-n", "sysctl", *SYSCTLS], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        k, _, v = line.partition(" = ")
        info["sysctls"][k.strip()] = " ".join(v.split())
    for k in SYSCTLS:
        if k not in info["sysctls"]:
            # Global settings (net.core.default_qdisc) exist only in the first namespace.
            try:
                info["sysctls"][k] = " ".join(Path("/proc/sys", *k.split(".")).read_text().split())
            except OSError:
                pass
    for side, kv in (sysctls or {}).items():
        for k, v in kv.items():
            info["sysctls"][f"{k} ({side})"] = v
    return info


def compare_real(scenario: ScenarioLike, seed: int | None = None, set: Sequence[str] | Mapping[str, Any] | None = None,
                 out: str | Path | None = None, seeds: int = 1, attempts: int = 3,
                 **emulate_opts: Any) -> tuple[pl.DataFrame, list[Any], list[Any], dict[str, Any]]:
    """Run ``scenario`` simulated and emulated for ``seeds`` seeds (``seed``,
    ``seed + 1``, …); return (table, simulated runs, emulated runs, info) where ``info``
    has the kernel (`kernel_info`) and each emulated run's timing (`emulator_health`,
    with the number of ``attempts`` it took). An emulated run whose emulator did not
    keep up (`trustworthy`) is run again with the same seed, at most ``attempts`` runs
    per seed — a timing check that failed is a failed measurement, not a result; the
    timing of every discarded attempt is kept in ``info["discarded"]``.
    With ``out``: each run's tables in ``out/sSEED/simulated`` and ``.../emulated``, the
    table as ``out/comparison.csv``, ``out/info.json`` and the figure
    ``out/comparison.png``."""
    import json

    from . import emulate
    from .plan import make_plan

    if seeds < 1:
        raise ValueError("seeds must be at least 1")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"attempts: {attempts!r}; expected an integer of at least 1")
    doc = with_tcp_series(load_scenario(scenario, set))
    first = int(doc.get("seed", 1) if seed is None else seed)
    warmup_ns = int(make_plan(doc, first).warmup_s * 1e9)
    sims, emus, health, discarded = [], [], [], []
    for s in range(first, first + seeds):
        sims.append(simulate(linux_profile(doc), seed=s))
        for attempt in range(1, attempts + 1):
            emu = emulate(doc, seed=s, **emulate_opts)
            h = {**emulator_health(emu), "attempts": attempt}
            if h["trusted"] or attempt == attempts:
                break
            discarded.append({"seed": s, **h})
        emus.append(emu)
        health.append(h)
    info = {"seeds": list(range(first, first + seeds)), "emulator": health, "discarded": discarded,
            "gso_max_segs": emulate_opts.get("gso_max_segs"), "quickack": bool(emulate_opts.get("quickack")),
            **kernel_info(make_plan(doc, first).sysctls)}
    t = table([metrics(r, warmup_ns) for r in sims], [metrics(r, warmup_ns) for r in emus], [h["trusted"] for h in health])
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for s, sim, emu in zip(info["seeds"], sims, emus):
            sim.write_parquet(out / f"s{s}" / "simulated")
            emu.write_parquet(out / f"s{s}" / "emulated")
        t.write_csv(out / "comparison.csv")
        (out / "info.json").write_text(json.dumps(info, indent=1, default=str))
        figure(t, doc.get("name", "scenario"), out / "comparison.png")
    return t, sims, emus, info


def figure(t: pl.DataFrame, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = t.height
    fig, axes = plt.subplots(1, n, figsize=(2.0 * n, 2.8))
    for ax, row in zip(axes, t.iter_rows(named=True)):
        vals = [row["simulated"], row["emulated"]]
        sds = [row["simulated_sd"], row["emulated_sd"]]
        ax.bar(["sim", "real"], [0 if v is None or math.isnan(v) else v for v in vals], color=["#4C72B0", "#DD8452"],
               yerr=[0 if v is None or math.isnan(v) else v for v in sds])
        ax.set_title(row["metric"], fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle(f"{title}: simulated (TCP profile linux) vs emulated (Linux TCP)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def compare_many(cases: list[tuple[str, dict[str, Any]]], out: str | Path, seed: int | None = None) -> pl.DataFrame:
    """`compare_real` for each (scenario, overrides) case; writes every case to
    ``out/CASE/``, the long table ``out/all.csv`` (case, metric, simulated, emulated,
    plus the emulator's scheduling error) and ``out/all.png``. This is how the tables
    of docs/emulation.md were made."""
    out = Path(out)
    rows = []
    for scenario, overrides in cases:
        q = overrides.get("bottleneck.qdisc", {}).get("kind", "as-is") if isinstance(overrides.get("bottleneck.qdisc"), dict) else "as-is"
        name = f"{Path(scenario).stem}-{q}"
        t, _, emus, _ = compare_real(scenario, seed=seed, set=overrides, out=out / name)
        e = emus[0].emulation.row(0, named=True)
        for r in t.iter_rows(named=True):
            rows.append({"case": name, "scenario": Path(scenario).stem, "qdisc": q, "metric": r["metric"],
                         "simulated": r["simulated"], "emulated": r["emulated"]})
        for k in ("sched_err_us_p50", "sched_err_us_p99", "sched_err_us_max"):
            rows.append({"case": name, "scenario": Path(scenario).stem, "qdisc": q, "metric": k,
                         "simulated": math.nan, "emulated": float(e[k])})
    d = pl.DataFrame(rows)
    d.write_csv(out / "all.csv")
    figure_many(d, out / "all.png")
    return d


def figure_many(d: pl.DataFrame, path: Path) -> None:
    """One row of panels per scenario, one panel per metric, sim/real bars per qdisc."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [m for m, _ in METRICS if m != "jain"]
    scenarios = d["scenario"].unique(maintain_order=True).to_list()
    fig, axes = plt.subplots(len(scenarios), len(shown), figsize=(2.3 * len(shown), 2.6 * len(scenarios)), squeeze=False)
    for i, sc in enumerate(scenarios):
        x = d.filter(pl.col("scenario") == sc)
        qdiscs = x["qdisc"].unique(maintain_order=True).to_list()
        for j, m in enumerate(shown):
            ax = axes[i][j]
            y = x.filter(pl.col("metric") == m)
            sim = [y.filter(pl.col("qdisc") == q)["simulated"][0] for q in qdiscs]
            emu = [y.filter(pl.col("qdisc") == q)["emulated"][0] for q in qdiscs]
            pos = range(len(qdiscs))
            ax.bar([p - 0.2 for p in pos], sim, 0.4, label="sim", color="#4C72B0")
            ax.bar([p + 0.2 for p in pos], emu, 0.4, label="real", color="#DD8452")
            ax.set_xticks(list(pos), qdiscs, rotation=45, fontsize=7)
            ax.tick_params(labelsize=7)
            ax.set_title(m, fontsize=8)
            if j == 0:
                ax.set_ylabel(sc, fontsize=8)
        axes[i][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
