"""`aqmlab sweep` and the progress bar every multi-run command uses."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from ..errors import ScenarioError, SimulationError
from .common import SetOpt, app, err_console, fail, out_console

if TYPE_CHECKING:
    from ..sweep import SweepOutcome

#: What a sweep function gives back (one sweep's outcome, or a study's per experiment).
T = TypeVar("T")


class SweepProgress:
    """A rich progress bar for a sweep: runs done of total, failures, elapsed, ETA; one
    row per sweep named by the events' ``"name"`` (run-all's STUDY/EXPERIMENT)."""

    def __init__(self, console: Console, title: str = "sweep"):
        from rich.progress import MofNCompleteColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn(f"[bold]{title}"),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failed]} failed[/]"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, ev: dict[str, Any]) -> None:
        name = ev.get("name", "runs")
        if ev["event"] == "start":
            self.bar.start()
            self.tasks[name] = self.bar.add_task(name, total=ev["todo"], failed=0)
            if ev["skipped"]:
                which = f"{ev['name']}: " if "name" in ev else ""
                self.bar.console.print(f"resume: {which}{ev['skipped']} of {ev['total']} runs already done")
        elif name in self.tasks:
            self.bar.update(self.tasks[name], completed=ev["done"], failed=ev["failed"])
            if ev["status"] != "ok":
                err = ev["error"]
                where = f"{err['path']}: " if err.get("path") else ""
                self.bar.console.print(f"[red]run {ev['id']} failed[/] ({_point_text(ev['point'])}, seed {ev['seed']}): {err['type']}: {where}{err['message']}", highlight=False)

    def stop(self) -> None:
        self.bar.stop()


def _point_text(point: dict[str, Any]) -> str:
    from ..aggregate import point_label

    return point_label(point)


def sweep_report(res: SweepOutcome, console: Console) -> None:
    console.print(
        f"{res.total} runs: {res.ok} ran ok, {res.skipped} already done, "
        f"[{'red' if res.n_failed else 'green'}]{res.n_failed} failed[/] "
        f"({res.wall_s:.1f} s, {res.workers} workers) → {res.out}/",
        highlight=False,
    )


@app.command()
def sweep(
    sweep_file: Annotated[Path, typer.Argument(help="Sweep file (TOML): base, grid, zip, seeds, executor.")],
    out: Annotated[Path | None, typer.Option(help="Output folder (default: the file's `out`, else out/NAME).")] = None,
    executor: Annotated[str | None, typer.Option(help="local (process pool) or dask.")] = None,
    address: Annotated[str | None, typer.Option(help="Dask scheduler address, tcp://host:port (default: a LocalCluster).")] = None,
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: all cores).")] = None,
    seeds: Annotated[int | None, typer.Option(help="Number of seeds (overrides the file).")] = None,
    set: SetOpt = None,
    quick: Annotated[bool, typer.Option("--quick", help="Use the file's \\[quick] settings.")] = False,
    resume: Annotated[bool, typer.Option("--resume/--no-resume", help="Skip runs already written (after checking them).")] = True,
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed", help="Resume over runs made by another aqmlab build.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no summary.")] = False,
    format: Annotated[str, typer.Option("--format", help="parquet (the tables), or flent: also a run.flent.gz in every run's folder (docs/flent.md).")] = "parquet",
) -> None:
    """Run a sweep: every grid/zip point × seed, each run written as it finishes.

    Exit status: 0 when every run succeeded, 1 when some failed, 2 for a bad input."""
    from ..sweep import read_sweep_file, run_sweep_file

    base = None
    flent_meta = None
    try:
        sf = read_sweep_file(sweep_file)
        if format not in ("parquet", "flent"):
            raise ScenarioError("--format", f"{format!r}: expected parquet or flent")
        if format == "flent":
            from .. import flent
            from ..scenario import load_scenario

            base, flent_meta, notes = flent.prepare(load_scenario(sf.base))
            for n in notes:
                err_console.print(f"flent export: {n}", highlight=False)
    except ScenarioError as e:
        fail(ScenarioError(e.path, f"{e.message} (in {sweep_file})") if e.path else e)
    res = run_with_progress(
        lambda progress: run_sweep_file(
            sf, quick=quick, out=out, executor=executor, address=address, workers=workers,
            seeds=seeds, set=set, resume=resume, progress=progress, allow_mixed=allow_mixed,
            base=base,
        ),
        title=sf.name,
        show=not (quiet or json_out),
        json_out=json_out,
    )
    if format == "flent":
        from .. import flent

        try:
            written = flent.write_sweep(res.out, flent_meta)
        except ScenarioError as e:
            fail(e)
        if not (quiet or json_out):
            err_console.print(f"flent results: {written} runs → {res.out}/runs/*/run.flent.gz", highlight=False)
    finish_sweep(res, json_out, quiet)


def run_with_progress(fn: Callable[[SweepProgress | None], T], title: str, show: bool, json_out: bool = False) -> T:
    """Run a sweep. Bad input exits 2; a sweep where every run failed exits 1 with the
    first error; Ctrl-C keeps the finished runs and exits 130."""
    from ..sweep import SweepFailed

    bar = SweepProgress(err_console, title) if show else None
    try:
        return fn(bar)
    except SweepFailed as e:
        if bar is not None:
            bar.stop()
            bar = None
        err_console.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except ScenarioError as e:
        fail(e)
    except SimulationError as e:
        fail(e)
    except KeyboardInterrupt as e:
        if bar is not None:
            bar.stop()
            bar = None
        err_console.print("interrupted: finished runs are kept; run the same command again to resume")
        if json_out:
            done = getattr(e, "sweep_result", None)
            print(json.dumps(done.to_dict() if done is not None else {"interrupted": True}))
        raise typer.Exit(130) from None
    finally:
        if bar is not None:
            bar.stop()


def finish_sweep(res: SweepOutcome, json_out: bool, quiet: bool) -> None:
    if json_out:
        print(json.dumps(res.to_dict()))
    elif not quiet:
        sweep_report(res, out_console)
    if res.n_failed:
        raise typer.Exit(1)
