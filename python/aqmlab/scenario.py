"""Scenario loading: TOML files or dicts, dotted-path overrides, validation.

An override is ``PATH=VALUE``. PATH is dotted, with list indices as ``[i]`` or ``.i``
(``traffic[0].count`` = ``traffic.0.count``), or an entry of a list by its ``name``
(``traffic.call.start`` sets ``start`` of the traffic entry named ``call``);
``bottleneck.…`` is short for
``topology.bottleneck.…``. VALUE is read as a TOML value when it parses as one
(``5``, ``true``, ``"5ms"``, ``{ kind = "codel" }``), and as a plain string otherwise
(``15ms``), so ``--set topology.bottleneck.qdisc.target=15ms`` just works.
"""

from __future__ import annotations

import copy
import json
import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import _core
from .errors import ScenarioError

ScenarioLike = str | Path | Mapping[str, Any]

#: Seeds are unsigned 64-bit integers in the core.
MAX_SEED = 2**64 - 1

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _split_path(path: str) -> list[str | int]:
    if not path or path.startswith(".") or path.endswith("."):
        raise ScenarioError(path, "expected a dotted path like topology.bottleneck.rate")
    tokens: list[str | int] = []
    pos = 0
    for m in _TOKEN.finditer(path):
        if m.start() != pos and path[pos:m.start()] != ".":
            raise ScenarioError(path, "expected a dotted path like traffic[0].count")
        pos = m.end()
        if m.group(2) is not None:
            tokens.append(int(m.group(2)))
        elif m.group(1).isdigit():
            tokens.append(int(m.group(1)))
        else:
            tokens.append(m.group(1))
    if pos != len(path):
        raise ScenarioError(path, "expected a dotted path like traffic[0].count")
    return tokens


def parse_value(text: str) -> Any:
    """A TOML value if ``text`` is one, else the string itself."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        return text


def set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set ``value`` at dotted ``path`` in ``doc``, creating tables as needed."""
    tokens = _split_path(path)
    if tokens and tokens[0] == "bottleneck" and "bottleneck" not in doc:
        tokens = ["topology", *tokens]
    node: Any = doc
    walked = ""
    for i, tok in enumerate(tokens):
        last = i == len(tokens) - 1
        here = f"{walked}[{tok}]" if isinstance(tok, int) else (f"{walked}.{tok}" if walked else tok)
        if isinstance(tok, int):
            if not isinstance(node, list):
                raise ScenarioError(walked, f"is not a list, cannot index it with [{tok}]")
            if tok >= len(node):
                raise ScenarioError(here, f"index out of range: {walked} has {len(node)} entries")
            if last:
                node[tok] = value
            else:
                node = node[tok]
        elif isinstance(node, list) and all(isinstance(e, dict) for e in node):
            # an entry of a list of tables by its name: traffic.call.start = traffic[i].start
            hits = [j for j, e in enumerate(node) if e.get("name") == tok]
            if not hits:
                names = [str(e["name"]) for e in node if "name" in e]
                raise ScenarioError(here, f"no entry of {walked} is named {tok!r}; "
                                    + (f"names: {', '.join(names)}" if names else "its entries have no names: use an index, e.g. [0]"))
            if last:
                node[hits[0]] = value
            else:
                node = node[hits[0]]
        else:
            if not isinstance(node, dict):
                raise ScenarioError(walked, f"is not a table, cannot set `{tok}` in it")
            if last:
                node[tok] = value
            else:
                if tok not in node:
                    node[tok] = {}
                node = node[tok]
        walked = here


def parse_overrides(items: Sequence[str] | Mapping[str, Any] | None) -> dict[str, Any]:
    """``["a.b=1", ...]`` or a mapping → ``{path: value}``."""
    if items is None:
        return {}
    if isinstance(items, Mapping):
        return dict(items)
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ScenarioError(item, "expected PATH=VALUE, like topology.bottleneck.rate=5Mbit")
        k, v = item.split("=", 1)
        out[k.strip()] = parse_value(v.strip())
    return out


def check_finite(value: Any, path: str) -> None:
    """Raise a `ScenarioError` naming the field when ``value`` holds NaN or ±inf.

    TOML has ``nan`` and ``inf``; no scenario field means either, and the JSON passed to
    the core cannot carry them (the core would see "invalid JSON … column N")."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ScenarioError(path, f"{value}: expected a finite number")
    elif isinstance(value, Mapping):
        for k, v in value.items():
            check_finite(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            check_finite(v, f"{path}[{i}]")


def check_seed(seed: Any, path: str = "seed") -> int:
    """A seed as the core takes it: an integer in 0..2^64-1."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ScenarioError(path, f"{seed!r}: expected an integer seed in 0..{MAX_SEED}")
    return seed


def read_toml(p: Path, what: str = "scenario") -> dict[str, Any]:
    """Read a TOML file; every way it can be unreadable is a `ScenarioError`."""
    if not p.exists():
        raise ScenarioError("", f"{what} file not found: {p}")
    if p.is_dir():
        raise ScenarioError("", f"{p}: is a folder, expected a {what} file (TOML)")
    try:
        return tomllib.loads(p.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ScenarioError("", f"{p}: not UTF-8 text (byte {e.start}): TOML files are UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("", f"{p}: invalid TOML: {e}") from None
    except RecursionError:
        raise ScenarioError("", f"{p}: tables or arrays nested too deeply") from None
    except OSError as e:
        raise ScenarioError("", f"{p}: cannot read: {e.strerror or e}") from None


def load_scenario(scenario: ScenarioLike, overrides: Sequence[str] | Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Read a scenario (TOML path, TOML text is not accepted, or a dict) and apply overrides."""
    if isinstance(scenario, Mapping):
        doc = copy.deepcopy(dict(scenario))
    else:
        doc = read_toml(Path(scenario))
    for k, v in parse_overrides(overrides).items():
        set_path(doc, k, v)
    return doc


def to_json(doc: Mapping[str, Any]) -> str:
    try:
        check_finite(doc, "")
        return json.dumps(doc, default=_json_default, allow_nan=False)
    except TypeError as e:  # pragma: no cover - only odd objects get here
        raise ScenarioError("", f"scenario contains a value that is not TOML/JSON data: {e}") from None
    except RecursionError:
        raise ScenarioError("", "the scenario is nested too deeply") from None


def _json_default(o: Any) -> Any:
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"{type(o).__name__} is not serialisable")


def validate(scenario: ScenarioLike, overrides: Sequence[str] | Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Check a scenario completely (fields, units, nodes, links, parameters). Returns the
    resolved dict; raises `ScenarioError`."""
    from .flent import expand_presets

    doc = load_scenario(scenario, overrides)
    _core.validate(to_json(expand_presets(doc)[0]))
    return doc


def warnings(scenario: ScenarioLike, overrides: Sequence[str] | Mapping[str, Any] | None = None) -> list[str]:
    """Things a valid scenario allows but probably does not mean, e.g. a CoDel target
    below one packet's transmission time at its link's rate. Raises `ScenarioError`
    like `validate`. A run has them in its ``warnings`` table."""
    from .flent import expand_presets

    return list(_core.validate(to_json(expand_presets(load_scenario(scenario, overrides))[0])))


def qdisc_docs() -> list[dict[str, Any]]:
    """Every queue discipline with its parameters, defaults and source."""
    return _core.qdiscs()


def cc_docs() -> list[dict[str, Any]]:
    """Every TCP congestion control with its parameters, defaults and source."""
    return _core.congestion_controls()


def traffic_docs() -> list[dict[str, Any]]:
    """Every traffic kind with its parameters."""
    return _core.traffic_kinds()

