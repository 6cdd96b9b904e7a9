"""The reproduction scorecard: a study's ``paper.toml`` against its finished runs.

``studies/NAME/paper.toml`` holds the paper's reported numbers (``[[number]]``) and
its stated trends (``[[trend]]``), each quoted with its location (the format is in
docs/scorecard.md). `read_paper` reads and checks it against the study's sweep files;
`compare` scores it against a finished study output:

* a number is **inside** when aqmlab's mean lies in the paper's ``range``, else
  **within** the tolerance (±10 % of the paper's value; ``points``: ±2 in its unit;
  ``abs:X``: ±X), else **outside**; **no data** when no finished run matches;
* a trend ``a OP b`` **holds** when the comparison holds and the two cells' 95 %
  confidence intervals do not overlap, is **reversed** when the opposite strict
  comparison holds that way, else **not shown**. ``~`` holds when the means are within
  10 % of the larger; it is reversed when they differ by more and the intervals do
  not overlap. ``>=`` (``<=``) holds when ``>`` (``<``) holds or the cells are ``~``.

A cell's value per run is the metric of the selected rows of that run's table (reduced
over entities with ``reduce``), times ``scale``; its mean and Student-t interval are over
the runs (`aqmlab.stats.mean_ci`), as in the aggregated table.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from .aggregate import KEYS, axis_value, load_runs
from .errors import ScenarioError
from .scenario import read_toml
from .stats import mean_ci
from .sweep.files import read_sweep_file

TABLES = tuple(KEYS)
REDUCES = ("mean", "sum", "min", "max", "jain")
APP_TABLES = ("flows", "app_flows")
OPS = (">", "<", ">=", "<=", "~")
TOP_KEYS = {"paper", "number", "trend"}
PAPER_KEYS = {"cite", "simulator", "note"}
CELL_KEYS = {"select", "experiment", "table", "entity", "apps", "metric", "reduce", "scale"}
NUMBER_KEYS = {"id", "where", "quote", "value", "range", "unit", "tolerance", "ns2", "note"} | CELL_KEYS
TREND_KEYS = {"id", "where", "quote", "a", "op", "b", "note"} | (CELL_KEYS - {"select"})
ID_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
#: ``~`` and the relative tolerance: 10 %.
REL = 0.10
POINTS = 2.0


@dataclass
class Cell:
    """How to read one aqmlab value: experiment, axis filters, table row(s), metric."""
    experiment: str
    select: dict[str, Any]
    table: str
    metric: str
    entity: str | None = None
    reduce: str | None = None
    scale: float = 1.0
    apps: tuple[str, ...] | None = None

    def describe(self) -> str:
        sel = ", ".join(f"{k.removeprefix('topology.')}={v}" for k, v in self.select.items())
        ent = f"[{self.entity}]" if self.entity is not None else (f"[{self.reduce}]" if self.reduce else "")
        if self.apps:
            ent = f"[app in {'/'.join(self.apps)}{', ' + self.reduce if self.reduce else ''}]"
        return f"{self.experiment + ': ' if self.experiment else ''}{sel or 'all'} · {self.table}{ent}.{self.metric}"


@dataclass
class Number:
    id: str
    where: str
    quote: str
    cell: Cell
    value: float
    unit: str
    range: tuple[float, float] | None = None
    tolerance: str = "relative"
    ns2: bool = False
    note: str = ""


@dataclass
class Trend:
    id: str
    where: str
    quote: str
    a: Cell
    op: str
    b: Cell
    note: str = ""


@dataclass
class Paper:
    path: Path
    cite: str
    simulator: str
    note: str
    numbers: list[Number] = field(default_factory=list)
    trends: list[Trend] = field(default_factory=list)


def _err(where: str, msg: str) -> ScenarioError:
    return ScenarioError(where, msg)


def _str(doc: dict[str, Any], key: str, where: str, required: bool = True, default: str = "") -> str:
    if key not in doc:
        if required:
            raise _err(f"{where}.{key}", "missing")
        return default
    v = doc[key]
    if not isinstance(v, str):
        raise _err(f"{where}.{key}", f"{v!r}: expected a string")
    return v


def _num(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _err(where, f"{v!r}: expected a finite number")
    return float(v)


def _keys(doc: Any, allowed: set[str], where: str) -> None:
    if not isinstance(doc, dict):
        raise _err(where, f"{doc!r}: expected a table")
    for k in doc:
        if k not in allowed:
            raise _err(f"{where}.{k}", f"unknown key; expected one of {', '.join(sorted(allowed))}")


def _cell(doc: dict[str, Any], defaults: dict[str, Any], where: str) -> Cell:
    """A cell from ``doc`` (a number or a trend's a/b) over ``defaults`` (the trend's)."""
    merged = {**defaults, **doc}
    select = merged.get("select", {})
    if not isinstance(select, dict):
        raise _err(f"{where}.select", f"{select!r}: expected a table of axis path = value")
    for k, v in select.items():
        if isinstance(v, (dict, list)) or (isinstance(v, float) and not math.isfinite(v)):
            raise _err(f"{where}.select.{k}", f"{v!r}: expected a string, number or boolean")
    table = _str(merged, "table", where)
    if table not in TABLES:
        raise _err(f"{where}.table", f'"{table}": expected one of {", ".join(TABLES)}')
    metric = _str(merged, "metric", where)
    entity = merged.get("entity")
    if entity is not None and not isinstance(entity, (str, int)):
        raise _err(f"{where}.entity", f"{entity!r}: expected a string (link, app or flow id)")
    reduce = merged.get("reduce")
    if reduce is not None and reduce not in REDUCES:
        raise _err(f"{where}.reduce", f"{reduce!r}: expected one of {', '.join(REDUCES)}")
    scale = _num(merged.get("scale", 1.0), f"{where}.scale")
    apps = merged.get("apps")
    if apps is not None:
        if not isinstance(apps, list) or not apps or not all(isinstance(a, str) for a in apps):
            raise _err(f"{where}.apps", f"{apps!r}: expected a non-empty list of traffic entry names")
        if table not in APP_TABLES:
            raise _err(f"{where}.apps", f'only with table = {" or ".join(APP_TABLES)} (rows per flow), not "{table}"')
        apps = tuple(apps)
    return Cell(_str(merged, "experiment", where, required=False), dict(select), table, metric,
                None if entity is None else str(entity), reduce, scale, apps)


def jain(vs: list[float]) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²) (R. Jain, *The Art of Computer Systems
    Performance Analysis*, 1991); NaN when every value is 0."""
    s2 = sum(v * v for v in vs)
    return sum(vs) ** 2 / (len(vs) * s2) if s2 > 0 else float("nan")


def _tolerance(v: Any, where: str) -> str:
    if v in ("relative", "points"):
        return str(v)
    if isinstance(v, str) and v.startswith("abs:"):
        try:
            x = float(v[4:])
        except ValueError:
            x = -1.0
        if math.isfinite(x) and x >= 0:
            return v
    raise _err(where, f"{v!r}: expected relative, points or abs:X (X ≥ 0, in the paper's unit)")


def read_paper(path: str | Path, study: Path | None = None) -> Paper:
    """Read and check a ``paper.toml``. With the study folder, each entry's experiment
    and select keys/values are also checked against the study's sweep files.
    Errors are `ScenarioError` naming the entry (``number[ID].field``)."""
    path = Path(path)
    doc = read_toml(path, "paper")
    _keys(doc, TOP_KEYS, "paper.toml")
    head = doc.get("paper")
    if head is None:
        raise _err("paper", "missing: the [paper] table (cite, simulator)")
    _keys(head, PAPER_KEYS, "paper")
    paper = Paper(path, _str(head, "cite", "paper"), _str(head, "simulator", "paper"), _str(head, "note", "paper", required=False))
    seen: set[str] = set()
    for kind, allowed in (("number", NUMBER_KEYS), ("trend", TREND_KEYS)):
        entries = doc.get(kind, [])
        if not isinstance(entries, list):
            raise _err(kind, f"expected an array of tables ([[{kind}]])")
        for i, e in enumerate(entries):
            where = f"{kind}[{i}]"
            if isinstance(e, dict) and isinstance(e.get("id"), str):
                where = f"{kind}[{e['id']}]"
            _keys(e, allowed, where)
            eid = _str(e, "id", where)
            if not ID_RE.match(eid):
                raise _err(f"{where}.id", f'"{eid}": expected letters, digits, "_", "." or "-"')
            if eid in seen:
                raise _err(f"{where}.id", f'"{eid}": used twice (ids are unique in the file)')
            seen.add(eid)
            common = dict(id=eid, where=_str(e, "where", where), quote=_str(e, "quote", where), note=_str(e, "note", where, required=False))
            if kind == "number":
                rng = e.get("range")
                if rng is not None:
                    if not isinstance(rng, list) or len(rng) != 2:
                        raise _err(f"{where}.range", f"{rng!r}: expected [low, high]")
                    rng = (_num(rng[0], f"{where}.range[0]"), _num(rng[1], f"{where}.range[1]"))
                    if rng[0] > rng[1]:
                        raise _err(f"{where}.range", f"{list(rng)!r}: low is above high")
                ns2 = e.get("ns2", False)
                if not isinstance(ns2, bool):
                    raise _err(f"{where}.ns2", f"{ns2!r}: expected true or false")
                if "value" not in e:
                    raise _err(f"{where}.value", "missing: the paper's value, in `unit`")
                paper.numbers.append(Number(
                    cell=_cell(e, {}, where), value=_num(e["value"], f"{where}.value"),
                    unit=_str(e, "unit", where), range=rng, tolerance=_tolerance(e.get("tolerance", "relative"), f"{where}.tolerance"),
                    ns2=ns2, **common))
            else:
                op = e.get("op")
                if op not in OPS:
                    raise _err(f"{where}.op", f"{op!r}: expected one of {' '.join(OPS)}")
                defaults = {k: e[k] for k in CELL_KEYS if k in e}
                cells = []
                for side in ("a", "b"):
                    if side not in e:
                        raise _err(f"{where}.{side}", "missing: the cell's { select = {...} } (and overrides)")
                    _keys(e[side], CELL_KEYS, f"{where}.{side}")
                    cells.append(_cell(e[side], defaults, f"{where}.{side}"))
                paper.trends.append(Trend(a=cells[0], op=op, b=cells[1], **common))
    if study is not None:
        check_against_study(paper, study)
    return paper


def entries(paper: Paper) -> Iterator[tuple[str, str, Cell, str]]:
    """``(entry id, field prefix, cell, note)`` of every cell in the file."""
    for n in paper.numbers:
        yield n.id, f"number[{n.id}]", n.cell, n.note
    for t in paper.trends:
        yield t.id, f"trend[{t.id}].a", t.a, t.note
        yield t.id, f"trend[{t.id}].b", t.b, t.note


def axis_values(study: Path) -> dict[str, dict[str, list[Any]]]:
    """Per experiment: every swept path and its values (full and quick grids, zips)."""
    from .study import experiments

    out = {}
    for exp, f in experiments(study).items():
        sf = read_sweep_file(f)
        axes: dict[str, list[Any]] = {}
        for grid in (sf.grid, sf.quick.get("grid", {})):
            for k, vs in grid.items():
                axes.setdefault(k, []).extend(vs if isinstance(vs, list) else [vs])
        for z in sf.zip:
            for k, vs in z.items():
                axes.setdefault(k, []).extend(vs)
        out[exp] = axes
    return out


def lookup(point: dict[str, Any], key: str) -> tuple[bool, Any]:
    """``(found, value)`` of ``key`` in a sweep point: an axis, or a sub-key path of a
    dict-valued axis (``topology.bottleneck.qdisc.kind`` under ``topology.bottleneck.qdisc``)."""
    if key in point:
        return True, point[key]
    for axis, v in point.items():
        if key.startswith(axis + ".") and isinstance(v, dict):
            for part in key[len(axis) + 1:].split("."):
                if not isinstance(v, dict) or part not in v:
                    return False, None
                v = v[part]
            return True, v
    return False, None


def same_value(a: Any, b: Any) -> bool:
    """Select values compare as text after `axis_value` formatting (numbers numerically)."""
    x, y = axis_value(a), axis_value(b)
    if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool) and not isinstance(y, bool):
        return float(x) == float(y)
    return str(x).lower() == str(y).lower() if isinstance(x, bool) or isinstance(y, bool) else str(x) == str(y)


def check_against_study(paper: Paper, study: Path) -> None:
    """Every cell's experiment exists and every select key is a swept path (or a
    sub-key of one) with the value among its values — a missing experiment or value is
    allowed when the entry's note says why (the study lacks that cell)."""
    axes = axis_values(study)
    only = next(iter(axes)) if len(axes) == 1 else None
    for _eid, where, cell, note in entries(paper):
        exp = cell.experiment or only
        if exp is None or exp not in axes:
            if note:
                continue  # an experiment the study does not have: scores "no data"
            known = ", ".join(axes)
            raise _err(f"{where}.experiment", f'"{cell.experiment}": no such experiment in study {study.name} (known: {known}); '
                       "an entry for a cell the study lacks needs a note saying so")
        for key, want in cell.select.items():
            points = [{a: v} for a, vs in axes[exp].items() for v in vs]
            hits = [lookup(p, key) for p in points]
            found = [v for ok, v in hits if ok]
            if not found:
                raise _err(f"{where}.select.{key}", f"not a swept path of experiment {exp}; its axes are: {', '.join(axes[exp]) or 'none'}")
            if not any(same_value(v, want) for v in found):
                if note:
                    continue  # a variant the study does not run yet: scores "no data"
                vals = ", ".join(dict.fromkeys(str(axis_value(v)) for v in found))
                raise _err(f"{where}.select.{key}", f"{want!r} matches no value of the axis; its values: {vals}")


# ---------------------------------------------------------------------------
# Scoring

class Reader:
    """Reads cells from a study output, caching per-run tables."""

    def __init__(self, study: Path, study_out: Path):
        from .study import experiment_out, experiments

        self.exps = experiments(study)
        self.dirs = {e: experiment_out(study, e, study_out) for e in self.exps}
        self.only = next(iter(self.exps)) if len(self.exps) == 1 else None
        self.tables: dict[tuple[str, str], pl.DataFrame] = {}
        self.specs: dict[str, dict[str, Any] | None] = {}

    def spec(self, exp: str) -> dict[str, Any] | None:
        if exp not in self.specs:
            f = self.dirs[exp] / "sweep.json"
            self.specs[exp] = json.loads(f.read_text()) if f.exists() else None
        return self.specs[exp]

    def runs(self, exp: str, table: str) -> pl.DataFrame:
        if (exp, table) not in self.tables:
            self.tables[(exp, table)] = load_runs(self.dirs[exp], table)
        return self.tables[(exp, table)]

    def read(self, cell: Cell, where: str, note: str) -> dict[str, Any]:
        """``{"n", "mean", "ci_low", "ci_high", ...}`` of the cell, with ``why`` when n = 0."""
        exp = cell.experiment or self.only
        empty = {"n": 0, "mean": None, "ci_low": None, "ci_high": None}
        if exp not in self.exps:
            return {**empty, "why": f"the study has no experiment {cell.experiment!r}"}
        spec = self.spec(exp)
        if spec is None:
            return {**empty, "why": f"{exp} not run ({self.dirs[exp]} has no sweep.json)"}
        points = {r["point_id"]: r["point"] for r in spec["runs"]}
        match = [pid for pid, p in points.items()
                 if all((hit := lookup(p, k))[0] and same_value(hit[1], v) for k, v in cell.select.items())]
        if not match:
            return {**empty, "why": f"no point of this {exp} sweep matches (not in its grid{', quick mode' if spec.get('quick') else ''})"}
        if len(match) > 1:
            varying = [a for a in spec["axes"] if len({json.dumps(points[p].get(a), sort_keys=True) for p in match}) > 1]
            raise _err(f"{where}.select", f"matches {len(match)} points of {exp}; also select on: {', '.join(varying)}")
        ids = [r["id"] for r in spec["runs"] if r["point_id"] == match[0]]
        df = self.runs(exp, cell.table)
        df = df.filter(pl.col("run_id").is_in(ids)) if df.height else df
        if df.height == 0:
            return {**empty, "why": f"0 of {len(ids)} runs of this point finished"}
        if cell.metric not in df.columns:
            if note:
                return {**empty, "why": f"no metric {cell.metric!r} in {cell.table}"}
            cols = [c for c, t in df.schema.items() if t.is_numeric() and c not in spec["axes"] and c not in ("seed",)]
            raise _err(f"{where}.metric", f'"{cell.metric}": no such column in the {cell.table} table; it has: {", ".join(cols)}')
        key = KEYS[cell.table]
        if cell.entity is not None:
            if key is None:
                raise _err(f"{where}.entity", f'"{cell.entity}": the summary table has one row per run (omit entity)')
            have_keys = sorted(set(df[key].cast(pl.Utf8).to_list()))
            df = df.filter(pl.col(key).cast(pl.Utf8) == cell.entity)
            if df.height == 0:
                if note:
                    return {**empty, "why": f"no {key} {cell.entity!r} in {cell.table}"}
                raise _err(f"{where}.entity", f'"{cell.entity}": no such {key} in the {cell.table} table; it has: {", ".join(have_keys)}')
        if cell.apps:
            have = set(df["app"].cast(pl.Utf8).to_list())
            missing = [a for a in cell.apps if a not in have]
            if missing:
                raise _err(f"{where}.apps", f'"{missing[0]}": no such app in the {cell.table} table; it has: {", ".join(sorted(have))}')
            df = df.filter(pl.col("app").is_in(list(cell.apps)))
        per_run = df.group_by("run_id", maintain_order=True).agg(pl.col(cell.metric).cast(pl.Float64).alias("v"), pl.len().alias("rows"))
        most_rows = int(per_run["rows"].max() or 0)  # type: ignore[arg-type]
        if cell.reduce is None and most_rows > 1:
            ents = sorted(set(df[key].cast(pl.Utf8).to_list())) if key else []
            raise _err(f"{where}.entity", f"selects {most_rows} rows per run ({', '.join(ents)}); name one entity or set reduce")
        vals = []
        for vs in per_run["v"].to_list():
            vs = [v for v in vs if v is not None and math.isfinite(v)]
            if not vs:
                continue
            how = cell.reduce or "mean"
            r = jain(vs) if how == "jain" else {"mean": sum(vs) / len(vs), "sum": sum(vs), "min": min(vs), "max": max(vs)}[how]
            if math.isfinite(r):
                vals.append(r * cell.scale)
        out = mean_ci(vals)
        out["runs"] = len(ids)
        if out["n"] == 0:
            out["why"] = f"{cell.metric} is NaN/empty in every run"
        return out


def number_verdict(n: Number, mean: float | None) -> str:
    if mean is None:
        return "no data"
    if n.range is not None and n.range[0] <= mean <= n.range[1]:
        return "inside"
    if n.tolerance == "relative":
        tol = REL * abs(n.value)
    elif n.tolerance == "points":
        tol = POINTS
    else:
        tol = float(n.tolerance[4:])
    return "within" if abs(mean - n.value) <= tol + 1e-12 * max(1.0, abs(n.value)) else "outside"


def _above(x: dict[str, Any], y: dict[str, Any]) -> bool:
    """x's interval lies entirely above y's (both known)."""
    return x["ci_low"] is not None and y["ci_high"] is not None and bool(x["ci_low"] > y["ci_high"])


def _close(x: dict[str, Any], y: dict[str, Any]) -> bool:
    return bool(abs(x["mean"] - y["mean"]) <= REL * max(abs(x["mean"]), abs(y["mean"])))


def trend_verdict(op: str, a: dict[str, Any], b: dict[str, Any]) -> str:
    if not a["n"] or not b["n"]:
        return "no data"
    if op in ("<", "<="):
        a, b, op = b, a, op.replace("<", ">")
    if op == "~":
        if _close(a, b):
            return "holds"
        return "reversed" if _above(a, b) or _above(b, a) else "not shown"
    if _above(a, b) or (op == ">=" and _close(a, b)):
        return "holds"
    if _above(b, a) and not (op == ">=" and _close(a, b)):
        return "reversed"
    return "not shown"


def missing_outputs(reader: Reader, paper: Paper) -> list[str]:
    """What the study output lacks for this paper.toml: experiments not run, runs not finished."""
    used = dict.fromkeys((c.experiment or reader.only) for _, _, c, _ in entries(paper))
    out = []
    for exp in used:
        if exp not in reader.exps:
            continue
        spec = reader.spec(exp)
        if spec is None:
            out.append(f"experiment {exp}: no sweep folder at {reader.dirs[exp]} (no sweep.json)")
            continue
        todo = [r["id"] for r in spec["runs"] if not (reader.dirs[exp] / "runs" / r["id"]).is_dir()]
        if todo:
            more = f", ... ({len(todo) - 5} more)" if len(todo) > 5 else ""
            out.append(f"experiment {exp}: {len(todo)} of {len(spec['runs'])} runs not finished "
                       f"(missing {reader.dirs[exp] / 'runs'}/{{{', '.join(todo[:5])}{more}}})")
    return out


def mode_of(reader: Reader) -> str:
    specs = [reader.spec(e) for e in reader.exps]
    flags = {s.get("quick") for s in specs if s is not None}
    if not flags:
        return "not run"
    if None in flags:
        return "unknown"
    return "mixed" if len(flags) > 1 else ("quick" if flags == {True} else "full")


def score(name: str, study: Path, study_out: Path) -> dict[str, Any]:
    """The scorecard of ``study`` (its folder) against ``study_out`` as a plain dict
    (the format of ``scorecard.json``, docs/scorecard.md)."""
    paper = read_paper(study / "paper.toml", study)
    reader = Reader(study, study_out)
    missing = missing_outputs(reader, paper)
    if not any(reader.spec(e) is not None for e in reader.exps):
        raise FileNotFoundError(f"{study_out}: study {name} has not been run; missing: " + "; ".join(missing)
                                + f" (aqmlab study run {name})")
    ns2_file = study_out / "ns2.json"
    ns2 = json.loads(ns2_file.read_text())["values"] if ns2_file.exists() else None
    numbers = []
    for n in paper.numbers:
        got = reader.read(n.cell, f"number[{n.id}]", n.note)
        verdict = number_verdict(n, got["mean"])
        rel = (got["mean"] - n.value) / abs(n.value) if got["mean"] is not None and n.value != 0 else None
        row = {"id": n.id, "where": n.where, "quote": n.quote, "cell": n.cell.describe(), "experiment": n.cell.experiment,
               "select": n.cell.select, "table": n.cell.table, "entity": n.cell.entity, "metric": n.cell.metric,
               "unit": n.unit, "value": n.value, "range": list(n.range) if n.range else None, "tolerance": n.tolerance,
               "aqmlab": got, "rel_diff": rel, "verdict": verdict, "note": n.note}
        if ns2 is not None and n.id in ns2:
            row["ns2"] = ns2[n.id]
            row["ns2_verdict"] = number_verdict(n, ns2[n.id])
        numbers.append(row)
    trends = []
    for t in paper.trends:
        a = reader.read(t.a, f"trend[{t.id}].a", t.note)
        b = reader.read(t.b, f"trend[{t.id}].b", t.note)
        trends.append({"id": t.id, "where": t.where, "quote": t.quote, "op": t.op,
                       "a": {"cell": t.a.describe(), **a}, "b": {"cell": t.b.describe(), **b},
                       "verdict": trend_verdict(t.op, a, b), "note": t.note})
    def counts(rows: list[dict[str, Any]], v: str) -> int:
        return sum(r["verdict"] == v for r in rows)

    totals = {
        "trends_held": counts(trends, "holds"), "trends_total": len(trends),
        "numbers_ok": counts(numbers, "inside") + counts(numbers, "within"), "numbers_total": len(numbers),
        "verdicts": {v: counts(numbers, v) for v in ("inside", "within", "outside", "no data")}
        | {v: counts(trends, v) for v in ("holds", "reversed", "not shown")} | {"trends no data": counts(trends, "no data")},
    }
    return {"study": name, "paper": {"cite": paper.cite, "simulator": paper.simulator, "note": paper.note},
            "mode": mode_of(reader), "study_out": str(study_out), "missing": missing, "ns2": ns2 is not None,
            "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "totals": totals, "numbers": numbers, "trends": trends}


# ---------------------------------------------------------------------------
# Output

def _g(x: float | None) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    a = abs(x)
    return f"{x:.0f}" if a >= 1000 else f"{x:.3g}" if a >= 0.01 or a == 0 else f"{x:.2e}"


def fmt_cell(c: dict[str, Any]) -> str:
    if not c["n"]:
        return "no data" + (f" ({c['why']})" if c.get("why") else "")
    if c["ci_low"] is None:
        return f"{_g(c['mean'])} (n = {c['n']})"
    return f"{_g(c['mean'])} ± {_g((c['ci_high'] - c['ci_low']) / 2)} (n = {c['n']})"


def fmt_paper(n: dict[str, Any]) -> str:
    s = f"{_g(n['value'])} {n['unit']}".strip()
    return s + (f" [{_g(n['range'][0])}, {_g(n['range'][1])}]" if n["range"] else "")


def totals_line(card: dict[str, Any]) -> str:
    t = card["totals"]
    return (f"trends held {t['trends_held']} / {t['trends_total']} · numbers inside or within "
            f"{t['numbers_ok']} / {t['numbers_total']}" + (" (quick mode)" if card["mode"] == "quick" else
                                                            f" ({card['mode']} mode)" if card["mode"] != "full" else ""))


def mode_text(mode: str) -> str:
    return {"quick": "QUICK mode (fewer seeds, shorter runs): a first look, not the study's result",
            "full": "full mode", "mixed": "MIXED: some experiments quick, some full",
            "unknown": "mode unknown (sweeps written before aqmlab recorded quick mode)",
            "not run": "not run"}[mode]


def rows(card: dict[str, Any]) -> tuple[list[str], list[list[str]], list[str], list[list[str]]]:
    """The two tables as text cells: (number header, rows, trend header, rows)."""
    nh = ["id", "where", "aqmlab cell", "paper"] + (["ns-2"] if card["ns2"] else []) + ["aqmlab mean ± 95 % CI (n)", "diff", "verdict", "note"]
    nr = []
    for n in card["numbers"]:
        ns = [f"{_g(n['ns2'])} ({n['ns2_verdict']})" if "ns2" in n else "–"] if card["ns2"] else []
        diff = "–" if n["rel_diff"] is None else f"{n['rel_diff'] * 100:+.{0 if abs(n['rel_diff']) >= 0.1 else 1}f}\u00a0%"
        nr.append([n["id"], n["where"], n["cell"], fmt_paper(n), *ns, fmt_cell(n["aqmlab"]), diff, n["verdict"], n["note"]])
    th = ["id", "where", "claim", "a", "b", "verdict", "note"]
    tr = [[t["id"], t["where"], t["quote"], f"{t['a']['cell']} = {fmt_cell(t['a'])}", f"{t['op']} {t['b']['cell']} = {fmt_cell(t['b'])}",
           t["verdict"], t["note"]] for t in card["trends"]]
    return nh, nr, th, tr


def markdown(card: dict[str, Any]) -> str:
    def md_table(head: list[str], body: list[list[Any]]) -> str:
        def esc(s: Any) -> str:
            return str(s).replace("|", "\\|").replace("\n", " ")

        return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(esc(c) for c in r) + " |" for r in body])

    nh, nr, th, tr = rows(card)
    p = card["paper"]
    out = [f"# Reproduction scorecard: {card['study']}", "",
           f"Paper: {p['cite']} ({p['simulator']}).  ", f"Mode: {mode_text(card['mode'])}.  ",
           f"Study output: `{card['study_out']}`. Generated {card['generated']}.", "",
           f"**{totals_line(card)}**", ""]
    if card["missing"]:
        out += ["Missing (those entries score *no data*):", ""] + [f"- {m}" for m in card["missing"]] + [""]
    out += ["## Numbers", "", md_table(nh, nr), "", "## Trends", "", md_table(th, tr), ""]
    return "\n".join(out)


def write(card: dict[str, Any], folder: Path) -> tuple[Path, Path]:
    """``folder/scorecard.md`` and ``folder/scorecard.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    md, js = folder / "scorecard.md", folder / "scorecard.json"
    md.write_text(markdown(card), encoding="utf-8")
    js.write_text(json.dumps(card, indent=1, default=str) + "\n", encoding="utf-8")
    return md, js
