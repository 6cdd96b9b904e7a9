"""The reproduction scorecard (`aqmlab study compare`, paper.toml) on the tiny fixture
study tests/fixtures/scorecard-tiny: every verdict, the error paths, the report's
Reproduction section, the index's totals, quick mode and the ns-2 column."""

import json
import math
import os
import shutil
import subprocess

import pytest
from aqmlab import scorecard, study
from aqmlab.errors import ScenarioError
from conftest import AQMLAB, ROOT, need_tool

FIXTURE = ROOT / "tests" / "fixtures" / "scorecard-tiny"


def copy_study(root):
    d = root / "scorecard-tiny"
    shutil.copytree(FIXTURE, d)
    return d


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """The fixture study with E1 run in full (3 seeds) and E2 not run."""
    root = tmp_path_factory.mktemp("sc")
    d = copy_study(root / "studies")
    out = root / "out" / "scorecard-tiny"
    study.run(str(d), out=out, only=["E1"], workers=2)
    return d, out


def cli(*args, root=None):
    env = {**os.environ, **({"AQMLAB_STUDIES": str(root)} if root else {})}
    return subprocess.run([*AQMLAB, *map(str, args)], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)


def test_every_verdict_on_the_fixture_study(ran):
    d, out = ran
    card = study.compare(str(d), out)
    v = {n["id"]: n["verdict"] for n in card["numbers"]}
    assert v == {"util-4M-inside": "inside", "util-1M-within": "within", "util-1M-outside": "outside",
                 "no-such-experiment": "no data", "unrun-experiment": "no data"}
    t = {x["id"]: x["verdict"] for x in card["trends"]}
    assert t == {"drops-fall-with-rate": "holds", "drops-rise-with-rate": "reversed", "codel-uses-less": "not shown",
                 "same-when-saturated": "holds", "same-drops": "reversed", "droptail-not-below": "holds",
                 "unrun-trend": "no data"}
    assert card["totals"]["trends_held"] == 3 and card["totals"]["trends_total"] == 7
    assert card["totals"]["numbers_ok"] == 2 and card["totals"]["numbers_total"] == 5
    assert card["mode"] == "full"
    # what is missing is named: E2 was not run
    assert len(card["missing"]) == 1 and "experiment E2" in card["missing"][0] and "sweep.json" in card["missing"][0]
    n = {x["id"]: x for x in card["numbers"]}
    cell = n["util-4M-inside"]["aqmlab"]
    assert cell["n"] == 3 and cell["ci_low"] < cell["mean"] < cell["ci_high"]
    assert n["util-1M-outside"]["rel_diff"] == pytest.approx((n["util-1M-outside"]["aqmlab"]["mean"] - 50) / 50)
    assert "E9" in n["no-such-experiment"]["aqmlab"]["why"]
    md = (out / "scorecard.md").read_text()
    assert "trends held 3 / 7 · numbers inside or within 2 / 5" in md and "| util-4M-inside |" in md
    assert json.loads((out / "scorecard.json").read_text())["totals"] == card["totals"]
    assert "ns-2" not in md  # no ns2.json yet


def test_the_selected_cell_is_the_runs_mean_of_the_aggregated_table(ran):
    import aqmlab
    import polars as pl

    d, out = ran
    agg = aqmlab.load(out / "E1")
    row = agg.filter((pl.col("metric") == "utilization") & (pl.col("entity") == "L->R")
                     & (pl.col("topology.bottleneck.qdisc") == "kind=pfifo,limit=50pkt")
                     & (pl.col("topology.bottleneck.rate") == "4Mbit"))
    assert row.height == 1
    card = study.compare(str(d), out, write=False)
    got = next(n for n in card["numbers"] if n["id"] == "util-4M-inside")["aqmlab"]
    assert got["mean"] == pytest.approx(100 * row["mean"][0], rel=1e-12)
    assert got["ci_high"] == pytest.approx(100 * row["ci_high"][0], rel=1e-12)


def test_the_cli_prints_and_writes_the_scorecard(ran, tmp_path):
    d, out = ran
    p = cli("study", "compare", "scorecard-tiny", "--out", out.parent, "--json", root=d.parent)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["totals"]["trends_held"] == 3
    p = cli("study", "compare", "scorecard-tiny", "--out", out.parent, root=d.parent)
    assert p.returncode == 0, p.stderr
    assert "trends held 3 / 7" in p.stdout and "missing:" in p.stderr and "E2" in p.stderr
    # --out may also name the study's own output folder, as `study run NAME --out X`
    # writes it (X/E1, not X/NAME/E1).
    p = cli("study", "compare", "scorecard-tiny", "--out", out, "--json", root=d.parent)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["totals"]["trends_held"] == 3


def test_compare_on_an_unfinished_study_says_what_is_missing(tmp_path, ran):
    d = copy_study(tmp_path / "studies")
    p = cli("study", "compare", "scorecard-tiny", "--out", tmp_path / "nowhere", root=d.parent)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "has not been run" in p.stderr and "experiment E1" in p.stderr and "experiment E2" in p.stderr
    # a run folder gone: named, and its point scores no data
    _, out = ran
    part = tmp_path / "part"
    shutil.copytree(out, part)
    runs = sorted((part / "E1" / "runs").iterdir())
    shutil.rmtree(runs[0])
    card = study.compare(str(d), part, write=False)
    assert any("1 of 12 runs not finished" in m and runs[0].name in m for m in card["missing"])
    p = cli("study", "compare", "scorecard-tiny", "--out", tmp_path / "nope", root=d.parent)
    assert p.returncode == 2


def test_a_study_without_paper_toml_has_nothing_to_compare(tmp_path):
    d = copy_study(tmp_path / "studies")
    (d / "paper.toml").unlink()
    with pytest.raises(FileNotFoundError, match=r"no paper\.toml"):
        study.compare(str(d), tmp_path / "o")


BAD = [
    # (replace this, with that) in paper.toml → the error names the entry and the field
    ('value = 75\n', 'value = "75 %"\n', "number[util-4M-inside].value", "expected a finite number"),
    ('unit = "%"\nns2 = true', 'unit = "%"\nns2 = true\nunits = "%"', "number[util-1M-within].units", "unknown key"),
    ('op = "~"\nb = { select = { "topology.bottleneck.qdisc.kind" = "pfifo"', 'op = "=="\nb = { select = { "topology.bottleneck.qdisc.kind" = "pfifo"',
     "trend[same-drops].op", "expected one of"),
    ('"topology.bottleneck.rate" = "4Mbit" }\ntable = "queues"', '"topology.bottleneck.rate" = "3Mbit" }\ntable = "queues"',
     "number[util-4M-inside].select.topology.bottleneck.rate", "matches no value"),
    ('select = { "traffic[0].rate" = "1Mbit" }', 'select = { "traffic[0].size" = "1Mbit" }',
     "number[unrun-experiment].select.traffic[0].size", "not a swept path"),
    ('experiment = "E9"', 'experiment = "E8"\nselect = {}', "", ""),  # has a note: allowed
    ('"topology.bottleneck.rate" = "4Mbit" }\ntable = "queues"', '"topology.bottleneck.rate" = "3Mbit" }\nnote = "not swept yet"\ntable = "queues"',
     "", ""),  # a variant the study does not run yet, with a note: allowed (scores no data)
    ('note = "the study has no E9"\n', '', "number[no-such-experiment].experiment", "needs a note"),
    ('range = [60, 90]', 'range = [90, 60]', "number[util-4M-inside].range", "low is above high"),
    ('id = "util-1M-within"', 'id = "util-4M-inside"', "number[util-4M-inside].id", "used twice"),
    ('tolerance = "points"', 'tolerance = "percent"', "number[util-1M-outside].tolerance", "expected relative, points or abs:X"),
    ('table = "queues"\nentity = "L->R"\nmetric = "drop_rate"\na = { select = { "topology.bottleneck.qdisc.kind" = "pfifo", "topology.bottleneck.rate" = "1Mbit" } }\nop = ">"',
     'table = "queue"\nentity = "L->R"\nmetric = "drop_rate"\na = { select = { "topology.bottleneck.qdisc.kind" = "pfifo", "topology.bottleneck.rate" = "1Mbit" } }\nop = ">"',
     "trend[drops-fall-with-rate].a.table", "expected one of"),
    ('entity = "L->R"\nmetric = "utilization"\nscale = 100.0\nvalue = 75', 'entity = "L->R"\napps = ["x"]\nmetric = "utilization"\nscale = 100.0\nvalue = 75',
     "number[util-4M-inside].apps", "only with table = flows or app_flows"),
    ('entity = "L->R"\nmetric = "utilization"\nscale = 100.0\nvalue = 75', 'entity = "L->R"\napps = "x"\nmetric = "utilization"\nscale = 100.0\nvalue = 75',
     "number[util-4M-inside].apps", "expected a non-empty list"),
]


def test_jain_reduce_by_hand():
    """Jain's index (Σx)²/(n·Σx²): equal shares 1, one of two flows starved 1/2, 1 and 3
    → 16/(2·10) = 0.8; all zero is undefined."""
    assert scorecard.jain([2.0, 2.0]) == 1.0
    assert scorecard.jain([1.0, 0.0]) == 0.5
    assert scorecard.jain([1.0, 3.0]) == pytest.approx(0.8)
    assert math.isnan(scorecard.jain([0.0, 0.0]))


@pytest.mark.parametrize("old,new,path,msg", BAD, ids=[b[2] or "note-allows-missing" for b in BAD])
def test_a_bad_paper_toml_names_the_entry_and_field(tmp_path, old, new, path, msg):
    d = copy_study(tmp_path / "studies")
    text = (d / "paper.toml").read_text()
    assert old in text
    (d / "paper.toml").write_text(text.replace(old, new, 1))
    if not path:
        scorecard.read_paper(d / "paper.toml", d)
        return
    with pytest.raises(ScenarioError) as e:
        scorecard.read_paper(d / "paper.toml", d)
    assert e.value.path == path and msg in e.value.message


RUN_BAD = [
    # errors that need the output: a metric, an entity, a selection matching several points
    ('metric = "utilization"\nscale = 100.0\nvalue = 75', 'metric = "utilisation"\nscale = 100.0\nvalue = 75',
     "number[util-4M-inside].metric", "no such column"),
    ('entity = "L->R"\nmetric = "utilization"\nscale = 100.0\nvalue = 75', 'entity = "bottleneck"\nmetric = "utilization"\nscale = 100.0\nvalue = 75',
     "number[util-4M-inside].entity", "L->R"),
    ('select = { "topology.bottleneck.qdisc.kind" = "pfifo", "topology.bottleneck.rate" = "4Mbit" }\ntable = "queues"\nentity = "L->R"\nmetric = "utilization"\nscale = 100.0\nvalue = 75',
     'select = { "topology.bottleneck.qdisc.kind" = "pfifo" }\ntable = "queues"\nentity = "L->R"\nmetric = "utilization"\nscale = 100.0\nvalue = 75',
     "number[util-4M-inside].select", "also select on: topology.bottleneck.rate"),
    ('entity = "L->R"\nmetric = "utilization"\nscale = 100.0\nvalue = 75', 'metric = "utilization"\nscale = 100.0\nvalue = 75',
     "number[util-4M-inside].entity", "name one entity or set reduce"),
]


@pytest.mark.parametrize("old,new,path,msg", RUN_BAD, ids=[b[2] + ":" + b[3] for b in RUN_BAD])
def test_an_entry_that_selects_no_row_names_the_entry(tmp_path, ran, old, new, path, msg):
    _, out = ran
    d = copy_study(tmp_path / "studies")
    text = (d / "paper.toml").read_text()
    assert old in text
    (d / "paper.toml").write_text(text.replace(old, new, 1))
    with pytest.raises(ScenarioError) as e:
        study.compare(str(d), out, write=False)
    assert e.value.path == path and msg in e.value.message
    p = cli("study", "compare", "scorecard-tiny", "--out", out.parent, root=d.parent)
    assert p.returncode == 2 and path in p.stderr and "Traceback" not in p.stderr


def c(mean, half, n=3):
    return {"n": n, "mean": mean, "ci_low": None if half is None else mean - half, "ci_high": None if half is None else mean + half}


def test_trend_verdicts_by_hand():
    v = scorecard.trend_verdict
    assert v(">", c(10, 1), c(5, 1)) == "holds" and v("<", c(10, 1), c(5, 1)) == "reversed"
    assert v(">", c(10, 3), c(5, 3)) == "not shown"  # intervals overlap
    assert v(">", c(10, None, 1), c(5, None, 1)) == "not shown"  # one run each: no interval
    assert v(">=", c(10, 3), c(10.5, 3)) == "holds" and v("<=", c(10.5, 3), c(10, 3)) == "holds"  # ~ counts
    assert v(">=", c(5, 1), c(10, 1)) == "reversed" and v(">=", c(8, 3), c(10, 3)) == "not shown"
    assert v("~", c(100, 50), c(109, 50)) == "holds" and v("~", c(100, 1), c(120, 1)) == "reversed"
    assert v("~", c(100, 30), c(120, 30)) == "not shown"
    assert v(">", c(None, None, 0), c(5, 1)) == "no data"


def test_number_verdicts_by_hand():
    def num(value, rng=None, tol="relative"):
        return scorecard.Number("x", "", "", None, value, "%", rng, tol)

    v = scorecard.number_verdict
    assert v(num(10, (8, 20)), 19) == "inside" and v(num(10, (8, 20)), 21) == "outside"
    assert v(num(10), 11) == "within" and v(num(10), 11.01) == "outside" and v(num(-10), -9) == "within"
    assert v(num(95, tol="points"), 97) == "within" and v(num(95, tol="points"), 97.1) == "outside"
    assert v(num(0.5, tol="abs:0.25"), 0.74) == "within" and v(num(0.5, tol="abs:0.25"), 0.8) == "outside"
    assert v(num(10), None) == "no data"


def test_the_readme_set_up_section_by_its_heading():
    md = "# T\n\n## Setup\n\nnot this\n\n## Set-up: paper vs aqmlab\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n### sub\n\nkept\n\n## Next\n\ngone\n"
    assert study.setup_section(md) == "| a | b |\n|---|---|\n| 1 | 2 |\n\n### sub\n\nkept"
    assert study.setup_section("# T\n\n## Setup\n\nx\n") is None


def test_report_and_index_show_the_scorecard_marked_quick(tmp_path, monkeypatch):
    root = tmp_path / "studies"
    copy_study(root)
    monkeypatch.setenv("AQMLAB_STUDIES", str(root))
    index, recs = study.run_all(tmp_path / "out", quick=True, only=["scorecard-tiny"], workers=2)
    rec = recs[0]
    assert "error" not in rec, rec
    assert rec["reproduction"]["mode"] == "quick" and rec["reproduction"]["trends_total"] == 7
    for e in ("E1", "E2"):
        assert json.loads((tmp_path / "out" / "scorecard-tiny" / e / "sweep.json").read_text())["quick"] is True
    card = json.loads((tmp_path / "out" / "scorecard-tiny" / "scorecard.json").read_text())
    assert card["mode"] == "quick" and card["missing"] == []
    t = card["totals"]
    page = index.read_text()
    assert f"trends {t['trends_held']}/7, numbers {t['numbers_ok']}/5 (quick)" in page
    assert 'href="scorecard-tiny/scorecard.md"' in page
    report = (tmp_path / "out" / "scorecard-tiny" / "report.html").read_text()
    sec = report[report.index('<h2 id="reproduction">Reproduction</h2>'):]
    assert "QUICK mode" in sec and "util-4M-inside" in sec and "drops-fall-with-rate" in sec
    assert "<td>from-paper</td>" in sec and "assumed: a test fixture" in sec
    assert "(quick mode)" in (tmp_path / "out" / "scorecard-tiny" / "scorecard.md").read_text()


def test_ns2_column_from_a_real_ns2_script(ran, tmp_path):
    need_tool("ns")
    d, out = ran
    o = tmp_path / "o"
    shutil.copytree(out, o)
    doc = study.ns2(str(d), o)
    assert doc["ns"] == "2.35" and doc["scripts"] == {"tiny.tcl": ["util-1M-within"]}
    # 1 Mbit/s link fed 2 Mbit/s for 3 s: busy from the first packet's arrival
    # (1 ms ... 10 ms link delay + 6.4 ms serialisation) to the end
    assert 98.0 < doc["values"]["util-1M-within"] < 100.0
    card = study.compare(str(d), o)
    n = next(x for x in card["numbers"] if x["id"] == "util-1M-within")
    assert n["ns2"] == doc["values"]["util-1M-within"] and n["ns2_verdict"] == "within"
    assert "| ns-2 |" in (o / "scorecard.md").read_text()


def test_ns2_errors(ran, tmp_path, monkeypatch):
    d = copy_study(tmp_path / "studies")
    (d / "ns2" / "tiny.tcl").write_text('puts "SCORE no-such-id 1.0"\n')
    if shutil.which("ns"):
        with pytest.raises(ScenarioError, match="no-such-id"):
            study.ns2(str(d), tmp_path / "o")
        (d / "ns2" / "tiny.tcl").write_text('error "boom"\n')
        with pytest.raises(RuntimeError, match="boom"):
            study.ns2(str(d), tmp_path / "o")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="apt-get install ns2"):
        study.ns2(str(d), tmp_path / "o")


ONE_SWEEP_PAPER = """
[paper]
cite = "A. Nobody. One sweep. 2026"
simulator = "aqmlab"

[[number]]
id = "util-1M"
where = "Table 1"
quote = "utilisation 100 %"
select = { "topology.bottleneck.rate" = "1Mbit" }
table = "queues"
entity = "L->R"
metric = "utilization"
scale = 100.0
value = 100
unit = "%"
tolerance = "points"

[[trend]]
id = "slower-drops-more"
where = "Section 1"
quote = "the slower link drops more"
table = "queues"
entity = "L->R"
metric = "drop_rate"
a = { select = { "topology.bottleneck.rate" = "1Mbit" } }
op = ">"
b = { select = { "topology.bottleneck.rate" = "4Mbit" } }
"""


def test_a_one_sweep_study_gets_its_scorecard_in_the_report(tmp_path):
    d = tmp_path / "studies" / "one-sweep"
    d.mkdir(parents=True)
    shutil.copy(FIXTURE / "scenario.toml", d)
    shutil.copy(FIXTURE / "README.md", d)
    (d / "sweep.toml").write_text('name = "one-sweep"\nbase = "scenario.toml"\nseeds = 2\n[grid]\n"topology.bottleneck.rate" = ["1Mbit", "4Mbit"]\n')
    (d / "paper.toml").write_text(ONE_SWEEP_PAPER)
    out = tmp_path / "o"
    p = cli("study", "run", "one-sweep", "--out", out, "--quiet", root=d.parent)
    assert p.returncode == 0, p.stderr
    card = json.loads((out / "scorecard.json").read_text())
    assert [n["verdict"] for n in card["numbers"]] == ["within"] and card["trends"][0]["verdict"] == "holds"
    assert card["mode"] == "full" and card["totals"]["trends_held"] == 1
    page = (out / "report.html").read_text()
    head = '<h2 id="reproduction">Reproduction</h2>'
    assert head in page and "trends held 1 / 1 · numbers inside or within 1 / 1" in page
    assert page.index(head) < page.index("<h2>Tables</h2>")
    # the totals are also on the first screen, under the title, linking to the section
    lead = page.index('<p class="lead">')
    assert lead < page.index("<h2>") and 'href="#reproduction"' in page[lead:page.index("</p>", lead)]


def test_a_noted_variant_the_study_does_not_run_scores_no_data(tmp_path, ran):
    _, out = ran
    d = copy_study(tmp_path / "studies")
    text = (d / "paper.toml").read_text()
    old = '"topology.bottleneck.rate" = "4Mbit" }\ntable = "queues"'
    assert old in text
    (d / "paper.toml").write_text(text.replace(old, '"topology.bottleneck.rate" = "3Mbit" }\nnote = "not swept yet"\ntable = "queues"', 1))
    card = study.compare(str(d), out, write=False)
    row = next(n for n in card["numbers"] if n["id"] == "util-4M-inside")
    assert row["verdict"] == "no data" and "no point" in row["aqmlab"]["why"]


BUILTIN_PAPERS = sorted((ROOT / "studies").glob("*/paper.toml"))


@pytest.mark.parametrize("paper", BUILTIN_PAPERS, ids=[p.parent.name for p in BUILTIN_PAPERS])
def test_each_builtin_paper_toml_reads_against_its_study(paper):
    p = scorecard.read_paper(paper, paper.parent)
    assert p.numbers or p.trends
    for e in [*p.numbers, *p.trends]:
        assert e.quote.strip() and e.where.strip(), e.id
