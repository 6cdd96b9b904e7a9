"""benches/kernel/kernel.py's cell scenarios: the qdisc overrides (`--qdisc-set`, e.g. PIE's
`variant = "rfc"`) reach the bottleneck on the side that is simulated (the emulated side
loads the same scenario), and a bad value is refused with its field path."""

import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benches" / "kernel"))
import kernel as kb
from aqmlab.emulate.compare import metrics
from aqmlab.runner import run
from aqmlab.scenario import load_scenario


def cell(qdisc_sets):
    path, sets = kb.scenario(("reno", "pie", "2mbit"), "8s", qdisc_sets)
    return load_scenario(path, sets)


def test_qdisc_set_reaches_the_bottleneck():
    assert cell({"variant": "rfc"})["topology"]["bottleneck"]["qdisc"] == {"kind": "pie", "limit": "100pkt",
                                                                           "variant": "rfc"}
    assert cell({})["topology"]["bottleneck"]["qdisc"] == {"kind": "pie", "limit": "100pkt"}


def test_the_two_pie_variants_run_differently_and_a_bad_one_is_refused():
    # 8 s of 4 reno flows at 2 Mbit/s: Linux's PIE and RFC 8033's drop differently.
    linux, rfc = (metrics(run(cell(q), seed=1)) for q in ({}, {"variant": "rfc"}))
    assert linux["drop_pct"] > 0 and rfc["drop_pct"] > 0
    assert linux["drop_pct"] != rfc["drop_pct"]
    with pytest.raises(Exception, match=r"bottleneck\.qdisc\.variant: \"rfcx\""):
        run(cell({"variant": "rfcx"}), seed=1)
