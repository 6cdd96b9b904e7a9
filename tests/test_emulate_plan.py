"""The emulation plan reads a TCP entry's `cc` given as a table (`cc = { kind = ..., ... }`):
the kernel's module of that name runs and the model's parameters are reported as ignored.
Pure planning: needs no network namespaces."""

import pytest
from aqmlab.emulate.plan import make_plan
from aqmlab.errors import ScenarioError


def doc(cc) -> dict:
    return {
        "name": "plan-test", "duration": "1s", "seed": 1,
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate": "10Mbit", "delay": "20ms", "qdisc": {"kind": "pfifo"}},
            "hosts": [{"name": "a", "count": 1, "left": {"rate": "1Gbit", "delay": "0ms"},
                       "right": {"rate": "1Gbit", "delay": "0ms"}}],
        },
        "traffic": [{"kind": "tcp-bulk", "hosts": "a", "cc": cc}],
    }


def test_a_cc_table_runs_the_kernel_module_and_ignores_the_model_parameters():
    p = make_plan(doc({"kind": "cubic", "hystart": False}))
    assert (p.flows[0].cc, p.flows[0].kernel_cc) == ("cubic", "cubic")
    assert any(i.startswith("traffic[0].cc.hystart") for i in p.ignored)
    assert make_plan(doc("cubic")).flows[0].kernel_cc == "cubic"


def test_a_cc_table_without_kernel_equivalent_names_the_field():
    with pytest.raises(ScenarioError) as e:
        make_plan(doc({"kind": "vegas", "alpha": 1}))
    assert e.value.path == "traffic[0].cc" and "vegas" in str(e.value)
