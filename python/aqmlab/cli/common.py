"""The typer app every command group registers on, the consoles, and the helpers the
groups share (`fail`, `--set`, warnings)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from .. import _core


def _flags_without_type() -> None:
    """Show boolean flags as ``--json``, not ``--json <bool>``: a flag takes no value.
    (Typer ≥ 0.20 prints every option's type; flags have none to give.)"""
    cls = getattr(typer.core, "TyperOption", None)
    shown = getattr(cls, "display_type_rich", None)
    if shown is None or getattr(shown, "_aqmlab", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> Any:
        return "" if getattr(self, "is_flag", False) else shown(self, ctx)

    setattr(display_type_rich, "_aqmlab", True)  # noqa: B010 - a function attribute mypy cannot see
    setattr(cls, "display_type_rich", display_type_rich)  # noqa: B010 - typer's class, patched once


_flags_without_type()

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="aqmlab: packet-level simulation of AQM and packet scheduling at access-network bottlenecks.",
)
out_console = Console()
err_console = Console(stderr=True)


def _show_version(value: bool) -> None:
    if value:
        from ..sweep import build_id
        from ..sweep.store import git_commit

        print(f"aqmlab {_core.__version__} (build {build_id()}, {git_commit()})")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", callback=_show_version, is_eager=True)] = False,
) -> None:
    """aqmlab: packet-level simulation of AQM and packet scheduling at access-network bottlenecks."""


def fail(e: Exception) -> NoReturn:
    from rich.markup import escape

    # escaped: messages name fields like traffic[0].rate or number[ID].value
    err_console.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(2)


SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", "-s", help="Override a scenario value: PATH=VALUE (repeatable)."),
]


def print_warnings(messages: Iterable[str]) -> None:
    """Scenario warnings, on stderr so that --json output stays clean."""
    for m in messages:
        err_console.print(f"[yellow]warning:[/] {m}", highlight=False, soft_wrap=True)
