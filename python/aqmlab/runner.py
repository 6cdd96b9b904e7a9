"""Running one scenario."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import _core
from .results import Results
from .scenario import ScenarioLike, load_scenario, to_json

#: Steps a run is split into so progress can be reported (and Ctrl-C honoured).
_STEPS = 200


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    set: Sequence[str] | Mapping[str, Any] | None = None,
    out: str | os.PathLike | None = None,
    progress: Callable[[float], None] | None = None,
) -> Results:
    """Simulate ``scenario`` (a TOML path or a dict) and return its tables.

    ``seed`` overrides the scenario's seed; ``set`` applies dotted-path overrides;
    ``out`` is where pcap files go (tables are returned, not written: call
    ``Results.write_parquet``). ``progress`` is called with the fraction done.
    The GIL is released while the core simulates.
    """
    doc = load_scenario(scenario, set)
    wants_pcap = bool(doc.get("output", {}).get("pcap")) if isinstance(doc.get("output"), dict) else False
    if out is None and wants_pcap:
        out = tempfile.mkdtemp(prefix="aqmlab-pcap-")
    sim = _core.Simulation(to_json(doc), seed, str(out) if out is not None else None)
    if progress is None:
        sim.run()
    else:
        end = sim.end_ns
        for i in range(1, _STEPS + 1):
            sim.run_until(end * i // _STEPS)
            progress(i / _STEPS)
            if sim.done:
                break
        sim.run()
    if seed is not None:
        doc = {**doc, "seed": seed}
    return Results.from_core(sim.results(), doc, sim.pcap_files)


class DelayedProgress:
    """Calls ``show(fraction)`` only once a run has taken more than ``after`` seconds."""

    def __init__(self, show: Callable[[float], None], after: float = 1.0):
        self.show = show
        self.after = after
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, fraction: float) -> None:
        if self.shown or time.monotonic() - self.start > self.after:
            self.shown = True
            self.show(fraction)


def default_out(name: str) -> Path:
    return Path("out") / name
