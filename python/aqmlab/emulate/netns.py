"""Network namespaces for an emulation, and their guaranteed teardown.

`Testbed` creates two namespaces (``aqmlab-PID-N-l`` and ``-r``), starts the emulator
process (which creates one TUN device in each), gives every host of the dumbbell its
address on its side's TUN (left hosts 10.77.1.k, right hosts 10.77.2.k, /32) and routes
the other side's /24 into the TUN, so the only path between the two namespaces is
through the emulator. Nothing is created outside these namespaces. Two kernel-side
experiment knobs: ``gso_max_segs`` caps the TUN's GSO segments per packet (1: the kernel
TCP sends single segments instead of TSO-autosized bursts, `tcp_tso_segs` in
net/ipv4/tcp_output.c caps at ``sk_gso_max_segs``), ``quickack`` adds ``quickack 1`` to
the routes (`RTAX_QUICKACK`: the receiver ACKs every segment, `tcp_in_quickack_mode`).

Teardown (`close`) runs on every exit path — normal end, exception, Ctrl-C (SIGINT is
a KeyboardInterrupt) and SIGTERM (turned into SystemExit while a testbed is open):
child processes are stopped (stdin closed, then terminate, then kill), and both
namespaces are deleted; the TUN devices vanish with the emulator's descriptors.
`cleanup_stale` removes namespaces left by a process that no longer exists (e.g. one
killed with SIGKILL).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any, NoReturn

from ..errors import SimulationError

PREFIX = "aqmlab-"
TUN = "aqmtun"
_counter = itertools.count()


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SimulationError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r


def namespaces() -> list[str]:
    r = ip("netns", "list", check=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def ours() -> list[str]:
    """Namespaces made by aqmlab (any process)."""
    return [n for n in namespaces() if n.startswith(PREFIX)]


def cleanup_stale() -> list[str]:
    """Delete aqmlab namespaces whose creating process is gone; returns their names."""
    gone = []
    for n in ours():
        try:
            pid = int(n[len(PREFIX):].split("-")[0])
        except ValueError:
            continue
        if not Path(f"/proc/{pid}").exists():
            ip("netns", "del", n, check=False)
            gone.append(n)
    return gone


def host_ip(side: str, k: int) -> str:
    if k >= 250:
        raise SimulationError("emulation supports at most 250 hosts per side")
    return f"10.77.{1 if side == 'l' else 2}.{k + 1}"


def pipes(proc: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes], IO[bytes]]:
    """stdin, stdout and stderr of a process started with all three as pipes."""
    if proc.stdin is None or proc.stdout is None or proc.stderr is None:
        raise SimulationError(f"{proc.args!r}: started without pipes")
    return proc.stdin, proc.stdout, proc.stderr


def _stop(proc: subprocess.Popen[bytes] | None, grace: float = 3.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        if proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        pass
    proc.terminate()
    try:
        proc.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Testbed:
    """Two namespaces joined by the emulator. Use as a context manager."""

    def __init__(self, scenario: dict[str, Any], left_hosts: list[str], right_hosts: list[str], *, seed: int | None = None,
                 realtime: bool = True, busy_poll_us: float = 50.0, max_duration_s: float = 600.0,
                 measure_s: float | None = None,
                 sysctls: dict[str, dict[str, str]] | None = None, gso_max_segs: int | None = None,
                 quickack: bool = False, cpu: int | None = None):
        self.scenario = scenario
        self.left_hosts, self.right_hosts = left_hosts, right_hosts
        self.addr = {h: host_ip("l", k) for k, h in enumerate(left_hosts)}
        self.addr.update({h: host_ip("r", k) for k, h in enumerate(right_hosts)})
        tag = f"{PREFIX}{os.getpid()}-{next(_counter)}"
        self.ns = {"l": f"{tag}-l", "r": f"{tag}-r"}
        self.seed, self.realtime, self.busy_poll_us = seed, realtime, busy_poll_us
        self.max_duration_s = max_duration_s
        self.measure_s = measure_s
        self.sysctls = sysctls or {}
        self.gso_max_segs, self.quickack = gso_max_segs, quickack
        self.cpu = cpu
        self.pump: subprocess.Popen[bytes] | None = None
        self.children: list[subprocess.Popen[bytes]] = []
        self.tmp = tempfile.TemporaryDirectory(prefix="aqmlab-emu-")
        self._old_term: Any = None
        self.created: list[str] = []

    # -- lifecycle -------------------------------------------------------------------
    def __enter__(self) -> Testbed:
        self._old_term = signal.getsignal(signal.SIGTERM)
        if self._old_term in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, _raise_exit)
        try:
            self._open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> None:
        cleanup_stale()
        for side in "lr":
            ip("netns", "add", self.ns[side])
            self.created.append(self.ns[side])
        cfg = {
            "scenario": self.scenario,
            "config": {
                "left_netns": f"/var/run/netns/{self.ns['l']}",
                "right_netns": f"/var/run/netns/{self.ns['r']}",
                "left_tun": TUN,
                "right_tun": TUN,
                "hosts": [{"node": h, "ip": a} for h, a in self.addr.items()],
                "seed": self.seed,
                "busy_poll_ns": int(self.busy_poll_us * 1000),
                "realtime": self.realtime,
                "cpu": self.cpu,
                "max_duration_ns": int(self.max_duration_s * 1e9),
                "measure_ns": None if self.measure_s is None else int(self.measure_s * 1e9),
            },
        }
        path = Path(self.tmp.name) / "pump.json"
        path.write_text(json.dumps(cfg))
        self.pump = subprocess.Popen(
            [sys.executable, "-m", "aqmlab.emulate.pump", str(path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        pump, _, out, errs = self._pipes()
        line = out.readline()
        if line.strip() != b"ready":
            err = errs.read().decode(errors="replace").strip() if pump.poll() is not None or not line else ""
            pump.wait(timeout=5)
            err = err or errs.read().decode(errors="replace").strip()
            if err.startswith("scenario error: "):
                from ..errors import ScenarioError

                msg = err[len("scenario error: "):]
                path_, _, rest = msg.partition(": ")
                raise ScenarioError(path_, rest or msg)
            raise SimulationError(f"the emulator did not start: {err or line!r}")
        mtu = str(self.mtu())
        for side, hosts, other in (("l", self.left_hosts, "10.77.2.0/24"), ("r", self.right_hosts, "10.77.1.0/24")):
            ns = self.ns[side]
            self.nsexec(ns, ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])
            self.nsexec(ns, ["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"])
            for key, val in self.sysctls.get(side, {}).items():
                self.nsexec(ns, ["sysctl", "-qw", f"{key}={val}"])
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", ns, "link", "set", TUN, "mtu", mtu, "up")
            if self.gso_max_segs is not None:
                ip("-n", ns, "link", "set", TUN, "gso_max_segs", str(self.gso_max_segs))
            for h in hosts:
                ip("-n", ns, "addr", "add", f"{self.addr[h]}/32", "dev", TUN)
            ip("-n", ns, "route", "add", other, "dev", TUN, *(["quickack", "1"] if self.quickack else []))

    def mtu(self) -> int:
        """The TUN MTU: the smaller of the bottleneck's and the reverse link's (1500 B)."""
        from .plan import size_bytes

        topo = self.scenario.get("topology", {})
        links = [topo.get(k) or {} for k in ("bottleneck", "reverse")]
        return min(size_bytes(l["mtu"]) if "mtu" in l else 1500 for l in links)

    def nsexec(self, ns: str, cmd: list[str]) -> None:
        r = subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True)
        if r.returncode != 0:
            raise SimulationError(f"{' '.join(cmd)} in {ns}: {r.stderr.strip()}")

    def spawn(self, side: str, cmd: list[str]) -> subprocess.Popen[bytes]:
        """Start `cmd` inside a side's namespace (stdin/stdout pipes); stopped on close."""
        p = subprocess.Popen(["ip", "netns", "exec", self.ns[side], *cmd],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.children.append(p)
        return p

    def _pipes(self) -> tuple[subprocess.Popen[bytes], IO[bytes], IO[bytes], IO[bytes]]:
        """The running emulator and its stdin/stdout/stderr (pipes, opened in `_open`)."""
        if self.pump is None:
            raise SimulationError("the emulator is not running")
        return (self.pump, *pipes(self.pump))

    def _tell(self, command: bytes) -> None:
        stdin = self._pipes()[1]
        stdin.write(command)
        stdin.flush()

    def go(self) -> None:
        self._tell(b"g\n")

    def finish(self) -> dict[str, Any]:
        """Stop the emulator and return its report."""
        pump = self._pipes()[0]
        try:
            self._tell(b"q\n")
        except OSError:
            pass
        try:
            out, err = pump.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pump.kill()
            out, err = pump.communicate()
        if pump.returncode != 0:
            raise SimulationError(f"the emulator failed: {err.decode(errors='replace').strip()}")
        report: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
        return report

    def close(self) -> None:
        """Stop every process and delete both namespaces (idempotent, never raises)."""
        for p in self.children:
            _stop(p, grace=1.0)
        self.children = []
        _stop(self.pump)
        for ns in self.created:
            for _ in range(20):
                if ip("netns", "del", ns, check=False).returncode == 0 or ns not in namespaces():
                    break
                time.sleep(0.05)
        self.created = []
        self.tmp.cleanup()
        if self._old_term is not None:
            try:
                signal.signal(signal.SIGTERM, self._old_term)
            except (ValueError, TypeError):
                pass
            self._old_term = None


def _raise_exit(signum: int, frame: object) -> NoReturn:
    raise SystemExit(128 + signum)
