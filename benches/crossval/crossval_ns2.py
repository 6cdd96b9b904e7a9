"""Cross-validation against real ns-2.35: the dumbbells of ns2_dumbbell.py in ns-2
(`ns`, Debian's ns2 package) and in aqmlab with `profile = "ns2"` (and, for contrast,
the default `profile = "linux"`). Run from the repository root after `make install`:

    .venv/bin/python benches/crossval/crossval_ns2.py [--ns /usr/bin/ns]

Writes benches/crossval/results-ns2.md. Takes a few seconds.
"""

import argparse
import copy
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ns2_dumbbell as nd  # noqa: E402

import aqmlab  # noqa: E402

D = nd.Dumbbell
SCENARIOS = [
    D("newreno-delack-2M-40ms-q30", "newreno", "delack"),
    D("newreno-tcpsink-2M-40ms-q30", "newreno", "tcpsink"),
    D("reno-delack-2M-40ms-q30", "reno", "delack"),
    D("reno-tcpsink-2M-40ms-q30", "reno", "tcpsink"),
    D("newreno-delack-2M-20ms-q10", "newreno", "delack", delay_ms=20.0, limit=10),
    D("reno-tcpsink-5M-40ms-q8-6flows", "reno", "tcpsink", rate_mbit=5.0, limit=8,
      starts=[0.0, 0.5, 1.3, 2.1, 3.7, 4.2]),
    D("newreno-tcpsink-10M-10ms-q15-8flows", "newreno", "tcpsink", rate_mbit=10.0, delay_ms=10.0,
      limit=15, starts=[0.1 * i for i in range(8)]),
    D("newreno-delack-1.5M-100ms-q50-3flows", "newreno", "delack", rate_mbit=1.5, delay_ms=100.0,
      limit=50, starts=[0.0, 2.0, 4.0]),
    D("reno-delack-10M-5ms-q20-10flows", "reno", "delack", rate_mbit=10.0, delay_ms=5.0, limit=20,
      starts=[0.25 * i for i in range(10)]),
    D("sack1-sack1-2M-40ms-q30", "sack1", "sack1"),
    D("sack1-sack1delack-2M-40ms-q30", "sack1", "sack1-delack"),
    D("sack1-sack1-2M-20ms-q10", "sack1", "sack1", delay_ms=20.0, limit=10),
    D("sack1-sack1-10M-10ms-q15-8flows", "sack1", "sack1", rate_mbit=10.0, delay_ms=10.0, limit=15,
      starts=[0.1 * i for i in range(8)]),
    D("sack1-tcpsink-2M-40ms-q30", "sack1", "tcpsink"),
]


def run_linux(d):
    s = copy.deepcopy(nd.scenario(d))
    for t in s["traffic"]:
        for k in ("profile", "agent", "sink"):
            t.pop(k)
    f = aqmlab.run(s).flows
    dl, dr = int(f["packets_delivered"].sum()), int(f["packets_dropped"].sum())
    return {"loss_pct": 100.0 * dr / max(dl + dr, 1)}


def pct(a, b):
    return f"{100.0 * (a - b) / b:+.2f} %" if b else "—"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", default="ns")
    a = ap.parse_args()
    lines = [
        "# Cross-validation against ns-2.35 (`benches/crossval/crossval_ns2.py`)",
        "",
        "DropTail dumbbells, one FTP per flow from fixed start times, 60 s: TCP data packets",
        "delivered over and dropped at the bottleneck. ns-2: `Agent/TCP/<agent>` into",
        "`Agent/TCPSink[/DelAck]` or `Agent/TCPSink/Sack1[/DelAck]` at ns-2's defaults; aqmlab: `profile = \"ns2\"` with the",
        "same `agent`/`sink` (and, for contrast, the default `profile = \"linux\"`). Δ is",
        "aqmlab ns2 against ns-2. The loss rates are dropped / (delivered + dropped); the linux",
        "profile sends 1448 B segments (1500 B packets), so only its loss rate is comparable.",
        "",
        "| scenario | ns-2 delivered | aqmlab ns2 | Δ | ns-2 dropped | aqmlab ns2 | Δ | per-flow delivered equal | loss ns-2 | loss aqmlab linux |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for d in SCENARIOS:
        print(d.name, file=sys.stderr)
        ref = nd.run_ns2(d, a.ns)
        got = nd.run_aqmlab(d)
        lin = run_linux(d)
        same = "yes" if ref["delivered_per_flow"] == got["delivered_per_flow"] else "no"
        lines.append(
            f"| {d.name} | {ref['delivered']} | {got['delivered']} | {pct(got['delivered'], ref['delivered'])} "
            f"| {ref['dropped']} | {got['dropped']} | {pct(got['dropped'], ref['dropped'])} | {same} "
            f"| {100.0 * ref['dropped'] / (ref['dropped'] + ref['delivered']):.2f} % | {lin['loss_pct']:.2f} % |")
    (HERE / "results-ns2.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
