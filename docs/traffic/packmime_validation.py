"""Validation figure for docs/traffic/web-packmime.md.

Runs aqmlab's `web-packmime` kind (HTTP/1.0, 8 new connections/s, the rural study's
rate) on an uncongested path, takes the request and response sizes of every
request-response from the per-page rows, and draws their empirical CDFs over the
distributions the PackMime-HTTP fit defines (Cao et al., INFOCOM 2004, as tabulated
in ns-2.35 `packmime_ranvar.cc`). The fitted tables are read from aqmlab's own source
(`crates/aqmlab-core/src/app/web/packmime_model.rs`) so the reference curve and the
model share one copy of the data; the reference CDF is computed here independently:
request size = ½·A + ½·tail B (`P(size ≤ 2^B(x)) = 1 − 2^x`); response size = the
cache-validation table and the download tail mixed in proportion to their mean run
lengths `E⌈W⌉ = Σ_k P(W > k)`, W ~ Weibull(shape(rate), 0.775 or 3.11).

    .venv/bin/python docs/traffic/packmime_validation.py   # writes packmime-sizes.png
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import aqmlab

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "crates/aqmlab-core/src/app/web/packmime_model.rs"
RATE = 8.0

SCENARIO = {
    "name": "packmime-validation",
    "duration": "1300s",
    "topology": {
        "kind": "graph",
        "nodes": [{"name": "c"}, {"name": "s"}],
        "links": [{"from": "s", "to": "c", "rate": "1Gbit", "delay": "5ms", "duplex": True}],
    },
    "traffic": [
        {"kind": "web-packmime", "name": "pm", "src": "s", "dst": "c", "rate": RATE,
         "page_rows": True, "stop": "1200s"},
    ],
}


def table(name: str) -> np.ndarray:
    text = SRC.read_text()
    m = re.search(rf"static {name}: \[f64; \d+\] = \[(.*?)\];", text, re.S)
    return np.array([float(v) for v in m.group(1).replace("\n", " ").split(",") if v.strip()])


def body_cdf(x_tab: np.ndarray, y_tab: np.ndarray, s: np.ndarray) -> np.ndarray:
    """CDF of a quantile table (x = probability, y = size), linear between points."""
    return np.interp(s, y_tab, x_tab, left=0.0, right=1.0)


def tail_cdf(x_tab: np.ndarray, y_tab: np.ndarray, s: np.ndarray) -> np.ndarray:
    """CDF of a log2 tail table: y = log2 size at x = log2(1 − p); y falls as x rises."""
    ls = np.log2(s)
    x = np.interp(ls, y_tab[::-1], x_tab[::-1], left=x_tab[-1], right=x_tab[0])
    return 1.0 - np.exp2(x)


def logit_inv(v: float) -> float:
    """ns-2's base-2 logitinv (tools/rng.h): 2^v / (1 + 2^v)."""
    return 1.0 / (1.0 + 2.0 ** (-v))


def mean_ceil_weibull(shape: float, scale: float) -> float:
    return sum(math.exp(-((k / scale) ** shape)) for k in range(0, 10_000))


def main() -> None:
    r = aqmlab.run(SCENARIO, seed=1)
    pages = r["pages"]
    req = np.sort(pages["request_bytes"].to_numpy().astype(float))
    rsp = np.sort(pages["bytes"].to_numpy().astype(float))
    n = len(req)

    l2 = math.log2(RATE)
    run_cache = mean_ceil_weibull(logit_inv(0.718 + 0.357 * l2), 0.775)
    run_dl = mean_ceil_weibull(logit_inv(1.293 + 0.316 * l2), 3.11)
    p_dl = run_dl / (run_cache + run_dl)

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    s = np.logspace(0.5, 7.5, 600)
    ref_req = 0.5 * body_cdf(table("FSIZE1_A_X"), table("FSIZE1_A_Y"), s) + 0.5 * tail_cdf(
        table("FSIZE1_B_X"), table("FSIZE1_B_Y"), s)
    ref_rsp = (1 - p_dl) * body_cdf(table("FSIZE0_A_X"), table("FSIZE0_A_Y"), s) + p_dl * tail_cdf(
        table("FSIZE0_B_X"), table("FSIZE0_B_Y"), s)
    for ax, data, ref, what in ((axes[0], req, ref_req, "request"), (axes[1], rsp, ref_rsp, "response")):
        ax.step(data, np.arange(1, n + 1) / n, where="post", color="#0072B2", lw=1.6,
                label=f"aqmlab web-packmime ({n} {what}s)")
        ax.plot(s, ref, color="#D55E00", ls="--", lw=1.2, label="PackMime-HTTP fit (ns-2 tables)")
        ax.set_xscale("log")
        ax.set_xlabel(f"{what} size (bytes)")
        ax.set_ylabel("CDF")
        ax.set_title(f"PackMime {what} sizes, {RATE:g} connections/s")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    out = HERE / "packmime-sizes.png"
    fig.savefig(out, dpi=110)
    # The largest vertical gap between the two curves (Kolmogorov–Smirnov statistic).
    for data, ref_of, what in ((req, ref_req, "request"), (rsp, ref_rsp, "response")):
        ref_at = np.interp(data, s, ref_of)
        ks = np.max(np.abs(np.arange(1, n + 1) / n - ref_at))
        print(f"{what}: n = {n}, KS distance = {ks:.4f} (5 % critical value ≈ {1.36 / math.sqrt(n):.4f})")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
