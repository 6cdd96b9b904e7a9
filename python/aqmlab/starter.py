"""`aqmlab init`: a commented starter scenario — the question this project exists for,
one scenario file: does an AQM keep a call usable next to uploads on a slow uplink?"""

from __future__ import annotations

import os
from pathlib import Path

from . import safefile

STARTER = '''\
# A starter scenario (aqmlab init). Run it:   aqmlab run scenario.toml
# Change one value:     aqmlab run scenario.toml --set 'bottleneck.qdisc={ kind = "fq_codel" }'
# Compare disciplines over seeds: a sweep file (docs/sweeps.md), then aqmlab compare / aqmlab report.
# Every field: docs/scenario.md; every discipline: aqmlab qdiscs; every traffic kind: aqmlab traffic.
#
# The question: five uploads share a 5 Mbit/s uplink with a one-second buffer (a cable
# modem's upstream). Does the phone call stay usable? Try qdisc = { kind = "fq_codel" }.
name = "starter"
duration = "60s"   # simulated time
warmup = "10s"     # results count from here (start-up transients left out)
seed = 1           # same scenario + seed -> identical tables

[topology]
kind = "dumbbell"  # left hosts -> bottleneck -> right hosts
[topology.bottleneck]
rate = "5Mbit"
delay = "10ms"     # one-way propagation delay of the bottleneck
qdisc = { kind = "pfifo", limit = "417pkt" }  # 417 x 1500 B = 1 s at 5 Mbit/s

[[topology.hosts]]
name = "up"        # five hosts uploading
count = 5
left = { rate = "100Mbit", delay = "2ms" }    # access link on each side
right = { rate = "100Mbit", delay = "3ms" }

[[topology.hosts]]
name = "phone"
count = 1
left = { rate = "100Mbit", delay = "1ms" }
right = { rate = "100Mbit", delay = "1ms" }

[[traffic]]
kind = "tcp-bulk"  # long uploads (Linux-like TCP by default: profile = "linux")
name = "uploads"
hosts = "up"
cc = "cubic"
start_jitter = "1s"  # flows start at random times in the first second

[[traffic]]
kind = "voip"      # a G.711 call; MOS from the ITU-T G.107 E-model
name = "call"
hosts = "phone"
codec = "g711"
bidirectional = true
start = "10s"

[output]
timeseries = "100ms"   # queue length and sojourn over time (aqmlab plot RUN --kind timeseries)
'''


def write(path: str | os.PathLike[str], force: bool = False) -> Path:
    """Write the starter scenario to ``path`` (refusing to overwrite unless ``force``)."""
    path = Path(path)
    if path.exists() and not force:
        raise FileExistsError(f"{path}: already exists (use --force to overwrite)")
    safefile.write_text(path, STARTER)
    return path
