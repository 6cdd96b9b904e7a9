"""`aqmlab run`'s result tables on the terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from .common import print_warnings

if TYPE_CHECKING:
    import polars as pl

    from ..results import Results


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


#: Columns of `aqmlab run`'s tables (every column is in ``--json`` and ``--out``).
QUEUE_COLUMNS = ["link", "qdisc", "sojourn_ms_mean", "sojourn_ms_p99", "qlen_pkts_mean", "drops", "drop_rate", "utilization", "throughput_bps"]
FLOW_COLUMNS = ["flow", "app", "kind", "src", "dst", "goodput_bps", "goodput_window_bps", "owd_ms_mean", "owd_ms_p99", "rtt_ms_mean", "loss_rate", "retransmits"]
#: Columns of the apps table `aqmlab run` prints (those with a value for some app; ``--all``
#: prints every column).
APP_COLUMNS = ["app", "kind", "flows", "goodput_bps", "loss_rate", "mos", "mos_fwd", "mos_rev", "voice_loss_rate", "late_rate",
               "plt_s_median", "pages_completed", "pages_failed", "frame_loss_rate", "decodable_frame_loss_rate", "psnr_db_mean", "video_mos"]
#: More flows than this are summarised by their apps (``--all`` lists them).
MAX_FLOW_ROWS = 20


def shown_links(queues: pl.DataFrame, all_rows: bool) -> pl.DataFrame:
    """The links `aqmlab run` lists: the bottleneck (the busiest link) and every link
    that dropped packets; ``all_rows`` lists every link."""
    if all_rows or queues.height == 0:
        return queues
    import polars as pl

    top = queues["utilization"].fill_nan(None).max()
    return queues.filter((pl.col("utilization") == top) | (pl.col("drops") > 0))


def _table(df: pl.DataFrame, cols: list[str], title: str, left: tuple[str, ...]) -> Table:
    cols = [c for c in cols if c in df.columns]
    t = Table(title=title)
    for c in cols:
        t.add_column(c, justify="left" if c in left else "right")
    from ..report import ID_COLUMNS
    from ..units import fmt

    for row in df.select(cols).iter_rows():
        t.add_row(*(_fmt(v) if c in ID_COLUMNS or not isinstance(v, (int, float)) else fmt(c, v) for c, v in zip(cols, row)))
    return t


def print_results(res: Results, console: Console, all_rows: bool = False) -> None:
    if "warnings" in res.tables:
        print_warnings(res.tables["warnings"]["message"].to_list())
    s = res.summary.row(0, named=True)
    console.print(
        f"[bold]{s['scenario']}[/] seed {s['seed']}: {s['sim_time_s']:.1f} s simulated in "
        f"{s['wall_time_s']:.3f} s wall, {s['events']:,} events, {s['packets']:,} packets"
    )
    q = shown_links(res.queues, all_rows)
    hidden = res.queues.height - q.height
    title = "queues" if all_rows else "queues: the bottleneck and links that dropped packets"
    console.print(_table(q, QUEUE_COLUMNS, title, ("link", "qdisc")))
    if hidden:
        console.print(f"[dim]{hidden} other links not shown (--all lists every link and flow)[/]", highlight=False)
    flows = res.flows
    if flows.height and (all_rows or flows.height <= MAX_FLOW_ROWS):
        console.print(_table(flows, FLOW_COLUMNS, "flows", ("app", "kind", "src", "dst")))
    elif flows.height:
        console.print(f"[dim]{flows.height} flows: see the apps table (--all lists every flow)[/]", highlight=False)
    if res.apps.height:
        apps = res.apps
        cols = apps.columns if all_rows else [c for c in APP_COLUMNS if c in apps.columns and _has_value(apps[c])]
        console.print(_table(apps, cols, "apps" if all_rows else "apps: key columns (--all or --json for every column)", ("app", "kind")))


def _has_value(col: pl.Series) -> bool:
    """A column with at least one value that is not null or NaN."""
    import polars as pl

    if col.dtype.is_numeric():
        return bool(col.cast(pl.Float64).fill_nan(None).drop_nulls().len() > 0)
    return bool(col.drop_nulls().len() > 0)
