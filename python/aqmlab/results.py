"""Results of one run: named tables as polars DataFrames.

Column names are a contract (see docs/output.md): scripts and studies rely on them.
polars is imported on first use of a table: ``aqmlab run --json`` builds its JSON
straight from the core's columns and never loads it.
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from . import safefile
from .errors import ScenarioError

if TYPE_CHECKING:
    import polars as pl

#: Tables every run has; `timeseries`, `drops` (and others) are opt-in.
CORE_TABLES = ("summary", "queues", "flows", "apps")


#: A core column: ``(name, dtype, values)``. Numeric values come as ``bytes`` (native
#: byte order), strings as ``(distinct strings, bytes of one u32 index per row)``; see
#: ``table_to_py`` in crates/aqmlab-py: no Python object per value crosses over.
CoreColumn = tuple[str, str, bytes | tuple[list[str], bytes]]

#: The `memoryview.cast` format and numpy dtype of each numeric core dtype.
_NUMERIC: dict[str, tuple[Literal["d", "Q", "q", "?"], str]] = {"f64": ("d", "float64"), "u64": ("Q", "uint64"), "i64": ("q", "int64"), "bool": ("?", "bool")}


#: From this many rows a string column is gathered by polars (~30 µs a call, then ~3 ns
#: a row); shorter ones go through a Python list of the distinct values (~30 ns a row).
_GATHER_FROM_ROWS = 1000


def frame(columns: list[CoreColumn]) -> pl.DataFrame:
    """A core table as a polars frame: numeric columns straight from their buffers
    (``numpy.frombuffer``), long string columns gathered from their distinct values by
    index, short ones from a list."""
    import numpy as np
    import polars as pl

    def series(name: str, ty: str, vals: bytes | tuple[list[str], bytes]) -> pl.Series:
        if isinstance(vals, tuple) and len(vals[1]) < 4 * _GATHER_FROM_ROWS:
            return pl.Series(name, values(ty, vals), dtype=pl.Utf8)
        if isinstance(vals, tuple):
            distinct, codes = vals
            return pl.Series(name, distinct, dtype=pl.Utf8).gather(np.frombuffer(codes, dtype=np.uint32))
        return pl.Series(name, np.frombuffer(vals, dtype=_NUMERIC[ty][1]))

    return pl.DataFrame([series(name, ty, vals) for name, ty, vals in columns])


def values(ty: str, vals: bytes | tuple[list[str], bytes]) -> list[Any]:
    """A core column's values as Python objects (no numpy: the fast ``--json`` path)."""
    if isinstance(vals, tuple):
        distinct, codes = vals
        return [distinct[i] for i in memoryview(codes).cast("I")]  # "I": 4 bytes, as u32
    decoded: list[Any] = memoryview(vals).cast(_NUMERIC[ty][0]).tolist()
    return decoded


def rows(columns: list[CoreColumn]) -> list[dict[str, Any]]:
    """The rows of a core table as ``Results.to_dict`` gives them, without polars: the
    values a polars frame of these columns would yield (f64 as float, NaN/inf as None)."""
    names = [name for name, _, _ in columns]
    cols = [[_clean(v) for v in values(ty, vals)] if ty == "f64" else values(ty, vals) for _, ty, vals in columns]
    return [dict(zip(names, row)) for row in zip(*cols)]


#: Files the writers append to in place (everything else is replaced atomically).
APPENDED_FILES = ("log.jsonl",)


def check_folder(out: str | os.PathLike[str]) -> None:
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



def check_run_out(out: str | os.PathLike[str]) -> None:
    """``out`` can take one run's tables: a folder (or nothing yet), not a sweep's."""
    out = Path(out)
    check_folder(out)
    if (out / "sweep.json").exists():
        raise ScenarioError("out", f"{out}: holds a sweep; write a single run elsewhere")


class Results:
    """The tables of one run. Access them as attributes (``res.queues``) or by name
    (``res["queues"]``); ``res.tables`` is the dict of all of them."""

    #: An emulated run's raw report (late departures, loop counters); set by `aqmlab.emulate`.
    emulator_report: dict[str, Any]

    def __init__(self, tables: dict[str, pl.DataFrame] | None, scenario: dict[str, Any] | None = None, pcap_files: list[str] | None = None, raw: list[Any] | None = None):
        self._tables = tables
        #: The core's columns, ``[(table, [(column, type, values)])]``, until ``tables`` is built.
        self._raw = raw
        self.scenario = scenario or {}
        self.pcap_files = pcap_files or []

    @classmethod
    def from_core(cls, raw: list[Any], scenario: dict[str, Any] | None = None, pcap_files: list[str] | None = None) -> Results:
        return cls(None, scenario, pcap_files, raw=raw)

    @property
    def tables(self) -> dict[str, pl.DataFrame]:
        if self._tables is None:
            self._tables = {name: frame(cols) for name, cols in self._raw or []}
            self._raw = None
        return self._tables

    def _names(self) -> list[str]:
        if self.__dict__.get("_tables") is None and self.__dict__.get("_raw") is not None:
            return [name for name, _ in self._raw or []]
        return list(self.__dict__.get("_tables") or {})

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.tables[name]

    def __getattr__(self, name: str) -> pl.DataFrame:
        names = self._names()
        if name in names:
            return self.tables[name]
        raise AttributeError(f"no table {name!r}; tables are: {', '.join(names)}")

    def __contains__(self, name: str) -> bool:
        return name in self._names()

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}[{v.height}]" for k, v in self.tables.items())
        return f"Results({parts})"

    def to_pandas(self) -> dict[str, Any]:
        """All tables as pandas DataFrames."""
        return {k: v.to_pandas() for k, v in self.tables.items()}

    def to_dict(self, names: tuple[str, ...] | None = None) -> dict[str, Any]:
        """The JSON document of ``aqmlab run --json`` (docs/output.md): summary as an object,
        other tables as lists of rows; ``names`` keeps only those tables."""
        out: dict[str, Any] = {}
        # (name, row builder, its input): the core's columns, or the built frames
        tables: list[tuple[str, Callable[[Any], list[dict[str, Any]]], Any]]
        if self._tables is None:
            tables = [(name, rows, cols) for name, cols in self._raw or []]
        else:
            tables = [(name, _frame_rows, df) for name, df in self._tables.items()]
        for name, to_rows, table in tables:
            if names is None or name in names:
                table_rows = to_rows(table)
                out[name] = table_rows[0] if name == "summary" else table_rows
        return out

    def to_json(self, core_only: bool = True) -> str:
        d = self.to_dict(CORE_TABLES if core_only else None)
        if core_only:
            d = {k: d[k] for k in CORE_TABLES if k in d}
        return json.dumps(d, allow_nan=False)

    def write_parquet(self, out: str | os.PathLike[str]) -> list[Path]:
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
        for name, (_, data) in self.parquet_files().items():
            dest = out / f"{name}.parquet"
            safefile.write_bytes(dest, data)
            written.append(dest)
        if self.scenario:
            safefile.write_text(out / "scenario.json", json.dumps(self.scenario, indent=2))
        return written

    def parquet_files(self) -> dict[str, tuple[int, bytes]]:
        """Every table as ``(rows, contents of NAME.parquet)``. A sweep worker sends these
        to its driver: bytes pickle at copy speed where frames are serialised column by
        column, and encoding to memory skips polars' per-file sink set-up (about half of
        a small table's write time)."""
        files = {}
        for name, df in self.tables.items():
            buf = io.BytesIO()
            df.write_parquet(buf)
            files[name] = (df.height, buf.getvalue())
        return files

    @classmethod
    def read_parquet(cls, path: str | os.PathLike[str]) -> Results:
        import polars as pl

        path = Path(path)
        tables = {p.stem: pl.read_parquet(p) for p in sorted(path.glob("*.parquet"))}
        scen = path / "scenario.json"
        return cls(tables, json.loads(scen.read_text()) if scen.exists() else None)


def _frame_rows(df: pl.DataFrame) -> list[dict[str, Any]]:
    return [{k: _clean(v) for k, v in row.items()} for row in df.iter_rows(named=True)]


def _clean(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v
