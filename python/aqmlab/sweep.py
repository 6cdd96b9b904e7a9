"""Sweeps: many runs of one base scenario over parameter axes and seeds.

    >>> import aqmlab
    >>> s = aqmlab.sweep("examples/sweep-base.toml",
    ...                  grid={"bottleneck.qdisc.kind": ["pfifo", "bfifo"]},
    ...                  seeds=2, out="out/sweep-small")
    >>> aqmlab.load("out/sweep-small")         # mean, std, n, 95 % CI per sweep point

Design (see docs/sweeps.md):

* **Points.** ``grid`` axes form a Cartesian product (first axis slowest); each ``zip``
  group is one more axis whose paths move together. Each point is a dict
  ``{dotted path: value}`` applied with `aqmlab.scenario.set_path` on top of ``set``.
* **Run id.** ``sha256`` of the canonical JSON (sorted keys, no spaces) of
  ``{"scenario": resolved scenario with its seed, "seed": seed}``, first 16 hex digits.
  The same resolved scenario and seed always get the same id, whatever axis order,
  sweep file or machine produced it; the aqmlab version is recorded, not hashed.
* **Who writes.** Workers simulate and send the tables back; the *driver* writes each
  run the moment it arrives, into ``OUT/runs/.tmp-ID-*`` and then renames the folder
  to ``OUT/runs/ID`` (one atomic rename). A folder ``runs/ID`` is therefore always a
  complete run; a crash or Ctrl-C leaves at most a ``.tmp-`` folder, removed on the next
  start. Workers need no shared file system, and as one process writes, no run is
  written twice even when a cluster re-executes a task after a worker died.
* **Resume.** With ``resume=True`` (default) runs whose ``runs/ID`` exists are skipped;
  failed runs are tried again. ``resume=False`` reruns everything and replaces old
  results. Failures are recorded in ``OUT/failed/ID.json`` (error type, path, message,
  traceback) and the sweep goes on.
* **Executors.** ``local``: a `concurrent.futures.ProcessPoolExecutor` over all cores
  with an explicit ``forkserver`` (or ``spawn``) context — never ``fork``, since the
  engine's threads may have started. If a worker process dies the pool is rebuilt and
  the unfinished runs are resubmitted (a run that kills its worker three times is
  recorded as failed). ``dask``: a `distributed.Client` at ``address``, or a
  ``LocalCluster`` started for the sweep; Dask reschedules the tasks of a dead worker.
"""

from __future__ import annotations

import abc
import builtins
import concurrent.futures as cf
import hashlib
import itertools
import json
import multiprocessing
import os
import platform
import shutil
import socket
import time
import tomllib
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from .errors import ScenarioError, SimulationError
from .scenario import ScenarioLike, _split_path, load_scenario, parse_overrides, set_path

#: A run that takes its worker down this many times is recorded as failed.
MAX_WORKER_DEATHS = 3

#: Keys a sweep file may have at its top level.
SWEEP_KEYS = {"base", "grid", "zip", "seeds", "set", "executor", "address", "workers", "out", "name", "quick", "description"}


# --------------------------------------------------------------------------- points


@dataclass
class Task:
    """One run: a resolved scenario and its seed. Sent to workers (pickled)."""

    id: str
    point: dict[str, Any]
    point_id: str
    seed: int
    scenario: dict[str, Any]
    deaths: int = 0


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


def expand_points(grid: Mapping[str, Sequence] | None = None, zip: Mapping[str, Sequence] | Sequence[Mapping[str, Sequence]] | None = None) -> list[dict[str, Any]]:
    """The sweep points: the product of the grid axes and the zipped groups."""
    axes: list[list[dict[str, Any]]] = []
    for path, values in (grid or {}).items():
        _check_path(path, "grid")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) == 0:
            raise ScenarioError(f"grid.{path}", f"{values!r}: expected a non-empty list of values")
        axes.append([{path: v} for v in values])
    groups: list[Mapping[str, Sequence]]
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
        return list(range(1, seeds + 1))
    if isinstance(seeds, Sequence) and not isinstance(seeds, str) and seeds and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        if len(set(seeds)) != len(seeds):
            raise ScenarioError("seeds", "the seed list has duplicates")
        return list(seeds)
    raise ScenarioError("seeds", f"{seeds!r}: expected a number of seeds or a list of non-negative integers")


def make_tasks(base: ScenarioLike, grid=None, zip=None, seeds: int | Sequence[int] = 1, set=None) -> tuple[dict, list[dict], list[Task]]:
    """Resolve every run of a sweep: (base document, points, tasks)."""
    base_doc = load_scenario(base, set)
    points = expand_points(grid, zip)
    seed_list = expand_seeds(seeds)
    tasks = []
    for pt in points:
        doc = json.loads(json.dumps(base_doc))
        for path, value in pt.items():
            try:
                set_path(doc, path, value)
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


# --------------------------------------------------------------------------- worker side


def execute(task: Task) -> dict[str, Any]:
    """Run one task in a worker. Never raises for a failing simulation: the error is
    returned so that the driver records it."""
    from .runner import run

    started = time.time()
    t0 = time.perf_counter()
    out: dict[str, Any] = {"id": task.id, "pid": os.getpid(), "host": socket.gethostname(), "started": started}
    try:
        res = run(task.scenario, seed=task.seed)
        out["status"] = "ok"
        out["tables"] = res.tables
    except ScenarioError as e:
        out.update(status="error", error={"type": "ScenarioError", "path": e.path, "message": e.message, "traceback": traceback.format_exc()})
    except Exception as e:  # noqa: BLE001 - every failure is recorded, the sweep goes on
        out.update(status="error", error={"type": type(e).__name__, "path": "", "message": str(e), "traceback": traceback.format_exc()})
    out["wall_s"] = time.perf_counter() - t0
    return out


# --------------------------------------------------------------------------- executors


class Executor(abc.ABC):
    """Runs tasks and yields ``(task, outcome)`` as they finish, in any order."""

    workers: int = 1

    @abc.abstractmethod
    def run(self, tasks: list[Task]) -> Iterator[tuple[Task, dict]]:
        """Run ``tasks``; yield each with its outcome as it finishes."""

    def close(self) -> None:
        pass


def _alive(pid: int) -> bool:
    """Is process ``pid`` running (a zombie counts as dead)?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True


def _worker_init(driver: int) -> None:
    """In each local worker: exit when the driver process is gone. A worker blocked on
    the pool's queue would otherwise outlive a driver killed with SIGKILL (with
    forkserver its parent is the fork server, which lives as long as its children)."""
    import threading

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if not _alive(driver):
                os._exit(1)

    threading.Thread(target=watch, name="aqmlab-driver-watch", daemon=True).start()


def _mp_context(name: str | None):
    name = name or ("forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")
    if name == "fork":
        raise ValueError("the fork start method is unsafe here (the engine may have started threads): use forkserver or spawn")
    return multiprocessing.get_context(name)


class LocalExecutor(Executor):
    """A process pool on this machine (all cores by default)."""

    def __init__(self, workers: int | None = None, context: str | None = None):
        self.workers = workers or os.cpu_count() or 1
        self.context = _mp_context(context)
        self.pool: cf.ProcessPoolExecutor | None = None
        self.restarts = 0

    def _pool(self) -> cf.ProcessPoolExecutor:
        if self.pool is None:
            self.pool = cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=self.context, initializer=_worker_init, initargs=(os.getpid(),))
        return self.pool

    def run(self, tasks: list[Task]) -> Iterator[tuple[Task, dict]]:
        pending = list(tasks)
        while pending:
            pool = self._pool()
            futures = {pool.submit(execute, t): t for t in pending}
            pending = []
            broken = False
            try:
                for fut in cf.as_completed(futures):
                    task = futures[fut]
                    try:
                        outcome = fut.result()
                    except cf.process.BrokenProcessPool:
                        broken = True
                        task.deaths += 1
                        if task.deaths >= MAX_WORKER_DEATHS:
                            yield task, _died(task)
                        else:
                            pending.append(task)
                        continue
                    yield task, outcome
            except BaseException:
                for f in futures:
                    f.cancel()
                self.close()
                raise
            if broken:
                # A worker process died (killed, out of memory, ...): every run that was
                # not finished is resubmitted to a fresh pool.
                self.restarts += 1
                self.pool.shutdown(wait=False, cancel_futures=True)
                self.pool = None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


def _died(task: Task) -> dict:
    return {
        "id": task.id,
        "status": "error",
        "error": {"type": "WorkerDied", "path": "", "message": f"the worker process died {task.deaths} times while running this run", "traceback": ""},
        "pid": None,
        "host": None,
        "started": None,
        "wall_s": None,
    }


class DaskExecutor(Executor):
    """Runs on a Dask cluster: an existing one at ``address`` (``tcp://host:port``), a
    given ``client``, or a `distributed.LocalCluster` started here (worker processes)."""

    def __init__(self, address: str | None = None, client=None, workers: int | None = None):
        try:
            from distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - dask is a declared dependency
            raise SimulationError("the dask executor needs `distributed` (pip install 'dask[distributed]')") from e
        self.cluster = None
        self.own_client = client is None
        if client is not None:
            self.client = client
        elif address:
            self.client = Client(address)
        else:
            n = workers or os.cpu_count() or 1
            self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
            self.client = Client(self.cluster)
        self.workers = max(1, len(self.client.scheduler_info().get("workers", {})))

    def _submit(self, task: Task):
        # pure=False and a unique key: a run is never merged with another by Dask's
        # hashing; retries let the scheduler re-run a task whose worker died.
        return self.client.submit(execute, task, key=f"aqmlab-run-{task.id}-{uuid.uuid4().hex[:8]}", pure=False, retries=MAX_WORKER_DEATHS)

    def run(self, tasks: list[Task]) -> Iterator[tuple[Task, dict]]:
        from distributed import as_completed

        futures = {}
        for t in tasks:
            f = self._submit(t)
            futures[f.key] = (f, t)
        ac = as_completed([f for f, _ in futures.values()])
        try:
            for fut in ac:
                task = futures.pop(fut.key)[1]
                try:
                    outcome = fut.result()
                except Exception as e:  # noqa: BLE001
                    # `execute` never raises, so this is the cluster's trouble, not the
                    # run's: KilledWorker after repeated deaths, or a result lost with its
                    # worker between "finished" and the gather. Submit the run again.
                    task.deaths += 1
                    fut.release()
                    if task.deaths < MAX_WORKER_DEATHS:
                        f = self._submit(task)
                        futures[f.key] = (f, task)
                        ac.add(f)
                        continue
                    outcome = {
                        "id": task.id, "status": "error", "pid": None, "host": None, "started": None, "wall_s": None,
                        "error": {"type": type(e).__name__, "path": "", "message": f"{e} (after {task.deaths} attempts on the cluster)", "traceback": ""},
                    }
                fut.release()
                yield task, outcome
        except BaseException:
            for f, _ in futures.values():
                f.cancel()
            raise

    def close(self) -> None:
        if self.own_client:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(executor: str | Executor | None = None, workers: int | None = None, address: str | None = None) -> Executor:
    if isinstance(executor, Executor):
        return executor
    name = executor or "local"
    if name == "local":
        if address:
            raise ScenarioError("address", "an address is only used with the dask executor")
        return LocalExecutor(workers)
    if name == "dask":
        return DaskExecutor(address=address, workers=workers)
    raise ScenarioError("executor", f'"{name}": unknown executor; expected "local" or "dask"')


# --------------------------------------------------------------------------- driver


@dataclass
class SweepOutcome:
    """What a sweep did. ``failed`` lists ``{"id", "point", "seed", "error"}``."""

    out: Path
    total: int
    ran: int = 0
    skipped: int = 0
    ok: int = 0
    failed: list[dict] = field(default_factory=list)
    wall_s: float = 0.0
    workers: int = 1

    @property
    def n_failed(self) -> int:
        return len(self.failed)

    def to_dict(self) -> dict:
        return {
            "out": str(self.out), "total": self.total, "ran": self.ran, "skipped": self.skipped,
            "ok": self.ok, "failed": self.n_failed, "wall_s": self.wall_s, "workers": self.workers,
            "failures": [{k: f[k] for k in ("id", "point", "seed")} | {"error": f"{f['error']['type']}: {f['error'].get('path') + ': ' if f['error'].get('path') else ''}{f['error']['message']}"} for f in self.failed],
        }

    def load(self, **kw) -> pl.DataFrame:
        from .aggregate import load

        return load(self.out, **kw)

    def runs(self, table: str = "summary") -> pl.DataFrame:
        from .aggregate import load_runs

        return load_runs(self.out, table)


def versions() -> dict[str, str]:
    import matplotlib
    import numpy
    import polars

    from . import __version__

    return {
        "aqmlab": __version__,
        "python": platform.python_version(),
        "polars": polars.__version__,
        "numpy": numpy.__version__,
        "matplotlib": matplotlib.__version__,
        "platform": platform.platform(),
    }


def _write_json_atomic(path: Path, obj: Any) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str))
    os.replace(tmp, path)


def write_run(out: Path, task: Task, outcome: dict) -> bool:
    """Write one finished run as ``OUT/runs/ID/`` (temporary folder, then one rename).
    Returns False when the run was already there (nothing is written twice)."""
    runs = out / "runs"
    dest = runs / task.id
    if dest.exists():
        return False
    tmp = runs / f".tmp-{task.id}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    try:
        for name, df in outcome["tables"].items():
            df.write_parquet(tmp / f"{name}.parquet")
        (tmp / "scenario.json").write_text(json.dumps(task.scenario, indent=2))
        meta = {k: outcome.get(k) for k in ("id", "pid", "host", "started", "wall_s")}
        meta.update(point=task.point, point_id=task.point_id, seed=task.seed, status="ok", written=time.time())
        (tmp / "run.json").write_text(json.dumps(meta, indent=2, default=str))
        os.rename(tmp, dest)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if dest.exists():
            return False
        raise
    with open(out / "log.jsonl", "a") as log:
        log.write(json.dumps({"event": "written", "id": task.id, "pid": outcome.get("pid"), "time": time.time()}) + "\n")
    return True


def write_failure(out: Path, task: Task, outcome: dict) -> dict:
    failed = out / "failed"
    failed.mkdir(parents=True, exist_ok=True)
    rec = {"id": task.id, "point": task.point, "point_id": task.point_id, "seed": task.seed, "error": outcome["error"], "pid": outcome.get("pid"), "host": outcome.get("host"), "time": time.time()}
    _write_json_atomic(failed / f"{task.id}.json", rec)
    with open(out / "log.jsonl", "a") as log:
        log.write(json.dumps({"event": "failed", "id": task.id, "error": outcome["error"]["type"], "time": time.time()}) + "\n")
    return rec


ProgressFn = Callable[[dict], None]


def sweep(
    base: ScenarioLike,
    grid: Mapping[str, Sequence] | None = None,
    zip: Mapping[str, Sequence] | Sequence[Mapping[str, Sequence]] | None = None,
    seeds: int | Sequence[int] = 1,
    executor: str | Executor | None = "local",
    out: str | os.PathLike = "out/sweep",
    resume: bool = True,
    set: Sequence[str] | Mapping[str, Any] | None = None,
    workers: int | None = None,
    address: str | None = None,
    progress: ProgressFn | None = None,
    name: str | None = None,
) -> SweepOutcome:
    """Run ``base`` over the ``grid``/``zip`` axes × ``seeds`` and write every run to
    ``out/runs/ID/`` as it finishes. Returns a `SweepOutcome`; `aqmlab.load(out)` gives
    the aggregated table.

    ``progress`` is called with ``{"event": "start", "total", "todo", "skipped"}`` once
    and then ``{"event": "run", "done", "todo", "failed", "id", "status", ...}`` per
    finished run.
    """
    t_start = time.perf_counter()
    out = Path(out)
    base_doc, points, tasks = make_tasks(base, grid, zip, seeds, set)
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    for stale in runs_dir.glob(".tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)  # left by a crash or Ctrl-C
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
    }
    _write_json_atomic(out / "sweep.json", spec)

    todo = []
    skipped = 0
    for t in tasks:
        if (runs_dir / t.id).is_dir():
            if resume:
                skipped += 1
                continue
            shutil.rmtree(runs_dir / t.id)
        todo.append(t)
    result = SweepOutcome(out=out, total=len(tasks), skipped=skipped)
    if progress:
        progress({"event": "start", "total": len(tasks), "todo": len(todo), "skipped": skipped})
    if todo:
        ex = make_executor(executor, workers, address)
        result.workers = ex.workers
        try:
            for task, outcome in ex.run(todo):
                result.ran += 1
                if outcome["status"] == "ok":
                    write_run(out, task, outcome)
                    (out / "failed" / f"{task.id}.json").unlink(missing_ok=True)
                    result.ok += 1
                else:
                    result.failed.append(write_failure(out, task, outcome))
                if progress:
                    ev = {"event": "run", "done": result.ran, "todo": len(todo), "failed": result.n_failed, "id": task.id, "point": task.point, "seed": task.seed, "status": outcome["status"], "pid": outcome.get("pid")}
                    if outcome["status"] != "ok":
                        ev["error"] = outcome["error"]
                    progress(ev)
        finally:
            if not isinstance(executor, Executor):
                ex.close()
    result.wall_s = time.perf_counter() - t_start
    _write_json_atomic(out / "status.json", result.to_dict())
    return result


def _axes(points: list[dict]) -> list[str]:
    seen: dict[str, None] = {}
    for p in points:
        for k in p:
            seen.setdefault(k, None)
    return list(seen)


# --------------------------------------------------------------------------- sweep files


@dataclass
class SweepFile:
    path: Path
    base: Path
    grid: dict
    zip: list
    seeds: int | list[int]
    set: dict
    executor: str
    address: str | None
    workers: int | None
    out: Path | None
    name: str
    quick: dict


def read_sweep_file(path: str | os.PathLike) -> SweepFile:
    """Read and check a sweep file. Errors are `ScenarioError` naming the key."""
    p = Path(path)
    if not p.exists():
        raise ScenarioError("", f"sweep file not found: {p}")
    try:
        doc = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("", f"{p}: invalid TOML: {e}") from None
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
    out = doc.get("out")
    return SweepFile(
        path=p, base=base, grid=grid, zip=z, seeds=seeds, set=s, executor=executor,
        address=doc.get("address"), workers=workers,
        out=(p.parent / out) if out else None, name=doc.get("name", p.parent.name if p.name == "sweep.toml" else p.stem),
        quick=quick,
    )


def run_sweep_file(sf: SweepFile, quick: bool = False, **kw) -> SweepOutcome:
    """Run a sweep file; keyword arguments override its values (``out``, ``executor``,
    ``workers``, ``address``, ``seeds``, ``progress``, ``resume``, ``set``)."""
    seeds = sf.quick.get("seeds", sf.seeds) if quick else sf.seeds
    fixed = dict(sf.set)
    grid = sf.grid
    if quick:
        fixed.update(sf.quick.get("set", {}))
        grid = {**sf.grid, **sf.quick.get("grid", {})}
    fixed.update(parse_overrides(kw.pop("set", None)))
    args = dict(
        base=sf.base, grid=grid, zip=sf.zip, seeds=seeds, set=fixed, executor=sf.executor,
        address=sf.address, workers=sf.workers, out=sf.out or Path("out") / sf.name, name=sf.name,
    )
    args.update({k: v for k, v in kw.items() if v is not None})
    return sweep(**args)
