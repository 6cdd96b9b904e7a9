"""Writing output files without ever writing through a link.

An output folder may hold symlinks planted by someone else (or left by a tool): a
writer that opens ``DIR/NAME`` or a fixed temp name ``DIR/.NAME.tmp`` would overwrite
the link's target. Every writer here creates a fresh temp file with exclusive,
no-follow semantics (``O_CREAT | O_EXCL | O_NOFOLLOW``: a name that exists, link or
not, is an error, never reused), writes it, and renames it over the destination.
``rename`` replaces the directory entry itself, so a link at the destination is
replaced by the new file and its target is left untouched. Appending (``log.jsonl``)
opens with ``O_NOFOLLOW`` and refuses a link.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class UnsafeOutput(OSError):
    """An output path is a symlink (or otherwise unsafe to write)."""


def temp_name(dest: Path) -> Path:
    """A unique hidden temp name beside ``dest``."""
    import uuid  # here, not at the top: `aqmlab run --json` writes no file

    return dest.with_name(f".{dest.name}.{uuid.uuid4().hex[:12]}.tmp")


@contextmanager
def exclusive_temp(dest: Path, mode: str = "wb") -> Iterator[tuple[IO[Any], Path]]:
    """Yield ``(file, temp path)`` for a newly created temp file beside ``dest``; on
    success rename it over ``dest``, on failure remove it."""
    dest = Path(dest)
    tmp = temp_name(dest)
    fd = os.open(tmp, _CREATE, 0o644)
    try:
        with os.fdopen(fd, mode) as f:
            yield f, tmp
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_bytes(dest: Path, data: bytes) -> Path:
    with exclusive_temp(dest, "wb") as (f, _):
        f.write(data)
    return Path(dest)


def write_text(dest: Path, text: str) -> Path:
    return write_bytes(dest, text.encode("utf-8"))


def write_with(dest: Path, writer: Callable[[IO[Any]], None]) -> Path:
    """Let ``writer(file)`` fill the temp file (a DataFrame's ``write_parquet``, a
    figure's ``savefig``), then rename it over ``dest``."""
    with exclusive_temp(dest, "wb") as (f, _):
        writer(f)
    return Path(dest)


def append_line(path: Path, line: str) -> None:
    """Append one line to ``path`` (created if missing); a symlink is refused."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as e:
        if Path(path).is_symlink():
            raise UnsafeOutput(f"{path}: is a symlink; refusing to append through it") from e
        raise
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(line if line.endswith("\n") else line + "\n")
