"""``aqmlab --help`` and ``aqmlab run --help`` without typer or rich.

The typer app's help for these two command lines is stored in `aqmlab._help_text`, as the
app prints it to a pipe or a file: rich then uses no colour and 80 columns (it has no
terminal to measure). `serve` prints the stored text when the output is exactly such a
pipe or file — not a terminal, UTF-8, none of the environment variables that change
rich's or typer's rendering set, the program called ``aqmlab`` (click names the program
after ``argv[0]``). Anything else (a terminal, whose width and colours vary, ``COLUMNS=…``,
``python -m aqmlab.cli --help``) is printed by the typer app as before.

``aqmlab docs help`` rewrites `aqmlab._help_text` from the typer app (`render`);
``aqmlab docs help --check`` and ``tests/test_lean_cli.py`` fail when the stored text
differs from what the app prints, so the two cannot drift apart.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing itself is not imported on the fast path (mypy knows the name)
if TYPE_CHECKING:
    from typing import IO

#: Environment variables that change what typer and rich print for ``--help`` (rich's
#: ``Console``: width, colour, terminal detection; typer's ``rich_utils``: width, colour,
#: rich on/off). When one is set, even to "", the typer app prints the help.
RENDER_ENV = (
    "COLUMNS",
    "LINES",
    "JUPYTER_COLUMNS",
    "JUPYTER_LINES",
    "DATABRICKS_RUNTIME_VERSION",
    "TERMINAL_WIDTH",
    "FORCE_COLOR",
    "PY_COLORS",
    "NO_COLOR",
    "GITHUB_ACTIONS",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "_TYPER_FORCE_DISABLE_TERMINAL",
    "TYPER_USE_RICH",
)

#: The command lines whose help is stored (the arguments after the program name).
COMMANDS = (("--help",), ("run", "--help"))

#: The generated module with the stored help (next to this file).
HELP_FILE = "_help_text.py"

_HEADER = '''"""The typer app's ``--help`` output for `aqmlab.fasthelp.COMMANDS`, printed to a pipe
(no colour, 80 columns). Written by ``aqmlab docs help``; do not edit by hand."""

HELP = {
'''


def plain_output(stdout: IO[str] | None, environ: dict[str, str] | os._Environ[str]) -> bool:
    """Whether rich would print to ``stdout`` without colour at 80 columns with box
    characters: not a terminal, UTF-8, none of `RENDER_ENV` set, not Windows."""
    if stdout is None or sys.platform == "win32" or any(v in environ for v in RENDER_ENV):
        return False
    try:
        if stdout.isatty():
            return False
    except (AttributeError, ValueError, OSError):
        return False
    return (getattr(stdout, "encoding", None) or "").lower().startswith("utf")


def serve(argv: list[str], prog: str) -> bool:
    """Print the stored help for ``argv`` and return True, or do nothing and return False
    (not a stored command line, or an output the stored text is not made for)."""
    if tuple(argv) not in COMMANDS or os.path.basename(prog) != "aqmlab" or not plain_output(sys.stdout, os.environ):
        return False
    from ._help_text import HELP

    sys.stdout.write(HELP[" ".join(argv)])
    sys.stdout.flush()
    return True


def render(argv: tuple[str, ...]) -> str:
    """What the typer app prints for ``aqmlab ARGV`` to a pipe, in a clean environment."""
    import subprocess

    code = "import sys; sys.argv = ['aqmlab', *sys.argv[1:]]; from aqmlab.cli import main; main()"
    env = {k: v for k, v in os.environ.items() if k not in RENDER_ENV}
    env["PYTHONIOENCODING"] = "utf-8"
    r = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, encoding="utf-8", env=env)
    if r.returncode != 0:
        raise RuntimeError(f"aqmlab {' '.join(argv)} exited with {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def source() -> str:
    """The text of `HELP_FILE` for the typer app as it is now."""
    lines = [_HEADER]
    for argv in COMMANDS:
        lines.append(f"    {' '.join(argv)!r}: (\n")
        lines.extend(f"        {line!r}\n" for line in render(argv).splitlines(keepends=True))
        lines.append("    ),\n")
    lines.append("}\n")
    return "".join(lines)


def update(check: bool = False) -> bool:
    """Whether `HELP_FILE` was up to date; unless ``check``, rewrite it when it was not."""
    from pathlib import Path

    path = Path(__file__).with_name(HELP_FILE)
    fresh = source()
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old == fresh:
        return True
    if not check:
        path.write_text(fresh, encoding="utf-8")
    return False
