"""`aqmlab emulate` and `aqmlab compare-real`: the emulator and the real-kernel comparison."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..errors import ScenarioError, SimulationError
from ..results import check_run_out
from .common import SetOpt, app, err_console, fail, out_console
from .tables import FLOW_COLUMNS, QUEUE_COLUMNS, _fmt, _table

CpuOpt = Annotated[int | None, typer.Option(help="Run the emulator on this CPU only, e.g. one kept free with isolcpus (default: wherever the scheduler puts it).", min=0)]


@app.command()
def emulate(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML) with a dumbbell topology.")],
    seed: Annotated[int | None, typer.Option(help="Random seed (default: the scenario's).")] = None,
    set: SetOpt = None,
    out: Annotated[Path | None, typer.Option(help="Write the tables as Parquet here.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Run above the measured rate limit of the emulator.")] = False,
    cpu: CpuOpt = None,
) -> None:
    """Run the scenario's bottleneck live between two network namespaces, with the
    kernel's TCP (root; see docs/emulation.md)."""
    from ..emulate import emulate as run_emulation

    try:
        if out is not None:
            check_run_out(out)
        if not json_out:
            err_console.print("emulating in real time (the scenario's duration)...", highlight=False)
        res = run_emulation(scenario, seed=seed, set=set, force=force, cpu=cpu, log=lambda m: err_console.print(m, highlight=False))
        if out is not None:
            res.write_parquet(out)
    except (ScenarioError, SimulationError) as e:
        fail(e)
    if json_out:
        d = res.to_dict()
        d = {k: d[k] for k in ("summary", "queues", "flows", "apps", "emulation")}
        print(json.dumps(d, default=str))
        return
    em = res.emulation.row(0, named=True)
    out_console.print(
        f"[bold]{res.summary['scenario'][0]}[/] emulated for {em['measured_s']:.1f} s (after warm-up); "
        f"scheduling error p50 {em['sched_err_us_p50']:.1f} µs, p99 {em['sched_err_us_p99']:.1f} µs, "
        f"max {em['sched_err_us_max']:.0f} µs over {em['datagrams']:,} datagrams ({em['late_over_1ms']} later than 1 ms)",
        highlight=False,
    )
    out_console.print(_table(res.queues, QUEUE_COLUMNS, "queues (emulated)", ("link", "qdisc")))
    out_console.print(_table(res.flows, FLOW_COLUMNS + ["timeouts", "kernel_cc"], "flows (Linux TCP counters)", ("app", "kind", "src", "dst", "kernel_cc")))
    if out is not None:
        out_console.print(f"tables written to {out}/")


@app.command("compare-real")
def compare_real(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (TOML) with a dumbbell topology.")],
    seed: Annotated[int | None, typer.Option(help="First random seed for both runs (default: the scenario's).")] = None,
    seeds: Annotated[int, typer.Option(help="Number of seeds (seed, seed+1, ...): mean and spread per metric.", min=1)] = 1,
    set: SetOpt = None,
    out: Annotated[Path | None, typer.Option(help="Folder for every run's tables, comparison.csv, info.json and comparison.png.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the comparison and the kernel/emulator info as JSON.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Run above the measured rate limit of the emulator.")] = False,
    gso_max_segs: Annotated[int | None, typer.Option(help="Kernel-side experiment: cap the TUN devices' GSO segments per packet (1: the kernel sends single segments, no TSO bursts).", min=1, max=65535)] = None,
    quickack: Annotated[bool, typer.Option("--quickack", help="Kernel-side experiment: routes with quickack 1 (the kernel receivers ACK every segment).")] = False,
    cpu: CpuOpt = None,
    attempts: Annotated[int, typer.Option(help="Emulated runs per seed at most: a run whose emulator did not keep up is run again with the same seed.", min=1)] = 3,
) -> None:
    """Run the scenario simulated (TCP profile linux) and emulated (Linux TCP) with the
    same seeds; print per metric the mean ± sample sd (min–max) of each side over the
    seeds, their ratio and whether the ranges overlap, the kernel release and TCP
    sysctls, and each emulated run's scheduling p99/p99.9 and late datagrams (runs
    whose emulator did not keep up are left out of the emulated statistics)."""
    from ..emulate.compare import compare_real as run_compare

    try:
        if out is not None:
            check_run_out(out)
        t, _, _, info = run_compare(scenario, seed=seed, seeds=seeds, set=set, out=out, force=force, attempts=attempts,
                                    gso_max_segs=gso_max_segs, quickack=quickack, cpu=cpu,
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
        if h["attempts"] > 1:
            flag += f" (attempt {h['attempts']}; earlier ones did not keep up)"
        out_console.print(f"seed {s}: emulator scheduling error p99 {h['sched_err_us_p99']:.1f} µs, p99.9 {h['sched_err_us_p999']:.1f} µs, "
                          f"{h['late_over_1ms']} of {h['datagrams']:,} datagrams later than 1 ms{flag}", highlight=False)
    hz = f", CONFIG_HZ={info['hz']}" if info["hz"] else ""
    out_console.print(f"kernel {info['kernel']}{hz}; " + ", ".join(f"{k}={v}" for k, v in info["sysctls"].items()), highlight=False)
    if out is not None:
        out_console.print(f"written to {out}/ (comparison.csv, info.json, comparison.png, sSEED/simulated|emulated/)")
