"""The `aqmlab` command line.

Errors in the input end with one line on stderr (``error: PATH: MESSAGE``) and exit
status 2, never a traceback.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

if __name__ == "__main__":
    # `python -m aqmlab.cli`: the fast paths first, before typer and rich are imported.
    from .fastcli import try_fast

    if try_fast(sys.argv[1:]):
        sys.exit(0)

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from . import _core
from .errors import ScenarioError, SimulationError
from .results import check_run_out
from .runner import DelayedProgress, run as run_scenario
from .scenario import qdisc_docs, traffic_docs, validate as validate_scenario

def _flags_without_type() -> None:
    """Show boolean flags as ``--json``, not ``--json <bool>``: a flag takes no value.
    (Typer ≥ 0.20 prints every option's type; flags have none to give.)"""
    cls = getattr(typer.core, "TyperOption", None)
    shown = getattr(cls, "display_type_rich", None)
    if shown is None or getattr(shown, "_aqmlab", False):
        return

    def display_type_rich(self, ctx):
        return "" if getattr(self, "is_flag", False) else shown(self, ctx)

    display_type_rich._aqmlab = True
    cls.display_type_rich = display_type_rich


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
        from .sweep import build_id
        from .sweep.store import git_commit

        print(f"aqmlab {_core.__version__} (build {build_id()}, {git_commit()})")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", callback=_show_version, is_eager=True)] = False,
) -> None:
    """aqmlab: packet-level simulation of AQM and packet scheduling at access-network bottlenecks."""


def fail(e: Exception) -> None:
    from rich.markup import escape

    # escaped: messages name fields like traffic[0].rate or number[ID].value
    err_console.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(2)


SetOpt = Annotated[
    Optional[list[str]],
    typer.Option("--set", "-s", help="Override a scenario value: PATH=VALUE (repeatable)."),
]


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


#: Columns of `aqmlab run`'s tables (every column is in ``--json`` and ``--out``).
QUEUE_COLUMNS = ["link", "qdisc", "sojourn_ms_mean", "sojourn_ms_p99", "qlen_pkts_mean", "drops", "drop_rate", "utilization", "throughput_bps"]
FLOW_COLUMNS = ["flow", "app", "kind", "src", "dst", "goodput_bps", "goodput_window_bps", "owd_ms_mean", "owd_ms_p99", "rtt_ms_mean", "loss_rate", "retransmits"]
#: Columns of the apps table `aqmlab run` prints (those with a value for some app; ``--all``
#: prints every column).
APP_COLUMNS = ["app", "kind", "flows", "goodput_bps", "loss_rate", "mos", "mos_fwd", "mos_rev", "voice_loss_rate", "late_rate",
               "plt_s_median", "pages_completed", "pages_failed", "frame_loss_rate", "decodable_frame_loss_rate", "psnr_db_mean", "video_mos"]
#: More flows than this are summarised by their apps (``--all`` lists them).
MAX_FLOW_ROWS = 20


def shown_links(queues, all_rows: bool):
    """The links `aqmlab run` lists: the bottleneck (the busiest link) and every link
    that dropped packets; ``all_rows`` lists every link."""
    if all_rows or queues.height == 0:
        return queues
    import polars as pl

    top = queues["utilization"].fill_nan(None).max()
    return queues.filter((pl.col("utilization") == top) | (pl.col("drops") > 0))


def _table(df, cols: list[str], title: str, left: tuple[str, ...]) -> Table:
    cols = [c for c in cols if c in df.columns]
    t = Table(title=title)
    for c in cols:
        t.add_column(c, justify="left" if c in left else "right")
    from .report import ID_COLUMNS
    from .units import fmt

    for row in df.select(cols).iter_rows():
        t.add_row(*(_fmt(v) if c in ID_COLUMNS or not isinstance(v, (int, float)) else fmt(c, v) for c, v in zip(cols, row)))
    return t


def print_results(res, console: Console, all_rows: bool = False) -> None:
    if "warnings" in res.tables:
        print_warnings(res.tables["warnings"]["message"].to_list())
    s = res.summary.row(0, named=True)
    console.print(
        f"[bold]{s['scenario']}[/] seed {s['seed']}: {s['sim_time_s']:.1f} s simulated in "
        f"{s['wall_time_s']:.3f} s wall, {s['events']:,} events, {s['packets']:,} packets"
    )
    q = shown_links(res.queues, all_rows)
    hidden = res.queues.height - q.height
    title = "queues" if all_rows else "queues: the bottleneck and links that dropped packets"
    console.print(_table(q, QUEUE_COLUMNS, title, ("link", "qdisc")))
    if hidden:
        console.print(f"[dim]{hidden} other links not shown (--all lists every link and flow)[/]", highlight=False)
    flows = res.flows
    if flows.height and (all_rows or flows.height <= MAX_FLOW_ROWS):
        console.print(_table(flows, FLOW_COLUMNS, "flows", ("app", "kind", "src", "dst")))
    elif flows.height:
        console.print(f"[dim]{flows.height} flows: see the apps table (--all lists every flow)[/]", highlight=False)
    if res.apps.height:
        apps = res.apps
        cols = apps.columns if all_rows else [c for c in APP_COLUMNS if c in apps.columns and _has_value(apps[c])]
        console.print(_table(apps, cols, "apps" if all_rows else "apps: key columns (--all or --json for every column)", ("app", "kind")))


def _has_value(col) -> bool:
    """A column with at least one value that is not null or NaN."""
    import polars as pl

    if col.dtype.is_numeric():
        return col.cast(pl.Float64).fill_nan(None).drop_nulls().len() > 0
    return col.drop_nulls().len() > 0


@app.command()
def run(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    seed: Annotated[Optional[int], typer.Option(help="Random seed (default: the scenario's).")] = None,
    set: SetOpt = None,
    out: Annotated[Optional[Path], typer.Option(help="Write the tables as Parquet (and pcap files) here.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no tables.")] = False,
    all_rows: Annotated[bool, typer.Option("--all", help="List every link and flow (default: the bottleneck, links that dropped packets, up to 20 flows).")] = False,
    format: Annotated[str, typer.Option("--format", help="parquet: --out is a folder of tables; flent: --out is a flent result file (FILE.flent.gz, docs/flent.md).")] = "parquet",
) -> None:
    """Simulate one scenario."""
    flent_meta = None
    try:
        if format not in ("parquet", "flent"):
            raise ScenarioError("--format", f"{format!r}: expected parquet or flent")
        if format == "flent":
            from . import flent
            from .scenario import load_scenario

            if out is None or not str(out).endswith((".flent.gz", ".flent")):
                raise ScenarioError("--out", f"{out}: --format flent writes one file: expected --out FILE.flent.gz")
            doc, flent_meta, notes = flent.prepare(load_scenario(scenario, set))
            for n in notes:
                err_console.print(f"flent export: {n}", highlight=False)
            scenario, set = doc, None
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
        res = run_scenario(scenario, seed=seed, set=set, out=out, progress=progress)
    except (ScenarioError, SimulationError) as e:
        fail(e)
    except KeyboardInterrupt:
        err_console.print("interrupted: the run was stopped before its end; nothing was written")
        if json_out:
            print(json.dumps({"interrupted": True, "finished": False, "scenario": str(scenario)}))
        raise typer.Exit(130)
    finally:
        if bar is not None and bar.live.is_started:
            bar.stop()
    if out is not None:
        try:
            if format == "flent":
                from . import flent

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
    quick: Annotated[bool, typer.Option("--quick", help="Use the file's \\[quick] settings.")] = False,
    resume: Annotated[bool, typer.Option("--resume/--no-resume", help="Skip runs already written (after checking them).")] = True,
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed", help="Resume over runs made by another aqmlab build.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no summary.")] = False,
    format: Annotated[str, typer.Option("--format", help="parquet (the tables), or flent: also a run.flent.gz in every run's folder (docs/flent.md).")] = "parquet",
) -> None:
    """Run a sweep: every grid/zip point × seed, each run written as it finishes.

    Exit status: 0 when every run succeeded, 1 when some failed, 2 for a bad input."""
    from .sweep import read_sweep_file, run_sweep_file

    base = None
    flent_meta = None
    try:
        sf = read_sweep_file(sweep_file)
        if format not in ("parquet", "flent"):
            raise ScenarioError("--format", f"{format!r}: expected parquet or flent")
        if format == "flent":
            from . import flent
            from .scenario import load_scenario

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
        from . import flent

        try:
            n = flent.write_sweep(res.out, flent_meta)
        except ScenarioError as e:
            fail(e)
        if not (quiet or json_out):
            err_console.print(f"flent results: {n} runs → {res.out}/runs/*/run.flent.gz", highlight=False)
    finish_sweep(res, json_out, quiet)


def run_with_progress(fn, title: str, show: bool, json_out: bool = False):
    """Run a sweep. Bad input exits 2; a sweep where every run failed exits 1 with the
    first error; Ctrl-C keeps the finished runs and exits 130."""
    from .sweep import SweepFailed

    bar = SweepProgress(err_console, title) if show else None
    try:
        return fn(bar)
    except SweepFailed as e:
        if bar is not None:
            bar.stop()
            bar = None
        err_console.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)
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
        raise typer.Exit(130)
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
    kind: Annotated[str, typer.Option(help="cdf | timeseries | sweep | bars | owd-cdf | plt-cdf | plt-box")] = "sweep",
    metric: Annotated[Optional[str], typer.Option(help="Column to plot (e.g. sojourn_ms_mean, drop_rate; cdf: sojourn_ms or qlen_pkts).")] = None,
    table: Annotated[Optional[str], typer.Option(help="sweep/bars: summary | queues | flows | apps (default queues).")] = None,
    x: Annotated[Optional[str], typer.Option(help="sweep: the swept path on the x axis.")] = None,
    hue: Annotated[Optional[str], typer.Option(help="sweep/bars: the swept path that makes one line/colour per value.")] = None,
    group: Annotated[Optional[str], typer.Option(help="bars: the swept path on the x axis.")] = None,
    link: Annotated[Optional[str], typer.Option(help="cdf/timeseries: the link (default: the bottleneck).")] = None,
    entity: Annotated[Optional[str], typer.Option(help="sweep/bars: the link, flow id or app (default: the bottleneck link for queues).")] = None,
    app_name: Annotated[Optional[str], typer.Option("--app", help="sweep/bars: rows of this app (flows/apps tables).")] = None,
    out: Annotated[Optional[Path], typer.Option(help="File stem; .png, .svg and .pdf are written (default PATH/figures/KIND-METRIC).")] = None,
    t_from: Annotated[Optional[float], typer.Option("--from", help="timeseries: start of the time axis (seconds).")] = None,
    t_to: Annotated[Optional[float], typer.Option("--to", help="timeseries: end of the time axis (seconds).")] = None,
    logx: Annotated[Optional[bool], typer.Option("--logx/--linx", help="cdf, owd-cdf, plt-cdf, sweep: log x axis (sweep: default when the swept values double).")] = None,
    logy: Annotated[bool, typer.Option("--logy", help="sweep, plt-box: log y axis.")] = False,
) -> None:
    """Plot a run or a sweep: CDF, time series, metric vs parameter with 95 % CI, bars."""
    from . import plots

    kw: dict = {"metric": metric}
    if kind in ("cdf", "timeseries"):
        kw["link"] = link
        if kind == "timeseries":
            kw.pop("metric")
            kw.update(t_from=t_from, t_to=t_to)
            if metric:
                kw["metrics"] = metric.split(",")
    elif kind == "owd-cdf":
        kw = {"app": app_name, "flows": [int(f) for f in entity.split(",")] if entity else None}
    elif kind in ("plt-cdf", "plt-box"):
        kw = {"app": app_name}
    elif kind in ("sweep", "bars"):
        kw.update(table=table, entity=entity, app=app_name, hue=hue)
        if kind == "sweep":
            kw["x"] = x
        else:
            kw["group"] = group
    if kind in ("cdf", "owd-cdf", "plt-cdf", "sweep") and logx is not None:
        kw["logx"] = logx
    if kind in ("sweep", "plt-box") and logy:
        kw["logy"] = True
    if not path.exists():
        fail(ScenarioError("", f"{path}: no such folder"))
    import polars as pl

    try:
        files = plots.plot(path, kind, out=out, **kw)
    except (ValueError, FileNotFoundError, KeyError, pl.exceptions.PolarsError) as e:
        fail(ScenarioError("--metric" if isinstance(e, (KeyError, pl.exceptions.ColumnNotFoundError)) else "", f"{e}"))
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


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="File to write.")] = Path("scenario.toml"),
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented starter scenario (five uploads and a call on a 5 Mbit/s uplink)."""
    from .starter import write

    try:
        out_console.print(str(write(path, force)))
    except FileExistsError as e:
        fail(ScenarioError("", str(e)))


@app.command("compare")
def compare_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Two or more run, sweep or study output folders; the first is the baseline.")],
    metric: Annotated[Optional[list[str]], typer.Option("--metric", "-m", help="Only this metric (repeatable), e.g. sojourn_ms_mean.")] = None,
    table: Annotated[Optional[list[str]], typer.Option("--table", help="Only this table (repeatable): summary | queues | flows | apps.")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Folder for compare.csv and, with --metric, one overlaid figure per metric.")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Print every row, not only those that differ.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False,
) -> None:
    """Put runs, sweeps or studies side by side: each metric's mean and 95 % interval per
    source and its difference to the first, with Welch's interval (n ≥ 3 on both sides)."""
    from . import compare

    try:
        df = compare.table(paths, metrics=metric, tables=table)
    except (ValueError, FileNotFoundError) as e:
        fail(ScenarioError("", str(e)))
    names = compare._names([Path(p) for p in paths])
    if out is not None:
        from . import plots, safefile

        out.mkdir(parents=True, exist_ok=True)
        safefile.write_with(out / "compare.csv", lambda f: df.write_csv(f))
        for m in metric or []:
            plots.save(compare.figure(paths, m), out / f"compare-{m}")
    if json_out:
        print(df.write_json())
        return
    import polars as pl

    show = df
    if not all_rows:
        diffs = [pl.col(f"diff_{n}").fill_null(0.0).abs() > 0 for n in names[1:]]
        show = df.filter(pl.any_horizontal(diffs))
    t = Table(title=f"{' vs '.join(names)} ({show.height} of {df.height} rows{'' if all_rows else ' that differ; --all for every row'})")
    for c in ("point", "table", "entity", "metric", *names, *[f"Δ {n}" for n in names[1:]]):
        t.add_column(c, justify="left" if c in ("point", "table", "entity", "metric") else "right")
    from .units import fmt as fmt_unit
    from .units import fmt_interval

    for r in show.head(200).iter_rows(named=True):
        cells = [str(r["point"]), r["table"], str(r["entity"] or r["app"] or ""), r["metric"]]
        cells += [fmt_interval(r["metric"], r[f"mean_{n}"], None, r[f"ci_low_{n}"], r[f"ci_high_{n}"]) for n in names]
        for n in names[1:]:
            d = r[f"diff_{n}"]
            mark = {True: " *", False: "", None: ""}[r[f"changed_{n}"]]
            pct = f" ({r[f'diff_pct_{n}']:+.1f} %)" if r[f"diff_pct_{n}"] is not None else ""
            cells.append("–" if d is None else f"{'+' if d > 0 else ''}{fmt_unit(r['metric'], d)}{pct}{mark}")
        t.add_row(*cells)
    out_console.print(t)
    out_console.print("* Welch's 95 % interval of the difference excludes 0 (both sides n ≥ 3).")


@app.command("export")
def export_cmd(
    path: Annotated[Path, typer.Argument(help="A run, sweep or study output folder.")],
    out: Annotated[Path, typer.Option(help="Folder to write into.")],
    fmt: Annotated[str, typer.Option("--format", help="csv | parquet | json")] = "csv",
) -> None:
    """Write every table of a run, sweep or study as CSV, Parquet or JSON."""
    from .export import export

    try:
        files = export(path, out, fmt)
    except (ValueError, FileNotFoundError) as e:
        fail(ScenarioError("--format" if "--format" in str(e) else "", str(e)))
    for f in files:
        out_console.print(str(f))


study_app = typer.Typer(no_args_is_help=True, help="Built-in studies: list, run, report, compare with the paper.")
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
    quick: Annotated[bool, typer.Option("--quick", help="Fewer seeds (the study's \\[quick] settings).")] = False,
    experiment: Annotated[Optional[list[str]], typer.Option("--experiment", "-e", help="Run only this experiment (repeatable; default: all).")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Study folder (default out/studies/NAME).")] = None,
    executor: Annotated[Optional[str], typer.Option(help="local (process pool) or dask.")] = None,
    address: Annotated[Optional[str], typer.Option(help="Dask scheduler address, tcp://host:port.")] = None,
    workers: Annotated[Optional[int], typer.Option(help="Worker processes (default: all cores).")] = None,
    set: SetOpt = None,
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed", help="Resume over runs made by another aqmlab build.")] = False,
    report_too: Annotated[bool, typer.Option("--report/--no-report", help="Write the report and figures after the runs.")] = True,
    report_out: Annotated[Optional[Path], typer.Option("--report-out", help="Report file (default OUT/report.html).")] = None,
    figures: Annotated[Optional[Path], typer.Option(help="Folder for the figures as PNG and SVG (default: figures/ beside the report).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no summary.")] = False,
) -> None:
    """Run a study's sweeps (resuming), then write its report and figures."""
    from . import study

    try:
        d = study.study_dir(name)
    except ScenarioError as e:
        fail(e)
    outcomes = run_with_progress(
        lambda progress: study.run(name, quick=quick, out=out, only=experiment, executor=executor, address=address, workers=workers, set=set, progress=progress, allow_mixed=allow_mixed),
        title=name,
        show=not (quiet or json_out),
    )
    if report_too and any(o.ok + o.skipped > 0 for o in outcomes.values()):
        first = next(iter(outcomes.values())).out
        f = study.report(name, out or (first.parent if study.has_experiments(d) else first), out=report_out, figures_dir=figures)
        if not (quiet or json_out):
            out_console.print(f"report: {f}\nfigures: {figures or f.parent / 'figures'}/")
    if json_out:
        docs = {e: o.to_dict() for e, o in outcomes.items()}
        print(json.dumps(docs if study.has_experiments(d) else next(iter(docs.values()))))
    elif not quiet:
        for o in outcomes.values():
            sweep_report(o, out_console)
    if any(o.n_failed for o in outcomes.values()):
        raise typer.Exit(1)


@study_app.command("run-all")
def study_run_all(
    quick: Annotated[bool, typer.Option("--quick", help="Every study's \\[quick] settings.")] = False,
    out: Annotated[Path, typer.Option(help="Folder: one sub-folder per study, and index.html.")] = Path("out"),
    only: Annotated[Optional[list[str]], typer.Option("--study", help="Run only this study (repeatable; default: all).")] = None,
    executor: Annotated[Optional[str], typer.Option(help="local (process pool) or dask.")] = None,
    address: Annotated[Optional[str], typer.Option(help="Dask scheduler address, tcp://host:port.")] = None,
    workers: Annotated[Optional[int], typer.Option(help="Worker processes (default: all cores).")] = None,
    set: SetOpt = None,
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed", help="Resume over runs made by another aqmlab build.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one record per study as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars, no summary.")] = False,
) -> None:
    """Run every study (resuming) and write OUT/index.html linking their reports. A study
    that fails is listed in the index; the others still run. Exits 1 if any failed."""
    from . import study

    show = not (quiet or json_out)
    try:
        index, records = study.run_all(out, quick=quick, only=only, executor=executor, address=address, workers=workers,
                                       set=set, allow_mixed=allow_mixed,
                                       progress_for=(lambda n: SweepProgress(err_console, n)) if show else None)
    except ScenarioError as e:
        fail(e)
    except KeyboardInterrupt:
        err_console.print("interrupted: finished runs are kept; run the same command again to resume")
        raise typer.Exit(130)
    if json_out:
        print(json.dumps(records))
    elif not quiet:
        for r in records:
            state = f"[red]{r['error']}[/]" if "error" in r else f"{r['runs']} runs, {r['failed']} failed → {r['report']}"
            sim = f", {r['sim_s'] / 3600:.1f} simulated hours" if r.get("sim_s") else ""
            t = r.get("reproduction")
            repro = (f"; vs the paper: trends held {t['trends_held']}/{t['trends_total']}, numbers inside or within "
                     f"{t['numbers_ok']}/{t['numbers_total']}") if t else ""
            out_console.print(f"{r['name']}: {state} ({r['wall_s']:.0f} s{sim}){repro}", highlight=False)
        out_console.print(f"index: {index}")
    if any("error" in r or r["failed"] for r in records):
        raise typer.Exit(1)


@study_app.command("report")
def study_report(
    name: Annotated[str, typer.Argument(help="Study name.")],
    sweep_dir: Annotated[Optional[Path], typer.Option("--dir", help="The study's folder (default out/studies/NAME).")] = None,
    out: Annotated[Optional[Path], typer.Option(help="HTML file (default DIR/report.html); figures go beside it in figures/.")] = None,
) -> None:
    """Write a study's report (its README, figures and tables) from its runs."""
    from . import study

    try:
        f = study.report(name, sweep_dir, out)
    except (ScenarioError, FileNotFoundError, ValueError) as e:
        fail(e)
    out_console.print(str(f))


@study_app.command("compare")
def study_compare(
    name: Annotated[str, typer.Argument(help="Study name (it needs studies/NAME/paper.toml).")],
    out: Annotated[Optional[Path], typer.Option(help="The study's output: OUT/NAME (as run-all writes it) or OUT itself (as `study run NAME --out OUT` writes it); default out, else out/studies. The scorecard is written there.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the scorecard as JSON.")] = False,
) -> None:
    """Score a finished study against its paper (studies/NAME/paper.toml): each reported
    number and stated trend with aqmlab's mean ± 95 % CI and a verdict. Writes
    OUT/NAME/scorecard.md and scorecard.json."""
    from . import scorecard, study

    try:
        d = study.study_dir(name)
        card = study.compare(name, study.study_out_of(d, out) if out else None)
    except (ScenarioError, FileNotFoundError) as e:
        fail(e)
    if json_out:
        print(json.dumps(card, default=str))
        return
    for m in card["missing"]:
        err_console.print(f"missing: {m}", highlight=False, markup=False)
    nh, nr, th, tr = scorecard.rows(card)
    for title, head, body in (("numbers", nh, nr), ("trends", th, tr)):
        keep = [i for i, h in enumerate(head) if h not in ("where", "note", "claim")]  # those are in scorecard.md
        t = Table(title=f"{d.name}: {title}", show_lines=True)
        for i in keep:
            t.add_column(head[i], overflow="fold")
        for r in body:
            t.add_row(*[Text(str(r[i])) for i in keep])  # plain text: cells hold [entity] and select values
        out_console.print(t)
    out_console.print(f"{scorecard.mode_text(card['mode'])}\n[bold]{scorecard.totals_line(card)}[/]\n"
                      f"scorecard: {Path(card['study_out']) / 'scorecard.md'}", highlight=False)


@study_app.command("ns2")
def study_ns2(
    name: Annotated[str, typer.Argument(help="Study name (it needs studies/NAME/ns2/*.tcl).")],
    out: Annotated[Optional[Path], typer.Option(help="The study's output: OUT/NAME or OUT itself (as for `study compare`); default out, else out/studies. ns2.json is written there.")] = None,
    ns: Annotated[Optional[str], typer.Option(help="The ns-2 binary (default `ns` on PATH); one with Queue/CoDel and Queue/PIE (ns2/build-ns2-aqm.sh) also runs ns2/aqm/*.tcl.")] = None,
) -> None:
    """Run the study's ns-2.35 reconstructions (studies/NAME/ns2/*.tcl, with `ns`) and
    write OUT/NAME/ns2.json; `study compare` then shows an ns-2 column."""
    from . import study

    try:
        d = study.study_dir(name)
        doc = study.ns2(name, study.study_out_of(d, out) if out else None, ns=ns)
    except (ScenarioError, FileNotFoundError, RuntimeError) as e:
        fail(e)
    for k, v in doc["values"].items():
        out_console.print(f"{k} = {v}", highlight=False)
    for f, why in doc["skipped"].items():
        out_console.print(f"[yellow]skipped {f}: {why}[/]", highlight=False)
    out_console.print(f"ns {doc['ns']}: {len(doc['values'])} values from {', '.join(doc['scripts'])}", highlight=False)


@app.command()
def validate(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML).")],
    set: SetOpt = None,
) -> None:
    """Check a scenario file without running it (and print its warnings)."""
    from .scenario import warnings

    try:
        found = warnings(scenario, set)
    except ScenarioError as e:
        fail(e)
    print_warnings(found)
    out_console.print(f"{scenario}: ok" + (f" ({len(found)} warning{'s' if len(found) > 1 else ''})" if found else ""))


def print_warnings(messages) -> None:
    """Scenario warnings, on stderr so that --json output stays clean."""
    for m in messages:
        err_console.print(f"[yellow]warning:[/] {m}", highlight=False, soft_wrap=True)


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
def traffic(
    name: Annotated[Optional[str], typer.Argument(help="Show one traffic kind.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List traffic kinds with their parameters."""
    docs = traffic_docs()
    if name is not None:
        docs = [d for d in docs if d["kind"] == name]
        if not docs:
            fail(ScenarioError("kind", f'"{name}": unknown traffic kind; known: {", ".join(d["kind"] for d in traffic_docs())}'))
    print_kind_docs(docs, json_out, with_source=False)


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


@app.command()
def emulate(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML) with a dumbbell topology.")],
    seed: Annotated[Optional[int], typer.Option(help="Random seed (default: the scenario's).")] = None,
    set: SetOpt = None,
    out: Annotated[Optional[Path], typer.Option(help="Write the tables as Parquet here.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Run above the measured rate limit of the emulator.")] = False,
) -> None:
    """Run the scenario's bottleneck live between two network namespaces, with the
    kernel's TCP (root; see docs/emulation.md)."""
    from .emulate import emulate as run_emulation

    try:
        if out is not None:
            check_run_out(out)
        if not json_out:
            err_console.print("emulating in real time (the scenario's duration)...", highlight=False)
        res = run_emulation(scenario, seed=seed, set=set, force=force, log=lambda m: err_console.print(m, highlight=False))
        if out is not None:
            res.write_parquet(out)
    except (ScenarioError, SimulationError) as e:
        fail(e)
    if json_out:
        d = res.to_dict()
        d = {k: d[k] for k in ("summary", "queues", "flows", "apps", "emulation")}
        print(json.dumps(d, default=str))
        return
    e = res.emulation.row(0, named=True)
    out_console.print(
        f"[bold]{res.summary['scenario'][0]}[/] emulated for {e['measured_s']:.1f} s (after warm-up); "
        f"scheduling error p50 {e['sched_err_us_p50']:.1f} µs, p99 {e['sched_err_us_p99']:.1f} µs, "
        f"max {e['sched_err_us_max']:.0f} µs over {e['datagrams']:,} datagrams ({e['late_over_1ms']} later than 1 ms)",
        highlight=False,
    )
    out_console.print(_table(res.queues, QUEUE_COLUMNS, "queues (emulated)", ("link", "qdisc")))
    out_console.print(_table(res.flows, FLOW_COLUMNS + ["timeouts", "kernel_cc"], "flows (Linux TCP counters)", ("app", "kind", "src", "dst", "kernel_cc")))
    if out is not None:
        out_console.print(f"tables written to {out}/")


@app.command("compare-real")
def compare_real(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML) with a dumbbell topology.")],
    seed: Annotated[Optional[int], typer.Option(help="First random seed for both runs (default: the scenario's).")] = None,
    seeds: Annotated[int, typer.Option(help="Number of seeds (seed, seed+1, ...): mean and spread per metric.", min=1)] = 1,
    set: SetOpt = None,
    out: Annotated[Optional[Path], typer.Option(help="Folder for every run's tables, comparison.csv, info.json and comparison.png.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the comparison and the kernel/emulator info as JSON.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Run above the measured rate limit of the emulator.")] = False,
    gso_max_segs: Annotated[Optional[int], typer.Option(help="Kernel-side experiment: cap the TUN devices' GSO segments per packet (1: the kernel sends single segments, no TSO bursts).", min=1, max=65535)] = None,
    quickack: Annotated[bool, typer.Option("--quickack", help="Kernel-side experiment: routes with quickack 1 (the kernel receivers ACK every segment).")] = False,
) -> None:
    """Run the scenario simulated (TCP profile linux) and emulated (Linux TCP) with the
    same seeds; print per metric the mean ± sample sd (min–max) of each side over the
    seeds, their ratio and whether the ranges overlap, the kernel release and TCP
    sysctls, and each emulated run's scheduling p99/p99.9 and late datagrams (runs
    whose emulator did not keep up are left out of the emulated statistics)."""
    from .emulate.compare import compare_real as run_compare

    try:
        if out is not None:
            check_run_out(out)
        t, _, _, info = run_compare(scenario, seed=seed, seeds=seeds, set=set, out=out, force=force,
                                    gso_max_segs=gso_max_segs, quickack=quickack,
                                    log=lambda m: err_console.print(m, highlight=False))
    except (ScenarioError, SimulationError) as e:
        fail(e)
    if json_out:
        print(json.dumps({"table": t.to_dicts(), "info": info}, default=str))
        return
    n = len(info["seeds"])
    kept = sum(h["trusted"] for h in info["emulator"])
    tab = Table(title=f"simulated (TCP profile linux) vs emulated (Linux TCP {info['kernel']}), "
                      f"{n} seed(s), emulated: {kept} run(s) the emulator kept up with")

    def cell(m: float, sd: float, lo: float, hi: float) -> str:
        if m is None or math.isnan(m):
            return "nan"
        return _fmt(m) if n == 1 else f"{_fmt(m)} ± {_fmt(sd)} ({_fmt(lo)}–{_fmt(hi)})"

    for c in ("metric", "simulated", "emulated", "real/sim", "overlap"):
        tab.add_column(c, justify="left" if c == "metric" else "right")
    for r in t.iter_rows(named=True):
        sim = cell(r["simulated"], r["simulated_sd"], r["simulated_min"], r["simulated_max"])
        emu = cell(r["emulated"], r["emulated_sd"], r["emulated_min"], r["emulated_max"])
        if r["metric"] == "drop_pct" and math.isnan(r["simulated"]):
            sim = "0/0"
        if r["metric"] == "drop_pct" and math.isnan(r["emulated"]) and kept:
            emu = "0/0"
        ov = "" if r["ranges_overlap"] is None else ("yes" if r["ranges_overlap"] else "no")
        tab.add_row(r["metric"], sim, emu, r["ratio_text"], ov)
    out_console.print(tab)
    for s, h in zip(info["seeds"], info["emulator"]):
        flag = "" if h["trusted"] else "  [bold red]NOT TRUSTED: the emulator did not keep up (left out)[/]"
        out_console.print(f"seed {s}: emulator scheduling error p99 {h['sched_err_us_p99']:.1f} µs, p99.9 {h['sched_err_us_p999']:.1f} µs, "
                          f"{h['late_over_1ms']} of {h['datagrams']:,} datagrams later than 1 ms{flag}", highlight=False)
    hz = f", CONFIG_HZ={info['hz']}" if info["hz"] else ""
    out_console.print(f"kernel {info['kernel']}{hz}; " + ", ".join(f"{k}={v}" for k, v in info["sysctls"].items()), highlight=False)
    if out is not None:
        out_console.print(f"written to {out}/ (comparison.csv, info.json, comparison.png, sSEED/simulated|emulated/)")


@app.command()
def characterize(
    aqm: Annotated[str, typer.Argument(help="Queue discipline to characterise (aqmlab qdiscs lists them).")],
    against: Annotated[Optional[str], typer.Option(help="Further disciplines to run beside it, comma-separated (DropTail always runs).")] = None,
    set: SetOpt = None,
    quick: Annotated[bool, typer.Option("--quick", help="30 s runs, one seed, fewer RTTs: a first look in about a minute.")] = False,
    out: Annotated[Optional[Path], typer.Option(help="Output folder (default out/characterize/AQM).")] = None,
    sections: Annotated[Optional[str], typer.Option(help="Only these RFC 7928 sections or experiment ids, comma-separated (e.g. 5.1,6,8.2).")] = None,
    seeds: Annotated[Optional[int], typer.Option(help="Seeds per point (default 3; 1 with --quick).")] = None,
    workers: Annotated[Optional[int], typer.Option(help="Worker processes (default: all cores).")] = None,
    buffer: Annotated[str, typer.Option(help="The buffer (limit) of every discipline: a BDP multiple, packets or bytes.")] = "1BDP",
) -> None:
    """Characterise a queue discipline with the RFC 7928 guideline experiments beside
    DropTail; writes OUT/report.html (docs/characterize.md)."""
    from .characterize import characterize as run_suite

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


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
