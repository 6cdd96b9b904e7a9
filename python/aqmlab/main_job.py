"""`make run`: the main job. Runs every example scenario and writes its tables to
``OUT/<example>/`` plus a one-page ``OUT/README.md`` summary."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from .cli import print_results
from .runner import run

ROOT = Path(__file__).resolve().parents[2]


def main(out: str = "out") -> None:
    console = Console()
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    lines = ["# aqmlab examples", ""]
    for sc in sorted((ROOT / "examples").glob("*.toml")):
        console.rule(sc.name)
        res = run(sc)
        res.write_parquet(outdir / sc.stem)
        print_results(res, console)
        s = res.summary.row(0, named=True)
        lines.append(f"- `{sc.name}`: {s['sim_time_s']:.0f} s simulated in {s['wall_time_s']:.2f} s, tables in `{sc.stem}/`")
    (outdir / "README.md").write_text("\n".join(lines) + "\n")
    console.print(f"results in {outdir}/")


if __name__ == "__main__":
    main(*sys.argv[1:])
