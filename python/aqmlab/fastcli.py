"""The command line's fast paths, parsed before typer and rich are imported.

``aqmlab run FILE --json`` (or ``--quiet``), ``aqmlab validate FILE`` and ``aqmlab qdiscs
[NAME] --json`` print no rich tables, so they need neither typer, rich nor polars (together
~10× a bare Python start). ``aqmlab --help`` and ``aqmlab run --help`` into a pipe or a file
print the typer app's stored help (`aqmlab.fasthelp`). `main` handles exactly those command lines here and hands every
other one — ``--help``, a bad option, a table to print — to the typer app in `aqmlab.cli`,
which gives the same results and errors for them.
"""

from __future__ import annotations

import sys

#: Options that take a value, by command; ``--set`` / ``-s`` repeat.
_VALUE_OPTS = {"run": {"--seed", "--set", "-s", "--out"}, "validate": {"--set", "-s"}, "qdiscs": set()}
_FLAGS = {"run": {"--json", "--quiet", "-q", "--all"}, "validate": set(), "qdiscs": {"--json"}}
_POSITIONALS = {"run": (1, 1), "validate": (1, 1), "qdiscs": (0, 1)}


class _Fallback(Exception):
    """This command line is not a fast path: the typer app parses it."""


def parse(argv: list[str]) -> tuple[str, list[str], dict[str, list[str]]]:
    """``(command, positionals, options)`` of a fast-path command line, or `_Fallback`."""
    if not argv or argv[0] not in _VALUE_OPTS:
        raise _Fallback
    cmd, rest = argv[0], argv[1:]
    positionals: list[str] = []
    opts: dict[str, list[str]] = {}
    i = 0
    while i < len(rest):
        a = rest[i]
        name, eq, value = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in _FLAGS[cmd] and not eq:
            opts.setdefault(name, []).append("")
        elif name in _VALUE_OPTS[cmd]:
            if not eq:
                i += 1
                if i == len(rest) or rest[i].startswith("-"):
                    raise _Fallback
                value = rest[i]
            opts.setdefault(name, []).append(value)
        elif a.startswith("-"):
            raise _Fallback  # --help, an unknown option, a negative number: typer's job
        else:
            positionals.append(a)
        i += 1
    lo, hi = _POSITIONALS[cmd]
    if not lo <= len(positionals) <= hi:
        raise _Fallback
    return cmd, positionals, opts


def _fail(e: Exception) -> None:
    print(f"error: {e}", file=sys.stderr)
    raise SystemExit(2)


def _run(scenario: str, opts: dict[str, list[str]]) -> None:
    import json
    from pathlib import Path

    from .errors import ScenarioError, SimulationError
    from .results import check_run_out
    from .runner import run

    json_out, quiet = "--json" in opts, "--quiet" in opts or "-q" in opts
    if not (json_out or quiet):
        raise _Fallback  # tables and a progress bar: rich
    seed = None
    if "--seed" in opts:
        try:
            seed = int(opts["--seed"][-1])
        except ValueError:
            raise _Fallback from None  # typer words the usage error
    out = Path(opts["--out"][-1]) if "--out" in opts else None
    sets = opts.get("--set", []) + opts.get("-s", []) if ("--set" in opts or "-s" in opts) else None
    try:
        if out is not None:
            check_run_out(out)
        res = run(Path(scenario), seed=seed, set=sets, out=out)
        if out is not None:
            res.write_parquet(out)
    except (ScenarioError, SimulationError) as e:
        _fail(e)
    except KeyboardInterrupt:
        print("interrupted: the run was stopped before its end; nothing was written", file=sys.stderr)
        if json_out:
            print(json.dumps({"interrupted": True, "finished": False, "scenario": scenario}))
        raise SystemExit(130) from None
    if res.pcap_files and out is None:
        where = Path(res.pcap_files[0]).parent
        print(f"pcap written to {where}/ (no --out given): {', '.join(Path(f).name for f in res.pcap_files)}", file=sys.stderr)
    if json_out:
        print(res.to_json())


def _validate(scenario: str, opts: dict[str, list[str]]) -> None:
    from pathlib import Path

    from .errors import ScenarioError
    from .scenario import warnings

    sets = opts.get("--set", []) + opts.get("-s", []) if ("--set" in opts or "-s" in opts) else None
    try:
        found = warnings(Path(scenario), sets)
    except ScenarioError as e:
        _fail(e)
    for m in found:  # as cli.print_warnings, without rich
        print(f"warning: {m}", file=sys.stderr)
    print(f"{scenario}: ok" + (f" ({len(found)} warning{'s' if len(found) > 1 else ''})" if found else ""))


def _qdiscs(name: str | None, opts: dict[str, list[str]]) -> None:
    import json

    from .errors import ScenarioError
    from .scenario import qdisc_docs

    if "--json" not in opts:
        raise _Fallback
    docs = qdisc_docs()
    if name is not None:
        docs = [d for d in docs if d["kind"] == name]
        if not docs:
            _fail(ScenarioError("qdisc", f'"{name}": unknown queue discipline; known: {", ".join(d["kind"] for d in qdisc_docs())}'))
    print(json.dumps(docs, indent=2))


def try_fast(argv: list[str]) -> bool:
    """Run ``argv`` if it is a fast path (True), else do nothing (False). A fast path
    decides before it has any effect whether it falls back."""
    try:
        cmd, positionals, opts = parse(argv)
        if cmd == "run":
            _run(positionals[0], opts)
        elif cmd == "validate":
            _validate(positionals[0], opts)
        else:
            _qdiscs(positionals[0] if positionals else None, opts)
    except _Fallback:
        return False
    return True


def main() -> None:
    """The ``aqmlab`` console script."""
    from .fasthelp import serve

    if serve(sys.argv[1:], sys.argv[0]) or try_fast(sys.argv[1:]):
        return
    from .cli import main as typer_main

    typer_main()
