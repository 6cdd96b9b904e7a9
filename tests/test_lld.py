"""The Low Latency DOCSIS modem upstream through the Python API (docs/access/lld.md)."""

import aqmlab
import polars as pl
import pytest
from aqmlab import ScenarioError
from conftest import EXAMPLES


def test_lld_example_has_service_flow_rows_and_lld_tables():
    res = aqmlab.run(EXAMPLES / "lld-upstream.toml", set={"duration": "10s", "warmup": "2s"})
    q = res.queues
    ll = q.filter(pl.col("link") == "upstream.ll").row(0, named=True)
    classic = q.filter(pl.col("link") == "upstream.classic").row(0, named=True)
    assert ll["qdisc"] == "lld-ll" and classic["qdisc"] == "lld-classic"
    # The ECT(1) game stream is the LL SF's only traffic, the Not-ECT upload the
    # Classic SF's; PGS serves the game stream within one 2-ms MAP of its arrival.
    assert ll["arrivals"] == 2000  # 500 kbit/s of 250-B packets for 8 s
    assert ll["sojourn_ms_max"] <= 2.1
    assert classic["sojourn_ms_mean"] > ll["sojourn_ms_mean"]
    lld = res.tables["lld"]
    llrow = lld.filter(pl.col("sf") == "ll").row(0, named=True)
    # 1 Mbit/s every 2-ms MAP: 250-B grants, one per MAP.
    assert llrow["pgs_grant_bytes"] == 250 * llrow["pgs_grants"]
    assert llrow["sent_bps"] == pytest.approx(ll["throughput_bps"], rel=1e-9)
    flows = res.tables["lld_flows"]
    assert flows["ll_packets"].to_list() == [2000]
    assert flows["sanctioned_packets"].to_list() == [0]


def test_lld_bad_input_is_a_scenario_error_with_its_path():
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(
            EXAMPLES / "lld-upstream.toml",
            set={"topology.bottleneck.model.scheduling_weight": 300},
        )
    assert "topology.bottleneck.model.scheduling_weight" in str(e.value)
