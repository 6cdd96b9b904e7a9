"""Studies: a question, the sweeps that answer it, and the figures that show the answer.

A study is a folder ``studies/NAME/`` holding

* ``scenario.toml`` (and any other scenario files it needs),
* its sweeps: either one ``sweep.toml`` (``base``, ``grid``/``zip``, ``seeds``, and a
  ``[quick]`` table with fewer seeds or a shorter run for a first look), or one file per
  experiment in ``experiments/`` (``experiments/E1.toml``, ``experiments/E2.toml``, ...),
* ``figures.py``    ``def figures(sweep_dir) -> list[aqmlab.report.Figure]`` for a
  one-sweep study; for a study with experiments ``def figures(dirs)`` gets
  ``{experiment: sweep folder}`` of the experiments that have runs,
* ``README.md``     the question, the setup and what the figures show; its section
  headed ``## Set-up: paper vs aqmlab`` (see `setup_section`) is the list of set-up
  differences the report shows with the scorecard,
* optionally ``paper.toml``  the paper's reported numbers and stated trends
  (`aqmlab.scorecard`); ``aqmlab study compare NAME`` scores the runs against it,
* optionally ``ns2/*.tcl``  ns-2.35 reconstructions printing ``SCORE <id> <value>``
  (``aqmlab study ns2 NAME``),
* optionally ``prepare.py``  ``def prepare(cache) -> dict``: builds (or reuses) generated
  inputs its scenario reads — a video trace, a PSNR table — under the folder ``cache``
  and returns the overrides (``{dotted path: value}``) that point the scenario at them;
  they apply to every experiment, before the user's ``--set``.

``aqmlab study run NAME [--quick] [--experiment E1]`` runs the sweep(s) into
``out/studies/NAME/`` (one sub-folder per experiment; resuming), then writes
``report.html`` and the figures (PNG + SVG + PDF) beside it. ``aqmlab study run-all``
runs every study and writes ``index.html`` linking their reports.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import polars as pl

from .aggregate import reading_once
from .errors import ScenarioError
from .report import Figure, build, figures_html, markdown_html, write_page
from .scenario import parse_overrides
from .sweep import SweepOutcome, SweepPlan, plan_sweep_file, read_sweep_file, run_plans

ROOT = Path(__file__).resolve().parents[2]


def studies_dirs() -> list[Path]:
    """Where studies are looked up: ``$AQMLAB_STUDIES`` (``:``-separated), then the
    ``studies/`` folder of the source tree."""
    dirs = [Path(p) for p in os.environ.get("AQMLAB_STUDIES", "").split(os.pathsep) if p]
    dirs.append(ROOT / "studies")
    return [d for d in dirs if d.is_dir()]


def experiments(d: Path) -> dict[str, Path]:
    """A study folder's sweep files by experiment name: ``experiments/*.toml`` (named by
    file), else ``sweep.toml`` alone (one experiment named after the study)."""
    found = {f.stem: f for f in sorted((d / "experiments").glob("*.toml"))} if (d / "experiments").is_dir() else {}
    if not found and (d / "sweep.toml").exists():
        found = {d.name: d / "sweep.toml"}
    return found


def has_experiments(d: Path) -> bool:
    """True for a study with an ``experiments/`` folder (several sweeps)."""
    return not (d / "sweep.toml").exists() and bool(experiments(d))


def list_studies() -> list[dict[str, Any]]:
    """Every study once: a name found in an earlier folder of `studies_dirs` hides the
    same name further on (as `study_dir` resolves it)."""
    out, seen = [], set()
    for d in studies_dirs():
        for s in sorted(d.iterdir()):
            if experiments(s) and s.name not in seen:
                seen.add(s.name)
                title = ""
                readme = s / "README.md"
                if readme.exists():
                    lines = [l.strip() for l in readme.read_text().splitlines()]
                    title = next((l.lstrip("# ") for l in lines if l.startswith("#")), "")
                out.append({"name": s.name, "path": str(s), "title": title, "experiments": list(experiments(s))})
    return out


def study_dir(name: str) -> Path:
    if os.sep in name or "/" in name:
        p = Path(name)
        if experiments(p):
            return p
    for d in studies_dirs():
        if experiments(d / name):
            return d / name
    known = ", ".join(s["name"] for s in list_studies()) or "none"
    raise ScenarioError("study", f'"{name}": no such study; known: {known}')


def default_out(name: str) -> Path:
    return Path("out") / "studies" / name


def experiment_out(d: Path, exp: str, out: Path) -> Path:
    """Where an experiment's sweep goes: the study's folder itself for a one-sweep study,
    a sub-folder per experiment otherwise."""
    return out / exp if has_experiments(d) else out


def cache_dir() -> Path:
    """Where studies keep generated inputs: ``$AQMLAB_CACHE``, else
    ``$XDG_CACHE_HOME/aqmlab`` (``~/.cache/aqmlab``)."""
    if os.environ.get("AQMLAB_CACHE"):
        return Path(os.environ["AQMLAB_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "aqmlab"


def prepare(name: str) -> dict[str, Any]:
    """Run the study's ``prepare.py`` (if any) with its cache folder
    (``cache_dir()/NAME``); the overrides it returns (empty without one)."""
    d = study_dir(name)
    f = d / "prepare.py"
    if not f.exists():
        return {}
    mod = _load_module(f"aqmlab_study_prepare_{d.name.replace('-', '_')}", f)
    return dict(mod.prepare(cache_dir() / d.name))


def run(name: str, quick: bool = False, out: str | os.PathLike[str] | None = None,
        only: list[str] | None = None, **kw: Any) -> dict[str, SweepOutcome]:
    """Run a study's sweeps (resuming by default), all or the experiments in ``only``,
    in one pool (`aqmlab.sweep.run_plans`: the longest runs first, whatever their
    experiment). Keyword arguments go to `aqmlab.sweep` (``executor``, ``workers``,
    ``address``, ``progress``, ``set``, ...). Returns each experiment's outcome."""
    pool = {k: kw.pop(k, None) for k in ("executor", "workers", "address")}
    plans = plan(name, quick, out, only, **kw)
    run_plans(list(plans.values()), **pool)
    return {exp: p.finish() for exp, p in plans.items()}


def plan(name: str, quick: bool = False, out: str | os.PathLike[str] | None = None,
         only: list[str] | None = None, progress_of: Callable[[str], Any] | None = None,
         **kw: Any) -> dict[str, SweepPlan]:
    """A study's sweeps resolved (`aqmlab.sweep.plan_sweep`), by experiment; arguments
    as `run` without the pool's (``executor``, ``workers``, ``address``).
    ``progress_of(experiment)``, if given, is each experiment's progress callback."""
    d = study_dir(name)
    exps = experiments(d)
    for e in only or []:
        if e not in exps:
            raise ScenarioError("experiment", f'"{e}": no such experiment in study {d.name}; expected one of: {", ".join(exps)}')
    out = Path(out) if out else default_out(d.name)
    kw["set"] = {**prepare(str(d)), **parse_overrides(kw.get("set"))}
    plans = {}
    for exp, f in exps.items():
        if only and exp not in only:
            continue
        sf = read_sweep_file(f)
        if progress_of is not None:
            kw["progress"] = progress_of(exp)
        plans[exp] = plan_sweep_file(sf, quick=quick, out=experiment_out(d, exp, out), **kw)
    return plans


def _load_module(name: str, f: Path) -> ModuleType:
    """A study's Python file (prepare.py, figures.py) as a module."""
    spec = importlib.util.spec_from_file_location(name, f)
    if spec is None or spec.loader is None:
        raise ImportError(f"{f}: cannot be loaded as a Python module")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_figures_module(d: Path) -> ModuleType | None:
    f = d / "figures.py"
    if not f.exists():
        return None
    return _load_module(f"aqmlab_study_{d.name.replace('-', '_')}", f)


def figures(name: str, study_out: str | os.PathLike[str]) -> list[Figure] | None:
    """The study's figures from its runs under ``study_out``."""
    d = study_dir(name)
    mod = load_figures_module(d)
    if mod is None:
        return None
    made: list[Figure] = mod.figures(Path(study_out) if not has_experiments(d) else run_dirs(d, Path(study_out)))
    return made


def run_dirs(d: Path, study_out: Path) -> dict[str, Path]:
    """The sweep folders of the experiments that have been run."""
    dirs = {e: experiment_out(d, e, study_out) for e in experiments(d)}
    return {e: p for e, p in dirs.items() if (p / "sweep.json").exists()}


def compare(name: str, study_out: str | os.PathLike[str] | None = None, write: bool = True) -> dict[str, Any]:
    """Score a finished study against its ``paper.toml`` (see `aqmlab.scorecard`):
    returns the scorecard and (``write``) writes ``scorecard.md`` and ``scorecard.json``
    into ``study_out`` (default ``out/NAME``, else ``out/studies/NAME``). Raises
    `ScenarioError` for a bad paper.toml (naming the entry and field) and
    `FileNotFoundError` when the study has no paper.toml or has not been run."""
    from . import scorecard

    d = study_dir(name)
    if not (d / "paper.toml").exists():
        raise FileNotFoundError(f"{d / 'paper.toml'}: study {d.name} has no paper.toml (nothing to compare with)")
    study_out = Path(study_out) if study_out else find_out(d.name)
    card = scorecard.score(d.name, d, study_out)
    if write:
        scorecard.write(card, study_out)
    return card


def study_out_of(d: Path, out: str | os.PathLike[str]) -> Path:
    """The study's output folder given ``--out``: ``OUT/NAME`` as ``run-all --out OUT``
    writes it, or ``OUT`` itself as ``study run NAME --out OUT`` writes it (it holds the
    study's sweep or one of its experiment folders)."""
    out = Path(out)
    nested = out / d.name
    if nested.is_dir():
        return nested
    own = (out / "sweep.json").exists() or any((out / e).is_dir() for e in experiments(d))
    return out if own else nested


def find_out(name: str) -> Path:
    """The default output of a study: ``out/NAME`` (``make run``) if it exists, else
    ``out/studies/NAME`` (``aqmlab study run``)."""
    first = Path("out") / name
    return first if first.is_dir() else default_out(name)


SCORE_LINE = re.compile(r"^SCORE\s+(\S+)\s+(\S+)\s*$")


def ns2(name: str, study_out: str | os.PathLike[str] | None = None, timeout_s: float = 3600,
        ns: str | None = None) -> dict[str, Any]:
    """Run the study's ``ns2/*.tcl`` with ns-2 (``ns``: a path, default ``ns`` on PATH)
    and write ``study_out/ns2.json``: ``{"values": {id: value}, "scripts": {script:
    [ids]}, "skipped": {script: why}, "ns": version}``. Scripts in ``ns2/aqm/`` need an
    ns-2 with ``Queue/CoDel`` and ``Queue/PIE`` (built by the study's
    ``ns2/build-ns2-aqm.sh``); they run only when ``ns`` has both and are listed under
    "skipped" otherwise. Each script prints ``SCORE <id> <value>`` lines for numbers of
    the study's paper.toml, in the paper's unit. Raises `FileNotFoundError` when ``ns``
    or the scripts are missing, `ScenarioError` for a line naming an unknown id or a bad
    value, `RuntimeError` when a script fails."""
    import shutil
    import subprocess
    import tempfile

    from . import scorecard

    d = study_dir(name)
    scripts = sorted((d / "ns2").glob("*.tcl"))
    if not scripts:
        raise FileNotFoundError(f"{d / 'ns2'}: study {d.name} has no ns-2 scripts (ns2/*.tcl)")
    exe = shutil.which(ns or "ns")
    if exe is None:
        raise FileNotFoundError(f"{ns}: not an executable ns-2" if ns else
                                "ns (ns-2.35) is not on PATH: install Debian's ns2 package (apt-get install ns2)")
    skipped = {}
    aqm = sorted((d / "ns2" / "aqm").glob("*.tcl"))
    if aqm:
        probe = subprocess.run([exe], input="set ns [new Simulator]\nif {![catch {new Queue/CoDel; new Queue/PIE}]} {puts aqm-ok}\n", capture_output=True,
                               text=True, timeout=60)
        if "aqm-ok" in probe.stdout:
            scripts += aqm
        else:
            for f in aqm:
                skipped[f"aqm/{f.name}"] = f"{exe} has no Queue/CoDel and Queue/PIE (build one with ns2/build-ns2-aqm.sh)"
    if not (d / "paper.toml").exists():
        raise FileNotFoundError(f"{d / 'paper.toml'}: the SCORE ids name its numbers, and it is missing")
    ids = {n.id for n in scorecard.read_paper(d / "paper.toml", d).numbers}
    values: dict[str, Any] = {}
    by_script: dict[str, Any] = {}
    for f in scripts:
        with tempfile.TemporaryDirectory(prefix="aqmlab-ns2-") as tmp:  # scripts may write trace files
            p = subprocess.run([exe, str(f.resolve())], cwd=tmp, capture_output=True, text=True, timeout=timeout_s)
        if p.returncode != 0:
            tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-8:])
            raise RuntimeError(f"{f}: ns exited with status {p.returncode}:\n{tail}")
        key = f.name if f.parent.name == "ns2" else f"aqm/{f.name}"
        by_script[key] = []
        for i, line in enumerate(p.stdout.splitlines(), 1):
            m = SCORE_LINE.match(line)
            if not m:
                continue
            sid, raw = m.groups()
            where = f"{f.name}: output line {i}"
            if sid not in ids:
                raise ScenarioError(where, f'SCORE "{sid}": no [[number]] with this id in {d / "paper.toml"}')
            try:
                v = float(raw)
            except ValueError:
                raise ScenarioError(where, f'SCORE {sid} "{raw}": expected a number') from None
            if sid in values:
                raise ScenarioError(where, f"SCORE {sid}: reported twice")
            values[sid] = v
            by_script[key].append(sid)
    vp = subprocess.run([exe], input='puts "[ns-version]"\n', capture_output=True, text=True, timeout=60)
    doc = {"values": values, "scripts": by_script, "skipped": skipped, "ns": vp.stdout.strip() or "unknown",
           "created": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    study_out = Path(study_out) if study_out else find_out(d.name)
    study_out.mkdir(parents=True, exist_ok=True)
    (study_out / "ns2.json").write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def setup_section(readme: str) -> str | None:
    """The README's list of set-up differences: the ``##`` section whose heading starts
    with "Set-up: paper vs" (or "Setup: paper vs"), up to the next ``#``/``##`` heading."""
    out, on = [], False
    for line in readme.splitlines():
        m = re.match(r"^(#{1,2})\s+(.*)$", line)
        if m:
            if on:
                break
            on = len(m.group(1)) == 2 and re.match(r"(?i)set-?up:\s*paper\s+vs", m.group(2)) is not None
            continue
        if on:
            out.append(line)
    text = "\n".join(out).strip()
    return text or None


def reproduction_html(name: str, d: Path, study_out: Path) -> tuple[str, dict[str, Any] | None]:
    """The report's "Reproduction" section (writes the scorecard files) and the
    scorecard; ``("", None)`` for a study without a paper.toml."""
    from . import scorecard

    if not (d / "paper.toml").exists():
        return "", None
    head = '<h2 id="reproduction">Reproduction</h2>'
    try:
        card = compare(name, study_out)
    except (ScenarioError, FileNotFoundError) as e:
        return head + f'<p class="bad">No scorecard: {html.escape(str(e))}</p>', None
    nh, nr, th, tr = scorecard.rows(card)

    def esc(head: list[str], rows: list[list[str]]) -> list[list[str]]:  # text cells; the verdict column coloured by its verdict
        col = head.index("verdict")
        return [[f'<span class="v-{c.replace(" ", "-")}">{html.escape(c)}</span>' if i == col else html.escape(str(c))
                 for i, c in enumerate(r)] for r in rows]

    parts = [head, f"<p class=meta>Against {html.escape(card['paper']['cite'])} ({html.escape(card['paper']['simulator'])}); "
             f"{html.escape(scorecard.mode_text(card['mode']))}. <strong>{html.escape(scorecard.totals_line(card))}</strong>. "
             "A number is inside the paper's range, else within ±10 % of its value (or the entry's tolerance), else "
             "outside; a trend holds when the comparison holds and the two cells' 95 % intervals do not overlap. "
             "Also in scorecard.md and scorecard.json beside this report.</p>"]
    if card["missing"]:
        parts.append('<p class="bad">Missing: ' + html.escape("; ".join(card["missing"])) + "</p>")
    readme = d / "README.md"
    setup = setup_section(readme.read_text()) if readme.exists() else None
    side = ("<h3>Set-up: paper vs aqmlab (from the README)</h3>" + (markdown_html(setup) if setup else
            '<p class="bad">The README has no "## Set-up: paper vs aqmlab" section.</p>'))
    parts += ['<div class="repro">', side, "<h3>Numbers</h3>", html_table(nh, esc(nh, nr)), "<h3>Trends</h3>",
              html_table(th, esc(th, tr)), "</div>"]
    return "".join(parts), card


@reading_once()  # the figures, the scorecard and the tables share one read of each table
def report(name: str, study_out: str | os.PathLike[str] | None = None, out: str | os.PathLike[str] | None = None, figures_dir: str | os.PathLike[str] | None = None) -> Path:
    """Write the study's report (its README, its figures, the tables) and save the
    figures as PNG, SVG and PDF in ``figures_dir`` (default: beside the report). A study
    with experiments gets one page with every figure and a table-only report per
    experiment, linked from it."""
    d = study_dir(name)
    study_out = Path(study_out) if study_out else default_out(d.name)
    dirs = run_dirs(d, study_out)
    if not dirs:
        raise FileNotFoundError(f"{study_out}: the study has not been run yet (aqmlab study run {d.name})")
    out = Path(out) if out else study_out / "report.html"
    figures_dir = Path(figures_dir) if figures_dir else out.parent / "figures"
    figs = figures(name, study_out)
    readme = d / "README.md"
    intro = readme.read_text() if readme.exists() else None
    title = f"aqmlab study: {d.name}"
    from . import scorecard

    repro, card = reproduction_html(name, d, study_out)
    first = ""
    if card is not None:  # the scorecard's totals on the first screen
        first = (f'<p class="lead"><strong>Reproduction of {html.escape(card["paper"]["cite"])}: '
                 f'{html.escape(scorecard.totals_line(card))}</strong> ({html.escape(scorecard.mode_text(card["mode"]))}; '
                 '<a href="#reproduction">details</a>).</p>')
    if not has_experiments(d):
        return build(study_out, out, figures=figs, title=title, intro_md=intro, figures_dir=figures_dir, extra_html=[repro],
                     lead_html=first)
    rows = []
    for exp, p in dirs.items():
        page = build(p, p / "report.html", figures=[], title=f"{title}, experiment {exp}")
        spec = json.loads((p / "sweep.json").read_text())
        done = sum((p / "runs" / r["id"]).is_dir() for r in spec["runs"])
        rows.append([f'<a href="{html.escape(os.path.relpath(page, out.parent))}">{html.escape(exp)}</a>',
                     str(len(spec["runs"])), str(done)])
    parts = [first, markdown_html(intro) if intro else "", figures_html(figs, figures_dir), repro,
             "<h2>Experiments</h2><p>Each experiment's tables (mean ± 95 % CI per point) are on its own page.</p>",
             html_table(["experiment", "runs", "finished"], rows)]
    return write_page(out, title, parts)


def run_all(out: str | os.PathLike[str] = "out", quick: bool = False, only: list[str] | None = None,
            progress_for: Callable[[str], Any] | None = None, **kw: Any) -> tuple[Path, list[dict[str, Any]]]:
    """Run every study (or those in ``only``) into ``out/NAME/``, write each report, and
    write ``out/index.html`` linking them. The runs of all studies share one pool, the
    longest first (`aqmlab.sweep.run_plans`), so both cores stay busy to the end; a
    study's report is written as soon as its last run is in. A study that fails is
    reported in the index and the others still run; finished runs are kept. Returns the
    index and one record per study (name, runs, failed, wall_s: seconds from the start
    until its report was written, report or error). ``progress_for`` is called once
    (with "run-all"); its callback gets each sweep's events with ``"name"``
    (STUDY/EXPERIMENT) added."""
    out = Path(out)
    t0 = time.monotonic()
    names = [s["name"] for s in list_studies()]
    for n in only or []:
        if n not in names:
            raise ScenarioError("study", f'"{n}": no such study; known: {", ".join(names)}')
    pool = {k: kw.pop(k, None) for k in ("executor", "workers", "address")}
    bar = progress_for("run-all") if progress_for is not None else None
    records: dict[str, dict[str, Any]] = {}
    plans: dict[str, dict[str, SweepPlan]] = {}
    for s in list_studies():
        if only and s["name"] not in only:
            continue
        name = s["name"]
        records[name] = {"name": name, "title": s["title"], "runs": 0, "failed": 0}
        try:
            plans[name] = plan(name, quick=quick, out=out / name, progress_of=_named(bar, name), **kw)
        except Exception as e:  # one broken study must not hide the others' results
            records[name]["error"] = f"{type(e).__name__}: {e}"
            records[name]["wall_s"] = round(time.monotonic() - t0, 1)
    study_of = {id(p): name for name, ps in plans.items() for p in ps.values()}
    waiting = {name: len(ps) for name, ps in plans.items()}

    def study_done(p: SweepPlan) -> None:
        name = study_of[id(p)]
        waiting[name] -= 1
        if waiting[name] == 0:
            _finish_study(name, plans[name], records[name], out)
            records[name]["wall_s"] = round(time.monotonic() - t0, 1)

    try:
        run_plans([p for ps in plans.values() for p in ps.values()], on_complete=study_done, **pool)
    finally:
        if bar is not None and hasattr(bar, "stop"):
            bar.stop()
    for study, left in waiting.items():  # a study without any plan to run (no experiment selected)
        if left == 0 and "wall_s" not in records[study]:
            _finish_study(study, plans[study], records[study], out)
            records[study]["wall_s"] = round(time.monotonic() - t0, 1)
    recs = list(records.values())
    return write_index(out, recs, quick), recs


def _named(bar: Callable[[dict[str, Any]], Any] | None, study: str) -> Callable[[str], Any] | None:
    """The progress callback of each experiment of ``study`` on the one run-all ``bar``."""
    if bar is None:
        return None
    return lambda exp: lambda ev: bar({**ev, "name": study if exp == study else f"{study}/{exp}"})


def _finish_study(name: str, plans: dict[str, SweepPlan], rec: dict[str, Any], out: Path) -> None:
    """A study's runs are all in: its outcomes, totals, report and scorecard into ``rec``."""
    try:
        outcomes = {exp: p.finish() for exp, p in plans.items()}
        rec["runs"] = sum(o.total for o in outcomes.values())
        rec["failed"] = sum(o.n_failed for o in outcomes.values())
        rec["sim_s"], rec["events"] = simulated(o.out for o in outcomes.values())
        rec["cpu_s"] = run_cpu(o.out for o in outcomes.values())
        rec["report"] = str(report(name, out / name))
        card = out / name / "scorecard.json"
        if (study_dir(name) / "paper.toml").exists() and card.exists():
            c = json.loads(card.read_text())
            rec["reproduction"] = {**c["totals"], "mode": c["mode"]}
    except Exception as e:  # one broken study must not hide the others' results
        rec["error"] = f"{type(e).__name__}: {e}"


def simulated(sweep_dirs: Iterable[Path]) -> tuple[float, int]:
    """Simulated seconds and engine events summed over the finished runs of the sweeps."""
    sim, events = 0.0, 0
    for d in sweep_dirs:
        files = sorted(Path(d).glob("runs/*/summary.parquet"))
        if files:
            t = pl.read_parquet(files, columns=["sim_time_s", "events"])
            sim += float(t["sim_time_s"].sum())
            events += int(t["events"].sum())
    return sim, events


def run_cpu(sweep_dirs: Iterable[Path]) -> float | None:
    """CPU seconds of the finished runs (``run.json`` ``cpu_s``): what the study costs on
    one worker, whatever else the machine was doing. None when a run does not record it
    (written by an older aqmlab)."""
    total = 0.0
    for d in sweep_dirs:
        for f in sorted(Path(d).glob("runs/*/run.json")):
            cpu = json.loads(f.read_text()).get("cpu_s")
            if cpu is None:
                return None
            total += cpu
    return total


def write_index(out: Path, records: list[dict[str, Any]], quick: bool) -> Path:
    """``out/index.html``: one line per study with its question, runs and report."""
    rows = []
    for r in records:
        link = (f'<a href="{html.escape(os.path.relpath(r["report"], out))}">report</a>' if "report" in r
                else f'<span class="bad">{html.escape(r.get("error", "no report"))}</span>')
        rows.append([html.escape(r["name"]), html.escape(r["title"]), str(r["runs"]), str(r["failed"]),
                     f'{r.get("sim_s", 0) / 3600:.1f}', f'{r.get("events", 0) / 1e6:.0f}',
                     f'{r["wall_s"]:.1f}', "" if r.get("cpu_s") is None else f'{r["cpu_s"]:.1f}', reproduction_cell(r), link])
    total = max((r["wall_s"] for r in records), default=0.0)  # the studies ran together
    sim_h = sum(r.get("sim_s", 0) for r in records) / 3600
    mode = "quick mode (fewer seeds, shorter runs: the same picture, wider intervals)" if quick else "full mode"
    parts = [f"<p class=meta>{len(records)} studies in {mode}, {total:.0f} s of wall time "
             f"for {sim_h:.1f} simulated hours. "
             f"Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.</p>",
             html_table(["study", "question", "runs", "failed runs", "simulated time (h)", "events (M)",
                         "report after (s)", "run CPU (s)", "reproduction (vs the paper)", ""], rows)]
    return write_page(out / "index.html", "aqmlab: the reference studies", parts)


def reproduction_cell(r: dict[str, Any]) -> str:
    """A study's scorecard totals for the index (a link to its scorecard.md)."""
    t = r.get("reproduction")
    if not t:
        return "–"
    mode = "" if t["mode"] == "full" else f" ({html.escape(t['mode'])})"
    text = f"trends {t['trends_held']}/{t['trends_total']}, numbers {t['numbers_ok']}/{t['numbers_total']}{mode}"
    if "report" in r:
        href = os.path.relpath(Path(r["report"]).parent / "scorecard.md", Path(r["report"]).parent.parent)
        return f'<a href="{html.escape(href)}">{text}</a>'
    return text


def html_table(head: list[str], rows: list[list[str]]) -> str:
    """A table of cells that are already HTML (links), in the reports' style."""
    th = "".join(f'<th class="l">{html.escape(h)}</th>' for h in head)
    body = "".join("<tr>" + "".join(f'<td class="l">{c}</td>' for c in r) + "</tr>" for r in rows)
    return f'<div class="tw"><table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>'
