"""The rural-broadband study: E1 (buffer size) covers STUDIES.md §1's grid, and a quick,
shortened E1 reproduces the findings the models give by construction: DropTail's
queueing delay grows with the buffer while ARED's, PIE's and CoDel's do not, and the
AQMs pay for it with more drops."""

import subprocess

import polars as pl

import aqmlab
from aqmlab import study
from aqmlab.sweep import read_sweep_file
from conftest import AQMLAB, ROOT

QDISC = "topology.bottleneck.qdisc"
LIMIT = "topology.bottleneck.qdisc.limit"


def test_experiments_cover_the_studys_grids():
    d = study.study_dir("rural-broadband")
    exps = study.experiments(d)
    assert list(exps) == ["E1", "E2", "E3", "E4", "E5", "E5L", "E6"]
    e2 = read_sweep_file(exps["E2"])
    assert [q["kind"] for q in e2.grid[QDISC]] == ["ared", "pie", "codel"]
    assert e2.grid[QDISC + ".target"] == ["2ms", "5ms", "10ms", "20ms", "35ms", "50ms"]
    e5 = read_sweep_file(exps["E5"])
    assert e5.grid["topology.bottleneck.rate"][0] == "0.4Mbit" and e5.grid["topology.bottleneck.rate"][-1] == "5Mbit"
    assert e5.zip[0]["traffic[0].cc"] == ["newreno", "cubic", "compound"]
    assert read_sweep_file(exps["E5L"]).set["traffic[0].ledbat_target"] == "25ms"
    e6 = read_sweep_file(exps["E6"])
    assert [q.get("rate") for q in e6.grid[QDISC] if q["kind"] == "ared"] == ["0.5Mbit", "2Mbit", "3.5Mbit"]
    assert e6.set["topology.bottleneck.rate_process"]["rates"][0] == "0.5Mbit" and e6.seeds == 50
    sf = read_sweep_file(exps["E1"])
    assert [q["kind"] for q in sf.grid[QDISC]] == ["pfifo", "ared", "pie", "codel"]
    targets = {q["kind"]: q.get("target") for q in sf.grid[QDISC]}
    assert targets == {"pfifo": None, "ared": "10ms", "pie": "10ms", "codel": "35ms"}
    assert sf.grid[LIMIT] == ["100pkt", "200pkt", "400pkt"]
    assert sf.seeds == 50 and sf.quick["seeds"] == 5
    aqmlab.validate(d / "scenario.toml")


def test_quick_e1_droptail_delay_grows_with_the_buffer_and_the_aqms_do_not(tmp_path):
    out = tmp_path / "study"
    p = subprocess.run([*AQMLAB, "study", "run", "rural-broadband", "--quick", "-e", "E1", "--out", out, "--quiet",
                        "--set", "duration=60s"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert {"E1-sojourn_ms_mean-r4-r5", "E1-mos-voice", "E1-qlen-cdf-400pkt"} <= {f.stem for f in (out / "figures").glob("*.png")}
    agg = aqmlab.load(out / "E1").with_columns(pl.col(QDISC).str.extract(r"kind=(\w+)").alias("kind"))

    def mean(metric, kind, limit):
        r = agg.filter((pl.col("table") == "queues") & (pl.col("entity") == "r4->r5") & (pl.col("metric") == metric)
                       & (pl.col("kind") == kind) & (pl.col(LIMIT) == limit))
        return r["mean"][0]

    d = [mean("sojourn_ms_mean", "pfifo", b) for b in ("100pkt", "200pkt", "400pkt")]
    assert d[0] < d[1] < d[2] and d[2] > 3 * d[0], d
    for kind in ("ared", "pie", "codel"):
        small, large = mean("sojourn_ms_mean", kind, "100pkt"), mean("sojourn_ms_mean", kind, "400pkt")
        assert abs(large - small) < 0.2 * small, (kind, small, large)
        assert large < d[0] / 2, (kind, large, d[0])
        assert mean("drop_rate", kind, "400pkt") > mean("drop_rate", "pfifo", "400pkt"), kind
