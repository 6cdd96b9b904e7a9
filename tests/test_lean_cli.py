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


def _clean_env() -> dict[str, str]:
    import os

    from aqmlab.fasthelp import RENDER_ENV

    return {k: v for k, v in os.environ.items() if k not in RENDER_ENV} | {"PYTHONIOENCODING": "utf-8"}


#: The ``aqmlab`` console script (`aqmlab.fastcli.main`), with the program name it has when installed.
SCRIPT = "import sys; sys.argv = ['aqmlab', *sys.argv[1:]]; from aqmlab.fastcli import main; main()"


def test_stored_help_is_what_the_typer_app_prints():
    from aqmlab._help_text import HELP
    from aqmlab.fasthelp import COMMANDS, render

    assert set(HELP) == {" ".join(a) for a in COMMANDS}
    for argv in COMMANDS:
        assert HELP[" ".join(argv)] == render(argv), "stale python/aqmlab/_help_text.py: run `aqmlab docs help`"


@pytest.mark.parametrize("argv", [("--help",), ("run", "--help")])
def test_fast_help_is_the_typer_help_and_imports_nothing_heavy(argv):
    env = _clean_env()
    fast = subprocess.run([sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True, encoding="utf-8", cwd=ROOT, env=env)
    slow = subprocess.run([sys.executable, "-c", SCRIPT.replace("aqmlab.fastcli", "aqmlab.cli"), *argv], capture_output=True, text=True, encoding="utf-8", cwd=ROOT, env=env)
    assert fast.returncode == slow.returncode == 0, fast.stderr + slow.stderr
    assert fast.stdout == slow.stdout and "Usage: aqmlab" in fast.stdout
    # the fast path returns (typer would exit), then the heavy modules loaded are listed
    probe_code = SCRIPT + f"\nprint(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}), file=sys.stderr)"
    r = subprocess.run([sys.executable, "-c", probe_code, *argv], capture_output=True, text=True, encoding="utf-8", cwd=ROOT, env=env)
    assert (r.returncode, r.stderr.strip()) == (0, "[]")


def test_help_outside_a_pipe_goes_to_typer(monkeypatch):
    import io

    from aqmlab import fasthelp

    class Tty(io.StringIO):
        encoding = "utf-8"

        def isatty(self):
            return True

    class Pipe(Tty):
        def isatty(self):
            return False

    env = _clean_env()
    assert fasthelp.plain_output(Pipe(), env)
    assert not fasthelp.plain_output(Tty(), env)  # a terminal: its width, colours
    assert not fasthelp.plain_output(Pipe(), env | {"COLUMNS": "120"})
    assert not fasthelp.plain_output(Pipe(), env | {"NO_COLOR": ""})
    ascii_pipe = Pipe()
    ascii_pipe.encoding = "ascii"  # rich draws ASCII boxes then
    assert not fasthelp.plain_output(ascii_pipe, env)
    monkeypatch.setattr(sys, "stdout", Pipe())
    monkeypatch.setattr(fasthelp.os, "environ", env)
    assert not fasthelp.serve(["--help"], "python -m aqmlab.cli")  # click's program name differs
    assert not fasthelp.serve(["run", "x.toml", "--help"], "aqmlab")
    assert fasthelp.serve(["run", "--help"], "/usr/local/bin/aqmlab")
    from aqmlab._help_text import HELP

    assert sys.stdout.getvalue() == HELP["run --help"]


def test_fast_help_with_columns_set_is_typer_at_that_width():
    env = _clean_env() | {"COLUMNS": "100"}
    fast = subprocess.run([sys.executable, "-c", SCRIPT, "--help"], capture_output=True, text=True, encoding="utf-8", cwd=ROOT, env=env)
    assert fast.returncode == 0
    assert max(len(line) for line in fast.stdout.splitlines()) == 100
