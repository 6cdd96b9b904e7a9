"""Sweep points, seeds and run ids (see docs/sweeps.md, "Run ids").

* **Points.** ``grid`` axes form a Cartesian product (first axis slowest); each ``zip``
  group is one more axis whose paths move together. Each point is a dict
  ``{dotted path: value}`` applied with `aqmlab.scenario.set_path` on top of ``set``.
* **Run id.** ``sha256`` of the canonical JSON (sorted keys, no spaces) of
  ``{"scenario": resolved scenario with its seed, "seed": seed}``, first 16 hex digits.
  The same resolved scenario and seed always get the same id, whatever axis order,
  sweep file or machine produced it; the build is recorded per run, not hashed.
"""

from __future__ import annotations

import builtins
import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ScenarioError
from ..scenario import ScenarioLike, _split_path, check_finite, load_scenario, set_path

#: Seeds are unsigned 64-bit integers in the core.
MAX_SEED = 2**64 - 1


@dataclass
class Task:
    """One run: a resolved scenario and its seed. Sent to workers (pickled)."""

    id: str
    point: dict[str, Any]
    point_id: str
    seed: int
    scenario: dict[str, Any]
    deaths: int = 0
    #: Set by the local executor when the run's worker died: was this run in progress?
    started: bool = False


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str, allow_nan=False)


def run_id(scenario: Mapping[str, Any], seed: int) -> str:
    """The stable id of a run: a hash of the resolved scenario and the seed."""
    doc = {**scenario, "seed": seed}
    return hashlib.sha256(canonical_json({"scenario": doc, "seed": seed}).encode()).hexdigest()[:16]


def point_id(point: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(dict(point)).encode()).hexdigest()[:12]


def _check_path(path: str, where: str) -> None:
    if not isinstance(path, str):
        raise ScenarioError(where, f"{path!r}: expected a dotted scenario path as the key")
    try:
        _split_path(path)
    except ScenarioError as e:
        raise ScenarioError(f"{where}.{path}", e.message) from None


def expand_points(grid: Mapping[str, Sequence[Any]] | None = None, zip: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]] | None = None) -> list[dict[str, Any]]:
    """The sweep points: the product of the grid axes and the zipped groups."""
    axes: list[list[dict[str, Any]]] = []
    for path, values in (grid or {}).items():
        _check_path(path, "grid")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) == 0:
            raise ScenarioError(f"grid.{path}", f"{values!r}: expected a non-empty list of values")
        for i, v in enumerate(values):
            check_finite(v, f"grid.{path}[{i}]")
        axes.append([{path: v} for v in values])
    groups: list[Mapping[str, Sequence[Any]]]
    if zip is None:
        groups = []
    elif isinstance(zip, Mapping):
        groups = [zip] if zip else []
    else:
        groups = list(zip)
    for gi, group in enumerate(groups):
        where = "zip" if len(groups) == 1 else f"zip[{gi}]"
        lengths = set()
        for path, values in group.items():
            _check_path(path, where)
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) == 0:
                raise ScenarioError(f"{where}.{path}", f"{values!r}: expected a non-empty list of values")
            for i, v in enumerate(values):
                check_finite(v, f"{where}.{path}[{i}]")
            lengths.add(len(values))
        if len(lengths) > 1:
            detail = ", ".join(f"{p} has {len(v)}" for p, v in group.items())
            raise ScenarioError(where, f"zipped lists must have the same length ({detail})")
        n = lengths.pop()
        axes.append([{p: group[p][i] for p in group} for i in range(n)])
    points = []
    for combo in itertools.product(*axes):
        pt: dict[str, Any] = {}
        for part in combo:
            for p in part:
                if p in pt:
                    raise ScenarioError(p, "this path appears in more than one sweep axis")
            pt.update(part)
        points.append(pt)
    return points


def expand_seeds(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, bool):
        raise ScenarioError("seeds", f"{seeds!r}: expected a number of seeds or a list of seeds")
    if isinstance(seeds, int):
        if seeds < 1:
            raise ScenarioError("seeds", f"{seeds}: expected at least one seed")
        if seeds > 1_000_000:
            raise ScenarioError("seeds", f"{seeds}: expected at most 1000000 seeds")
        return list(range(1, seeds + 1))
    if isinstance(seeds, Sequence) and not isinstance(seeds, str) and seeds and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= MAX_SEED for s in seeds):
        if len(set(seeds)) != len(seeds):
            raise ScenarioError("seeds", "the seed list has duplicates")
        return list(seeds)
    raise ScenarioError("seeds", f"{seeds!r}: expected a number of seeds or a list of integers in 0..2^64-1")


def make_tasks(base: ScenarioLike, grid: Mapping[str, Sequence[Any]] | None = None, zip: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]] | None = None, seeds: int | Sequence[int] = 1, set: Sequence[str] | Mapping[str, Any] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], list[Task]]:
    """Resolve every run of a sweep: (base document, points, tasks)."""
    base_doc = load_scenario(base, set)
    points = expand_points(grid, zip)
    seed_list = expand_seeds(seeds)
    tasks = []
    for pt in points:
        doc = json.loads(json.dumps(base_doc))
        for path, value in pt.items():
            try:
                # A copy: a table-valued axis is shared by every point, and a later
                # axis may set a path inside it (qdisc table × qdisc.limit).
                set_path(doc, path, json.loads(json.dumps(value)))
            except ScenarioError as e:
                raise ScenarioError(e.path or path, f"sweep axis {path}: {e.message}") from None
        pid = point_id(pt)
        for seed in seed_list:
            d = {**doc, "seed": seed}
            tasks.append(Task(run_id(d, seed), pt, pid, seed, d))
    ids = [t.id for t in tasks]
    unique = builtins.set(ids)  # `set` is the overrides argument here
    if len(unique) != len(ids):
        raise ScenarioError("grid", f"{len(ids) - len(unique)} runs are identical (two axis values give the same scenario)")
    return base_doc, points, tasks
