"""Cross-validation against ns-3.44: the same dumbbell in both, a side-by-side table.

Kept out of the test suite (it needs ns-3, minutes of CPU, and compares two models
rather than checking a rule). Run from the repository root with the project's Python
(`make install` first) after installing ns-3 into its own environment (README.md):

    .venv/bin/python benches/crossval/crossval.py [--duration 120] [--only NAME] [--rerun-ns3]

Writes benches/crossval/results.md: per scenario and metric, ns-3, aqmlab with
`profile = "ns3"` and aqmlab with the default `profile = "linux"`, and the events/s of
the aqmlab runs. ns-3 is deterministic at seed 1, so its side is recorded once in
`ns3_results.json` and reused for the same duration and warm-up; `--rerun-ns3` (or a
scenario or duration not recorded there) runs ns-3 and records it again.
"""

import argparse
import json
import pathlib
import subprocess
import sys

import aqmlab
import polars as pl

HERE = pathlib.Path(__file__).resolve().parent
NS3_PY = HERE / ".venv-ns3" / "bin" / "python"
NS3_CACHE = HERE / "ns3_results.json"

# name, cc (ns-3 type suffix, aqmlab name), flows, rate (ns-3, aqmlab), qdisc, limit
SCENARIOS = [
    ("newreno4-2M-pfifo", ("NewReno", "newreno"), 4, ("2Mbps", "2Mbit"), "pfifo", 100),
    ("newreno4-2M-codel", ("NewReno", "newreno"), 4, ("2Mbps", "2Mbit"), "codel", 1000),
    ("newreno4-2M-pie", ("NewReno", "newreno"), 4, ("2Mbps", "2Mbit"), "pie", 1000),
    ("cubic5-5M-pfifo", ("Cubic", "cubic"), 5, ("5Mbps", "5Mbit"), "pfifo", 417),
    ("cubic5-5M-codel", ("Cubic", "cubic"), 5, ("5Mbps", "5Mbit"), "codel", 1000),
    ("cubic5-5M-fqcodel", ("Cubic", "cubic"), 5, ("5Mbps", "5Mbit"), "fq_codel", 1000),
]

METRICS = ["goodput_bps", "utilization", "sojourn_ms_mean", "sojourn_ms_p95", "drop_pct",
           "retransmits", "timeouts", "jain"]


def jain(x):
    s, s2 = sum(x), sum(v * v for v in x)
    return s * s / (len(x) * s2) if s2 > 0 else float("nan")


def run_ns3(cc, n, rate, qdisc, limit, duration, warmup):
    out = subprocess.run(
        [str(NS3_PY), str(HERE / "ns3_dumbbell.py"), "--cc", cc, "--flows", str(n), "--rate", rate,
         "--qdisc", qdisc, "--limit", str(limit), "--duration", str(duration), "--warmup", str(warmup)],
        check=True, capture_output=True, text=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    g = r["goodput_bps"]
    return {"goodput_bps": sum(g), "utilization": r["utilization"],
            "sojourn_ms_mean": r["sojourn_ms_mean"], "sojourn_ms_p95": r["sojourn_ms_p95"],
            "drop_pct": 100.0 * r["drops"] / max(r["arrivals"], 1),
            "retransmits": r["retransmits"], "timeouts": r["timeouts"], "jain": jain(g)}


def ns3_side(name, args, duration, warmup, rerun, cache):
    """The ns-3 metrics of one scenario: recorded ones if they match, else a new run."""
    same = cache.get("duration_s") == duration and cache.get("warmup_s") == warmup
    if not rerun and same and name in cache.get("scenarios", {}):
        return cache["scenarios"][name]
    r = run_ns3(*args, duration, warmup)
    if not same:
        cache.clear()
        cache.update({"duration_s": duration, "warmup_s": warmup, "scenarios": {}})
    cache["scenarios"][name] = r
    NS3_CACHE.write_text(json.dumps(cache, indent=1) + "\n")
    return r


def toml(cc, n, rate, qdisc, limit, duration, warmup, profile):
    q = {"pfifo": "pfifo", "codel": "codel", "pie": "pie", "fq_codel": "fq_codel"}[qdisc]
    # ns-3's CoDel one-MTU rule (MinBytes 1500 B, strictly below) and, for FQ-CoDel,
    # its per-flow scope: qdisc options, set here for the ns3-profile runs.
    extra = ""
    if profile == "ns3" and qdisc in ("codel", "fq_codel"):
        extra = ', min_bytes = "1500B"'
        if qdisc == "fq_codel":
            extra += ', mtu_check = "flow"'
    return f"""
name = "crossval"
duration = "{duration}s"
warmup = "{warmup}s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "{rate}"
delay = "20ms"
qdisc = {{ kind = "{q}", limit = "{limit}pkt"{extra} }}
[[topology.hosts]]
name = "h"
count = {n}
left = {{ rate = "100Mbit", delay = "5ms" }}
right = {{ rate = "100Mbit", delay = "5ms" }}
[[traffic]]
kind = "tcp-bulk"
name = "f"
hosts = "h"
cc = "{cc}"
profile = "{profile}"
"""


def run_aqmlab(cc, n, rate, qdisc, limit, duration, warmup, profile):
    p = HERE / f".crossval-{profile}.toml"
    p.write_text(toml(cc, n, rate, qdisc, limit, duration, warmup, profile))
    res = aqmlab.run(p, seed=1)
    s = res.summary.row(0, named=True)
    q = res.queues.filter(pl.col("link") == "L->R").row(0, named=True)
    f = res.flows
    g = f["goodput_window_bps"].to_list()
    return {"goodput_bps": sum(g), "utilization": q["utilization"],
            "sojourn_ms_mean": q["sojourn_ms_mean"], "sojourn_ms_p95": q["sojourn_ms_p95"],
            "drop_pct": 100.0 * q["drops"] / max(q["enqueued"] + q["drops"], 1),
            "retransmits": float(f["retransmits"].sum()), "timeouts": float(f["timeouts"].sum()),
            "jain": jain(g), "events_per_s": s["events"] / s["wall_time_s"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=120.0)
    ap.add_argument("--warmup", type=float, default=20.0)
    ap.add_argument("--only", default=None)
    ap.add_argument("--rerun-ns3", action="store_true", help="run ns-3 even if recorded")
    a = ap.parse_args()
    cache = json.loads(NS3_CACHE.read_text()) if NS3_CACHE.exists() else {}
    speed = []
    lines = [f"# Cross-validation against ns-3.44 ({a.duration:.0f} s, warm-up {a.warmup:.0f} s, seed 1)", "",
             "| scenario | metric | ns-3 | aqmlab ns3 | aqmlab linux |", "| --- | --- | --- | --- | --- |"]
    for name, (ns_cc, cc), n, (ns_rate, rate), qdisc, limit in SCENARIOS:
        if a.only and a.only not in name:
            continue
        print(name, file=sys.stderr)
        ns3 = ns3_side(name, (ns_cc, n, ns_rate, qdisc, limit), a.duration, a.warmup, a.rerun_ns3, cache)
        aq3 = run_aqmlab(cc, n, rate, qdisc, limit, a.duration, a.warmup, "ns3")
        aql = run_aqmlab(cc, n, rate, qdisc, limit, a.duration, a.warmup, "linux")
        for m in METRICS:
            lines.append(f"| {name} | {m} | {ns3[m]:.4g} | {aq3[m]:.4g} | {aql[m]:.4g} |")
        speed.append(f"| {name} | {aq3['events_per_s']:.3g} | {aql['events_per_s']:.3g} |")
    lines += ["", "aqmlab events/s (simulator core, one run each; a shared machine makes it noisy):", "",
              "| scenario | ns3 profile | linux profile |", "| --- | --- | --- |"] + speed
    (HERE / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
