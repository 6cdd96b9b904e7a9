"""What a sweep worker does per run: its tables travel as Parquet bytes, and its
forkserver preloads the heavy modules (so that each worker need not import them)."""

import importlib
import io
import multiprocessing
import subprocess
import sys

import aqmlab
import polars as pl
from aqmlab.sweep import execute, make_tasks
from aqmlab.sweep.executors import FORKSERVER_PRELOAD
from conftest import EXAMPLES
from polars.testing import assert_frame_equal


def test_execute_sends_each_table_as_parquet_bytes_with_its_rows():
    _, _, tasks = make_tasks(EXAMPLES / "mm1.toml", set={"duration": "1s"})
    out = execute(tasks[0])
    assert out["status"] == "ok" and out["cpu_s"] > 0 and out["wall_s"] > 0
    direct = aqmlab.run(EXAMPLES / "mm1.toml", seed=tasks[0].seed, set={"duration": "1s"}).tables
    assert list(out["tables"]) == list(direct)
    for name, (rows, data) in out["tables"].items():
        back = pl.read_parquet(io.BytesIO(data))
        assert rows == back.height == direct[name].height
        if name != "summary":  # the summary holds the run's wall time
            assert_frame_equal(back, direct[name], check_exact=True)


def test_a_failing_run_sends_no_tables():
    _, _, tasks = make_tasks(EXAMPLES / "mm1.toml", set={"duration": "1s", "traffic.0.rate": "-1Mbit"})
    out = execute(tasks[0])
    assert out["status"] == "error" and "tables" not in out and out["cpu_s"] is not None


def test_every_preloaded_module_imports():
    """The forkserver skips a module that fails to import without a word: a wrong name
    here would silently bring the per-worker imports back."""
    for name in FORKSERVER_PRELOAD:
        importlib.import_module(name)


def test_forkserver_workers_start_with_polars_loaded():
    """In a fresh process (`-c`: no main file for workers to re-import), a worker forked
    from the preloading forkserver has polars before it is given anything to run."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    code = (
        "import concurrent.futures as cf\n"
        "from aqmlab.sweep.executors import _mp_context\n"
        "with cf.ProcessPoolExecutor(1, mp_context=_mp_context(None)) as p:\n"
        "    print(p.submit(eval, \"'polars' in __import__('sys').modules\").result())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr


def test_as_completed_yields_each_run_once_in_the_order_they_finish_and_waits_past_wake_ups():
    import concurrent.futures as cf
    import threading
    import time

    from aqmlab.sweep.executors import WAKE_S, _as_completed

    futures = [cf.Future() for _ in range(5)]
    futures[3].set_result(3)  # done before the driver looks

    def finish_later():
        for i in (1, 4, 0):
            time.sleep(WAKE_S * 1.5)  # the driver wakes in between with nothing new
            futures[i].set_result(i)
        futures[2].set_exception(RuntimeError("worker died"))

    threading.Thread(target=finish_later).start()
    got = [f for f in _as_completed(futures)]
    assert [futures.index(f) for f in got] == [3, 1, 4, 0, 2]
