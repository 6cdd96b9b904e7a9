"""Scenario fuzzer: mutated example scenarios, each run in its own process with a time
and a memory limit, checked for panics, hangs, memory blow-ups and broken invariants.

    .venv/bin/python tests/fuzz/fuzz.py                 # 500 cases, 2 at a time
    .venv/bin/python tests/fuzz/fuzz.py --cases 2000 --seed 7 --jobs 4 --json out.json
    .venv/bin/python tests/fuzz/fuzz.py --short         # the fixed 60 cases CI runs

Every case is a pure function of ``(seed, index)``: ``--seed S --only I`` replays one.
A case starts from one of ``examples/*.toml`` (sweep files left out) with a short
duration, then gets 1–3 mutations: a leaf set to a boundary or wrong-typed value, a
quantity scaled by 10^-9…10^30 or given another unit, a key deleted or misspelt, the
queue discipline or a traffic entry replaced by a random kind with random parameters
(kinds and parameter names from ``aqmlab qdiscs/traffic``), host counts changed, opt-in
outputs switched on.

Outcomes per case:

* ``ok``: the run finished and every invariant held;
* ``rejected``: a clean `ScenarioError` (field path + message) — the right answer for
  bad input;
* ``stopped``: a run guard stopped a runaway the input asked for (``max_memory``, or a
  traffic source too fast for ``max_events_per_second``) with an error naming it;
* failures: ``panic`` (a `SimulationError` from a caught Rust panic), ``stall`` (a run
  guard blamed a qdisc, link or access-model timer: simulated time stuck in a model), ``crash`` (the
  process died: a signal, or an abort such as a failed allocation at the memory limit),
  ``hang`` (over the time limit), ``oom`` (MemoryError), ``error`` (any other exception
  — an unclean error), ``invariant`` (results that cannot be: a ratio outside [0, 1],
  utilisation above 1, more delivered than sent, packets not conserved).

Each case runs in a process forked from a fork server that has imported aqmlab (a case
costs milliseconds to start, not an interpreter start), with ``RLIMIT_AS`` = the
server's address space + ``--mem`` MB and ``RLIMIT_CPU`` as a backstop; the wall-clock
limit is enforced by the parent, which kills the process.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import multiprocessing
import random
import resource
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

#: The fixed case set of the short mode (CI): seed and number of cases.
SHORT_SEED = 20261122
SHORT_CASES = 60

#: Tolerance for "utilisation ≤ 1" and ratios ≤ 1 (floating-point division only).
EPS = 1e-9


# --------------------------------------------------------------------------- cases


def base_scenarios() -> list[tuple[str, dict]]:
    out = []
    for f in sorted(EXAMPLES.glob("*.toml")):
        doc = tomllib.loads(f.read_text())
        if "base" in doc:  # a sweep file
            continue
        out.append((f.stem, doc))
    return out


def component_docs() -> tuple[list[dict], list[dict]]:
    from aqmlab import _core

    return _core.qdiscs(), _core.traffic_kinds()


QUANTITY_UNITS = {
    "duration": ["ns", "us", "ms", "s", "min", "h"],
    "rate": ["bit", "kbit", "Mbit", "Gbit"],
    "size": ["B", "KB", "MB", "KiB"],
    "limit": ["pkt", "B", "KB"],
}
SCALES = [0.0, 1e-9, 1e-3, 0.1, 0.5, 2.0, 10.0, 1e3, 1e6, 1e9, 1e30]
NASTY = [0, -1, 1, 0.5, 2**31, 2**63, 2**64, 1e308, float("nan"), float("inf"), "", "x" * 300, True, [], {}, None]


def _split_quantity(s: str):
    i = 0
    while i < len(s) and (s[i].isdigit() or s[i] in ".-+eE"):
        i += 1
    while i > 0 and s[i - 1] in "eE":
        i -= 1
    try:
        return float(s[:i]), s[i:].strip()
    except ValueError:
        return None


def _unit_family(unit: str) -> str | None:
    for fam, units in QUANTITY_UNITS.items():
        if unit in units:
            return fam
    return None


def _fmt_number(x: float) -> str:
    return f"{x:g}" if (x == 0 or 1e-4 <= abs(x) < 1e15) else f"{x:e}"


def mutate_leaf(rng: random.Random, value, path: str):
    """A nasty replacement for one leaf value."""
    if path == "duration":  # keep runs short: small factors or values that must be refused
        q = _split_quantity(value) if isinstance(value, str) else None
        if q and rng.random() < 0.6:
            return _fmt_number(q[0] * rng.choice([0.1, 0.5, 2.0])) + q[1]
        return rng.choice(["0s", "-1s", "1e30s", "5", "nan s", 5, "1e-12s"])
    if isinstance(value, str):
        q = _split_quantity(value)
        r = rng.random()
        if q is not None and q[1] and r < 0.45:
            return _fmt_number(q[0] * rng.choice(SCALES)) + q[1]
        if q is not None and q[1] and r < 0.7:
            fam = _unit_family(q[1])
            units = [u for f in QUANTITY_UNITS.values() for u in f] if fam is None or rng.random() < 0.3 else QUANTITY_UNITS[fam]
            return _fmt_number(q[0]) + rng.choice(units)
        if r < 0.85:
            return rng.choice(["", "-5ms", "0pkt", "1e999Mbit", "ünïcødé", value + value, "5 parsecs"])
        return rng.choice(NASTY)
    if isinstance(value, bool):
        return rng.choice([not value, 1, "true", None])
    if isinstance(value, (int, float)):
        r = rng.random()
        if r < 0.5 and value:
            return type(value)(value * rng.choice([0, 2, 10, 1000])) if isinstance(value, int) else value * rng.choice(SCALES)
        return rng.choice(NASTY)
    return rng.choice(NASTY)


def leaves(doc, prefix=""):
    """Every (path tuple, value) leaf of a nested dict/list."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from leaves(v, prefix + (k,) if isinstance(prefix, tuple) else (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from leaves(v, (prefix if isinstance(prefix, tuple) else ()) + (i,))
    else:
        yield (prefix if isinstance(prefix, tuple) else ()), doc


def containers(doc, prefix=()):
    """Every (path, dict) table in the document."""
    if isinstance(doc, dict):
        yield prefix, doc
        for k, v in doc.items():
            yield from containers(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from containers(v, prefix + (i,))


def _get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def _set(doc, path, value):
    _get(doc, path[:-1])[path[-1]] = value


def _dotted(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def random_param_value(rng: random.Random, p: dict):
    """A value for a documented parameter: its default, scaled or perturbed."""
    d = str(p.get("default", ""))
    ty = str(p.get("type", ""))
    if d in ("true", "false"):
        return rng.choice([True, False])
    q = _split_quantity(d)
    if q is not None and q[1] and rng.random() < 0.8:
        return _fmt_number(q[0] * rng.choice([0.1, 0.5, 1, 2, 10])) + q[1]
    try:
        x = float(d)
        v = x * rng.choice([0, 0.5, 1, 2, 10])
        return int(v) if ("int" in ty or "whole" in ty or d.isdigit()) else v
    except ValueError:
        return rng.choice(NASTY[:8])


def random_component(rng: random.Random, docs: list[dict], keep: dict | None = None) -> dict:
    d = rng.choice(docs)
    comp = {"kind": d["kind"]}
    for p in d["params"]:
        if rng.random() < 0.4 and p["name"] != "kind":
            comp[p["name"]] = random_param_value(rng, p)
    for k in ("name", "hosts"):
        if keep and k in keep:
            comp.setdefault(k, keep[k])
    return comp


def mutate(rng: random.Random, doc: dict, qdiscs: list[dict], kinds: list[dict]) -> list[str]:
    """Apply one mutation in place; returns a description."""
    op = rng.choices(["leaf", "leaf", "leaf", "delete", "unknown", "qdisc", "traffic", "count", "outputs"], k=1)[0]
    if op == "leaf":
        path, value = rng.choice(list(leaves(doc)))
        new = mutate_leaf(rng, value, _dotted(path))
        _set(doc, path, new)
        return [f"{_dotted(path)} = {new!r}"]
    if op == "delete":
        path, _ = rng.choice(list(leaves(doc)))
        parent = _get(doc, path[:-1])
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
        return [f"del {_dotted(path)}"]
    if op == "unknown":
        path, table = rng.choice(list(containers(doc)))
        table[rng.choice(["dealy", "rat", "kind2", "qdsic", "x"])] = 1
        return [f"unknown key in {_dotted(path) or 'top'}"]
    if op == "qdisc":
        tables = [(p, t) for p, t in containers(doc) if "qdisc" in t]
        if not tables:
            return []
        path, t = rng.choice(tables)
        t["qdisc"] = random_component(rng, qdiscs)
        return [f"{_dotted(path + ('qdisc',))} = {t['qdisc']!r}"]
    if op == "traffic":
        tr = doc.setdefault("traffic", [])
        if not isinstance(tr, list) or not tr or not isinstance(tr[0], dict):
            return []
        i = rng.randrange(len(tr))
        entry = random_component(rng, kinds, keep=tr[i])
        if rng.random() < 0.5:
            tr[i] = entry
        else:
            entry["name"] = f"fuzz{len(tr)}"
            tr.append(entry)
        return [f"traffic[{i}] -> {entry!r}"]
    if op == "count":
        hosts = [t for _, t in containers(doc) if "count" in t]
        if not hosts:
            return []
        h = rng.choice(hosts)
        h["count"] = rng.choice([0, 1, 3, 20, 50])
        return [f"count = {h['count']}"]
    out = doc.setdefault("output", {})
    if not isinstance(out, dict):
        return []
    k = rng.choice(["timeseries", "tcp_timeseries", "drops", "sojourn_hist", "tcp"])
    out[k] = rng.choice(["1ms", "10ms", "100ms", "0ms"]) if "timeseries" in k else rng.choice([True, False])
    return [f"output.{k} = {out[k]!r}"]


def make_case(seed: int, index: int, bases=None, docs=None) -> dict:
    """Case ``index`` of run ``seed``: ``{"id", "base", "mutations", "scenario", "seed"}``."""
    bases = bases or base_scenarios()
    qdiscs, kinds = docs or component_docs()
    rng = random.Random(f"{seed}:{index}")
    name, base = rng.choice(bases)
    doc = copy.deepcopy(base)
    doc["duration"] = rng.choice(["0.5s", "1s", "2s", "5s"])
    if "warmup" in doc:
        doc["warmup"] = rng.choice(["0s", "100ms", "400ms"])
    muts = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        try:
            muts += mutate(rng, doc, qdiscs, kinds)
        except (IndexError, KeyError, TypeError):
            pass
    return {"id": f"{seed}:{index}", "base": name, "mutations": muts, "scenario": doc, "seed": rng.randrange(2**32)}


# --------------------------------------------------------------------------- checks


def _bad_ratio(x) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x)) and not (-EPS <= x <= 1 + EPS)


def invariants(res, warmed_up: bool = False) -> list[str]:
    """Results that cannot be. Each entry names the table, row and numbers. After a
    warm-up, bytes count every delivery in the window, including packets sent before it
    (docs/output.md), so UDP bytes delivered may then exceed bytes sent."""
    bad = []
    s = res.summary.row(0, named=True)
    if s["delivered"] + s["dropped"] + s["in_network"] != s["packets"]:
        bad.append(f"summary: delivered {s['delivered']} + dropped {s['dropped']} + in_network {s['in_network']} != packets {s['packets']}")
    for r in res.queues.iter_rows(named=True):
        for c in ("drop_rate",):
            if _bad_ratio(r[c]):
                bad.append(f"queues[{r['link']}].{c} = {r[c]}")
        u = r["utilization"]
        if u is not None and not math.isnan(u) and not (-EPS <= u <= 1 + EPS):
            bad.append(f"queues[{r['link']}].utilization = {u}")
        if r["drops"] > r["arrivals"]:
            bad.append(f"queues[{r['link']}]: drops {r['drops']} > arrivals {r['arrivals']}")
        if r["dequeued"] > r["enqueued"]:
            bad.append(f"queues[{r['link']}]: dequeued {r['dequeued']} > enqueued {r['enqueued']}")
        for c in ("sojourn_ms_mean", "sojourn_ms_p99", "qlen_pkts_mean", "throughput_bps"):
            v = r[c]
            if v is not None and not math.isnan(v) and v < 0:
                bad.append(f"queues[{r['link']}].{c} = {v} < 0")
    for r in res.flows.iter_rows(named=True):
        if _bad_ratio(r["loss_rate"]):
            bad.append(f"flows[{r['flow']}].loss_rate = {r['loss_rate']}")
        if r["packets_delivered"] > r["packets_sent"]:
            bad.append(f"flows[{r['flow']}]: packets_delivered {r['packets_delivered']} > packets_sent {r['packets_sent']}")
        if r["bytes_delivered"] > r["bytes_sent"] and r["kind"] == "udp" and not warmed_up:
            bad.append(f"flows[{r['flow']}]: bytes_delivered {r['bytes_delivered']} > bytes_sent {r['bytes_sent']}")
        g = r["goodput_bps"]
        if g is not None and not math.isnan(g) and g < 0:
            bad.append(f"flows[{r['flow']}].goodput_bps = {g} < 0")
    for r in res.apps.iter_rows(named=True):
        if _bad_ratio(r["loss_rate"]):
            bad.append(f"apps[{r['app']}].loss_rate = {r['loss_rate']}")
    return bad


# --------------------------------------------------------------------------- running


def _vm_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _child(case: dict, mem_mb: int, cpu_s: int, conn) -> None:
    """Run one case under resource limits; send the outcome through ``conn``."""
    import tempfile

    import aqmlab

    limit = _vm_bytes() + mem_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))
    out = {"status": "ok"}
    try:
        with tempfile.TemporaryDirectory(prefix="aqmlab-fuzz-") as d:
            res = aqmlab.run(case["scenario"], seed=case["seed"], out=d)
            bad = invariants(res, warmed_up=bool(case["scenario"].get("warmup")))
        if bad:
            out = {"status": "invariant", "detail": bad[:5]}
    except aqmlab.ScenarioError as e:
        out = {"status": "rejected", "detail": str(e)[:300], "path": e.path}
        if not e.path and "invalid" in e.message and "JSON" in e.message:
            out = {"status": "error", "detail": f"no field path: {e}"[:300]}
    except aqmlab.SimulationError as e:
        out = {"status": guard_status(str(e)), "detail": str(e)[:300]}
    except MemoryError:
        out = {"status": "oom", "detail": f"over {mem_mb} MB"}
    except BaseException as e:
        out = {"status": "error", "detail": f"{type(e).__name__}: {e}"[:300]}
    conn.send(out)
    conn.close()


FAILURES = ("panic", "crash", "hang", "oom", "error", "invariant", "stall")


def guard_status(message: str) -> str:
    """A `SimulationError`'s outcome: a caught Rust panic is a failure (``panic``); a
    run guard that stopped a runaway the input asked for (memory, or a traffic source
    too fast: the message names the traffic entry) is a clean answer (``stopped``); a
    guard stop blamed on anything else (a qdisc or access-model timer that does not
    advance) is a model bug (``stall``)."""
    if message.startswith("internal error"):
        return "panic"
    if "max_memory" in message or "traffic entry" in message:
        return "stopped"
    return "stall"


def run_cases(cases: list[dict], jobs: int = 2, timeout_s: float = 30.0, mem_mb: int = 2048, progress=None) -> list[dict]:
    """Run ``cases`` ``jobs`` at a time; returns one outcome dict per case (same order)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["aqmlab", "aqmlab.runner", "polars"])
    results: list[dict | None] = [None] * len(cases)
    running: dict[int, tuple] = {}
    todo = list(range(len(cases)))
    while todo or running:
        while todo and len(running) < jobs:
            i = todo.pop(0)
            recv, send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_child, args=(cases[i], mem_mb, int(timeout_s) + 5, send), daemon=True)
            p.start()
            send.close()
            running[i] = (p, recv, time.monotonic())
        time.sleep(0.005)
        for i, (p, recv, t0) in list(running.items()):
            outcome = None
            if recv.poll():
                try:
                    outcome = recv.recv()
                except EOFError:
                    outcome = None
                p.join(5)
            elif not p.is_alive():
                p.join()
                sig = -p.exitcode if p.exitcode and p.exitcode < 0 else None
                outcome = {"status": "crash", "detail": f"exit code {p.exitcode}" + (f" (signal {sig})" if sig else "")}
            elif time.monotonic() - t0 > timeout_s:
                p.kill()
                p.join()
                outcome = {"status": "hang", "detail": f"over {timeout_s:g} s"}
            else:
                continue
            if outcome is None:
                outcome = {"status": "crash", "detail": f"exit code {p.exitcode} before reporting"}
            outcome["wall_s"] = round(time.monotonic() - t0, 3)
            outcome.update(id=cases[i]["id"], base=cases[i]["base"], mutations=cases[i]["mutations"])
            results[i] = outcome
            recv.close()
            del running[i]
            if progress:
                progress(outcome)
    return results  # type: ignore[return-value]


def summarise(results: list[dict]) -> dict:
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return {"cases": len(results), "counts": counts, "failures": [r for r in results if r["status"] in FAILURES]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", type=int, help="run case INDEX only (replay)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30.0, help="wall seconds per case")
    ap.add_argument("--mem", type=int, default=2048, help="MB of address space per case beyond the fork server's")
    ap.add_argument("--short", action="store_true", help=f"the CI set: seed {SHORT_SEED}, {SHORT_CASES} cases")
    ap.add_argument("--json", help="write every outcome here")
    ap.add_argument("--show", action="store_true", help="print the scenario of each failing case")
    a = ap.parse_args(argv)
    if a.short:
        a.seed, a.cases = SHORT_SEED, SHORT_CASES
    bases, docs = base_scenarios(), component_docs()
    idx = [a.only] if a.only is not None else range(a.cases)
    cases = [make_case(a.seed, i, bases, docs) for i in idx]
    t0 = time.monotonic()
    results = run_cases(cases, a.jobs, a.timeout, a.mem, progress=lambda o: print(f"{o['id']:>14} {o['status']:<9} {o['wall_s']:6.2f}s {'; '.join(o['mutations'])[:90]}", flush=True) if o["status"] in FAILURES or a.only is not None else None)
    s = summarise(results)
    print(f"\n{s['cases']} cases in {time.monotonic() - t0:.0f} s: " + ", ".join(f"{k} {v}" for k, v in sorted(s["counts"].items())))
    for f in s["failures"]:
        print(f"FAIL {f['id']} [{f['status']}] base={f['base']} {'; '.join(f['mutations'])}\n     {f.get('detail')}")
        if a.show:
            case = cases[[c["id"] for c in cases].index(f["id"])]
            print(json.dumps(case["scenario"], default=str))
    if a.json:
        Path(a.json).write_text(json.dumps({"seed": a.seed, **s, "results": results}, indent=1, default=str))
    return 1 if s["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
