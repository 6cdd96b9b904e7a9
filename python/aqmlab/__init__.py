"""aqmlab: fast, trustworthy packet-level simulation of AQM and packet scheduling.

    >>> import aqmlab
    >>> res = aqmlab.run("examples/mm1.toml", seed=1)
    >>> res.queues.select("link", "sojourn_ms_mean")
"""

from ._core import __version__
from .errors import ScenarioError, SimulationError
from .results import Results
from .runner import run
from .scenario import load_scenario, validate, qdisc_docs, traffic_docs
from .sweep import sweep
from .aggregate import load, load_runs
from .characterize import characterize

__all__ = [
    "Results",
    "ScenarioError",
    "characterize",
    "SimulationError",
    "__version__",
    "load",
    "load_runs",
    "load_scenario",
    "qdisc_docs",
    "run",
    "sweep",
    "traffic_docs",
    "validate",
]
