"""Repository hygiene: no tracked file cites the project's internal notes.

The internal notes live outside the repository; users cannot read them, so code, docs,
examples and generated reports must cite primary sources (papers, RFCs, simulator
files) or the project's own docs/ pages instead. The forbidden names are built from
parts so that this file does not match itself.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The four internal notes (algorithms, studies, design, style).
FORBIDDEN = [stem + ".md" for stem in ("ALGORITHMS", "STUDIES", "DESIGN", "STYLE")]


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / name for name in out.decode().split("\0") if name]


def offending_lines(path: Path) -> list[str]:
    """`path:line: text` for each line of `path` that names a forbidden file (any case)."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return []  # deleted in the work tree but still in the index, or a submodule
    lowered = data.lower()
    if not any(name.lower().encode() in lowered for name in FORBIDDEN):
        return []
    hits = []
    for number, line in enumerate(data.decode(errors="replace").splitlines(), 1):
        if any(name.lower() in line.lower() for name in FORBIDDEN):
            hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return hits or [f"{path.relative_to(ROOT)}: (binary content)"]


def test_no_tracked_file_mentions_the_internal_notes():
    files = tracked_files()
    assert len(files) > 100, "git ls-files found almost nothing: wrong directory?"
    hits = [hit for path in files for hit in offending_lines(path)]
    assert not hits, "cite the primary source or a docs/ page instead:\n" + "\n".join(hits)


def test_the_check_finds_a_mention(tmp_path, monkeypatch):
    """The scan is not vacuous: a file naming a forbidden note is reported."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\n# see " + FORBIDDEN[1].lower() + " §4\n")
    assert offending_lines(bad) == ["bad.py:2: # see " + FORBIDDEN[1].lower() + " §4"]
    assert offending_lines(tmp_path / "missing.txt") == []
