"""The same DropTail dumbbell in real ns-2.35 (`ns`, Debian's ns2 package) and in
aqmlab with `profile = "ns2"`: packets delivered over and dropped at the bottleneck.

Used by tests/test_ns2_reference.py (short runs in `make test`) and by
benches/crossval/crossval_ns2.py (the results table). Everything is deterministic: one
FTP source per flow at a fixed start time, no random loss, DropTail. ns-2's only random
draw is each agent's `boot_time_` (the phase of its 10 ms RTT clock, tcp.cc:470, from
ns-2's default seed); aqmlab draws its own per flow, so RTT samples may differ by a tick.

Topology (both): sender i --100 Mbit/s, 1 ms-- r0 --RATE, DELAY, DropTail-- r1
--100 Mbit/s, 1 ms-- sink i. ns-2's DropTail `limit_` counts the packet being
transmitted (it drops when `q_->length() + 1 >= qlim_`, queue/drop-tail.cc:92), aqmlab's
pfifo does not: ns-2's limit L is aqmlab's `limit = L - 1`.
"""

import pathlib
import subprocess
import tempfile
from dataclasses import dataclass, field

import aqmlab

AGENT_CLASS = {"reno": "Agent/TCP/Reno", "newreno": "Agent/TCP/Newreno", "sack1": "Agent/TCP/Sack1",
               "linux": "Agent/TCP/Linux"}
SINK_CLASS = {"tcpsink": "Agent/TCPSink", "delack": "Agent/TCPSink/DelAck",
              "sack1": "Agent/TCPSink/Sack1", "sack1-delack": "Agent/TCPSink/Sack1/DelAck"}


@dataclass
class Dumbbell:
    name: str
    agent: str
    sink: str
    starts: list = field(default_factory=lambda: [0.0, 1.0, 2.0, 3.0])
    rate_mbit: float = 2.0
    delay_ms: float = 40.0
    limit: int = 30  # ns-2 DropTail limit_, packets
    duration: float = 60.0
    window: int | None = None  # the agents' window_ (None: ns-2's default, 20)
    linux_ca: str = "cubic"  # Agent/TCP/Linux's `select_ca` module (aqmlab's cc)


def tcl(d: Dumbbell, trace: str) -> str:
    n = len(d.starts)
    lines = [
        "set ns [new Simulator]",
        f"set tf [open {trace} w]",
        "set r0 [$ns node]",
        "set r1 [$ns node]",
        f"$ns duplex-link $r0 $r1 {d.rate_mbit}Mb {d.delay_ms}ms DropTail",
        f"$ns queue-limit $r0 $r1 {d.limit}",
        "$ns trace-queue $r0 $r1 $tf",
    ]
    for i in range(n):
        lines += [
            f"set s{i} [$ns node]",
            f"set d{i} [$ns node]",
            f"$ns duplex-link $s{i} $r0 100Mb 1ms DropTail",
            f"$ns duplex-link $r1 $d{i} 100Mb 1ms DropTail",
            f"set tcp{i} [new {AGENT_CLASS[d.agent]}]",
            f"$tcp{i} set fid_ {i}",
            *([f"$tcp{i} set window_ {d.window}"] if d.window is not None else []),
            *([f"$tcp{i} select_ca {d.linux_ca}"] if d.agent == "linux" else []),
            f"set sink{i} [new {SINK_CLASS[d.sink]}]",
            f"$ns attach-agent $s{i} $tcp{i}",
            f"$ns attach-agent $d{i} $sink{i}",
            f"$ns connect $tcp{i} $sink{i}",
            f"set ftp{i} [new Application/FTP]",
            f"$ftp{i} attach-agent $tcp{i}",
            f"$ns at {d.starts[i]} \"$ftp{i} start\"",
        ]
    lines += [
        "proc finish {} { global ns tf; $ns flush-trace; close $tf; exit 0 }",
        f"$ns at {d.duration} \"finish\"",
        "$ns run",
    ]
    return "\n".join(lines) + "\n"


def run_ns2(d: Dumbbell, ns: str = "ns") -> dict:
    """Delivered (received at r1) and dropped TCP data packets at the bottleneck, in
    total and per flow (fid)."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = pathlib.Path(tmp) / "bottleneck.tr"
        script = pathlib.Path(tmp) / "dumbbell.tcl"
        script.write_text(tcl(d, str(trace)))
        subprocess.run([ns, str(script)], check=True, capture_output=True, cwd=tmp, timeout=600)
        n = len(d.starts)
        got = {"delivered": [0] * n, "dropped": [0] * n}
        with open(trace) as f:
            for line in f:
                ev, _t, _a, _b, kind, _size, _flags, fid, *_ = line.split()
                if kind != "tcp":
                    continue
                if ev == "r":
                    got["delivered"][int(fid)] += 1
                elif ev == "d":
                    got["dropped"][int(fid)] += 1
    return summarise(got)


def summarise(got: dict) -> dict:
    return {"delivered": sum(got["delivered"]), "dropped": sum(got["dropped"]),
            "delivered_per_flow": got["delivered"], "dropped_per_flow": got["dropped"]}


def scenario(d: Dumbbell) -> dict:
    """The aqmlab scenario of the same dumbbell (profile = "ns2")."""
    n = len(d.starts)
    return {
        "name": d.name,
        "duration": f"{d.duration}s",
        "seed": 1,
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": f"{d.rate_mbit}Mbit", "delay": f"{d.delay_ms}ms",
                           "qdisc": {"kind": "pfifo", "limit": f"{d.limit - 1}pkt"}},
            "hosts": [{"name": "h", "count": n, "left": {"rate": "100Mbit", "delay": "1ms"},
                       "right": {"rate": "100Mbit", "delay": "1ms"}}],
        },
        "traffic": [
            {"kind": "tcp-bulk", "name": f"f{i}", "src": f"h_l{i}", "dst": f"h_r{i}",
             "start": f"{d.starts[i]}s", "profile": "ns2", "agent": d.agent, "sink": d.sink,
             **({"window": d.window} if d.window is not None else {}),
             **({"cc": d.linux_ca} if d.agent == "linux" else {})}
            for i in range(n)
        ],
    }


def run_aqmlab(d: Dumbbell) -> dict:
    res = aqmlab.run(scenario(d))
    f = res.flows.sort("flow")
    return summarise({"delivered": f["packets_delivered"].to_list(),
                      "dropped": f["packets_dropped"].to_list()})
