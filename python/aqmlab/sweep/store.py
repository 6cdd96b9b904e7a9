"""The sweep folder: runs, failures, the build fingerprint and checks on what is there.

The *driver* writes each run the moment it arrives, into ``OUT/runs/.tmp-ID-*`` and then
renames the folder to ``OUT/runs/ID`` (one atomic rename). A folder ``runs/ID`` is
therefore complete when written; `verify_run` still checks it before a resume skips it
(a disk that filled up, a copy that was cut short, a file deleted by hand), and a run
that fails the check is run again.

Every run records the *build* that made it (`build_id`): the crate version and a hash
of the Rust sources compiled into the extension (computed at build time by
``crates/aqmlab-py/build.rs``). A resume over runs of another build is refused unless
``allow_mixed``: the same scenario and seed may give other numbers after a change.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import polars as pl

from .. import safefile
from ..errors import ScenarioError
from ..results import CORE_TABLES, check_folder
from .points import Task


def build_id() -> str:
    """``VERSION+HASH``: the aqmlab version and the hash of the compiled Rust sources."""
    from .. import _core

    return f"{_core.__version__}+{getattr(_core, 'source_hash', 'unknown')[:12]}"


def git_commit() -> str:
    """The git commit the extension was built from (``git describe --always --dirty``)."""
    from .. import _core

    return getattr(_core, "git_describe", "unknown")


def versions() -> dict[str, str]:
    import matplotlib
    import numpy

    from .. import __version__

    return {
        "aqmlab": __version__,
        "build": build_id(),
        "git commit": git_commit(),
        "python": platform.python_version(),
        "polars": pl.__version__,
        "numpy": numpy.__version__,
        "matplotlib": matplotlib.__version__,
        "platform": platform.platform(),
    }


def write_json_atomic(path: Path, obj: Any) -> None:
    safefile.write_text(path, json.dumps(obj, indent=2, default=str))


def write_run(out: Path, task: Task, outcome: dict[str, Any], build: str) -> bool:
    """Write one finished run as ``OUT/runs/ID/`` (temporary folder, then one rename).
    Returns False when the run was already there (nothing is written twice)."""
    runs = out / "runs"
    dest = runs / task.id
    if dest.exists():
        return False
    tmp = runs / f".tmp-{task.id}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    try:
        for name, (_, data) in outcome["tables"].items():
            (tmp / f"{name}.parquet").write_bytes(data)
        (tmp / "scenario.json").write_text(json.dumps(task.scenario, indent=2))
        meta = {k: outcome.get(k) for k in ("id", "pid", "host", "started", "wall_s", "cpu_s", "executor")}
        meta.update(
            point=task.point, point_id=task.point_id, seed=task.seed, status="ok", written=time.time(),
            build=build, tables={name: rows for name, (rows, _) in outcome["tables"].items()},
        )
        (tmp / "run.json").write_text(json.dumps(meta, indent=2, default=str))
        os.rename(tmp, dest)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if dest.exists():
            return False
        raise
    safefile.append_line(out / "log.jsonl", json.dumps({"event": "written", "id": task.id, "pid": outcome.get("pid"), "time": time.time()}))
    return True


def write_failure(out: Path, task: Task, outcome: dict[str, Any]) -> dict[str, Any]:
    failed = out / "failed"
    failed.mkdir(parents=True, exist_ok=True)
    rec = {"id": task.id, "point": task.point, "point_id": task.point_id, "seed": task.seed, "error": outcome["error"], "pid": outcome.get("pid"), "host": outcome.get("host"), "time": time.time()}
    write_json_atomic(failed / f"{task.id}.json", rec)
    safefile.append_line(out / "log.jsonl", json.dumps({"event": "failed", "id": task.id, "error": outcome["error"]["type"], "time": time.time()}))
    return rec


def verify_run(run_dir: Path) -> tuple[str | None, str | None]:
    """``(problem, build)`` of a finished run folder: ``problem`` is None when the run is
    complete — its ``run.json`` reads, and every table it lists (the core tables for
    runs written before tables were listed) is there with the recorded row count."""
    try:
        meta = json.loads((run_dir / "run.json").read_text())
    except (OSError, ValueError) as e:
        return f"run.json unreadable ({type(e).__name__})", None
    build = meta.get("build")
    tables = meta.get("tables") or dict.fromkeys(CORE_TABLES)
    for name, rows in tables.items():
        f = run_dir / f"{name}.parquet"
        if not f.exists():
            return f"{name}.parquet missing", build
        try:
            n = pl.scan_parquet(f).select(pl.len()).collect().item()
        except Exception as e:
            return f"{name}.parquet unreadable ({type(e).__name__})", build
        if rows is not None and n != rows:
            return f"{name}.parquet has {n} rows, {rows} were written", build
    return None, build


def check_out_dir(out: Path) -> None:
    """``out`` must be a folder (or not exist yet): checked before anything runs."""
    check_folder(out)


def check_name(name: str, where: str = "name") -> str:
    """A sweep or study name becomes a folder under ``out/``: one plain path component."""
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise ScenarioError(where, f"{name!r}: expected a plain name (letters, digits, -, _, .), not a path; it names the folder out/NAME")
    return name
