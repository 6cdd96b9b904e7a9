"""RED and Adaptive RED with `defaults = "ns2"` against real ns-2.35 (`ns`, Debian's ns2).

Both simulators run the same deterministic UDP CBR arrivals (no TCP model involved) into a
2 Mbit/s, 10 ms bottleneck with a 100-packet buffer, for 60 s after a 10 s warm-up:
three sources of 1000, 500 and 200 B packets. `overload` offers 2.2 Mbit/s constantly;
`onoff` offers 1.1 Mbit/s constantly plus 1.5 Mbit/s of 1000-B packets during the first
0.401 s of every second, so the queue fills and drains (idle-time decay, the count after
an empty queue, the byte limit). ns-2's queue is read by a QueueMonitor (drops /
arrivals, and its packet integrator for the time-average queue); aqmlab's by its
bottleneck row. Arrival counts must be identical.

Tolerance. The two simulators draw RED's drop decisions from different random streams,
so only the distributions can agree. Over 6 seeds each, ns-2's drop rate spread by ±3 %
(relative) and its mean queue by ±1 % in these scenarios; a mean over 3 seeds has about
a third of that spread as standard error on each side, so we require agreement within
5 % relative for the drop rate and 4 % for the mean queue (about 3 standard errors of
the difference). Agreement here covers the automatic thresholds and weight, gentle,
wait, byte counting and scaling, the first-arrival and one-packet exemptions, the
idle-time decay, the byte limit, and ARED's arrival-driven max_p adaptation.
"""

import subprocess

import aqmlab
import polars as pl
import pytest
from conftest import need_tool

SEEDS = [1, 2, 3]
DURATION, WARMUP = 60.0, 10.0
SOURCES = [(1000, "1.0Mb", 0.0), (500, "0.7Mb", 0.0013), (200, "0.5Mb", 0.0027)]
ONOFF_SOURCES = [(1000, "1.5Mb", 0.0), (500, "0.9Mb", 0.0013), (200, "0.2Mb", 0.0027)]
BURSTS = [(float(k), k + 0.401) for k in range(int(DURATION))]

TCL = r"""
global defaultRNG
$defaultRNG seed {seed}
Queue/RED set bytes_ {bytes}
Queue/RED set queue_in_bytes_ {bytes}
Queue/RED set adaptive_ {adaptive}
Queue/RED set targetdelay_ {target}
set ns [new Simulator]
set r [$ns node]; set d [$ns node]
$ns simplex-link $r $d 2Mb 10ms {qtype}
$ns queue-limit $r $d 100
set qm [$ns monitor-queue $r $d ""]
set i 0
foreach {{size rate start}} {{{sources}}} {{
  set s [$ns node]
  $ns simplex-link $s $r 100Mb 1ms DropTail
  set u [new Agent/UDP]; $u set packetSize_ 1500
  $ns attach-agent $s $u
  set k [new Agent/Null]; $ns attach-agent $d $k; $ns connect $u $k
  set c($i) [new Application/Traffic/CBR]
  $c($i) set packetSize_ $size; $c($i) set rate_ $rate; $c($i) set random_ 0
  $c($i) attach-agent $u
  if {{$i > 0 || !{onoff}}} {{ $ns at $start "$c($i) start" }}
  incr i
}}
if {{{onoff}}} {{
  foreach {{on off}} {{{bursts}}} {{ $ns at $on "$c(0) start"; $ns at $off "$c(0) stop" }}
}}
proc warm {{}} {{ global qm; $qm reset; [$qm get-pkts-integrator] reset }}
proc done {{}} {{
  global ns qm
  set int [$qm get-pkts-integrator]
  $int newpoint [$ns now] [$qm set pkts_]
  puts "[$qm set parrivals_] [$qm set pdrops_] [$int set sum_]"
  exit 0
}}
$ns at {warmup} "warm"
$ns at {duration} "done"
$ns run
"""


def ns2_run(ns: str, tmp_path, kind: str, bytes_: bool, onoff: bool, seed: int,
            sources=None, warmup=WARMUP, duration=DURATION):
    sources = sources or (ONOFF_SOURCES if onoff else SOURCES)
    script = TCL.format(
        qtype="DropTail" if kind == "droptail" else "RED",
        seed=seed,
        bytes="true" if bytes_ else "false",
        adaptive=1 if kind == "ared" else 0,
        target="0.010" if kind == "ared" else "0.005",
        sources=" ".join(f"{s} {r} {t}" for s, r, t in sources),
        onoff=1 if onoff else 0,
        bursts=" ".join(f"{a} {b}" for a, b in BURSTS),
        warmup=warmup,
        duration=duration,
    )
    path = tmp_path / f"{kind}-{seed}.tcl"
    path.write_text(script)
    out = subprocess.run([ns, str(path)], capture_output=True, text=True, timeout=60, check=True).stdout
    arrivals, drops, qsum = out.split()
    return int(arrivals), int(drops) / int(arrivals), float(qsum) / (duration - warmup)


def aqmlab_scenario(kind: str, bytes_: bool, onoff: bool, sources=None) -> dict:
    qdisc = {"kind": kind, "defaults": "ns2", "limit": "100pkt"}
    if kind != "droptail":
        qdisc["bytemode"] = bytes_
    if kind == "ared":
        qdisc["target"] = "10ms"
    hosts, traffic = [], []
    sources = sources or (ONOFF_SOURCES if onoff else SOURCES)
    for i, (size, rate, start) in enumerate(sources):
        name = f"s{i}"
        hosts.append({"name": name, "left": {"rate": "100Mbit", "delay": "1ms"},
                      "right": {"rate": "100Mbit", "delay": "0ms"}})
        cbr = {"kind": "udp-cbr", "hosts": name, "rate": rate.replace("Mb", "Mbit"), "size": f"{size}B"}
        if i == 0 and onoff:
            for on, off in BURSTS:
                traffic.append({**cbr, "name": f"burst{on:g}", "start": f"{on}s", "stop": f"{off}s"})
        else:
            traffic.append({**cbr, "name": name, "start": f"{start}s"})
    return {
        "name": f"ns2-{kind}",
        "duration": f"{DURATION}s",
        "warmup": f"{WARMUP}s",
        "topology": {"kind": "dumbbell",
                     "bottleneck": {"rate": "2Mbit", "delay": "10ms", "qdisc": qdisc},
                     "hosts": hosts},
        "traffic": traffic,
    }


def aqmlab_run(scenario: dict, seed: int):
    q = aqmlab.run(scenario, seed=seed).queues.filter(pl.col("link") == "L->R").row(0, named=True)
    return q["arrivals"], q["drop_rate"], q["qlen_pkts_mean"]


@pytest.mark.parametrize(
    "kind,bytes_,onoff",
    [
        ("red", False, False),
        ("red", True, False),
        ("ared", False, False),
        ("ared", True, False),
        ("red", True, True),
        ("ared", False, True),
    ],
)
def test_red_and_ared_with_ns2_defaults_match_real_ns2(tmp_path, kind, bytes_, onoff):
    ns = need_tool("ns")
    scenario = aqmlab_scenario(kind, bytes_, onoff)
    theirs = [ns2_run(ns, tmp_path, kind, bytes_, onoff, s) for s in SEEDS]
    ours = [aqmlab_run(scenario, s) for s in SEEDS]
    assert {a for a, _, _ in theirs} == {a for a, _, _ in ours}, (theirs, ours)
    drop_ns2 = sum(d for _, d, _ in theirs) / len(SEEDS)
    drop_us = sum(d for _, d, _ in ours) / len(SEEDS)
    q_ns2 = sum(q for _, _, q in theirs) / len(SEEDS)
    q_us = sum(q for _, _, q in ours) / len(SEEDS)
    msg = f"ns-2 drop {drop_ns2:.4f} queue {q_ns2:.3f}; aqmlab drop {drop_us:.4f} queue {q_us:.3f}"
    assert drop_us == pytest.approx(drop_ns2, rel=0.05), msg
    assert q_us == pytest.approx(q_ns2, rel=0.04), msg


# DropTail: exact intervals in ns (8, 5, 4 ms) and start phases that cannot tie.
DROPTAIL_SOURCES = [(1000, "1.0Mb", 0.000123), (500, "0.8Mb", 0.0013457), (200, "0.4Mb", 0.0027891)]


def test_droptail_with_ns2_defaults_matches_real_ns2():
    """ns-2's DropTail holds limit − 1 packets (drop when length + 1 >= limit). Without
    random drops both simulators are deterministic, and they drop the same number of
    packets over the first 12 s (536 each; in a manual check the cumulative counts also
    agreed at every 25th ns-2 drop up to then). The first difference is at 12.001 s, an
    arrival ns-2 admits and aqmlab drops. Arrivals and departures here fall on common
    nominal instants (source phases plus multiples of 0.4 ms; ns-2's trace has an
    arrival and a departure both at 11.993203 s), whose order aqmlab's integer clock and
    ns-2's double clock can decide differently; we have not traced the exact event. From
    then on the two full queues drop different packets: by 60 s aqmlab has dropped about
    7 % more, smaller, packets (9.00 % vs 8.39 % of arrivals) for about the same bytes.
    Over 10-60 s the time-average queue agrees within 1 %."""
    import tempfile
    from pathlib import Path

    ns = need_tool("ns")
    tmp = Path(tempfile.mkdtemp())
    scenario = aqmlab_scenario("droptail", False, False, DROPTAIL_SOURCES)
    early = dict(scenario, duration="12s", warmup="0s")
    theirs = ns2_run(ns, tmp, "droptail", False, False, 1, DROPTAIL_SOURCES, 0.0, 12.0)
    ours = aqmlab_run(early, 1)
    assert ours[0] == theirs[0]
    assert round(ours[1] * ours[0]) == round(theirs[1] * theirs[0]) > 400, (theirs, ours)
    theirs = ns2_run(ns, tmp, "droptail", False, False, 1, DROPTAIL_SOURCES)
    ours = aqmlab_run(scenario, 1)
    assert ours[0] == theirs[0]
    assert ours[2] == pytest.approx(theirs[2], rel=0.01), (theirs, ours)
