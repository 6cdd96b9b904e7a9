"""From a (validated) scenario to an emulation plan: hosts, flows, kernel settings.

Supported traffic: ``tcp-bulk`` (kernel TCP; ``cc`` mapped to the kernel's names,
``ecn`` and ``sack`` as the sender namespace's ``net.ipv4.tcp_ecn``/``tcp_sack``),
``udp-cbr`` and ``udp-poisson`` (fixed ``size``). Other kinds, and TCP model knobs the
kernel has no per-socket equivalent for, are refused or listed as ignored with the
field path, never silently dropped.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import ScenarioError

#: aqmlab congestion-control names → Linux's (`tcp_available_congestion_control`).
KERNEL_CC = {"newreno": "reno", "reno": "reno", "cubic": "cubic", "bbr": "bbr"}
#: TCP keys that only tune aqmlab's TCP model; the kernel's own behaviour is measured.
MODEL_ONLY = ("profile", "mss", "iw", "min_rto", "initial_rto", "max_rto", "delack", "rwnd",
              "hystart", "rto_style", "rto_rearm", "header_bytes", "idle_restart", "cwv", "prr",
              "rack", "ssthresh_from_cwnd", "ssthresh_from_pipe", "ns3_cubic", "ns3_prr", "ns3_rto_ssthresh",
              "ns3_partial_rtx", "ns3_exit_growth",
              "per_ack_growth", "rate_cap")
SUPPORTED = ("tcp-bulk", "udp-cbr", "udp-poisson")
COMMON = ("kind", "name", "hosts", "direction", "src", "dst", "count", "start", "start_jitter", "stop", "class")

_DUR = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_RATE = {"bit": 1, "bps": 1, "kbit": 1e3, "kbps": 1e3, "mbit": 1e6, "mbps": 1e6, "gbit": 1e9, "gbps": 1e9}
_SIZE = {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 1024, "mib": 1024**2, "gib": 1024**3}


def _num(text: str, units: dict[str, float], what: str, case: bool = False) -> float:
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]+)\s*", str(text))
    if not m:
        raise ValueError(f"{text!r}: expected {what}")
    u = m.group(2) if case else m.group(2).lower()
    if u not in units:
        raise ValueError(f"{text!r}: unknown unit for {what}")
    return float(m.group(1)) * units[u]


def seconds(text: str) -> float:
    return _num(text, _DUR, "a duration", case=True)


def rate_bps(text: str) -> float:
    return _num(text, _RATE, "a rate")


def size_bytes(text: str) -> int:
    return int(_num(text, _SIZE, "a size"))


@dataclass
class Flow:
    id: int
    app: str
    kind: str  # "tcp" or "udp"
    src: str
    dst: str
    cc: str  # aqmlab's name ("" for UDP)
    kernel_cc: str
    start_s: float
    stop_s: float
    rate_bps: float = 0.0
    size: int = 0
    poisson: bool = False

    @property
    def sport(self) -> int:
        return 30000 + self.id

    @property
    def dport(self) -> int:
        return 20000 + self.id


@dataclass
class Plan:
    name: str
    seed: int
    duration_s: float
    warmup_s: float
    left: list[str]
    right: list[str]
    flows: list[Flow]
    apps: list[tuple[str, str]]  # (name, kind)
    bottleneck_bps: float
    sysctls: dict[str, dict[str, str]] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)


def make_plan(doc: dict[str, Any], seed: int | None = None) -> Plan:
    topo = doc.get("topology", {})
    if topo.get("kind") != "dumbbell":
        raise ScenarioError("topology.kind", f"{topo.get('kind')!r}: emulation supports a dumbbell topology only")
    groups: dict[str, list[tuple[str, str]]] = {}
    left, right = [], []
    for g in topo.get("hosts", []):
        pairs = [(f"{g['name']}_l{i}", f"{g['name']}_r{i}") for i in range(int(g.get("count", 1)))]
        groups[g["name"]] = pairs
        left += [p[0] for p in pairs]
        right += [p[1] for p in pairs]
    seed = int(doc.get("seed", 1) if seed is None else seed)
    duration = seconds(doc["duration"])
    plan = Plan(
        name=doc.get("name", "scenario"), seed=seed, duration_s=duration,
        warmup_s=seconds(doc["warmup"]) if "warmup" in doc else 0.0,
        left=left, right=right, flows=[], apps=[],
        bottleneck_bps=rate_bps(topo["bottleneck"]["rate"]),
    )
    ecn_sides: dict[str, set[bool]] = {"l": set(), "r": set()}
    sack_sides: dict[str, set[bool]] = {"l": set(), "r": set()}
    for i, t in enumerate(doc.get("traffic", [])):
        path = f"traffic[{i}]"
        kind = t.get("kind")
        if kind not in SUPPORTED:
            raise ScenarioError(f"{path}.kind", f"{kind!r}: not supported in emulation; expected one of: {', '.join(SUPPORTED)}")
        name = t.get("name", f"{kind}-{i}")
        plan.apps.append((name, kind))
        if "hosts" in t:
            pairs = groups[t["hosts"]]
            if t.get("direction", "forward") == "reverse":
                pairs = [(b, a) for a, b in pairs]
        else:
            pairs = [(t["src"], t["dst"])]
        count = int(t.get("count", 1))
        start = seconds(t["start"]) if "start" in t else 0.0
        jitter = seconds(t["start_jitter"]) if "start_jitter" in t else 0.0
        stop = seconds(t["stop"]) if "stop" in t else duration
        rng = random.Random(f"{seed}/traffic[{name}]")
        cc = kernel = ""
        if kind.startswith("tcp"):
            given = t.get("cc", "newreno")
            if isinstance(given, dict):  # cc = { kind = "...", <the model's parameters> }
                plan.ignored.extend(f"{path}.cc.{k} (aqmlab TCP model only; the kernel's own TCP runs)" for k in given if k != "kind")
                given = given.get("kind")
            if not isinstance(given, str) or given not in KERNEL_CC:
                raise ScenarioError(f"{path}.cc", f"{given!r}: no kernel equivalent to emulate; expected one of: {', '.join(KERNEL_CC)}")
            cc = given
            kernel = KERNEL_CC[cc]
            for k in MODEL_ONLY:
                if k in t:
                    plan.ignored.append(f"{path}.{k} (aqmlab TCP model only; the kernel's own TCP runs)")
        for k in t:
            if k not in COMMON and k not in MODEL_ONLY and k not in ("cc", "ecn", "receiver_ecn", "sack", "rate", "size", "l4s"):
                plan.ignored.append(f"{path}.{k}")
        for src, dst in pairs:
            for _ in range(count):
                fid = len(plan.flows)
                f = Flow(id=fid, app=name, kind="tcp" if kind.startswith("tcp") else "udp", src=src, dst=dst,
                         cc=cc, kernel_cc=kernel, start_s=start + rng.uniform(0, jitter), stop_s=stop)
                if f.kind == "udp":
                    f.rate_bps = rate_bps(t["rate"])
                    f.size = size_bytes(t.get("size", "1000B"))
                    f.poisson = kind == "udp-poisson"
                else:
                    side = "l" if src in left else "r"
                    # `ecn` is a bool or "off" | "classic" | "accecn"; the kernel gets
                    # tcp_ecn = 1 (RFC 3168) for either ECN name (AccECN is not emulated).
                    ecn = t.get("ecn", False)
                    ecn_sides[side].add(ecn not in (False, "off"))
                    note = f"{path}.ecn = accecn / receiver_ecn (the kernel runs RFC 3168 ECN)"
                    if (ecn == "accecn" or "receiver_ecn" in t) and note not in plan.ignored:
                        plan.ignored.append(note)
                    sack_sides[side].add(bool(t.get("sack", True)))
                plan.flows.append(f)
    for side in "lr":
        for key, vals, on, what in (("net.ipv4.tcp_ecn", ecn_sides[side], "1", "ecn"), ("net.ipv4.tcp_sack", sack_sides[side], "1", "sack")):
            if len(vals) > 1:
                raise ScenarioError("traffic", f"TCP flows of one side differ in `{what}`; the kernel setting is per namespace")
            if vals:
                plan.sysctls.setdefault(side, {})[key] = on if vals.pop() else "0"
    return plan
