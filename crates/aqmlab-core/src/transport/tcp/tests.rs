//! Packet-level tests of the connection: segments fed at given times, exact replies
//! asserted (the smoltcp `send!`/`recv!` style).

use super::cc::CcKind;
use super::receiver::TcpReceiver;
use super::sender::{ts, TcpSender};
use super::{Segment, TcpConfig};
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::{tcp_flags as F, Ecn};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

const MS: Nanos = NS_PER_MS;
const MSS: u64 = 1000;

fn cfg() -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        iw: 4,
        sack: false,
        ..TcpConfig::default()
    }
}

/// An ACK from the receiver.
fn ack(n: u64, ts_ecr: Nanos) -> Segment {
    let mut s = Segment::default();
    s.tcp.flags = F::ACK;
    s.tcp.ack = n;
    s.tcp.window = 1 << 30;
    s.tcp.ts_ecr = ts_ecr;
    s
}

fn sack(n: u64, blocks: &[(u64, u64)], ts_ecr: Nanos) -> Segment {
    let mut s = ack(n, ts_ecr);
    for (i, b) in blocks.iter().enumerate() {
        s.tcp.sack[i] = *b;
    }
    s.tcp.sack_len = blocks.len() as u8;
    s
}

fn data(seq: u64, len: u32, at: Nanos) -> Segment {
    let mut s = Segment::default();
    s.tcp.flags = F::ACK;
    s.tcp.seq = seq;
    s.tcp.payload = len;
    s.tcp.ts_val = ts(at);
    s
}

fn seqs(out: &[Segment]) -> Vec<u64> {
    out.iter().map(|s| s.tcp.seq).collect()
}

/// An established bulk sender at t = 100 ms (RTT 100 ms) that has sent its IW.
fn established(c: TcpConfig) -> (TcpSender, FlowStats, Vec<Segment>) {
    let mut s = TcpSender::new(c);
    let mut st = FlowStats::default();
    let mut out = Vec::new();
    s.write(0, u64::MAX, false, &mut out, &mut st);
    s.open(0, &mut out);
    assert_eq!(out.len(), 1);
    assert!(out[0].has(F::SYN));
    let mut synack = ack(0, out[0].tcp.ts_val);
    synack.tcp.flags = F::SYN | F::ACK;
    out.clear();
    s.on_segment(100 * MS, &synack, &mut out, &mut st);
    (s, st, out)
}

#[test]
fn handshake_then_initial_window_of_mss_segments() {
    let (s, st, out) = established(cfg());
    assert_eq!(seqs(&out), vec![0, 1000, 2000, 3000]);
    assert!(out
        .iter()
        .all(|x| x.tcp.payload == 1000 && x.wire_size() == 1040));
    assert_eq!(st.rtt.count(), 1);
    assert_eq!(s.rtt.srtt, 100 * MS);
    // RTO = SRTT + 4·RTTVAR = 100 + 200 ms.
    assert_eq!(s.next_deadline(), Some(400 * MS));
}

#[test]
fn syn_is_retried_at_the_initial_rto_then_doubled() {
    for (initial, expect) in [
        (NS_PER_S, vec![1, 3, 7, 15, 31]),
        (3 * NS_PER_S, vec![3, 9, 21, 45, 93]),
    ] {
        let mut s = TcpSender::new(TcpConfig {
            initial_rto: initial,
            ..cfg()
        });
        let (mut st, mut out) = (FlowStats::default(), Vec::new());
        s.open(0, &mut out);
        let mut times = vec![];
        for _ in 0..5 {
            let t = s.next_deadline().unwrap();
            out.clear();
            s.on_timer(t, &mut out, &mut st);
            assert!(out.len() == 1 && out[0].has(F::SYN));
            times.push(t / NS_PER_S);
        }
        assert_eq!(times, expect);
        assert_eq!(st.timeouts, 5);
    }
}

#[test]
fn syn_backoff_stops_at_max_rto() {
    let mut s = TcpSender::new(TcpConfig {
        max_rto: 60 * NS_PER_S,
        ..cfg()
    });
    let (mut st, mut out) = (FlowStats::default(), Vec::new());
    s.open(0, &mut out);
    let mut prev = 0;
    let mut gaps = vec![];
    for _ in 0..9 {
        let t = s.next_deadline().unwrap();
        gaps.push((t - prev) / NS_PER_S);
        prev = t;
        s.on_timer(t, &mut out, &mut st);
    }
    assert_eq!(gaps, vec![1, 2, 4, 8, 16, 32, 60, 60, 60]);
}

#[test]
fn receiver_delays_every_other_ack_and_acks_gaps_at_once() {
    let mut r = TcpReceiver::new(cfg(), false);
    let (mut st, mut out) = (FlowStats::default(), Vec::new());
    let mut syn = Segment::default();
    syn.tcp.flags = F::SYN;
    syn.tcp.ts_val = ts(0);
    r.on_segment(10 * MS, &syn, &mut out, &mut st);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].tcp.flags, F::SYN | F::ACK);
    assert_eq!(out[0].tcp.ts_ecr, ts(0));
    out.clear();
    // First full segment: delayed (40 ms timer).
    r.on_segment(20 * MS, &data(0, 1000, 15 * MS), &mut out, &mut st);
    assert!(out.is_empty());
    assert_eq!(r.next_deadline(), Some(60 * MS));
    // Second: ACK now, echoing the first segment's timestamp (RFC 7323).
    r.on_segment(21 * MS, &data(1000, 1000, 16 * MS), &mut out, &mut st);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].tcp.ack, out[0].tcp.ts_ecr), (2000, ts(15 * MS)));
    assert_eq!(r.next_deadline(), None);
    out.clear();
    // A lone segment is ACKed when the timer fires.
    r.on_segment(30 * MS, &data(2000, 1000, 25 * MS), &mut out, &mut st);
    assert!(out.is_empty());
    r.on_timer(70 * MS, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].tcp.ack, 3000);
    out.clear();
    // Out of order (3000 lost): immediate duplicate ACK.
    r.on_segment(80 * MS, &data(4000, 1000, 75 * MS), &mut out, &mut st);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].tcp.ack, 3000);
    out.clear();
    // Gap filled: immediate ACK for everything.
    r.on_segment(90 * MS, &data(3000, 1000, 85 * MS), &mut out, &mut st);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].tcp.ack, 5000);
    assert_eq!(out[0].tcp.ts_ecr, ts(85 * MS)); // the retransmission's timestamp
    assert_eq!(st.bytes_delivered, 5000);
}

#[test]
fn receiver_reports_sack_blocks_latest_first() {
    let mut r = TcpReceiver::new(
        TcpConfig {
            sack: true,
            ..cfg()
        },
        false,
    );
    let (mut st, mut out) = (FlowStats::default(), Vec::new());
    r.on_segment(0, &data(0, 1000, 0), &mut out, &mut st);
    r.on_segment(1, &data(2000, 1000, 0), &mut out, &mut st);
    r.on_segment(2, &data(4000, 1000, 0), &mut out, &mut st);
    r.on_segment(3, &data(3000, 1000, 0), &mut out, &mut st);
    let last = out.last().unwrap().tcp;
    assert_eq!(last.ack, 1000);
    assert_eq!(&last.sack[..last.sack_len as usize], &[(2000, 5000)]);
    r.on_segment(4, &data(6000, 1000, 0), &mut out, &mut st);
    let last = out.last().unwrap().tcp;
    assert_eq!(
        &last.sack[..last.sack_len as usize],
        &[(6000, 7000), (2000, 5000)]
    );
    // The window shrinks by the out-of-order bytes held.
    assert_eq!(r.window(), r.cfg.rwnd - 4000);
}

#[test]
fn newreno_fast_retransmit_and_partial_ack() {
    let (mut s, mut st, mut out) = established(TcpConfig { iw: 10, ..cfg() });
    assert_eq!(out.len(), 10);
    let t = out[0].tcp.ts_val;
    out.clear();
    // Segments 0 and 3000 are lost; the receiver sends dupACKs for 1000, 2000, 4000..
    s.on_segment(200 * MS, &ack(0, t), &mut out, &mut st); // not a dupACK: nothing new
    for k in 1..3 {
        s.on_segment(200 * MS + k, &ack(0, t), &mut out, &mut st);
    }
    // Third duplicate: fast retransmit of 0, ssthresh = 10000/2, cwnd = 5000 + 3000.
    assert_eq!(seqs(&out), vec![0]);
    assert_eq!(st.retransmits, 1);
    assert_eq!((s.w.ssthresh, s.w.cwnd), (5000, 8000));
    assert!(s.in_recovery);
    out.clear();
    // More dupACKs inflate cwnd by one MSS each; new data goes out once cwnd > pipe.
    for k in 0..5 {
        s.on_segment(201 * MS + k, &ack(0, t), &mut out, &mut st);
    }
    assert_eq!(s.w.cwnd, 13_000);
    assert_eq!(seqs(&out), vec![10_000, 11_000, 12_000]);
    out.clear();
    // Partial ACK up to the second hole (3000): retransmit it, deflate by 3000 − 1 MSS.
    s.on_segment(300 * MS, &ack(3000, t), &mut out, &mut st);
    assert_eq!(seqs(&out)[0], 3000);
    assert_eq!(st.retransmits, 2);
    assert_eq!(s.w.cwnd, 13_000 - 3000 + 1000);
    assert!(s.in_recovery);
    out.clear();
    // Full ACK past recover (10000): leave recovery, cwnd = min(ssthresh, pipe + MSS).
    s.on_segment(400 * MS, &ack(13_000, t), &mut out, &mut st);
    assert!(!s.in_recovery);
    assert!(s.w.cwnd <= 5000, "{}", s.w.cwnd);
}

#[test]
fn reno_leaves_recovery_on_the_first_partial_ack() {
    let (mut s, mut st, mut out) = established(TcpConfig {
        iw: 10,
        cc: CcKind::Reno,
        ..cfg()
    });
    let t = out[0].tcp.ts_val;
    out.clear();
    for k in 0..4 {
        s.on_segment(200 * MS + k, &ack(0, t), &mut out, &mut st);
    }
    assert!(s.in_recovery);
    s.on_segment(300 * MS, &ack(3000, t), &mut out, &mut st);
    assert!(!s.in_recovery);
    assert_eq!(s.w.cwnd, 5000);
    assert_eq!(st.retransmits, 1); // no partial-ACK retransmission
}

#[test]
fn sack_recovery_retransmits_every_hole_the_scoreboard_marks_lost() {
    let (mut s, mut st, mut out) = established(TcpConfig {
        iw: 10,
        sack: true,
        ..cfg()
    });
    let t = out[0].tcp.ts_val;
    out.clear();
    // Segments 0 and 2000 are lost; the others arrive and are SACKed one by one.
    // Each SACK shrinks pipe by one segment, so one new segment goes out (pipe-based
    // sending; RFC 3042 limited transmit does the same).
    s.on_segment(200 * MS, &sack(0, &[(1000, 2000)], t), &mut out, &mut st);
    s.on_segment(
        201 * MS,
        &sack(0, &[(3000, 4000), (1000, 2000)], t),
        &mut out,
        &mut st,
    );
    assert_eq!(seqs(&out), vec![10_000, 11_000]);
    out.clear();
    s.on_segment(
        202 * MS,
        &sack(0, &[(3000, 5000), (1000, 2000)], t),
        &mut out,
        &mut st,
    );
    // Three SACKed segments above 0: IsLost(0). Recovery: ssthresh = cwnd =
    // FlightSize/2 = 12 segments/2; 0 is retransmitted at once.
    assert!(s.in_recovery);
    assert_eq!(seqs(&out), vec![0]);
    assert_eq!((s.w.ssthresh, s.w.cwnd), (6000, 6000));
    // pipe = 12 outstanding − 3 SACKed − 1 lost + 1 retransmitted.
    assert_eq!(s.pipe(), 9000);
    out.clear();
    // 5000: now 2000 has three SACKed segments above it and is lost too; pipe = 7
    // segments ≥ cwnd, so nothing is sent until two more SACKs arrive.
    s.on_segment(
        203 * MS,
        &sack(0, &[(3000, 6000), (1000, 2000)], t),
        &mut out,
        &mut st,
    );
    assert_eq!(s.pipe(), 7000);
    s.on_segment(
        204 * MS,
        &sack(0, &[(3000, 7000), (1000, 2000)], t),
        &mut out,
        &mut st,
    );
    assert!(out.is_empty());
    s.on_segment(
        205 * MS,
        &sack(0, &[(3000, 8000), (1000, 2000)], t),
        &mut out,
        &mut st,
    );
    // The lost segment goes before new data.
    assert_eq!(seqs(&out), vec![2000]);
    assert_eq!(st.retransmits, 2);
    out.clear();
    // The retransmissions arrive: full ACK beyond the recovery point ends recovery.
    s.on_segment(300 * MS, &sack(12_000, &[], t), &mut out, &mut st);
    assert!(!s.in_recovery);
    assert_eq!(s.w.cwnd, 6000);
}

#[test]
fn rto_retransmits_from_snd_una_with_one_segment_and_backs_off() {
    let (mut s, mut st, mut out) = established(cfg());
    out.clear();
    let t1 = s.next_deadline().unwrap();
    s.on_timer(t1, &mut out, &mut st);
    assert_eq!(seqs(&out), vec![0]);
    assert_eq!(s.w.cwnd, MSS);
    assert_eq!(s.w.ssthresh, 2000); // max(4000/2, 2 MSS)
    let t2 = s.next_deadline().unwrap();
    assert_eq!(t2 - t1, 600 * MS); // 300 ms doubled
    out.clear();
    s.on_timer(t2, &mut out, &mut st);
    assert_eq!(seqs(&out), vec![0]);
    assert_eq!(s.w.ssthresh, 2000); // not reduced again for the same segment
    assert_eq!(s.next_deadline().unwrap() - t2, 1200 * MS);
    assert_eq!(st.timeouts, 2);
}

#[test]
fn ecn_reduces_once_per_window_and_sets_cwr() {
    let (mut s, mut st, mut out) = established(TcpConfig {
        iw: 10,
        ecn: true,
        ..cfg()
    });
    assert!(out.iter().all(|x| x.ecn == Ecn::Ect0));
    let t = out[0].tcp.ts_val;
    out.clear();
    let mut e = ack(2000, t);
    e.tcp.flags |= F::ECE;
    s.on_segment(200 * MS, &e, &mut out, &mut st);
    // ssthresh = FlightSize/2 (10 segments were in flight); pipe (8) ≥ cwnd: no sending.
    assert_eq!((s.w.ssthresh, s.w.cwnd), (5000, 5000));
    assert!(out.is_empty());
    // More ECE within the same window: no further reduction, no growth.
    let mut e2 = ack(4000, t);
    e2.tcp.flags |= F::ECE;
    s.on_segment(201 * MS, &e2, &mut out, &mut st);
    assert_eq!((s.w.ssthresh, s.w.cwnd), (5000, 5000));
    assert!(out.is_empty());
    // Room opens: the first new segment carries CWR, the next ones do not.
    s.on_segment(202 * MS, &ack(7000, t), &mut out, &mut st);
    assert_eq!(seqs(&out), vec![10_000, 11_000]);
    assert!(out[0].has(F::CWR) && !out[1].has(F::CWR));
    assert!(out.iter().all(|x| x.ecn == Ecn::Ect0));
    assert_eq!(st.retransmits, 0);
    // ECE for data sent after the reduction is a new congestion event.
    out.clear();
    let mut e3 = ack(10_500, t);
    e3.tcp.ack = 11_000;
    e3.tcp.flags |= F::ECE;
    s.on_segment(300 * MS, &e3, &mut out, &mut st);
    assert!(s.w.ssthresh < 5000, "{}", s.w.ssthresh);
}

#[test]
fn receiver_latches_ece_until_cwr_and_dctcp_echoes_exactly() {
    let c = TcpConfig { ecn: true, ..cfg() };
    let (mut st, mut out) = (FlowStats::default(), Vec::new());
    let mut r = TcpReceiver::new(c, false);
    let mut ce = data(0, 1000, 0);
    ce.ecn = Ecn::Ce;
    r.on_segment(0, &ce, &mut out, &mut st);
    r.on_segment(1, &data(1000, 1000, 0), &mut out, &mut st);
    assert!(out.last().unwrap().has(F::ECE));
    let mut cwr = data(2000, 1000, 0);
    cwr.tcp.flags |= F::CWR;
    r.on_segment(2, &cwr, &mut out, &mut st);
    r.on_segment(3, &data(3000, 1000, 0), &mut out, &mut st);
    assert!(!out.last().unwrap().has(F::ECE));

    // DCTCP: a CE state change first ACKs the pending segment without ECE.
    let mut r = TcpReceiver::new(c, true);
    out.clear();
    r.on_segment(0, &data(0, 1000, 0), &mut out, &mut st);
    assert!(out.is_empty());
    r.on_segment(1, &ce_at(1000), &mut out, &mut st);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].tcp.ack, 1000);
    assert!(!out[0].has(F::ECE));
    r.on_segment(2, &data(2000, 1000, 0), &mut out, &mut st);
    // State change back: ACK 2000 with ECE (for the CE segment), then delay again.
    assert_eq!(out.len(), 2);
    assert_eq!(out[1].tcp.ack, 2000);
    assert!(out[1].has(F::ECE));
}

fn ce_at(seq: u64) -> Segment {
    let mut s = data(seq, 1000, 0);
    s.ecn = Ecn::Ce;
    s
}

#[test]
fn rate_cap_paces_application_writes() {
    // 8 Mbit/s = 1 segment of 1000 B per ms (after the first, available at once).
    let (mut s, mut st, mut out) = established(TcpConfig {
        rate_cap_bps: Some(8_000_000),
        ..cfg()
    });
    // Opened at 0: by 100 ms, 101 segments' worth is available but IW = 4.
    assert_eq!(out.len(), 4);
    out.clear();
    s.on_segment(200 * MS, &ack(4000, ts(100 * MS)), &mut out, &mut st);
    assert!(!out.is_empty());
    // The app had 201 segments by 200 ms; the window limits first.
    let mut s3 = TcpSender::new(TcpConfig {
        rate_cap_bps: Some(8_000_000),
        iw: 100,
        ..cfg()
    });
    let (mut st3, mut o3) = (FlowStats::default(), Vec::new());
    s3.write(0, u64::MAX, false, &mut o3, &mut st3);
    s3.open(0, &mut o3);
    let mut synack = ack(0, o3[0].tcp.ts_val);
    synack.tcp.flags = F::SYN | F::ACK;
    o3.clear();
    s3.on_segment(10 * MS, &synack, &mut o3, &mut st3);
    // 10 ms at 1 segment/ms + the first segment = 11 segments.
    assert_eq!(o3.len(), 11);
    assert_eq!(s3.next_deadline().unwrap().min(11 * MS), 11 * MS);
    o3.clear();
    s3.on_timer(11 * MS, &mut o3, &mut st3);
    assert_eq!(seqs(&o3), vec![11_000]);
}

#[test]
fn window_limit_from_outside_sends_a_window_update() {
    let mut r = TcpReceiver::new(cfg(), false);
    let (mut st, mut out) = (FlowStats::default(), Vec::new());
    r.on_segment(0, &data(0, 1000, 0), &mut out, &mut st);
    r.on_segment(1, &data(1000, 1000, 0), &mut out, &mut st);
    out.clear();
    r.set_window_limit(2, Some(0), &mut out);
    assert!(out.is_empty()); // shrinking: told on the next ACK
    r.on_segment(3, &data(2000, 1000, 0), &mut out, &mut st);
    r.on_segment(4, &data(3000, 1000, 0), &mut out, &mut st);
    assert_eq!(out.last().unwrap().tcp.window, 0);
    out.clear();
    r.set_window_limit(5, Some(16_000), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].tcp.window, 16_000);
    assert_eq!(out[0].tcp.ack, 4000);
}

#[test]
fn zero_window_is_probed_and_reopens() {
    let (mut s, mut st, mut out) = established(cfg());
    let t = out[0].tcp.ts_val;
    out.clear();
    let mut z = ack(4000, t);
    z.tcp.window = 0;
    s.on_segment(200 * MS, &z, &mut out, &mut st);
    assert!(out.is_empty());
    let probe_at = s.next_deadline().unwrap();
    s.on_timer(probe_at, &mut out, &mut st);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].tcp.payload, 0);
    out.clear();
    s.on_segment(probe_at + 1, &ack(4000, t), &mut out, &mut st);
    assert!(!out.is_empty());
    assert_eq!(out[0].tcp.seq, 4000);
}
