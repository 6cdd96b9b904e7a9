"""The command line's fast paths (aqmlab/fastcli.py) import no heavy library and give
what the typer app gives. What is checked is which modules get imported, never a time."""

import json
import subprocess
import sys

import pytest
from conftest import EXAMPLES, ROOT

HEAVY = ("polars", "pandas", "pyarrow", "numpy", "scipy", "matplotlib", "typer", "rich", "dask")

#: Runs a command line through the fast path in-process, then prints the heavy modules loaded.
PROBE = """
import contextlib, io, json, sys
from aqmlab.fastcli import try_fast
with contextlib.redirect_stdout(io.StringIO()):
    handled = try_fast(sys.argv[1:])
print(json.dumps({"handled": handled, "heavy": sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)}))
""".replace("HEAVY", repr(HEAVY))


def probe(*argv: str) -> dict:
    r = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(r.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    "argv",
    [
        ("run", str(EXAMPLES / "mm1.toml"), "--set", "duration=1s", "--json"),
        ("run", str(EXAMPLES / "mm1.toml"), "-s", "duration=1s", "--seed=3", "--quiet"),
        ("validate", str(EXAMPLES / "docsis-upstream.toml")),
        ("qdiscs", "codel", "--json"),
    ],
)
def test_fast_paths_import_nothing_heavy(argv):
    got = probe(*argv)
    assert got == {"handled": True, "heavy": []}


@pytest.mark.parametrize("argv", [("--help",), ("run", "x.toml", "--help"), ("run", "x.toml"), ("qdiscs",), ("sweep", "x.toml"), ("run", "x.toml", "--seed", "-1")])
def test_other_command_lines_go_to_typer(argv):
    from aqmlab.fastcli import _Fallback, parse

    if argv[0] in ("run", "qdiscs") and "--help" not in argv and "-1" not in argv:
        # parsed, but a table is to be printed: the command itself falls back
        assert probe(*argv)["handled"] is False
    else:
        with pytest.raises(_Fallback):
            parse(list(argv))


def typer_cli(*argv: str) -> subprocess.CompletedProcess:
    code = "import sys; from aqmlab.cli import main; sys.argv = ['aqmlab', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT)


def fast_cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aqmlab.cli", *argv], capture_output=True, text=True, cwd=ROOT)


def without_wall_clock(out: str) -> dict:
    d = json.loads(out)
    for k in ("wall_time_s", "events_per_s"):
        d["summary"].pop(k)
    return d


@pytest.mark.parametrize("name", ["mm1.toml", "docsis-upstream.toml", "voip-uploads.toml"])
def test_fast_run_json_is_the_typer_run_json(name):
    argv = ("run", str(EXAMPLES / name), "--set", "duration=12s", "--set", "warmup=1s", "--json")
    fast, slow = fast_cli(*argv), typer_cli(*argv)
    assert fast.returncode == slow.returncode == 0, fast.stderr + slow.stderr
    assert fast.stdout.count("\n") == slow.stdout.count("\n") == 1
    assert without_wall_clock(fast.stdout) == without_wall_clock(slow.stdout)
    # the same text, key order and float spelling included
    a, b = json.loads(fast.stdout), json.loads(slow.stdout)
    for d in (a, b):
        d["summary"]["wall_time_s"] = d["summary"]["events_per_s"] = 0
    assert json.dumps(a) == json.dumps(b)


@pytest.mark.parametrize(
    "argv",
    [
        ("run", str(EXAMPLES / "mm1.toml"), "--set", "duration=-1s", "--json"),
        ("run", "no-such-file.toml", "--json"),
        ("validate", str(EXAMPLES / "mm1.toml"), "--set", "topology.bottleneck.rate=fast"),
        ("qdiscs", "nope", "--json"),
    ],
)
def test_fast_errors_are_the_typer_errors(argv):
    fast, slow = fast_cli(*argv), typer_cli(*argv)
    assert fast.returncode == slow.returncode == 2
    assert fast.stdout == slow.stdout == ""
    assert " ".join(fast.stderr.split()) == " ".join(slow.stderr.split())
    assert fast.stderr.startswith("error: ")


def test_validate_ok_line():
    r = fast_cli("validate", str(EXAMPLES / "mm1.toml"))
    assert (r.returncode, r.stdout) == (0, f"{EXAMPLES / 'mm1.toml'}: ok\n")


def test_aqmlab_run_still_works_lazily():
    import aqmlab

    assert aqmlab.sweep.__module__ == "aqmlab.sweep.driver"
    res = aqmlab.run(EXAMPLES / "mm1.toml", set=["duration=1s"])
    assert "queues" in res and res.queues.height == 2
