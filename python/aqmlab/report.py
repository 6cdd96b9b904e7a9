"""`aqmlab report DIR`: one self-contained HTML page for a run or a sweep.

Figures are inline SVG (no external files, no scripts, no network), followed by the
tables, the scenario and the versions used. The page opens in any browser and can be
mailed as one file.
"""

from __future__ import annotations

import html
import io
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from . import plots, safefile
from .aggregate import (
    axis_value,
    bottleneck_link,
    failures,
    identical_note,
    identical_points,
    is_run,
    is_sweep,
    load,
    load_runs,
    read_spec,
    reading_once,
)
from .names import axis_name, axis_value_names
from .units import fmt as fmt_unit
from .units import fmt_interval

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure


@dataclass
class Figure:
    """A figure for a report: a title, a matplotlib figure and a caption."""

    name: str
    title: str
    fig: MplFigure
    caption: str = ""


CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 0; background: #fff; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 64px; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 2em; }
.meta { color: #666; font-size: 0.9em; }
figure { margin: 1.5em 0; } figure svg { max-width: 100%; height: auto; }
figcaption { color: #444; font-size: 0.92em; max-width: 820px; }
.tw { max-width: 100%; overflow-x: auto; margin: 0.8em 0; }
table { border-collapse: collapse; font-size: 0.8em; }
th, td { border-bottom: 1px solid #e4e4e4; padding: 3px 8px; text-align: right; white-space: nowrap; }
th { position: sticky; top: 0; }
th { background: #f4f6f8; } td.l, th.l { text-align: left; }
pre { background: #f6f8fa; padding: 12px; overflow-x: auto; font-size: 0.8em; border-radius: 4px; }
.bad { color: #D55E00; font-weight: 600; } .ok { color: #009E73; font-weight: 600; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 8px 24px; }
.repro td, .md td { white-space: normal; text-align: left; vertical-align: top; max-width: 24em; }
.repro .v-holds, .repro .v-inside, .repro .v-within { color: #009E73; font-weight: 600; }
.repro .v-reversed, .repro .v-outside { color: #D55E00; font-weight: 600; }
"""


def svg_document(fig: MplFigure) -> str:
    """A matplotlib figure as an SVG file's text (fixed id salt: the same figure gives
    the same ids); the figure is closed."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    # matplotlib types its rc keys as literals; STYLE is a plain dict of them
    style: Any = {**plots.STYLE, "svg.hashsalt": "aqmlab"}
    with plt.rc_context(style):
        fig.savefig(buf, format="svg")
    plt.close(fig)
    return buf.getvalue()


def inline_svg(document: str) -> str:
    """An SVG file's text as inline ``<svg>`` markup (XML header removed)."""
    return document[document.index("<svg"):]


def svg_of(fig: MplFigure) -> str:
    """A matplotlib figure as inline ``<svg>`` markup (XML header removed)."""
    return inline_svg(svg_document(fig))


def _fmt(v: object) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if v != v:
            return "–"
        return f"{v:.4g}"
    return html.escape(str(v))


#: Numeric columns that are identifiers, shown as they are (no unit, no separators).
ID_COLUMNS = {"seed", "flow", "src_node", "dst_node", "flows", "child", "class"}


def _cell(col: str, v: object) -> str:
    """A table cell: numbers with the unit their column name implies (`units.fmt`)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and col not in ID_COLUMNS:
        return html.escape(fmt_unit(col, v))
    return _fmt(v)


def table_html(df: pl.DataFrame, max_rows: int = 500, right: Sequence[str] = ()) -> str:
    """An HTML table that scrolls sideways rather than overflow the page. Numbers get
    their units; ``right`` names text columns of formatted numbers (right-aligned);
    more than ``max_rows`` rows are cut (and the cut is said)."""
    if df.height == 0:
        return "<p><em>empty</em></p>"
    numeric = {c for c, t in df.schema.items() if t.is_numeric()} | set(right)
    head = "".join(f'<th class="{"" if c in numeric else "l"}">{html.escape(c)}</th>' for c in df.columns)
    rows = []
    for row in df.head(max_rows).iter_rows():
        rows.append("<tr>" + "".join(f'<td class="{"" if c in numeric else "l"}">{_cell(c, v)}</td>' for c, v in zip(df.columns, row)) + "</tr>")
    more = f"<p class=meta>{df.height - max_rows} more rows not shown</p>" if df.height > max_rows else ""
    return f'<div class="tw"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>{more}'


def _cell_text(s: dict[str, Any]) -> str:
    return fmt_interval(s["metric"], s["mean"], s["ci_half"], s["ci_low"], s["ci_high"])


def wide_table(agg: pl.DataFrame, table: str, axes: list[str], metrics: Sequence[str] | None = None, entity: str | None = None) -> pl.DataFrame:
    """One row per (point, entity) of ``table``, one column per metric, each cell
    ``mean ± 95 % CI`` with its unit."""
    q = agg.filter(pl.col("table") == table)
    if entity is not None:
        q = q.filter(pl.col("entity") == entity)
    if metrics is not None:
        q = q.filter(pl.col("metric").is_in(list(metrics)))
    if q.height == 0:
        return pl.DataFrame()
    order = list(dict.fromkeys(q["metric"].to_list())) if metrics is None else [m for m in metrics if m in set(q["metric"].to_list())]
    q = q.with_columns(
        pl.struct("metric", "mean", "ci_half", "ci_low", "ci_high").map_elements(_cell_text, return_dtype=pl.Utf8).alias("v")
    )
    wide = q.pivot(on="metric", index=[*axes, "point_id", "entity"], values="v")
    return wide.select([*axes, "point_id", "entity", *order])


def markdown_html(md: str) -> str:
    """Markdown (CommonMark with GitHub's pipe tables, as READMEs are written) as HTML,
    rendered by markdown-it-py; raw HTML in the source is escaped, not passed through.
    Headings move down one level (a README's ``#`` sits under the page's ``<h1>``) and
    tables get the report's table classes."""
    from markdown_it import MarkdownIt

    md_it = MarkdownIt("commonmark", {"html": False}).enable("table")
    out: str = md_it.render(md)
    for lvl in (5, 4, 3, 2, 1):  # deepest first, so nothing is moved twice
        out = out.replace(f"<h{lvl}>", f"<h{lvl + 1}>").replace(f"</h{lvl}>", f"</h{lvl + 1}>")
    return out.replace("<table>", '<div class="tw md"><table>').replace("</table>", "</table></div>")


def _versions(path: Path) -> dict[str, Any]:
    if is_sweep(path):
        v: dict[str, Any] | None = read_spec(path).get("versions")
        if v:
            return v
    from .sweep import versions

    return versions()


def default_sweep_figures(path: Path) -> list[Figure]:
    spec = read_spec(path)
    agg = load(path)
    figs: list[Figure] = []
    link = bottleneck_link(path)
    x, hue = plots._pick_axes(spec, None, None)
    for metric, kind in (("sojourn_ms_mean", "sweep"), ("sojourn_ms_p99", "sweep"), ("drop_rate", "bars"), ("utilization", "bars")):
        try:
            fig = plots.sweep_lines(path, metric=metric, agg=agg, x=x, hue=hue) if kind == "sweep" else plots.bars(path, metric=metric, agg=agg)
        except ValueError:
            continue
        figs.append(Figure(f"{kind}-{metric}", f"{plots.metric_label(metric)[0]} at {link}", fig, "Mean over seeds with its 95 % interval (Student t; percentile bootstrap where t would leave the metric's range; none with fewer than 3 seeds)."))
    for k in REPORT_KINDS:
        if k.with_metrics:
            figs += k.sweep_figures(path, agg, x, hue)
    if load_runs(path, "timeseries").height:
        source = "Every dequeued packet (per-link histograms)" if load_runs(path, "sojourn_hist").height else "Samples of the time series"
        figs.append(Figure("cdf-sojourn", f"Sojourn time CDF at {link}", plots.cdf(path), f"{source}, all seeds of a point pooled."))
        figs.append(Figure("timeseries", f"Time series at {link}", plots.timeseries(path), "First seed of each point."))
    for k in REPORT_KINDS:
        if not k.with_metrics:
            figs += k.sweep_figures(path, agg, x, hue)
    return figs


def video_sweep_figures(path: Path) -> list[Figure]:
    """Decodable-frame loss per point and video entry (``video`` traffic), mean and CI."""
    from .video import plots as vplots

    apps = load_runs(path, "apps")
    if "decodable_frame_loss_rate" not in apps.columns:
        return []
    figs = []
    for app in sorted(set(apps.filter(pl.col("kind") == "video")["app"].to_list())):
        try:
            fig = vplots.decodable_bars(path, app=app)
        except ValueError:
            continue
        figs.append(Figure(f"bars-decodable-{app}", f"Decodable-frame loss of {app}", fig,
                           "1 − decodable/sent frames (decodability: docs/traffic/video.md); mean over seeds with its 95 % interval."))
    return figs


def video_run_figures(path: Path) -> list[Figure]:
    """Strip plot of decoded frames and PSNR over time when the run has a ``frames`` table."""
    from .video import plots as vplots

    frames = load_runs(path, "frames")
    if not frames.height:
        return []
    figs = [Figure("video-strip", "Decoded frames of sampled streams", vplots.strip(frames), "A tick per decodable frame, coloured by type; gaps are lost, undecodable or skipped frames.")]
    if frames["psnr_db"].is_not_nan().any():
        figs.append(Figure("video-psnr", "PSNR per frame", vplots.psnr_over_time(frames), "Model mode (psnr_model): freeze of the last decodable frame."))
    return figs


def voice_apps(path: Path) -> list[str]:
    """Names of the ``voip`` entries of a run or sweep (empty when there are none)."""
    apps = load_runs(path, "apps")
    if apps.height == 0 or "mos" not in apps.columns:
        return []
    return list(dict.fromkeys(apps.filter(pl.col("kind") == "voip")["app"].to_list()))


def voice_figures(path: Path, agg: pl.DataFrame | None = None) -> list[Figure]:
    """Sweeps with ``voip`` entries: MOS per point with 95 % CIs, one figure per entry."""
    figs = []
    for a in voice_apps(path):
        try:
            fig = plots.bars(path, metric="mos", table="apps", entity=a, agg=agg)
        except ValueError:
            continue
        figs.append(Figure(f"bars-mos-{a}", f"MOS of {a}", fig, "E-model (per the entry's `emodel`) of each call's worst direction (mean over the entry's calls); mean over seeds with its 95 % interval."))
        bulk = _bulk_apps(path)
        if bulk:
            try:
                fig = plots.mos_goodput(path, a, bulk[0], agg=agg)
            except ValueError:
                continue
            figs.append(Figure(f"mos-goodput-{a}", f"MOS of {a} against the goodput of {bulk[0]}", fig,
                               "What the call gains and what the uploads pay, per point; mean over seeds with 95 % intervals."))
    return figs


def _bulk_apps(path: Path) -> list[str]:
    """Apps of bulk-transfer kinds in a sweep (for the MOS–goodput figure)."""
    apps = load_runs(path, "apps")
    if apps.height == 0 or "kind" not in apps.columns:
        return []
    return list(dict.fromkeys(apps.filter(pl.col("kind").is_in(["tcp-bulk", "quic-bulk", "udp-bulk"]))["app"].to_list()))


def owd_figures(path: Path) -> list[Figure]:
    """Runs with ``output.owd_hist``: per-flow one-way delay CDF (voice flows first)."""
    if not load_runs(path, "owd_hist").height:
        return []
    voice = voice_apps(path)
    fig = plots.owd_cdf(path, app=voice[0]) if voice else plots.owd_cdf(path)
    return [Figure("owd-cdf", "One-way delay CDF per flow", fig, "Every delivered packet of the flow after the warm-up.")]


#: The voice table: ``mos`` etc. are each call's worst direction (mean over the entry's
#: calls), ``mos_fwd``/``mos_rev`` the two directions (caller → callee and back),
#: ``mos_call_min`` the worst call (docs/output.md).
VOICE_COLUMNS = ["app", "calls", "mos", "mos_fwd", "mos_rev", "mos_call_min", "r_factor", "mouth_to_ear_ms", "late_rate", "total_loss_rate", "voice_loss_rate", "jitter_ms"]


def voice_table(path: Path) -> pl.DataFrame:
    """MOS per ``voip`` entry of a run (empty without voice)."""
    f = path / "apps.parquet"
    if not f.exists():
        return pl.DataFrame()
    df = pl.read_parquet(f)
    if "mos" not in df.columns:
        return pl.DataFrame()
    df = df.filter(pl.col("kind") == "voip")
    return df.select([c for c in VOICE_COLUMNS if c in df.columns])


def voice_calls_table(path: Path) -> pl.DataFrame:
    """One row per call of a run's ``voip`` entries: each direction's MOS, R and late
    rate (``rev`` null for one-way calls) and the call's MOS (its worst direction).
    Empty without voice."""
    f = path / "app_flows.parquet"
    if not f.exists():
        return pl.DataFrame()
    df = pl.read_parquet(f)
    if "mos_call" not in df.columns:
        return pl.DataFrame()
    df = df.filter(pl.col("kind") == "voip")
    calls = df.select("app", "call", "mos_call").unique(maintain_order=True)
    for d in ("fwd", "rev"):
        side = df.filter(pl.col("direction") == d).select(
            "app", "call", *(pl.col(c).alias(f"{c}_{d}") for c in ("mos", "r_factor", "late_rate")))
        calls = calls.join(side, on=["app", "call"], how="left")
    return calls


def web_apps(path: Path) -> list[str]:
    """Names of the web-page / web-packmime entries of a sweep (PLT columns)."""
    apps = load_runs(path, "apps")
    if not apps.height or "kind" not in apps.columns:
        return []
    return sorted(set(apps.filter(pl.col("kind").is_in(plots.WEB_KINDS))["app"].to_list()))


def web_figures(path: Path, agg: pl.DataFrame, x: str | None, hue: str | None) -> list[Figure]:
    """Page load time per web entry: a sweep line and bars with 95 % CIs (when the
    sweep has web kinds)."""
    figs: list[Figure] = []
    notes = {
        "plt_s_median": ("Mean over seeds of each run's median page load time (failed pages at the timeout "
                         "unless failed_plt = \"exclude\"), with its 95 % interval."),
        "pages_failed": "Pages that did not complete within the entry's timeout, mean over seeds with its 95 % interval.",
    }
    for app in web_apps(path):
        for metric, kind in (("plt_s_median", "sweep"), ("plt_s_median", "bars"), ("pages_failed", "bars")):
            try:
                if kind == "sweep":
                    fig = plots.sweep_lines(path, metric=metric, table="apps", app=app, agg=agg, x=x, hue=hue)
                else:
                    fig = plots.bars(path, metric=metric, table="apps", app=app, agg=agg)
            except ValueError:
                continue
            figs.append(Figure(f"{kind}-{metric}-{app}", f"{plots.metric_label(metric)[0]} of {app}", fig, notes[metric]))
        for kind, fn, what in (("plt-cdf", plots.plt_cdf, "CDF"), ("plt-box", plots.plt_box, "box plot")):
            try:  # only with the per-page table (page_rows = true)
                fig = fn(path, app=app)
            except ValueError:
                continue
            figs.append(Figure(f"{kind}-{app}", f"Page load time of {app}, {what}", fig,
                               "Every page of every seed; pages that failed are counted beside the curve or box."))
    return figs


def voice_run_tables(path: Path) -> list[str]:
    """A run's voice sections: MOS per ``voip`` entry, then per call (none without voice)."""
    voice = voice_table(path)
    if not voice.height:
        return []
    parts = ["<h3>Voice quality (MOS per voip entry)</h3>"
             "<p><code>mos</code> is each call's worst direction (mean over the entry's calls); "
             "<code>mos_fwd</code> caller → callee, <code>mos_rev</code> back.</p>"
             + table_html(voice, right=voice.columns)]
    calls = voice_calls_table(path)
    if calls.height:
        parts.append("<h3>Voice quality per call</h3>" + table_html(calls, right=calls.columns))
    return parts


SweepFigures = Callable[[Path, pl.DataFrame, str | None, str | None], list[Figure]]


def _none(path: Path) -> list[Any]:
    return []


@dataclass(frozen=True)
class ReportKind:
    """What a report shows for one medium of traffic kinds (web, voice, video): its
    figures of a sweep (``sweep_figures(path, agg, x, hue)``, beside the queue metrics
    when ``with_metrics``, else after the delay distributions), its figures of a run and
    its HTML sections of a run. Each returns nothing when the run or sweep has no
    traffic of its kinds. A new medium is one entry of `REPORT_KINDS`."""

    name: str
    sweep_figures: SweepFigures
    with_metrics: bool = False
    run_figures: Callable[[Path], list[Figure]] = _none
    run_tables: Callable[[Path], list[str]] = _none


#: The media the report knows, in the order their figures and sections appear.
REPORT_KINDS: tuple[ReportKind, ...] = (
    ReportKind("web", web_figures, with_metrics=True),
    ReportKind("voice", lambda path, agg, x, hue: voice_figures(path, agg), run_tables=voice_run_tables),
    ReportKind("video", lambda path, agg, x, hue: video_sweep_figures(path), run_figures=video_run_figures),
)


def default_run_figures(path: Path) -> list[Figure]:
    figs = []
    if load_runs(path, "timeseries").height:
        link = bottleneck_link(path)
        figs.append(Figure("timeseries", f"Time series at {link}", plots.timeseries(path)))
        figs.append(Figure("cdf-sojourn", f"Sojourn time CDF at {link}", plots.cdf(path)))
        figs.append(Figure("cdf-qlen", f"Queue length CDF at {link}", plots.cdf(path, metric="qlen_pkts")))
    figs.extend(owd_figures(path))
    for k in REPORT_KINDS:
        figs.extend(k.run_figures(path))
    return figs


#: What a table cell's interval is (`aqmlab.stats`).
INTERVAL_NOTE = ("mean over seeds with its 95 % interval: ± the Student-t half-width, or [low, high] where "
                 "the t interval would leave the metric's range (percentile bootstrap); no interval with fewer than 3 seeds")

KEY_METRICS = ["sojourn_ms_mean", "sojourn_ms_p99", "qlen_pkts_mean", "drop_rate", "utilization", "throughput_bps"]


def readable_axes(df: pl.DataFrame, spec: dict[str, Any], axes: list[str]) -> pl.DataFrame:
    """Axis columns as readers see them (`aqmlab.names`): ``qdisc (link 1)`` with values
    ``pfifo 417pkt``, not ``topology.links.1.qdisc`` = ``kind=pfifo,limit=417pkt``."""
    names = axis_value_names(spec, axis_value)

    def readable(axis: str) -> Callable[[Any], str]:
        return lambda v: names[axis].get(v, str(v))

    out = df.with_columns([pl.col(a).map_elements(readable(a), return_dtype=pl.Utf8) for a in axes if a in df.columns])
    return out.rename({a: axis_name(a) for a in axes if a in out.columns})


def sweep_table(path: Path, agg: pl.DataFrame | None = None, metrics: Sequence[str] = KEY_METRICS, entity: str | None = None) -> pl.DataFrame:
    """Per point: the mean and 95 % interval of the key bottleneck metrics, as text."""
    agg = load(path) if agg is None else agg
    spec = read_spec(path)
    entity = entity or bottleneck_link(path)
    q = agg.filter((pl.col("table") == "queues") & (pl.col("entity") == entity) & pl.col("metric").is_in(list(metrics)))
    if q.height == 0:
        return pl.DataFrame()
    q = q.with_columns(
        pl.struct("metric", "mean", "ci_half", "ci_low", "ci_high").map_elements(_cell_text, return_dtype=pl.Utf8).alias("v")
    )
    axes = [a for a in spec["axes"]]
    wide = q.pivot(on="metric", index=[*axes, "point_id"], values="v")
    cols = [*axes, *[m for m in metrics if m in wide.columns]]
    if "identical" in agg.columns:
        n = agg.group_by("point_id").agg(pl.col("n").max(), pl.col("identical").first())
        wide = wide.join(n, on="point_id", how="left").with_columns(
            pl.when(pl.col("identical")).then(pl.col("n").map_elements(identical_note, return_dtype=pl.Utf8)).otherwise(pl.lit("")).alias("seeds")
        )
        if wide["seeds"].str.len_chars().max():
            cols.append("seeds")
    return readable_axes(wide.select(cols), spec, axes)


@reading_once()  # the default figures and the tables share one read of each table
def build(path: str | os.PathLike[str], out: str | os.PathLike[str] | None = None, figures: list[Figure] | None = None,
          title: str | None = None, intro_md: str | None = None, figures_dir: str | os.PathLike[str] | None = None,
          extra_html: list[str] | None = None, lead_html: str = "") -> Path:
    """Write the HTML report of a run or sweep folder. Returns its path
    (default ``PATH/report.html``). With ``figures_dir`` each figure is also saved there
    as PNG and SVG. ``extra_html`` (ready HTML, e.g. a study's Reproduction section)
    goes after the figures; ``lead_html`` goes first, under the title."""
    path = Path(path)
    sweep = is_sweep(path)
    if not sweep and not is_run(path):
        raise FileNotFoundError(f"{path}: neither a sweep folder (sweep.json) nor a run folder (summary.parquet)")
    out = Path(out) if out else path / "report.html"
    if figures is None:
        figures = default_sweep_figures(path) if sweep else default_run_figures(path)
    parts = []
    if sweep:
        spec = read_spec(path)
        name = title or f"aqmlab sweep: {spec.get('name', path.name)}"
        ids = [r["id"] for r in spec["runs"]]
        done = sum((path / "runs" / i).is_dir() for i in ids)
        fails = failures(path)
        status = f'<span class="{"bad" if fails else "ok"}">{len(fails)} failed</span>'
        parts.append(f"<p class=meta>{len(ids)} runs ({len(set(r['point_id'] for r in spec['runs']))} points × {len(spec['seeds'])} seeds): {done} finished, {status}. Source: <code>{html.escape(str(path))}</code>. Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.</p>")
    else:
        s = pl.read_parquet(path / "summary.parquet").row(0, named=True)
        name = title or f"aqmlab run: {s.get('scenario')} (seed {s.get('seed')})"
        parts.append(f"<p class=meta>{s.get('sim_time_s')} s simulated in {s.get('wall_time_s', 0):.3f} s. Source: <code>{html.escape(str(path))}</code>. Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.</p>")
    if lead_html:
        parts.append(lead_html)
    if sweep:  # numbers on the first screen, before any prose or figure
        agg = load(path)
        key = sweep_table(path, agg)
        if key.height:
            parts.append(f"<h2>Key numbers</h2><p class=meta>Bottleneck queue per point: {INTERVAL_NOTE}.</p>"
                         + table_html(key, right=KEY_METRICS))
    if intro_md:
        parts.append(markdown_html(intro_md))
    parts.append(figures_html(figures, figures_dir))
    parts += extra_html or []
    parts.append("<h2>Tables</h2>")
    if sweep:
        same = identical_points(agg)
        if same:
            parts.append('<p class="bad">' + html.escape(
                f"{len(same)} of {agg['point_id'].n_unique()} points: {identical_note(max(same.values()))} "
                "(every seed gave the same results, so the confidence intervals have zero width and say nothing): "
                + "; ".join(same)) + "</p>")
        parts.append(f"<h3>Bottleneck queue per point</h3><p class=meta>{INTERVAL_NOTE}.</p>")
        parts.append(table_html(sweep_table(path, agg), right=KEY_METRICS))
        apps = wide_table(agg, "apps", spec["axes"])
        if apps.height:
            parts.append(f"<h3>Apps per point</h3><p class=meta>{INTERVAL_NOTE}.</p>")
            parts.append(table_html(readable_axes(apps.drop("point_id").rename({"entity": "app"}), spec, spec["axes"]), right=apps.columns))
        if fails:
            parts.append("<h3>Failed runs</h3>")
            ft = pl.DataFrame({
                "id": [f["id"] for f in fails],
                "point": [json.dumps(f["point"]) for f in fails],
                "seed": [f["seed"] for f in fails],
                "error": [f"{f['error']['type']}: {f['error'].get('path') or ''} {f['error']['message']}" for f in fails],
            })
            parts.append(table_html(ft))
        parts.append("<h2>Scenario</h2><p>Base scenario; the sweep axes are:</p>")
        parts.append("<ul>" + "".join(f"<li><code>{html.escape(a)}</code>: {html.escape(', '.join(map(str, dict.fromkeys(json.dumps(r['point'][a]) for r in spec['runs']))))}</li>" for a in spec["axes"]) + f"<li>seeds: {html.escape(str(spec['seeds']))}</li></ul>")
        if spec.get("set"):
            parts.append(f"<p>Fixed overrides: <code>{html.escape(json.dumps(spec['set']))}</code></p>")
        parts.append(f"<pre>{html.escape(json.dumps(spec['base'], indent=2), quote=False)}</pre>")
    else:
        wf = path / "warnings.parquet"
        if wf.exists():
            parts.insert(1, '<p class="bad">' + "<br>".join(html.escape(f"warning: {m}") for m in pl.read_parquet(wf)["message"].to_list()) + "</p>")
        for k in REPORT_KINDS:
            parts.extend(k.run_tables(path))
        for t in ("summary", "queues", "flows", "apps", "app_flows"):
            f = path / f"{t}.parquet"
            if f.exists():
                df = pl.read_parquet(f)
                if t == "queues" and "enqueued" in df.columns:
                    df = df.filter(pl.col("enqueued") > 0)
                parts.append(f"<h3>{t}</h3>" + table_html(df))
        sc = path / "scenario.json"
        if sc.exists():
            parts.append(f"<h2>Scenario</h2><pre>{html.escape(sc.read_text(), quote=False)}</pre>")
    v = _versions(path)
    parts.append("<h2>Versions</h2>" + table_html(pl.DataFrame({"component": list(v), "version": [str(x) for x in v.values()]})))
    return write_page(out, name, parts)


def figures_html(figures: list[Figure] | None, figures_dir: str | os.PathLike[str] | None = None) -> str:
    """The numbered figures with their captions (inline SVG); with ``figures_dir`` each
    is also saved there as PNG, SVG and PDF."""
    if not figures:
        return ""
    parts = ['<h2>Figures</h2><div class="grid">']
    for i, f in enumerate(figures, 1):
        if figures_dir is None:
            svg = svg_of(f.fig)
        else:  # the SVG file is the inline figure's document: drawn once for both
            stem = Path(figures_dir) / f.name
            plots.save_copy(f.fig, stem, formats=("png", "pdf"))
            document = svg_document(f.fig)
            safefile.write_text(stem.with_suffix(".svg"), document)
            svg = inline_svg(document)
        parts.append(f'<figure id="fig-{html.escape(f.name)}">{svg}<figcaption><strong>Figure {i}.</strong> {html.escape(f.title)}. {html.escape(f.caption)}</figcaption></figure>')
    parts.append("</div>")
    return "".join(parts)


def write_page(out: str | os.PathLike[str], title: str, parts: list[str]) -> Path:
    """Write one self-contained HTML page atomically (a reader never sees half a page)."""
    out = Path(out)
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{CSS}</style></head>
<body><main><h1>{html.escape(title)}</h1>
{chr(10).join(parts)}
</main></body></html>
"""
    out.parent.mkdir(parents=True, exist_ok=True)
    safefile.write_text(out, doc)
    return out
