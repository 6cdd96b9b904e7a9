// -*- c-basic-offset: 4; indent-tabs-mode: nil -*-
// The dumbbell of aqmlab issue 34 (benches/scenarios/htsim-dumbbell.toml) as an htsim
// driver, in the style of htsim's own sim/tests/main_dumbell_tcp.cpp. Built and run by
// benches/htsim/compare.sh against a user-supplied htsim checkout (Broadcom/csg-htsim).
//
// Per flow i (N flows, default 100), one host pair, three hops each way as aqmlab's
// dumbbell builds them (host -> left router -> right router -> host):
//   data: Queue(1 Gbit/s) Pipe(5 ms) | Queue(100 Mbit/s, 1000 pkt, shared) Pipe(15 ms)
//         | Queue(1 Gbit/s) Pipe(5 ms) | TcpSink
//   ACKs: Queue(1 Gbit/s) Pipe(5 ms) | Queue(100 Mbit/s, 1000 pkt, shared) Pipe(15 ms)
//         | Queue(1 Gbit/s) Pipe(5 ms) | TcpSrc
// Base RTT 2 x (5 + 15 + 5) ms = 50 ms. Packets are 1500 B (htsim's default data size,
// network.cpp DEFAULTDATASIZE), ACKs 40 B (tcppacket.h ACKSIZE). htsim's Queue is a
// drop-tail FIFO limited in bytes (queue.cpp Queue::receivePacket): 1000 x 1500 B. The
// access queues get the same 1000-packet limit (aqmlab's default pfifo).
// TCP: htsim's TcpSrc/TcpSink (tcp.cpp) unchanged: one-packet SYN round, IW 10
// (_cwnd = 10*_mss), initial ssthresh 100 packets, NewReno-style fast recovery after
// 3 dupACKs, no SACK, an ACK per segment, RTO = SRTT + 4 mdev >= 250 ms checked by a
// TcpRtxTimerScanner every 10 ms (as main_dumbell_tcp.cpp). Flow i starts at
// U[0, 1 ms) (main_dumbell_tcp.cpp: drand()*timeFromMs(1)); backlogged (no flow size).
//
// Counts: every EventList::doNextEvent() call that did something is one event. Data
// packets created = TcpSrc::_packets_sent / mss + 1 SYN per flow; ACKs created = packets
// received by the sinks (TcpSink sends one ACK per arrival). Delivered = packets that
// reached their sink or source.
//
// Usage: htsim_aqmlab_dumbbell [-conns N] [-duration SECONDS] [-seed S]
// Prints "key = value" lines (after htsim's own RTO messages).
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "clock.h"
#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "tcp.h"

static uint64_t g_data_received = 0; // data packets (and SYNs) reaching a sink
static uint64_t g_acks_received = 0; // ACKs reaching a source

// htsim's TcpSink, counting arrivals (each one makes exactly one ACK).
class CountingSink : public TcpSink {
public:
    void receivePacket(Packet& pkt) override {
        g_data_received++;
        TcpSink::receivePacket(pkt);
    }
};

// htsim's TcpSrc, counting the ACKs it receives.
class CountingSrc : public TcpSrc {
public:
    CountingSrc(EventList& ev) : TcpSrc(NULL, NULL, ev) {}
    void receivePacket(Packet& pkt) override {
        g_acks_received++;
        TcpSrc::receivePacket(pkt);
    }
};

int main(int argc, char** argv) {
    int conns = 100;
    double duration_s = 60.0;
    unsigned seed = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-conns")) conns = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-duration")) duration_s = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "-seed")) seed = atoi(argv[i + 1]);
        else { std::cerr << "unknown option " << argv[i] << std::endl; return 2; }
    }
    srand(seed);

    EventList eventlist;
    eventlist.setEndtime(timeFromSec(duration_s));

    const linkspeed_bps bottleneck_rate = speedFromMbps((uint64_t)100);
    const linkspeed_bps access_rate = speedFromMbps((uint64_t)1000);
    const simtime_picosec bottleneck_delay = timeFromMs(15);
    const simtime_picosec access_delay = timeFromMs(5);
    const mem_b buffer = memFromPkt(1000);

    Queue fwd_q(bottleneck_rate, buffer, eventlist, NULL);
    Pipe fwd_p(bottleneck_delay, eventlist);
    Queue rev_q(bottleneck_rate, buffer, eventlist, NULL);
    Pipe rev_p(bottleneck_delay, eventlist);

    TcpRtxTimerScanner rtx_scanner(timeFromMs(10), eventlist);
    std::vector<CountingSrc*> srcs;
    std::vector<CountingSink*> sinks;

    // One direction of a connection: its own access queue and pipe, the shared
    // bottleneck queue and pipe, the far side's own access queue and pipe, the endpoint.
    auto dumbbell_route = [&](Queue& bottleneck_q, Pipe& bottleneck_p, PacketSink* end) {
        route_t* r = new route_t();
        r->push_back(new Queue(access_rate, buffer, eventlist, NULL));
        r->push_back(new Pipe(access_delay, eventlist));
        r->push_back(&bottleneck_q);
        r->push_back(&bottleneck_p);
        r->push_back(new Queue(access_rate, buffer, eventlist, NULL));
        r->push_back(new Pipe(access_delay, eventlist));
        r->push_back(end);
        return r;
    };
    for (int i = 0; i < conns; i++) {
        CountingSrc* src = new CountingSrc(eventlist);
        CountingSink* sink = new CountingSink();
        rtx_scanner.registerTcp(*src);

        route_t* out = dumbbell_route(fwd_q, fwd_p, sink);  // host_l -> L -> R -> host_r
        route_t* back = dumbbell_route(rev_q, rev_p, src);  // host_r -> R -> L -> host_l

        src->connect(*out, *back, *sink, drand() * timeFromMs(1));
        srcs.push_back(src);
        sinks.push_back(sink);
    }

    uint64_t events = 0;
    while (eventlist.doNextEvent()) events++;

    uint64_t data_sent = 0, in_order_bytes = 0, fast_recoveries = 0;
    for (int i = 0; i < conns; i++) {
        data_sent += srcs[i]->_packets_sent / srcs[i]->_mss + 1; // + the SYN
        fast_recoveries += srcs[i]->_drops;                     // counted per fast retransmit
        // _cumulative_ack is the last in-order byte; byte 1 is the SYN.
        if (sinks[i]->_cumulative_ack > 1) in_order_bytes += sinks[i]->_cumulative_ack - 1;
    }
    const uint64_t acks_sent = g_data_received;
    std::cout << "events = " << events << "\n"
              << "data_packets = " << data_sent << "\n"
              << "ack_packets = " << acks_sent << "\n"
              << "packets = " << data_sent + acks_sent << "\n"
              << "delivered = " << g_data_received + g_acks_received << "\n"
              << "bottleneck_drops = " << fwd_q.num_drops() << "\n"
              << "fast_recoveries = " << fast_recoveries << "\n"
              << "in_order_mbit_s = " << in_order_bytes * 8.0 / duration_s / 1e6 << "\n";
    return 0;
}
