"""flent interoperability: exports load in flent's own loader (flent.resultset.load)
with flent's series names, lengths and units; presets mirror flent's tests."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import aqmlab
import pytest
from aqmlab import flent as fl
from aqmlab.errors import ScenarioError
from aqmlab.scenario import load_scenario
from flent import resultset

ROOT = Path(__file__).resolve().parents[1]

DUMBBELL = {
    "name": "flent-test",
    "duration": "12s",
    "seed": 3,
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"rate": "10Mbit", "delay": "10ms", "qdisc": {"kind": "codel", "limit": "1BDP"}},
        "reverse": {"rate": "4Mbit", "delay": "10ms", "qdisc": {"kind": "codel", "limit": "1BDP"}},
        "hosts": [{"name": "a", "left": {"rate": "1Gbit", "delay": "5ms"}, "right": {"rate": "1Gbit", "delay": "5ms"}}],
    },
}


def export(doc: dict, tmp_path: Path):
    d, meta, notes = fl.prepare(doc)
    res = aqmlab.run(d)
    out = tmp_path / "run.flent.gz"
    fl.write(res, res.scenario, out, meta)
    return resultset.load(str(out)), res, notes, out


def values(rs, name):
    return [v for v in rs.series(name) if v is not None]


def test_cli_five_tcp_export_loads_in_flent(tmp_path):
    from aqmlab.cli import app
    from typer.testing import CliRunner

    out = tmp_path / "run.flent.gz"
    r = CliRunner().invoke(app, ["run", str(ROOT / "examples/five-tcp.toml"), "--format", "flent", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    rs = resultset.load(str(out))
    assert rs.meta("NAME") == "tcp_nup"
    assert rs.meta("TEST_PARAMETERS") == {"upload_streams": "5"}
    names = [f"TCP upload::{k}" for k in range(1, 6)]
    assert set(rs.series_names) == {*names, "TCP upload avg", "TCP upload sum", "Ping (ms) ICMP"}
    # 60 s at flent's 0.2 s step.
    assert len(rs.x_values) == 300
    for n in rs.series_names:
        assert len(rs.series(n)) == 300
        assert values(rs, n), n
    units = {n: rs.meta("SERIES_META")[n]["UNITS"] for n in rs.series_names}
    assert units["Ping (ms) ICMP"] == "ms" and units["TCP upload::3"] == "Mbits/s"
    # The sum over the run equals the flows' delivered bytes (the series integrate to them).
    res = aqmlab.run(fl.prepare(load_scenario(ROOT / "examples/five-tcp.toml"))[0])
    delivered = res.flows.filter(res.flows["kind"] == "tcp")["bytes_delivered"].sum()
    assert sum(values(rs, "TCP upload sum")) * 0.2 * 1e6 / 8 == pytest.approx(delivered, rel=1e-9)
    # Ping: the base RTT of five-tcp is 2 × (10 + 30 + 10) = 100 ms; queueing only adds.
    assert min(values(rs, "Ping (ms) ICMP")) >= 100.0


def test_rrul_preset_has_flents_series_markings_and_timing(tmp_path):
    doc = {**DUMBBELL, "traffic": [{"kind": "rrul", "hosts": "a", "delay": "2s"}]}
    rs, res, notes, _ = export(doc, tmp_path)
    assert notes == []  # the preset has its own probes
    assert rs.meta("NAME") == "rrul"
    expected = {f"TCP {d} {i}" for d in ("upload", "download") for i in ("BE", "BK", "CS5", "EF")}
    expected |= {"Ping (ms) UDP EF", "Ping (ms) UDP BK", "Ping (ms) UDP BE", "Ping (ms) ICMP", "Ping (ms) avg"}
    expected |= {"TCP upload avg", "TCP upload sum", "TCP download avg", "TCP download sum", "TCP totals"}
    assert set(rs.series_names) == expected
    ran = res.scenario["traffic"]
    cls = {t["name"]: t["class"] for t in ran}
    assert cls["TCP upload BK"] == 8 and cls["TCP download CS5"] == 40 and cls["Ping (ms) UDP EF"] == 46
    assert all(t["start"] == "2s" for t in ran if t["kind"] == "tcp-bulk")
    # TCP flows run from 2 s to 10 s: nothing before 2 s in the upload series.
    x = rs.x_values
    up = rs.series("TCP upload BE")
    assert all((v or 0) == 0 for t, v in zip(x, up) if t <= 2.0)
    assert sum(v for t, v in zip(x, up) if 3 < t < 10 and v) > 0
    # Uploads share 10 Mbit/s, downloads 4 Mbit/s (mean over the busy middle; the
    # reverse link also carries the uploads' ACKs and has a 14-packet CoDel limit).
    mid = [k for k, t in enumerate(x) if 4 <= t <= 9.8]
    up_sum = sum(rs.series("TCP upload sum")[k] for k in mid) / len(mid)
    down_sum = sum(rs.series("TCP download sum")[k] for k in mid) / len(mid)
    assert 8.0 < up_sum <= 10.0 and 1.5 < down_sum <= 4.0
    # Pings run the whole time (60 probes); a few die in the 8 flows' slow starts into
    # a 14-packet queue, and every answered one is a point of the series.
    icmp = res.apps.filter(res.apps["app"] == "Ping (ms) ICMP").row(0, named=True)
    assert icmp["probes_sent"] == 60
    answered = 60 - icmp["probes_lost"]
    assert 40 <= len(values(rs, "Ping (ms) ICMP")) <= answered


def test_presets_nup_and_ndown_and_bad_input(tmp_path):
    rs, _, _, out = export({**DUMBBELL, "traffic": [{"kind": "tcp_ndown", "hosts": "a", "streams": 3, "delay": "1s"}]}, tmp_path)
    assert rs.meta("NAME") == "tcp_ndown"
    assert {"TCP download::1", "TCP download::3", "Ping (ms) ICMP"} <= set(rs.series_names)
    raw = json.loads(gzip.open(out, "rt").read())
    assert raw["version"] == 4
    with pytest.raises(ScenarioError) as e:
        fl.prepare({**DUMBBELL, "traffic": [{"kind": "tcp_nup", "hosts": "a"}]})
    assert e.value.path == "traffic[0].streams"
    with pytest.raises(ScenarioError) as e:
        fl.prepare({**DUMBBELL, "traffic": [{"kind": "rrul", "hosts": "a", "streams": 2}]})
    assert e.value.path == "traffic[0].streams" and "unknown key" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        fl.prepare({**DUMBBELL, "traffic": [{"kind": "rrul", "hosts": "a", "delay": "6s"}]})
    assert e.value.path == "traffic[0].delay"
    both = {**DUMBBELL, "traffic": [{"kind": "tcp-bulk", "hosts": "a"}, {"kind": "tcp-bulk", "hosts": "a", "direction": "reverse"}]}
    d, meta, _ = fl.prepare(both)
    with pytest.raises(ScenarioError) as e:
        fl.to_flent(aqmlab.run({**d, "duration": "2s"}), d, meta)
    assert "both directions" in str(e.value)


def test_the_same_run_gives_the_same_file(tmp_path):
    doc = {**DUMBBELL, "duration": "4s", "traffic": [{"kind": "tcp_nup", "hosts": "a", "streams": 2, "delay": "1s"}]}
    a = export(doc, tmp_path / "a" if (tmp_path / "a").mkdir() is None else None)[3].read_bytes()
    b = export(doc, tmp_path / "b" if (tmp_path / "b").mkdir() is None else None)[3].read_bytes()
    assert a == b


def test_ping_rtt_is_the_base_rtt_on_an_idle_path():
    doc = {**DUMBBELL, "duration": "3s", "traffic": [{"kind": "ping", "hosts": "a", "interval": "100ms"}]}
    res = aqmlab.run(doc)
    p = res["pings"]
    assert p.height == 30
    # 2 × (5 + 10 + 5) ms of propagation plus 2 × 84 B serialisation on each link.
    ser = 84 * 8 * (1 / 1e9 + 1 / 10e6 + 1 / 1e9 + 1 / 1e9 + 1 / 4e6 + 1 / 1e9) * 1e3
    assert all(math.isclose(r, 40.0 + ser, abs_tol=1e-6) for r in p["rtt_ms"].to_list())
    app = res.apps.row(0, named=True)
    assert app["probes_sent"] == 30 and app["probes_lost"] == 0


def test_sweep_writes_a_flent_file_per_run(tmp_path):
    from aqmlab.cli import app
    from typer.testing import CliRunner

    sweep = tmp_path / "s.toml"
    sweep.write_text(f'name = "s"\nbase = "{ROOT / "examples/five-tcp.toml"}"\nseeds = 1\nset = {{ duration = "6s" }}\n'
                     '[grid]\n"topology.bottleneck.qdisc.kind" = ["pfifo", "codel"]\n')
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["sweep", str(sweep), "--format", "flent", "--out", str(out), "-q", "--workers", "1"])
    assert r.exit_code == 0, r.output
    files = sorted(out.glob("runs/*/run.flent.gz"))
    assert len(files) == 2
    for f in files:
        rs = resultset.load(str(f))
        assert rs.meta("NAME") == "tcp_nup" and len(rs.x_values) == 30
        assert values(rs, "TCP upload sum") and values(rs, "Ping (ms) ICMP")
