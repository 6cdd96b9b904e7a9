"""The ns-3.44 side of the cross-validation: one dumbbell run, results as JSON on stdout.

Run with the Python of the ns-3 environment (see README.md), not the project's:

    benches/crossval/.venv-ns3/bin/python benches/crossval/ns3_dumbbell.py \
        --cc NewReno --flows 4 --rate 2Mbps --qdisc pfifo --limit 100 --duration 120 --warmup 20

The simulation is C++ (compiled at run time through the bindings' cppyy), so that the
trace callbacks run without Python in the loop. Topology: n senders, 100 Mbit/s 5 ms
access links, a `rate` 20 ms bottleneck with the queue discipline on the left router's
bottleneck device (device queue 1 packet, so the queue discipline holds the queue),
n receivers; bulk senders (TcpSocketBase defaults of ns-3.44: SACK on, timestamps on,
1 s minimum RTO, 200 ms delayed ACK, PRR), MSS 1448 B, IW 10.
"""

import argparse
import json

from ns import ns

CPP = r"""
#include <algorithm>
#include <map>
#include <vector>

namespace ns3 {

struct CvState {
    std::vector<double> sojourn_ms;
    uint64_t retransmits = 0;
    uint64_t rtos = 0;
    std::map<const TcpSocketBase*, SequenceNumber32> high_tx;
    bool measuring = false;
};
static CvState g_cv;

static void CvSojourn(Time t) {
    if (g_cv.measuring) g_cv.sojourn_ms.push_back(t.GetSeconds() * 1e3);
}

static void CvTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s) {
    if (p->GetSize() == 0) return;
    auto it = g_cv.high_tx.find(PeekPointer(s));
    SequenceNumber32 end = h.GetSequenceNumber() + p->GetSize();
    if (it == g_cv.high_tx.end()) {
        g_cv.high_tx[PeekPointer(s)] = end;
    } else if (h.GetSequenceNumber() < it->second) {
        if (g_cv.measuring) g_cv.retransmits++;
    } else {
        it->second = end;
    }
}

static void CvCongState(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to) {
    if (to == TcpSocketState::CA_LOSS && from != TcpSocketState::CA_LOSS && g_cv.measuring)
        g_cv.rtos++;
}

static void CvConnect() {
    Config::ConnectWithoutContextFailSafe(
        "/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/Tx", MakeCallback(&CvTx));
    Config::ConnectWithoutContextFailSafe(
        "/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState", MakeCallback(&CvCongState));
}

struct CvResult {
    std::vector<double> goodput_bps;
    double utilization, sojourn_mean_ms, sojourn_p95_ms;
    double drops, arrivals, retransmits, rtos;
};

static std::vector<uint64_t> g_rx0;
static uint64_t g_sent0;

CvResult CvRun(std::string cc, uint32_t n, std::string rate, std::string qdisc, uint32_t limit,
               double duration, double warmup) {
    g_cv = CvState();
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::Tcp" + cc));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(16000000));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(16000000));

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    access.SetChannelAttribute("Delay", StringValue("5ms"));
    PointToPointHelper neck;
    neck.SetDeviceAttribute("DataRate", StringValue(rate));
    neck.SetChannelAttribute("Delay", StringValue("20ms"));
    neck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    PointToPointDumbbellHelper d(n, access, n, access, neck);
    InternetStackHelper stack;
    d.InstallStack(stack);

    TrafficControlHelper tch;
    std::string lim = std::to_string(limit) + "p";
    if (qdisc == "pfifo") tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(lim));
    else if (qdisc == "codel") tch.SetRootQueueDisc("ns3::CoDelQueueDisc", "MaxSize", StringValue(lim));
    else if (qdisc == "pie") tch.SetRootQueueDisc("ns3::PieQueueDisc", "MaxSize", StringValue(lim));
    else tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", StringValue(lim));
    // Before the addresses: assigning them installs a default queue disc only where
    // none is installed yet.
    Ptr<NetDevice> neckDev = d.GetLeft()->GetDevice(0);
    QueueDiscContainer qds = tch.Install(neckDev);
    Ptr<QueueDisc> q = qds.Get(0);
    q->TraceConnectWithoutContext("SojournTime", MakeCallback(&CvSojourn));

    d.AssignIpv4Addresses(Ipv4AddressHelper("10.1.1.0", "255.255.255.0"),
                          Ipv4AddressHelper("10.2.1.0", "255.255.255.0"),
                          Ipv4AddressHelper("10.3.1.0", "255.255.255.0"));
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < n; i++) {
        uint16_t port = 5001 + i;
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sink.Install(d.GetRight(i));
        sa.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sa.Get(0)));
        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(d.GetRightIpv4Address(i), port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer ca = src.Install(d.GetLeft(i));
        ca.Start(Seconds(0.001 * i));
    }
    Simulator::Schedule(Seconds(0.5), &CvConnect);
    g_rx0.assign(n, 0);
    Simulator::Schedule(Seconds(warmup), [sinks, q]() {
        g_cv.measuring = true;
        for (size_t i = 0; i < sinks.size(); i++) g_rx0[i] = sinks[i]->GetTotalRx();
        g_sent0 = q->GetStats().nTotalSentBytes;
    });
    QueueDisc::Stats before;
    Simulator::Schedule(Seconds(warmup), [q, &before]() { before = q->GetStats(); });
    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    CvResult r;
    double span = duration - warmup;
    for (size_t i = 0; i < sinks.size(); i++)
        r.goodput_bps.push_back((sinks[i]->GetTotalRx() - g_rx0[i]) * 8.0 / span);
    QueueDisc::Stats after = q->GetStats();
    double bps = DataRate(rate).GetBitRate();
    r.utilization = (after.nTotalSentBytes - g_sent0) * 8.0 / (bps * span);
    r.drops = after.nTotalDroppedPackets - before.nTotalDroppedPackets;
    r.arrivals = after.nTotalReceivedPackets - before.nTotalReceivedPackets;
    auto& s = g_cv.sojourn_ms;
    r.sojourn_mean_ms = s.empty() ? 0 : std::accumulate(s.begin(), s.end(), 0.0) / s.size();
    if (!s.empty()) {
        std::sort(s.begin(), s.end());
        r.sojourn_p95_ms = s[std::min(s.size() - 1, (size_t)(0.95 * s.size()))];
    } else r.sojourn_p95_ms = 0;
    r.retransmits = g_cv.retransmits;
    r.rtos = g_cv.rtos;
    Simulator::Destroy();
    return r;
}

}  // namespace ns3
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", default="NewReno")
    ap.add_argument("--flows", type=int, default=4)
    ap.add_argument("--rate", default="2Mbps")
    ap.add_argument("--qdisc", default="pfifo")
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--duration", type=float, default=120.0)
    ap.add_argument("--warmup", type=float, default=20.0)
    a = ap.parse_args()
    ns.cppyy.cppdef("#include <numeric>\n" + CPP)
    r = ns.CvRun(a.cc, a.flows, a.rate, a.qdisc, a.limit, a.duration, a.warmup)
    print(json.dumps({
        "goodput_bps": list(r.goodput_bps),
        "utilization": r.utilization,
        "sojourn_ms_mean": r.sojourn_mean_ms,
        "sojourn_ms_p95": r.sojourn_p95_ms,
        "drops": r.drops,
        "arrivals": r.arrivals,
        "retransmits": r.retransmits,
        "timeouts": r.rtos,
    }))


if __name__ == "__main__":
    main()
