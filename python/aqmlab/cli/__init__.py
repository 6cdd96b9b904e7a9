"""The `aqmlab` command line: one module per command group, each registering its commands
on the typer app of `common` (`aqmlab.cli.app`).

Errors in the input end with one line on stderr (``error: PATH: MESSAGE``) and exit
status 2, never a traceback. Importing this package costs nothing: the command modules
(typer, rich) load on first use of `app` or `main`, so that ``python -m aqmlab.cli``
takes the fast paths of `aqmlab.fastcli` first.
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any

#: The command modules, in the order their commands are listed by ``aqmlab --help``.
COMMAND_MODULES = ("run", "sweep", "analysis", "study", "kinds", "bench", "emulate", "characterize")


def _app() -> Any:
    from .common import app

    for name in COMMAND_MODULES:
        import_module(f".{name}", __name__)
    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        return _app()
    raise AttributeError(f"module 'aqmlab.cli' has no attribute {name!r}")


def main() -> None:
    """The typer app's entry point (the ``aqmlab`` script's slow path)."""
    app = _app()
    from .common import err_console

    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
