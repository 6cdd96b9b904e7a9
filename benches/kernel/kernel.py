"""The kernel matrix: the `linux` TCP profile against the real kernel's TCP
(`aqmlab compare-real`) over reno/cubic/bbr × pfifo/codel/pie/fq_codel × 2/5/20 Mbit/s,
several seeds per cell. Needs root, network namespaces and /dev/net/tun; run one
emulation at a time on an otherwise quiet machine, ideally under real-time priority:

    sudo chrt -f 20 .venv/bin/python benches/kernel/kernel.py --emulate --out out/kernel
    .venv/bin/python benches/kernel/kernel.py --simulate --out out/kernel
    .venv/bin/python benches/kernel/kernel.py --table --out out/kernel

`--emulate` stores every emulated run (its tables, parquet) under OUT/emu/CELL/sSEED
(with `--emu-label L`: OUT/emu-L/..., a kernel-side variant: `--gso-max-segs 1` sends
single segments instead of TSO-autosized bursts, `--quickack` makes the receivers ACK
every segment; `--table --emu-label L` compares against that variant);
`--simulate` runs the simulated side (TCP profile linux; `--label` and `--set` let a
model variant be stored beside it, e.g. `--label before --set quickack=false ...`) under
OUT/sim-LABEL/CELL/sSEED; `--qdisc-set K=V` changes the bottleneck qdisc on both sides
(e.g. `--qdisc-set variant=rfc --emu-label pie-rfc --label pie-rfc`: RFC 8033's PIE); `--table` prints the per-cell mean ± spread of each side and
flags runs whose emulator did not keep up (docs/tcp.md, "Kernel matrix").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from aqmlab.emulate.compare import cell_summary, metrics, trustworthy

ROOT = Path(__file__).resolve().parents[2]

CCS = {"reno": ("2mbit-4reno", "newreno"), "cubic": ("5mbit-5cubic", "cubic"), "bbr": ("5mbit-5cubic", "bbr")}
QDISCS = ["pfifo", "codel", "pie", "fq_codel"]
RATES = ["2Mbit", "5Mbit", "20Mbit"]
#: The six AQM cells of issue 29, then the rest of the matrix.
ISSUE_CELLS = [("reno", "codel", "2Mbit"), ("reno", "pie", "2Mbit"), ("cubic", "codel", "5Mbit"),
               ("cubic", "pie", "5Mbit"), ("cubic", "fq_codel", "20Mbit"), ("bbr", "fq_codel", "20Mbit")]


def all_cells() -> list[tuple[str, str, str]]:
    rest = [(c, q, r) for r in RATES for c in CCS for q in QDISCS if (c, q, r) not in ISSUE_CELLS]
    return ISSUE_CELLS + rest


def cell_name(cell: tuple[str, str, str]) -> str:
    return "-".join(cell).lower()


def scenario(cell: tuple[str, str, str], duration: str, qdisc_sets: dict | None = None) -> tuple[Path, dict]:
    """The scenario file and overrides of a cell: the emulation examples' dumbbell (base
    RTT 50 ms, 100-packet buffer), with the cell's rate, discipline (plus `qdisc_sets`,
    e.g. PIE's `variant`) and TCP."""
    cc, qdisc, rate = cell
    base, cc_name = CCS[cc]
    sets = {"duration": duration, "bottleneck.rate": rate,
            "bottleneck.qdisc": {"kind": qdisc, "limit": "100pkt", **(qdisc_sets or {})}, "traffic[0].cc": cc_name}
    return ROOT / "examples" / "emulation" / f"{base}.toml", sets


#: The metrics of the markdown table.
SHOWN = [("goodput_mbps", "goodput Mbit/s"), ("drop_pct", "drop %"), ("retransmits", "retransmits"),
         ("sojourn_ms_mean", "sojourn mean ms")]


def markdown(rows: list[dict]) -> str:
    """One line per cell and metric: the kernel's mean (min–max over trusted runs), each
    simulated variant's, and the variant's mean relative to the kernel's."""
    labels = sorted({k for r in rows for m in r["metrics"].values() for k in m if k != "emulated" and not k.endswith("_overlap")})
    fmt = lambda v: "nan" if v != v else (f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}")
    head = "| cell | runs (trusted) | metric | kernel | " + " | ".join(f"sim {lab} (vs kernel)" for lab in labels) + " |"
    out = [head, "|" + " --- |" * (4 + len(labels))]
    for r in rows:
        for m, name in SHOWN:
            row = r["metrics"][m]
            e = row["emulated"]
            cells = [f"{fmt(e[0])} ({fmt(e[2])}–{fmt(e[3])})"]
            for lab in labels:
                s = row.get(lab)
                if s is None:
                    cells.append("")
                    continue
                rel = f"{100 * (s[0] - e[0]) / e[0]:+.0f} %" if e[0] == e[0] and e[0] else "n/a"
                ov = "" if row.get(f"{lab}_overlap") else ", no overlap"
                cells.append(f"{fmt(s[0])} ({fmt(s[2])}–{fmt(s[3])}) {rel}{ov}")
            out.append(f"| {r['cell']} | {r['emulated_runs']} ({r['trusted_runs']}) | {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "kernel")
    ap.add_argument("--emulate", action="store_true")
    ap.add_argument("--simulate", action="store_true")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--duration", default="30s")
    ap.add_argument("--cells", default="issue", help="issue (the six AQM cells of issue 29), all, or a comma list of cc-qdisc-rate")
    ap.add_argument("--label", default="after")
    ap.add_argument("--emu-label", default="", help="kernel-side variant: store/read emulated runs under OUT/emu-LABEL")
    ap.add_argument("--gso-max-segs", type=int, default=None, help="with --emulate: cap the TUN's GSO segments per packet")
    ap.add_argument("--quickack", action="store_true", help="with --emulate: routes with quickack 1 (ACK every segment)")
    ap.add_argument("--set", action="append", default=[], help="extra KEY=VALUE for every TCP entry of the simulated side")
    ap.add_argument("--timeseries", default="", help="also store the queue time series (output.timeseries) at this interval")
    ap.add_argument("--qdisc-set", action="append", default=[],
                    help="extra KEY=VALUE for the bottleneck qdisc on both sides (e.g. variant=rfc for PIE; "
                         "pair it with --emu-label and --label)")
    a = ap.parse_args()
    if a.cells == "issue":
        cells = ISSUE_CELLS
    elif a.cells == "all":
        cells = all_cells()
    else:
        cells = [tuple(c.split("-", 2)) for c in a.cells.split(",")]
    from aqmlab.emulate import emulate
    from aqmlab.emulate.compare import linux_profile
    from aqmlab.results import Results
    from aqmlab.runner import run as simulate
    from aqmlab.scenario import load_scenario

    qdisc_sets = dict(kv.split("=", 1) for kv in a.qdisc_set)
    extra = {"output.timeseries": a.timeseries} if a.timeseries else {}
    emu_dir = a.out / (f"emu-{a.emu_label}" if a.emu_label else "emu")
    for cell in cells:
        path, sets = scenario(cell, a.duration, qdisc_sets)
        sets.update(extra)
        for seed in range(1, a.seeds + 1):
            if a.emulate:
                d = emu_dir / cell_name(cell) / f"s{seed}"
                if not (d / "summary.parquet").exists() and not any(d.glob("*.parquet")):
                    res = emulate(load_scenario(path, sets), seed=seed, gso_max_segs=a.gso_max_segs, quickack=a.quickack,
                                  log=lambda m: print(m, file=sys.stderr))
                    res.write_parquet(d)
                    (d / "emulator_report.json").write_text(json.dumps(res.emulator_report, default=str))
                    e = res.emulation.row(0, named=True)
                    print(f"{cell_name(cell)} s{seed}: emulated; sched p99 {e['sched_err_us_p99']:.0f} µs, "
                          f"p99.9 {e['sched_err_us_p999']:.0f} µs, late>1ms {e['late_over_1ms']}", flush=True)
            if a.simulate:
                d = a.out / f"sim-{a.label}" / cell_name(cell) / f"s{seed}"
                doc = linux_profile(load_scenario(path, sets))
                for kv in a.set:
                    k, v = kv.split("=", 1)
                    for t in doc["traffic"]:
                        t[k] = json.loads(v) if v in ("true", "false") or v[:1].isdigit() else v
                res = simulate(doc, seed=seed)
                res.write_parquet(d)
    if a.table:
        rows = []
        for cell in cells:
            emu = [Results.read_parquet(p) for p in sorted((emu_dir / cell_name(cell)).glob("s*"))]
            sims = {p.name[4:]: [Results.read_parquet(q) for q in sorted((p / cell_name(cell)).glob("s*"))]
                    for p in sorted(a.out.glob("sim-*")) if (p / cell_name(cell)).exists()}
            if not emu:
                continue
            ok = [trustworthy(r) for r in emu]
            rows.append(cell_summary(cell_name(cell), [metrics(r) for r in emu], {k: [metrics(r) for r in v] for k, v in sims.items()}, ok))
        (a.out / "table.json").write_text(json.dumps(rows, indent=1))
        print(markdown(rows))


if __name__ == "__main__":
    main()
