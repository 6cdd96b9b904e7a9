"""Voice and RTP in the Python layer: MOS in reports, per-flow one-way delay CDFs."""

import subprocess

import aqmlab
import polars as pl
import pytest
from aqmlab import plots, report
from conftest import AQMLAB, EXAMPLES, ROOT

# The uploads keep RFC 9438 CUBIC (`linux_cubic = false`), with which the delay bounds
# below were set: with the linux profile's Linux CUBIC the 25 s run's median one-way
# delay of the call is 797 ms instead of ~1 s (the reductions leave the FIFO less full).
SHORT = {"duration": "25s", "warmup": "5s", "traffic[1].start": "5s", "traffic[0].linux_cubic": False}


def cli(*args):
    return subprocess.run([*AQMLAB, *map(str, args)], capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.fixture(scope="module")
def voice_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("voice") / "run"
    res = aqmlab.run(EXAMPLES / "voip-uploads.toml", set=SHORT)
    res.write_parquet(out)
    return out, res


def test_run_report_shows_mos_per_voice_entry_and_the_per_flow_rows(voice_run):
    run, res = voice_run
    p = cli("report", run)
    assert p.returncode == 0, p.stderr
    text = (run / "report.html").read_text()
    assert "Voice quality (MOS per voip entry)" in text
    assert "<h3>app_flows</h3>" in text
    # the MOS cell of the call is in the voice table
    call = res.apps.filter(pl.col("app") == "call").row(0, named=True)
    assert 1.0 <= call["mos"] < 2.0  # behind the full 417-packet FIFO
    # a conversation: the row is the congested (forward) direction, not a mean with
    # the idle reverse one, and every MOS is in [1, 4.5]
    assert call["mos"] == call["mos_fwd"] and call["mos_rev"] > 4.0
    assert call["mos_call_min"] == call["mos"] and call["calls"] == 1
    mos = [call["mos"], call["mos_fwd"], call["mos_rev"], *res.app_flows["mos"].to_list()]
    assert all(1.0 <= m <= 4.5 for m in mos), mos
    assert res.app_flows.filter(pl.col("app") == "call")["direction"].to_list() == ["fwd", "rev"]
    table = report.voice_table(run)
    assert {"mos_fwd", "mos_rev", "mos_call_min"} <= set(table.columns)
    assert table["app"].to_list() == ["call"]
    calls = report.voice_calls_table(run)
    assert calls.select("app", "call").rows() == [("call", 0)]
    assert calls["mos_call"][0] == call["mos"] == calls["mos_fwd"][0]
    assert calls["mos_rev"][0] == call["mos_rev"]
    assert "Voice quality per call" in text
    # the one-way delay CDF figure is there (owd_hist is on in the example)
    assert 'id="fig-owd-cdf"' in text


def test_owd_cdf_has_one_line_per_flow_and_counts_every_packet(voice_run, tmp_path):
    run, res = voice_run
    fig = plots.owd_cdf(run, app="call")
    lines = [l for l in fig.axes[0].get_lines() if not l.get_label().startswith("_")]
    # the conversation's two directions: flow 5 (caller → callee), flow 6 (back)
    assert [l.get_label() for l in lines] == ["flow 5 (call)", "flow 6 (call)"]
    line = lines[0]
    y = line.get_ydata()
    assert y[-1] == 1.0 and all(a <= b for a, b in zip(y, y[1:]))
    # the histogram holds every packet the flow delivered after the warm-up: the voice
    # packets and the caller's RTCP SRs (the callee's RRs travel the other way)
    h = res.owd_hist.filter(pl.col("flow") == 5)
    delivered = res.flows.filter(pl.col("flow") == 5)["packets_delivered"][0]
    assert h["packets"].sum() == delivered
    row = res.app_flows.filter(pl.col("flow") == 5)
    srs = delivered - row["packets_received"][0]
    assert 0 < srs <= row["rtcp_packets"][0]
    # the delays are the FIFO's: ~1 s for the call
    x = line.get_xdata()
    assert 800 < x[len(x) // 2] < 1200
    fig_all = plots.owd_cdf(run)
    # five uploads and the call's two directions
    assert len([l for l in fig_all.axes[0].get_lines() if not l.get_label().startswith("_")]) == 7
    stem = tmp_path / "owd"
    p = cli("plot", run, "--kind", "owd-cdf", "--entity", "0,5", "--out", stem)
    assert p.returncode == 0, p.stderr
    assert stem.with_suffix(".png").stat().st_size > 5000


def test_owd_cdf_without_histograms_says_how_to_get_them(tmp_path):
    run = tmp_path / "run"
    aqmlab.run(EXAMPLES / "voip-uploads.toml", set={**SHORT, "output.owd_hist": False}).write_parquet(run)
    with pytest.raises(ValueError, match="owd_hist = true"):
        plots.owd_cdf(run)


def test_sweep_report_draws_mos_bars_with_cis(tmp_path):
    out = tmp_path / "sweep"
    res = aqmlab.sweep(
        EXAMPLES / "voip-uploads.toml",
        grid={"bottleneck.qdisc": [{"kind": "pfifo", "limit": "417pkt"}, {"kind": "fq_codel"}]},
        seeds=2, set={**SHORT, "output.owd_hist": False}, out=out, workers=2,
    )
    assert res.ok == 4
    figs = report.voice_figures(out)
    # MOS bars, and MOS against the uploads' goodput (the voice question in one picture)
    assert [f.name for f in figs] == ["bars-mos-call", "mos-goodput-call"]
    bars = [p for p in figs[0].fig.axes[0].patches]
    heights = sorted(b.get_height() for b in bars)
    assert heights[0] < 2.0 and heights[-1] > 4.0  # FIFO vs fq_codel
    p = cli("report", out, "--out", tmp_path / "r.html")
    assert p.returncode == 0, p.stderr
    assert 'id="fig-bars-mos-call"' in (tmp_path / "r.html").read_text()
