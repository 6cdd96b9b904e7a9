"""Validation figure for `rtp`: RTCP reports against ground truth and RFC 3550 timing.

Left: the loss fraction the sender learns from receiver reports (cumulative lost /
expected, RFC 3550 A.3) against the ground truth the receiver counted, for sessions over
links with Bernoulli loss 0-20 % (5 seeds each); the points must lie on the diagonal.
Right: RTCP bandwidth (SRs + RRs, IP bytes) over session bandwidth, for sessions of
64 kbit/s to 10 Mbit/s, with the 5 s minimum and with the reduced minimum 360/(kbit/s)
s. Lines: two members each sending one packet (80 B SR, 84 B RR) per minimum interval,
which reconsideration plus the e − 3/2 compensation make the mean interval (§6.3.1).
Never above the 5 % RTCP share, since here `avg_size · members / rtcp_bw` is below the
minimum at every rate.

    .venv/bin/python docs/traffic/rtp_figure.py [--out docs/traffic/rtp.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import aqmlab  # noqa: E402

HERE = Path(__file__).resolve().parent


def scenario(rate_bps: float, loss: float, reduced: bool, duration: str) -> dict:
    link = {"from": "s", "to": "d", "rate": "100Mbit", "delay": "10ms"}
    if loss:
        link["loss"] = loss
    return {
        "duration": duration,
        "topology": {"kind": "graph", "nodes": [{"name": "s"}, {"name": "d"}], "links": [link]},
        "traffic": [{
            "kind": "rtp", "name": "media", "src": "s", "dst": "d", "rate": f"{rate_bps}bit", "size": "500B",
            "size_dist": "uniform", "size_spread": "300B", "interval_dist": "exp", "rtcp_reduced_min": reduced,
        }],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "rtp.png"))
    args = ap.parse_args()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    truth, rr = [], []
    for loss in (0.0, 0.01, 0.02, 0.05, 0.1, 0.2):
        for seed in range(1, 6):
            row = aqmlab.run(scenario(800e3, loss, False, "60s"), seed=seed).apps.row(0, named=True)
            truth.append(100 * row["loss_fraction_true"])
            rr.append(100 * row["loss_fraction_rr"])
    ax1.plot([0, 21], [0, 21], color="#999999", linewidth=1, label="y = x")
    ax1.plot(truth, rr, "o", mfc="none", color="#0072B2", label="sessions (800 kbit/s, 60 s)")
    ax1.set_xlabel("ground-truth loss (%)")
    ax1.set_ylabel("loss from RTCP receiver reports (%)")
    ax1.set_title("RR cumulative loss vs ground truth")
    rates = [64e3, 128e3, 256e3, 512e3, 1e6, 2e6, 5e6, 10e6]
    for reduced, c, name in ((False, "#0072B2", "5 s minimum"), (True, "#D55E00", "reduced minimum 360/(kbit/s) s")):
        share = []
        for r in rates:
            row = aqmlab.run(scenario(r, 0.0, reduced, "600s"), seed=1).apps.row(0, named=True)
            share.append(100 * row["rtcp_bytes"] * 8 / 600 / r)
        tmin = [360 / (r / 1e3) if reduced else 5.0 for r in rates]
        theory = [100 * (80 + 84) * 8 / t / r for t, r in zip(tmin, rates)]
        ax2.plot([r / 1e3 for r in rates], theory, color=c, label=f"{name}: (80 + 84)·8/Tmin")
        ax2.plot([r / 1e3 for r in rates], share, "o", mfc="none", color=c, label=f"{name}: aqmlab")
    ax2.axhline(5, color="#999999", linewidth=1, linestyle="--", label="5 % RTCP share")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("session bandwidth (kbit/s)")
    ax2.set_ylabel("RTCP bandwidth / session bandwidth (%)")
    ax2.set_title("RTCP bandwidth, 600 s sessions")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(args.out)


if __name__ == "__main__":
    main()
