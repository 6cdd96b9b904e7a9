"""The Wi-Fi aggregation link model through the Python API (docs/access/wifi.md)."""

import aqmlab
import polars as pl
import pytest
from aqmlab import ScenarioError
from conftest import EXAMPLES


def test_wifi_example_has_the_wifi_table_and_full_bursts():
    res = aqmlab.run(EXAMPLES / "wifi-downlink.toml", set={"duration": "10s"})
    w = res.tables["wifi"].row(0, named=True)
    assert w["link"] == "wifi"
    # 65 Mbit/s, 1500 B packets: aPPDUMaxTime (5.484 ms) closes an A-MPDU at 28 MPDUs.
    assert w["saturation_mpdus"] == 28
    assert w["closed_mpdus"] == 0 and w["closed_bytes"] == 0
    assert w["mpdus"] >= 27 * w["closed_time"]
    q = res.queues.filter(pl.col("link") == "wifi").row(0, named=True)
    assert q["throughput_bps"] <= w["saturation_bps"] * 1.001


def test_wifi_bad_input_is_a_scenario_error_with_its_path():
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(EXAMPLES / "wifi-downlink.toml", set={"topology.bottleneck.model.cw_min": 10})
    assert "topology.bottleneck.model.cw_min" in str(e.value)
    assert "2^k - 1" in str(e.value)
