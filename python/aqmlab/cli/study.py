"""`aqmlab study ...`: the built-in studies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from ..errors import ScenarioError
from .common import SetOpt, app, err_console, fail, out_console
from .sweep import SweepProgress, run_with_progress, sweep_report

study_app = typer.Typer(no_args_is_help=True, help="Built-in studies: list, run, report, compare with the paper.")
app.add_typer(study_app, name="study")


@study_app.command("list")
def study_list(json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False) -> None:
    """List the studies."""
    from ..study import list_studies

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
    experiment: Annotated[list[str] | None, typer.Option("--experiment", "-e", help="Run only this experiment (repeatable; default: all).")] = None,
    out: Annotated[Path | None, typer.Option(help="Study folder (default out/studies/NAME).")] = None,
    executor: Annotated[str | None, typer.Option(help="local (process pool) or dask.")] = None,
    address: Annotated[str | None, typer.Option(help="Dask scheduler address, tcp://host:port.")] = None,
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: all cores).")] = None,
    set: SetOpt = None,
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed", help="Resume over runs made by another aqmlab build.")] = False,
    report_too: Annotated[bool, typer.Option("--report/--no-report", help="Write the report and figures after the runs.")] = True,
    report_out: Annotated[Path | None, typer.Option("--report-out", help="Report file (default OUT/report.html).")] = None,
    figures: Annotated[Path | None, typer.Option(help="Folder for the figures as PNG and SVG (default: figures/ beside the report).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, no summary.")] = False,
) -> None:
    """Run a study's sweeps (resuming), then write its report and figures."""
    from .. import study

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
    only: Annotated[list[str] | None, typer.Option("--study", help="Run only this study (repeatable; default: all).")] = None,
    executor: Annotated[str | None, typer.Option(help="local (process pool) or dask.")] = None,
    address: Annotated[str | None, typer.Option(help="Dask scheduler address, tcp://host:port.")] = None,
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: all cores).")] = None,
    set: SetOpt = None,
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed", help="Resume over runs made by another aqmlab build.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one record per study as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars, no summary.")] = False,
) -> None:
    """Run every study (resuming) and write OUT/index.html linking their reports. A study
    that fails is listed in the index; the others still run. Exits 1 if any failed."""
    from .. import study

    show = not (quiet or json_out)
    try:
        index, records = study.run_all(out, quick=quick, only=only, executor=executor, address=address, workers=workers,
                                       set=set, allow_mixed=allow_mixed,
                                       progress_for=(lambda n: SweepProgress(err_console, n)) if show else None)
    except ScenarioError as e:
        fail(e)
    except KeyboardInterrupt:
        err_console.print("interrupted: finished runs are kept; run the same command again to resume")
        raise typer.Exit(130) from None
    if json_out:
        print(json.dumps(records))
    elif not quiet:
        for r in records:
            state = f"[red]{r['error']}[/]" if "error" in r else f"{r['runs']} runs, {r['failed']} failed → {r['report']}"
            sim = f", {r['sim_s'] / 3600:.1f} simulated hours" if r.get("sim_s") else ""
            t = r.get("reproduction")
            repro = (f"; vs the paper: trends held {t['trends_held']}/{t['trends_total']}, numbers inside or within "
                     f"{t['numbers_ok']}/{t['numbers_total']}") if t else ""
            cpu = f", runs {r['cpu_s']:.0f} s CPU" if r.get("cpu_s") is not None else ""
            out_console.print(f"{r['name']}: {state} ({r['wall_s']:.0f} s{cpu}{sim}){repro}", highlight=False)
        out_console.print(f"index: {index}")
    if any("error" in r or r["failed"] for r in records):
        raise typer.Exit(1)


@study_app.command("report")
def study_report(
    name: Annotated[str, typer.Argument(help="Study name.")],
    sweep_dir: Annotated[Path | None, typer.Option("--dir", help="The study's folder (default out/studies/NAME).")] = None,
    out: Annotated[Path | None, typer.Option(help="HTML file (default DIR/report.html); figures go beside it in figures/.")] = None,
) -> None:
    """Write a study's report (its README, figures and tables) from its runs."""
    from .. import study

    try:
        f = study.report(name, sweep_dir, out)
    except (ScenarioError, FileNotFoundError, ValueError) as e:
        fail(e)
    out_console.print(str(f))


@study_app.command("compare")
def study_compare(
    name: Annotated[str, typer.Argument(help="Study name (it needs studies/NAME/paper.toml).")],
    out: Annotated[Path | None, typer.Option(help="The study's output: OUT/NAME (as run-all writes it) or OUT itself (as `study run NAME --out OUT` writes it); default out, else out/studies. The scorecard is written there.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the scorecard as JSON.")] = False,
) -> None:
    """Score a finished study against its paper (studies/NAME/paper.toml): each reported
    number and stated trend with aqmlab's mean ± 95 % CI and a verdict. Writes
    OUT/NAME/scorecard.md and scorecard.json."""
    from .. import scorecard, study

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
    out: Annotated[Path | None, typer.Option(help="The study's output: OUT/NAME or OUT itself (as for `study compare`); default out, else out/studies. ns2.json is written there.")] = None,
    ns: Annotated[str | None, typer.Option(help="The ns-2 binary (default `ns` on PATH); one with Queue/CoDel and Queue/PIE (ns2/build-ns2-aqm.sh) also runs ns2/aqm/*.tcl.")] = None,
) -> None:
    """Run the study's ns-2.35 reconstructions (studies/NAME/ns2/*.tcl, with `ns`) and
    write OUT/NAME/ns2.json; `study compare` then shows an ns-2 column."""
    from .. import study

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
