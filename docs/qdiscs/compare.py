"""Queue delay vs time for every queue discipline `aqmlab qdiscs` lists.

The scenario is examples/aqm-compare.toml: five NewReno flows over a 10 Mbit/s
bottleneck with a 100 ms round-trip time and a 1000-packet buffer, 60 s. Each
discipline runs with its defaults (plus `limit = "1000pkt"` where it has a `limit`);
the figure shows the sojourn time of the last packet dequeued in every 100 ms, one
panel per discipline, and writes docs/qdiscs/compare.png.

    .venv/bin/python docs/qdiscs/compare.py [--duration 60s] [--out docs/qdiscs/compare.png]

New disciplines appear automatically once they are registered.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import aqmlab  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "aqm-compare.toml"
LINK = "L->R"


def qdisc_spec(doc: dict) -> dict:
    """The discipline's defaults, with the 1000-packet buffer where it has a limit."""
    spec = {"kind": doc["kind"]}
    names = {p["name"] for p in doc["params"]}
    if "limit" in names:
        types = {p["name"]: p["type"] for p in doc["params"]}
        spec["limit"] = "1000pkt" if "bytes" not in types["limit"] else "1500000B"
    return spec


def run_one(doc: dict, duration: str) -> tuple[list[float], list[float], float]:
    res = aqmlab.run(
        SCENARIO,
        set={
            "duration": duration,
            "topology.bottleneck.qdisc": qdisc_spec(doc),
            "output.timeseries": "100ms",
            "output.timeseries_links": [LINK],
        },
    )
    ts = res.timeseries.filter(res.timeseries["link"] == LINK)
    t = [x / 1e9 for x in ts["time_ns"].to_list()]
    d = ts["sojourn_ms"].to_list()
    q = res.queues.filter(res.queues["link"] == LINK)
    return t, d, float(q["utilization"][0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", default="60s")
    ap.add_argument("--out", default=str(ROOT / "docs" / "qdiscs" / "compare.png"))
    args = ap.parse_args()

    docs = aqmlab.qdisc_docs()
    cols = 4
    rows = math.ceil(len(docs) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.4 * rows), sharex=True, squeeze=False)
    for ax, doc in zip(axes.flat, docs):
        t, d, util = run_one(doc, args.duration)
        mean = sum(x for x in d if not math.isnan(x)) / max(1, len(d))
        ax.plot(t, d, lw=0.6)
        ax.set_yscale("symlog", linthresh=10)
        ax.set_ylim(0, 2000)
        ax.set_title(f"{doc['kind']}  (sample mean {mean:.0f} ms, util {util:.2f})", fontsize=9)
        ax.grid(True, alpha=0.3)
        print(f"{doc['kind']:>16}: mean sojourn {mean:7.1f} ms, utilization {util:.3f}")
    for ax in axes.flat[len(docs):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    for ax in axes[:, 0]:
        ax.set_ylabel("queue delay (ms)")
    fig.suptitle("5 NewReno flows, 10 Mbit/s, 100 ms RTT, 1000-packet buffer: sojourn of the last dequeued packet per 100 ms")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
