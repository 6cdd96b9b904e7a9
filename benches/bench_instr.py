"""Instructions per event and per packet of the simulation core (not a test).

    .venv/bin/python benches/bench_instr.py [SCENARIO.toml ...] [--fraction 0.2] [--json]

Wall-clock rates are noisy on a shared machine; instruction counts are not. Each
scenario is run twice under ``valgrind --tool=cachegrind`` (instruction counting only,
no cache simulation) through ``aqmlab run --json``: once for its full duration and once
for ``--fraction`` of it. Start-up (Python, the extension, building the scenario,
building the tables) costs the same in both, so the differences

    instructions/event  = (I_long − I_short) / (events_long − events_short)
    instructions/packet = (I_long − I_short) / (packets_long − packets_short)

are the per-event and per-packet cost of the event loop alone. ``events/packet`` is
the long run's ratio (the run summary's ``events`` / ``packets``), and ``events/s``,
``packets/s`` come from one native run's core wall time (no valgrind; noisy: state the
machine's load with them). Needs valgrind (``apt-get install valgrind``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "benches" / "scenarios").glob("*.toml"))
_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def run(path: Path, duration: str | None, valgrind: bool) -> tuple[dict, int | None]:
    """The run summary of ``aqmlab run --json`` and, under valgrind, its instruction count."""
    cmd = [sys.executable, "-m", "aqmlab.cli", "run", str(path), "--json"]
    if duration is not None:
        cmd += ["--set", f"duration={duration}"]
    irefs = None
    with tempfile.TemporaryDirectory() as tmp:
        if valgrind:
            cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/cg.out", *cmd]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            raise SystemExit(f"{path.name}: {' '.join(cmd)} failed:\n{r.stderr}")
        if valgrind:
            m = _IREFS.search(r.stderr)
            if not m:
                raise SystemExit(f"{path.name}: no 'I refs' line in valgrind's output:\n{r.stderr[-2000:]}")
            irefs = int(m.group(1).replace(",", ""))
    return json.loads(r.stdout)["summary"], irefs


def measure(path: Path, fraction: float) -> dict:
    full, i_long = run(path, None, valgrind=True)
    short_s = full["sim_time_s"] * fraction
    short, i_short = run(path, f"{short_s:.9g}s", valgrind=True)
    native, _ = run(path, None, valgrind=False)
    d_ev = full["events"] - short["events"]
    d_pk = full["packets"] - short["packets"]
    return {
        "scenario": path.stem,
        "events": full["events"],
        "packets": full["packets"],
        "events_per_packet": full["events"] / full["packets"],
        "instructions_per_event": (i_long - i_short) / d_ev,
        "instructions_per_packet": (i_long - i_short) / d_pk,
        "events_per_s": native["events"] / native["wall_time_s"],
        "packets_per_s": native["packets"] / native["wall_time_s"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", nargs="*", type=Path, default=SCENARIOS)
    ap.add_argument("--fraction", type=float, default=0.2, help="The short run's share of the duration.")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    rows = [measure(p.resolve(), a.fraction) for p in a.scenarios]
    if a.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"load average: {' '.join(os.getloadavg().__repr__().strip('()').split(', '))}")
    cols = ["scenario", "events_per_packet", "instructions_per_event", "instructions_per_packet", "events_per_s", "packets_per_s"]
    print("  ".join(f"{c:>23}" for c in cols))
    for r in rows:
        print("  ".join(f"{r[c]:>23.4g}" if isinstance(r[c], float) else f"{r[c]:>23}" for c in cols))


if __name__ == "__main__":
    main()
