"""The result tables of an emulated run, in the columns of a simulated one
(docs/output.md), from the emulator's report and the traffic workers' results.

Where a number comes from:
- ``queues``: the emulator's pipes (the same `LinkStats` code as a simulation), the
  bottleneck ``L->R`` and its reverse; access links are not emulated as queues.
- ``flows``: packets and bytes sent/delivered and one-way delay from the endpoints,
  drops and marks from the emulator (by 5-tuple), ``retransmits`` and ``timeouts``
  from the kernel (TCP_INFO ``tcpi_total_retrans`` and ``tcpi_total_rto`` since the
  warm-up), ``rtt_ms_mean`` the mean of the kernel's srtt sampled every 100 ms.
- ``emulation``: the scheduling error (actual − computed departure) p50/p99/max.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from ..results import Results
from .plan import Plan

NAN = float("nan")


def _q(values: list[float], q: float) -> float:
    if not values:
        return NAN
    s = sorted(values)
    k = min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))
    return s[k]


def _f(v: float | None) -> float:
    return NAN if v is None else float(v)


#: Header bytes of a data segment as the linux profile counts them on the wire (IPv4 20 +
#: TCP 20 + the timestamp option 12; `header_bytes` in docs/tcp.md): the kernel sends
#: timestamps on every segment by default (`tcp_timestamps` = 1).
TCP_HEADER_BYTES = 52


def wire_bytes(kind: str, r: dict[str, Any]) -> int:
    """`bytes_sent` in a simulation's meaning (every data packet on the wire, headers and
    retransmissions included): TCP payload (`tcpi_bytes_sent`) + 52 B per data segment
    (`tcpi_data_segs_out`); the UDP probe sender already counts whole datagrams."""
    b = r.get("bytes_sent", 0) or 0
    if kind == "tcp":
        b += TCP_HEADER_BYTES * (r.get("packets_sent", 0) or 0)
    return b


def build_results(plan: Plan, doc: dict[str, Any], report: dict[str, Any], outs: dict[str, Any], addr: dict[str, str], wall_s: float) -> Results:
    res: dict[int, dict[str, Any]] = {}
    for side in outs.values():
        for k, v in side["results"].items():
            res.setdefault(int(k), {}).update(v)
    window = max(report["measured_s"], 1e-9)
    fwd_flows = {}
    for r in report["flows"]:
        fwd_flows[(r["src"], r["sport"], r["dst"], r["dport"])] = r

    flow_rows = []
    for f in plan.flows:
        r = res.get(f.id, {})
        e = fwd_flows.get((addr[f.src], f.sport, addr[f.dst], f.dport), {})
        sent = r.get("packets_sent", 0) or 0
        if f.kind == "tcp":
            delivered_bytes = r.get("bytes_delivered", 0) or 0
            pk_delivered = max(0, sent - e.get("drops", 0))
            owd = []
        else:
            delivered_bytes = r.get("bytes_delivered", 0) or 0
            pk_delivered = r.get("packets_delivered", 0) or 0
            owd = r.get("owd_ms", [])
        dropped = e.get("drops", 0)
        flow_rows.append({
            "flow": f.id, "app": f.app, "kind": f.kind, "src": f.src, "dst": f.dst, "cc": f.cc,
            "packets_sent": sent, "packets_delivered": pk_delivered, "packets_dropped": dropped,
            "bytes_sent": wire_bytes(f.kind, r), "bytes_delivered": delivered_bytes,
            # The emulator records no byte times: both goodputs are over the window.
            "goodput_bps": delivered_bytes * 8 / window,
            "goodput_window_bps": delivered_bytes * 8 / window,
            "retransmits": r.get("retransmits", 0) or 0, "timeouts": r.get("timeouts", 0) or 0,
            "rtt_ms_mean": _f(r.get("rtt_ms_mean")),
            "owd_ms_mean": sum(owd) / len(owd) if owd else NAN,
            "owd_ms_p50": _q(owd, 0.5), "owd_ms_p95": _q(owd, 0.95), "owd_ms_p99": _q(owd, 0.99),
            "loss_rate": dropped / sent if sent else 0.0,
            "completion_s": NAN, "transfers": 0,
            "marks": e.get("marks", 0), "kernel_cc": r.get("kernel_cc", "") if f.kind == "tcp" else "",
            "cwnd_end_pkts": r.get("cwnd_end_pkts", 0) or 0,
            "error": r.get("error", ""),
        })
    flows = pl.DataFrame(flow_rows, schema_overrides={"goodput_bps": pl.Float64, "goodput_window_bps": pl.Float64, "owd_ms_mean": pl.Float64,
                                                       "owd_ms_p50": pl.Float64, "owd_ms_p95": pl.Float64,
                                                       "owd_ms_p99": pl.Float64, "rtt_ms_mean": pl.Float64,
                                                       "completion_s": pl.Float64, "loss_rate": pl.Float64})
    flows = flows.with_columns(pl.col(c).cast(pl.UInt64) for c in (
        "flow", "packets_sent", "packets_delivered", "packets_dropped", "bytes_sent", "bytes_delivered",
        "retransmits", "timeouts", "transfers", "marks", "cwnd_end_pkts"))

    app_rows = []
    for name, kind in plan.apps:
        rows = [r for r in flow_rows if r["app"] == name]
        owd_n = sum(1 for r in rows if not math.isnan(r["owd_ms_mean"]))
        sent = sum(r["packets_sent"] for r in rows)
        app_rows.append({
            "app": name, "kind": kind, "flows": len(rows),
            "bytes_delivered": sum(r["bytes_delivered"] for r in rows),
            "goodput_bps": sum(r["goodput_bps"] for r in rows),
            "goodput_window_bps": sum(r["goodput_window_bps"] for r in rows),
            "owd_ms_mean": sum(r["owd_ms_mean"] for r in rows if not math.isnan(r["owd_ms_mean"])) / owd_n if owd_n else NAN,
            "loss_rate": sum(r["packets_dropped"] for r in rows) / sent if sent else 0.0,
        })
    apps = pl.DataFrame(app_rows, schema_overrides={"owd_ms_mean": pl.Float64, "goodput_bps": pl.Float64, "goodput_window_bps": pl.Float64, "loss_rate": pl.Float64})
    apps = apps.with_columns(pl.col("flows").cast(pl.UInt64), pl.col("bytes_delivered").cast(pl.UInt64))

    queues = pl.DataFrame(report["queues"]).with_columns(
        pl.col(c).cast(pl.Float64) for c in ("sojourn_ms_mean", "sojourn_ms_p50", "sojourn_ms_p95", "sojourn_ms_p99",
                                             "sojourn_ms_max", "qlen_pkts_mean", "qlen_bytes_mean", "drop_rate",
                                             "utilization", "throughput_bps"))
    queues = queues.with_columns(pl.col(c).cast(pl.UInt64) for c in (
        "rate_bps", "arrivals", "enqueued", "dequeued", "drops", "drops_overflow", "drops_early", "drops_forced",
        "drops_random", "drops_outage", "marks"))

    se = report["sched_error"]
    q = report["queues"]
    summary = pl.DataFrame([{
        "scenario": plan.name, "seed": plan.seed, "sim_time_s": window, "wall_time_s": wall_s,
        "events": 0, "packets": sum(x["arrivals"] for x in q), "packet_hops": sum(x["dequeued"] for x in q),
        "delivered": sum(x["dequeued"] for x in q), "dropped": sum(x["drops"] for x in q),
        "in_network": report["in_network"], "events_per_s": NAN, "arena_slots": 0,
        "mode": "emulated",
    }]).with_columns(pl.col(c).cast(pl.UInt64) for c in ("seed", "events", "packets", "packet_hops", "delivered",
                                                          "dropped", "in_network", "arena_slots"))
    emulation = pl.DataFrame([{
        "sched_err_us_p50": _f(se["p50_us"]), "sched_err_us_p99": _f(se["p99_us"]),
        "sched_err_us_p999": _f(se["p999_us"]), "sched_err_us_max": _f(se["max_us"]),
        "sched_err_us_mean": _f(se["mean_us"]), "datagrams": se["count"], "late_over_1ms": report["late_over_1ms"],
        "realtime": report["realtime"], "rt_priority": report["priority"], "cpu": report["cpu"], "busy_poll_us": report["busy_poll_ns"] / 1e3,
        "write_errors": report["write_errors"], "rejected": report["rejected"], "measured_s": window,
        "loop_sleeps": report["loop"]["sleeps"], "loop_spins": report["loop"]["spins"],
    }])
    tables = {"summary": summary, "queues": queues, "flows": flows, "apps": apps, "emulation": emulation}
    if report["timeseries"]:
        tables["timeseries"] = pl.DataFrame(report["timeseries"], schema_overrides={"drop_prob": pl.Float64, "sojourn_ms": pl.Float64})
    if report["drops"]:
        tables["drops"] = pl.DataFrame(report["drops"])
    series = [row for side in outs.values() for row in side.get("tcp_series", [])]
    if series:
        tables["tcp"] = pl.DataFrame(series, schema=["time_ns", "flow", "cwnd_bytes", "ssthresh_bytes", "srtt_ms", "bytes_in_flight"],
                                     orient="row", schema_overrides={"ssthresh_bytes": pl.UInt64, "srtt_ms": pl.Float64})
    out = Results(tables, doc)
    out.emulator_report = report  # the raw report (late departures, loop counters)
    return out
