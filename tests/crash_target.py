"""Worker targets for sweep tests: they run in the local executor's worker processes."""

import os

from aqmlab.sweep import execute


def die_on_seed_2(task):
    """Kill the worker process (as an OOM kill or an abort would) on every seed-2 run."""
    if task.seed == 2:
        os._exit(3)
    return execute(task)
