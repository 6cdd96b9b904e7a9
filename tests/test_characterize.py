"""`aqmlab characterize`: the RFC 7928 suite runs, reports, and refuses bad input."""

from __future__ import annotations

import math

import polars as pl
import pytest
from aqmlab.characterize import characterize, experiments, loss_intervals, sync_index
from aqmlab.cli import app
from aqmlab.errors import ScenarioError
from typer.testing import CliRunner


def test_sync_index_by_hand():
    # Three TCP flows (1, 2, 3) and a UDP flow (9). Drops at 0 ms (flow 1), 50 ms (2),
    # 60 ms (9, not TCP): one event in which 2 of 3 flows lose; then 500 ms (1): a new
    # event (gap > 100 ms) with 1 of 3. Mean = (2/3 + 1/3) / 2 = 0.5.
    drops = pl.DataFrame({"time_ns": [0, 50_000_000, 60_000_000, 500_000_000], "flow": [1, 2, 9, 1]})
    assert sync_index(drops, [1, 2, 3], 0.1) == pytest.approx(0.5)
    # Every flow in every event: fully synchronised.
    drops = pl.DataFrame({"time_ns": [0, 10, 1_000_000_000, 1_000_000_010], "flow": [1, 2, 2, 1]})
    assert sync_index(drops, [1, 2], 0.1) == 1.0
    assert math.isnan(sync_index(pl.DataFrame({"time_ns": [], "flow": []}), [1], 0.1))


def test_loss_intervals_by_hand():
    # Flow 1 loses at 0, 1, 3 s: gaps 1 and 2 s, mean 1.5, std 0.7071 → CV 0.4714.
    # Flow 2 loses once (no interval pair): left out.
    drops = pl.DataFrame({"time_ns": [0, 10**9, 3 * 10**9, 5 * 10**9], "flow": [1, 1, 1, 2]})
    m, cv = loss_intervals(drops, [1, 2])
    assert m == pytest.approx(1.5)
    assert cv == pytest.approx(math.sqrt(0.5) / 1.5)
    assert all(math.isnan(x) for x in loss_intervals(drops, [2]))


def test_every_experiment_cites_its_section_and_source():
    for e in experiments():
        assert e.section and e.title
        assert "ns-3" in e.source or "*assumed*" in e.source or e.section == "access", e.id


def test_quick_sections_write_a_report_with_droptail_beside(tmp_path):
    r = characterize("codel", quick=True, out=tmp_path, sections=["5.1.1-tcp-friendly", "6"], workers=2)
    page = (tmp_path / "report.html").read_text()
    for heading in ("§5.1 TCP-Friendly Sender", "§6 Round-Trip Time Fairness", "§11 Implementation Cost", "§12 Operator Control"):
        assert heading in page
    m = r.metrics["5.1.1-tcp-friendly"]
    assert set(m["discipline"]) == {"codel", "DropTail"}
    delay = dict(zip(m["discipline"], m["queue_delay_ms_mean"]))
    # CoDel keeps the standing queue of one NewReno flow well below DropTail's full
    # one-BDP buffer (9 packets of 1500 B at 1 Mbit/s: up to 108 ms).
    assert delay["codel"] < 0.6 * delay["DropTail"]
    rtt = r.metrics["6-rtt-fairness"]
    assert rtt.height == 2 * 3  # two disciplines x three RTTs (quick)
    assert rtt["goodput_ratio"].is_not_null().all()
    # The 10 ms flow beats the 100 ms one, the 300 ms flow loses to it.
    g = dict(zip(zip(rtt["discipline"], rtt["point"]), rtt["goodput_ratio"]))
    assert g[("DropTail", "1.5ms")] > 1 > g[("DropTail", "74.0ms")]


def test_bad_input_is_refused_with_the_field_named(tmp_path):
    with pytest.raises(ScenarioError) as e:
        characterize("nosuch", quick=True, out=tmp_path)
    assert e.value.path == "aqm" and "unknown queue discipline" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        characterize("pfifo_head_drop", quick=True, out=tmp_path, sections=["4.5"])
    assert "§4.5 cannot apply" in str(e.value) and "ecn" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        characterize("codel", set=["qdisc.tagret=5ms"], quick=True, out=tmp_path)
    assert "no parameter `tagret`" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        characterize("codel", quick=True, out=tmp_path, sections=["11"])
    assert e.value.path == "--sections"
    r = CliRunner().invoke(app, ["characterize", "codel", "--set", "qdisc.target=-5ms", "--quick", "--sections", "5.2", "--out", str(tmp_path)])
    assert r.exit_code == 2
    assert "topology.bottleneck.qdisc.target" in r.output and "§5.2" in r.output
