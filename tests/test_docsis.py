"""The DOCSIS cable-modem link model through the Python API (docs/access/docsis.md)."""

import aqmlab
import polars as pl
import pytest
from aqmlab import ScenarioError
from conftest import EXAMPLES


def test_docsis_example_has_rsq_txq_and_mac_tables():
    res = aqmlab.run(EXAMPLES / "docsis-upstream.toml", set={"duration": "20s"})
    q = res.queues
    rsq = q.filter(pl.col("link") == "upstream").row(0, named=True)
    txq = q.filter(pl.col("link") == "upstream.txq").row(0, named=True)
    assert rsq["qdisc"] == "codel" and txq["qdisc"] == "docsis-txq"
    assert txq["drops"] == 0
    mac = res.tables["docsis"].row(0, named=True)
    assert mac["link"] == "upstream"
    assert mac["bytes_granted"] == mac["bytes_used"]
    # The grant cap (1250 B per 2 ms MAP, drawn ± 20 %) sets the carried rate.
    assert rsq["throughput_bps"] == pytest.approx(mac["granted_bps"], rel=0.002)


def test_docsis_bad_input_is_a_scenario_error_with_its_path():
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(
            EXAMPLES / "docsis-upstream.toml",
            set={"topology.bottleneck.model.peak_rate": "1Mbit"},
        )
    assert "topology.bottleneck.model.peak_rate" in str(e.value)
