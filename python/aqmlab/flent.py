"""flent interoperability: traffic presets that mirror flent's tests, and result files
flent loads (``.flent.gz``).

**Presets.** A ``[[traffic]]`` entry of kind ``rrul``, ``rrul_be``, ``tcp_nup`` or
``tcp_ndown`` expands (before the core sees the scenario) into the flows of flent's
test of that name (flent 2.3, ``flent/tests/rrul.conf``, ``rrul_be.conf``,
``tcp_nup.conf``, ``tcp_ndown.conf``): netperf ``TCP_STREAM`` flows become forward
(left → right, "upload") ``tcp-bulk`` entries, ``TCP_MAERTS`` reverse ("download")
ones, each named as flent names its data series (``TCP upload BE``, ``TCP upload::1``)
and marked with the DSCP of its flent ``marking`` as its ``class`` (CS0 = 0, CS1 = 8,
CS5 = 40, EF = 46); the ``ping`` and ``udp_rtt`` runners become ``ping`` entries
(``Ping (ms) ICMP``, ``Ping (ms) UDP EF``, …) that probe every ``ping_interval``
(flent's STEP_SIZE, 0.2 s). As flent does (``DELAY`` = 5 s, ``settings.py``), the
latency probes run for the whole run and the TCP flows start ``delay`` after its start
and stop ``delay`` before its end. The TCP flows use ``cc = "cubic"``, the default of
the Linux hosts flent drives (``net.ipv4.tcp_congestion_control``); ``cc`` overrides.
Keys: ``hosts`` (or ``src``/``dst``), ``delay``, ``cc``, ``ping_interval``, and for
``tcp_nup``/``tcp_ndown`` ``streams`` (flent's ``upload_streams``/``download_streams``).

**Export.** `write` turns a run into flent's result format (file format version 4,
``flent/resultset.py``): ``x_values`` every STEP_SIZE, ``results`` per data series
(throughput in Mbit/s over the step ending at x, from the ``flow_series`` table;
RTT in ms of the last probe answered in that step, from ``pings``), ``raw_values``
(every sample with its time ``t``), and the aggregate series flent's test computes
(``avg``, ``sum``, ``totals``). The run's time 0 is 2000-01-01T00:00:00Z (a fixed
origin, so that the same run gives the same file). A scenario without a preset maps
forward TCP flows to ``TCP upload::k`` (test ``tcp_nup``) or reverse ones to ``TCP
download::k`` (``tcp_ndown``); both directions need a preset.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import ScenarioError

if TYPE_CHECKING:
    from .results import Results

#: flent's default STEP_SIZE and DELAY (``flent/settings.py``: ``-s`` 0.2, ``--delay`` 5).
STEP_S = 0.2
DELAY = "5s"
#: The run's time 0 in the exported file: 2000-01-01T00:00:00Z.
T0_UNIX = 946_684_800
T0_TEXT = "2000-01-01T00:00:00.000000Z"
#: DSCP code points of flent's markings.
DSCP = {"CS0": 0, "CS1": 8, "CS5": 40, "EF": 46}

PRESETS = ("rrul", "rrul_be", "tcp_nup", "tcp_ndown")
_KEYS = {"kind", "hosts", "src", "dst", "delay", "cc", "ping_interval", "streams", "name"}


def _tcp(name: str, direction: str, marking: str, where: dict[str, Any], start: str, stop: str, cc: str) -> dict[str, Any]:
    return {"kind": "tcp-bulk", "name": name, "direction": direction, "class": DSCP[marking],
            "cc": cc, "start": start, "stop": stop, **where}


def _ping(name: str, marking: str, where: dict[str, Any], interval: str) -> dict[str, Any]:
    return {"kind": "ping", "name": name, "class": DSCP[marking], "interval": interval, **where}


def _preset_flows(kind: str, streams: int) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """(TCP flows as (series, direction, marking), pings as (series, marking))."""
    if kind == "rrul":
        marks = ["CS0", "CS1", "CS5", "EF"]
        ids = ["BE", "BK", "CS5", "EF"]
        tcp = [(f"TCP upload {i}", "forward", m) for i, m in zip(ids, marks)]
        tcp += [(f"TCP download {i}", "reverse", m) for i, m in zip(ids, marks)]
        pings = [("Ping (ms) UDP EF", "EF"), ("Ping (ms) UDP BK", "CS1"), ("Ping (ms) UDP BE", "CS0"), ("Ping (ms) ICMP", "CS0")]
    elif kind == "rrul_be":
        ids = ["BE", "BE2", "BE3", "BE4"]
        tcp = [(f"TCP upload {i}", "forward", "CS0") for i in ids] + [(f"TCP download {i}", "reverse", "CS0") for i in ids]
        pings = [("Ping (ms) UDP BE1", "CS0"), ("Ping (ms) UDP BE2", "CS0"), ("Ping (ms) UDP BE3", "CS0"), ("Ping (ms) ICMP", "CS0")]
    else:
        up = kind == "tcp_nup"
        tcp = [(f"TCP {'upload' if up else 'download'}::{k + 1}", "forward" if up else "reverse", "CS0") for k in range(streams)]
        pings = [("Ping (ms) ICMP", "CS0")]
    return tcp, pings


def expand_presets(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The scenario with every preset entry replaced by its flows (see the module doc),
    and the first preset's test (``{"test", "streams", "delay"}``, None without one).
    Returns ``doc`` itself when it has none."""
    traffic = doc.get("traffic")
    if not isinstance(traffic, list) or not any(isinstance(t, Mapping) and t.get("kind") in PRESETS for t in traffic):
        return doc, None
    meta = None
    out = copy.deepcopy(doc)
    duration = out.get("duration")
    expanded: list[Any] = []
    for i, t in enumerate(traffic):
        if not (isinstance(t, Mapping) and t.get("kind") in PRESETS):
            expanded.append(t)
            continue
        path = f"traffic[{i}]"
        kind = t["kind"]
        for k in t:
            if k not in _KEYS or (k == "streams" and kind not in ("tcp_nup", "tcp_ndown")):
                allowed = sorted(_KEYS - {"name"} - ({"streams"} if kind in ("rrul", "rrul_be") else set()))
                raise ScenarioError(f"{path}.{k}", f"unknown key of the `{kind}` preset; expected one of: {', '.join(allowed)}")
        streams: Any = 0
        if kind in ("tcp_nup", "tcp_ndown"):
            streams = t.get("streams")
            if isinstance(streams, bool) or not isinstance(streams, int) or not 1 <= streams <= 1000:
                raise ScenarioError(f"{path}.streams", f"{streams!r}: expected the number of TCP streams, 1 to 1000 (flent's {'upload' if kind == 'tcp_nup' else 'download'}_streams)")
        where = {k: t[k] for k in ("hosts", "src", "dst") if k in t}
        if not where:
            raise ScenarioError(f"{path}.hosts", f"missing: the `{kind}` preset runs on a dumbbell host group (hosts) or between src and dst")
        delay = t.get("delay", DELAY)
        cc = t.get("cc", "cubic")
        interval = t.get("ping_interval", f"{int(STEP_S * 1000)}ms")
        if not isinstance(duration, str):
            raise ScenarioError("duration", "a flent preset needs the run's duration")
        tcp, pings = _preset_flows(kind, streams)
        stop = _minus(duration, delay, f"{path}.delay")
        expanded += [_tcp(name, d, m, where, delay, stop, cc) for name, d, m in tcp]
        expanded += [_ping(name, marking, where, interval) for name, marking in pings]
        meta = meta or {"test": kind, "streams": streams, "delay": delay}
    out["traffic"] = expanded
    return out, meta


def _minus(duration: str, delay: str, path: str) -> str:
    from .units import parse_duration_s

    try:
        d, x = parse_duration_s(duration), parse_duration_s(delay)
    except ValueError as e:
        raise ScenarioError(path, f"{delay!r}: {e}") from None
    if not 0 <= 2 * x < d:
        raise ScenarioError(path, f"{delay!r}: expected a delay shorter than half the run ({duration})")
    return f"{round((d - x) * 1e9)}ns"


def prepare(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None, list[str]]:
    """A scenario ready for a flent export: presets expanded, the per-flow delivery
    series on at STEP_SIZE, and latency probes added when it has none (every flent
    test pings alongside its flows). Returns it, the preset's test (`expand_presets`)
    and notes on what was added."""
    doc, meta = expand_presets(doc)
    notes: list[str] = []
    doc = copy.deepcopy(doc)
    out = doc.setdefault("output", {})
    if not isinstance(out, dict):
        raise ScenarioError("output", "expected a table")
    out.setdefault("flow_timeseries", f"{int(STEP_S * 1000)}ms")
    traffic = doc.get("traffic") or []
    if not any(isinstance(t, Mapping) and t.get("kind") == "ping" for t in traffic):
        first = next((t for t in traffic if isinstance(t, Mapping)), None)
        if first is None:
            raise ScenarioError("traffic", "no traffic to export")
        where = {k: first[k] for k in ("hosts", "src", "dst") if k in first}
        doc["traffic"] = [*traffic, _ping("Ping (ms) ICMP", "CS0", where, f"{int(STEP_S * 1000)}ms")]
        notes.append("added latency probes `Ping (ms) ICMP` (84 B every 200 ms, as flent pings alongside every test)")
    return doc, meta, notes


def _entry_names(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, entry) of every traffic entry, with the core's default names (KIND-INDEX)."""
    return [(t.get("name") or f"{t.get('kind')}-{i}", t) for i, t in enumerate(doc.get("traffic") or [])]


def _series_of_flows(res: Results, doc: dict[str, Any], meta: dict[str, Any] | None) -> tuple[str, dict[str, list[int]], dict[str, Any]]:
    """flent test name, {series: [flow ids]}, test parameters."""
    import polars as pl

    flows = res.flows.filter(pl.col("kind") == "tcp")
    names = dict(_entry_names(doc))
    if meta:
        series: dict[str, list[int]] = {}
        for f, app in flows.select("flow", "app").iter_rows():
            series.setdefault(app, []).append(f)
        params = {}
        if meta["test"] == "tcp_nup":
            params = {"upload_streams": str(meta["streams"])}
        elif meta["test"] == "tcp_ndown":
            params = {"download_streams": str(meta["streams"])}
        return meta["test"], series, params
    up: list[int] = []
    down: list[int] = []
    for f, app in flows.select("flow", "app").iter_rows():
        direction = names.get(app, {}).get("direction", "forward")
        (down if direction == "reverse" else up).append(f)
    if up and down:
        raise ScenarioError("traffic", "TCP flows in both directions: flent's tests with uploads and downloads (rrul, rrul_be) have fixed series; use a preset (kind = \"rrul\")")
    if not (up or down):
        raise ScenarioError("traffic", "no TCP flow to export: flent's tests plot TCP throughput")
    word, test, key = ("upload", "tcp_nup", "upload_streams") if up else ("download", "tcp_ndown", "download_streams")
    ids = up or down
    return test, {f"TCP {word}::{k + 1}": [f] for k, f in enumerate(ids)}, {key: str(len(ids))}


def _resample(points: list[tuple[float, float]], xs: list[float], step: float) -> list[float | None]:
    """The value of the last point at or before each x within one step, else None."""
    out: list[float | None] = []
    j = -1
    for x in xs:
        while j + 1 < len(points) and points[j + 1][0] <= x + 1e-9:
            j += 1
        out.append(points[j][1] if j >= 0 and x - points[j][0] < step - 1e-9 else None)
    return out


def _combine(cols: list[list[float | None]], how: str) -> list[float | None]:
    out: list[float | None] = []
    for vals in zip(*cols):
        xs = [v for v in vals if v is not None]
        out.append(None if not xs else (sum(xs) if how == "sum" else sum(xs) / len(xs)))
    return out


def to_flent(res: Results, doc: dict[str, Any], meta: dict[str, Any] | None = None, title: str | None = None) -> dict[str, Any]:
    """The flent result object (format version 4) of a run of ``doc`` with preset test
    ``meta`` (both from `prepare`)."""
    import polars as pl

    if "flow_series" not in res or "pings" not in res:
        raise ScenarioError("output.flow_timeseries", "the run has no flow_series or pings table: run it through aqmlab.flent.prepare")
    test, series, params = _series_of_flows(res, doc, meta)
    fs = res["flow_series"].sort("time_ns")
    step_ns = round(STEP_S * 1e9)
    total_s = float(res.summary["sim_time_s"][0])
    xs = [round(k * STEP_S, 6) for k in range(1, int(total_s / STEP_S + 1e-9) + 1)]
    results: dict[str, list[Any]] = {}
    raw: dict[str, list[Any]] = {}
    smeta: dict[str, dict[str, Any]] = {}
    for name, ids in series.items():
        d = fs.filter(pl.col("flow").is_in(ids)).group_by("time_ns").agg(pl.col("bytes_delivered").sum()).sort("time_ns")
        t = d["time_ns"].to_list()
        b = d["bytes_delivered"].to_list()
        pts = []
        for k in range(1, len(t)):
            if t[k] - t[k - 1] != step_ns:
                continue
            # bytes_delivered restarts at the warm-up: a drop is that restart, not a rate.
            if b[k] >= b[k - 1]:
                pts.append((t[k] / 1e9, (b[k] - b[k - 1]) * 8 / STEP_S / 1e6))
        results[name] = _resample(pts, xs, STEP_S)
        raw[name] = [{"t": T0_UNIX + x, "val": v} for x, v in pts]
        smeta[name] = {"UNITS": "Mbits/s"}
    pings = res["pings"].filter(pl.col("rtt_ms").is_not_nan())
    for app in dict.fromkeys(res["pings"]["app"].to_list()):
        p = pings.filter(pl.col("app") == app).with_columns((pl.col("sent_s") + pl.col("rtt_ms") / 1000).alias("t")).sort("t")
        pts = list(zip(p["t"].to_list(), p["rtt_ms"].to_list()))
        results[app] = _resample(pts, xs, STEP_S)
        raw[app] = [{"t": T0_UNIX + t, "val": v, "seq": int(s)} for (t, v), s in zip(pts, p["seq"].to_list())]
        smeta[app] = {"UNITS": "ms"}
    ups = [n for n in series if n.startswith("TCP upload")]
    downs = [n for n in series if n.startswith("TCP download")]
    agg: dict[str, tuple[list[str], str, str]] = {}
    if ups:
        agg["TCP upload avg"] = (ups, "avg", "Mbits/s")
        agg["TCP upload sum"] = (ups, "sum", "Mbits/s")
    if downs:
        agg["TCP download avg"] = (downs, "avg", "Mbits/s")
        agg["TCP download sum"] = (downs, "sum", "Mbits/s")
    if ups and downs:
        agg["TCP totals"] = (ups + downs, "sum", "Mbits/s")
    ping_names = [n for n in results if n.startswith("Ping (ms)")]
    if test in ("rrul", "rrul_be"):
        agg["Ping (ms) avg"] = (ping_names, "avg", "ms")
    for name, (src, how, units) in agg.items():
        results[name] = _combine([results[s] for s in src], how)
        smeta[name] = {"UNITS": units}
    for name, vals in results.items():
        xs_ok = [v for v in vals if v is not None]
        smeta[name]["MEAN_VALUE"] = sum(xs_ok) / len(xs_ok) if xs_ok else None
    delay_s = 0.0
    if meta:
        from .units import parse_duration_s

        delay_s = parse_duration_s(meta["delay"])
    metadata = {
        "NAME": test,
        "TITLE": title or str(doc.get("name") or ""),
        "NOTE": "simulated by aqmlab",
        "HOST": "aqmlab-sim",
        "HOSTS": ["aqmlab-sim"],
        "LOCAL_HOST": "aqmlab",
        "TIME": T0_TEXT,
        "T0": T0_TEXT,
        "LENGTH": round(total_s - 2 * delay_s),
        "TOTAL_LENGTH": total_s,
        "STEP_SIZE": STEP_S,
        "DELAY": delay_s,
        "IP_VERSION": 4,
        "TEST_PARAMETERS": params,
        "SERIES_META": smeta,
        "FLENT_VERSION": None,
        "BATCH_NAME": None,
        "BATCH_TIME": None,
        "BATCH_TITLE": None,
        "BATCH_UUID": None,
        "DATA_FILENAME": None,
        "HTTP_GETTER_URLLIST": None,
        "HTTP_GETTER_DNS": None,
        "HTTP_GETTER_WORKERS": None,
    }
    return {"metadata": metadata, "version": 4, "x_values": xs, "results": results, "raw_values": raw}


def write(res: Results, doc: dict[str, Any], path: str | os.PathLike[str], meta: dict[str, Any] | None = None, title: str | None = None) -> None:
    """Write a run as a flent result file (gzip-compressed JSON when ``path`` ends in
    ``.gz``, as flent's ``ResultSet.dump_file``)."""
    obj = to_flent(res, doc, meta, title)
    name = os.path.basename(os.fspath(path))
    obj["metadata"]["DATA_FILENAME"] = name
    text = json.dumps(obj, indent=2, sort_keys=True)
    if os.fspath(path).endswith(".gz"):
        # mtime=0: the same run gives the same bytes.
        with open(path, "wb") as raw_fp, gzip.GzipFile(filename="", mode="wb", fileobj=raw_fp, mtime=0) as fp:
            fp.write(text.encode())
    else:
        with open(path, "w") as fp:
            fp.write(text)


def write_sweep(out: str | os.PathLike[str], meta: dict[str, Any] | None = None) -> int:
    """Write ``run.flent.gz`` into every finished run folder of the sweep at ``out``
    (run with a base from `prepare`); returns how many were written."""
    from pathlib import Path

    from .results import Results

    n = 0
    for run in sorted((Path(out) / "runs").iterdir()):
        if not (run / "summary.parquet").exists():
            continue
        res = Results.read_parquet(run)
        write(res, res.scenario, run / "run.flent.gz", meta, title=run.name)
        n += 1
    return n
