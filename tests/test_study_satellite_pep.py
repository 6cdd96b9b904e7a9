"""The satellite-pep study (Byun's dissertation, 2007): its experiments cover its settings, and quick
runs reproduce directions of effect the model gives by construction:

- RED at the receive queue, averaging the transmit queue, holds that queue between its
  thresholds, and a steeper curve (RED 4, max_p 0.7) holds it lower than RED 3 (0.5) at
  the same w_q: the drop rate the load needs is reached at a smaller average;
- buffer flow control: a harsher decrease (decr 0.5) keeps the transmit queue far
  shorter than no flow control and loses nothing there, while CE marks (not drops) are
  the receive queue's signal; and, as in Byun's Table 6.1, it costs output-link
  utilisation and steadiness (the shrunk buffer limit caps what a user holds at the
  PEP, eq. 2.1);
- AVQ admits C at the receive queue and holds the transmit queue short when the PEP
  forwards what it admits at once (the study's PEP, handshake spoofed and no slow start
  on the satellite leg), not when the PEP's satellite legs hold the start-up back.
"""

import importlib.util
import subprocess

import aqmlab
from aqmlab import study
from aqmlab.sweep import read_sweep_file
from conftest import AQMLAB, ROOT

QDISC = "topology.links.60.qdisc"
STUDY = ROOT / "studies" / "satellite-pep"


def figures_module():
    spec = importlib.util.spec_from_file_location("satellite_pep_figures", STUDY / "figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_experiments_cover_the_studys_settings():
    exps = study.experiments(study.study_dir("satellite-pep"))
    assert list(exps) == ["fairness", "flowcontrol", "main", "pattern"]
    main = read_sweep_file(exps["main"])
    reds = [(q["wq"], q["probability"]) for q in main.zip[0][QDISC] if q["kind"] == "red"]
    assert reds == [(0.02, 0.5), (0.05, 0.7), (0.1, 0.5), (0.1, 0.7)]
    assert all(q["monitor"] == "tx" for q in main.zip[0][QDISC])
    kinds = [q["kind"] for q in main.zip[0][QDISC]]
    assert kinds[4:] == ["sred", "sred", "avq", "avqred", "pfavqred"]
    assert [q.get("lookups", 1) for q in main.zip[0][QDISC][4:6]] == [1, 50]
    avq = main.zip[0][QDISC][6]
    assert avq["gamma"] == 1.0 and avq["limit"] == "123750B"
    assert main.seeds == 5 and main.quick["seeds"] == 2
    fc = read_sweep_file(exps["flowcontrol"])
    assert fc.zip[0]["topology.nodes.61.function.decr"][1:11] == [0.97, 0.95, 0.9, 0.8, 0.5] * 2
    assert [q["kind"] for q in fc.zip[0][QDISC]] == ["red"] * 6 + ["avqred"] * 5 + ["red", "avqred"]
    assert all(q["action"] == "mark" for q in fc.zip[0][QDISC][:11])
    # The packet-drop baselines of Tables 6.1-6.3: RED 4 and AVQRED dropping, no flow control.
    assert fc.zip[0]["description"][11:] == ["RED4-drop", "AVQRED-drop"]
    assert all("action" not in q for q in fc.zip[0][QDISC][11:])
    assert fc.zip[0]["topology.nodes.61.function.flow_control"][11:] == [False, False]
    assert fc.zip[0][QDISC][11] == main.zip[0][QDISC][3] and fc.zip[0][QDISC][12] == main.zip[0][QDISC][7]
    fair = read_sweep_file(exps["fairness"])
    assert fair.zip[0]["description"] == main.zip[0]["description"]
    assert fc.set["duration"] == "15min"
    for f in ("scenario.toml", "fairness.toml"):
        aqmlab.validate(STUDY / f)
    fair = aqmlab.load_scenario(STUDY / "fairness.toml")
    rates = sorted(t["rate"] for t in fair["traffic"] if t["kind"] == "udp-cbr")
    assert rates == ["160kbit", "320kbit", "80kbit"]
    assert sum(t.get("users", 0) * (200 if t["name"] == "web" else 100) for t in fair["traffic"]) == 500


def test_red_holds_the_transmit_queue_between_its_thresholds_lower_with_a_steeper_curve():
    quick = read_sweep_file(study.experiments(study.study_dir("satellite-pep"))["main"]).quick["set"]
    red = {"kind": "red", "min": "60pkt", "max": "120pkt", "wq": 0.1, "mean_pkt_size": "1400B",
           "limit": "1000pkt", "monitor": "tx"}
    q = {}
    for max_p in (0.5, 0.7):
        r = aqmlab.run(STUDY / "scenario.toml", seed=1, set={**quick, QDISC: {**red, "probability": max_p}})
        tx = r.queues.filter(link="tx")
        q[max_p] = tx["qlen_pkts_mean"][0]
        assert tx["utilization"][0] > 0.99 and tx["drops"][0] == 0, (max_p, tx)
        assert 60 < q[max_p] < 120, q
    assert q[0.7] < q[0.5], q


def test_quick_flowcontrol_a_harsh_decrease_keeps_the_transmit_queue_short(tmp_path):
    out = tmp_path / "study"
    p = subprocess.run([*AQMLAB, "study", "run", "satellite-pep", "--quick", "-e", "flowcontrol", "--out", out,
                        "--quiet", "--no-report"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    t = {r["point"]: r for r in figures_module().table(out / "flowcontrol", ["off", "0.97", "0.50"]).to_dicts()}
    assert t["0.50"]["txq_mean"] < 0.5 * t["off"]["txq_mean"], t
    assert t["0.50"]["txq_mean"] < t["0.97"]["txq_mean"], t
    assert t["0.50"]["tx_drops"] < t["off"]["tx_drops"], t
    assert t["0.50"]["tx_util"] < t["0.97"]["tx_util"] and t["0.50"]["tx_util_std"] > t["0.97"]["tx_util_std"], t
    assert t["off"]["rx_marks"] > 10 * t["off"]["rx_drops"], t["off"]
    # With flow control the drops are packets that cannot carry CE (RFC 3168 §6.1.1,
    # §6.1.5-6: SYNs, retransmissions, zero-window probes, which a shrunk limit makes
    # common); data marks still outnumber them.
    assert t["0.50"]["rx_marks"] > 2 * t["0.50"]["rx_drops"], t["0.50"]


def test_avq_holds_a_short_transmit_queue_only_when_the_pep_forwards_at_once():
    """AVQ counts only admitted packets in its capacity update (ns-2 vq.cc; the paper's own
    AVQ row, 19.5 Mbit/s out with ~19 % of the arrivals dropped, needs an offered rate above
    γC, which an update counting dropped packets forbids): the receive queue admits γC = C.
    The transmit queue then stays within about the virtual buffer (123 750 B, ~82 packets)
    as long as the PEP passes on what the AQM admits when it admits it (Lindley: a queue fed
    the same packets as a virtual queue drained no faster is no longer than it). The study's
    PEP does (the handshake spoofed, no slow start on the satellite leg, as the HughesNet
    PEP); a PEP whose satellite legs first shake hands over the GEO round trip and then
    slow-start from 10 segments holds back what the AQM admitted at start-up and releases
    it later, and at γ = 1 that backlog never drains."""
    exps = study.experiments(study.study_dir("satellite-pep"))
    main = read_sweep_file(exps["main"])
    avq = main.zip[0][QDISC][6]
    assert avq["update"] == "ns2" and avq["gamma"] == 1.0 and avq["ecnlim"] == 1.0
    pep = aqmlab.load_scenario(STUDY / "scenario.toml")["topology"]["nodes"][61]["function"]
    assert pep["spoof_handshake"] is True and pep["tcp"]["iw"] == 432
    tcp_pep = {"topology.nodes.61.function.spoof_handshake": False, "topology.nodes.61.function.tcp": {}}
    c = 20e6
    for name, extra in (("study", {}), ("tcp-pep", tcp_pep)):
        r = aqmlab.run(STUDY / "scenario.toml", seed=1, set={**main.quick["set"], QDISC: avq, **extra})
        tx = r.queues.filter(link="tx")
        rx = r.queues.filter(link="rx")
        assert abs(rx["throughput_bps"][0] - c) < 0.01 * c, (name, rx)
        assert tx["utilization"][0] > 0.99, (name, tx)
        if name == "study":
            assert tx["qlen_pkts_mean"][0] < 82 and tx["drops"][0] == 0, tx
        else:
            assert tx["qlen_pkts_mean"][0] > 500, tx
