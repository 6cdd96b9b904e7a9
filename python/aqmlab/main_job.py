"""`make run`: the main job. Runs the built-in study ``bufferbloat-basics`` in quick
mode (5 seeds; finished runs are reused) and writes

* ``OUT/bufferbloat-basics/``  the sweep: one folder per run (Parquet tables),
* ``OUT/report.html``          the self-contained report,
* ``OUT/figures/``             every figure as PNG and SVG.

``python -m aqmlab.main_job OUT [--set PATH=VALUE ...]`` (overrides shorten it for tests).
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from . import study
from .cli import SweepProgress, sweep_report

STUDY = "bufferbloat-basics"


def main(out: str = "out", overrides: list[str] | None = None, quiet: bool = False) -> int:
    console = Console(stderr=True)
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    bar = None if quiet else SweepProgress(console, f"{STUDY} (quick)")
    try:
        res = study.run(STUDY, quick=True, out=outdir / STUDY, set=overrides, progress=bar)
    finally:
        if bar is not None:
            bar.stop()
    sweep_report(res, console)
    report = study.report(STUDY, res.out, out=outdir / "report.html", figures_dir=outdir / "figures")
    console.print(f"report: {report}\nfigures: {outdir / 'figures'}/")
    return 1 if res.n_failed else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    out = "out"
    sets: list[str] = []
    i = 0
    while i < len(args):
        if args[i] == "--set":
            sets.append(args[i + 1])
            i += 2
        else:
            out = args[i]
            i += 1
    sys.exit(main(out, sets))
