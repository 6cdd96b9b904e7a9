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
