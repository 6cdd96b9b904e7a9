"""Numbers with units for people: ``2.00 Mbit/s``, ``12.3 ms``, ``3.1 %``.

A metric's unit follows from its column name (docs/output.md): ``*_bps`` bit/s,
``*_ms`` milliseconds, ``*_s`` seconds, ``*_bytes``/``bytes_*`` bytes, ``*_pkts``
packets, ``*_rate``/``utilization``/``*_prob`` fractions shown as percentages.
"""

from __future__ import annotations

import math

_SI = ((1e9, "G"), (1e6, "M"), (1e3, "k"))


def unit_of(metric: str) -> str:
    """The kind of unit of a column: bps, ms, s, bytes, pkts, ratio or ''."""
    m = metric.lower()
    if m.endswith("_bps") or m == "rate_bps":
        return "bps"
    if m.endswith("_ms") or "_ms_" in m:
        return "ms"
    if m.endswith("_s") and not m.endswith("per_s"):
        return "s"
    if "bytes" in m:
        return "bytes"
    if m.endswith("_pkts") or "_pkts_" in m:
        return "pkts"
    if m.endswith("_rate") or m in ("utilization", "drop_prob") or m.endswith("_prob"):
        return "ratio"
    return ""


def _num(v: float, digits: int) -> str:
    """``v`` to ``digits`` significant digits, never in e-notation below 10^6 (``140``,
    not ``1.4e+02``; ``1230 ms``, not ``1.23e+03 ms``)."""
    text = f"{v:.{digits}g}"
    if "e+" in text and abs(v) < 1e6:
        text = f"{round(v, digits - 1 - math.floor(math.log10(abs(v)))):.0f}"
    return text


def _si(v: float, unit: str, digits: int = 3) -> str:
    for scale, prefix in _SI:
        if abs(v) >= scale:
            return f"{_num(v / scale, digits)} {prefix}{unit}"
    return f"{_num(v, digits)} {unit}"


def fmt(metric: str, v: object, half: object = None) -> str:
    """``v`` (± ``half``) of ``metric`` with its unit; ``–`` for missing values."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    u = unit_of(metric)
    h = half if isinstance(half, (int, float)) and not (isinstance(half, float) and math.isnan(half)) else None
    if u == "bps":
        text, pm = _si(v, "bit/s"), (_si(h, "bit/s", 2) if h is not None else None)
    elif u == "ratio":
        text, pm = f"{_num(100 * v, 3)} %", (f"{_num(100 * h, 2)} %" if h is not None else None)
    elif u in ("ms", "s"):
        text, pm = f"{_num(v, 3)} {u}", (f"{_num(h, 2)} {u}" if h is not None else None)
    elif u == "bytes":
        text, pm = _si(v, "B"), (_si(h, "B", 2) if h is not None else None)
    elif u == "pkts":
        text, pm = f"{_num(v, 3)} pkt", (f"{_num(h, 2)} pkt" if h is not None else None)
    elif isinstance(v, int):
        text, pm = f"{v:,}", (_num(h, 2) if h is not None else None)
    else:
        text, pm = f"{v:.4g}", (_num(h, 2) if h is not None else None)
    return f"{text} ± {pm}" if pm is not None else text


def fmt_interval(metric: str, mean: object, half: object = None, low: object = None, high: object = None) -> str:
    """A mean with its interval: ``5.0 ms ± 1.2 ms`` for a symmetric (t) interval,
    ``5.0 ms [2.0 ms, 9.0 ms]`` for a bootstrap one, the mean alone without one."""
    if half is None and low is not None and high is not None:
        return f"{fmt(metric, mean)} [{fmt(metric, low)}, {fmt(metric, high)}]"
    return fmt(metric, mean, half)


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def parse_duration_s(text: str) -> float:
    """Seconds of a scenario duration like ``"5ms"`` or ``"1.5s"`` (the units of
    ``crates/aqmlab-core/src/scenario/units.rs``); ValueError otherwise."""
    import re

    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-z]+)\s*", str(text))
    if not m or m.group(2) not in _DURATION_UNITS:
        raise ValueError(f"expected a duration with a unit ({', '.join(_DURATION_UNITS)}), like \"5s\"")
    v = float(m.group(1))
    if v < 0:
        raise ValueError("a duration cannot be negative")
    return v * _DURATION_UNITS[m.group(2)]
