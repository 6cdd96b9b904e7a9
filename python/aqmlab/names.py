"""Names people read in figures and reports, made from sweep axes and their values.

The stored tables keep the exact axis paths and values (``topology.links.1.qdisc`` =
``kind=pfifo,limit=417pkt``); what a reader sees is shorter and has no ``=``:

* an axis path → its last name, with the entry it belongs to when that is a list item:
  ``topology.links.1.qdisc`` → ``qdisc (link 1)``, ``traffic[2].rate`` → ``rate (traffic 2)``,
  ``topology.bottleneck.qdisc.limit`` → ``qdisc limit``;
* a table value → only what differs between the axis's values, the ``kind`` first and bare:
  ``{kind = "pfifo", limit = "417pkt"}`` beside ``{kind = "codel", limit = "417pkt"}`` →
  ``pfifo`` / ``codel``; beside ``{kind = "pfifo", limit = "21pkt"}`` too →
  ``pfifo 417pkt``, ``pfifo 21pkt``, ``codel 417pkt``; a table whose only difference is
  an added key → ``+ grant_mean 1250B, grant_spread 0.2`` (and ``base`` for the one
  without);
* a sweep point → its axes' values joined with ``, `` (names added only for plain
  numbers, which say nothing alone: ``rate 2Mbit``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: List names in scenario paths → the singular shown with the index.
_ITEMS = {"links": "link", "traffic": "traffic", "hosts": "host", "nodes": "node", "children": "child", "flows": "flow"}


def axis_name(path: str) -> str:
    """A readable name for a swept path (see the module docs)."""
    parts = [p for p in re.split(r"[.\[\]]+", path) if p]
    if not parts:
        return path
    last = parts[-1]
    for i in range(len(parts) - 2, -1, -1):
        if parts[i].isdigit():
            owner = _ITEMS.get(parts[i - 1], parts[i - 1]) if i > 0 else "item"
            inner = " ".join(p for p in parts[i + 1:-1] if not p.isdigit())
            return f"{(inner + ' ') if inner else ''}{last} ({owner} {parts[i]})".replace("_", " ")
    if len(parts) >= 2 and parts[-2] not in ("topology", "bottleneck", "output", "traffic"):
        return f"{parts[-2]} {last}".replace("_", " ")
    return last.replace("_", " ")


def _scalar(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, list):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} {_scalar(x)}" for k, x in v.items()) + "}"
    return str(v)


def value_names(values: list[Any]) -> list[str]:
    """Readable names for the values of one axis, in order (see the module docs)."""
    if values and all(isinstance(v, list) and all(isinstance(e, dict) for e in v) for v in values):
        # lists of traffic entries: their names (or kinds)
        return [" + ".join(str(e.get("name") or e.get("kind") or "?") for e in v) or "none" for v in values]
    if not values or not all(isinstance(v, dict) for v in values):
        return [_scalar(v) for v in values]
    keys = list(dict.fromkeys(k for v in values for k in v))
    missing = object()
    varying = [k for k in keys if len({repr(v.get(k, missing)) for v in values}) > 1]
    if not varying:
        return [_scalar(v.get("kind", "")) or "base" for v in values]
    common = [k for k in keys if all(k in v for v in values)]
    out = []
    for v in values:
        bits: list[str] = []
        for k in varying:
            if k not in v:
                continue
            if k == "kind":
                bits.insert(0, _scalar(v[k]))
            elif k in common:
                bits.append(_scalar(v[k]))
            else:
                bits.append(f"{k} {_scalar(v[k])}")
        added = [k for k in varying if k in v and k not in common]
        text = " ".join(b for b in bits if b) if not added else ("+ " + ", ".join(f"{k} {_scalar(v[k])}" for k in added))
        if "kind" not in varying and "kind" in v and added:
            text = f"{_scalar(v['kind'])} {text}"
        out.append(text or "base")
    return out


def axis_value_names(spec: dict[str, Any], stored: Callable[[Any], Any]) -> dict[str, dict[Any, str]]:
    """Per axis of a sweep spec: stored cell value (``aggregate.axis_value``) → name."""
    out: dict[str, dict[Any, str]] = {}
    for a in spec.get("axes", []):
        raw = list({repr(r["point"].get(a)): r["point"].get(a) for r in spec["runs"]}.values())
        out[a] = {stored(v): n for v, n in zip(raw, value_names(raw))}
    return out


def point_name(point: dict[str, Any], names: dict[str, dict[Any, str]], stored: Callable[[Any], Any]) -> str:
    """A sweep point's readable label: its axes' value names joined with ``, ``."""
    bits = []
    for a, v in point.items():
        n = names.get(a, {}).get(stored(v), _scalar(v))
        plain_number = isinstance(v, (int, float)) or re.fullmatch(r"[-+]?\d+(\.\d+)?[A-Za-z%/]*", str(v)) is not None
        bits.append(f"{axis_name(a)} {n}" if plain_number else n)
    return ", ".join(bits) or "base"
