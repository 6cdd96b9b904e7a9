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
    g = tcp["goodput_bps"].to_list()
    jain = (sum(g) ** 2 / (len(g) * sum(x * x for x in g))) if g and any(g) else math.nan
    return {
        "goodput_mbps": res.flows["goodput_bps"].sum() / 1e6,
        "utilization": q["utilization"],
        "sojourn_ms_mean": q["sojourn_ms_mean"],
        "sojourn_ms_p95": q["sojourn_ms_p95"],
        "drop_pct": 100.0 * q["drops"] / q["arrivals"] if q["arrivals"] else 0.0,
        "retransmits": float(tcp["retransmits"].sum()) if tcp.height else 0.0,
        "timeouts": float(tcp["timeouts"].sum()) if tcp.height else 0.0,
        "jain": jain,
    }


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
