//! Packet-level tests of the connection: segments fed at given times, exact replies
//! asserted (the smoltcp `send!`/`recv!` style).

use super::accecn::{answer_syn, syn_flags};
use super::cc::CcSpec;
use super::receiver::TcpReceiver;
use super::sender::{ts, TcpSender};
use super::{IdleRestart, Segment, TcpConfig};
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::{tcp_flags as F, Ecn};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

const MS: Nanos = NS_PER_MS;
const MSS: u64 = 1000;

/// The linux profile with a 1000-byte MSS and IW 4; the receiver tests here check RFC
/// 5681 delayed ACKs, so Linux's quick-ACK mode is off (its own tests below turn it on),
/// and the windows are hand-worked with RFC 5681/3465 byte counting, so Reno is not
/// Linux's whole-segment variant (tested in `cc/reno.rs`).
fn cfg() -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        iw: 4,
        sack: false,
        quickack: false,
        linux_reno: false,
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
    // The receiver's answer to the SYN's ECN offer (`accecn::answer_syn`).
    let (_, flags, ae) = answer_syn(out[0].tcp.flags, out[0].tcp.ae, c.receiver_support());
    synack.tcp.flags = F::SYN | F::ACK | flags;
    synack.tcp.ae = ae;
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
        .all(|x| x.tcp.payload == 1000 && x.wire_size() == 1052));
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
    // Duplicate ACKs carry the same window (out-of-order data sits inside it).
    let w: Vec<u32> = out.iter().map(|a| a.tcp.window).collect();
    assert!(w.iter().all(|&x| x as u64 == r.cfg.rwnd), "{w:?}");
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
        cc: CcSpec::named("reno").unwrap(),
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
    // RFC 6675's own window (cwnd = ssthresh) and loss marking (IsLost); PRR and RACK
    // are tested below.
    let (mut s, mut st, mut out) = established(TcpConfig {
        iw: 10,
        sack: true,
        prr: false,
        rack: false,
        ssthresh_from_cwnd: false,
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

/// A receiver after the handshake: SYN at 0, SYN-ACK at once, the third ACK at 50 ms, so
/// its RTO is 50 + max(2·50, 200) = 250 ms (Linux `tcp_rtt_estimator`, first sample).
fn quick_receiver(c: TcpConfig) -> (TcpReceiver, FlowStats, Vec<Segment>) {
    let mut r = TcpReceiver::new(c, false);
    let (mut st, mut out) = (FlowStats::default(), Vec::new());
    let mut syn = Segment::default();
    let (flags, ae) = syn_flags(c.sender_ecn());
    syn.tcp.flags = F::SYN | flags;
    syn.tcp.ae = ae;
    r.on_segment(0, &syn, &mut out, &mut st);
    let mut third = Segment::default();
    third.tcp.flags = F::ACK;
    r.on_segment(50 * MS, &third, &mut out, &mut st);
    out.clear();
    (r, st, out)
}

/// Linux quick-ACK mode (`tcp_event_data_recv` → `tcp_incr_quickack(sk, 16)`): the
/// first 16 data segments are each ACKed at once (quick 16 → 0, one per ACK sent,
/// `tcp_dec_quickack_mode`), then every second one; after a silence longer than the
/// receiver's RTO (250 ms) 16 more; a retransmission of old data (`tcp_data_queue` →
/// `tcp_enter_quickack_mode(sk, 16)`) is ACKed at once and re-arms 16.
#[test]
fn quickack_at_start_after_idle_and_after_old_data() {
    let c = TcpConfig {
        quickack: true,
        ..cfg()
    };
    let (mut r, mut st, mut out) = quick_receiver(c);
    let mut t = 60 * MS;
    for i in 0..20u64 {
        let before = out.len();
        r.on_segment(t, &data(i * MSS, 1000, t), &mut out, &mut st);
        let acked = out.len() > before;
        // 0..16 at once; then 16 is delayed, 17 ACKs two, 18 delayed, 19 ACKs two.
        assert_eq!(acked, i < 16 || i % 2 == 1, "segment {i}");
        t += MS;
    }
    assert_eq!(r.quick(), 0);
    // 250 ms of silence is not more than the RTO: the next segment waits (delayed).
    let t = 79 * MS + 250 * MS;
    r.on_segment(t, &data(20 * MSS, 1000, t), &mut out, &mut st);
    assert_eq!(r.quick(), 0);
    assert!(r.next_deadline().is_some());
    r.on_timer(t + 40 * MS, &mut out);
    // 251 ms after that: quick-ACK mode again, this segment ACKed at once.
    let t = t + 251 * MS;
    let n = out.len();
    r.on_segment(t, &data(21 * MSS, 1000, t), &mut out, &mut st);
    assert_eq!(out.len(), n + 1);
    assert_eq!(r.quick(), 15);
    // Exhaust it, then old data: immediate ACK, and 16 again (15 after that ACK).
    for i in 22..37u64 {
        r.on_segment(t + i * MS, &data(i * MSS, 1000, t), &mut out, &mut st);
    }
    assert_eq!(r.quick(), 0);
    let n = out.len();
    r.on_segment(t + 40 * MS, &data(5 * MSS, 1000, t), &mut out, &mut st);
    assert_eq!(out.len(), n + 1);
    assert_eq!(out[n].tcp.ack, 37 * MSS);
    assert_eq!(r.quick(), 15);
    r.on_segment(t + 41 * MS, &data(37 * MSS, 1000, t), &mut out, &mut st);
    assert_eq!(out.len(), n + 2);
    // Off: the same first segment is delayed.
    let (mut r, mut st, mut out) = quick_receiver(cfg());
    r.on_segment(60 * MS, &data(0, 1000, 0), &mut out, &mut st);
    assert!(out.is_empty());
}

/// `tcp_incr_quickack` bounds the credit by window/(2·MSS): a 6000-byte window gives 3
/// quick ACKs, not 16.
#[test]
fn quickack_credit_is_bounded_by_half_the_window_in_segments() {
    let c = TcpConfig {
        quickack: true,
        rwnd: 6000,
        ..cfg()
    };
    let (mut r, mut st, mut out) = quick_receiver(c);
    for i in 0..4u64 {
        r.on_segment((60 + i) * MS, &data(i * MSS, 1000, 0), &mut out, &mut st);
    }
    // Segments 0, 1, 2 at once; 3 is delayed.
    assert_eq!(out.len(), 3);
    assert_eq!(r.quick(), 0);
}

/// Classic ECN (`tcp_data_ecn_check`): the first CE while no CWR is awaited gives 2
/// quick ACKs; a second CE before the CWR does not; a data segment carrying CWR is ACKed
/// at once (`tcp_ecn_accept_cwr`: ICSK_ACK_NOW); a not-ECT segment (a retransmission)
/// after ECT was seen gives 2 quick ACKs.
#[test]
fn quickack_on_first_ce_cwr_and_not_ect_retransmission() {
    let c = TcpConfig {
        quickack: true,
        ecn: true,
        ..cfg()
    };
    let (mut r, mut st, mut out) = quick_receiver(c);
    let ect = |seq: u64, e: Ecn| {
        let mut s = data(seq, 1000, 0);
        s.ecn = e;
        s
    };
    let mut seq = 0;
    for _ in 0..16 {
        r.on_segment(60 * MS, &ect(seq, Ecn::Ect0), &mut out, &mut st);
        seq += MSS;
    }
    assert_eq!((r.quick(), out.len()), (0, 16));
    // An even number of segments since the last ACK: the next one alone is delayed.
    r.on_segment(61 * MS, &ect(seq, Ecn::Ect0), &mut out, &mut st);
    seq += MSS;
    assert_eq!(out.len(), 16);
    r.on_segment(62 * MS, &ect(seq, Ecn::Ect0), &mut out, &mut st);
    seq += MSS;
    assert_eq!(out.len(), 17);
    // First CE: quick 2 → this ACKed at once (1 left) and the next too.
    r.on_segment(63 * MS, &ect(seq, Ecn::Ce), &mut out, &mut st);
    seq += MSS;
    assert_eq!((out.len(), r.quick()), (18, 1));
    assert!(out[17].has(F::ECE));
    // A second CE before CWR: no new credit; the remaining one ACKs it.
    r.on_segment(64 * MS, &ect(seq, Ecn::Ce), &mut out, &mut st);
    seq += MSS;
    assert_eq!((out.len(), r.quick()), (19, 0));
    r.on_segment(65 * MS, &ect(seq, Ecn::Ect0), &mut out, &mut st);
    seq += MSS;
    assert_eq!(out.len(), 19);
    // CWR on data: ACK now (two segments pending anyway → take a lone one).
    r.on_segment(66 * MS, &ect(seq, Ecn::Ect0), &mut out, &mut st);
    seq += MSS;
    assert_eq!(out.len(), 20);
    let mut cwr = ect(seq, Ecn::Ect0);
    cwr.tcp.flags |= F::CWR;
    r.on_segment(67 * MS, &cwr, &mut out, &mut st);
    seq += MSS;
    assert_eq!(out.len(), 21);
    assert!(!out[20].has(F::ECE));
    // A not-ECT segment after ECT was seen: 2 quick ACKs.
    r.on_segment(68 * MS, &ect(seq, Ecn::NotEct), &mut out, &mut st);
    assert_eq!((out.len(), r.quick()), (22, 1));
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
    assert!(out[0].has(F::PSH));
    // The receiver answers a probe, but not a pure ACK.
    let mut r = TcpReceiver::new(cfg(), false);
    let mut racks = Vec::new();
    r.on_segment(probe_at, &out[0], &mut racks, &mut st);
    assert_eq!(racks.len(), 1);
    let mut pure = out[0];
    pure.tcp.flags = F::ACK;
    r.on_segment(probe_at, &pure, &mut racks, &mut st);
    assert_eq!(racks.len(), 1);
    out.clear();
    s.on_segment(probe_at + 1, &ack(4000, t), &mut out, &mut st);
    assert!(!out.is_empty());
    assert_eq!(out[0].tcp.seq, 4000);
}

#[test]
fn sack_enters_recovery_when_a_cumulative_ack_leaves_a_lost_head() {
    let (mut s, mut st, mut out) = established(TcpConfig {
        iw: 10,
        sack: true,
        ..cfg()
    });
    let t = out[0].tcp.ts_val;
    out.clear();
    // One ACK advances to 1000 and SACKs 3000..6000: 1000 and 2000 each have three
    // SACKed segments above them, so both are lost at once (no duplicate ACKs needed).
    s.on_segment(200 * MS, &sack(1000, &[(3000, 6000)], t), &mut out, &mut st);
    assert!(s.in_recovery);
    assert_eq!(seqs(&out)[0], 1000);
    assert_eq!(s.dupacks, 0);
}

/// An established SACK sender at t = 100 ms that has sent all of a `bytes` transfer
/// (IW 10): with nothing new to send, NextSeg rule 2 never applies.
fn established_finite(bytes: u64) -> (TcpSender, FlowStats, Vec<Segment>) {
    let mut s = TcpSender::new(TcpConfig {
        iw: 10,
        sack: true,
        rack: false, // RFC 6675 NextSeg rules alone
        ..cfg()
    });
    let mut st = FlowStats::default();
    let mut out = Vec::new();
    s.write(0, bytes, false, &mut out, &mut st);
    s.open(0, &mut out);
    let mut synack = ack(0, out[0].tcp.ts_val);
    synack.tcp.flags = F::SYN | F::ACK;
    out.clear();
    s.on_segment(100 * MS, &synack, &mut out, &mut st);
    (s, st, out)
}

/// Segments 0 and 5000 of 0..10000 are lost, the others SACKed in order: the SACK
/// blocks of the seven duplicate ACKs (for 1000 .. 4000, 6000 .. 8000).
const TWO_HOLES: [&[(u64, u64)]; 7] = [
    &[(1000, 2000)],
    &[(1000, 3000)],
    &[(1000, 4000)],
    &[(1000, 5000)],
    &[(6000, 7000), (1000, 5000)],
    &[(6000, 8000), (1000, 5000)],
    &[(6000, 9000), (1000, 5000)],
];

/// Feed duplicate ACK `k` of [`TWO_HOLES`]: the segments sent in reply and pipe after.
fn two_holes_step(s: &mut TcpSender, st: &mut FlowStats, t: Nanos, k: usize) -> (Vec<u64>, u64) {
    let mut out = Vec::new();
    s.on_segment(
        200 * MS + k as Nanos,
        &sack(0, TWO_HOLES[k], t),
        &mut out,
        st,
    );
    (seqs(&out), s.pipe())
}

fn sack_two_holes(s: &mut TcpSender, st: &mut FlowStats, t: Nanos) -> Vec<(Vec<u64>, u64)> {
    (0..TWO_HOLES.len())
        .map(|k| two_holes_step(s, st, t, k))
        .collect()
}

#[test]
fn sack_rule3_resends_an_unsacked_segment_below_the_highest_sack_when_no_new_data() {
    let (mut s, mut st, out) = established_finite(10_000);
    assert_eq!(out.len(), 10);
    let t = out[0].tcp.ts_val;
    let sent = sack_two_holes(&mut s, &mut st, t);
    // Before recovery nothing else may go (no new data; rule 3 is for recovery only).
    assert!(sent[0].0.is_empty() && sent[1].0.is_empty());
    // Third SACKed segment above 0: recovery, fast retransmit of 0, cwnd = 5000,
    // pipe = 10 − 3 SACKed − 1 lost + 1 retransmitted = 7 segments.
    assert_eq!(sent[2], (vec![0], 7000));
    assert_eq!(s.w.cwnd, 5000);
    assert_eq!(sent[3], (vec![], 6000));
    assert_eq!(sent[4], (vec![], 5000));
    // Six SACKed: pipe = 4 segments, room for one. No lost segment (5000 has only two
    // SACKed segments above it), no new data: rule 3 resends 5000, the first unSACKed
    // segment above HighRxt (1000) and below the highest SACKed octet (8000); 8000 and
    // 9000 lie above it and are not candidates. It counts twice in pipe.
    assert_eq!(sent[5], (vec![5000], 5000));
    // Seven SACKed: 5000 is now lost (already resent, counted once), pipe = 3 segments,
    // room for two, but there is no candidate: everything between HighRxt (6000) and the
    // highest SACK (9000) is SACKed, 9000 lies above it, and the rescue waits for the
    // cumulative ACK to pass the first retransmission.
    assert_eq!(sent[6], (vec![], 3000));
    assert_eq!(st.retransmits, 2);
}

#[test]
fn sack_rule3_yields_to_new_data() {
    // The same transfer and losses, but the application writes one more segment just
    // before the 6th duplicate ACK: with the same room, rule 2 sends it instead of
    // rule 3's 5000.
    let (mut s, mut st, out) = established_finite(10_000);
    let t = out[0].tcp.ts_val;
    for k in 0..5 {
        two_holes_step(&mut s, &mut st, t, k);
    }
    let mut out = Vec::new();
    s.write(205 * MS, 1000, false, &mut out, &mut st);
    assert!(out.is_empty()); // pipe 5 = cwnd
    assert_eq!(two_holes_step(&mut s, &mut st, t, 5), (vec![10_000], 5000));
    // 7th: 5000 is lost; pipe = 11 − 7 − 2 + 1 = 3, room for two; rule 1 resends 5000,
    // and nothing else qualifies (no new data, rule 3 has no candidate, no rescue yet).
    assert_eq!(two_holes_step(&mut s, &mut st, t, 6), (vec![5000], 4000));
    assert_eq!(st.retransmits, 2);
}

#[test]
fn sack_rule4_rescue_retransmits_the_highest_unsacked_segment_once_per_recovery() {
    let (mut s, mut st, out) = established_finite(10_000);
    let t = out[0].tcp.ts_val;
    sack_two_holes(&mut s, &mut st, t);
    assert_eq!(st.retransmits, 2); // 0 (fast retransmit) and 5000 (rule 3)
    let mut out = Vec::new();
    // The retransmission of 0 arrives: cumulative ACK 5000 (partial), still in recovery.
    // pipe = 5 outstanding − 3 SACKed − 1 lost + 1 retransmitted = 2 segments, cwnd 5:
    // rules 1–3 have nothing, HighACK is past RescueRxt (1000), so rule 4 resends the
    // highest unSACKed segment, 9000 — once, though the window has room for three.
    s.on_segment(300 * MS, &sack(5000, &[(6000, 9000)], t), &mut out, &mut st);
    assert!(s.in_recovery);
    assert_eq!(seqs(&out), vec![9000]);
    assert_eq!(st.retransmits, 3);
    // pipe is unchanged by the rescue (HighRxt is not moved).
    assert_eq!(s.pipe(), 2000);
    out.clear();
    // A further ACK in the same recovery: no second rescue (RescueRxt = RecoveryPoint).
    s.on_segment(301 * MS, &sack(5000, &[(6000, 9000)], t), &mut out, &mut st);
    assert!(out.is_empty(), "{:?}", seqs(&out));
    assert_eq!(st.retransmits, 3);
    // Everything arrives: recovery ends.
    s.on_segment(400 * MS, &sack(10_000, &[], t), &mut out, &mut st);
    assert!(!s.in_recovery);
    assert!(out.is_empty());
}

// ---- Linux rules switched by the profiles (issue 10) ------------------------------------

/// Linux `tcp_xmit_retransmit_queue`: retransmitting the head restarts the RTO. The IW
/// went out at 100 ms with RTO 300 ms (deadline 400 ms); the fast retransmit at
/// 200 ms + 2 ns moves the deadline to 500 ms + 2 ns. With `rto_rearm = false` (RFC 6298
/// §5.3: only new ACKs restart it) it stays at 400 ms.
#[test]
fn fast_retransmit_of_the_head_rearms_the_rto() {
    for (rearm, deadline) in [(true, 500 * MS + 2), (false, 400 * MS)] {
        let (mut s, mut st, mut out) = established(TcpConfig {
            iw: 10,
            rto_rearm: rearm,
            ..cfg()
        });
        assert_eq!(s.next_deadline(), Some(400 * MS));
        let t = out[0].tcp.ts_val;
        out.clear();
        for k in 0..3 {
            s.on_segment(200 * MS + k, &ack(0, t), &mut out, &mut st);
            if k < 2 {
                assert_eq!(s.next_deadline(), Some(400 * MS));
            }
        }
        assert_eq!(seqs(&out), vec![0]);
        assert_eq!(s.next_deadline(), Some(deadline), "rto_rearm = {rearm}");
    }
}

/// The timer expiry itself retransmits the head and arms RTO·2 from then on, whatever
/// `rto_rearm` says (RFC 6298 §5.5–5.6).
#[test]
fn rto_expiry_arms_the_backed_off_timer_with_rearm_on() {
    let (mut s, mut st, mut out) = established(cfg());
    out.clear();
    s.on_timer(400 * MS, &mut out, &mut st);
    assert_eq!(seqs(&out), vec![0]);
    assert_eq!(s.next_deadline(), Some(1000 * MS));
}

/// Linux congestion-window validation (`tcp_cwnd_validate`, `tcp_is_cwnd_limited`,
/// `tcp_cwnd_application_limited`): an application writing 3 segments per RTT (100 ms;
/// RTO stays 300 ms) with IW 4.
/// - 100 ms: 3 segments out; slow start with cwnd 4000 < 2·3000 counts as cwnd-limited.
/// - 200 ms: the ACK grows cwnd to 6000 (+2 MSS, RFC 3465 L = 2). From now on
///   6000 ≥ 2·3000: not cwnd-limited, no growth; the last cwnd-limited moment was 100 ms.
/// - 400 ms (an RTO after 100 ms): cwnd = (6000 + max(used 3000, IW 4000))/2 = 5000.
///   ssthresh = max(ssthresh, ¾·cwnd) stays infinite, so this is still slow start, and
///   5000 < 2·3000 counts as cwnd-limited again: the 500 ms ACK grows it to 7000.
/// - 700 ms: (7000 + 4000)/2 = 5500, then 7500; 1000 ms: 5750, then 7750; 1300 ms: 5875.
///
/// So cwnd stays below 2 × the data in flight + 2 MSS, where without validation the
/// same flow gains 2 MSS every RTT without bound.
#[test]
fn cwnd_does_not_grow_while_application_limited_and_decays_after_an_rto() {
    let run = |cwv: bool| {
        let mut s = TcpSender::new(TcpConfig { cwv, ..cfg() });
        let (mut st, mut out) = (FlowStats::default(), Vec::new());
        s.write(0, 3000, false, &mut out, &mut st);
        s.open(0, &mut out);
        let mut synack = ack(0, out[0].tcp.ts_val);
        synack.tcp.flags = F::SYN | F::ACK;
        out.clear();
        s.on_segment(100 * MS, &synack, &mut out, &mut st);
        assert_eq!(seqs(&out), vec![0, 1000, 2000]);
        let mut cwnds = vec![];
        for k in 1..=12u64 {
            let now = 100 * MS * (k + 1);
            s.on_segment(now, &ack(3000 * k, ts(now - 100 * MS)), &mut out, &mut st);
            assert_eq!(s.rtt.rto(), 300 * MS);
            out.clear();
            s.write(now, 3000, false, &mut out, &mut st);
            assert_eq!(out.len(), 3);
            out.clear();
            cwnds.push(s.w.cwnd);
        }
        cwnds
    };
    assert_eq!(
        run(true),
        vec![6000, 6000, 5000, 7000, 7000, 5500, 7500, 7500, 5750, 7750, 7750, 5875]
    );
    let off = run(false);
    assert_eq!(off[0], 6000);
    assert!(off.windows(2).all(|w| w[1] == w[0] + 2000), "{off:?}");
}

/// Restart after idle: a connection that last sent new data at 100 ms writes again at
/// `100 ms + idle` with nothing in flight (RTO 300 ms, cwnd 64 000, ssthresh 20 000).
/// Linux `tcp_cwnd_restart`, idle 1 s: ssthresh = max(20 000, ¾·64 000) = 48 000;
/// cwnd halves while (1000 − k·300 ms) > 0: 32 000, 16 000, 8 000 (k = 1..3); not below
/// min(IW, cwnd) = 4000. RFC 5681 §4.1: cwnd = min(IW, cwnd) = 4000, ssthresh kept.
/// An idle time of 250 ms (< RTO) changes nothing.
#[test]
fn idle_restart_follows_linux_or_rfc5681() {
    let run = |mode: IdleRestart, idle: Nanos| {
        let mut s = TcpSender::new(TcpConfig {
            idle_restart: mode,
            cwv: false,
            ..cfg()
        });
        let (mut st, mut out) = (FlowStats::default(), Vec::new());
        s.write(0, 3000, false, &mut out, &mut st);
        s.open(0, &mut out);
        let mut synack = ack(0, out[0].tcp.ts_val);
        synack.tcp.flags = F::SYN | F::ACK;
        s.on_segment(100 * MS, &synack, &mut out, &mut st);
        s.on_segment(200 * MS, &ack(3000, ts(100 * MS)), &mut out, &mut st);
        assert_eq!(s.rtt.rto(), 300 * MS);
        s.w.cwnd = 64_000;
        s.w.ssthresh = 20_000;
        out.clear();
        s.write(100 * MS + idle, 3000, false, &mut out, &mut st);
        assert_eq!(out.len(), 3);
        (s.w.cwnd, s.w.ssthresh)
    };
    assert_eq!(run(IdleRestart::Linux, 1000 * MS), (8000, 48_000));
    assert_eq!(run(IdleRestart::Rfc5681, 1000 * MS), (4000, 20_000));
    assert_eq!(run(IdleRestart::Off, 1000 * MS), (64_000, 20_000));
    for mode in [IdleRestart::Linux, IdleRestart::Rfc5681] {
        assert_eq!(run(mode, 250 * MS), (64_000, 20_000));
    }
}

/// A SACK recovery that ends with the cumulative ACK exactly at RecoveryPoint (12 000),
/// then the first new segment (12 000) is lost: RFC 6675 §5 (and Linux, which keeps the
/// `snd_una > recover` guard for non-SACK Reno only) starts a new recovery with a
/// window cut. Without SACK, RFC 6582 §3.2 step 2 forbids it until the ACK passes 12 000.
#[test]
fn a_loss_right_after_sack_recovery_starts_a_new_recovery() {
    let (mut s, mut st, mut out) = established(TcpConfig {
        iw: 10,
        sack: true,
        ssthresh_from_cwnd: false, // RFC 5681 eq. 4 arithmetic
        ..cfg()
    });
    let t = out[0].tcp.ts_val;
    out.clear();
    s.on_segment(200 * MS, &sack(0, &[(1000, 2000)], t), &mut out, &mut st);
    s.on_segment(201 * MS, &sack(0, &[(1000, 3000)], t), &mut out, &mut st);
    s.on_segment(202 * MS, &sack(0, &[(1000, 4000)], t), &mut out, &mut st);
    assert!(s.in_recovery);
    assert_eq!(s.recover, Some(12_000));
    assert_eq!(s.w.ssthresh, 6000);
    out.clear();
    s.on_segment(300 * MS, &sack(12_000, &[], t), &mut out, &mut st);
    assert!(!s.in_recovery);
    assert_eq!(
        seqs(&out),
        vec![12_000, 13_000, 14_000, 15_000, 16_000, 17_000]
    );
    out.clear();
    let retransmits = st.retransmits;
    s.on_segment(
        400 * MS,
        &sack(12_000, &[(13_000, 14_000)], t),
        &mut out,
        &mut st,
    );
    s.on_segment(
        401 * MS,
        &sack(12_000, &[(13_000, 15_000)], t),
        &mut out,
        &mut st,
    );
    s.on_segment(
        402 * MS,
        &sack(12_000, &[(13_000, 16_000)], t),
        &mut out,
        &mut st,
    );
    assert!(s.in_recovery);
    // The first two SACKs each let one new segment out (18 000, 19 000): FlightSize
    // 12 000..20 000 = 8000, halved.
    assert_eq!(s.w.ssthresh, 4000);
    assert_eq!(st.retransmits, retransmits + 1);
    assert_eq!(out.iter().filter(|x| x.tcp.seq == 12_000).count(), 1);
}

#[test]
fn newreno_does_not_reenter_recovery_until_the_ack_passes_recover() {
    let (mut s, mut st, mut out) = established(TcpConfig { iw: 10, ..cfg() });
    let t = out[0].tcp.ts_val;
    out.clear();
    for k in 0..4 {
        s.on_segment(200 * MS + k, &ack(0, t), &mut out, &mut st);
    }
    assert!(s.in_recovery);
    let recover = s.recover.unwrap();
    s.on_segment(300 * MS, &ack(recover, t), &mut out, &mut st);
    assert!(!s.in_recovery);
    assert_eq!(s.snd_una, recover);
    let ssthresh = s.w.ssthresh;
    for k in 0..4 {
        s.on_segment(400 * MS + k, &ack(recover, t), &mut out, &mut st);
    }
    assert!(!s.in_recovery);
    assert_eq!(s.w.ssthresh, ssthresh);
}

/// An RTO during fast recovery keeps the recovery's ssthresh (Linux `tcp_enter_loss`
/// only recomputes it from the Open/Disorder states): FlightSize now includes the data
/// sent during recovery, and halving it would raise ssthresh from 5000 to 6500.
#[test]
fn rto_during_fast_recovery_keeps_the_recovery_ssthresh() {
    let (mut s, mut st, mut out) = established(TcpConfig { iw: 10, ..cfg() });
    let t = out[0].tcp.ts_val;
    out.clear();
    for k in 0..8 {
        s.on_segment(200 * MS + k, &ack(0, t), &mut out, &mut st);
    }
    assert!(s.in_recovery);
    assert_eq!(s.w.ssthresh, 5000);
    assert_eq!(s.snd_nxt, 13_000);
    let d = s.next_deadline().unwrap();
    out.clear();
    s.on_timer(d, &mut out, &mut st);
    assert_eq!(st.timeouts, 1);
    assert_eq!((s.w.cwnd, s.w.ssthresh), (1000, 5000));
    assert_eq!(seqs(&out), vec![0]);
}

/// SACKs for the segments above `lost_to` of a 20-segment flight, one ACK per segment
/// from `first` to `last` (cumulative ACK stays at 0): what was sent on each ACK,
/// as "N" (new), "R" (retransmissions) or "" per ACK.
fn prr_trace(c: TcpConfig, first: u64, last: u64) -> Vec<String> {
    let (mut s, mut st, mut out) = established(TcpConfig {
        iw: 20,
        sack: true,
        ..c
    });
    assert_eq!(out.len(), 20);
    let t = out[0].tcp.ts_val;
    let mut sent = vec![];
    for k in first..=last {
        out.clear();
        s.on_segment(
            200 * MS + k,
            &sack(0, &[(first * MSS, (k + 1) * MSS)], t),
            &mut out,
            &mut st,
        );
        let r = out.iter().filter(|x| x.tcp.seq < 20 * MSS).count();
        let n = out.len() - r;
        sent.push(match (n, r) {
            (0, 0) => String::new(),
            (n, 0) => "N".repeat(n),
            (0, r) => format!("{r}R"),
            (n, r) => format!("{r}R+{n}N"),
        });
    }
    sent
}

/// RFC 6937 §3.1, first example: 20 segments in flight, segment 0 lost, ACKs (SACKs)
/// for 1..19. Limited transmit sends new segments on ACKs 1 and 2; the third starts
/// recovery with ssthresh = FlightSize/2 = 11 and RecoverFS = 22 (ratio ½, as the
/// RFC's 10/20). PRR then sends one segment per two ACKs, `sndcnt = ⌈prr_delivered/2⌉
/// − prr_out`: R on ACK 3, N on 5, 7, 9, 11, 13, 15; on ACK 17 pipe reaches ssthresh
/// and the reduction bound takes over (`ssthresh − pipe` = 0 on 17, 1 on 18 and 19):
/// exactly the RFC's "PRR" row (N N R · N · N · N · N · N · N · · N N).
#[test]
fn prr_spreads_the_window_reduction_over_the_rtt_as_rfc6937_example_1() {
    let rfc_base = TcpConfig {
        ssthresh_from_cwnd: false,
        ..cfg()
    };
    let got = prr_trace(rfc_base, 1, 19);
    let want = [
        "N", "N", "1R", "", "N", "", "N", "", "N", "", "N", "", "N", "", "N", "", "", "N", "N",
    ];
    assert_eq!(got, want);
    // RFC 6675 (prr = false) on the same ACKs: a half window of silence, then one new
    // segment per ACK once pipe = 22 − k < cwnd = ssthresh = 11, from ACK 12 (the
    // RFC's "RFC 6675" row: eight N at the end; both send the same total).
    let rfc = prr_trace(
        TcpConfig {
            prr: false,
            ..rfc_base
        },
        1,
        19,
    );
    let want = [
        "N", "N", "1R", "", "", "", "", "", "", "", "", "N", "N", "N", "N", "N", "N", "N", "N",
    ];
    assert_eq!(rfc, want);
    // Linux's arithmetic (`ssthresh_from_cwnd`, the default): ssthresh = cwnd/2 = 10,
    // RecoverFS = prior_cwnd = 20 (the limited-transmit segments not counted). Same ½
    // ratio, but pipe (22 + sent − k) stays above 10 through ACK 17, which PRR answers
    // (⌈15/2⌉ − 7 = 1), and on 18 and 19 nothing is left: 7 new segments, not 8.
    let linux = prr_trace(cfg(), 1, 19);
    let want = [
        "N", "N", "1R", "", "N", "", "N", "", "N", "", "N", "", "N", "", "N", "", "N", "", "",
    ];
    assert_eq!(linux, want);
}

/// ns-3's loss base (`ssthresh_from_pipe`, ns-3.44 `TcpSocketBase::EnterRecovery`:
/// `GetSsThresh(tcb, BytesInFlight())`, the head marked lost first). 20 segments in
/// flight, segments 0 and 1 lost, SACKs for 2, 3, 4: the first two let one new segment
/// out each (limited transmit by pipe), the third marks both holes lost (three SACKed
/// above each) and starts recovery with snd_nxt − snd_una = 22 segments, 3 SACKed and
/// 2 lost: pipe = 17, ssthresh = 8.5 segments (RFC 5681 eq. 4 on FlightSize: 11).
/// On RFC 6937's first example (segment 0 lost) pipe = 22 − 3 − 1 = 18 gives
/// ssthresh 9 and RecoverFS 18; PRR keeps its ½ ratio, and pipe = 22 + new − k stays
/// above 9 up to ACK 19, so the last three ACKs send N · N (RFC arithmetic: · N N,
/// cwnd/2: N · ·).
#[test]
fn ns3_recovery_halves_the_pipe_without_sacked_and_lost_segments() {
    let ns3_base = TcpConfig {
        ssthresh_from_cwnd: false,
        ssthresh_from_pipe: true,
        ..cfg()
    };
    for (pipe_rule, want) in [(true, 8500), (false, 11_000)] {
        let (mut s, mut st, mut out) = established(TcpConfig {
            iw: 20,
            sack: true,
            ssthresh_from_pipe: pipe_rule,
            ..ns3_base
        });
        let t = out[0].tcp.ts_val;
        for k in 2..=4 {
            out.clear();
            s.on_segment(
                200 * MS + k,
                &sack(0, &[(2000, (k + 1) * MSS)], t),
                &mut out,
                &mut st,
            );
        }
        assert!(s.in_recovery);
        assert_eq!(s.snd_nxt, 22_000);
        assert_eq!(s.w.ssthresh, want);
    }
    let got = prr_trace(ns3_base, 1, 19);
    let want = [
        "N", "N", "1R", "", "N", "", "N", "", "N", "", "N", "", "N", "", "N", "", "N", "", "N",
    ];
    assert_eq!(got, want);
}

/// ns-3's PRR (`ns3_prr`, ns-3.44 `TcpPrrRecovery::DoRecovery`) on RFC 6937's first
/// example: ssthresh 9, RecoverFS 18 segments (pipe rule). Each SACK is a duplicate ACK
/// and counts one MSS on top of the segment it SACKs while prr_delivered < RecoverFS,
/// so PRR sends one segment per ACK (sndcnt = ⌈2k·9/18⌉ − prr_out = 1) until
/// prr_delivered reaches 18 segments on ACK 11; from ACK 12 on, one per two ACKs
/// (⌈19·½⌉ − 9 = ½ segment: too little for a segment on 12, 14, 16, 18).
/// With MSS 40 000 B the product prr_delivered·ssthresh wraps at 2³² as in ns-3: on the
/// fourth SACK 160 000·360 000 mod 2³² = 1 765 425 152, / RecoverFS 720 000 → 2452 B,
/// minus prr_out 40 000 < 0: nothing is sent where the exact product sends a segment.
#[test]
fn ns3_prr_counts_a_dupack_as_one_more_segment_and_wraps_its_product() {
    let ns3 = TcpConfig {
        ssthresh_from_cwnd: false,
        ssthresh_from_pipe: true,
        ns3_prr: true,
        ..cfg()
    };
    let got = prr_trace(ns3, 1, 19);
    let want = [
        "N", "N", "1R", "N", "N", "N", "N", "N", "N", "N", "N", "", "N", "", "N", "", "N", "", "N",
    ];
    assert_eq!(got, want);

    let big = 40_000u64;
    let run = |wrap_size: bool| {
        let mss = if wrap_size { big } else { MSS };
        let (mut s, mut st, mut out) = established(TcpConfig {
            iw: 20,
            sack: true,
            mss: mss as u32,
            ..ns3
        });
        let t = out[0].tcp.ts_val;
        let mut sent = vec![];
        for k in 1..=4 {
            out.clear();
            s.on_segment(
                200 * MS + k,
                &sack(0, &[(mss, (k + 1) * mss)], t),
                &mut out,
                &mut st,
            );
            sent.push(out.len());
        }
        (s.w.ssthresh / mss, sent)
    };
    assert_eq!(run(false), (9, vec![1, 1, 1, 1]));
    assert_eq!(run(true), (9, vec![1, 1, 1, 0]));
}

/// `ns3_rto_ssthresh` (ns-3.44 `ReTxTimeout`): an RTO during fast recovery takes
/// ssthresh again from the pipe then (22 − 3 SACKed − 1 lost + 1 retransmitted = 19
/// segments: 9.5), where the Linux rule keeps the recovery's 9; a second RTO with the
/// head already retransmitted keeps it in both.
#[test]
fn ns3_rto_in_fast_recovery_recomputes_ssthresh() {
    for (rule, want) in [(true, 9500), (false, 9000)] {
        let (mut s, mut st, mut out) = established(TcpConfig {
            iw: 20,
            sack: true,
            ssthresh_from_cwnd: false,
            ssthresh_from_pipe: true,
            ns3_rto_ssthresh: rule,
            ..cfg()
        });
        let t = out[0].tcp.ts_val;
        for k in 1..=3 {
            s.on_segment(
                200 * MS + k,
                &sack(0, &[(1000, (k + 1) * MSS)], t),
                &mut out,
                &mut st,
            );
        }
        assert!(s.in_recovery);
        assert_eq!((s.w.ssthresh, s.pipe()), (9000, 19_000));
        for _ in 0..2 {
            let d = s.next_deadline().unwrap();
            out.clear();
            s.on_timer(d, &mut out, &mut st);
            assert_eq!(s.w.ssthresh, want);
            assert_eq!(seqs(&out), vec![0]);
        }
        assert_eq!(st.timeouts, 2);
    }
}

fn ns3_cfg() -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        iw: 20,
        ..super::TcpProfile::Ns3.config()
    }
}

/// `ns3_partial_rtx`: segments 0 and 1 lost of 20, SACKs for 2, 3, 4 start recovery
/// (pipe 17, ssthresh 8.5, RecoverFS 17 segments) and PRR retransmits 0. The partial
/// ACK of segment 0 delivers one segment: prr_delivered = 3, sndcnt = ⌈3·8.5/17⌉ − 1 =
/// ½ segment, cwnd = pipe 17 + ½ — no room. ns-3 still sends `DoRetransmit`'s segment,
/// the lost segment 1, because the new head was not retransmitted yet.
#[test]
fn ns3_partial_ack_retransmits_the_next_hole_outside_cwnd() {
    for (rule, want) in [(true, vec![1000]), (false, vec![])] {
        let (mut s, mut st, mut out) = established(TcpConfig {
            ns3_partial_rtx: rule,
            ..ns3_cfg()
        });
        let t = out[0].tcp.ts_val;
        for k in 2..=4 {
            out.clear();
            s.on_segment(
                200 * MS + k,
                &sack(0, &[(2000, (k + 1) * MSS)], t),
                &mut out,
                &mut st,
            );
        }
        assert!(s.in_recovery);
        assert_eq!((s.w.ssthresh, seqs(&out)), (8500, vec![0]));
        out.clear();
        s.on_segment(300 * MS, &sack(1000, &[(2000, 5000)], t), &mut out, &mut st);
        assert_eq!(s.w.cwnd, 17_500);
        assert_eq!(seqs(&out), want);
    }
}

/// `ns3_exit_growth`: the ACK that ends recovery sets cwnd = ssthresh (9 segments) and
/// then grows it as any ACK in congestion avoidance: ns-3 NewReno adds MSS²/cwnd =
/// 10⁶/9000 = 111 B.
#[test]
fn ns3_recovery_exit_ack_grows_the_window() {
    for (rule, want) in [(true, 9111), (false, 9000)] {
        let (mut s, mut st, mut out) = established(TcpConfig {
            ns3_exit_growth: rule,
            ..ns3_cfg()
        });
        let t = out[0].tcp.ts_val;
        for k in 1..=3 {
            s.on_segment(
                200 * MS + k,
                &sack(0, &[(1000, (k + 1) * MSS)], t),
                &mut out,
                &mut st,
            );
        }
        assert_eq!((s.w.ssthresh, s.recover), (9000, Some(22_000)));
        s.on_segment(300 * MS, &sack(22_000, &[], t), &mut out, &mut st);
        assert!(!s.in_recovery);
        assert_eq!(s.w.cwnd, want);
    }
}

/// RFC 6937 §3.1, second example: segments 0..14 lost, ACKs for 15..19 only. Recovery
/// starts on ACK 17 with pipe = 4 segments, far below ssthresh: PRR-SSRB sends
/// `max(prr_delivered − prr_out, DeliveredData) + 1` = 2 segments per ACK (the RFC's
/// "2R 2R 2R", pipe 4, 5, 6), where RFC 6675 fills pipe up to ssthresh at once
/// (11 with FlightSize 22, 10 with Linux's cwnd/2).
#[test]
fn prr_slow_start_reduction_bound_after_a_burst_loss_as_rfc6937_example_2() {
    let rfc_base = TcpConfig {
        ssthresh_from_cwnd: false,
        ..cfg()
    };
    assert_eq!(prr_trace(rfc_base, 15, 19), ["N", "N", "2R", "2R", "2R"]);
    assert_eq!(prr_trace(cfg(), 15, 19), ["N", "N", "2R", "2R", "2R"]);
    let rfc = prr_trace(
        TcpConfig {
            prr: false,
            ..rfc_base
        },
        15,
        19,
    );
    assert_eq!(rfc[..2], ["N", "N"]);
    assert_eq!(rfc[2], "7R"); // pipe 4 + 7 = ssthresh 11
    let linux = prr_trace(
        TcpConfig {
            prr: false,
            ..cfg()
        },
        15,
        19,
    );
    assert_eq!(linux[2], "6R"); // pipe 4 + 6 = ssthresh 10
}

/// RACK (RFC 8985 §6.2) with one SACK: the IW (10 segments) left at 100 ms, RTT 100 ms.
/// At 200 ms segment 1 is SACKed: RACK.rtt = 100 ms, and with fewer than DupThresh
/// segments SACKed and no recovery the reordering window is min_RTT/4 = 25 ms, so
/// segment 0 is lost at 100 + 100 + 25 = 225 ms: the reordering timer fires then and
/// fast recovery starts with its retransmission (without RACK: nothing before the RTO
/// at 400 ms).
#[test]
fn rack_reordering_timer_marks_the_hole_lost_at_rtt_plus_reo_wnd() {
    let (mut s, mut st, mut out) = established(TcpConfig {
        iw: 10,
        sack: true,
        ..cfg()
    });
    let t = out[0].tcp.ts_val;
    out.clear();
    s.on_segment(200 * MS, &sack(0, &[(1000, 2000)], t), &mut out, &mut st);
    assert_eq!(seqs(&out), vec![10_000]); // pipe-based: one segment per SACKed one
    assert_eq!(s.next_deadline(), Some(225 * MS));
    out.clear();
    s.on_timer(225 * MS - 1, &mut out, &mut st);
    assert!(out.is_empty() && !s.in_recovery);
    s.on_timer(225 * MS, &mut out, &mut st);
    assert!(s.in_recovery);
    assert_eq!(seqs(&out), vec![0]);
    assert_eq!(st.retransmits, 1);

    let (mut s, mut st, mut out) = established(TcpConfig {
        iw: 10,
        sack: true,
        rack: false,
        ..cfg()
    });
    out.clear();
    s.on_segment(200 * MS, &sack(0, &[(1000, 2000)], t), &mut out, &mut st);
    assert_eq!(s.next_deadline(), Some(400 * MS));
}

/// RACK finds a lost retransmission. Continuing the trace above: segment 0 was resent
/// at 225 ms (and is lost again). At 300 ms everything but 0 up to 11 000 is SACKed
/// (RACK segment: 10 000, sent at 200 ms, before the retransmission: nothing new
/// lost); PRR sends 11 000.. at 300 ms. At 400 ms 11 000 is SACKed: it was sent after
/// the retransmission, RACK.rtt = 100 ms, reo_wnd = 0 in recovery, and 225 + 100 ≤ 400:
/// segment 0 is lost again and resent at once. RFC 6675 alone waits for the RTO.
#[test]
fn rack_detects_a_lost_retransmission() {
    let run = |rack: bool| {
        let (mut s, mut st, mut out) = established(TcpConfig {
            iw: 10,
            sack: true,
            rack,
            ..cfg()
        });
        let t = out[0].tcp.ts_val;
        s.on_segment(200 * MS, &sack(0, &[(1000, 2000)], t), &mut out, &mut st);
        if rack {
            s.on_timer(225 * MS, &mut out, &mut st);
        } else {
            // Without RACK, the same state by DupThresh: two more SACKs at 225 ms.
            s.on_segment(225 * MS, &sack(0, &[(1000, 3000)], t), &mut out, &mut st);
            s.on_segment(225 * MS, &sack(0, &[(1000, 4000)], t), &mut out, &mut st);
        }
        assert!(s.in_recovery);
        assert_eq!(st.retransmits, 1);
        out.clear();
        s.on_segment(
            300 * MS,
            &sack(0, &[(1000, 11_000)], ts(200 * MS)),
            &mut out,
            &mut st,
        );
        // The first segment sent at 300 ms (11 000 with RACK; without it 11 000 already
        // left at 225 ms on the second SACK, so 12 000).
        let first = out[0].tcp.seq;
        assert_eq!(first, if rack { 11_000 } else { 12_000 });
        assert!(out.iter().all(|x| x.tcp.seq != 0));
        out.clear();
        let blocks = [(1000, first + 1000)];
        s.on_segment(400 * MS, &sack(0, &blocks, ts(300 * MS)), &mut out, &mut st);
        (seqs(&out), st.retransmits)
    };
    let (sent, retransmits) = run(true);
    assert_eq!(sent[0], 0);
    assert_eq!(retransmits, 2);
    let (sent, retransmits) = run(false);
    assert!(!sent.contains(&0));
    assert_eq!(retransmits, 1);
}

/// TLP (RFC 8985 §7): IW 4 at 100 ms; the ACK at 200 ms (SRTT 100 ms) opens cwnd to
/// 6 segments, sent at once; then silence. PTO = 2·SRTT = 200 ms, before the RTO at
/// 200 + 300 ms: at 400 ms one probe goes out regardless of cwnd — new data (10 000)
/// for a bulk sender, the last segment again (9000) when there is no new data — and
/// the RTO is re-armed from the probe (700 ms). No second probe before an ACK.
#[test]
fn tlp_probes_at_two_srtt_with_new_data_or_the_last_segment() {
    for (bytes, probe, retransmits) in [(u64::MAX, 10_000, 0), (10_000, 9000, 1)] {
        let mut s = TcpSender::new(TcpConfig {
            iw: 4,
            sack: true,
            ..cfg()
        });
        let (mut st, mut out) = (FlowStats::default(), Vec::new());
        s.write(0, bytes, false, &mut out, &mut st);
        s.open(0, &mut out);
        let mut synack = ack(0, out[0].tcp.ts_val);
        synack.tcp.flags = F::SYN | F::ACK;
        s.on_segment(100 * MS, &synack, &mut out, &mut st);
        out.clear();
        s.on_segment(200 * MS, &ack(4000, ts(100 * MS)), &mut out, &mut st);
        assert_eq!(seqs(&out), vec![4000, 5000, 6000, 7000, 8000, 9000]);
        assert_eq!(s.next_deadline(), Some(400 * MS));
        out.clear();
        s.on_timer(400 * MS, &mut out, &mut st);
        assert_eq!(seqs(&out), vec![probe]);
        assert_eq!(st.retransmits, retransmits);
        assert_eq!(s.next_deadline(), Some(700 * MS));
        out.clear();
        s.on_timer(700 * MS, &mut out, &mut st);
        assert_eq!(st.timeouts, 1);
        assert_eq!(seqs(&out), vec![4000]);
    }
}

/// A probe that retransmitted the last segment and is followed by an ACK beyond it
/// repaired a loss (RFC 8985 §7.4; no DSACK in this model): one reduction, cwnd =
/// ssthresh = cwnd/2.
#[test]
fn tlp_episode_that_repaired_a_loss_reduces_cwnd_once() {
    let mut s = TcpSender::new(TcpConfig {
        iw: 4,
        sack: true,
        ..cfg()
    });
    let (mut st, mut out) = (FlowStats::default(), Vec::new());
    s.write(0, 10_000, false, &mut out, &mut st);
    s.open(0, &mut out);
    let mut synack = ack(0, out[0].tcp.ts_val);
    synack.tcp.flags = F::SYN | F::ACK;
    s.on_segment(100 * MS, &synack, &mut out, &mut st);
    s.on_segment(200 * MS, &ack(4000, ts(100 * MS)), &mut out, &mut st);
    s.on_timer(400 * MS, &mut out, &mut st); // probe: 9000 again
    assert_eq!(s.w.cwnd, 6000);
    // The probe's ACK covers everything (the original 9000 was lost).
    s.write(450 * MS, 5000, false, &mut out, &mut st);
    s.on_segment(500 * MS, &ack(10_000, ts(400 * MS)), &mut out, &mut st);
    // ACK == TLP.end_seq: not yet beyond it (Linux waits for `after(ack, high_seq)`).
    assert_eq!(s.w.cwnd, 6000 + 2000);
    // Beyond it: the ACK first grows cwnd in slow start (8000 < 2 × 5000 outstanding
    // counts as cwnd-limited) to 10 000, then the reduction halves it (Linux's
    // `tcp_reno_ssthresh`): cwnd = ssthresh = 5000.
    s.on_segment(600 * MS, &ack(12_000, ts(500 * MS)), &mut out, &mut st);
    assert_eq!((s.w.cwnd, s.w.ssthresh), (5000, 5000));
}

/// Pacing (`pacing = true`, Linux `tcp_update_pacing_rate`): at establishment, SRTT
/// 100 ms, cwnd 4 × 1000 B in slow start (cwnd < ssthresh/2: 200 %): 80 000 B/s. Each
/// 1052 B packet then holds the next one back 1052 / 80 000 s = 13.15 ms; the sender
/// asks for one wake-up at the gate's opening, not one per packet.
#[test]
fn pacing_spaces_segments_by_wire_size_over_the_rate() {
    let (mut s, mut st, mut out) = established(TcpConfig {
        pacing: true,
        linux_pacing: false,
        ..cfg()
    });
    assert_eq!(s.pacing_rate, 80_000);
    assert_eq!(seqs(&out), vec![0]);
    let gap = 13_150_000;
    assert_eq!(s.next_deadline(), Some(100 * MS + gap));
    out.clear();
    // Too early: nothing.
    s.on_timer(100 * MS + gap - 1, &mut out, &mut st);
    assert!(out.is_empty());
    s.on_timer(100 * MS + gap, &mut out, &mut st);
    assert_eq!(seqs(&out), vec![1000]);
    assert_eq!(s.next_deadline(), Some(100 * MS + 2 * gap));
    // A late wake-up sends one segment and restarts the spacing from now.
    out.clear();
    s.on_timer(150 * MS, &mut out, &mut st);
    assert_eq!(seqs(&out), vec![2000]);
    assert_eq!(s.next_deadline(), Some(150 * MS + gap));
}

/// Linux's pacing step (`linux_pacing`, `tcp_update_skb_after_send`): IW 20, SRTT
/// 100 ms, slow start: 2 · 20 000 B / 100 ms = 400 000 B/s. The first 9 data segments
/// leave unpaced (`data_segs_out` < 10); the 10th moves the departure time on by its
/// payload, 1000 B / 400 000 B/s = 2.5 ms (wire size would be 2.63 ms), so 10 leave at
/// 100 ms and the 11th at 102.5 ms (next: 105 ms). A wake-up 5 ms late (110 ms) sends
/// the 12th and credits min(2.5 / 2, 5) = 1.25 ms: the next leaves at 111.25 ms.
#[test]
fn linux_pacing_steps_by_payload_with_credit_for_late_sends() {
    let (mut s, mut st, mut out) = established(TcpConfig {
        pacing: true,
        iw: 20,
        linux_tso: false,
        ..cfg()
    });
    assert_eq!(s.pacing_rate, 400_000);
    assert_eq!(out.len(), 10);
    assert_eq!(s.next_deadline(), Some(102_500_000));
    out.clear();
    s.on_timer(102_500_000 - 1, &mut out, &mut st);
    assert!(out.is_empty());
    s.on_timer(102_500_000, &mut out, &mut st);
    assert_eq!(seqs(&out), vec![10_000]);
    assert_eq!(s.next_deadline(), Some(105 * MS));
    out.clear();
    s.on_timer(110 * MS, &mut out, &mut st);
    assert_eq!(seqs(&out), vec![11_000]);
    assert_eq!(s.next_deadline(), Some(111_250_000));
}

/// With `linux_tso` (Linux `tcp_tso_autosize`): 1 ms of 400 000 B/s is 390 B, below one
/// segment, so an skb holds `tcp_min_tso_segs` = 2 segments, paced by its 2000 B: 5 ms.
/// At 100 ms the 9 unpaced segments and the 10th leave (the 9th and 10th are one skb;
/// its step, 5 ms, counts as `data_segs_out` reached 10); at 105 ms two leave and the
/// next skb is due at 110 ms. Woken 5 ms late (115 ms), the skb gets min(5 / 2, 5) =
/// 2.5 ms of credit: next at 117.5 ms.
#[test]
fn linux_tso_sends_two_segment_skbs_paced_by_their_payload() {
    let (mut s, mut st, mut out) = established(TcpConfig {
        pacing: true,
        iw: 20,
        ..cfg()
    });
    assert_eq!(s.pacing_rate, 400_000);
    assert_eq!(out.len(), 10);
    assert_eq!(s.next_deadline(), Some(105 * MS));
    out.clear();
    s.on_timer(105 * MS, &mut out, &mut st);
    assert_eq!(seqs(&out), vec![10_000, 11_000]);
    assert_eq!(s.next_deadline(), Some(110 * MS));
    out.clear();
    s.on_timer(115 * MS, &mut out, &mut st);
    assert_eq!(seqs(&out), vec![12_000, 13_000]);
    assert_eq!(s.next_deadline(), Some(117_500_000));
}

/// Prague's pacing (`prague_update_pacing_rate`): cwnd in packets × (MSS + header) /
/// SRTT, × 2 in slow start: 10 × 1052 B / 100 ms × 2 = 210 400 B/s after the
/// handshake. With a classic receiver Prague negotiates no ECN (it refuses RFC 3168),
/// sends not-ECT and does not pace (`prague_release`).
#[test]
fn prague_paces_by_mtu_and_falls_back_unpaced_without_accecn() {
    let c = TcpConfig {
        cc: CcSpec::named("prague").unwrap(),
        iw: 10,
        ecn: true,
        accecn: true,
        l4s: true,
        pacing: true,
        ..cfg()
    };
    let (s, _, out) = established(c);
    assert_eq!(s.feedback, super::accecn::Feedback::AccEcn);
    assert_eq!(s.pacing_rate, 210_400);
    assert!(out.iter().all(|x| x.ecn == Ecn::Ect1));
    let (s, _, out) = established(TcpConfig {
        receiver_ecn: Some(super::EcnSupport::Classic),
        ..c
    });
    assert_eq!(s.feedback, super::accecn::Feedback::None);
    assert_eq!(s.pacing_rate, 0);
    assert_eq!(out.len(), 10, "the whole initial window at once");
    assert!(out.iter().all(|x| x.ecn == Ecn::NotEct));
}

/// AccECN receiver (RFC 9768 §3.2.2; Linux `tcp_ecn_received_counters`): the SYN-ACK
/// answers 0,1,0; every ACK carries r.cep mod 8 (from 5: AE and ECE); a change of the
/// IP-ECN field is ACKed at once, else every second segment.
#[test]
fn accecn_receiver_counts_ce_in_ace_and_acks_ecn_changes() {
    let c = TcpConfig {
        ecn: true,
        accecn: true,
        ..cfg()
    };
    let mut r = TcpReceiver::new(c, false);
    let (mut st, mut out) = (FlowStats::default(), Vec::new());
    let mut syn = Segment::default();
    syn.tcp.flags = F::SYN | F::ECE | F::CWR;
    syn.tcp.ae = true;
    r.on_segment(0, &syn, &mut out, &mut st);
    assert_eq!(
        (out[0].tcp.flags & (F::ECE | F::CWR), out[0].tcp.ae),
        (F::CWR, false)
    );
    out.clear();
    let seg = |i: u64, e: Ecn| {
        let mut s = data(i * MSS, 1000, 0);
        s.ecn = e;
        s
    };
    let ace = |s: &Segment| super::accecn::read_ace(s.tcp.flags, s.tcp.ae);
    let marks = [
        Ecn::Ect0,
        Ecn::Ect0,
        Ecn::Ect0,
        Ecn::Ce,
        Ecn::Ce,
        Ecn::Ce,
        Ecn::Ect0,
    ];
    let mut acks = Vec::new();
    for (i, e) in marks.iter().enumerate() {
        let n = out.len();
        r.on_segment(i as Nanos, &seg(i as u64, *e), &mut out, &mut st);
        if out.len() > n {
            acks.push((i, ace(out.last().unwrap())));
        }
    }
    // 0: not-ECT → ECT(0), at once, ACE 5; 2: second segment; 3: → CE, at once, 6;
    // 5: second segment, 8 mod 8 = 0; 6: CE → ECT(0), at once.
    assert_eq!(acks, vec![(0, 5), (2, 5), (3, 6), (5, 0), (6, 0)]);
    assert_eq!(r.r_cep, 8);
}

/// Prague grows inside the round after a CE reduction by the unmarked part of each ACK
/// (`Caps::grows_in_cwr`, Linux `prague_update_cwnd` under `cong_control`); DCTCP does
/// not grow on ACKs reporting CE there. IW 7 × 1000 B, AccECN: the first ACK (1 packet,
/// ACE 6: one mark) cuts 7000 → 3500 (α = 1); two ACKs of 3 packets with one mark each
/// (ACE 7, 0) add 2 × 2000 B of credit ≥ 3500: Prague's cwnd 4500, DCTCP's 3500.
#[test]
fn prague_grows_on_unmarked_packets_inside_the_cwr_round() {
    for (cc, want) in [("prague", 4500), ("dctcp", 3500)] {
        let c = TcpConfig {
            cc: CcSpec::named(cc).unwrap(),
            iw: 7,
            ecn: true,
            accecn: true,
            l4s: true,
            ..cfg()
        };
        let (mut s, mut st, mut out) = established(c);
        let t = out[0].tcp.ts_val;
        for (ack_no, ace) in [(1000, 6), (4000, 7), (7000, 0)] {
            let mut a = ack(ack_no, t);
            let (f, ae) = super::accecn::ace_flags(ace);
            a.tcp.flags |= f;
            a.tcp.ae = ae;
            out.clear();
            s.on_segment(200 * MS, &a, &mut out, &mut st);
        }
        assert_eq!(s.s_cep, 8, "{cc}");
        assert_eq!(s.w.cwnd, want, "{cc}");
    }
}
