"""Errors a user meets first: misspelt kinds, fields and units get a "did you mean", a
traffic entry that starts after the run ends is refused with both values named."""

import aqmlab
import pytest
from aqmlab.scenario import warnings as scenario_warnings
from conftest import EXAMPLES

FIVE = EXAMPLES / "five-tcp.toml"


def error_of(overrides) -> str:
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.validate(FIVE, overrides)
    return str(e.value)


@pytest.mark.parametrize("typed", ["fq_codle", "fq-codel", "FQ_CoDel"])
def test_misspelt_qdisc_kind_suggests_the_kind(typed):
    msg = error_of({"bottleneck": {"rate": "10Mbit", "delay": "10ms", "qdisc": {"kind": typed}}})
    assert f'"{typed}": unknown queue discipline (did you mean "fq_codel"?)' in msg and "expected one of" in msg


def test_unknown_field_and_traffic_kind_and_unit():
    msg = error_of({"bottleneck": {"rate": "10Mbit", "delay": "10ms", "qdisc": {"kind": "codel", "targte": "5ms"}}})
    assert "targte" in msg and '(did you mean "target"?)' in msg
    msg = error_of({"traffic": [{"kind": "tcp-bluk", "hosts": "h"}]})
    assert '(did you mean "tcp-bulk"?)' in msg
    msg = error_of({"bottleneck": {"rate": "10Mbit", "delay": "10msec", "qdisc": {"kind": "codel"}}})
    assert "unknown unit `msec` (did you mean \"ms\"?)" in msg
    # nothing close: no guess
    msg = error_of({"bottleneck": {"rate": "10Mbit", "delay": "10ms", "qdisc": {"kind": "wfq2000"}}})
    assert "did you mean" not in msg


def test_start_after_the_end_of_the_run_is_an_error():
    doc = aqmlab.load_scenario(FIVE)
    entry = dict(doc["traffic"][0])
    entry["start"] = "90s"
    msg = error_of({"duration": "60s", "traffic": [entry]})
    assert "traffic[0].start" in msg and "90 s" in msg and "duration = 60 s" in msg


def test_init_writes_a_valid_commented_starter(tmp_path):
    from test_plots_report import cli

    f = tmp_path / "scenario.toml"
    p = cli("init", f)
    assert p.returncode == 0, p.stderr
    text = f.read_text()
    assert text.count("#") > 10  # commented
    aqmlab.validate(f)
    res = aqmlab.run(f, set={"duration": "12s"})
    assert res.apps.filter(res.apps["app"] == "call")["mos"][0] >= 1.0
    p = cli("init", f)
    assert p.returncode == 2 and "already exists" in p.stderr


def test_set_addresses_a_traffic_entry_by_name():
    doc = aqmlab.load_scenario(EXAMPLES / "voip-uploads.toml", ["traffic.call.start=20s", "topology.hosts.ftp.count=2"])
    call = next(t for t in doc["traffic"] if t["name"] == "call")
    assert call["start"] == "20s" and doc["topology"]["hosts"][0]["count"] == 2
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.load_scenario(EXAMPLES / "voip-uploads.toml", ["traffic.cal.start=20s"])
    assert "no entry of traffic is named 'cal'" in str(e.value) and "up, call" in str(e.value)


def test_codel_target_below_one_packet_time_warns(tmp_path):
    from test_plots_report import cli

    slow = {"bottleneck": {"rate": "1Mbit", "delay": "10ms", "qdisc": {"kind": "fq_codel"}}, "duration": "5s"}
    [w] = scenario_warnings(FIVE, slow)
    assert "fq_codel target 5 ms is shorter than one 1500 B packet's transmission time" in w and "at least 18 ms" in w
    res = aqmlab.run(FIVE, set=slow)
    assert res["warnings"]["message"].to_list() == [w]
    p = cli("validate", FIVE, "--set", "bottleneck.rate=1Mbit", "--set", 'bottleneck.qdisc={ kind = "fq_codel" }')
    assert p.returncode == 0 and "warning:" in p.stderr and "(1 warning)" in p.stdout
    # a target set for the link: no warning, and no warnings table
    ok = {"bottleneck": {"rate": "1Mbit", "delay": "10ms", "qdisc": {"kind": "fq_codel", "target": "18ms"}}, "duration": "5s"}
    assert scenario_warnings(FIVE, ok) == [] and "warnings" not in aqmlab.run(FIVE, set=ok)
