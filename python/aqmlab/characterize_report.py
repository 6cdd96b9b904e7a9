"""The HTML page of an RFC 7928 characterisation (`aqmlab.characterize`): one section
per RFC section, each experiment's metrics next to DropTail's, the §2.7 delay–goodput
ellipses, and the §11/§12 tables."""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from .report import Figure, figures_html, table_html, write_page
from .scenario import qdisc_docs

if TYPE_CHECKING:
    from .characterize import Characterization, Experiment

SECTION_TITLES = {
    "4.5": "4.5 Interaction with ECN",
    "4.6": "4.6 Interaction with Scheduling",
    "5.1": "5.1 TCP-Friendly Sender",
    "5.2": "5.2 Aggressive Transport Sender",
    "5.3": "5.3 Unresponsive Transport Sender",
    "5.4": "5.4 Less-than-Best-Effort Transport",
    "6": "6 Round-Trip Time Fairness",
    "7": "7 Burst Absorption",
    "8.2": "8 Stability",
    "9.1": "9.1 Traffic Mix",
    "9.2": "9.2 Bidirectional Traffic",
    "10": "10 Multi-AQM Scenario",
    "access": "Beyond the RFC's rates: access speeds",
}

#: The metrics shown per experiment (RFC 7928 §2), in order.
METRICS = ["queue_delay_ms_mean", "queue_delay_ms_p95", "goodput_mbps", "utilization", "drop_rate", "marks",
           "jain_index", "sync_index", "loss_interval_s_mean", "loss_interval_cv", "ipdv_ms_mean", "goodput_ratio", "completion_s_iw10", "transfer_s_median", "video_frame_loss", "voip_mos", "udp_loss_rate",
           "cbr_loss_rate", "ledbat_mbps", "burst_loss_rate"]


def summary_table(m: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Mean over seeds of each metric present, per discipline (and ``by``)."""
    cols = [c for c in METRICS if c in m.columns and m[c].null_count() < m.height]
    agg = m.group_by(by, maintain_order=True).agg([pl.col(c).mean().alias(c) for c in cols] + [pl.len().alias("runs")])
    return agg


def ellipse_figure(path: Path, metrics: pl.DataFrame, title: str) -> Figure | None:
    """RFC 7928 §2.7: per discipline, the delay–goodput ellipse over 1 s windows (all
    seeds): centre at the medians, axes the 1-σ principal axes of the covariance; the
    delay axis is reversed so that better (lower delay, higher goodput) is up and right."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Ellipse

    from .characterize import windows

    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    colours = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00"]
    drawn = False
    for i, disc in enumerate(metrics["discipline"].unique(maintain_order=True).to_list()):
        rids = metrics.filter(pl.col("discipline") == disc)["run_id"].to_list()
        w = windows(path, rids)
        if w.height < 3:
            continue
        x = w["delay_ms"].to_numpy()
        y = w["goodput_mbps"].to_numpy()
        cov = np.cov(np.vstack([x, y]))
        vals, vecs = np.linalg.eigh(cov)
        vals = np.clip(vals, 0, None)
        angle = math.degrees(math.atan2(vecs[1, 1], vecs[0, 1]))
        c = colours[i % len(colours)]
        ax.add_patch(Ellipse((float(np.median(x)), float(np.median(y))), 2 * math.sqrt(vals[1]), 2 * math.sqrt(vals[0]),
                             angle=angle, facecolor=c, alpha=0.25, edgecolor=c))
        ax.plot(np.median(x), np.median(y), "o", color=c, label=disc)
        ax.scatter(x, y, s=4, color=c, alpha=0.3)
        drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.invert_xaxis()
    ax.set_xlabel("queueing delay (ms), reversed")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return Figure(name=f"ellipse-{title}", title=f"§2.7 delay–goodput, {title}",
                  fig=fig, caption="Per discipline: 1 s windows (dots), median (marker) and 1-σ covariance ellipse; delay axis reversed (better is up and right).")


def params_table(kind: str, spec: dict[str, Any]) -> pl.DataFrame:
    """§12: the discipline's parameters from the registry, with defaults and the values used."""
    doc = next(q for q in qdisc_docs() if q["kind"] == kind)
    return pl.DataFrame([{"parameter": p["name"], "default": p["default"], "used": str(spec.get(p["name"], "(default)")),
                          "meaning": p["doc"]} for p in doc["params"]])


def write_report(result: Characterization, exps: list[Experiment], discs: list[tuple[str, dict[str, Any]]], quick: bool) -> Path:
    out = result.out
    spec = dict(discs)[result.label]
    all_m = pl.concat([m for m in result.metrics.values()], how="diagonal_relaxed") if result.metrics else pl.DataFrame()
    qdoc = next(q for q in qdisc_docs() if q["kind"] == result.aqm)
    parts = [
        f'<p class="meta">{"quick (1 seed, short runs: a first look)" if quick else "full suite"} · '
        f'{len(result.metrics)} experiments · wall time {result.wall_s:.1f} s · '
        f'discipline under test: <code>{html.escape(str(spec))}</code> ({html.escape(qdoc["summary"])}; {html.escape(qdoc["source"])}) · '
        f'compared with DropTail <code>pfifo</code> at the same buffer (<code>limit = "{html.escape(result.buffer)}"</code>)'
        + ("" if "limit" in spec else f' — <strong>{html.escape(result.aqm)} has no <code>limit</code> parameter: it runs with its own default buffer</strong>')
        + "</p>",
        "<p>Experiments follow RFC 7928 (Characterization Guidelines for AQM, 2016); operating points the RFC leaves open "
        "are the ns-3 AQM Evaluation Suite's (examples/*.cc, cited per experiment) or are marked <em>assumed</em>. "
        "Metrics (RFC 7928 §2): queueing delay at the bottleneck (mean, 95th percentile), goodput of the TCP flows, "
        "utilisation, drop rate, ECN marks, Jain's index over TCP goodputs, loss-synchronisation index (§2.4: mean fraction "
        "of TCP flows losing a packet per congestion event, after Hassayoun and Ros 2008; events separated by more than 100 ms), "
        "and per-experiment metrics (goodput ratio §6, video frame loss, VoIP MOS, UDP loss). Means over seeds.</p>",
    ]
    figures = []
    seen_sections: list[str] = []
    for e in exps:
        if e.section not in seen_sections:
            seen_sections.append(e.section)
            parts.append(f"<h2>§{html.escape(SECTION_TITLES.get(e.section, e.section))}</h2>")
        parts.append(f"<h3>{html.escape(e.id)}: {html.escape(e.title)}</h3><p class=meta>Set-up: {html.escape(e.source)}</p>")
        if e.id in result.skipped:
            parts.append(f"<p><em>Not applicable:</em> {html.escape(result.skipped[e.id])}</p>")
            continue
        m = result.metrics.get(e.id)
        if m is None or m.height == 0:
            parts.append("<p><em>no runs</em></p>")
            continue
        by = ["discipline", "point"] if e.id == "6-rtt-fairness" else ["discipline"]
        t = summary_table(m, by)
        if e.id == "6-rtt-fairness":
            t = t.rename({"point": "varied access delay"})
        parts.append(table_html(t))
        if e.id in ("8.2.2-medium", "8.2.2-heavy", "access-20M", "access-100M"):
            f = ellipse_figure(out / e.id, m, e.id)
            if f:
                figures.append(f)
    parts.append(figures_html(figures, out / "figures"))
    parts.append("<h2>§11 Implementation Cost</h2>")
    if all_m.height:
        cost = all_m.group_by("discipline", maintain_order=True).agg(pl.col("wall_us_per_hop").median().alias("wall_us_per_packet_hop_median"))
        parts.append("<p>Wall time of the whole simulation per packet-hop (every link a packet crosses, all events included), "
                     "median over the runs of this characterisation: a relative cost of the discipline inside aqmlab, not a "
                     "per-operation benchmark of its enqueue and dequeue (<code>cargo bench -p aqmlab-core --bench qdisc</code> "
                     "measures that). State size is not measured.</p>" + table_html(cost))
    parts.append("<h2>§12 Operator Control and Auto-Tuning</h2>")
    parts.append(f"<p>Parameters of <code>{html.escape(result.aqm)}</code> from aqmlab's registry (<code>aqmlab qdiscs</code>), "
                 f"source: {html.escape(qdoc['source'])}.</p>" + table_html(params_table(result.aqm, spec)))
    if result.skipped:
        parts.append("<h2>Not applicable</h2><ul>" + "".join(f"<li>{html.escape(k)}: {html.escape(v)}</li>" for k, v in result.skipped.items()) + "</ul>")
    return write_page(out / "report.html", f"RFC 7928 characterisation of {result.aqm}", parts)
