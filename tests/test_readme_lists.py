"""The README's lists of qdiscs, traffic kinds and congestion controls are the registries'."""

import subprocess

import pytest
from aqmlab import readme_lists
from aqmlab.scenario import cc_docs, qdisc_docs, traffic_docs
from conftest import AQMLAB


def test_the_readme_block_is_what_the_registries_give():
    text = readme_lists.README.read_text(encoding="utf-8")
    assert readme_lists.replace_block(text, readme_lists.lists_markdown()) == text, (
        "README.md's registry lists are stale: run `.venv/bin/aqmlab docs readme`"
    )


def test_the_block_names_every_registered_kind_once():
    block = readme_lists.lists_markdown()
    for d in qdisc_docs() + [t for t in traffic_docs() if t["kind"] != "common"]:
        assert block.count(f"| `{d['kind']}` |") == 1, d["kind"]
    for c in (d["kind"] for d in cc_docs()):
        assert f"`{c}`" in block, c
    assert f"Queue disciplines ({len(qdisc_docs())};" in block


def test_check_fails_on_a_stale_block_and_the_command_repairs_it(tmp_path):
    readme = tmp_path / "README.md"
    stale = f"intro\n\n{readme_lists.BEGIN}\n| `pfifo` | old |\n{readme_lists.END}\n\nrest\n"
    readme.write_text(stale)
    p = subprocess.run([*AQMLAB, "docs", "readme", "--check", "--path", str(readme)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "stale" in p.stderr, p.stderr
    assert readme.read_text() == stale  # --check writes nothing
    p = subprocess.run([*AQMLAB, "docs", "readme", "--path", str(readme)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    fixed = readme.read_text()
    assert fixed.startswith("intro\n\n") and fixed.endswith("\n\nrest\n")
    assert readme_lists.lists_markdown() in fixed
    assert readme_lists.update(readme, check=True)


def test_a_readme_without_the_markers_is_an_error_naming_them(tmp_path):
    with pytest.raises(ValueError, match="no block between"):
        readme_lists.replace_block("no markers here", readme_lists.lists_markdown())
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n")
    p = subprocess.run([*AQMLAB, "docs", "readme", "--path", str(readme)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "no block between" in p.stderr and "Traceback" not in p.stderr
