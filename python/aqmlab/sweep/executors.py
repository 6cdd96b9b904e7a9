"""Executors: where the runs of a sweep are simulated (see docs/sweeps.md, "Executors").

* ``local``: a `concurrent.futures.ProcessPoolExecutor` over all cores with an explicit
  ``forkserver`` (or ``spawn``) context — never ``fork``, since the engine's threads may
  have started. Each worker marks the run it is working on (a file named after the run
  in a private folder) so that when a worker process dies (out of memory, abort,
  ``os._exit``) the driver knows which runs were in progress. Runs that had not started
  are resubmitted as they were. A run that was the only one in progress is the culprit:
  it is charged one death. When several were in progress, nobody can tell which one
  killed its worker, so they are all moved to a one-worker pool and tried one at a time,
  where a death is unambiguous. A run charged `MAX_WORKER_DEATHS` deaths is recorded as
  ``WorkerDied``; every other run still runs.
* ``dask``: a `distributed.Client` at ``address``, or a ``LocalCluster`` started for the
  sweep; Dask reschedules the tasks of a dead worker.

Worker processes never import the user's ``__main__`` script (see `hidden_main`), so a
sweep called at the top level of a script without ``if __name__ == "__main__":`` works.
"""

from __future__ import annotations

import abc
import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import queue
import shutil
import socket
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import ScenarioError, SimulationError
from .points import Task

#: A run that takes its worker down this many times is recorded as failed.
MAX_WORKER_DEATHS = 3


# --------------------------------------------------------------------------- worker side


def execute(task: Task) -> dict[str, Any]:
    """Run one task in a worker. Never raises for a failing simulation: the error is
    returned so that the driver records it."""
    from ..runner import run

    started = time.time()
    t0, c0 = time.perf_counter(), time.thread_time()
    out: dict[str, Any] = {"id": task.id, "pid": os.getpid(), "host": socket.gethostname(), "started": started}
    try:
        res = run(task.scenario, seed=task.seed)
        res.tables  # noqa: B018 - built here: the run's cost below counts them, as it always has
        # CPU time of this thread (the engine runs in it): the run's cost on a loaded
        # machine, where the wall time also counts the time spent waiting for a core.
        out.update(wall_s=time.perf_counter() - t0, cpu_s=time.thread_time() - c0)
        # Encoded here, in parallel across workers, not in the one driver process;
        # `write_run` writes the files as they are.
        out.update(status="ok", tables=res.parquet_files())
    except ScenarioError as e:
        out.update(status="error", error={"type": "ScenarioError", "path": e.path, "message": e.message, "traceback": traceback.format_exc()})
    except Exception as e:
        out.update(status="error", error={"type": type(e).__name__, "path": "", "message": str(e), "traceback": traceback.format_exc()})
    out.setdefault("wall_s", time.perf_counter() - t0)
    out.setdefault("cpu_s", time.thread_time() - c0)
    return out


def execute_marked(target: Callable[[Task], dict[str, Any]], marks: str, task: Task) -> dict[str, Any]:
    """``target(task)`` with a mark file ``MARKS/ID`` present while it runs: a run whose
    mark is left behind was in progress when its worker died."""
    mark = Path(marks) / task.id
    mark.write_text(str(os.getpid()))
    try:
        return target(task)
    finally:
        mark.unlink(missing_ok=True)


def died(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "status": "error",
        "error": {"type": "WorkerDied", "path": "", "message": f"the worker process died {task.deaths} times while running this run (out of memory? see dmesg)", "traceback": ""},
        "pid": None,
        "host": None,
        "started": None,
        "wall_s": None,
        "cpu_s": None,
    }


# --------------------------------------------------------------------------- executors


class Executor(abc.ABC):
    """Runs tasks and yields ``(task, outcome)`` as they finish, in any order."""

    workers: int = 1
    #: What ran the task, recorded in each run's run.json.
    kind: str = "custom"

    @abc.abstractmethod
    def run(self, tasks: list[Task]) -> Iterator[tuple[Task, dict[str, Any]]]:
        """Run ``tasks``; yield each with its outcome as it finishes."""

    def close(self) -> None:  # noqa: B027 - an optional hook: executors that hold nothing keep it
        pass

    def abort(self) -> None:
        """Stop now (Ctrl-C): runs in progress are abandoned."""
        self.close()


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
    forkserver its parent is the fork server, which lives as long as its children).
    SIGINT is ignored: Ctrl-C reaches the whole process group, and the driver, not each
    worker, decides what happens (it stops the workers itself)."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if not _alive(driver):
                os._exit(1)

    threading.Thread(target=watch, name="aqmlab-driver-watch", daemon=True).start()


#: What the forkserver imports once, before it forks any worker: each worker then starts
#: with them loaded instead of importing them itself (~0.2 s of CPU per worker, polars
#: most of it; a study run-all starts a pool, so two or more workers, per sweep).
FORKSERVER_PRELOAD = ["aqmlab.sweep.executors", "aqmlab.runner", "aqmlab.results", "polars", "numpy"]


def _mp_context(name: str | None) -> multiprocessing.context.BaseContext:
    name = name or ("forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")
    if name == "fork":
        raise ValueError("the fork start method is unsafe here (the engine may have started threads): use forkserver or spawn")
    ctx = multiprocessing.get_context(name)
    if name == "forkserver":
        # Only importing: no simulation and no polars work (no threads) in the server.
        ctx.set_forkserver_preload(FORKSERVER_PRELOAD)
    return ctx


@contextlib.contextmanager
def hidden_main() -> Iterator[None]:
    """Start processes without them re-running the user's script.

    ``spawn`` and ``forkserver`` children import the parent's ``__main__`` file again
    (as ``__mp_main__``: from its file, or by name after ``python -m``), so a script
    that calls `aqmlab.sweep` at its top level would
    start the sweep again in every worker, which multiprocessing stops with an error
    and every run dies. Workers here only need aqmlab's own functions, so the main
    file is hidden while processes start."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    # `python script.py` is re-run from __file__, `python -m module` by __spec__.name
    saved: dict[str, Any] = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.update(saved)
        if "__spec__" not in saved:
            del main.__spec__


def kill_pool(pool: cf.ProcessPoolExecutor) -> None:
    """Stop a pool now: pending runs cancelled, worker processes killed.

    A worker killed while it sends a result leaves the pool's manager thread blocked
    in ``recv`` on the rest of the message, and the interpreter joins that thread at
    exit: the driver would hang after Ctrl-C. The driver holds the result pipe's other
    write end; closing it once the workers are dead turns that read into EOF, and the
    manager thread ends as for a broken pool."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    results = getattr(pool, "_result_queue", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        with contextlib.suppress(Exception):
            p.kill()
    for p in procs:
        with contextlib.suppress(Exception):
            p.join(timeout=2)
    writer = getattr(results, "_writer", None)
    if writer is not None:
        with contextlib.suppress(OSError):
            writer.close()


#: Seconds the driver waits for results before it wakes to look for Ctrl-C.
WAKE_S = 0.2


def _as_completed(futures: Iterable[cf.Future[dict[str, Any]]]) -> Iterator[cf.Future[dict[str, Any]]]:
    """`concurrent.futures.as_completed` that wakes every `WAKE_S`. SIGINT may be
    delivered to one of the pool's threads; a main thread blocked without a timeout
    would then never see the KeyboardInterrupt. Each future, once done, puts itself
    on a queue: a wake-up costs the same with 5000 runs pending as with one
    (`concurrent.futures.wait` looks at every pending future each time)."""
    done: queue.SimpleQueue[cf.Future[dict[str, Any]]] = queue.SimpleQueue()
    count = 0
    for fut in futures:
        fut.add_done_callback(done.put)
        count += 1
    for _ in range(count):
        while True:
            try:
                yield done.get(timeout=WAKE_S)
                break
            except queue.Empty:
                continue


class LocalExecutor(Executor):
    """A process pool on this machine (all cores by default). ``target`` is the function
    a worker calls per task (default `execute`; tests pass one that crashes)."""

    kind = "local"

    def __init__(self, workers: int | None = None, context: str | None = None, target: Callable[[Task], dict[str, Any]] = execute):
        self.workers = workers or os.cpu_count() or 1
        self.context = _mp_context(context)
        self.target = target
        self.pools: list[cf.ProcessPoolExecutor] = []
        self.restarts = 0

    def _pool(self, workers: int) -> cf.ProcessPoolExecutor:
        with hidden_main():
            pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=self.context, initializer=_worker_init, initargs=(os.getpid(),))
        self.pools.append(pool)
        return pool

    def _round(self, tasks: list[Task], workers: int, marks: Path) -> Iterator[tuple[Task, dict[str, Any] | None]]:
        """Run ``tasks`` on one pool. Yields ``(task, outcome)`` for finished runs and
        ``(task, None)`` for runs lost when the pool broke, with ``task.started`` set."""
        pool = self._pool(workers)
        futures: dict[cf.Future[dict[str, Any]], Task] = {}
        unsubmitted: list[Task] = []
        with hidden_main():  # 3.11 starts worker processes on submit
            for i, t in enumerate(tasks):
                try:
                    futures[pool.submit(execute_marked, self.target, str(marks), t)] = t
                except cf.process.BrokenProcessPool:
                    # A worker died while we were still submitting: the rest never ran.
                    unsubmitted = tasks[i:]
                    break
        broken = bool(unsubmitted)
        for task in unsubmitted:
            task.started = False
            yield task, None
        for fut in _as_completed(futures):
            task = futures[fut]
            try:
                outcome = fut.result()
            except cf.process.BrokenProcessPool:
                broken = True
                task.started = (marks / task.id).exists()
                (marks / task.id).unlink(missing_ok=True)
                yield task, None
                continue
            yield task, outcome
        if broken:
            self.restarts += 1
            kill_pool(pool)
        else:
            pool.shutdown(wait=True)
        self.pools.remove(pool)

    def run(self, tasks: list[Task]) -> Iterator[tuple[Task, dict[str, Any]]]:
        marks = Path(tempfile.mkdtemp(prefix="aqmlab-marks-"))
        normal: list[Task] = list(tasks)
        suspects: list[Task] = []
        try:
            while normal or suspects:
                # Suspects run alone, one at a time: a death there names its run.
                batch, workers = (normal, self.workers) if normal else (suspects, 1)
                if normal:
                    normal = []
                else:
                    suspects = []
                lost = []
                for task, outcome in self._round(batch, workers, marks):
                    if outcome is None:
                        lost.append(task)
                    else:
                        yield task, outcome
                in_progress = [t for t in lost if t.started]
                for t in lost:
                    if not t.started:
                        (normal if workers > 1 else suspects).append(t)
                    elif len(in_progress) == 1:
                        t.deaths += 1
                        if t.deaths >= MAX_WORKER_DEATHS:
                            yield t, died(t)
                        else:
                            suspects.append(t)
                    else:
                        suspects.append(t)  # one of them killed the worker: try each alone
        finally:
            shutil.rmtree(marks, ignore_errors=True)

    def close(self) -> None:
        for pool in self.pools:
            pool.shutdown(wait=True, cancel_futures=True)
        self.pools = []

    def abort(self) -> None:
        for pool in self.pools:
            kill_pool(pool)
        self.pools = []


class DaskExecutor(Executor):
    """Runs on a Dask cluster: an existing one at ``address`` (``tcp://host:port``), a
    given ``client``, or a `distributed.LocalCluster` started here (worker processes)."""

    kind = "dask"
    #: Seconds to wait for the scheduler at ``address``.
    CONNECT_TIMEOUT = 10

    def __init__(self, address: str | None = None, client: Any = None, workers: int | None = None):
        try:
            from distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - dask is a declared dependency
            raise SimulationError("the dask executor needs `distributed` (pip install 'dask[distributed]')") from e
        self.cluster = None
        self.own_client = client is None
        if client is not None:
            self.client = client
        elif address:
            try:
                self.client = Client(address, timeout=self.CONNECT_TIMEOUT)  # type: ignore[no-untyped-call]  # distributed is untyped
            except (OSError, TimeoutError, ValueError, TypeError) as e:
                raise ScenarioError("address", f"{address!r}: cannot reach a Dask scheduler there ({type(e).__name__}: {e})") from None
        else:
            n = workers or os.cpu_count() or 1
            with hidden_main():
                self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)  # type: ignore[no-untyped-call]
            self.client = Client(self.cluster)  # type: ignore[no-untyped-call]
        self.workers = max(1, len(self.client.scheduler_info().get("workers", {})))

    def _submit(self, task: Task) -> Any:
        # pure=False and a unique key: a run is never merged with another by Dask's
        # hashing; retries let the scheduler re-run a task whose worker died.
        return self.client.submit(execute, task, key=f"aqmlab-run-{task.id}-{uuid.uuid4().hex[:8]}", pure=False, retries=MAX_WORKER_DEATHS)

    def run(self, tasks: list[Task]) -> Iterator[tuple[Task, dict[str, Any]]]:
        from distributed import as_completed

        futures = {}
        for t in tasks:
            f = self._submit(t)
            futures[f.key] = (f, t)
        ac = as_completed([f for f, _ in futures.values()])  # type: ignore[no-untyped-call]
        try:
            for fut in ac:
                task = futures.pop(fut.key)[1]
                try:
                    outcome = fut.result()
                except Exception as e:
                    # `execute` never raises, so this is the cluster's trouble, not the
                    # run's: KilledWorker after repeated deaths, or a result lost with its
                    # worker between "finished" and the gather. Submit the run again.
                    task.deaths += 1
                    fut.release()
                    if task.deaths < MAX_WORKER_DEATHS:
                        f = self._submit(task)
                        futures[f.key] = (f, task)
                        ac.add(f)  # type: ignore[no-untyped-call]
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
