"""The CLI, run as a subprocess."""

import json
import subprocess

import polars as pl
from conftest import AQMLAB, EXAMPLES


def cli(*args, **kw):
    return subprocess.run([*AQMLAB, *map(str, args)], capture_output=True, text=True, timeout=300, **kw)


def test_run_writes_parquet_and_prints_a_summary(tmp_path):
    p = cli("run", EXAMPLES / "mm1.toml", "--set", "duration=50s", "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    assert "mm1" in p.stdout and "a->b" in p.stdout
    for t in ("summary", "queues", "flows", "apps"):
        assert (tmp_path / f"{t}.parquet").exists()
    q = pl.read_parquet(tmp_path / "queues.parquet")
    assert q.filter(pl.col("link") == "a->b")["utilization"][0] > 0.7


def test_run_json_is_valid_and_has_the_contract_names():
    p = cli("run", EXAMPLES / "mm1.toml", "--set", "duration=20s", "--seed", "4", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert set(doc) == {"summary", "queues", "flows", "apps"}
    assert doc["summary"]["seed"] == 4
    assert doc["queues"][0]["link"] == "a->b"


def test_bad_input_exits_nonzero_with_the_message_and_no_traceback(tmp_path):
    p = cli("run", EXAMPLES / "mm1.toml", "--set", "topology.links[0].delay=5 parsecs")
    assert p.returncode == 2
    assert "topology.links[0].delay" in p.stderr and "parsecs" in p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text((EXAMPLES / "mm1.toml").read_text().replace('duration = "2000s"', 'duration = "2000s"\nfoo = 1'))
    p = cli("validate", bad)
    assert p.returncode == 2 and "foo" in p.stderr and "unknown field" in p.stderr
    assert "Traceback" not in p.stderr
    p = cli("run", tmp_path / "missing.toml")
    assert p.returncode == 2 and "not found" in p.stderr


def test_validate_ok_and_qdiscs_listing():
    p = cli("validate", EXAMPLES / "mm1.toml")
    assert p.returncode == 0 and "ok" in p.stdout
    p = cli("qdiscs", "--json")
    assert p.returncode == 0
    kinds = {d["kind"] for d in json.loads(p.stdout)}
    assert "pfifo" in kinds
    p = cli("qdiscs", "pfifo")
    assert p.returncode == 0 and "limit" in p.stdout
    p = cli("qdiscs", "nosuch")
    assert p.returncode == 2 and "unknown queue discipline" in p.stderr


def test_ccs_listing():
    p = cli("ccs", "--json")
    assert p.returncode == 0
    docs = {d["kind"]: d for d in json.loads(p.stdout)}
    assert set(docs) == {"reno", "newreno", "cubic", "ledbat", "compound", "vegas", "dctcp", "bbr", "prague"}
    assert [q["name"] for q in docs["vegas"]["params"]] == ["alpha", "beta", "gamma"]
    p = cli("ccs", "vegas")
    assert p.returncode == 0 and "vegas_alpha" in p.stdout
    p = cli("ccs", "vegass")
    assert p.returncode == 2 and "unknown congestion control" in p.stderr
