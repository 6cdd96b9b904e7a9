"""pcap output is readable by tshark, with consistent headers."""

import subprocess

import aqmlab
from conftest import SMALL, need_tool


def test_pcap_is_written_and_read_by_tshark(tmp_path):
    tshark = need_tool("tshark")
    scen = {**SMALL, "duration": "1s", "output": {"pcap": ["L->R"]}}
    res = aqmlab.run(scen, out=tmp_path)
    [path] = res.pcap_files
    sent = int(res.queues.filter(res.queues["link"] == "L->R")["dequeued"][0])
    p = subprocess.run(
        [tshark, "-r", path, "-T", "fields", "-e", "frame.len", "-e", "ip.len", "-e", "ip.src", "-e", "ip.dst", "-e", "udp.dstport", "-e", "ip.checksum.status", "-o", "ip.check_checksum:TRUE"],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stderr
    rows = [line.split("\t") for line in p.stdout.strip().splitlines()]
    assert len(rows) == sent > 100
    for frame_len, ip_len, src, dst, dport, ck in rows:
        assert int(frame_len) == int(ip_len) + 14
        assert src.startswith("10.") and dst.startswith("10.")
        assert dport == "5001"
        assert ck == "1"  # tshark checksum status: 0 bad, 1 good, 2 unverified
    sizes = {int(r[1]) for r in rows}
    assert sizes == {800}
