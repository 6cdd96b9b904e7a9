"""Results of one run: named tables as polars DataFrames.

Column names are a contract (see docs/output.md): scripts and studies rely on them.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import polars as pl

from . import safefile

from .errors import ScenarioError

_DTYPES = {"f64": pl.Float64, "u64": pl.UInt64, "i64": pl.Int64, "str": pl.Utf8, "bool": pl.Boolean}

#: Tables every run has; `timeseries`, `drops` (and others) are opt-in.
CORE_TABLES = ("summary", "queues", "flows", "apps")


def frame(columns: list[tuple[str, str, list]]) -> pl.DataFrame:
    return pl.DataFrame({name: pl.Series(name, values, dtype=_DTYPES[ty]) for name, ty, values in columns})


#: Files the writers append to in place (everything else is replaced atomically).
APPENDED_FILES = ("log.jsonl",)


def check_folder(out: str | os.PathLike) -> None:
    """``out`` is a folder or can become one: not a file, not under a file."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ScenarioError("out", f"{out}: is a file, expected a folder for the results")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ScenarioError("out", f"{out}: {parent} is a file, expected a folder")
            break
    # Files appended to in place (a sweep's log) must not be links to elsewhere; the
    # others are written to a fresh temp file and renamed over (aqmlab.safefile).
    for name in APPENDED_FILES:
        if (out / name).is_symlink():
            raise ScenarioError("out", f"{out / name}: is a symlink; refusing to write through it (remove it or use another folder)")



def check_run_out(out: str | os.PathLike) -> None:
    """``out`` can take one run's tables: a folder (or nothing yet), not a sweep's."""
    out = Path(out)
    check_folder(out)
    if (out / "sweep.json").exists():
        raise ScenarioError("out", f"{out}: holds a sweep; write a single run elsewhere")


class Results:
    """The tables of one run. Access them as attributes (``res.queues``) or by name
    (``res["queues"]``); ``res.tables`` is the dict of all of them."""

    def __init__(self, tables: dict[str, pl.DataFrame], scenario: dict | None = None, pcap_files: list[str] | None = None):
        self.tables = tables
        self.scenario = scenario or {}
        self.pcap_files = pcap_files or []

    @classmethod
    def from_core(cls, raw: list, scenario: dict | None = None, pcap_files: list[str] | None = None) -> "Results":
        return cls({name: frame(cols) for name, cols in raw}, scenario, pcap_files)

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.tables[name]

    def __getattr__(self, name: str) -> pl.DataFrame:
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(f"no table {name!r}; tables are: {', '.join(tables)}")

    def __contains__(self, name: str) -> bool:
        return name in self.tables

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}[{v.height}]" for k, v in self.tables.items())
        return f"Results({parts})"

    def to_pandas(self) -> dict[str, Any]:
        """All tables as pandas DataFrames."""
        return {k: v.to_pandas() for k, v in self.tables.items()}

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``aqmlab run --json`` (docs/output.md): summary as an object,
        other tables as lists of rows."""
        out: dict[str, Any] = {}
        for name, df in self.tables.items():
            rows = [{k: _clean(v) for k, v in row.items()} for row in df.iter_rows(named=True)]
            out[name] = rows[0] if name == "summary" else rows
        return out

    def to_json(self, core_only: bool = True) -> str:
        d = self.to_dict()
        if core_only:
            d = {k: d[k] for k in CORE_TABLES if k in d}
        return json.dumps(d, allow_nan=False)

    def write_parquet(self, out: str | os.PathLike) -> list[Path]:
        """Write every table as ``OUT/NAME.parquet`` (atomically: temp file, then rename).

        Tables of an earlier run in ``OUT`` that this run does not have (an opt-in
        ``timeseries`` the new scenario does not ask for, say) are deleted, so that the
        folder never mixes two runs. A sweep folder is refused."""
        out = Path(out)
        check_run_out(out)
        out.mkdir(parents=True, exist_ok=True)
        if (out / "summary.parquet").exists():
            for old in out.glob("*.parquet"):
                if old.stem not in self.tables:
                    old.unlink()
        written = []
        for name, df in self.tables.items():
            dest = out / f"{name}.parquet"
            safefile.write_with(dest, df.write_parquet)
            written.append(dest)
        if self.scenario:
            safefile.write_text(out / "scenario.json", json.dumps(self.scenario, indent=2))
        return written

    @classmethod
    def read_parquet(cls, path: str | os.PathLike) -> "Results":
        path = Path(path)
        tables = {p.stem: pl.read_parquet(p) for p in sorted(path.glob("*.parquet"))}
        scen = path / "scenario.json"
        return cls(tables, json.loads(scen.read_text()) if scen.exists() else None)


def _clean(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v
