"""aqmlab: fast, trustworthy packet-level simulation of AQM and packet scheduling.

    >>> import aqmlab
    >>> res = aqmlab.run("examples/mm1.toml", seed=1)
    >>> res.queues.select("link", "sojourn_ms_mean")

The names below are imported on first use (PEP 562), so that ``import aqmlab`` and the
command line's fast paths (``aqmlab run --json``) do not pay for polars, pandas or Dask.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module

from ._core import __version__
from .errors import ScenarioError, SimulationError

TYPE_CHECKING = False  # typing is not imported at run time: ~8 ms of `aqmlab --help` (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

#: Public name -> the module that defines it.
_LAZY = {
    "Results": ".results",
    "run": ".runner",
    "load_scenario": ".scenario",
    "validate": ".scenario",
    "qdisc_docs": ".scenario",
    "traffic_docs": ".scenario",
    "sweep": ".sweep",
    "load": ".aggregate",
    "load_runs": ".aggregate",
    "characterize": ".characterize",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'aqmlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


class _Package(types.ModuleType):
    """``aqmlab.sweep`` is the function, as it was when this file imported it eagerly:
    a first ``import aqmlab.sweep.…`` elsewhere would otherwise bind the subpackage."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "sweep" and isinstance(value, types.ModuleType):
            value = value.sweep
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "Results",
    "ScenarioError",
    "SimulationError",
    "__version__",
    "characterize",
    "load",
    "load_runs",
    "load_scenario",
    "qdisc_docs",
    "run",
    "sweep",
    "traffic_docs",
    "validate",
]
