"""Validation figure for the `voip` E-model: R against one-way delay for both models.

Lines are the published formulas evaluated here in Python, independently of the
simulator: Cole & Rosenbluth (2001) eq. 5-6 and ITU-T G.107 §3 with Table 3 defaults
(T = Ta, Tr = 2·Ta, as docs/traffic/voip.md states). Markers are aqmlab runs: one
G.711 call (no loss) over a link whose propagation delay sets the one-way delay, with
`emodel_delay = "network"`, so the R the simulator reports must sit on the line.
A second panel does the same for loss (a Bernoulli-loss link, 50 ms one way).

    .venv/bin/python docs/traffic/emodel_figure.py [--out docs/traffic/emodel.png]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import aqmlab  # noqa: E402

HERE = Path(__file__).resolve().parent


def cole_rosenbluth(d: float, e: float, g=(0.0, 30.0, 15.0)) -> float:
    late = 0.11 * (d - 177.3) if d > 177.3 else 0.0
    return 94.2 - 0.024 * d - late - (g[0] + g[1] * math.log(1 + g[2] * e))


def g107(ta: float, e: float, ie: float = 0.0, bpl: float = 4.3) -> float:
    lg = math.log10
    slr, rlr, stmr, lstr, ds, telr, wepl = 8, 2, 15, 18, 3, 65, 110
    olr = slr + rlr
    nos = 35 - slr - ds - 100 + 0.004 * (35 - olr - ds - 14) ** 2
    pre = 35 + 10 * lg(1 + 10 ** ((10 - lstr) / 10))
    nor = rlr - 121 + pre + 0.008 * (pre - 35) ** 2
    no = 10 * lg(10 ** (-7) + 10 ** (nos / 10) + 10 ** (nor / 10) + 10 ** ((-64 + rlr) / 10))
    ro = 15 - 1.5 * (slr + no)
    t, tr = ta, 2 * ta
    stmro = -10 * lg(10 ** (-stmr / 10) + math.exp(-t / 4) * 10 ** (-telr / 10))
    f = lambda a, b, c: (1 + ((stmro + a) / b) ** c) ** (1 / c)  # noqa: E731
    ist = 12 * f(-13, 6, 8) - 28 * f(1, 19.4, 35) - 13 * f(-3, 33, 13) + 29
    xolr = olr + 0.2 * (64 + no - rlr)
    iolr = 20 * ((1 + (xolr / 8) ** 8) ** (1 / 8) - xolr / 8)
    q = 37.0
    gq = 1.07 + 0.258 * q + 0.0602 * q * q
    iq = 15 * lg(1 + 10 ** ((ro - 100) / 15 + 46 / 8.4 - gq / 9) + 10 ** (46 / 30 - gq / 40))
    is_ = iolr + ist + iq
    roe = -1.5 * (no - rlr)
    terv = telr - 40 * lg((1 + t / 10) / (1 + t / 150)) + 6 * math.exp(-0.3 * t * t)
    re = 80 + 2.5 * (terv - 14)
    idte = ((roe - re) / 2 + math.sqrt((roe - re) ** 2 / 4 + 100) - 1) * (1 - math.exp(-t))
    rle = 10.5 * (wepl + 7) * (tr + 1) ** -0.25
    idle = (ro - rle) / 2 + math.sqrt((ro - rle) ** 2 / 4 + 169)
    idd = 0.0
    if ta > 100:
        x = lg(ta / 100) / lg(2)
        idd = 25 * ((1 + x**6) ** (1 / 6) - 3 * (1 + (x / 3) ** 6) ** (1 / 6) + 2)
    ppl = 100 * e
    return ro - is_ - (idte + idle + idd) - (ie + (95 - ie) * ppl / (ppl + bpl))


def scenario(delay_ms: float, loss: float, model: str) -> dict:
    link = {"from": "a", "to": "b", "rate": "10Mbit", "delay": f"{delay_ms}ms"}
    if loss:
        link["loss"] = loss
    return {
        "duration": "60s",
        "topology": {"kind": "graph", "nodes": [{"name": "a"}, {"name": "b"}], "links": [link]},
        "traffic": [{"kind": "voip", "name": "call", "src": "a", "dst": "b", "codec": "g711", "emodel": model, "emodel_delay": "network"}],
    }


def simulated(delay_ms: float, loss: float, model: str) -> tuple[float, float, float]:
    res = aqmlab.run(scenario(delay_ms, loss, model), seed=1)
    row = res.apps.row(0, named=True)
    return row["emodel_delay_ms"], row["total_loss_rate"], row["r_factor"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "emodel.png"))
    args = ap.parse_args()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ds = [i * 2.5 for i in range(201)]
    for model, fn, c in (("g107", lambda d, e: g107(d, e), "#0072B2"), ("cole-rosenbluth", cole_rosenbluth, "#D55E00")):
        ax1.plot(ds, [fn(d, 0.0) for d in ds], color=c, label=f"{model} (formula)")
        pts = [simulated(d, 0.0, model) for d in (0, 50, 100, 150, 200, 250, 300, 400, 480)]
        ax1.plot([p[0] for p in pts], [p[2] for p in pts], "o", color=c, mfc="none", label=f"{model} (aqmlab run)")
        es = [i / 1000 for i in range(0, 201)]
        ax2.plot([100 * e for e in es], [fn(50.0, e) for e in es], color=c, label=f"{model} (formula)")
        pts = [simulated(50.0, p, model) for p in (0.0, 0.01, 0.02, 0.05, 0.1, 0.2)]
        # the simulated point's delay is 50 ms + serialisation (0.16 ms): use its own.
        ax2.plot([100 * p[1] for p in pts], [p[2] for p in pts], "o", color=c, mfc="none", label=f"{model} (aqmlab run)")
    ax1.set_xlabel("one-way delay d (ms)")
    ax1.set_ylabel("R")
    ax1.set_title("G.711, no loss")
    ax2.set_xlabel("packet loss (%)")
    ax2.set_ylabel("R")
    ax2.set_title("G.711 without PLC, 50 ms one way")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(args.out)


if __name__ == "__main__":
    main()
