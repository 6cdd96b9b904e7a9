"""aqmlab.video: a real encoded clip, PSNR by decoding versus the fast model, the
simulator's frame trace and model table end to end, MOS, and the video plots."""

from __future__ import annotations

import aqmlab
import numpy as np
import polars as pl
import pytest
from aqmlab.video import Clip, mos, psnr
from aqmlab.video import plots as vplots


@pytest.fixture(scope="module")
def clip() -> Clip:
    # 48 CIF frames, GOP 12, 25 frames/s: encodes and decodes in well under a second.
    return Clip.synthetic(n=48, fps=25, gop=12, seed=1)


@pytest.fixture(scope="module")
def table(clip) -> np.ndarray:
    return clip.model_table()


def chain(clip: Clip, n: int, lost: set[int]) -> np.ndarray:
    """Decodable flags of ``n`` stream frames (I-P-P... GOPs, the clip looped) when the
    frames in ``lost`` are lost: a lost frame breaks the P chain until the next I."""
    dec = np.zeros(n, bool)
    ok = False
    for k in range(n):
        if clip.types[k % len(clip)] == "I":
            ok = k not in lost
        else:
            ok = ok and k not in lost
        dec[k] = ok
    return dec


def test_clip_has_the_fixed_gop(clip):
    assert clip.types == (["I"] + ["P"] * 11) * 4
    assert len(set(clip.sizes)) > 10  # real, variable frame sizes


def test_lossless_decode_reproduces_the_encoders_own_psnr(clip):
    got = clip.decode_psnr(np.ones(len(clip), bool))
    np.testing.assert_allclose(got, clip.encoder_psnr, rtol=0, atol=1e-9)
    assert 30 < clip.encoder_psnr.mean() < 60


@pytest.mark.parametrize(
    "lost",
    [
        set(),
        {5},  # a P frame: frames 5..11 freeze on frame 4
        {12},  # an I frame: the second GOP freezes on frame 11
        {0, 1},  # the stream's first I: grey until frame 12
        {3, 20, 30, 47},  # several chains, across the GOPs
        {40, 50, 61},  # across the clip's loop (stream frames 48+ repeat the clip)
    ],
)
def test_model_mode_agrees_with_decoding(clip, table, lost):
    dec = chain(clip, 72, lost)
    real = clip.decode_psnr(dec)
    model = clip.model_psnr(dec, table)
    np.testing.assert_allclose(model, real, rtol=0, atol=1e-9)
    if lost:
        assert real.min() < clip.encoder_psnr.min() - 5  # freezes do cost quality


def test_model_table_blocks_equal_plane_by_plane_psnr(clip):
    """The table's dot-product form, in blocks of 5 frames so the gaps reach back across
    blocks and wrap around the clip's start, equals psnr() of each plane pair exactly."""
    n = len(clip)
    t = clip.model_table(max_gap=n - 1, block=5)
    dy = clip.decoded_y()
    grey = np.full_like(clip.original_y[0], 128)
    for i in (0, 4, 5, 23, 47):
        assert t[i, 0] == psnr(clip.original_y[i], grey)
        for g in range(n):
            assert t[i, g + 1] == psnr(clip.original_y[i], dy[(i - g) % n]), (i, g)
    assert (t == clip.model_table(max_gap=n - 1)).all()
    with pytest.raises(ValueError, match="max_gap"):
        clip.model_table(max_gap=n)


def test_freeze_shows_the_last_decoded_frame(clip):
    dec = chain(clip, 12, {5})
    got = clip.decode_psnr(dec)
    dy = clip.decoded_y()
    for k in range(5, 12):
        assert got[k] == pytest.approx(psnr(clip.original_y[k], dy[4]), abs=1e-12)


def test_psnr_cap_and_mos_table():
    a = np.zeros((4, 4), np.uint8)
    assert psnr(a, a) == 100.0
    b = a.copy()
    b[0, 0] = 255  # MSE = 255²/16 → PSNR = 10·log10(16) = 12.04 dB
    assert psnr(a, b) == pytest.approx(10 * np.log10(16))
    assert list(mos([38, 37, 31.5, 31, 25.5, 25, 20.5, 20, 3])) == [5, 4, 4, 3, 3, 2, 2, 1, 1]
    assert mos(40.0) == 5


def test_simulated_stream_psnr_matches_decoding_its_received_frames(clip, tmp_path):
    """The simulator sends the clip's trace over a lossy link and applies the model
    table; decoding exactly the frames it judged decodable gives the same PSNR."""
    trace = clip.write_trace(tmp_path / "st_clip.txt")
    model = clip.write_model(tmp_path / "model.csv", max_gap=len(clip) - 1)
    scen = {
        "name": "video-psnr",
        "duration": "8s",
        "topology": {
            "kind": "graph",
            "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"from": "a", "to": "b", "rate": "20Mbit", "delay": "10ms", "loss": 0.01}],
        },
        "traffic": [{
            "kind": "video", "name": "v", "src": "a", "dst": "b", "trace": str(trace),
            "fps": 25, "psnr_model": str(model), "frame_rows": True,
        }],
    }
    res = aqmlab.run(scen, seed=3)
    fr = res.frames.sort("frame")
    dec = fr["decodable"].to_numpy()
    assert fr.height == 176  # frames due at 0..7 s (deadline 1 s in an 8 s run)
    assert 0 < (~dec).sum() < fr.height  # some loss, not all
    real = clip.decode_psnr(dec)
    np.testing.assert_allclose(fr["psnr_db"].to_numpy(), real, rtol=0, atol=1e-9)
    apps = res.apps.filter(pl.col("app") == "v")
    assert apps["psnr_db_mean"][0] == pytest.approx(real.mean(), abs=1e-9)
    assert apps["video_mos"][0] == pytest.approx(mos(real).mean(), abs=1e-12)
    assert apps["frames_decodable"][0] == dec.sum()


def test_video_plots_draw(tmp_path):
    scen = {
        "name": "video-plots",
        "duration": "3s",
        "topology": {
            "kind": "graph",
            "nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"from": "a", "to": "b", "rate": "5Mbit", "delay": "5ms"}],
        },
        "traffic": [{"kind": "video", "name": "v", "src": "a", "dst": "b", "count": 5, "frame_rows": True}],
    }
    res = aqmlab.run(scen, seed=1)
    assert vplots.sample_flows(res.frames, 3) == [0, 2, 4]
    for fig in (vplots.strip(res.frames), vplots.psnr_over_time(res.frames)):
        assert fig.axes and fig.axes[0].has_data()
        fig.savefig(tmp_path / "f.png")


def test_report_has_video_figures_for_a_sweep_and_a_run(tmp_path):
    from aqmlab import report
    from conftest import EXAMPLES

    out = tmp_path / "sw"
    res = aqmlab.sweep(EXAMPLES / "video-rb-rio.toml", grid={"bottleneck.qdisc.kind": ["rb_rio", "pfifo"]}, seeds=2,
                       set={"duration": "4s", "traffic[1].start": "1s", "traffic[1].stop": "3s"}, out=out, workers=2)
    assert res.ok == 4
    figs = report.video_sweep_figures(out)
    assert [f.name for f in figs] == ["bars-decodable-mpeg-resp", "bars-decodable-mpeg-unresp"]
    ax = figs[0].fig.axes[0]
    assert len(ax.patches) == 2  # one bar per discipline, with CI error bars
    run = next((out / "runs").iterdir())
    names = [f.name for f in report.video_run_figures(run)]
    assert names == ["video-strip"]  # no psnr_model: no PSNR figure
    html = report.build(out).read_text()
    assert "Decodable-frame loss of mpeg-resp" in html


def test_scene_sequence_is_deterministic_and_its_scenes_differ_in_motion():
    """aqmlab.video.scenes: the same seed gives the same frames; the talking-head scene
    changes less from frame to frame than the fast scroll, and a scene cut changes the
    picture more than the calm scenes' motion."""
    from aqmlab.video.scenes import scene_frames

    f = scene_frames(n=60, size=(96, 64), seed=3, grain=0.0)
    assert f.shape == (60, 64, 96, 3) and (f == scene_frames(n=60, size=(96, 64), seed=3, grain=0.0)).all()
    y = f[..., 1].astype(float)  # green = luma before the tint
    step = np.abs(np.diff(y, axis=0)).mean(axis=(1, 2))  # step[k]: frame k -> k + 1
    head, scroll = step[0:9].mean(), step[20:29].mean()
    assert scroll > 3 * head, (head, scroll)
    assert step[9] > 3 * head and step[19] > 3 * head  # the cuts at frames 10 and 20
    assert (scene_frames(n=60, size=(96, 64), seed=4, grain=0.0) != f).any()


def test_write_model_rows_exact_or_rounded(clip, tmp_path):
    """One row per (frame, gap −1..max_gap); exact by default, rounded with digits."""
    t = clip.model_table(max_gap=3)
    exact = pl.read_csv(clip.write_model(tmp_path / "m.csv", 3))
    rounded = pl.read_csv(clip.write_model(tmp_path / "r.csv", 3, digits=2))
    assert exact.height == len(clip) * 5 and exact["gap"].min() == -1 and exact["gap"].max() == 3
    row = exact.filter((pl.col("frame") == 7) & (pl.col("gap") == 2))["psnr_db"][0]
    assert row == t[7, 3]
    assert (np.abs(rounded["psnr_db"].to_numpy() - np.round(exact["psnr_db"].to_numpy(), 2)) < 1e-9).all()
    assert (rounded["psnr_db"].to_numpy() != exact["psnr_db"].to_numpy()).any()


MMAPP_SCENARIO = """
name = "mmapp"
duration = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbit"
delay = "5ms"
[[topology.hosts]]
name = "h"
count = 1
[[traffic]]
kind = "video"
hosts = "h"
"""


def test_mmapp_control_starts_low_scales_up_and_checks_its_keys(tmp_path):
    """`control = "mmapp"` (MmApp five-rate media scaling): on an idle 10 Mbit/s link the
    stream starts at I frames only (some B and P frames skipped) and then sends every
    frame; TFRC starts at the full rate and skips none. Bad input names the field."""
    f = tmp_path / "s.toml"
    apps = {}
    for control in ("mmapp", "tfrc"):
        f.write_text(MMAPP_SCENARIO + f'responsive = true\ncontrol = "{control}"\n')
        apps[control] = aqmlab.run(f).apps.row(0, named=True)
    assert 0 < apps["mmapp"]["frames_skipped"] < 30, apps["mmapp"]
    assert apps["tfrc"]["frames_skipped"] == 0
    assert apps["mmapp"]["frames_decodable"] == apps["mmapp"]["frames_sent"]
    f.write_text(MMAPP_SCENARIO + 'control = "mmapp"\n')
    with pytest.raises(aqmlab.ScenarioError, match=r"traffic\[0\]\.control: only with `responsive = true`"):
        aqmlab.run(f)
    f.write_text(MMAPP_SCENARIO + 'responsive = true\ncontrol = "aimd"\n')
    with pytest.raises(aqmlab.ScenarioError, match=r'traffic\[0\]\.control: "aimd": expected one of tfrc, mmapp'):
        aqmlab.run(f)
