"""`aqmlab export`: the tables of a run, a sweep or a folder of sweeps as CSV, Parquet or JSON.

* a run folder → one file per table (``summary``, ``queues``, ``flows``, ``apps``, and
  every other table the run wrote, e.g. ``timeseries``);
* a sweep folder → ``aggregated.*`` (the tidy mean/interval table, `aqmlab.aggregate`)
  and, per table, every finished run stacked with its axis values, ``point_id``, ``label``,
  ``seed`` and ``run_id`` (``runs-<table>.*``);
* a folder of sweeps (a study's output) → the same per sweep, in a subfolder named after it.

JSON is one array of row objects per file. Nested columns (lists) are kept in Parquet and
JSON and written as JSON text in CSV. Files are written atomically (`aqmlab.safefile`).
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import cast

import polars as pl

from . import safefile
from .aggregate import is_run, is_sweep, load, load_runs

FORMATS = ("csv", "parquet", "json")


def _write(df: pl.DataFrame, dest: Path, fmt: str) -> Path:
    dest = dest.with_suffix(f".{fmt}")
    if fmt == "csv":
        nested = [c for c, t in df.schema.items() if isinstance(t, (pl.List, pl.Struct, pl.Array))]
        flat = df.with_columns([pl.Series(c, [json.dumps(v) for v in df[c].to_list()], pl.Utf8) for c in nested])
        safefile.write_with(dest, lambda f: flat.write_csv(f))
    elif fmt == "parquet":
        safefile.write_with(dest, lambda f: df.write_parquet(f))
    else:
        safefile.write_with(dest, lambda f: df.write_json(cast(io.IOBase, f)))
    return dest


def _tables_of_run(path: Path) -> list[str]:
    return sorted(p.stem for p in path.glob("*.parquet"))


def _tables_of_sweep(path: Path) -> list[str]:
    names: set[str] = set()
    for run in (path / "runs").glob("*"):
        names.update(p.stem for p in run.glob("*.parquet"))
    return sorted(names)


def export(path: str | os.PathLike[str], out: str | os.PathLike[str], fmt: str = "csv") -> list[Path]:
    """Write the tables of ``path`` into the folder ``out`` (see the module docs)."""
    path, out = Path(path), Path(out)
    if fmt not in FORMATS:
        raise ValueError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such folder")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if is_sweep(path):
        agg = load(path)
        if agg.height:
            written.append(_write(agg, out / "aggregated", fmt))
        for t in _tables_of_sweep(path):
            df = load_runs(path, t)
            if df.height:
                written.append(_write(df, out / f"runs-{t}", fmt))
    elif is_run(path):
        for t in _tables_of_run(path):
            written.append(_write(pl.read_parquet(path / f"{t}.parquet"), out / t, fmt))
    else:
        sweeps = sorted(p.parent for p in path.glob("*/sweep.json"))
        if not sweeps:
            raise ValueError(f"{path}: not a run (summary.parquet), a sweep (sweep.json) or a folder of sweeps")
        for s in sweeps:
            written += export(s, out / s.name, fmt)
    return written
