"""The sweep driver: resolve the runs, skip the finished ones (after checking them),
hand the rest to an executor and write each run as it arrives.

* **Resume.** With ``resume=True`` (default) runs whose ``runs/ID`` exists and passes
  `verify_run` are skipped; a broken one is deleted and run again (and counted in
  ``SweepOutcome.broken``). Runs made by another build (`build_id`) are refused unless
  ``allow_mixed=True``. Failed runs are tried again. ``resume=False`` reruns everything
  and replaces old results.
* **Failures** are recorded in ``OUT/failed/ID.json`` (error type, path, message,
  traceback) and the sweep goes on; when *no* run succeeds `sweep` raises
  `SweepFailed` with the first error.
* **Ctrl-C** stops the workers at once (runs in progress are abandoned); every run
  already finished is on disk, and the next start resumes from there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import ScenarioError, SimulationError
from ..scenario import ScenarioLike, parse_overrides
from ..units import parse_duration_s
from .executors import Executor, make_executor
from .points import Task, expand_seeds, make_tasks
from .store import build_id, check_out_dir, verify_run, versions, write_failure, write_json_atomic, write_run


@dataclass
class SweepOutcome:
    """What a sweep did. ``failed`` lists ``{"id", "point", "seed", "error"}``;
    ``broken`` lists ``{"id", "problem"}`` of finished runs found incomplete and rerun."""

    out: Path
    total: int
    ran: int = 0
    skipped: int = 0
    ok: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    broken: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    workers: int = 1
    interrupted: bool = False

    @property
    def n_failed(self) -> int:
        return len(self.failed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out), "total": self.total, "ran": self.ran, "skipped": self.skipped,
            "ok": self.ok, "failed": self.n_failed, "wall_s": self.wall_s, "workers": self.workers,
            "interrupted": self.interrupted, "broken": self.broken,
            "failures": [{k: f[k] for k in ("id", "point", "seed")} | {"error": error_text(f["error"])} for f in self.failed],
        }

    def load(self, **kw: Any) -> pl.DataFrame:
        from ..aggregate import load

        return load(self.out, **kw)

    def runs(self, table: str = "summary") -> pl.DataFrame:
        from ..aggregate import load_runs

        return load_runs(self.out, table)


class SweepFailed(SimulationError):
    """Every run of a sweep failed. ``outcome`` is the `SweepOutcome`."""

    def __init__(self, outcome: SweepOutcome):
        first = outcome.failed[0]
        super().__init__(
            f"all {outcome.n_failed} runs failed; the first (seed {first['seed']}"
            f"{', ' + _point(first['point']) if first['point'] else ''}): {error_text(first['error'])}"
            f" — details in {outcome.out}/failed/"
        )
        self.outcome = outcome


def error_text(err: dict[str, Any]) -> str:
    where = f"{err['path']}: " if err.get("path") else ""
    return f"{err['type']}: {where}{err['message']}"


def _point(point: dict[str, Any]) -> str:
    from ..aggregate import point_label

    return point_label(point)


ProgressFn = Callable[[dict[str, Any]], None]


def _prepare(out: Path, tasks: list[Any], resume: bool, allow_mixed: bool, build: str) -> tuple[list[Any], int, list[dict[str, Any]]]:
    """Which tasks to run: ``(todo, skipped, broken)``; refuses a mixed-build resume."""
    runs_dir = out / "runs"
    todo: list[Any] = []
    skipped = 0
    broken: list[dict[str, Any]] = []
    foreign: dict[str, int] = {}
    done = []
    for t in tasks:
        d = runs_dir / t.id
        if not d.is_dir():
            todo.append(t)
        elif not resume:
            shutil.rmtree(d)
            todo.append(t)
        else:
            done.append(t)
    checked = []
    for t in done:
        problem, their_build = verify_run(runs_dir / t.id)
        if problem is not None:
            broken.append({"id": t.id, "problem": problem})
            shutil.rmtree(runs_dir / t.id)
            todo.append(t)
            continue
        if their_build != build:
            key = their_build or "unknown (written before builds were recorded)"
            foreign[key] = foreign.get(key, 0) + 1
        checked.append(t)
    if foreign and not allow_mixed:
        which = ", ".join(f"{n} by {b}" for b, n in foreign.items())
        raise ScenarioError(
            "resume",
            f"{out}: finished runs were made by another build ({which}); this is {build}. "
            "Results of different builds may differ: rerun them all (--no-resume, resume=False) "
            "or keep them anyway (--allow-mixed, allow_mixed=True)",
        )
    skipped = len(checked)
    return todo, skipped, broken


def sweep(
    base: ScenarioLike,
    grid: Mapping[str, Sequence[Any]] | None = None,
    zip: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]] | None = None,
    seeds: int | Sequence[int] = 1,
    executor: str | Executor | None = "local",
    out: str | os.PathLike[str] = "out/sweep",
    resume: bool = True,
    set: Sequence[str] | Mapping[str, Any] | None = None,
    workers: int | None = None,
    address: str | None = None,
    progress: ProgressFn | None = None,
    name: str | None = None,
    allow_mixed: bool = False,
    quick: bool = False,
) -> SweepOutcome:
    """Run ``base`` over the ``grid``/``zip`` axes × ``seeds`` and write every run to
    ``out/runs/ID/`` as it finishes. Returns a `SweepOutcome`; `aqmlab.load(out)` gives
    the aggregated table. Raises `SweepFailed` when no run succeeded.

    ``progress`` is called with ``{"event": "start", "total", "todo", "skipped",
    "broken"}`` once and then ``{"event": "run", "done", "todo", "failed", "id",
    "status", ...}`` per finished run.

    ``quick`` is only recorded (``"quick"`` in ``sweep.json``): the caller applied a
    sweep file's ``[quick]`` settings, so the results are a first look, not the study.
    """
    plan = plan_sweep(base, grid, zip, seeds, out, resume, set, progress, name, allow_mixed, quick)
    run_plans([plan], executor, workers, address)
    return plan.finish()


@dataclass
class SweepPlan:
    """A sweep resolved and ready to run (`plan_sweep`): its folder holds ``sweep.json``,
    ``todo`` are the runs still to make. `run_plans` runs the ``todo`` of several plans
    in one pool; `finish` writes ``status.json`` and returns the outcome."""

    out: Path
    todo: list[Task]
    result: SweepOutcome
    build: str
    progress: ProgressFn | None
    t_start: float
    kind: str = "local"

    def record(self, task: Task, outcome: dict[str, Any]) -> None:
        """Write one finished run (or its failure) and report it."""
        result = self.result
        result.ran += 1
        if outcome["status"] == "ok":
            write_run(self.out, task, {**outcome, "executor": self.kind}, self.build)
            (self.out / "failed" / f"{task.id}.json").unlink(missing_ok=True)
            result.ok += 1
        else:
            result.failed.append(write_failure(self.out, task, outcome))
        if self.progress:
            ev = {"event": "run", "done": result.ran, "todo": len(self.todo), "failed": result.n_failed, "id": task.id, "point": task.point, "seed": task.seed, "status": outcome["status"], "pid": outcome.get("pid")}
            if outcome["status"] != "ok":
                ev["error"] = outcome["error"]
            self.progress(ev)

    @property
    def complete(self) -> bool:
        return self.result.ran == len(self.todo)

    def finish(self) -> SweepOutcome:
        """Write ``status.json``; raise `SweepFailed` when no run succeeded."""
        result = self.result
        result.wall_s = time.perf_counter() - self.t_start
        write_json_atomic(self.out / "status.json", result.to_dict())
        if result.n_failed and result.ok + result.skipped == 0:
            raise SweepFailed(result)
        return result


def plan_sweep(
    base: ScenarioLike,
    grid: Mapping[str, Sequence[Any]] | None = None,
    zip: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]] | None = None,
    seeds: int | Sequence[int] = 1,
    out: str | os.PathLike[str] = "out/sweep",
    resume: bool = True,
    set: Sequence[str] | Mapping[str, Any] | None = None,
    progress: ProgressFn | None = None,
    name: str | None = None,
    allow_mixed: bool = False,
    quick: bool = False,
) -> SweepPlan:
    """Resolve a sweep (arguments as `sweep`), write its ``sweep.json`` and find the runs
    still to make; nothing is simulated yet."""
    t_start = time.perf_counter()
    out = Path(out)
    check_out_dir(out)
    base_doc, points, tasks = make_tasks(base, grid, zip, seeds, set)
    build = build_id()
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    for stale in runs_dir.glob(".tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)  # left by a crash or Ctrl-C
    todo, skipped, broken = _prepare(out, tasks, resume, allow_mixed, build)
    spec = {
        "name": name or base_doc.get("name", "sweep"),
        "base": base_doc,
        "base_path": str(base) if not isinstance(base, Mapping) else None,
        "set": parse_overrides(set),
        "grid": {k: list(v) for k, v in (grid or {}).items()},
        "zip": [dict(g) for g in ([zip] if isinstance(zip, Mapping) else (zip or [])) if g],
        "seeds": expand_seeds(seeds),
        "axes": _axes(points),
        "runs": [{"id": t.id, "point_id": t.point_id, "point": t.point, "seed": t.seed} for t in tasks],
        "versions": versions(),
        "created": time.time(),
        "quick": bool(quick),
    }
    write_json_atomic(out / "sweep.json", spec)
    result = SweepOutcome(out=out, total=len(tasks), skipped=skipped, broken=broken)
    if progress:
        progress({"event": "start", "total": len(tasks), "todo": len(todo), "skipped": skipped, "broken": len(broken)})
    return SweepPlan(out=out, todo=todo, result=result, build=build, progress=progress, t_start=t_start)


def expected_cost(task: Task) -> float:
    """A run's expected cost for ordering, known before it runs: its simulated time
    (warm-up + duration, seconds). Crude, but the long runs of the studies are the
    long simulated times, and only the order uses it."""
    total = 0.0
    for key in ("warmup", "duration"):
        v = task.scenario.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            total += float(v)
        elif isinstance(v, str):
            with contextlib.suppress(ValueError):  # a bad value is the run's error to report, not the order's
                total += parse_duration_s(v)
    return total


def run_plans(plans: Sequence[SweepPlan], executor: str | Executor | None = "local", workers: int | None = None,
              address: str | None = None, on_complete: Callable[[SweepPlan], None] | None = None) -> None:
    """Run the ``todo`` of every plan in one pool, the longest expected first
    (`expected_cost`; ties keep the plans' order), so that no worker idles while a long
    run finishes alone at the end of each sweep. Each run is written into its own plan
    as it arrives; ``on_complete(plan)`` is called when a plan's last run is written
    (the pool keeps working meanwhile). Results are per-run files: they do not depend
    on this order."""
    order = [(plan, t) for plan in plans for t in plan.todo]
    if not order:
        for plan in plans:
            if on_complete is not None:
                on_complete(plan)
        return
    order.sort(key=lambda pt: -expected_cost(pt[1]))  # stable: ties keep their order
    owner = {id(t): plan for plan, t in order}
    ex = make_executor(executor, workers, address)
    for plan in plans:
        if plan.todo:
            plan.result.workers = ex.workers
            plan.kind = ex.kind
        elif on_complete is not None:
            on_complete(plan)
    interrupted = False
    try:
        for task, outcome in ex.run([t for _, t in order]):
            plan = owner[id(task)]
            plan.record(task, outcome)
            if plan.complete and on_complete is not None:
                on_complete(plan)
    except KeyboardInterrupt as e:
        # Stop the workers now; what finished is on disk already. The result rides
        # on the exception so that a `--json` caller can still say what finished.
        interrupted = True
        ex.abort()
        for plan in plans:
            plan.result.interrupted = True
            plan.result.wall_s = time.perf_counter() - plan.t_start
            write_json_atomic(plan.out / "status.json", plan.result.to_dict())
        e.sweep_result = plans[0].result  # type: ignore[attr-defined]
        raise
    finally:
        if not isinstance(executor, Executor) and not interrupted:
            ex.close()


def _axes(points: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for p in points:
        for k in p:
            seen.setdefault(k, None)
    return list(seen)
