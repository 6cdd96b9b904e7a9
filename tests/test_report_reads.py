"""What a report costs: every table of a sweep is read once per report, each figure is
drawn once per file format (the SVG file is the inline figure), and the exact bootstrap
done for many cells at once gives the bits the one-cell enumeration gives."""

import math
import random

import aqmlab
import matplotlib
import polars as pl
import pytest
from aqmlab import aggregate, report
from aqmlab.stats import EXACT_BOOTSTRAP_N, bootstrap_mean_ci, bootstrap_mean_cis
from conftest import EXAMPLES

matplotlib.use("Agg")

BASE = EXAMPLES / "dumbbell-udp.toml"


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("reads") / "sw"
    aqmlab.sweep(BASE, grid={"bottleneck.qdisc.limit": ["20pkt", "50pkt"]}, seeds=3,
                 set={"duration": "100s", "output": {"timeseries": "1s"}}, out=out, workers=2)
    return out


def count_reads(monkeypatch):
    """Patch polars' Parquet reader to count the reads of each file."""
    reads: dict[str, int] = {}
    real = pl.read_parquet

    def counted(source, *a, **kw):
        reads[str(source)] = reads.get(str(source), 0) + 1
        return real(source, *a, **kw)

    monkeypatch.setattr(pl, "read_parquet", counted)
    return reads


def test_a_sweep_report_reads_each_parquet_file_once(sweep_dir, monkeypatch, tmp_path):
    reads = count_reads(monkeypatch)
    report.build(sweep_dir, tmp_path / "report.html", figures_dir=tmp_path / "figures")
    per_run = [f for f in reads if "/runs/" in f]
    assert len(per_run) >= 6 * 3  # summary, queues, timeseries, ... of 6 runs: the report did read them
    assert max(reads.values()) == 1, {f: n for f, n in reads.items() if n > 1}


def test_outside_a_report_every_call_reads_the_files_again(sweep_dir, monkeypatch):
    reads = count_reads(monkeypatch)
    first = aggregate.load_runs(sweep_dir, "queues")
    again = aggregate.load_runs(sweep_dir, "queues")
    assert first is not again and first.equals(again)
    assert set(reads.values()) == {2}  # no stale frame kept between reports


def test_inside_reading_once_the_same_frames_come_back_and_equal_fresh_reads(sweep_dir):
    fresh_runs, fresh_agg = aggregate.load_runs(sweep_dir, "flows"), aggregate.load(sweep_dir)
    with aggregate.reading_once():
        runs = aggregate.load_runs(sweep_dir, "flows")
        assert aggregate.load_runs(sweep_dir, "flows") is runs
        assert aggregate.load_runs(sweep_dir, "queues") is not runs
        agg = aggregate.load(sweep_dir)
        with aggregate.reading_once():  # nested: the outer block's reads are shared
            assert aggregate.load(sweep_dir) is agg
        assert aggregate.load(sweep_dir, tables=("summary",)) is not agg
    assert runs.equals(fresh_runs) and agg.equals(fresh_agg)
    assert aggregate._read_cache is None  # released when the block ends


def test_frames_beyond_the_budget_are_read_again_not_held(sweep_dir, monkeypatch):
    size = {t: aggregate.load_runs(sweep_dir, t).estimated_size() for t in ("summary", "queues", "apps")}
    assert size["queues"] > size["summary"]
    monkeypatch.setattr(aggregate, "READ_ONCE_BYTES", size["summary"])  # room for the summary table alone
    with aggregate.reading_once():
        summary = aggregate.load_runs(sweep_dir, "summary")
        assert aggregate.load_runs(sweep_dir, "summary") is summary
        queues = aggregate.load_runs(sweep_dir, "queues")  # larger than the budget: not kept
        assert aggregate.load_runs(sweep_dir, "queues") is not queues
        assert aggregate.load_runs(sweep_dir, "summary") is summary
        budget = max(size["summary"], size["apps"]) + min(size["summary"], size["apps"]) - 1  # each fits, not both
        monkeypatch.setattr(aggregate, "READ_ONCE_BYTES", budget)
        apps = aggregate.load_runs(sweep_dir, "apps")  # the summary, used least recently, makes room
        assert aggregate.load_runs(sweep_dir, "apps") is apps
        assert aggregate.load_runs(sweep_dir, "summary") is not summary
        assert aggregate._read_cache is not None and aggregate._read_cache.bytes <= budget


def test_the_svg_file_is_the_inline_figure(tmp_path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [1, 3, 2])
    page = report.figures_html([report.Figure("line", "A line", fig)], tmp_path)
    document = (tmp_path / "line.svg").read_text()
    assert document.startswith("<?xml") and report.inline_svg(document) in page
    assert (tmp_path / "line.png").stat().st_size > 0 and (tmp_path / "line.pdf").stat().st_size > 0


def enumerated(xs: list[float], level: float = 0.95) -> tuple[float, float]:
    """The exact bootstrap interval cell by cell, as aqmlab computed it before cells were
    done in blocks: every multiset's mean summed left to right, equal means merged in
    enumeration order, the cumulative probability over the sorted means."""
    xs = sorted(xs)
    n = len(xs)
    lf = [math.lgamma(k + 1) for k in range(n + 1)]
    base = lf[n] - n * math.log(n)
    dist: dict[float, float] = {}

    def walk(i: int, left: int, total: float, logw: float) -> None:
        if i == n - 1:
            mean = (total + left * xs[i]) / n
            dist[mean] = dist.get(mean, 0.0) + math.exp(base + logw - lf[left])
            return
        for k in range(left + 1):
            walk(i + 1, left - k, total + k * xs[i], logw - lf[k])

    walk(0, n, 0.0, 0.0)
    out = []
    for p in (0.5 - level / 2, 0.5 + level / 2):
        acc = 0.0
        for v in sorted(dist):
            acc += dist[v]
            if acc >= p - 1e-12:
                out.append(v)
                break
        else:
            out.append(max(dist))
    return out[0], out[1]


def test_the_exact_bootstrap_in_blocks_gives_the_same_bits_as_cell_by_cell():
    rng = random.Random(7)
    cells = []
    for _ in range(600):
        n = rng.choice([2, 3, 4, 5, 5, 6, 7])
        kind = rng.randrange(4)
        if kind == 0:  # counts, mostly zero, and a signed zero: ties everywhere
            cells.append([rng.choice([0.0, 0.0, -0.0, 1.0, 3.0]) for _ in range(n)])
        elif kind == 1:
            cells.append([rng.random() * 10 for _ in range(n)])
        elif kind == 2:
            cells.append([round(rng.gauss(0, 1), 2) for _ in range(n)])
        else:  # tenths: means that are equal in decimal but not in binary
            cells.append([0.1 * rng.randint(0, 5) for _ in range(n)])
    cells += [[rng.choice([0.0, 0.2, 0.7]) for _ in range(EXACT_BOOTSTRAP_N)], [rng.random() for _ in range(8)]]
    for level in (0.95, 0.9):
        got = bootstrap_mean_cis(cells, level)
        want = [enumerated(c, level) for c in cells]
        assert [(a.hex(), b.hex()) for a, b in got] == [(a.hex(), b.hex()) for a, b in want]


def test_one_cell_and_many_cells_agree_and_large_samples_still_resample():
    big = [float(i % 7) for i in range(30)]
    small = [0.0, 0.0, 0.1, 0.7]
    assert bootstrap_mean_cis([small, big, small]) == [bootstrap_mean_ci(small), bootstrap_mean_ci(big), bootstrap_mean_ci(small)]
    # [0, 0, 0.1, 0.7]: 256 equally likely resamples of 4. The 7th smallest mean (2.5 %) is 0
    # (16 resamples draw only zeros); the 250th (97.5 %) is the 7th largest: 0.7 once, 0.55
    # four times (three 0.7 and the 0.1), then 0.525 (three 0.7 and a zero, 8 times).
    lo, hi = bootstrap_mean_ci(small)
    assert lo == 0.0 and hi == pytest.approx(0.525)
