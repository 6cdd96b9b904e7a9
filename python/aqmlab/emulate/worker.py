"""Traffic inside one emulation namespace: kernel TCP bulk senders and receivers, UDP
probes (CBR or Poisson) with send timestamps. Standard library only: it is started as
a script (``ip netns exec NS python worker.py SPEC``) so it does not import aqmlab.

Protocol: prints ``ready`` once every receiver listens, waits for ``g`` on stdin (time
zero), runs ``duration_s`` plus ``grace_s`` (late datagrams), prints one JSON line with
its results and exits. A ``q`` or end-of-file on stdin stops it early.

Kernel counters come from ``getsockopt(TCP_INFO)`` (``struct tcp_info`` in
include/uapi/linux/tcp.h): ``tcpi_total_retrans`` (offset 100), ``tcpi_total_rto``
(offset 240, Linux ≥ 6.7), ``tcpi_snd_cwnd`` (80, segments), ``tcpi_snd_ssthresh``
(76), ``tcpi_rtt`` (68, µs), ``tcpi_unacked`` (24), ``tcpi_snd_mss`` (16),
``tcpi_bytes_sent`` (200), ``tcpi_data_segs_out`` (156). Counters are read at the end
of the warm-up and at the end, and the flows table gets the difference.

One-way delay of a UDP datagram: its payload carries the send time (CLOCK_REALTIME
ns, taken just before ``sendto``); the receiver takes the kernel's receive timestamp
(``SO_TIMESTAMPNS``, also CLOCK_REALTIME), so the receiver's scheduling delay is not
part of the delay.
"""

from __future__ import annotations

import json
import os
import random
import select
import socket
import struct
import sys
import threading
import time
from typing import Any

TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
PROBE = struct.Struct("!QQ")  # sequence number, send time (CLOCK_REALTIME ns)


def tcp_info(sock: socket.socket) -> dict[str, Any]:
    b = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 256)

    def field(fmt: str, off: int) -> int:
        """An unsigned field of `struct tcp_info` at byte ``off``; 0 past the kernel's struct."""
        if len(b) < off + struct.calcsize(fmt):
            return 0
        value: int = struct.unpack_from(fmt, b, off)[0]
        return value

    def u32(off: int) -> int:
        return field("I", off)

    def u64(off: int) -> int:
        return field("Q", off)

    def u16(off: int) -> int:
        return field("H", off)

    return {
        "mss": u32(16),
        "unacked": u32(24),
        "sacked": u32(28),
        "lost": u32(32),
        "retrans": u32(36),
        "rtt_us": u32(68),
        "ssthresh": u32(76),
        "cwnd": u32(80),
        "total_retrans": u32(100),
        "data_segs_out": u32(156),
        "bytes_sent": u64(200),
        "total_rto": u16(240) if len(b) >= 242 else None,
    }


def in_flight(i: dict[str, Any]) -> int:
    """Bytes in flight as the kernel counts them (`tcp_packets_in_flight`: packets_out
    − sacked_out − lost_out + retrans_out) × MSS: the RFC 6675 pipe the simulator's
    `bytes_in_flight` reports."""
    pipe: int = max(0, i["unacked"] - i["sacked"] - i["lost"] + i["retrans"]) * i["mss"]
    return pipe


class Clock:
    def __init__(self) -> None:
        #: Monotonic time of the start signal (set by `main`).
        self.t0 = 0.0
        self.go = threading.Event()
        self.stop = threading.Event()

    def at(self, s: float) -> float:
        return self.t0 + s

    def sleep_until(self, t: float) -> bool:
        """Sleep until monotonic ``t``; False if stopped first."""
        while True:
            left = t - time.monotonic()
            if left <= 0:
                return not self.stop.is_set()
            if self.stop.wait(min(left, 0.05)):
                return False


def tcp_receiver(spec: dict[str, Any], lsock: socket.socket, clk: Clock, out: dict[str, Any], warm: float, end: float) -> None:
    lsock.settimeout(0.2)
    conn = None
    while conn is None and not clk.stop.is_set():
        try:
            conn, _ = lsock.accept()
        except TimeoutError:
            continue
    if conn is None:
        return
    conn.settimeout(0.2)
    buf = bytearray(1 << 16)
    total = window = 0
    while not clk.stop.is_set():
        try:
            n = conn.recv_into(buf)
        except TimeoutError:
            continue
        except OSError:
            break
        if n == 0:
            break
        now = time.monotonic()
        if now >= end:
            break
        total += n
        if now >= warm:
            window += n
    out["bytes_delivered"] = window
    out["bytes_total"] = total
    conn.close()


def tcp_sender(spec: dict[str, Any], clk: Clock, out: dict[str, Any], series: list[Any], warm: float, end: float, every: float) -> None:
    if not clk.sleep_until(clk.at(spec["start_s"])):
        return
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, spec["cc"].encode())
    s.bind((spec["src_ip"], spec["sport"]))
    s.settimeout(5.0)
    try:
        s.connect((spec["dst_ip"], spec["dport"]))
    except OSError as e:
        out["error"] = f"connect: {e}"
        return
    out["kernel_cc"] = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0")[0].decode()
    stop_at = min(end, clk.at(spec["stop_s"]))
    s.setblocking(False)
    payload = b"\0" * (1 << 16)
    first = None
    next_sample = max(time.monotonic(), warm)
    rtts = []
    while True:
        now = time.monotonic()
        if now >= stop_at or clk.stop.is_set():
            break
        if first is None and now >= warm:
            first = tcp_info(s)
        if now >= next_sample:
            i = tcp_info(s)
            if i["rtt_us"]:
                rtts.append(i["rtt_us"] / 1e3)
            if every:
                series.append([int((now - clk.t0) * 1e9), spec["id"], i["cwnd"] * i["mss"], i["ssthresh"] * i["mss"] if i["ssthresh"] < 0x7FFFFFFF else 2**64 - 1, i["rtt_us"] / 1e3, in_flight(i)])
            next_sample = now + (every or 0.1)
        _, w, _ = select.select([], [s], [], min(0.05, max(0.0, min(stop_at, next_sample) - now)))
        if w:
            try:
                s.send(payload)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError as e:
                out["error"] = f"send: {e}"
                break
    last = tcp_info(s)
    first = first or dict.fromkeys(last, 0)

    def d(k: str) -> int:
        return (last[k] or 0) - (first[k] or 0)

    out.update(
        retransmits=d("total_retrans"),
        timeouts=d("total_rto") if last["total_rto"] is not None else None,
        packets_sent=d("data_segs_out"),
        bytes_sent=d("bytes_sent"),
        rtt_ms_mean=sum(rtts) / len(rtts) if rtts else float("nan"),
        cwnd_end_pkts=last["cwnd"],
        mss=last["mss"],
    )
    s.close()


def udp_sender(spec: dict[str, Any], clk: Clock, out: dict[str, Any], warm: float, end: float) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((spec["src_ip"], spec["sport"]))
    dst = (spec["dst_ip"], spec["dport"])
    size = spec["size"]
    pad = b"\0" * max(0, size - 28 - PROBE.size)
    gap = size * 8 / spec["rate_bps"]
    rng = random.Random(spec["seed"])
    t = clk.at(spec["start_s"])
    stop_at = min(end, clk.at(spec["stop_s"]))
    seq = sent = sent_bytes = 0
    while t < stop_at:
        if not clk.sleep_until(t):
            break
        stamp = time.time_ns()
        try:
            s.sendto(PROBE.pack(seq, stamp) + pad, dst)
        except OSError:
            pass
        if time.monotonic() >= warm:
            sent += 1
            sent_bytes += size
        seq += 1
        t += rng.expovariate(1 / gap) if spec["poisson"] else gap
    out.update(packets_sent=sent, bytes_sent=sent_bytes)
    s.close()


def udp_receiver(spec: dict[str, Any], sock: socket.socket, clk: Clock, out: dict[str, Any], warm_rt_ns: int, end: float) -> None:
    sock.settimeout(0.1)
    owd = []
    got = got_bytes = 0
    while not clk.stop.is_set() and time.monotonic() < end:
        try:
            data, anc, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(16))
        except TimeoutError:
            continue
        rx = None
        for level, typ, val in anc:
            if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                sec, ns = struct.unpack("qq", val[:16])
                rx = sec * 10**9 + ns
        if len(data) < PROBE.size:
            continue
        _, sent = PROBE.unpack_from(data)
        if sent < warm_rt_ns:
            continue
        rx = rx or time.time_ns()
        got += 1
        got_bytes += len(data) + 28
        owd.append((rx - sent) / 1e6)
    out.update(packets_delivered=got, bytes_delivered=got_bytes, owd_ms=owd)


def ordinary_priority() -> None:
    """Run as an ordinary process (SCHED_OTHER): the hosts are the real Linux stack
    under normal scheduling, and a caller started under a real-time policy (``chrt -f``)
    must not pass it on to the traffic, whose threads would then preempt the emulator."""
    if os.sched_getscheduler(0) != os.SCHED_OTHER:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def main() -> None:
    ordinary_priority()
    spec = json.load(open(sys.argv[1]))
    clk = Clock()
    results: dict[str, dict[str, Any]] = {str(f["id"]): {} for f in spec["receivers"] + spec["senders"]}
    series: list[Any] = []
    listeners: dict[Any, socket.socket] = {}
    for r in spec["receivers"]:
        if r["proto"] == "tcp":
            l = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            l.bind((r["ip"], r["port"]))
            l.listen(4)
        else:
            l = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            l.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            l.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            l.bind((r["ip"], r["port"]))
        listeners[r["id"]] = l
    print("ready", flush=True)
    while True:
        line = sys.stdin.readline()
        if not line or "q" in line:
            return
        if "g" in line:
            break
    clk.t0 = time.monotonic()
    t0_rt = time.time_ns()
    warm = clk.at(spec["warmup_s"])
    end = clk.at(spec["duration_s"])
    grace_end = end + spec.get("grace_s", 0.3)
    warm_rt_ns = t0_rt + int(spec["warmup_s"] * 1e9)
    threads = []
    for r in spec["receivers"]:
        out = results[str(r["id"])]
        if r["proto"] == "tcp":
            th = threading.Thread(target=tcp_receiver, args=(r, listeners[r["id"]], clk, out, warm, end))
        else:
            th = threading.Thread(target=udp_receiver, args=(r, listeners[r["id"]], clk, out, warm_rt_ns, grace_end))
        threads.append(th)
    every = spec.get("tcp_timeseries_s") or 0
    for f in spec["senders"]:
        out = results[str(f["id"])]
        if f["proto"] == "tcp":
            th = threading.Thread(target=tcp_sender, args=(f, clk, out, series, warm, end, every))
        else:
            th = threading.Thread(target=udp_sender, args=(f, clk, out, warm, end))
        threads.append(th)
    for th in threads:
        th.daemon = True
        th.start()

    def watch_stdin() -> None:
        line = sys.stdin.readline()
        if not line or "q" in line:
            clk.stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    for th in threads:
        th.join(timeout=max(0.1, grace_end + 2 - time.monotonic()))
    clk.stop.set()
    print(json.dumps({"results": results, "tcp_series": series}, allow_nan=True), flush=True)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        pass
