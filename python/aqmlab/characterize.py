"""``aqmlab characterize``: the RFC 7928 AQM characterisation guidelines as one command.

RFC 7928 (Kuhn, Natarajan, Khademi, Ros, "Characterization Guidelines for Active
Queue Management (AQM)", July 2016) lists the experiments an AQM proposal should be
characterised with. Each experiment here is named by its section and runs the AQM
under test **beside DropTail (pfifo) at the same buffer** (and beside any ``against``
disciplines), as one sweep (`aqmlab.sweep`: the qdisc is an axis, the experiment's own
parameters are further axes), so runs go in parallel, resume, and land in the usual
sweep folders.

Operating points. Where the RFC leaves numbers open, the set-up is the ns-3 AQM
Evaluation Suite's (Deepak, Shravya, Tahiliani, WNS3 2017; NITK's
``src/aqm-eval-suite/examples/*.cc``, read at the stored copy of
github.com/indu98/aqm_eval_suite): a dumbbell with a 1 Mbit/s, 48 ms bottleneck and
10 Mbit/s, 1 ms access links on both sides (base RTT 2 × (1 + 48 + 1) = 100 ms), TCP
NewReno with SACK and an initial window of 3 (``EvaluationTopology::CreateFlow``),
300 s runs (600 s for §6). Every experiment cites the scenario file it follows, or
says *assumed*. The buffer is ``limit = "1BDP"`` for every discipline: RFC 7928 §3.2
asks for a buffer of one bandwidth–delay product of the bottleneck
(`aqmlab.scenario` resolves it, docs/scenario.md; the ns-3 suite itself uses 45
packets). aqmlab's packets are 1500 B (MSS 1448 B), not the ns-3 suite's 698 B.

``quick`` runs every experiment for 30 s (60 s for the time-varying §8.2.3/§8.2.4,
whose schedules are scaled to the run), one seed, fewer §6 RTTs; the full suite runs
the ns-3 suite's durations with three seeds.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from .errors import ScenarioError
from .scenario import parse_overrides, qdisc_docs

DROPTAIL = {"kind": "pfifo", "limit": "1BDP"}
#: The buffer every discipline gets unless ``buffer`` says otherwise.
BUFFER = "1BDP"


def base(duration: str, flows: list[dict[str, Any]], rate: str = "1Mbit", delay: str = "48ms", access: str = "10Mbit",
         groups: list[dict[str, Any]] | None = None, reverse_aqm: bool = False) -> dict[str, Any]:
    """The ns-3 suite's dumbbell (``eval-topology.cc``: PointToPointDumbbellHelper)."""
    hosts = groups or [{"name": "a", "count": 1}]
    doc: dict[str, Any] = {
        "name": "rfc7928",
        "duration": duration,
        "seed": 1,
        "output": {"timeseries": "100ms", "timeseries_links": ["L->R"], "flow_timeseries": "1s", "drops": True, "transfers": True},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": rate, "delay": delay, "qdisc": dict(DROPTAIL)},
            "hosts": [{"left": {"rate": access, "delay": "1ms"}, "right": {"rate": access, "delay": "1ms"}, **h} for h in hosts],
        },
        "traffic": flows,
    }
    if reverse_aqm:
        doc["topology"]["reverse"] = {"rate": rate, "delay": delay, "qdisc": dict(DROPTAIL)}
    return doc


def tcp(name: str, hosts: str = "a", count: int = 1, **kw: Any) -> dict[str, Any]:
    """A long-lived NewReno flow as ``EvaluationTopology::CreateFlow`` makes it."""
    return {"kind": "tcp-bulk", "name": name, "hosts": hosts, "count": count, "cc": "newreno", "iw": 3, **kw}


@dataclass
class Experiment:
    id: str
    section: str
    title: str
    source: str
    #: (quick) -> base scenario
    make: Callable[[bool], dict[str, Any]]
    #: quick -> extra axes, zipped together (each the same length), crossed with the qdiscs
    axes: Callable[[bool], dict[str, Any]] | None = None
    #: qdisc paths the discipline under test goes to (all get the same spec)
    qdisc_paths: tuple[str, ...] = ("topology.bottleneck.qdisc",)
    #: (spec) -> spec actually placed, or raise NotApplicable
    adapt: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    notes: str = ""


class NotApplicable(Exception):
    """A section that cannot apply to the discipline under test."""


def staggered(n: int) -> list[dict[str, Any]]:
    """n NewReno flows, flow i starting at i seconds, as mild-/medium-/heavy-congestion.cc
    start them (``ac.Start (Seconds ((i * nflow) / nflow))``)."""
    return [tcp(f"tcp-{i}", start=f"{i}s") for i in range(n)]


def _dur(quick: bool, full: str = "300s", q: str = "30s") -> str:
    return q if quick else full


def _scale(quick: bool) -> float:
    """Time scale of the §8 schedules: the ns-3 suite's 300 s, or 60 s with ``quick``."""
    return 0.2 if quick else 1.0


def _varying_congestion(quick: bool) -> dict[str, Any]:
    # vary-congestion-level.cc: 10 flows from 0 to 300 s; flows 4-7 pause 40-60, 100-120,
    # 160-180, 220-240 s and from 280 s; flows 8-9 pause 20-60, 80-120, 140-180,
    # 200-240 and from 260 s. Pause/restart of one connection becomes one connection
    # per active period here.
    s = _scale(quick)
    flows = [tcp("steady", count=4)]
    on_a = [(0, 40), (60, 100), (120, 160), (180, 220), (240, 280)]
    on_b = [(0, 20), (60, 80), (120, 140), (180, 200), (240, 260)]
    for tag, windows, n in (("mid", on_a, 4), ("short", on_b, 2)):
        for k, (a, b) in enumerate(windows):
            flows.append(tcp(f"{tag}-{k}", count=n, start=f"{a * s}s", stop=f"{b * s}s"))
    return base(f"{int(300 * s)}s", flows)


def _varying_capacity(quick: bool, period_s: float, hi: str, lo: str) -> dict[str, Any]:
    # vary-available-capacity-uno.cc: two flows, the bottleneck alternates 100 and
    # 10 Mbit/s every 20 s (long time scale).
    s = _scale(quick)
    dur = 300 * s
    step = period_s * s if period_s >= 10 else period_s
    sched, t, k = [], step, 0
    while t < dur:
        sched.append({"at": f"{round(t, 6)}s", "rate": lo if k % 2 == 0 else hi})
        t += step
        k += 1
    d = base(f"{int(dur)}s", [tcp("tcp", count=2)], rate=hi, access="500Mbit")
    d["topology"]["bottleneck"]["rate_schedule"] = sched
    return d


def _parking_lot(quick: bool) -> dict[str, Any]:
    # §10: two AQM bottlenecks in series. *assumed*: the ns-3 suite has no multi-AQM
    # scenario; the RFC's figure puts routers in a chain with cross traffic per hop.
    link = {"rate": "1Mbit", "delay": "24ms", "qdisc": dict(DROPTAIL), "duplex": False}
    acc = {"rate": "10Mbit", "delay": "1ms", "duplex": True}
    return {
        "name": "rfc7928", "duration": _dur(quick), "seed": 1,
        "output": {"timeseries": "100ms", "timeseries_links": ["R1->R2", "R2->R3"], "flow_timeseries": "1s", "drops": True},
        "topology": {"kind": "graph",
                     "nodes": [{"name": n} for n in ("S", "R1", "R2", "R3", "D", "X1", "Y1", "X2", "Y2")],
                     "links": [
                         {"from": "R1", "to": "R2", **link}, {"from": "R2", "to": "R1", "rate": "1Mbit", "delay": "24ms", "duplex": False},
                         {"from": "R2", "to": "R3", **link}, {"from": "R3", "to": "R2", "rate": "1Mbit", "delay": "24ms", "duplex": False},
                         {"from": "S", "to": "R1", **acc}, {"from": "R3", "to": "D", **acc},
                         {"from": "X1", "to": "R1", **acc}, {"from": "R2", "to": "Y1", **acc},
                         {"from": "X2", "to": "R2", **acc}, {"from": "R3", "to": "Y2", **acc}]},
        "traffic": [
            {"kind": "tcp-bulk", "name": "through", "src": "S", "dst": "D", "count": 2, "cc": "newreno", "iw": 3},
            {"kind": "tcp-bulk", "name": "cross-1", "src": "X1", "dst": "Y1", "count": 2, "cc": "newreno", "iw": 3},
            {"kind": "tcp-bulk", "name": "cross-2", "src": "X2", "dst": "Y2", "count": 2, "cc": "newreno", "iw": 3},
        ],
    }


def _set_buffers(doc: dict[str, Any], buffer: str) -> None:
    """Every DropTail queue of an experiment's base takes ``buffer`` too."""
    t = doc["topology"]
    links = [t.get("bottleneck"), t.get("reverse")] + list(t.get("links", []))
    for link in links:
        if link and isinstance(link.get("qdisc"), dict) and link["qdisc"].get("kind") == "pfifo":
            link["qdisc"]["limit"] = buffer


def _with_ecn(spec: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    params = {p["name"] for q in qdisc_docs() if q["kind"] == spec["kind"] for p in q["params"]}
    if "ecn" not in params:
        raise NotApplicable(f"§4.5 cannot apply: queue discipline `{spec['kind']}` has no `ecn` parameter (it cannot mark)")
    return spec


def _in_scheduler(spec: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    # §4.6: the discipline as the per-class queue of a two-band round robin.
    return {"kind": "wrr", "bands": 2, "weights": [1, 1], "children": [copy.deepcopy(spec), copy.deepcopy(spec)]}


def experiments() -> list[Experiment]:
    ns3 = "ns-3 aqm-eval-suite examples/"
    return [
        Experiment("4.5-ecn", "4.5", "Interaction with ECN", "*assumed*: §8.2.2 medium congestion (5 flows) with ECN-capable senders and the AQM marking",
                   lambda q: base(_dur(q), [{**f, "ecn": True} for f in staggered(5)]), adapt=_with_ecn, notes="AQM with `ecn = true`; DropTail cannot mark (it drops)"),
        Experiment("4.6-scheduling", "4.6", "Interaction with scheduling", "*assumed*: two classes of 3 NewReno flows each in a 2-band round robin (wrr), the discipline under test as each band's queue",
                   lambda q: base(_dur(q), [tcp("class-0", hosts="a", count=3, **{"class": 0}), tcp("class-1", hosts="b", count=3, **{"class": 1})],
                                  groups=[{"name": "a", "count": 1}, {"name": "b", "count": 1}]), adapt=_in_scheduler),
        Experiment("5.1.1-tcp-friendly", "5.1", "TCP-friendly sender, same initial window", ns3 + "tcp-friendly-same-initcwnd.cc (1 NewReno flow, IW 3)",
                   lambda q: base(_dur(q), [tcp("tcp")])),
        Experiment("5.1.2-tcp-friendly-iw", "5.1", "TCP-friendly senders, different initial windows", ns3 + "tcp-friendly-different-initcwnd.cc (a long-lived NewReno flow with IW 3; from 0.5 s a 100-segment NewReno transfer with IW 10, its completion time)",
                   lambda q: base(_dur(q), [tcp("iw3"), tcp("iw10", kind="tcp-file", iw=10, size="144800B", start="0.5s")])),
        Experiment("5.2-aggressive", "5.2", "Aggressive transport sender", ns3 + "aggressive-transport-sender.cc (one CUBIC flow, IW 3)",
                   lambda q: base(_dur(q), [tcp("cubic", cc="cubic")])),
        Experiment("5.3-unresponsive", "5.3", "Unresponsive transport sender", ns3 + "unresponsive-with-friendly-transport.cc (NewReno + 0.8 Mbit/s UDP)",
                   lambda q: base(_dur(q), [tcp("tcp"), {"kind": "udp-cbr", "name": "udp", "hosts": "a", "rate": "0.8Mbit", "size": "726B"}])),
        Experiment("5.4-lbe", "5.4", "Less-than-best-effort transport sender", ns3 + "LBE-transport-sender.cc (LEDBAT + NewReno)",
                   lambda q: base(_dur(q), [tcp("ledbat", cc="ledbat"), tcp("newreno")])),
        Experiment("6-rtt-fairness", "6", "Round-trip time fairness", ns3 + "rtt-fairness.cc (a 100 ms flow against a flow of RTT 5-500 ms on a 1 Mbit/s, 2 ms bottleneck)",
                   lambda q: _rtt_fairness(q), axes=lambda q: {"topology.hosts[1].left.delay": _rtt_delays(q), "topology.hosts[1].right.delay": _rtt_delays(q)}),
        Experiment("7-bursts", "7", "Burst absorption", "*assumed* (the ns-3 suite has no §7): a bulk NewReno flow, IW 10 bursts (100 kB, then 1 s idle), MPEG video at 5 frame/s (GOP IBBPBBPBB) and 64 kbit/s CBR",
                   lambda q: base(_dur(q), [tcp("bulk"), tcp("iw10-bursts", kind="tcp-onoff", iw=10, size="100KB", pause="1s"),
                                            {"kind": "video", "name": "video", "hosts": "a", "fps": 5.0},
                                            {"kind": "udp-cbr", "name": "cbr", "hosts": "a", "rate": "64kbit", "size": "200B"}])),
        Experiment("8.2.2-mild", "8.2", "Stability: mild congestion", ns3 + "mild-congestion.cc (3 flows = int(0.036 × 90), flow i starting at i s)",
                   lambda q: base(_dur(q), staggered(3))),
        Experiment("8.2.2-medium", "8.2", "Stability: medium congestion", ns3 + "medium-congestion.cc (5 flows = int(0.081 × 62), flow i starting at i s)",
                   lambda q: base(_dur(q), staggered(5))),
        Experiment("8.2.2-heavy", "8.2", "Stability: heavy congestion", ns3 + "heavy-congestion.cc (10 flows = int(0.114 × 90), flow i starting at i s)",
                   lambda q: base(_dur(q), staggered(10))),
        Experiment("8.2.3-varying-load", "8.2", "Stability: varying congestion levels", ns3 + "vary-congestion-level.cc (10 flows, 6 of them on and off every 20-40 s)",
                   lambda q: _varying_congestion(q)),
        Experiment("8.2.4-capacity-long", "8.2", "Stability: varying capacity, long time scale", ns3 + "vary-available-capacity-uno.cc (100 ↔ 10 Mbit/s every 20 s, 2 flows)",
                   lambda q: _varying_capacity(q, 20.0, "100Mbit", "10Mbit")),
        Experiment("8.2.4-capacity-short", "8.2", "Stability: varying capacity, short time scale", "*assumed*: as the long time scale with the rate switched every 1 s (ns-3 vary-available-capacity-duo.cc not followed)",
                   lambda q: _varying_capacity(q, 1.0, "100Mbit", "10Mbit")),
        Experiment("9.1-traffic-mix", "9.1", "Traffic mix", "*assumed*: 2 bulk NewReno flows, 5 web-like IW 10 on/off transfers (50 kB, 2 s idle), a G.711 call and 5 frame/s video",
                   lambda q: base(_dur(q), [tcp("bulk", count=2), tcp("web", kind="tcp-onoff", count=5, iw=10, size="50KB", pause="2s"),
                                            {"kind": "voip", "name": "voip", "hosts": "a", "codec": "g711"},
                                            {"kind": "video", "name": "video", "hosts": "a", "fps": 5.0}])),
        Experiment("9.2-bidirectional", "9.2", "Bidirectional traffic", "*assumed*: 3 NewReno flows each way; the discipline under test on both directions of the bottleneck",
                   lambda q: base(_dur(q), [tcp("forward", count=3), tcp("reverse", count=3, direction="reverse")], reverse_aqm=True),
                   qdisc_paths=("topology.bottleneck.qdisc", "topology.reverse.qdisc")),
        Experiment("10-multi-aqm", "10", "Multiple bottlenecks", "*assumed*: two 1 Mbit/s, 24 ms bottlenecks in series, 2 flows through both, 2 cross flows on each",
                   lambda q: _parking_lot(q), qdisc_paths=("topology.links[0].qdisc", "topology.links[2].qdisc")),
        Experiment("access-20M", "access", "Access-speed variant: 20 Mbit/s", "beyond the RFC's rates: 20 Mbit/s, 20 ms bottleneck (base RTT 44 ms), 50 NewReno flows (20 with quick)",
                   lambda q: base(_dur(q, "120s", "20s"), [tcp("tcp", count=20 if q else 50)], rate="20Mbit", delay="20ms", access="1Gbit")),
        Experiment("access-100M", "access", "Access-speed variant: 100 Mbit/s", "beyond the RFC's rates: 100 Mbit/s, 20 ms bottleneck, 200 NewReno flows (50 with quick)",
                   lambda q: base(_dur(q, "120s", "20s"), [tcp("tcp", count=50 if q else 200)], rate="100Mbit", delay="20ms", access="1Gbit")),
    ]


def _rtt_delays(quick: bool) -> list[str]:
    # rtt-fairness.cc: RTTs {5, 8, 10, 16, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400,
    # 500} ms = 4 × access delay + 4 ms (2 ms bottleneck each way).
    rtts = [10, 100, 300] if quick else [5, 8, 10, 16, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400, 500]
    return [f"{(r - 4) / 4}ms" for r in rtts]


def _rtt_fairness(quick: bool) -> dict[str, Any]:
    return base(_dur(quick, "600s"), [tcp("rtt-100ms", hosts="ref"), tcp("rtt-varied", hosts="var", start="0.5s")], delay="2ms",
                groups=[{"name": "ref", "count": 1, "left": {"rate": "10Mbit", "delay": "24ms"}, "right": {"rate": "10Mbit", "delay": "24ms"}},
                        {"name": "var", "count": 1}])


# ---------------------------------------------------------------------------------
# Running


@dataclass
class Characterization:
    aqm: str
    out: Path
    wall_s: float = 0.0
    #: experiment id -> DataFrame of metrics per discipline
    metrics: dict[str, pl.DataFrame] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    report: Path | None = None
    label: str = ""
    buffer: str = BUFFER


def _spec(aqm: str, sets: dict[str, Any], buffer: str = BUFFER) -> dict[str, Any]:
    kinds = [q["kind"] for q in qdisc_docs()]
    if aqm not in kinds:
        raise ScenarioError("aqm", f"{aqm!r}: unknown queue discipline; expected one of: {', '.join(kinds)}")
    spec: dict[str, Any] = {"kind": aqm}
    params = {p["name"] for q in qdisc_docs() if q["kind"] == aqm for p in q["params"]}
    if "limit" in params:
        spec["limit"] = buffer
    for k, v in sets.items():
        key = k.removeprefix("qdisc.")
        if key == k or not key or "." in key:
            raise ScenarioError(f"--set {k}", "expected qdisc.PARAM=VALUE (a parameter of the discipline under test)")
        if key not in params:
            raise ScenarioError(f"--set {k}", f"`{aqm}` has no parameter `{key}`; it has: {', '.join(sorted(params))}")
        spec[key] = v
    return spec


def select(sections: list[str] | None) -> list[Experiment]:
    exps = experiments()
    if not sections:
        return exps
    known = sorted({e.section for e in exps} | {e.id for e in exps})
    out = [e for e in exps if e.section in sections or e.id in sections]
    bad = [s for s in sections if not any(e.section == s or e.id == s for e in exps)]
    if bad:
        raise ScenarioError("--sections", f"{', '.join(bad)}: no such section; expected some of: {', '.join(known)}")
    return out


def characterize(aqm: str, against: list[str] | None = None, set: Any = None, quick: bool = False,
                 out: str | Path | None = None, sections: list[str] | None = None, workers: int | None = None,
                 seeds: int | None = None, progress: Callable[[str], None] | None = None,
                 buffer: str = BUFFER) -> Characterization:
    """Run the RFC 7928 experiments for queue discipline ``aqm`` (with ``set``
    overrides of its parameters, ``{"qdisc.target": "10ms"}`` or ``["qdisc.target=10ms"]``)
    beside DropTail and ``against``, every one with ``limit = buffer`` (default one
    bandwidth-delay product); write ``out/report.html``. Returns the metrics."""
    from .sweep import make_executor, sweep

    t0 = time.perf_counter()
    spec = _spec(aqm, parse_overrides(set), buffer)
    others = [_spec(a, {}, buffer) for a in dict.fromkeys(against or []) if a != aqm and a != "pfifo"]
    droptail = {"kind": "pfifo", "limit": buffer}
    # The discipline under test is shown by its name (with a * when --set changed it).
    label = aqm + ("*" if set else "")
    discs = [(label, spec), ("DropTail", droptail)] + [(o["kind"], o) for o in others]
    exps = select(sections)
    out = Path(out or Path("out") / "characterize" / aqm)
    result = Characterization(aqm=aqm, out=out, label=label, buffer=buffer)
    nseeds = seeds or (1 if quick else 3)
    plans = []
    for e in exps:
        doc = e.make(quick)
        placed = []
        try:
            for name, s in discs:
                placed.append((name, e.adapt(s, doc) if e.adapt and (name != "DropTail" or e.id == "4.6-scheduling") else s))
        except NotApplicable as why:
            if (sections and e.id in sections) or (sections and e.section in sections and len([x for x in exps if x.section == e.section]) == 1):
                raise ScenarioError(f"--sections {e.section}", str(why)) from None
            result.skipped[e.id] = str(why)
            continue
        if e.id == "4.5-ecn":
            placed = [(n, {**s, "ecn": True} if n != "DropTail" else s) for n, s in placed]
        if buffer != BUFFER:
            _set_buffers(doc, buffer)
        zipped = [{p: [s for _, s in placed] for p in e.qdisc_paths}]
        if e.axes:
            zipped.append(e.axes(quick))
        plans.append((e, doc, zipped, placed))
    # Validate every experiment before running any: a bad parameter fails at once.
    from . import _core
    from .scenario import set_path, to_json

    for e, doc, _zipped, placed in plans:
        for _, s in placed:
            d = copy.deepcopy(doc)
            for p in e.qdisc_paths:
                set_path(d, p, s)
            try:
                _core.validate(to_json(d))
            except ScenarioError as err:
                raise ScenarioError(err.path, f"{err.message} (in RFC 7928 §{e.section} experiment {e.id})") from None
    ex = make_executor("local", workers, None)
    try:
        for e, doc, zipped, placed in plans:
            if progress:
                progress(f"§{e.section} {e.title}")
            sweep(doc, zip=zipped, seeds=nseeds, executor=ex, out=out / e.id, name=f"{aqm}-{e.id}", quick=quick)
            result.metrics[e.id] = _metrics(e, out / e.id, placed)
    finally:
        ex.close()
    result.wall_s = time.perf_counter() - t0
    if result.metrics:
        pl.concat(list(result.metrics.values()), how="diagonal_relaxed").write_parquet(out / "metrics.parquet")
    from .characterize_report import write_report

    result.report = write_report(result, exps, discs, quick)
    return result


# ---------------------------------------------------------------------------------
# Metrics (RFC 7928 §2)


def _num(x: Any) -> float:
    """A polars aggregate as a float; an empty column's (None) as NaN."""
    return math.nan if x is None else float(x)


def _avg(v: list[float]) -> float:
    return sum(v) / len(v) if v else math.nan


def sync_index(drops: pl.DataFrame, tcp_flows: list[int], gap_s: float) -> float:
    """Loss-synchronisation index (RFC 7928 §2.4): the mean, over congestion events, of
    the fraction of the TCP flows that lose at least one packet in the event — the
    "global synchronisation rate" of Hassayoun and Ros ("Loss synchronization and
    router buffer sizing with high-speed versions of TCP", IEEE INFOCOM Workshops
    2008). A congestion event is a run of drops (or marks) at the link with no gap
    longer than ``gap_s`` (one base RTT) between consecutive ones. NaN without drops
    or flows."""
    if drops.height == 0 or not tcp_flows:
        return math.nan
    ids = set(tcp_flows)
    rows = sorted((t, f) for t, f in zip(drops["time_ns"].to_list(), drops["flow"].to_list()) if f in ids)
    if not rows:
        return math.nan
    events: list[set[Any]] = []
    last = None
    for t, f in rows:
        if last is None or t - last > gap_s * 1e9:
            events.append(set())
        events[-1].add(f)
        last = t
    return sum(len(e) / len(ids) for e in events) / len(events)


def loss_intervals(drops: pl.DataFrame, flows: list[int]) -> tuple[float, float]:
    """RFC 7928 §2.3: per flow, the times between its consecutive losses (drops and
    marks at the link); returns the mean interval (s) and its coefficient of variation
    (std / mean), each averaged over the flows with at least two intervals (NaN if none)."""
    means, cvs = [], []
    for fl in flows:
        t = sorted(drops.filter(pl.col("flow") == fl)["time_ns"].to_list()) if drops.height else []
        gaps = [(b - a) / 1e9 for a, b in zip(t, t[1:])]
        if len(gaps) < 2:
            continue
        m = sum(gaps) / len(gaps)
        sd = math.sqrt(sum((g - m) ** 2 for g in gaps) / (len(gaps) - 1))
        means.append(m)
        cvs.append(sd / m if m > 0 else math.nan)
    return _avg(means), _avg(cvs)


def _label(placed: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    from .aggregate import axis_value

    return {str(axis_value(s)): n for n, s in placed}


def _metrics(e: Experiment, path: Path, placed: list[tuple[str, dict[str, Any]]]) -> pl.DataFrame:
    """Per run: the RFC 7928 §2 metrics of the experiment's bottleneck(s)."""
    from .aggregate import load_runs

    names = _label(placed)
    qcol = e.qdisc_paths[0]
    queues = load_runs(path, "queues")
    flows = load_runs(path, "flows")
    drops = load_runs(path, "drops")
    apps = load_runs(path, "apps")
    summary = load_runs(path, "summary")
    transfers = load_runs(path, "transfers")
    links = ["R1->R2", "R2->R3"] if e.id == "10-multi-aqm" else ["L->R"]
    rows = []
    for rid in queues["run_id"].unique(maintain_order=True).to_list():
        q = queues.filter(pl.col("run_id") == rid)
        disc = names.get(str(q[qcol][0]), str(q[qcol][0]))
        bn = q.filter(pl.col("link").is_in(links))
        f = flows.filter(pl.col("run_id") == rid)
        tcpf = f.filter(pl.col("kind") == "tcp")
        gp = tcpf["goodput_window_bps"].to_list()
        jain = (sum(gp) ** 2 / (len(gp) * sum(x * x for x in gp))) if gp and sum(gp) > 0 else math.nan
        dr = drops.filter((pl.col("run_id") == rid) & pl.col("link").is_in(links)) if drops.height else drops
        row = {
            "experiment": e.id, "discipline": disc, "run_id": rid,
            "point": "" if e.id != "6-rtt-fairness" else str(q["topology.hosts[1].left.delay"][0]),
            "seed": int(q["seed"][0]),
            "queue_delay_ms_mean": _num(bn["sojourn_ms_mean"].mean()),
            "queue_delay_ms_p95": _num(bn["sojourn_ms_p95"].max()),
            "drop_rate": _num(bn["drop_rate"].mean()),
            "marks": int(bn["marks"].sum()),
            "utilization": _num(bn["utilization"].mean()),
            "goodput_mbps": float(sum(gp)) / 1e6,
            "jain_index": jain,
            "sync_index": sync_index(dr, tcpf["flow"].to_list(), 0.1),
            # §2.3: loss intervals of the TCP flows.
            **dict(zip(("loss_interval_s_mean", "loss_interval_cv"), loss_intervals(dr, tcpf["flow"].to_list()))),
            # §2.6: every flow's mean |IPDV| (flows table), averaged over the flows.
            "ipdv_ms_mean": _num(f["ipdv_ms_mean"].fill_nan(None).mean()) if "ipdv_ms_mean" in f.columns and f.height else math.nan,
            "wall_us_per_hop": _per_hop(summary.filter(pl.col("run_id") == rid)),
        }
        if e.id == "6-rtt-fairness":
            g = dict(zip(tcpf["app"].to_list(), tcpf["goodput_window_bps"].to_list()))
            ref, var = g.get("rtt-100ms", math.nan), g.get("rtt-varied", math.nan)
            row["goodput_ratio"] = var / ref if ref else math.nan
        if e.id == "5.1.2-tcp-friendly-iw":
            c = f.filter(pl.col("app") == "iw10")["completion_s"]
            row["completion_s_iw10"] = _num(c[0]) if c.len() and c[0] is not None else math.nan
        if transfers.height and "completion_s" in transfers.columns:
            tr = transfers.filter((pl.col("run_id") == rid) & pl.col("app").is_in(["iw10-bursts", "web"]))
            if tr.height:
                row["transfer_s_median"] = _num(tr["completion_s"].median())
        a = apps.filter(pl.col("run_id") == rid) if apps.height else apps
        for app, col, key in (("video", "frame_loss_rate", "video_frame_loss"), ("voip", "mos", "voip_mos"),
                              ("udp", "loss_rate", "udp_loss_rate"), ("cbr", "loss_rate", "cbr_loss_rate"),
                              ("ledbat", "goodput_window_bps", "ledbat_mbps"), ("iw10-bursts", "loss_rate", "burst_loss_rate")):
            if a.height and col in a.columns:
                v = a.filter(pl.col("app") == app)[col]
                if v.len():
                    row[key] = float(v[0]) / (1e6 if col.endswith("_bps") else 1)
        rows.append(row)
    return pl.DataFrame(rows)


def _per_hop(s: pl.DataFrame) -> float:
    """Wall time of the whole simulation per packet-hop, µs (§11's cost, see the report)."""
    if s.height == 0 or not s["packet_hops"][0]:
        return math.nan
    return float(s["wall_time_s"][0]) / float(s["packet_hops"][0]) * 1e6


def windows(path: Path, run_ids: list[str], link: str = "L->R", win_s: float = 1.0) -> pl.DataFrame:
    """Per run and 1 s window: goodput (Mbit/s, all flows, from ``flow_series``) and mean
    queue delay (ms, the link's ``timeseries`` samples), for the §2.7 delay–goodput plot."""
    from .aggregate import load_runs

    fs = load_runs(path, "flow_series")
    ts = load_runs(path, "timeseries")
    out = []
    for rid in run_ids:
        f = fs.filter(pl.col("run_id") == rid).group_by("time_ns").agg(pl.col("bytes_delivered").sum()).sort("time_ns")
        g = f.with_columns((pl.col("bytes_delivered").diff() * 8 / win_s / 1e6).alias("goodput_mbps"),
                           (pl.col("time_ns") // int(win_s * 1e9)).alias("w")).drop_nulls()
        g = g.filter(pl.col("goodput_mbps") >= 0)
        t = ts.filter((pl.col("run_id") == rid) & (pl.col("link") == link)).with_columns(
            ((pl.col("time_ns") - 1) // int(win_s * 1e9) + 1).alias("w")).group_by("w").agg(pl.col("sojourn_ms").mean().alias("delay_ms"))
        out.append(g.join(t, on="w").select(pl.lit(rid).alias("run_id"), "w", "goodput_mbps", "delay_ms"))
    return pl.concat(out) if out else pl.DataFrame()
