"""Plots (every kind, PNG and SVG) and the HTML report, rendered in headless Chromium."""

import subprocess

import aqmlab
import matplotlib.image as mpimg
import numpy as np
import pytest
from aqmlab import plots
from conftest import AQMLAB, EXAMPLES, ROOT, need_tool


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("plots") / "sweep"
    res = aqmlab.sweep(
        EXAMPLES / "dumbbell-udp.toml", grid={"bottleneck.qdisc.kind": ["pfifo", "codel"], "bottleneck.qdisc.limit": ["50pkt", "100pkt"]},
        seeds=2, set={"duration": "30s"}, out=out, workers=2,
    )
    assert res.ok == 8
    return out


def cli(*args):
    return subprocess.run([*AQMLAB, *map(str, args)], capture_output=True, text=True, timeout=300, cwd=ROOT)


def assert_picture(png, svg, pdf=None):
    assert png.stat().st_size > 5000 and svg.stat().st_size > 5000
    pdf = pdf or png.with_suffix(".pdf")
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 2000
    img = mpimg.imread(png)
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 300
    assert float(np.var(img[..., :3])) > 1e-3, "the PNG is blank"
    text = svg.read_text()
    assert "<svg" in text and "</svg>" in text


@pytest.mark.parametrize(
    "kind, extra",
    [
        ("cdf", []),
        ("cdf", ["--metric", "qlen_pkts"]),
        ("timeseries", []),
        ("sweep", ["--metric", "sojourn_ms_p99"]),
        ("sweep", ["--metric", "owd_ms_mean", "--table", "apps", "--entity", "load", "--x", "bottleneck.qdisc.limit", "--hue", "bottleneck.qdisc.kind"]),
        ("bars", ["--metric", "drop_rate"]),
    ],
)
def test_every_plot_kind_writes_a_png_and_an_svg(small_sweep, tmp_path, kind, extra):
    stem = tmp_path / f"fig-{kind}"
    p = cli("plot", small_sweep, "--kind", kind, *extra, "--out", stem)
    assert p.returncode == 0, p.stderr
    assert_picture(stem.with_suffix(".png"), stem.with_suffix(".svg"))


def test_sweep_plot_has_one_line_per_discipline_with_ci_bands(small_sweep):
    fig = plots.sweep_lines(small_sweep, metric="sojourn_ms_mean", x="bottleneck.qdisc.limit", hue="bottleneck.qdisc.kind")
    ax = fig.axes[0]
    named = [l for l in ax.get_lines() if not l.get_label().startswith("_")]
    assert [l.get_label() for l in named] == ["pfifo", "codel"]
    assert len(ax.collections) >= 2  # the CI bands (and error bars)
    assert ax.get_xlabel() == "qdisc limit (pkt)" and ax.get_ylabel() == "sojourn mean (ms)"
    # the line colours are the first Okabe-Ito colours
    import matplotlib.colors as mc

    assert [mc.to_hex(l.get_color()).upper() for l in named] == [plots.OKABE_ITO[0], plots.OKABE_ITO[1]]


def test_plot_errors_are_clear(small_sweep):
    p = cli("plot", small_sweep, "--kind", "pie-chart")
    assert p.returncode == 2 and "unknown plot kind" in p.stderr
    p = cli("plot", small_sweep, "--kind", "sweep", "--metric", "no_such_metric")
    assert p.returncode == 2 and "no_such_metric" in p.stderr


def test_timeseries_shows_cwnd_when_a_tcp_table_exists(tmp_path):
    res = aqmlab.run(EXAMPLES / "five-tcp.toml", set={"duration": "3s", "output": {"timeseries": "50ms", "timeseries_links": ["L->R"], "tcp_timeseries": "50ms"}})
    assert "tcp" in res
    res.write_parquet(tmp_path / "run")
    fig = plots.timeseries(tmp_path / "run")
    assert [a.get_ylabel() for a in fig.axes][-1] == "cwnd (bytes)"
    # every flow is drawn, and a note above the panel (not a legend over the data) says how many
    ax = fig.axes[-1]
    assert ax.get_legend() is None and len(ax.get_lines()) == 5
    assert "5 flows" in [t.get_text() for t in ax.texts]
    files = plots.save(fig, tmp_path / "ts")
    assert_picture(*files)


def chromium_screenshot(html_file, png):
    exe = need_tool("chromium", "chromium-browser")
    p = subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={png}", "--window-size=1200,2000", f"file://{html_file}"],
        capture_output=True, text=True, timeout=120,
    )
    assert png.exists(), p.stderr
    return mpimg.imread(png)


def test_sweep_report_is_self_contained_and_renders_in_chromium(small_sweep, tmp_path):
    out = tmp_path / "report.html"
    p = cli("report", small_sweep, "--out", out)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert text.count("<svg") >= 6
    assert "src=\"http" not in text and "<script" not in text and "<link " not in text
    assert "sojourn_ms_mean" in text and "Versions" in text and "aqmlab" in text and "polars" in text
    assert '"kind": "pfifo"' in text  # the base scenario
    img = chromium_screenshot(out, tmp_path / "shot.png")
    assert img.shape[0] == 2000 and img.shape[1] == 1200
    assert float(np.var(img[..., :3])) > 1e-3, "the screenshot is blank"
    # not just text: a good part of the page is figure ink (non-white pixels)
    assert float((img[..., :3].mean(axis=2) < 0.9).mean()) > 0.02


def test_run_report_renders(tmp_path):
    run = tmp_path / "run"
    aqmlab.run(EXAMPLES / "dumbbell-udp.toml", set={"duration": "20s"}).write_parquet(run)
    p = cli("report", run)
    assert p.returncode == 0, p.stderr
    text = (run / "report.html").read_text()
    assert text.count("<svg") == 3 and "dumbbell-udp" in text
    img = chromium_screenshot(run / "report.html", tmp_path / "shot.png")
    assert float(np.var(img[..., :3])) > 1e-3
    p = cli("report", tmp_path / "nothing")
    assert p.returncode == 2 and "no such folder" in p.stderr


def test_sojourn_cdf_uses_every_packet_when_histograms_are_recorded(tmp_path):
    from conftest import SMALL

    scen = {**SMALL, "output": {"sojourn_hist": True}}
    scen["traffic"] = [{**SMALL["traffic"][0], "rate": "1.1Mbit"}]
    res = aqmlab.run(scen)
    res.write_parquet(tmp_path / "run")
    hist = res.sojourn_hist.filter(res.sojourn_hist["link"] == "L->R")
    assert hist["packets"].sum() == res.queues.filter(res.queues["link"] == "L->R")["dequeued"][0]
    fig = plots.cdf(tmp_path / "run", link="L->R")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "fraction of packets ≤ x"
    [line] = ax.get_lines()
    y = line.get_ydata()
    assert y[-1] == 1.0 and all(a <= b for a, b in zip(y, y[1:]))


def test_sweep_timeseries_has_one_column_of_panels_per_point_and_a_time_window(tmp_path):
    out = tmp_path / "sw"
    aqmlab.sweep(EXAMPLES / "single-tcp.toml", grid={"bottleneck.qdisc": [{"kind": "codel"}, {"kind": "pie"}]}, seeds=2,
                 set={"duration": "4s", "output": {"timeseries": "50ms", "tcp_timeseries": "50ms"}}, out=out, workers=2)
    fig = plots.timeseries(out, t_from=1.0, t_to=3.0)
    axes = fig.axes
    titles = [a.get_title() for a in axes if a.get_title()]
    assert titles == ["codel", "pie"]  # readable names, no "path=value"
    cwnd = [a for a in axes if a.get_ylabel() == "cwnd (bytes)" or any(t.get_text() == "1 flow" for t in a.texts)]
    assert len(cwnd) == 2  # CoDel's and PIE's cwnd in separate panels, never one line
    for a in cwnd:
        [line] = a.get_lines()
        x = line.get_xdata()
        assert x.min() >= 1.0 and x.max() <= 3.0
    p = cli("plot", out, "--kind", "timeseries", "--metric", "cwnd_bytes,nope")
    assert p.returncode == 2 and "--metric nope" in p.stderr and "available:" in p.stderr and "Traceback" not in p.stderr
    p = cli("plot", out, "--kind", "timeseries", "--from", "3", "--to", "1")
    assert p.returncode == 2 and "not before" in p.stderr
    p = cli("plot", out, "--kind", "cdf", "--metric", "nope")
    assert p.returncode == 2 and "Traceback" not in p.stderr
