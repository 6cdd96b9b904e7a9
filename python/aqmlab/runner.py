"""Running one scenario."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import _core
from .results import Results, check_run_out
from .scenario import ScenarioLike, check_seed, load_scenario, to_json

#: Wall-clock seconds one step of a run aims at. The core runs without the GIL and
#: cannot see Ctrl-C; Python raises KeyboardInterrupt between steps, so a step must be
#: short (Ctrl-C stops a run within about twice this), yet long enough that stepping
#: costs nothing measurable.
STEP_WALL_S = 0.1
#: The first step: 1/1000 of the run; later steps are doubled or halved towards
#: `STEP_WALL_S`, but never longer than 1/100 of the run or `_MAX_STEP_NS` of simulated
#: time, so that a quiet start (traffic that begins late) cannot grow a step that then
#: takes minutes once the load arrives.
_FIRST_STEP_FRACTION = 1000
_MAX_STEP_NS = 10 * 10**9


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    set: Sequence[str] | Mapping[str, Any] | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: Callable[[float], None] | None = None,
) -> Results:
    """Simulate ``scenario`` (a TOML path or a dict) and return its tables.

    ``seed`` overrides the scenario's seed; ``set`` applies dotted-path overrides;
    ``out`` is where pcap files go (tables are returned, not written: call
    ``Results.write_parquet``); without it, pcap files go to a new temporary folder
    (``Results.pcap_files`` says where). ``progress`` is called with the fraction done.
    The GIL is released while the core simulates; Ctrl-C stops a run within ~0.2 s.
    """
    if seed is not None:
        check_seed(seed, "seed")
    if out is not None:
        check_run_out(out)
    from .flent import expand_presets

    doc, _ = expand_presets(load_scenario(scenario, set))
    wants_pcap = bool(doc.get("output", {}).get("pcap")) if isinstance(doc.get("output"), dict) else False
    if out is None and wants_pcap:
        import tempfile

        out = tempfile.mkdtemp(prefix="aqmlab-pcap-")
    sim = _core.Simulation(to_json(doc), seed, str(out) if out is not None else None)
    run_in_steps(sim, progress)
    if seed is not None:
        doc = {**doc, "seed": seed}
    return Results.from_core(sim.results(), doc, sim.pcap_files)


def run_in_steps(sim: _core.Simulation, progress: Callable[[float], None] | None = None) -> None:
    """Run ``sim`` to its end in steps of about `STEP_WALL_S` wall time each."""
    end = sim.end_ns
    step = max(end // _FIRST_STEP_FRACTION, 1)
    t = 0
    while t < end and not sim.done:
        t = min(end, t + step)
        t0 = time.perf_counter()
        sim.run_until(t)
        took = time.perf_counter() - t0
        if took < STEP_WALL_S / 2:
            step = min(step * 2, max(end // 100, 1), _MAX_STEP_NS)
        elif took > STEP_WALL_S * 2:
            step = max(step // 2, 1)
        if progress is not None:
            progress(t / end if end else 1.0)
    sim.run()
    if progress is not None:
        progress(1.0)


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
