"""Emulation: a scenario's bottleneck, live, between two network namespaces, with the
endpoints' traffic from the real Linux stack (``aqmlab emulate``; docs/emulation.md).

`emulate` returns the same `Results` tables as a simulation (summary, queues, flows,
apps; timeseries, drops and tcp when the scenario asks for them) plus an `emulation`
table with the emulator's scheduling error. Needs root and /dev/net/tun.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ScenarioError, SimulationError
from ..results import Results
from ..scenario import ScenarioLike, check_seed, load_scenario, validate
from .netns import Testbed, pipes
from .plan import Plan, make_plan

#: Highest bottleneck rate accepted without ``force`` (bit/s): the emulator kept its
#: p99 scheduling error under 0.1 ms and full utilisation up to here on the 2-core
#: test machine under the other builders' load; at 400 Mbit/s it fell behind by tens
#: of ms (docs/emulation.md, "Rate limit").
MAX_RATE_BPS = 200e6
#: A run whose p99 scheduling error exceeds this (µs) is reported with a warning.
SCHED_WARN_US = 1000.0
#: Upper bound of the busy-poll window (µs); see `busy_poll_for`.
MAX_BUSY_POLL_US = 50.0
WORKER = Path(__file__).with_name("worker.py")


def available() -> str | None:
    """None if emulation can run here, else why not."""
    if sys.platform != "linux":
        return "emulation needs Linux"
    if os.geteuid() != 0:
        return "emulation needs root (network namespaces, TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun"
    from .. import _core

    if not hasattr(_core, "emulate"):
        return "this build of aqmlab has no emulator"
    return None


def emulate(scenario: ScenarioLike, seed: int | None = None, set: Sequence[str] | Mapping[str, Any] | None = None,
            *, force: bool = False, realtime: bool = True, busy_poll_us: float | None = None,
            gso_max_segs: int | None = None, quickack: bool = False, cpu: int | None = None, log: Callable[[str], None] | None = None) -> Results:
    """Run ``scenario`` in emulation and return its tables (see the module doc).
    ``busy_poll_us`` None: `busy_poll_for` the bottleneck rate. ``gso_max_segs``,
    ``quickack``: kernel-side experiments (`netns.Testbed`). ``cpu``: run the
    emulator on this CPU only (None: wherever the scheduler puts it)."""
    if seed is not None:
        check_seed(seed, "seed")
    if gso_max_segs is not None and not 1 <= gso_max_segs <= 65535:
        raise ValueError(f"gso_max_segs: {gso_max_segs!r}; expected an integer from 1 to 65535")
    if cpu is not None and (isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0):
        raise ValueError(f"cpu: {cpu!r}; expected a CPU number (an integer from 0)")
    why = available()
    if why:
        raise SimulationError(why)
    doc = load_scenario(scenario, set)
    validate(doc)
    plan = make_plan(doc, seed)
    if plan.bottleneck_bps > MAX_RATE_BPS and not force:
        raise ScenarioError("topology.bottleneck.rate",
                            f"{plan.bottleneck_bps / 1e6:g} Mbit/s: above the {MAX_RATE_BPS / 1e6:g} Mbit/s the emulator was "
                            "measured to keep on this machine (docs/emulation.md); pass force to try anyway")
    if not plan.flows:
        raise ScenarioError("traffic", "no traffic to emulate")
    for ignored in plan.ignored:
        (log or _stderr)(f"warning: ignored in emulation: {ignored}")
    if busy_poll_us is None:
        busy_poll_us = busy_poll_for(plan.bottleneck_bps)
    doc_seeded = {**doc, "seed": plan.seed}
    wall0 = time.monotonic()
    with Testbed(doc_seeded, plan.left, plan.right, seed=plan.seed, realtime=realtime, busy_poll_us=busy_poll_us,
                 max_duration_s=plan.duration_s + 60, measure_s=plan.duration_s, sysctls=plan.sysctls,
                 gso_max_segs=gso_max_segs, quickack=quickack, cpu=cpu) as tb:
        workers: dict[str, subprocess.Popen[bytes]] = {}
        for side, hosts in (("l", plan.left), ("r", plan.right)):
            spec = _worker_spec(plan, tb, {h for h in hosts}, doc)
            path = Path(tb.tmp.name) / f"worker-{side}.json"
            path.write_text(json.dumps(spec))
            workers[side] = tb.spawn(side, [sys.executable, str(WORKER), str(path)])
        for side, w in workers.items():
            line = pipes(w)[1].readline()
            if line.strip() != b"ready":
                w.wait(timeout=5)
                raise SimulationError(f"traffic worker ({side}) did not start: {pipes(w)[2].read().decode(errors='replace').strip()}")
        tb.go()
        for w in workers.values():
            stdin = pipes(w)[0]
            stdin.write(b"g\n")
            stdin.flush()
        outs: dict[str, Any] = {}
        deadline = time.monotonic() + plan.duration_s + 15
        for side, w in workers.items():
            # Not communicate(): closing a worker's stdin tells it to stop early.
            out = _read_until_exit(w, deadline)
            if out is None:
                raise SimulationError(f"traffic worker ({side}) did not finish")
            if w.returncode != 0 or not out.strip():
                raise SimulationError(f"traffic worker ({side}) failed: {pipes(w)[2].read().decode(errors='replace').strip()}")
            outs[side] = json.loads(out.decode().strip().splitlines()[-1])
        report = tb.finish()
        addr = dict(tb.addr)
    wall = time.monotonic() - wall0
    from .tables import build_results

    res = build_results(plan, doc_seeded, report, outs, addr, wall)
    p99 = res.emulation["sched_err_us_p99"][0]
    if p99 is not None and p99 > SCHED_WARN_US:
        (log or _stderr)(f"warning: the emulator's p99 scheduling error was {p99 / 1e3:.1f} ms (above "
                         f"{SCHED_WARN_US / 1e3:g} ms): the machine was too busy for faithful timing; rerun on a quieter one")
    return res


def busy_poll_for(rate_bps: float, mtu: int = 1500) -> float:
    """The busy-poll window: a quarter of one MTU's serialisation time, at most
    `MAX_BUSY_POLL_US`. Spinning before every deadline at a saturated fast link would
    keep the SCHED_FIFO thread on the CPU all the time, and the kernel's RT throttling
    then stops it for ~50 ms per second (measured: p99 error 28 ms at 200 Mbit/s with a
    50 µs window, 84 µs with 10 µs); a quarter of a packet time bounds the spinning to
    well under that budget while keeping sub-µs errors at low rates."""
    return min(MAX_BUSY_POLL_US, mtu * 8 / rate_bps * 1e6 / 4)


def _read_until_exit(proc: subprocess.Popen[bytes], deadline: float) -> bytes | None:
    """Everything `proc` writes to stdout until it exits, or None at `deadline`."""
    import select

    chunks: list[bytes] = []
    fd = pipes(proc)[1].fileno()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        r, _, _ = select.select([fd], [], [], min(left, 1.0))
        if r:
            b = os.read(fd, 1 << 16)
            if not b:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                return b"".join(chunks)
            chunks.append(b)


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


def _worker_spec(plan: Plan, tb: Testbed, hosts: set[str], doc: dict[str, Any]) -> dict[str, Any]:
    out = doc.get("output", {}) if isinstance(doc.get("output"), dict) else {}
    from .plan import seconds

    spec: dict[str, Any] = {"receivers": [], "senders": [], "duration_s": plan.duration_s, "warmup_s": plan.warmup_s, "grace_s": 0.3,
            "tcp_timeseries_s": seconds(out["tcp_timeseries"]) if "tcp_timeseries" in out else 0}
    for f in plan.flows:
        if f.dst in hosts:
            spec["receivers"].append({"id": f.id, "proto": f.kind, "ip": tb.addr[f.dst], "port": f.dport})
        if f.src in hosts:
            spec["senders"].append({
                "id": f.id, "proto": f.kind, "src_ip": tb.addr[f.src], "sport": f.sport, "dst_ip": tb.addr[f.dst],
                "dport": f.dport, "cc": f.kernel_cc, "start_s": f.start_s, "stop_s": f.stop_s,
                "rate_bps": f.rate_bps, "size": f.size, "poisson": f.poisson, "seed": f"{plan.seed}/{f.id}",
            })
    return spec
