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
from typing import Any

import polars as pl

from ..runner import run as simulate
from ..scenario import ScenarioLike, load_scenario

#: The compared metrics: (name, what it is). All at the bottleneck `L->R` or summed
#: over the forward flows, after the warm-up.
METRICS = [
    ("goodput_mbps", "sum of the flows' goodput, Mbit/s"),
    ("utilization", "bottleneck busy time / measured time"),
    ("sojourn_ms_mean", "bottleneck sojourn, mean"),
    ("sojourn_ms_p95", "bottleneck sojourn, 95th percentile"),
    ("drop_pct", "bottleneck drops / arrivals, %"),
    ("retransmits", "TCP retransmitted segments, all flows"),
    ("timeouts", "TCP retransmission timeouts, all flows"),
    ("jain", "Jain's fairness index of the TCP flows' goodput"),
]


def linux_profile(doc: dict) -> dict:
    """`doc` with ``profile = "linux"`` on every TCP entry that does not name one."""
    doc = copy.deepcopy(doc)
    for t in doc.get("traffic", []):
        if str(t.get("kind", "")).startswith("tcp") and "profile" not in t:
            t["profile"] = "linux"
    return doc


def metrics(res) -> dict[str, float]:
    q = res.queues.filter(pl.col("link") == res.queues["link"][0]).row(0, named=True)
    tcp = res.flows.filter(pl.col("kind") == "tcp")
    g = tcp["goodput_window_bps"].to_list()
    jain = (sum(g) ** 2 / (len(g) * sum(x * x for x in g))) if g and any(g) else math.nan
    return {
        "goodput_mbps": res.flows["goodput_window_bps"].sum() / 1e6,
        "utilization": q["utilization"],
        "sojourn_ms_mean": q["sojourn_ms_mean"],
        "sojourn_ms_p95": q["sojourn_ms_p95"],
        "drop_pct": 100.0 * q["drops"] / q["arrivals"] if q["arrivals"] else 0.0,
        "retransmits": float(tcp["retransmits"].sum()) if tcp.height else 0.0,
        "timeouts": float(tcp["timeouts"].sum()) if tcp.height else 0.0,
        "jain": jain,
    }


#: An emulated run is trusted only if its emulator kept up: p99 scheduling error at most
#: this (µs; docs/emulation.md measured ≤ 0.13 ms at every supported rate on a loaded
#: machine) and at most this fraction of datagrams later than 1 ms.
TRUST_P99_US = 1000.0
TRUST_LATE_FRACTION = 0.001


def trustworthy(res) -> bool:
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
                 trusted: list[bool]) -> dict:
    """Per metric: the emulated runs' mean/sd/min/max (trusted runs only) and each
    simulated variant's, plus whether the simulated and emulated ranges overlap."""
    kept = [m for m, ok in zip(emu, trusted) if ok]
    out: dict = {"cell": cell, "emulated_runs": len(emu), "trusted_runs": len(kept), "metrics": {}}
    for name, _ in METRICS:
        e = spread([m[name] for m in kept])
        row = {"emulated": e}
        for label, runs in sims.items():
            s = spread([m[name] for m in runs])
            row[label] = s
            row[f"{label}_overlap"] = not (s[3] < e[2] or e[3] < s[2]) if not math.isnan(s[0] + e[0]) else None
        out["metrics"][name] = row
    return out


def table(sim: dict[str, float], emu: dict[str, float]) -> pl.DataFrame:
    rows = []
    for m, what in METRICS:
        s, e = sim[m], emu[m]
        rows.append({"metric": m, "simulated": s, "emulated": e,
                     "emulated_over_simulated": e / s if s not in (0, None) and not math.isnan(s) else math.nan,
                     "meaning": what})
    return pl.DataFrame(rows)


def compare_real(scenario: ScenarioLike, seed: int | None = None, set: Sequence[str] | Mapping[str, Any] | None = None,
                 out: str | Path | None = None, **emulate_opts) -> tuple[pl.DataFrame, Any, Any]:
    """Run ``scenario`` simulated and emulated; return (table, simulated, emulated).
    With ``out``: both runs' tables in ``out/simulated`` and ``out/emulated``, the table
    as ``out/comparison.csv`` and the figure ``out/comparison.png``."""
    from . import emulate

    doc = load_scenario(scenario, set)
    sim = simulate(linux_profile(doc), seed=seed)
    emu = emulate(doc, seed=seed, **emulate_opts)
    t = table(metrics(sim), metrics(emu))
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        sim.write_parquet(out / "simulated")
        emu.write_parquet(out / "emulated")
        t.write_csv(out / "comparison.csv")
        figure(t, doc.get("name", "scenario"), out / "comparison.png")
    return t, sim, emu


def figure(t: pl.DataFrame, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = t.height
    fig, axes = plt.subplots(1, n, figsize=(2.0 * n, 2.8))
    for ax, row in zip(axes, t.iter_rows(named=True)):
        vals = [row["simulated"], row["emulated"]]
        ax.bar(["sim", "real"], [0 if v is None or math.isnan(v) else v for v in vals], color=["#4C72B0", "#DD8452"])
        ax.set_title(row["metric"], fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle(f"{title}: simulated (TCP profile linux) vs emulated (Linux TCP)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def compare_many(cases: list[tuple[str, dict]], out: str | Path, seed: int | None = None) -> pl.DataFrame:
    """`compare_real` for each (scenario, overrides) case; writes every case to
    ``out/CASE/``, the long table ``out/all.csv`` (case, metric, simulated, emulated,
    plus the emulator's scheduling error) and ``out/all.png``. This is how the tables
    of docs/emulation.md were made."""
    out = Path(out)
    rows = []
    for scenario, overrides in cases:
        q = overrides.get("bottleneck.qdisc", {}).get("kind", "as-is") if isinstance(overrides.get("bottleneck.qdisc"), dict) else "as-is"
        name = f"{Path(scenario).stem}-{q}"
        t, _, emu = compare_real(scenario, seed=seed, set=overrides, out=out / name)
        e = emu.emulation.row(0, named=True)
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
            ax.set_title(m if i else m, fontsize=8)
            if j == 0:
                ax.set_ylabel(sc, fontsize=8)
        axes[i][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
