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


def _si(v: float, unit: str, digits: int = 3) -> str:
    for scale, prefix in _SI:
        if abs(v) >= scale:
            return f"{v / scale:.{digits}g} {prefix}{unit}"
    return f"{v:.{digits}g} {unit}"


def fmt(metric: str, v, half=None) -> str:
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
        text, pm = f"{100 * v:.3g} %", (f"{100 * h:.2g} %" if h is not None else None)
    elif u in ("ms", "s"):
        text, pm = f"{v:.3g} {u}", (f"{h:.2g} {u}" if h is not None else None)
    elif u == "bytes":
        text, pm = _si(v, "B"), (_si(h, "B", 2) if h is not None else None)
    elif u == "pkts":
        text, pm = f"{v:.3g} pkt", (f"{h:.2g} pkt" if h is not None else None)
    elif isinstance(v, int):
        text, pm = f"{v:,}", (f"{h:.2g}" if h is not None else None)
    else:
        text, pm = f"{v:.4g}", (f"{h:.2g}" if h is not None else None)
    return f"{text} ± {pm}" if pm is not None else text
