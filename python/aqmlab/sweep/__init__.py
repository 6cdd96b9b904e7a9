"""Sweeps: many runs of one base scenario over parameter axes and seeds.

    >>> import aqmlab
    >>> s = aqmlab.sweep("examples/sweep-base.toml",
    ...                  grid={"bottleneck.qdisc.kind": ["pfifo", "bfifo"]},
    ...                  seeds=2, out="out/sweep-small")
    >>> aqmlab.load("out/sweep-small")         # mean, std, n, 95 % CI per sweep point

The pieces (see docs/sweeps.md): `points` (grid/zip points, seeds, run ids),
`executors` (local process pool, Dask), `store` (the sweep folder: runs, failures,
build fingerprint, checks), `driver` (`sweep` itself) and `files` (sweep files).
"""

from .driver import SweepFailed, SweepOutcome, SweepPlan, expected_cost, plan_sweep, run_plans, sweep
from .executors import MAX_WORKER_DEATHS, DaskExecutor, Executor, LocalExecutor, execute, make_executor
from .files import SWEEP_KEYS, SweepFile, plan_sweep_file, read_sweep_file, run_sweep_file, sweep_file_args
from .points import Task, canonical_json, expand_points, expand_seeds, make_tasks, point_id, run_id
from .store import build_id, versions, write_failure, write_run

__all__ = [
    "MAX_WORKER_DEATHS",
    "SWEEP_KEYS",
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "SweepFailed",
    "SweepFile",
    "SweepOutcome",
    "SweepPlan",
    "Task",
    "build_id",
    "canonical_json",
    "execute",
    "expand_points",
    "expand_seeds",
    "expected_cost",
    "make_executor",
    "make_tasks",
    "plan_sweep",
    "plan_sweep_file",
    "point_id",
    "read_sweep_file",
    "run_id",
    "run_plans",
    "run_sweep_file",
    "sweep",
    "sweep_file_args",
    "versions",
    "write_failure",
    "write_run",
]
