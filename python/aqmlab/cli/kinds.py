"""`aqmlab validate`, the registries' listings (`qdiscs`, `traffic`, `ccs`) and `aqmlab docs` (the README's generated lists)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ..errors import ScenarioError
from ..scenario import cc_docs, qdisc_docs, traffic_docs
from .common import SetOpt, app, err_console, fail, out_console, print_warnings


@app.command()
def validate(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    set: SetOpt = None,
) -> None:
    """Check a scenario file without running it (and print its warnings)."""
    from ..scenario import warnings

    try:
        found = warnings(scenario, set)
    except ScenarioError as e:
        fail(e)
    print_warnings(found)
    out_console.print(f"{scenario}: ok" + (f" ({len(found)} warning{'s' if len(found) > 1 else ''})" if found else ""))


def pick(docs: list[dict[str, Any]], name: str | None, field: str, what: str) -> list[dict[str, Any]]:
    """All of a registry's docs, or the one named ``name`` (an unknown name fails naming ``field``)."""
    if name is None:
        return docs
    found = [d for d in docs if d["kind"] == name]
    if not found:
        fail(ScenarioError(field, f'"{name}": unknown {what}; known: {", ".join(d["kind"] for d in docs)}'))
    return found


@app.command()
def qdiscs(
    name: Annotated[str | None, typer.Argument(help="Show one discipline.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List queue disciplines with their parameters, units, defaults and sources."""
    print_kind_docs(pick(qdisc_docs(), name, "qdisc", "queue discipline"), json_out, with_source=True)


@app.command()
def traffic(
    name: Annotated[str | None, typer.Argument(help="Show one traffic kind.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List traffic kinds with their parameters."""
    print_kind_docs(pick(traffic_docs(), name, "kind", "traffic kind"), json_out, with_source=False)


@app.command()
def ccs(
    name: Annotated[str | None, typer.Argument(help="Show one congestion control.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List TCP congestion controls (`cc = ...` of tcp traffic) with their parameters."""
    print_kind_docs(pick(cc_docs(), name, "cc", "congestion control"), json_out, with_source=True)


docs_app = typer.Typer(
    no_args_is_help=True, help="Generated documentation: the README's lists from the registries, the stored --help texts."
)
app.add_typer(docs_app, name="docs")


@docs_app.command("readme")
def docs_readme(
    path: Annotated[Path | None, typer.Option(help="The README to update (default: the repository's).")] = None,
    check: Annotated[bool, typer.Option("--check", help="Only compare; exit 1 when the lists are stale.")] = False,
) -> None:
    """Write the README's lists of qdiscs, traffic kinds and congestion controls from the registries."""
    from ..readme_lists import README, update

    readme = path if path is not None else README
    try:
        fresh = update(readme, check=check)
    except (OSError, ValueError) as e:
        fail(ValueError(f"{readme}: {e}"))
    if check and not fresh:
        err_console.print(f"{readme}: the registry lists are stale; run `aqmlab docs readme`")
        raise typer.Exit(1)
    print(f"{readme}: {'up to date' if fresh else 'lists rewritten'}")


@docs_app.command("help")
def docs_help(
    check: Annotated[bool, typer.Option("--check", help="Only compare; exit 1 when the stored texts are stale.")] = False,
) -> None:
    """Store `aqmlab --help` and `aqmlab run --help` as the app prints them (the fast path's text)."""
    from ..fasthelp import HELP_FILE, update

    try:
        fresh = update(check=check)
    except (OSError, RuntimeError) as e:
        fail(e)
    if check and not fresh:
        err_console.print(f"python/aqmlab/{HELP_FILE}: the stored help is stale; run `aqmlab docs help`")
        raise typer.Exit(1)
    print(f"python/aqmlab/{HELP_FILE}: {'up to date' if fresh else 'rewritten'}")


def print_kind_docs(docs: list[dict[str, Any]], json_out: bool, with_source: bool) -> None:
    """Print component docs (qdiscs, traffic kinds) as JSON or one table per kind."""
    if json_out:
        print(json.dumps(docs, indent=2))
        return
    for d in docs:
        source = f"  [dim]({d['source']})[/]" if with_source else ""
        t = Table(title=f"[bold]{d['kind']}[/]: {d['summary']}{source}", title_justify="left")
        for c in ("parameter", "type", "default", "meaning"):
            t.add_column(c)
        for p in d["params"]:
            t.add_row(p["name"], p["type"], p["default"], p["doc"])
        out_console.print(t)
