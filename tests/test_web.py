"""Web traffic kinds in Python: the PLT columns and per-page rows reach the tables, and a
sweep report shows page-load-time figures with confidence intervals."""

import copy

import aqmlab
import numpy as np
import pytest
from aqmlab import plots, report

WEB = {
    "name": "web",
    "duration": "30s",
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"rate": "5Mbit", "delay": "10ms", "qdisc": {"kind": "pfifo", "limit": "100pkt"}},
        "hosts": [{"name": "a", "count": 1, "left": {"rate": "100Mbit", "delay": "5ms"}}],
    },
    "traffic": [
        {"kind": "web-page", "name": "web", "hosts": "a", "think": "2s", "page_rows": True},
        {"kind": "tcp-bulk", "name": "ftp", "hosts": "a", "count": 2},
    ],
}


def test_plt_columns_and_page_rows():
    r = aqmlab.run(copy.deepcopy(WEB), seed=1)
    apps = r["apps"].filter(r["apps"]["app"] == "web")
    for c in ("plt_s_median", "plt_s_mad", "plt_s_p95", "pages_completed", "pages_failed"):
        assert c in apps.columns
    pages = r["pages"]
    done = pages.filter(~pages["failed"])
    assert done.height == apps["pages_completed"][0] > 0
    # The median column is the median of the per-page rows (no failures here).
    assert apps["pages_failed"][0] == 0
    assert apps["plt_s_median"][0] == pytest.approx(float(np.median(done["plt_s"].to_numpy())))


@pytest.fixture(scope="module")
def web_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("web") / "sweep"
    res = aqmlab.sweep(copy.deepcopy(WEB), grid={"bottleneck.qdisc.kind": ["pfifo", "codel"]}, seeds=2, out=out, workers=2)
    assert res.ok == 4
    return out


def test_sweep_report_has_plt_figures_with_ci(web_sweep):
    figs = report.default_sweep_figures(web_sweep)
    ids = [f.name for f in figs]
    assert any("plt_s_median-web" in i for i in ids), ids
    fig = plots.bars(web_sweep, metric="plt_s_median", table="apps", app="web")
    ax = fig.axes[0]
    assert len(ax.patches) == 2  # one bar per discipline
    assert ax.get_ylabel() == "median page load time (s)"
    assert any(c.__class__.__name__ == "LineCollection" for c in ax.collections), "no CI error bars"
