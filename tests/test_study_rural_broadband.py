"""The rural-broadband study: E1 (buffer size) covers the paper's grid, and a quick,
shortened E1 reproduces the findings the models give by construction: DropTail's
queueing delay grows with the buffer while ARED's, PIE's and CoDel's do not, and the
AQMs pay for it with more drops — and with the video's PSNR. Without loss the video's
PSNR is the clip's lossless PSNR. A quick E2 meets issue 24's calibration checks, and the ns-2.35
reconstruction (ns2/*.tcl) reports what paper.toml marks and shows ARED following its target."""

import json
import subprocess
import tomllib

import aqmlab
import numpy as np
import polars as pl
from aqmlab import study
from aqmlab.sweep import read_sweep_file
from conftest import AQMLAB, ROOT, need_tool

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
    # E5's CUBIC and Compound run on ns-2.35's Agent/TCP/Linux (the base scenario's profile =
    # "ns2"); E5L's LEDBAT on aqmlab's linux stack (ns-2.35 has no LEDBAT module).
    assert not any(k.endswith(".profile") for z in e5.zip for k in z)
    prep = study.prepare("rural-broadband")
    for cc in ("cubic", "compound"):
        doc = aqmlab.validate(d / "scenario.toml", {**prep, "traffic[0].cc": cc, "traffic[1].cc": cc})
        assert [(t["profile"], t["cc"], t["iw"], t["mss"]) for t in doc["traffic"][:2]] == [("ns2", cc, 3, "1024B")] * 2
    e5l = read_sweep_file(exps["E5L"])
    assert e5l.set["traffic[0].ledbat_target"] == "25ms" and e5l.set["traffic[0].profile"] == "linux"
    e6 = read_sweep_file(exps["E6"])
    assert [q.get("rate") for q in e6.grid[QDISC] if q["kind"] == "ared"] == ["0.5Mbit", "2Mbit", "3.5Mbit"]
    assert e6.set["topology.bottleneck.rate_process"]["rates"][0] == "0.5Mbit" and e6.seeds == 50
    sf = read_sweep_file(exps["E1"])
    assert [q["kind"] for q in sf.grid[QDISC]] == ["droptail", "ared", "pie", "codel"]
    targets = {q["kind"]: q.get("target") for q in sf.grid[QDISC]}
    assert targets == {"droptail": None, "ared": "10ms", "pie": "10ms", "codel": "35ms"}
    assert sf.grid[LIMIT] == ["100pkt", "200pkt", "400pkt"]
    assert sf.seeds == 50 and sf.quick["seeds"] == 5
    aqmlab.validate(d / "scenario.toml", prep)


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

    d = [mean("sojourn_ms_mean", "droptail", b) for b in ("100pkt", "200pkt", "400pkt")]
    # ns-2's Agent/TCP caps the window at window_ = 20 packets (the study's profile =
    # "ns2"), so the four FTP flows keep at most ~80 packets queued: DropTail's delay grows
    # from B = 100 to 200 and then saturates (at B = 400 the buffer never fills).
    assert d[0] < d[1] < d[2] and d[1] > 1.4 * d[0], d
    assert d[2] < 1.15 * d[1], d
    for kind in ("ared", "pie", "codel"):
        small, large = mean("sojourn_ms_mean", kind, "100pkt"), mean("sojourn_ms_mean", kind, "400pkt")
        assert abs(large - small) < 0.2 * small, (kind, small, large)
        assert large < d[0] / 2, (kind, large, d[0])
        assert mean("drop_rate", kind, "400pkt") > mean("drop_rate", "droptail", "400pkt"), kind

    # The video: the AQMs' drops cost it frames and PSNR. ARED and PIE drop more than
    # DropTail-100 and -200 and lose more decodable frames; their PSNR must be lower and
    # their video MOS too (a PSNR that ignored the freezes, or scored the wrong frames,
    # would not follow the loss).
    def video(metric, kind, limit):
        r = agg.filter((pl.col("table") == "apps") & (pl.col("entity") == "video") & (pl.col("metric") == metric)
                       & (pl.col("kind") == kind) & (pl.col(LIMIT) == limit))
        return r["mean"][0]

    for kind in ("ared", "pie"):
        for limit in ("100pkt", "200pkt"):
            loss, droptail_loss = video("decodable_frame_loss_rate", kind, limit), video("decodable_frame_loss_rate", "droptail", limit)
            assert loss > droptail_loss, (kind, limit, loss, droptail_loss)
            psnr, droptail = video("psnr_db_mean", kind, limit), video("psnr_db_mean", "droptail", limit)
            assert psnr < droptail - 3, (kind, limit, psnr, droptail)
            assert video("video_mos", kind, limit) < video("video_mos", "droptail", limit), (kind, limit)


def test_video_without_loss_scores_the_clips_lossless_psnr():
    """The video alone on a fast link loses nothing: every frame is decodable, and the
    mean PSNR is the mean of the model table's gap-0 column (the lossless decode) over
    the frames sent, frame k being clip frame k mod 1065 — so the trace, the table and
    the looping line up. No warm-up: the quality columns count frames from the first
    (with one they count frames sent after it)."""
    d = study.study_dir("rural-broadband")
    inputs = study.prepare("rural-broadband")
    doc = tomllib.loads((d / "scenario.toml").read_text())
    video = next(t for t in doc["traffic"] if t["kind"] == "video")
    assert doc["traffic"].index(video) == 4 and set(inputs) == {"traffic[4].trace", "traffic[4].psnr_model"}
    video = {**video, "trace": inputs["traffic[4].trace"], "psnr_model": inputs["traffic[4].psnr_model"]}
    r = aqmlab.run(d / "scenario.toml", set={"traffic": [video], "duration": "60s", "warmup": "0s",
                                                "topology.bottleneck.rate": "100Mbit"})
    a = r.apps.filter(pl.col("app") == "video").row(0, named=True)
    sent = int(a["frames_sent"])
    assert sent > 1065 and a["frames_decodable"] == sent and a["decodable_frame_loss_rate"] == 0
    table = pl.read_csv(inputs["traffic[4].psnr_model"])
    lossless = table.filter(pl.col("gap") == 0).sort("frame")["psnr_db"].to_numpy()
    assert len(lossless) == 1065
    expected = lossless[np.arange(sent) % 1065].mean()
    assert abs(a["psnr_db_mean"] - expected) < 1e-9, (a["psnr_db_mean"], expected)
    # A freeze costs PSNR: every frame shown one frame late scores below its own decode.
    late = table.filter(pl.col("gap") == 1).sort("frame")["psnr_db"].to_numpy()
    assert (late < lossless).mean() > 0.99


def test_quick_e2_codel_drops_most_and_the_targets_calibrate(tmp_path):
    # Issue 24's done-when, from the paper (Section III.A, Fig. 3): with ns-2's queues
    # (ARED defaults = "ns2", Nichols's CoDel) and ns-2's TCP agents, CoDel drops the most
    # of the three AQMs at a 2 ms target (paper 14.2 % vs PIE 9.3 %, ARED 7.2 %), CoDel at
    # its calibrated 35 ms target queues 35 ms (± 30 %), and ARED follows its target
    # (35.2 -> 74.4 ms from 2 to 50 ms: at least 1.5x). With aqmlab's Linux CoDel and TCP
    # CoDel dropped the least and queued 64 ms at 35 ms; with mean_pkt_size 1076 B ARED's
    # min_th sat on the 5-packet floor for every target up to 43 ms.
    out = tmp_path / "study"
    p = subprocess.run([*AQMLAB, "study", "run", "rural-broadband", "--quick", "-e", "E2", "--out", out, "--quiet",
                        "--no-report"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    agg = aqmlab.load(out / "E2").with_columns(pl.col(QDISC).cast(pl.Utf8).str.extract(r"kind=(\w+)").alias("kind"))

    def mean(metric, kind, target):
        r = agg.filter((pl.col("table") == "queues") & (pl.col("entity") == "r4->r5") & (pl.col("metric") == metric)
                       & (pl.col("kind") == kind) & (pl.col(f"{QDISC}.target") == target))
        return r["mean"][0]

    codel = mean("drop_rate", "codel", "2ms")
    for kind in ("ared", "pie"):
        assert codel > mean("drop_rate", kind, "2ms"), (kind, codel, mean("drop_rate", kind, "2ms"))
    assert 0.7 * 35 <= mean("sojourn_ms_mean", "codel", "35ms") <= 1.3 * 35, mean("sojourn_ms_mean", "codel", "35ms")
    small, large = mean("sojourn_ms_mean", "ared", "2ms"), mean("sojourn_ms_mean", "ared", "50ms")
    assert large >= 1.5 * small, (small, large)


def test_ns2_reconstruction_reports_the_ids_it_claims_and_ared_follows_its_target(tmp_path):
    # The study's ns2/*.tcl run DropTail and ARED cells in real ns-2.35: every SCORE id is
    # a paper.toml number marked ns2 = true (and every marked id is reported), and ns-2's
    # own ARED (Queue/RED, adaptive_ 1, mean_pktsize_ 500) queues at least 1.5x longer at
    # a 50 ms target than at 2 ms, as the paper's 35.2 -> 74.4 ms.
    need_tool("ns")
    p = subprocess.run([*AQMLAB, "study", "ns2", "rural-broadband", "--out", tmp_path], capture_output=True,
                       text=True, timeout=900, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "rural-broadband" / "ns2.json").read_text())
    values = doc["values"]
    paper = tomllib.loads((ROOT / "studies" / "rural-broadband" / "paper.toml").read_text())
    # Debian's ns has no Queue/CoDel or Queue/PIE: ns2/aqm/*.tcl (the authors' CoDel and PIE,
    # ns2/build-ns2-aqm.sh) are skipped, and say so; an ns built with them runs them too.
    aqm_ids = {i for f in ("aqm/e2.tcl", "aqm/e4.tcl") for i in doc["scripts"].get(f, [])}
    if doc["skipped"]:
        assert set(doc["skipped"]) == {"aqm/e2.tcl", "aqm/e4.tcl"} and not aqm_ids, doc["skipped"]
        assert "skipped aqm/e2.tcl" in p.stdout
    assert set(values) - aqm_ids == {n["id"] for n in paper["number"] if n.get("ns2")}
    assert values["E2-ared-delay-at-50ms"] >= 1.5 * values["E2-ared-delay-at-2ms"], values
    assert values["E2-ared-drop-at-50ms"] < values["E2-ared-drop-at-2ms"], values
    assert values["E1-droptail-delay-400pkt"] > 5 * values["E2-ared-delay-at-10ms"], values
