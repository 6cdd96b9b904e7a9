"""The `aqmlab` command line.

Errors in the input end with one line on stderr (``error: PATH: MESSAGE``) and exit
status 2, never a traceback.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from . import _core
from .errors import ScenarioError, SimulationError
from .runner import DelayedProgress, run as run_scenario
from .scenario import qdisc_docs, traffic_docs, validate as validate_scenario

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="aqmlab: packet-level simulation of AQM and packet scheduling at access-network bottlenecks.",
)
out_console = Console()
err_console = Console(stderr=True)


def fail(e: Exception) -> None:
    err_console.print(f"[bold red]error:[/] {e}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(2)


SetOpt = Annotated[
    Optional[list[str]],
    typer.Option("--set", "-s", help="Override a scenario value: PATH=VALUE (repeatable)."),
]


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def print_results(res, console: Console) -> None:
    s = res.summary.row(0, named=True)
    console.print(
        f"[bold]{s['scenario']}[/] seed {s['seed']}: {s['sim_time_s']:.1f} s simulated in "
        f"{s['wall_time_s']:.3f} s wall, {s['events']:,} events, {s['packets']:,} packets"
    )
    q = res.queues.filter(res.queues["arrivals"] > 0)
    t = Table(title="queues (links that carried traffic)")
    cols = ["link", "qdisc", "sojourn_ms_mean", "sojourn_ms_p99", "qlen_pkts_mean", "drops", "drop_rate", "utilization", "throughput_bps"]
    for c in cols:
        t.add_column(c, justify="left" if c in ("link", "qdisc") else "right")
    for row in q.select(cols).iter_rows():
        t.add_row(*(_fmt(v) for v in row))
    console.print(t)
    if res.apps.height:
        t = Table(title="apps")
        for c in res.apps.columns:
            t.add_column(c, justify="left" if c in ("app", "kind") else "right")
        for row in res.apps.iter_rows():
            t.add_row(*(_fmt(v) for v in row))
        console.print(t)


@app.command()
def run(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    seed: Annotated[Optional[int], typer.Option(help="Random seed (default: the scenario's).")] = None,
    set: SetOpt = None,
    out: Annotated[Optional[Path], typer.Option(help="Write the tables as Parquet (and pcap files) here.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no tables.")] = False,
) -> None:
    """Simulate one scenario."""
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
        res = run_scenario(scenario, seed=seed, set=set, out=out, progress=progress)
    except (ScenarioError, SimulationError) as e:
        fail(e)
    finally:
        if bar is not None and bar.live.is_started:
            bar.stop()
    if out is not None:
        res.write_parquet(out)
    if json_out:
        print(res.to_json())
    elif not quiet:
        print_results(res, out_console)
        if out is not None:
            out_console.print(f"tables written to {out}/")


@app.command()
def validate(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    set: SetOpt = None,
) -> None:
    """Check a scenario file without running it."""
    try:
        validate_scenario(scenario, set)
    except ScenarioError as e:
        fail(e)
    out_console.print(f"{scenario}: ok")


@app.command()
def qdiscs(
    name: Annotated[Optional[str], typer.Argument(help="Show one discipline.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List queue disciplines with their parameters, units, defaults and sources."""
    docs = qdisc_docs()
    if name is not None:
        docs = [d for d in docs if d["kind"] == name]
        if not docs:
            fail(ScenarioError("qdisc", f'"{name}": unknown queue discipline; known: {", ".join(d["kind"] for d in qdisc_docs())}'))
    print_kind_docs(docs, json_out, with_source=True)


@app.command()
def traffic(json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False) -> None:
    """List traffic kinds with their parameters."""
    print_kind_docs(traffic_docs(), json_out, with_source=False)


def print_kind_docs(docs: list[dict], json_out: bool, with_source: bool) -> None:
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


@app.command()
def bench(
    scenarios: Annotated[Optional[list[Path]], typer.Argument(help="Scenario files (default: the benchmark set).")] = None,
    repeat: Annotated[int, typer.Option(help="Runs per scenario; the best is reported.")] = 3,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Time whole scenarios: wall time, events/s, packet-hops/s."""
    if not scenarios:
        root = Path(__file__).resolve().parents[2]
        scenarios = sorted((root / "benches" / "scenarios").glob("*.toml")) + [root / "examples" / "mm1.toml"]
    rows = []
    for sc in scenarios:
        best = None
        try:
            for _ in range(repeat):
                t0 = time.perf_counter()
                res = run_scenario(sc)
                wall = time.perf_counter() - t0
                core_wall = res.summary["wall_time_s"][0]
                if best is None or core_wall < best[0]:
                    best = (core_wall, wall, res)
        except (ScenarioError, SimulationError) as e:
            fail(e)
        core_wall, wall, res = best
        s = res.summary.row(0, named=True)
        rows.append(
            {
                "scenario": sc.stem,
                "sim_time_s": s["sim_time_s"],
                "wall_time_s": core_wall,
                "wall_time_with_python_s": wall,
                "events": s["events"],
                "events_per_s": s["events"] / core_wall,
                "packet_hops_per_s": s["packet_hops"] / core_wall,
                "packets_per_s": s["packets"] / core_wall,
            }
        )
    if json_out:
        print(json.dumps(rows, indent=2))
        return
    t = Table(title="aqmlab bench (best of %d)" % repeat)
    for c in rows[0]:
        t.add_column(c)
    for r in rows:
        t.add_row(*(_fmt(v) for v in r.values()))
    out_console.print(t)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
