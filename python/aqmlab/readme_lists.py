"""The README's lists of queue disciplines, traffic kinds and congestion controls, made
from the core's registries so that they cannot fall behind them.

``aqmlab docs readme`` rewrites the block between `BEGIN` and `END` in ``README.md``;
``aqmlab docs readme --check`` (and ``tests/test_readme_lists.py``) fails when the block
differs from what the registries give. A new qdisc or traffic kind registered in the core
appears here after ``aqmlab docs readme``; nothing in this file names one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .scenario import cc_docs, qdisc_docs, traffic_docs

BEGIN = "<!-- registry lists: written by `aqmlab docs readme` from the core's registries; do not edit by hand -->"
END = "<!-- end of registry lists -->"

#: The repository's README (a source checkout; the installed package has none).
README = Path(__file__).resolve().parents[2] / "README.md"


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell (pipes escaped, one line)."""
    return " ".join(text.split()).replace("|", "\\|")


def _table(docs: list[dict[str, Any]]) -> list[str]:
    rows = ["| kind | what it is | source |", "| --- | --- | --- |"]
    rows += [f"| `{d['kind']}` | {_cell(d['summary'])} | {_cell(d['source'])} |" for d in docs]
    return rows


def lists_markdown() -> str:
    """The generated block, markers included."""
    qdiscs = qdisc_docs()
    traffic = [d for d in traffic_docs() if d["kind"] != "common"]
    ccs = cc_docs()
    lines = [
        BEGIN,
        "",
        f"Queue disciplines ({len(qdiscs)}; `aqmlab qdiscs NAME` lists one's parameters and defaults):",
        "",
        *_table(qdiscs),
        "",
        f"Traffic kinds ({len(traffic)}; `aqmlab traffic NAME` lists one's parameters):",
        "",
        *_table(traffic),
        "",
        f"Congestion controls of the TCP kinds ({len(ccs)}; `cc = \"NAME\"` or `cc = {{ kind = \"NAME\", ... }}`; "
        "`aqmlab ccs NAME` lists one's parameters; `docs/tcp.md`):",
        "",
        *_table(ccs),
        "",
        END,
    ]
    return "\n".join(lines)


def replace_block(text: str, block: str) -> str:
    """``text`` with its marked block replaced by ``block``; ValueError without markers."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"README: no block between {BEGIN!r} and {END!r}")
    return text[:start] + block + text[end + len(END) :]


def update(readme: Path = README, check: bool = False) -> bool:
    """Bring ``readme``'s block up to date (or, with ``check``, only compare). True when
    it already was."""
    text = readme.read_text(encoding="utf-8")
    new = replace_block(text, lists_markdown())
    if new == text:
        return True
    if not check:
        readme.write_text(new, encoding="utf-8")
    return False
