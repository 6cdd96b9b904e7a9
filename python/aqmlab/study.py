"""Studies: a question, a sweep that answers it, and the figures that show the answer.

A study is a folder ``studies/NAME/`` holding

* ``scenario.toml`` (and any other scenario files it needs),
* ``sweep.toml``    the sweep (``base``, ``grid``/``zip``, ``seeds``, and a ``[quick]``
  table with fewer seeds or a shorter run for a first look),
* ``figures.py``    ``def figures(sweep_dir) -> list[aqmlab.report.Figure]``: the study's
  figures, each with a caption,
* ``README.md``     the question, the setup and what the figures show.

``aqmlab study run NAME [--quick]`` runs the sweep into ``out/studies/NAME/`` (resuming),
then writes ``report.html`` and the figures (PNG + SVG) beside it.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from .errors import ScenarioError
from .report import Figure, build
from .sweep import SweepOutcome, read_sweep_file, run_sweep_file

ROOT = Path(__file__).resolve().parents[2]


def studies_dirs() -> list[Path]:
    """Where studies are looked up: ``$AQMLAB_STUDIES`` (``:``-separated), then the
    ``studies/`` folder of the source tree."""
    dirs = [Path(p) for p in os.environ.get("AQMLAB_STUDIES", "").split(os.pathsep) if p]
    dirs.append(ROOT / "studies")
    return [d for d in dirs if d.is_dir()]


def list_studies() -> list[dict]:
    out = []
    for d in studies_dirs():
        for s in sorted(d.iterdir()):
            if (s / "sweep.toml").exists():
                title = ""
                readme = s / "README.md"
                if readme.exists():
                    lines = [l.strip() for l in readme.read_text().splitlines()]
                    title = next((l.lstrip("# ") for l in lines if l.startswith("#")), "")
                out.append({"name": s.name, "path": str(s), "title": title})
    return out


def study_dir(name: str) -> Path:
    if os.sep in name or "/" in name:
        p = Path(name)
        if (p / "sweep.toml").exists():
            return p
    for d in studies_dirs():
        if (d / name / "sweep.toml").exists():
            return d / name
    known = ", ".join(s["name"] for s in list_studies()) or "none"
    raise ScenarioError("study", f'"{name}": no such study; known: {known}')


def default_out(name: str) -> Path:
    return Path("out") / "studies" / name


def run(name: str, quick: bool = False, out: str | os.PathLike | None = None, **kw) -> SweepOutcome:
    """Run a study's sweep (resuming by default). Keyword arguments go to
    `aqmlab.sweep` (``executor``, ``workers``, ``address``, ``progress``, ``set``, ...)."""
    d = study_dir(name)
    sf = read_sweep_file(d / "sweep.toml")
    return run_sweep_file(sf, quick=quick, out=Path(out) if out else default_out(d.name), **kw)


def load_figures_module(d: Path):
    f = d / "figures.py"
    if not f.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"aqmlab_study_{d.name.replace('-', '_')}", f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def figures(name: str, sweep_dir: str | os.PathLike) -> list[Figure] | None:
    mod = load_figures_module(study_dir(name))
    return mod.figures(Path(sweep_dir)) if mod is not None else None


def report(name: str, sweep_dir: str | os.PathLike | None = None, out: str | os.PathLike | None = None, figures_dir: str | os.PathLike | None = None) -> Path:
    """Write the study's report (its README, its figures, the tables) and save the
    figures as PNG and SVG in ``figures_dir`` (default: beside the report)."""
    d = study_dir(name)
    sweep_dir = Path(sweep_dir) if sweep_dir else default_out(d.name)
    if not (sweep_dir / "sweep.json").exists():
        raise FileNotFoundError(f"{sweep_dir}: the study has not been run yet (aqmlab study run {d.name})")
    out = Path(out) if out else sweep_dir / "report.html"
    figures_dir = Path(figures_dir) if figures_dir else out.parent / "figures"
    figs = figures(name, sweep_dir)
    readme = d / "README.md"
    return build(sweep_dir, out, figures=figs, title=f"aqmlab study: {d.name}", intro_md=readme.read_text() if readme.exists() else None, figures_dir=figures_dir)
