"""The fluid model's setting run through the packet simulator, and both plotted.

`packet_scenario` maps a `Setting` onto a dumbbell: N NewReno flows with ECN (the fluid
model's marks are window halvings, not losses: no retransmissions or timeouts), an ACK
for every segment (``delack = 0s``: the model's window grows one packet per RTT), all
of the propagation delay on the bottleneck (``Tp/2`` each way), its rate C·packet size,
and the AQM marking (RED: ``action = "mark"``, thresholds and w_q as given; AVQ: its
γ, α, ``ecnlim`` and the virtual buffer as ``buflim``·limit). The PEP's buffering delay
becomes more propagation delay (the fluid model's assumption: a constant added to the
round trip; the packet PEP is a node function of its own, not used here).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ..runner import run
from .model import Avq, Red, Setting
from .solver import Trajectory, solve

#: Link name of the dumbbell's bottleneck (left router → right router).
BOTTLENECK = "L->R"
#: TCP/IP header bytes per segment (the linux profile's 52 B).
HEADER = 52


@dataclass
class PacketRun:
    """Queue (packets, every ``sample`` s) and the mean window over flows (packets)."""

    t_q: np.ndarray
    q: np.ndarray
    t_w: np.ndarray
    w: np.ndarray

    def mean_queue(self, t0: float) -> float:
        return float(self.q[self.t_q >= t0].mean())

    def std_queue(self, t0: float) -> float:
        return float(self.q[self.t_q >= t0].std())

    def mean_window(self, t0: float) -> float:
        return float(self.w[self.t_w >= t0].mean())


def _pkt(v: float) -> str:
    return f"{round(v)}pkt"


def packet_qdisc(s: Setting, packet_bytes: int) -> dict[str, Any]:
    limit = s.buffer if math.isfinite(s.buffer) else 100_000
    a = s.aqm
    if isinstance(a, Red):
        return {"kind": "red", "limit": _pkt(limit), "min": _pkt(a.min_th), "max": _pkt(a.max_th),
                "probability": a.max_p, "wq": a.wq, "gentle": a.gentle, "action": "mark",
                "mean_pkt_size": f"{packet_bytes}B"}
    if isinstance(a, Avq):
        limit = max(limit, a.buffer)
        return {"kind": "avq", "limit": _pkt(limit), "gamma": a.gamma, "alpha": a.alpha, "ecnlim": a.ecnlim,
                "buflim": a.buffer / round(limit), "mean_pkt_size": f"{packet_bytes}B", "action": "mark"}
    raise TypeError(f"packet_qdisc: unknown aqm {a!r}")


def packet_scenario(s: Setting, duration: float, packet_bytes: int = 1500, sample: float = 0.01,
                    start_jitter: float = 1.0) -> dict[str, Any]:
    """The scenario dict for `aqmlab.run` (see the module doc for the mapping)."""
    mss = packet_bytes - HEADER
    one_way_ms = (s.tp + s.pep_delay) / 2 * 1e3
    tcp = {"kind": "tcp-bulk", "name": "bulk", "hosts": "a", "cc": "newreno", "ecn": True,
           "delack": "0s", "mss": f"{mss}B", "start_jitter": f"{start_jitter}s"}
    if math.isfinite(s.w_max):
        tcp["rwnd"] = f"{int(s.w_max * mss)}B"
    return {
        "name": "fluid-compare",
        "duration": f"{duration}s",
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": f"{s.c * packet_bytes * 8:.0f}bit", "delay": f"{one_way_ms:.6f}ms",
                           "qdisc": packet_qdisc(s, packet_bytes)},
            "hosts": [{"name": "a", "count": s.n, "left": {"rate": "10Gbit", "delay": "0ms"},
                       "right": {"rate": "10Gbit", "delay": "0ms"}}],
        },
        "traffic": [tcp],
        "output": {"timeseries": f"{sample * 1e3:g}ms", "timeseries_links": [BOTTLENECK],
                   "tcp_timeseries": f"{sample * 1e3 * 10:g}ms"},
    }


def run_packet(s: Setting, duration: float, seed: int = 1, packet_bytes: int = 1500, **kw: Any) -> PacketRun:
    """Run `packet_scenario` and return the bottleneck queue and the mean window."""
    res = run(packet_scenario(s, duration, packet_bytes, **kw), seed=seed)
    ts = res.timeseries.filter(pl.col("link") == BOTTLENECK).sort("time_ns")
    mss = packet_bytes - HEADER
    # The window a sender may use is min(cwnd, rwnd): cwnd alone can grow past the
    # receive window that caps it (the fluid model's w_max).
    cap = s.w_max * mss if math.isfinite(s.w_max) else float("inf")
    w = (res.tcp.group_by("time_ns").agg(pl.col("cwnd_bytes").cast(pl.Float64).clip(upper_bound=cap).mean())
         .sort("time_ns"))
    return PacketRun(
        t_q=ts["time_ns"].to_numpy() / 1e9, q=ts["qlen_pkts"].to_numpy().astype(float),
        t_w=w["time_ns"].to_numpy() / 1e9, w=w["cwnd_bytes"].to_numpy() / mss,
    )


def compare(s: Setting, duration: float, png: str | os.PathLike[str], seed: int = 1, packet_bytes: int = 1500,
            h: float | None = None, title: str | None = None) -> tuple[Trajectory, PacketRun]:
    """Solve the fluid model and run the packet simulator on ``s`` for ``duration`` s;
    plot queue and window against time (fluid and packet) into ``png``."""
    import matplotlib.pyplot as plt

    fl = solve(s, duration, h)
    pk = run_packet(s, duration, seed, packet_bytes)
    fig, (ax_q, ax_w) = plt.subplots(2, 1, sharex=True, figsize=(8, 5.5))
    ax_q.plot(pk.t_q, pk.q, lw=0.6, color="tab:gray", label="packet simulator")
    ax_q.plot(fl.t, fl.q, lw=1.2, color="tab:blue", label="fluid model")
    ax_q.set_ylabel("queue (packets)")
    ax_q.legend(loc="upper right")
    ax_w.plot(pk.t_w, pk.w, lw=0.8, color="tab:gray", label="packet: mean cwnd over flows")
    ax_w.plot(fl.t, fl.w, lw=1.2, color="tab:orange", label="fluid W")
    ax_w.set_ylabel("window (packets)")
    ax_w.set_xlabel("time (s)")
    ax_w.legend(loc="upper right")
    if title:
        ax_q.set_title(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return fl, pk
