"""aqmlab against htsim on the dumbbell of issue 34 (a benchmark, not a test).

    .venv/bin/python benches/htsim/compare.py HTSIM_CHECKOUT [--aqmlab-bin BIN ...]
        [--scenario FILE ...] [--short 10] [--long 60] [--repeats 3] [--no-perf]

HTSIM_CHECKOUT is a clone of htsim (https://github.com/Broadcom/csg-htsim; this script
downloads nothing). Its ``sim/libhtsim.a`` is built with htsim's own Makefile when
missing, and ``main_aqmlab_dumbbell.cpp`` (next to this script) is compiled against it
with the library's flags. aqmlab runs as ``target/release/examples/run_scenario``
(built here unless ``--aqmlab-bin`` names binaries, e.g. an older build to compare).

For each simulator and each scenario: instruction counts under ``valgrind
--tool=cachegrind --cache-sim=no`` of a ``--short`` and a ``--long`` run (simulated
seconds), differenced so that start-up cancels:

    instructions/event  = (I_long - I_short) / (events_long - events_short)
    instructions/packet = (I_long - I_short) / (packets_long - packets_short)

and the same per *delivered* packet; events/packet is the long run's ratio. CPU seconds
of the long run are the median of ``--repeats`` ``perf stat -e task-clock`` runs,
interleaved between the binaries (noisy on a shared machine: the load average is
printed). The model's counts (packets created and delivered, drops, in-order data
rate) come from ``aqmlab run --json`` for aqmlab and from the driver's output for
htsim. ``events`` is one pass of each simulator's event loop: aqmlab's ``events``
summary column, htsim's ``EventList::doNextEvent()`` calls that returned true.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DRIVER = HERE / "main_aqmlab_dumbbell.cpp"
SCENARIOS = [ROOT / "benches" / "scenarios" / "htsim-dumbbell.toml", HERE / "htsim-dumbbell-linux.toml"]
# htsim's sim/Makefile compiles the library with these; the driver gets the same.
CXXFLAGS = ["-std=c++11", "-O3", "-g", "-fPIE"]
_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")
_KV = re.compile(r"^(\w+) = (\S+)$", re.M)


@dataclass
class Sim:
    """One simulator binary on one scenario: how to run it for D seconds."""

    label: str
    argv: Callable[[float], list[str]]  # the command line of a run of D simulated seconds
    scenario: Path | None  # aqmlab's scenario file (its counts come from the CLI); None: htsim
    irefs: dict[float, int] = field(default_factory=dict)
    stats: dict[float, dict[str, float]] = field(default_factory=dict)
    cpu: list[float] = field(default_factory=list)


def sh(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r


def build_htsim(checkout: Path, out: Path) -> Path:
    sim = checkout / "sim"
    if not (sim / "eventlist.h").is_file():
        raise SystemExit(f"{checkout}: not an htsim checkout (no sim/eventlist.h)")
    if not (sim / "libhtsim.a").is_file():
        print(f"building {sim}/libhtsim.a with htsim's Makefile ...", file=sys.stderr)
        sh(["make", "-C", str(sim), "libhtsim.a"])
    exe = out / "htsim_aqmlab_dumbbell"
    sh(["g++", *CXXFLAGS, f"-I{sim}", str(DRIVER), str(sim / "libhtsim.a"), "-o", str(exe)])
    return exe


def build_aqmlab() -> Path:
    sh(["cargo", "build", "-q", "--release", "-p", "aqmlab-core", "--example", "run_scenario"], cwd=ROOT)
    return ROOT / "target" / "release" / "examples" / "run_scenario"


def with_duration(scenario: Path, seconds: float, tmp: Path) -> Path:
    """A copy of the scenario file running for ``seconds``."""
    text, n = re.subn(r'(?m)^duration = ".*"$', f'duration = "{seconds:g}s"', scenario.read_text())
    if n != 1:
        raise SystemExit(f"{scenario}: expected one top-level 'duration = \"...\"' line")
    path = tmp / f"{scenario.stem}-{seconds:g}s.toml"
    path.write_text(text)
    return path


def aqmlab_argv(binary: Path, scenario: Path, tmp: Path, seconds: float) -> list[str]:
    return [str(binary), str(with_duration(scenario, seconds, tmp))]


def aqmlab_counts(scenario: Path) -> dict[str, float]:
    """The run summary's counts, the bottleneck's drops, RTOs and the in-order data rate
    (in 1500 B packets, as htsim counts it: payload / mss x (mss + header_bytes)), from
    ``aqmlab run --json``."""
    r = sh([sys.executable, "-m", "aqmlab.cli", "run", str(scenario), "--json"], cwd=ROOT)
    doc = json.loads(r.stdout)
    s = doc["summary"]
    out = {k: s[k] for k in ("events", "packets", "delivered")}
    out["bottleneck_drops"] = sum(q["drops"] for q in doc["queues"] if q["link"] == "L->R")
    out["rtos"] = sum(f["timeouts"] for f in doc["flows"])
    tcp = tomllib.loads(scenario.read_text())["traffic"][0]
    mss, hdr = (int(str(tcp[k]).removesuffix("B")) for k in ("mss", "header_bytes"))
    payload = sum(a["bytes_delivered"] for a in doc["apps"])
    out["in_order_mbit_s"] = payload / mss * (mss + hdr) * 8 / s["sim_time_s"] / 1e6
    return out


def htsim_counts(output: str) -> dict[str, float]:
    kv = {k: float(v) for k, v in _KV.findall(output)}
    if "events" not in kv:
        raise SystemExit(f"htsim driver printed no 'events = ' line:\n{output[-2000:]}")
    kv["rtos"] = output.count(" RTO ")
    return kv


def check_same_run(sim: Sim, seconds: float, run_scenario_output: str) -> None:
    """The counts come from the installed ``aqmlab`` CLI, the instructions from the binary:
    both must have run the same simulation (same events), or the ratios mean nothing."""
    kv = dict(_KV.findall(run_scenario_output))
    events, expected = float(kv.get("events", "nan")), sim.stats[seconds]["events"]
    if events != expected:
        raise SystemExit(
            f"{sim.label}, {seconds:g} s: the binary ran {events:g} events, the installed aqmlab "
            f"{expected:g}: they simulate differently (rebuild with make install, or compare "
            "binaries of behaviour-identical builds only)"
        )


def cachegrind(argv: list[str], tmp: Path) -> tuple[int, str]:
    r = sh(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/cg.out", *argv])
    m = _IREFS.search(r.stderr)
    if not m:
        raise SystemExit(f"no 'I refs' in valgrind's output:\n{r.stderr[-2000:]}")
    return int(m.group(1).replace(",", "")), r.stdout


def cpu_seconds(argv: list[str]) -> float:
    r = sh(["perf", "stat", "-x,", "-e", "task-clock", *argv])
    for line in r.stderr.splitlines():
        parts = line.split(",")
        if len(parts) > 2 and parts[2].startswith("task-clock"):
            return float(parts[0]) / 1e3
    raise SystemExit(f"no task-clock in perf's output:\n{r.stderr[-2000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("htsim", type=Path, help="htsim checkout (github.com/Broadcom/csg-htsim)")
    ap.add_argument(
        "--aqmlab-bin", type=Path, action="append", help="run_scenario binaries (default: build this tree's)"
    )
    ap.add_argument("--scenario", type=Path, action="append", help="aqmlab scenarios (default: ns2 and linux profiles)")
    ap.add_argument("--short", type=float, default=10.0)
    ap.add_argument("--long", type=float, default=60.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-perf", action="store_true", help="skip the CPU-time runs")
    a = ap.parse_args()
    for tool in ["valgrind", "g++", "make"] + ([] if a.no_perf else ["perf"]):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed")
    scenarios = [p.resolve() for p in (a.scenario or SCENARIOS)]
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        htsim = build_htsim(a.htsim.resolve(), tmp)
        bins = [p.resolve() for p in (a.aqmlab_bin or [build_aqmlab()])]
        sims = [Sim("htsim", lambda d: [str(htsim), "-duration", f"{d:g}"], None)]
        for scen in scenarios:
            for b in bins:
                argv = partial(aqmlab_argv, b, scen, tmp)
                sims.append(Sim(f"{scen.stem} [{b.name}]", argv, scen))
        for sim in sims:
            for d in (a.short, a.long):
                sim.irefs[d], out = cachegrind(sim.argv(d), tmp)
                if sim.scenario is None:
                    sim.stats[d] = htsim_counts(out)
                else:
                    sim.stats[d] = aqmlab_counts(with_duration(sim.scenario, d, tmp))
                    check_same_run(sim, d, out)
        if not a.no_perf:
            for _ in range(a.repeats):  # interleaved: each round runs every binary once
                for sim in sims:
                    sim.cpu.append(cpu_seconds(sim.argv(a.long)))
    report(sims, a)


def report(sims: list[Sim], a: argparse.Namespace) -> None:
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; short {a.short:g} s, long {a.long:g} s")
    cols = ["events/pkt", "events/deliv", "instr/event", "instr/pkt", "instr/deliv", "cpu_s", "cpu/htsim"]
    cols += ["drops", "RTOs", "Mbit/s"]
    print(f"{'simulator':<42}" + "".join(f"{c:>13}" for c in cols))
    htsim_cpu = statistics.median(sims[0].cpu) if sims[0].cpu else float("nan")
    for s in sims:
        lo, hi = s.stats[a.short], s.stats[a.long]
        di = s.irefs[a.long] - s.irefs[a.short]
        row = [
            hi["events"] / hi["packets"],
            hi["events"] / hi["delivered"],
            di / (hi["events"] - lo["events"]),
            di / (hi["packets"] - lo["packets"]),
            di / (hi["delivered"] - lo["delivered"]),
            statistics.median(s.cpu) if s.cpu else float("nan"),
            statistics.median(s.cpu) / htsim_cpu if s.cpu else float("nan"),
            hi["bottleneck_drops"],
            hi["rtos"],
            hi["in_order_mbit_s"],
        ]
        print(f"{s.label:<42}" + "".join(f"{v:>13.4g}" for v in row))


if __name__ == "__main__":
    main()
