"""`aqmlab characterize`: the RFC 7928 guideline experiments."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from ..errors import ScenarioError, SimulationError
from .common import SetOpt, app, err_console, fail, out_console


@app.command()
def characterize(
    aqm: Annotated[str, typer.Argument(help="Queue discipline to characterise (aqmlab qdiscs lists them).")],
    against: Annotated[str | None, typer.Option(help="Further disciplines to run beside it, comma-separated (DropTail always runs).")] = None,
    set: SetOpt = None,
    quick: Annotated[bool, typer.Option("--quick", help="30 s runs, one seed, fewer RTTs: a first look in about a minute.")] = False,
    out: Annotated[Path | None, typer.Option(help="Output folder (default out/characterize/AQM).")] = None,
    sections: Annotated[str | None, typer.Option(help="Only these RFC 7928 sections or experiment ids, comma-separated (e.g. 5.1,6,8.2).")] = None,
    seeds: Annotated[int | None, typer.Option(help="Seeds per point (default 3; 1 with --quick).")] = None,
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: all cores).")] = None,
    buffer: Annotated[str, typer.Option(help="The buffer (limit) of every discipline: a BDP multiple, packets or bytes.")] = "1BDP",
) -> None:
    """Characterise a queue discipline with the RFC 7928 guideline experiments beside
    DropTail; writes OUT/report.html (docs/characterize.md)."""
    from ..characterize import characterize as run_suite

    def show(what: str) -> None:
        err_console.print(f"[dim]{time.strftime('%H:%M:%S')}[/] {what}", highlight=False)

    try:
        r = run_suite(aqm, against=[a.strip() for a in against.split(",") if a.strip()] if against else None, set=set,
                      quick=quick, out=out, sections=[s.strip() for s in sections.split(",") if s.strip()] if sections else None,
                      workers=workers, seeds=seeds, progress=show, buffer=buffer)
    except (ScenarioError, SimulationError) as e:
        fail(e)
    for k, why in r.skipped.items():
        err_console.print(f"{k}: {why}", highlight=False)
    out_console.print(f"{len(r.metrics)} experiments in {r.wall_s:.1f} s → {r.report}", highlight=False)
