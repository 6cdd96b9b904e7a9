import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
AQMLAB = [sys.executable, "-m", "aqmlab.cli"]

SMALL = {
    "name": "small",
    "duration": "5s",
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"rate": "2Mbit", "delay": "10ms", "qdisc": {"kind": "pfifo", "limit": "50pkt"}},
        "hosts": [{"name": "a", "count": 2, "left": {"rate": "100Mbit", "delay": "1ms"}}],
    },
    "traffic": [{"kind": "udp-poisson", "name": "load", "hosts": "a", "rate": "0.6Mbit", "size": "800B"}],
}


@pytest.fixture
def small():
    import copy

    return copy.deepcopy(SMALL)


def need_tool(*names: str) -> str:
    """The path of the first of ``names`` on PATH. When none is there the test fails,
    unless `make test` found it could not be installed on this machine
    (``AQMLAB_UNINSTALLABLE``, set by tests/install-tools.sh): then it is skipped, loudly."""
    for n in names:
        exe = shutil.which(n)
        if exe:
            return exe
    if names[0] in os.environ.get("AQMLAB_UNINSTALLABLE", "").split():
        pytest.skip(f"SKIPPED: {names[0]} is not installed and could not be installed here (make test needs root and apt-get)")
    pytest.fail(f"{names[0]} is not installed: run `make test` (it installs it) or apt-get install {names[0]}")
