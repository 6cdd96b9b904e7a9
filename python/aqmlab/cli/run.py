"""`aqmlab run`: one scenario."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from ..errors import ScenarioError, SimulationError
from ..results import check_run_out
from ..runner import DelayedProgress
from ..runner import run as run_scenario
from .common import SetOpt, app, err_console, fail, out_console
from .tables import print_results


@app.command()
def run(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    seed: Annotated[int | None, typer.Option(help="Random seed (default: the scenario's).")] = None,
    set: SetOpt = None,
    out: Annotated[Path | None, typer.Option(help="Write the tables as Parquet (and pcap files) here.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no tables.")] = False,
    all_rows: Annotated[bool, typer.Option("--all", help="List every link and flow (default: the bottleneck, links that dropped packets, up to 20 flows).")] = False,
    format: Annotated[str, typer.Option("--format", help="parquet: --out is a folder of tables; flent: --out is a flent result file (FILE.flent.gz, docs/flent.md).")] = "parquet",
) -> None:
    """Simulate one scenario."""
    flent_meta = None
    #: What is simulated: the file, or the document flent's preset made of it.
    source: Path | dict[str, Any] = scenario
    try:
        if format not in ("parquet", "flent"):
            raise ScenarioError("--format", f"{format!r}: expected parquet or flent")
        if format == "flent":
            from .. import flent
            from ..scenario import load_scenario

            if out is None or not str(out).endswith((".flent.gz", ".flent")):
                raise ScenarioError("--out", f"{out}: --format flent writes one file: expected --out FILE.flent.gz")
            doc, flent_meta, notes = flent.prepare(load_scenario(scenario, set))
            for n in notes:
                err_console.print(f"flent export: {n}", highlight=False)
            source, set = doc, None
        elif out is not None:
            check_run_out(out)
    except ScenarioError as e:
        fail(e)
    progress = None
    bar = None
    if not (quiet or json_out):
        bar = Progress(TextColumn("[bold]simulating"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"), TimeRemainingColumn(), console=err_console, transient=True)
        task = bar.add_task("run", total=1.0)

        def show(fraction: float) -> None:
            if not bar.live.is_started:
                bar.start()
            bar.update(task, completed=fraction)

        progress = DelayedProgress(show, after=1.0)
    try:
        res = run_scenario(source, seed=seed, set=set, out=out, progress=progress)
    except (ScenarioError, SimulationError) as e:
        fail(e)
    except KeyboardInterrupt:
        err_console.print("interrupted: the run was stopped before its end; nothing was written")
        if json_out:
            print(json.dumps({"interrupted": True, "finished": False, "scenario": str(scenario)}))
        raise typer.Exit(130) from None
    finally:
        if bar is not None and bar.live.is_started:
            bar.stop()
    if out is not None:
        try:
            if format == "flent":
                from .. import flent

                flent.write(res, res.scenario, out, flent_meta)
            else:
                res.write_parquet(out)
        except ScenarioError as e:
            fail(e)
    if res.pcap_files and out is None:
        where = Path(res.pcap_files[0]).parent
        err_console.print(f"pcap written to {where}/ (no --out given): {', '.join(Path(f).name for f in res.pcap_files)}", highlight=False, soft_wrap=True)
    if json_out:
        print(res.to_json())
    elif not quiet:
        print_results(res, out_console, all_rows)
        if out is not None:
            out_console.print(f"flent result written to {out}" if format == "flent" else f"tables written to {out}/")
