"""Sweep files (TOML): read, check, run (see docs/sweeps.md, "Sweep files")."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..scenario import check_finite, parse_overrides, read_toml
from .driver import SweepOutcome, SweepPlan, plan_sweep, sweep
from .points import expand_points, expand_seeds
from .store import check_name

#: Keys a sweep file may have at its top level.
SWEEP_KEYS = {"base", "grid", "zip", "seeds", "set", "executor", "address", "workers", "out", "name", "quick", "description"}


@dataclass
class SweepFile:
    path: Path
    base: Path
    grid: dict[str, Any]
    zip: list[Any]
    seeds: int | list[int]
    set: dict[str, Any]
    executor: str
    address: str | None
    workers: int | None
    out: Path | None
    name: str
    quick: dict[str, Any]


def read_sweep_file(path: str | os.PathLike[str]) -> SweepFile:
    """Read and check a sweep file. Errors are `ScenarioError` naming the key."""
    p = Path(path)
    doc = read_toml(p, "sweep")
    for k in doc:
        if k not in SWEEP_KEYS:
            raise ScenarioError(k, f"unknown key in sweep file; expected one of {', '.join(sorted(SWEEP_KEYS))}")
    if "base" not in doc:
        raise ScenarioError("base", "missing: the path of the base scenario file (relative to the sweep file)")
    if not isinstance(doc["base"], str):
        raise ScenarioError("base", f"{doc['base']!r}: expected a path as a string")
    base = (p.parent / doc["base"]).resolve()
    if not base.exists():
        raise ScenarioError("base", f'"{doc["base"]}": scenario file not found ({base})')
    grid = doc.get("grid", {})
    if not isinstance(grid, dict):
        raise ScenarioError("grid", "expected a table of dotted paths to lists of values")
    z = doc.get("zip", [])
    if isinstance(z, dict):
        z = [z] if z else []
    if not isinstance(z, list) or not all(isinstance(g, dict) for g in z):
        raise ScenarioError("zip", "expected a table (or an array of tables) of dotted paths to equal-length lists")
    seeds = doc.get("seeds", 1)
    expand_seeds(seeds)
    s = doc.get("set", {})
    if not isinstance(s, dict):
        raise ScenarioError("set", "expected a table of dotted paths to values")
    executor = doc.get("executor", "local")
    if executor not in ("local", "dask"):
        raise ScenarioError("executor", f'"{executor}": unknown executor; expected "local" or "dask"')
    workers = doc.get("workers")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise ScenarioError("workers", f"{workers!r}: expected a positive integer")
    quick = doc.get("quick", {})
    if not isinstance(quick, dict):
        raise ScenarioError("quick", "expected a table (seeds, set)")
    for k in quick:
        if k not in ("seeds", "set", "grid"):
            raise ScenarioError(f"quick.{k}", "unknown key; expected seeds, set or grid")
    if "seeds" in quick:
        try:
            expand_seeds(quick["seeds"])
        except ScenarioError as e:
            raise ScenarioError("quick.seeds", e.message) from None
    expand_points(grid, z)  # checks the axes
    check_finite(s, "set")
    check_finite(quick, "quick")
    out = doc.get("out")
    if out is not None and not isinstance(out, str):
        raise ScenarioError("out", f"{out!r}: expected a folder path as a string")
    name = check_name(doc.get("name", p.parent.name if p.name == "sweep.toml" else p.stem))
    return SweepFile(
        path=p, base=base, grid=grid, zip=z, seeds=seeds, set=s, executor=executor,
        address=doc.get("address"), workers=workers,
        out=(p.parent / out) if out else None, name=name,
        quick=quick,
    )


def sweep_file_args(sf: SweepFile, quick: bool = False, **kw: Any) -> dict[str, Any]:
    """The `sweep` arguments of a sweep file; keyword arguments override its values
    (``out``, ``executor``, ``workers``, ``address``, ``seeds``, ``progress``,
    ``resume``, ``set``)."""
    seeds = sf.quick.get("seeds", sf.seeds) if quick else sf.seeds
    fixed = dict(sf.set)
    grid = sf.grid
    if quick:
        fixed.update(sf.quick.get("set", {}))
        grid = {**sf.grid, **sf.quick.get("grid", {})}
    fixed.update(parse_overrides(kw.pop("set", None)))
    args: dict[str, Any] = dict(
        base=sf.base, grid=grid, zip=sf.zip, seeds=seeds, set=fixed, executor=sf.executor,
        address=sf.address, workers=sf.workers, out=sf.out or Path("out") / sf.name, name=sf.name,
        quick=quick,
    )
    args.update({k: v for k, v in kw.items() if v is not None})
    return args


def run_sweep_file(sf: SweepFile, quick: bool = False, **kw: Any) -> SweepOutcome:
    """Run a sweep file (keyword arguments as `sweep_file_args`)."""
    return sweep(**sweep_file_args(sf, quick, **kw))


def plan_sweep_file(sf: SweepFile, quick: bool = False, **kw: Any) -> SweepPlan:
    """A sweep file resolved for `run_plans` (keyword arguments as `sweep_file_args`;
    ``executor``, ``workers`` and ``address`` are `run_plans`' own)."""
    args = sweep_file_args(sf, quick, **kw)
    for k in ("executor", "workers", "address"):
        args.pop(k)
    return plan_sweep(**args)
