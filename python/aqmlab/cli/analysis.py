"""Commands on finished runs: `plot`, `report`, `compare`, `export`; and `init` (a starter scenario)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ..errors import ScenarioError
from .common import app, fail, out_console


@app.command()
def plot(
    path: Annotated[Path, typer.Argument(help="A sweep folder or a run folder.")],
    kind: Annotated[str, typer.Option(help="cdf | timeseries | sweep | bars | owd-cdf | plt-cdf | plt-box")] = "sweep",
    metric: Annotated[str | None, typer.Option(help="Column to plot (e.g. sojourn_ms_mean, drop_rate; cdf: sojourn_ms or qlen_pkts).")] = None,
    table: Annotated[str | None, typer.Option(help="sweep/bars: summary | queues | flows | apps (default queues).")] = None,
    x: Annotated[str | None, typer.Option(help="sweep: the swept path on the x axis.")] = None,
    hue: Annotated[str | None, typer.Option(help="sweep/bars: the swept path that makes one line/colour per value.")] = None,
    group: Annotated[str | None, typer.Option(help="bars: the swept path on the x axis.")] = None,
    link: Annotated[str | None, typer.Option(help="cdf/timeseries: the link (default: the bottleneck).")] = None,
    entity: Annotated[str | None, typer.Option(help="sweep/bars: the link, flow id or app (default: the bottleneck link for queues).")] = None,
    app_name: Annotated[str | None, typer.Option("--app", help="sweep/bars: rows of this app (flows/apps tables).")] = None,
    out: Annotated[Path | None, typer.Option(help="File stem; .png, .svg and .pdf are written (default PATH/figures/KIND-METRIC).")] = None,
    t_from: Annotated[float | None, typer.Option("--from", help="timeseries: start of the time axis (seconds).")] = None,
    t_to: Annotated[float | None, typer.Option("--to", help="timeseries: end of the time axis (seconds).")] = None,
    logx: Annotated[bool | None, typer.Option("--logx/--linx", help="cdf, owd-cdf, plt-cdf, sweep: log x axis (sweep: default when the swept values double).")] = None,
    logy: Annotated[bool, typer.Option("--logy", help="sweep, plt-box: log y axis.")] = False,
) -> None:
    """Plot a run or a sweep: CDF, time series, metric vs parameter with 95 % CI, bars."""
    from .. import plots

    kw: dict[str, Any] = {"metric": metric}
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
    out: Annotated[Path | None, typer.Option(help="HTML file (default PATH/report.html).")] = None,
) -> None:
    """Write one self-contained HTML page (figures, tables, scenario, versions)."""
    from ..report import build

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
    from ..starter import write

    try:
        out_console.print(str(write(path, force)))
    except FileExistsError as e:
        fail(ScenarioError("", str(e)))


@app.command("compare")
def compare_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Two or more run, sweep or study output folders; the first is the baseline.")],
    metric: Annotated[list[str] | None, typer.Option("--metric", "-m", help="Only this metric (repeatable), e.g. sojourn_ms_mean.")] = None,
    table: Annotated[list[str] | None, typer.Option("--table", help="Only this table (repeatable): summary | queues | flows | apps.")] = None,
    out: Annotated[Path | None, typer.Option(help="Folder for compare.csv and, with --metric, one overlaid figure per metric.")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Print every row, not only those that differ.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False,
) -> None:
    """Put runs, sweeps or studies side by side: each metric's mean and 95 % interval per
    source and its difference to the first, with Welch's interval (n ≥ 3 on both sides)."""
    from .. import compare

    try:
        df = compare.table(paths, metrics=metric, tables=table)
    except (ValueError, FileNotFoundError) as e:
        fail(ScenarioError("", str(e)))
    names = compare._names([Path(p) for p in paths])
    if out is not None:
        from .. import plots, safefile

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
    from ..units import fmt as fmt_unit
    from ..units import fmt_interval

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
    from ..export import export

    try:
        files = export(path, out, fmt)
    except (ValueError, FileNotFoundError) as e:
        fail(ScenarioError("--format" if "--format" in str(e) else "", str(e)))
    for f in files:
        out_console.print(str(f))
