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


class SweepProgress:
    """A rich progress bar for a sweep: runs done of total, failures, elapsed, ETA."""

    def __init__(self, console: Console, title: str = "sweep"):
        from rich.progress import MofNCompleteColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn(f"[bold]{title}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failed]} failed[/]"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task = None

    def __call__(self, ev: dict) -> None:
        if ev["event"] == "start":
            self.bar.start()
            self.task = self.bar.add_task("runs", total=ev["todo"], failed=0)
            if ev["skipped"]:
                self.bar.console.print(f"resume: {ev['skipped']} of {ev['total']} runs already done")
        else:
            self.bar.update(self.task, completed=ev["done"], failed=ev["failed"])
            if ev["status"] != "ok":
                err = ev["error"]
                where = f"{err['path']}: " if err.get("path") else ""
                self.bar.console.print(f"[red]run {ev['id']} failed[/] ({_point_text(ev['point'])}, seed {ev['seed']}): {err['type']}: {where}{err['message']}", highlight=False)

    def stop(self) -> None:
        self.bar.stop()


def _point_text(point: dict) -> str:
    from .aggregate import point_label

    return point_label(point)


def sweep_report(res, console: Console) -> None:
    console.print(
        f"{res.total} runs: {res.ok} ran ok, {res.skipped} already done, "
        f"[{'red' if res.n_failed else 'green'}]{res.n_failed} failed[/] "
        f"({res.wall_s:.1f} s, {res.workers} workers) → {res.out}/",
        highlight=False,
    )


@app.command()
def sweep(
    sweep_file: Annotated[Path, typer.Argument(help="Sweep file (TOML): base, grid, zip, seeds, executor.")],
    out: Annotated[Optional[Path], typer.Option(help="Output folder (default: the file's `out`, else out/NAME).")] = None,
    executor: Annotated[Optional[str], typer.Option(help="local (process pool) or dask.")] = None,
    address: Annotated[Optional[str], typer.Option(help="Dask scheduler address, tcp://host:port (default: a LocalCluster).")] = None,
    workers: Annotated[Optional[int], typer.Option(help="Worker processes (default: all cores).")] = None,
    seeds: Annotated[Optional[int], typer.Option(help="Number of seeds (overrides the file).")] = None,
    set: SetOpt = None,
    quick: Annotated[bool, typer.Option("--quick", help="Use the file's [quick] settings.")] = False,
    resume: Annotated[bool, typer.Option("--resume/--no-resume", help="Skip runs already written.")] = True,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no summary.")] = False,
) -> None:
    """Run a sweep: every grid/zip point × seed, each run written as it finishes.

    Exit status: 0 when every run succeeded, 1 when some failed, 2 for a bad input."""
    from .sweep import read_sweep_file, run_sweep_file

    try:
        sf = read_sweep_file(sweep_file)
    except ScenarioError as e:
        fail(ScenarioError(e.path, f"{e.message} (in {sweep_file})") if e.path else e)
    res = run_with_progress(
        lambda progress: run_sweep_file(
            sf, quick=quick, out=out, executor=executor, address=address, workers=workers,
            seeds=seeds, set=set, resume=resume, progress=progress,
        ),
        title=sf.name,
        show=not (quiet or json_out),
    )
    finish_sweep(res, json_out, quiet)


def run_with_progress(fn, title: str, show: bool):
    bar = SweepProgress(err_console, title) if show else None
    try:
        return fn(bar)
    except ScenarioError as e:
        fail(e)
    except SimulationError as e:
        fail(e)
    finally:
        if bar is not None:
            bar.stop()


def finish_sweep(res, json_out: bool, quiet: bool) -> None:
    if json_out:
        print(json.dumps(res.to_dict()))
    elif not quiet:
        sweep_report(res, out_console)
    if res.n_failed:
        raise typer.Exit(1)


@app.command()
def plot(
    path: Annotated[Path, typer.Argument(help="A sweep folder or a run folder.")],
    kind: Annotated[str, typer.Option(help="cdf | timeseries | sweep | bars")] = "sweep",
    metric: Annotated[Optional[str], typer.Option(help="Column to plot (e.g. sojourn_ms_mean, drop_rate; cdf: sojourn_ms or qlen_pkts).")] = None,
    table: Annotated[Optional[str], typer.Option(help="sweep/bars: summary | queues | flows | apps (default queues).")] = None,
    x: Annotated[Optional[str], typer.Option(help="sweep: the swept path on the x axis.")] = None,
    hue: Annotated[Optional[str], typer.Option(help="sweep/bars: the swept path that makes one line/colour per value.")] = None,
    group: Annotated[Optional[str], typer.Option(help="bars: the swept path on the x axis.")] = None,
    link: Annotated[Optional[str], typer.Option(help="cdf/timeseries: the link (default: the bottleneck).")] = None,
    entity: Annotated[Optional[str], typer.Option(help="sweep/bars: the link, flow id or app (default: the bottleneck link for queues).")] = None,
    app_name: Annotated[Optional[str], typer.Option("--app", help="sweep/bars: rows of this app (flows/apps tables).")] = None,
    out: Annotated[Optional[Path], typer.Option(help="File stem; .png and .svg are written (default PATH/figures/KIND-METRIC).")] = None,
) -> None:
    """Plot a run or a sweep: CDF, time series, metric vs parameter with 95 % CI, bars."""
    from . import plots

    kw: dict = {"metric": metric}
    if kind in ("cdf", "timeseries"):
        kw["link"] = link
        if kind == "timeseries":
            kw.pop("metric")
            if metric:
                kw["metrics"] = metric.split(",")
    elif kind in ("sweep", "bars"):
        kw.update(table=table, entity=entity, app=app_name, hue=hue)
        if kind == "sweep":
            kw["x"] = x
        else:
            kw["group"] = group
    if not path.exists():
        fail(ScenarioError("", f"{path}: no such folder"))
    try:
        files = plots.plot(path, kind, out=out, **kw)
    except (ValueError, FileNotFoundError) as e:
        fail(e)
    for f in files:
        out_console.print(str(f))


@app.command()
def report(
    path: Annotated[Path, typer.Argument(help="A sweep folder or a run folder.")],
    out: Annotated[Optional[Path], typer.Option(help="HTML file (default PATH/report.html).")] = None,
) -> None:
    """Write one self-contained HTML page (figures, tables, scenario, versions)."""
    from .report import build

    if not path.exists():
        fail(ScenarioError("", f"{path}: no such folder"))
    try:
        f = build(path, out)
    except (ValueError, FileNotFoundError) as e:
        fail(e)
    out_console.print(str(f))


study_app = typer.Typer(no_args_is_help=True, help="Built-in studies: list, run, report.")
app.add_typer(study_app, name="study")


@study_app.command("list")
def study_list(json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False) -> None:
    """List the studies."""
    from .study import list_studies

    studies = list_studies()
    if json_out:
        print(json.dumps(studies, indent=2))
        return
    t = Table(title="studies")
    t.add_column("name")
    t.add_column("question")
    for s in studies:
        t.add_row(s["name"], s["title"])
    out_console.print(t)


@study_app.command("run")
def study_run(
    name: Annotated[str, typer.Argument(help="Study name (aqmlab study list).")],
    quick: Annotated[bool, typer.Option("--quick", help="Fewer seeds (the study's [quick] settings).")] = False,
    out: Annotated[Optional[Path], typer.Option(help="Sweep folder (default out/studies/NAME).")] = None,
    executor: Annotated[Optional[str], typer.Option(help="local (process pool) or dask.")] = None,
    address: Annotated[Optional[str], typer.Option(help="Dask scheduler address, tcp://host:port.")] = None,
    workers: Annotated[Optional[int], typer.Option(help="Worker processes (default: all cores).")] = None,
    set: SetOpt = None,
    report_too: Annotated[bool, typer.Option("--report/--no-report", help="Write the report and figures after the runs.")] = True,
    report_out: Annotated[Optional[Path], typer.Option("--report-out", help="Report file (default OUT/report.html).")] = None,
    figures: Annotated[Optional[Path], typer.Option(help="Folder for the figures as PNG and SVG (default: figures/ beside the report).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no summary.")] = False,
) -> None:
    """Run a study's sweep (resuming), then write its report and figures."""
    from . import study

    try:
        study.study_dir(name)
    except ScenarioError as e:
        fail(e)
    res = run_with_progress(
        lambda progress: study.run(name, quick=quick, out=out, executor=executor, address=address, workers=workers, set=set, progress=progress),
        title=name,
        show=not (quiet or json_out),
    )
    if report_too and res.ok + res.skipped > 0:
        f = study.report(name, res.out, out=report_out, figures_dir=figures)
        if not (quiet or json_out):
            out_console.print(f"report: {f}\nfigures: {figures or f.parent / 'figures'}/")
    finish_sweep(res, json_out, quiet)


@study_app.command("report")
def study_report(
    name: Annotated[str, typer.Argument(help="Study name.")],
    sweep_dir: Annotated[Optional[Path], typer.Option("--dir", help="The study's sweep folder (default out/studies/NAME).")] = None,
    out: Annotated[Optional[Path], typer.Option(help="HTML file (default DIR/report.html); figures go beside it in figures/.")] = None,
) -> None:
    """Write a study's report (its README, figures and tables) from its runs."""
    from . import study

    try:
        f = study.report(name, sweep_dir, out)
    except (ScenarioError, FileNotFoundError, ValueError) as e:
        fail(e)
    out_console.print(str(f))


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
