"""CPU time and peak memory of the scale scenarios (not a test; minutes of CPU).

    .venv/bin/python benches/bench_scale.py [--only gbit-hour|10g] [--json]

Each run is ``aqmlab run SCENARIO --quiet --out DIR`` (every table built and written as
Parquet) in a child process; its CPU time (user + system) and peak resident set come
from the kernel's accounting of that child (``os.wait4``), its wall time from the clock.

- ``gbit-hour``: one hour of 1 Gbit/s shared by 1000 CUBIC flows
  (`benches/scenarios/scale/gbit-hour.toml`).
- ``10g``: 10 Gbit/s shared by 10,000 CUBIC flows with every table on
  (`benches/scenarios/scale/10g-10k.toml`), run three times: as written, with half the
  flows; then twice for 5 s without the drop log, with the full and with half the queue.
  The memory per flow is the peak-RSS difference of the first two over the flow
  difference; the memory per queued packet is the peak-RSS difference of the last two over
  the difference of their packet-arena high-water marks (the summary's ``arena_slots``:
  packets alive at once, queued or on the wire). The drop log is off in that pair because
  a smaller queue drops more, and the longer log hides the smaller queue (seen at 20 s:
  half the queue, 4.74 GiB against 4.72 GiB).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCALE = ROOT / "benches" / "scenarios" / "scale"


def run(scenario: Path, sets: list[str]) -> dict:
    """Wall, CPU and peak RSS of one ``aqmlab run``, with its run summary."""
    import polars as pl

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "aqmlab.cli", "run", str(scenario), "--quiet", "--out", str(out)]
        for s in sets:
            cmd += ["--set", s]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err = proc.stderr.read() if proc.stderr else ""
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err}")
        summary = pl.read_parquet(out / "summary.parquet").row(0, named=True)
    return {
        "scenario": scenario.stem,
        "set": sets,
        "sim_time_s": summary["sim_time_s"],
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss / 1024,  # ru_maxrss is in KiB on Linux
        "events": summary["events"],
        "packets": summary["packets"],
        "arena_slots": summary["arena_slots"],
    }


def ten_gbit() -> dict:
    sc = SCALE / "10g-10k.toml"
    full = run(sc, [])
    half_flows = run(sc, ["topology.hosts.0.count=5000"])
    no_log = ["duration=5s", "output.drops=false"]
    queue = run(sc, no_log)
    half_queue = run(sc, [*no_log, "topology.bottleneck.qdisc.limit=50000pkt"])
    mib = 1024 * 1024
    return {
        "runs": [full, half_flows, queue, half_queue],
        "bytes_per_flow": (full["peak_rss_mib"] - half_flows["peak_rss_mib"]) * mib / 5000,
        "bytes_per_queued_packet": (queue["peak_rss_mib"] - half_queue["peak_rss_mib"])
        * mib
        / (queue["arena_slots"] - half_queue["arena_slots"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=["gbit-hour", "10g"])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res: dict = {"load_average": os.getloadavg()}
    if a.only in (None, "gbit-hour"):
        res["gbit-hour"] = run(SCALE / "gbit-hour.toml", [])
    if a.only in (None, "10g"):
        res["10g"] = ten_gbit()
    if a.json:
        print(json.dumps(res, indent=2))
        return
    print("load average: %.2f %.2f %.2f" % res["load_average"])
    runs = ([res["gbit-hour"]] if "gbit-hour" in res else []) + (res["10g"]["runs"] if "10g" in res else [])
    cols = ["scenario", "set", "sim_time_s", "wall_s", "cpu_s", "peak_rss_mib", "events", "packets", "arena_slots"]
    print("  ".join(f"{c:>14}" for c in cols))
    for r in runs:
        vals = [r["scenario"], ",".join(r["set"]) or "-", *(r[c] for c in cols[2:])]
        print("  ".join(f"{v:>14.4g}" if isinstance(v, float) else f"{v!s:>14}" for v in vals))
    if "10g" in res:
        t = res["10g"]
        print(f"memory per flow: {t['bytes_per_flow']:.0f} B; per queued packet: {t['bytes_per_queued_packet']:.0f} B")


if __name__ == "__main__":
    main()
