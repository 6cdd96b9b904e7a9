"""Every plot kind, rendered from one sweep, checked as a figure for a paper: no wider than a
two-column figure, no text under 8 pt, no ``path=value`` or raw paths in any label, n
stated, PNG at 300 dpi, and intervals inside the metric's range."""

import re

import aqmlab
import matplotlib.image as mpimg
import matplotlib.text
import polars as pl
import pytest
from aqmlab import plots, report
from aqmlab.aggregate import load
from aqmlab.stats import metric_range
from conftest import EXAMPLES

#: ``key=value`` (no spaces: "n = 3" is prose), a dotted scenario path, an absolute file path.
RAW = [re.compile(r"[A-Za-z_\]]=[^\s]"), re.compile(r"\b[a-z_]+\.[a-z_]+\b"), re.compile(r"(^|\s)/[a-z]")]


@pytest.fixture(scope="module")
def gallery_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("gallery") / "sweep"
    res = aqmlab.sweep(
        EXAMPLES / "voip-uploads.toml",
        grid={"bottleneck.qdisc": [{"kind": "pfifo", "limit": "417pkt"}, {"kind": "pfifo", "limit": "21pkt"}, {"kind": "codel", "limit": "417pkt"}],
              "bottleneck.rate": ["2Mbit", "5Mbit"]},
        seeds=3,
        set={"duration": "8s", "warmup": "1s", "traffic": [
            {"kind": "tcp-bulk", "name": "up", "hosts": "ftp", "cc": "cubic", "start_jitter": "1s"},
            {"kind": "voip", "name": "call", "hosts": "v", "codec": "g711", "bidirectional": True, "start": "1s"}],
            "output": {"timeseries": "50ms", "tcp_timeseries": "100ms", "owd_hist": True, "sojourn_hist": True}},
        out=out, workers=2,
    )
    assert res.ok == 18
    return out


@pytest.fixture(scope="module")
def web_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("gallery-web") / "sweep"
    res = aqmlab.sweep(EXAMPLES / "web-ftp.toml", grid={"topology.links.1.qdisc": [{"kind": "codel"}, {"kind": "pfifo", "limit": "1000pkt"}]},
                       seeds=3, set={"duration": "40s", "traffic.web.page_rows": True}, out=out, workers=2)
    assert res.ok == 6
    return out


def test_web_and_voice_figures(web_sweep, gallery_sweep):
    for fig in (plots.plt_cdf(web_sweep, app="web"), plots.plt_box(web_sweep, app="web"),
                plots.mos_goodput(gallery_sweep, "call", "up")):
        plots.print_ready(fig)
        fig.canvas.draw()
        texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]
        for t in texts:
            for pat in RAW:
                assert not pat.search(t), f"raw label {t!r}"
        assert fig.get_size_inches()[0] <= plots.PRINT_WIDTH_IN + 1e-6
        plots.plt.close(fig)
    # the box plot has one box per point, the CDF one line per point
    box = plots.plt_box(web_sweep, app="web")
    assert len(box.axes[0].get_xticklabels()) == 2
    cdf = plots.plt_cdf(web_sweep, app="web")
    assert len(cdf.axes[0].get_lines()) == 2


def figures(path):
    agg = load(path)
    figs = [f.fig for f in report.default_sweep_figures(path)]
    figs += [f.fig for f in report.voice_figures(path, agg)]
    figs += [f.fig for f in report.owd_figures(path)]
    figs += [plots.cdf(path), plots.timeseries(path), plots.owd_cdf(path),
             plots.sweep_lines(path, "sojourn_ms_mean"), plots.bars(path, "drop_rate"),
             plots.bars(path, "mos", table="apps", app="call"), plots.sweep_lines(path, "utilization")]
    return figs


def test_every_figure_is_print_ready(gallery_sweep):
    figs = figures(gallery_sweep)
    assert len(figs) >= 8
    for fig in figs:
        plots.print_ready(fig)
        fig.canvas.draw()
        w, _ = fig.get_size_inches()
        assert w <= plots.PRINT_WIDTH_IN + 1e-6
        texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
        for ax in fig.axes:
            texts += [t for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text().strip()]
        assert texts
        for t in texts:
            assert t.get_fontsize() >= plots.MIN_FONT_PT, f"{t.get_text()!r} at {t.get_fontsize()} pt"
            for pat in RAW:
                assert not pat.search(t.get_text()), f"raw label {t.get_text()!r}"
        titles = " ".join(a.get_title() for a in fig.axes) + " " + (fig._suptitle.get_text() if fig._suptitle else "")
        if fig.axes[0].containers:  # bars with intervals: n is stated
            assert "n = 3" in titles.replace("\n", " "), titles
        plots.plt.close(fig)


def test_saved_figures_fit_the_print_width(gallery_sweep, tmp_path):
    """Titles and legends outside the axes must not widen the saved picture beyond the
    print width (bbox "tight" grows the canvas around whatever sticks out)."""
    for i, fig in enumerate(figures(gallery_sweep)):
        png = plots.save(fig, tmp_path / f"f{i}", formats=("png",))[0]
        px = mpimg.imread(png).shape[1]
        assert px <= 300 * (plots.PRINT_WIDTH_IN + 0.1), f"figure {i}: {px / 300:.2f} in wide"


def test_png_is_300_dpi(gallery_sweep, tmp_path):
    fig = plots.bars(gallery_sweep, "drop_rate")
    w_in = fig.get_size_inches()[0]
    png = plots.save(fig, tmp_path / "bars", formats=("png",))[0]
    px = mpimg.imread(png).shape[1]
    # bbox "tight" trims or grows the margins a little: 300 dpi within 15 %
    assert 0.85 * 300 * w_in <= px <= 1.15 * 300 * w_in


def test_bars_leave_out_a_point_without_a_value(gallery_sweep):
    """A point whose runs all lack the metric (mean None, as in 1-seed quick sweeps where a
    metric is undefined) gets no bar instead of a TypeError."""
    agg = load(gallery_sweep)
    sel = (pl.col("metric") == "drop_rate") & (pl.col("table") == "queues")
    first = agg.filter(sel).row(0, named=True)
    hole = agg.with_columns(pl.when(sel & (pl.col("point_id") == first["point_id"])).then(None).otherwise(pl.col("mean")).alias("mean"))
    full = plots.bars(gallery_sweep, "drop_rate", agg=agg)
    gap = plots.bars(gallery_sweep, "drop_rate", agg=hole)
    n = len(full.axes[0].patches)
    assert n > 1 and len(gap.axes[0].patches) == n - 1
    plots.plt.close(full)
    plots.plt.close(gap)


def test_no_interval_leaves_its_metric_range(gallery_sweep):
    agg = load(gallery_sweep)
    assert set(agg["ci_method"].unique().to_list()) <= {"t", "bootstrap", "none"}
    bad = []
    for r in agg.filter(pl.col("ci_low").is_not_null()).iter_rows(named=True):
        lo, hi = metric_range(r["metric"])
        if r["ci_low"] < lo - 1e-12 or r["ci_high"] > hi + 1e-12:
            bad.append((r["metric"], r["ci_low"], r["ci_high"]))
    assert not bad, bad[:10]
    # the MOS of a call behind a 417-packet FIFO is near 1: t would leave [1, 4.5]
    assert "bootstrap" in agg["ci_method"].to_list() or "t" in agg["ci_method"].to_list()
