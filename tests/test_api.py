"""The Python API: run, results as polars/pandas, overrides, determinism, errors."""

import json

import aqmlab
import pandas as pd
import polars as pl
import pytest
from aqmlab import ScenarioError, SimulationError, _core
from conftest import EXAMPLES

QUEUE_COLUMNS = [
    "link", "qdisc", "sojourn_ms_mean", "sojourn_ms_p50", "sojourn_ms_p95", "sojourn_ms_p99",
    "qlen_pkts_mean", "qlen_bytes_mean", "enqueued", "dequeued", "drops", "drops_overflow",
    "drops_early", "marks", "drop_rate", "utilization", "throughput_bps", "throughput_bps_std",
    "qlen_pkts_std", "arrival_bps", "arrival_bps_std",
]
FLOW_COLUMNS = [
    "flow", "app", "kind", "src", "dst", "cc", "bytes_sent", "bytes_delivered", "goodput_bps",
    "goodput_window_bps",    "retransmits", "timeouts", "rtt_ms_mean", "owd_ms_mean", "loss_rate",
]


def test_run_returns_the_contract_tables(small):
    res = aqmlab.run(small, seed=3)
    assert isinstance(res.queues, pl.DataFrame)
    assert set(["scenario", "seed", "sim_time_s", "wall_time_s", "events", "packets"]) <= set(res.summary.columns)
    assert set(QUEUE_COLUMNS) <= set(res.queues.columns)
    assert set(FLOW_COLUMNS) <= set(res.flows.columns)
    assert {"app", "kind"} <= set(res.apps.columns)
    s = res.summary.row(0, named=True)
    assert s["scenario"] == "small" and s["seed"] == 3 and s["sim_time_s"] == 5.0
    bott = res.queues.filter(pl.col("link") == "L->R").row(0, named=True)
    assert 0.55 < bott["utilization"] < 0.65  # 2 flows x 0.6 of 2 Mbit/s
    pdf = res.to_pandas()
    assert isinstance(pdf["flows"], pd.DataFrame) and len(pdf["flows"]) == 2


def test_mm1_example_matches_theory_through_python():
    res = aqmlab.run(EXAMPLES / "mm1.toml", set={"duration": "1000s"})
    q = res.queues.filter(pl.col("link") == "a->b").row(0, named=True)
    assert q["sojourn_ms_mean"] == pytest.approx(3.2, rel=0.03)


def test_same_seed_identical_other_seed_different(small):
    def tables(seed):
        r = aqmlab.run(small, seed=seed)
        return {k: v.drop([c for c in ("wall_time_s", "events_per_s") if c in v.columns]) for k, v in r.tables.items()}

    a, b, c = tables(1), tables(1), tables(2)
    for k in a:
        assert a[k].equals(b[k]), k
    assert not a["queues"].equals(c["queues"])


def test_overrides_with_dotted_paths_and_list_indices(small):
    res = aqmlab.run(small, set=["topology.bottleneck.rate=4Mbit", "traffic[0].rate=1Mbit", "duration=2s"])
    bott = res.queues.filter(pl.col("link") == "L->R").row(0, named=True)
    assert bott["rate_bps"] == 4_000_000
    assert bott["utilization"] == pytest.approx(0.5, abs=0.05)
    assert res.summary["sim_time_s"][0] == 2.0
    # dict overrides and the bottleneck shorthand
    res = aqmlab.run(small, set={"bottleneck.qdisc.limit": "5pkt", "traffic.0.rate": "3Mbit"})
    bott = res.queues.filter(pl.col("link") == "L->R").row(0, named=True)
    assert bott["drops_overflow"] > 0


def test_override_errors_name_the_path(small):
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(small, set=["traffic[3].rate=1Mbit"])
    assert e.value.path == "traffic[3]"
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(small, set=["nonsense"])
    assert "PATH=VALUE" in str(e.value)


@pytest.mark.parametrize(
    "override, path, needle",
    [
        ({"duratoin": "5s"}, "duratoin", "unknown field"),
        ({"topology.bottleneck.rate": "-2Mbit"}, "topology.bottleneck.rate", "negative"),
        ({"topology.bottleneck.rate": "2000000"}, "topology.bottleneck.rate", "missing unit"),
        ({"topology.bottleneck.delay": "5 parsecs"}, "topology.bottleneck.delay", "parsecs"),
        ({"topology.bottleneck.qdisc.limit": "0pkt"}, "topology.bottleneck.qdisc.limit", "greater than zero"),
        ({"topology.bottleneck.qdisc.limt": "5pkt"}, "topology.bottleneck.qdisc.limt", "unknown parameter"),
        ({"traffic[0].hosts": "zz"}, "traffic[0].hosts", "no such host group"),
    ],
)
def test_bad_input_raises_scenario_error_with_path(small, override, path, needle):
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(small, set=override)
    assert e.value.path == path
    assert needle in e.value.message
    assert str(e.value).startswith(path + ": ")
    with pytest.raises(ScenarioError):
        aqmlab.validate(small, override)


def test_graph_errors_missing_node_and_self_link():
    scen = {
        "duration": "1s",
        "topology": {"kind": "graph", "nodes": [{"name": "a"}, {"name": "b"}], "links": [{"from": "a", "to": "x", "rate": "1Mbit"}]},
    }
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert e.value.path == "topology.links[0].to" and "no such node" in e.value.message
    scen["topology"]["links"][0]["to"] = "a"
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(scen)
    assert "itself" in e.value.message


def test_a_rust_panic_is_a_python_exception_not_a_crash():
    with pytest.raises(SimulationError, match="deliberate panic"):
        _core._panic_for_test()
    # the interpreter is still fine
    assert aqmlab.run(SMALL_FAST).summary.height == 1


SMALL_FAST = {
    "duration": "1s",
    "topology": {"kind": "graph", "nodes": [{"name": "a"}, {"name": "b"}], "links": [{"from": "a", "to": "b", "rate": "1Mbit"}]},
    "traffic": [{"kind": "udp-cbr", "src": "a", "dst": "b", "rate": "100kbit"}],
}


def test_gil_is_released_while_simulating(small):
    import threading
    import time

    small["duration"] = "4000s"
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    sim = _core.Simulation(json.dumps(small), 1, None)
    t0 = time.perf_counter()
    sim.run()
    t1 = time.perf_counter()
    stop.set()
    t.join()
    during = [x for x in ticks if t0 < x < t1]
    # With the GIL held the ticker could not run at all during the simulation.
    assert t1 - t0 > 0.05, "the run should take a measurable time"
    assert len(during) >= 5


def test_progress_callback_reaches_one(small):
    seen = []
    aqmlab.run(small, progress=seen.append)
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)


def test_json_document_shape(small):
    res = aqmlab.run(small)
    doc = json.loads(res.to_json())
    assert set(doc) == {"summary", "queues", "flows", "apps"}
    assert doc["summary"]["scenario"] == "small"
    assert isinstance(doc["queues"], list) and "sojourn_ms_p99" in doc["queues"][0]
    # NaN (an idle link's sojourn) becomes null, so the JSON is strict
    idle = [q for q in doc["queues"] if q["dequeued"] == 0]
    assert idle and idle[0]["sojourn_ms_mean"] is None


def test_timeseries_and_drop_log_are_opt_in(small):
    res = aqmlab.run(small)
    assert "timeseries" not in res and "drops" not in res
    small["output"] = {"timeseries": "100ms", "timeseries_links": ["L->R"], "drops": True}
    small["traffic"][0]["rate"] = "3Mbit"
    res = aqmlab.run(small)
    ts = res.timeseries
    assert ts.height == 51 and set(ts["link"]) == {"L->R"}
    assert {"time_ns", "qlen_pkts", "qlen_bytes", "sojourn_ms", "rate_bps", "drop_prob"} <= set(ts.columns)
    d = res.drops
    assert d.height == res.queues["drops"].sum() > 0
    assert set(d["reason"]) == {"overflow"} and set(d["at"]) == {"enqueue"}


def test_parquet_roundtrip(tmp_path, small):
    res = aqmlab.run(small)
    res.write_parquet(tmp_path)
    back = aqmlab.Results.read_parquet(tmp_path)
    assert back.queues.equals(res.queues)
    assert back.scenario["name"] == "small"


def test_docs_list_disciplines_and_traffic():
    kinds = {d["kind"]: d for d in aqmlab.qdisc_docs()}
    assert {"pfifo", "bfifo", "pfifo_head_drop"} <= set(kinds)
    assert kinds["pfifo"]["params"][0]["name"] == "limit"
    traffic = {d["kind"] for d in aqmlab.traffic_docs()}
    assert {"udp-cbr", "udp-poisson", "common"} <= traffic
