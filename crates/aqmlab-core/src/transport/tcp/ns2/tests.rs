//! Hand-worked ns-2.35 traces: every expected number is derived in the comment next to
//! it from the ns-2 function it checks.
use super::rtt::Ns2Rtt;
use super::sender::{CwndAction, Ns2Sender};
use super::sink::Ns2Sink;
use super::*;
use crate::measure::flow_stats::FlowStats;
use crate::net::packet::tcp_flags;
use crate::sim::time::NS_PER_MS;
use crate::transport::tcp::{Segment, TcpConfig, TcpProfile};

const MS: Nanos = NS_PER_MS;

fn sender(agent: Ns2Agent) -> (Ns2Sender, FlowStats, Vec<Segment>) {
    let cfg = TcpProfile::Ns2.config();
    let opt = Ns2Options {
        agent,
        ..Ns2Options::default()
    };
    (
        Ns2Sender::new(&cfg, &opt, 0),
        FlowStats::default(),
        Vec::new(),
    )
}

/// The sink's ACK of ns-2 seqno `n` (the header carries n + 1).
fn ack(n: i64) -> Segment {
    let mut s = Segment::default();
    s.tcp.flags = tcp_flags::ACK;
    s.tcp.ack = (n + 1) as u64;
    s
}

fn data(seq: u64, at: Nanos) -> Segment {
    let mut s = Segment::default();
    s.tcp.seq = seq;
    s.tcp.payload = if seq == 0 { 0 } else { 1000 };
    s.tcp.ts_val = at;
    s
}

fn seqs(out: &mut Vec<Segment>) -> Vec<u64> {
    out.drain(..).map(|s| s.tcp.seq).collect()
}

/// A started infinite sender whose SYN (packet 0) was acknowledged at `t`.
fn established(agent: Ns2Agent, t: Nanos) -> (Ns2Sender, FlowStats, Vec<Segment>) {
    let (mut s, mut st, mut out) = sender(agent);
    s.write(0, u64::MAX, false, &mut out, &mut st);
    s.open(0, &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![0]);
    s.on_segment(t, &ack(0), &mut out, &mut st);
    (s, st, out)
}

#[test]
fn syn_then_initial_window_then_slow_start_and_linear_growth() {
    // cwnd_ = 1 for the SYN (set_initial_window with syn_, delay_growth_); its ACK
    // sets cwnd_ = windowInit_ = 2: packets 1 and 2 go out (send_much: t_seqno_ <=
    // highest_ack_ + window()).
    let (mut s, mut st, mut out) = established(Ns2Agent::NewReno, 100 * MS);
    assert_eq!(s.cwnd, 2.0);
    assert_eq!(seqs(&mut out), vec![1, 2]);
    let (first, second) = (out.len(), 0);
    assert_eq!(first, second);
    // Slow start below ssthresh_ = window_ = 20: +1 per ACK, two packets per ACK.
    s.on_segment(200 * MS, &ack(1), &mut out, &mut st);
    assert_eq!(s.cwnd, 3.0);
    assert_eq!(seqs(&mut out), vec![3, 4]);
    for n in 2..=18 {
        s.on_segment(300 * MS, &ack(n), &mut out, &mut st);
    }
    // 17 more ACKs: cwnd 20 = ssthresh_. The window is capped at window_ = 20, so
    // t_seqno_ stops at highest_ack_ + 20 = 38.
    assert_eq!(s.cwnd, 20.0);
    assert_eq!(s.t_seqno, 18 + 20 + 1);
    // Congestion avoidance: cwnd_ += 1/cwnd_ per ACK (increase_num_ 1).
    s.on_segment(400 * MS, &ack(19), &mut out, &mut st);
    assert_eq!(s.cwnd, 20.0 + 1.0 / 20.0);
    s.on_segment(400 * MS, &ack(20), &mut out, &mut st);
    assert_eq!(s.cwnd, 20.05 + 1.0 / 20.05);
}

#[test]
fn rtt_in_ticks_and_rto_rounding() {
    // rtt_update: 95 ms with boot_time_ 0 and a send on a tick boundary is
    // int(95/10) = 9 ticks. First sample: t_srtt_ = 9 << 3 = 72, t_rttvar_ = 9 << 1 = 18;
    // t_rtxcur_ = ((18 << 3) + 72) >> 3 = 27 ticks = 270 ms.
    let mut r = Ns2Rtt::new(10 * MS, 3000 * MS, 200 * MS, 60_000 * MS, 0);
    assert_eq!(r.timeout(), 3000 * MS); // rtxcur_init_ before any sample
    r.update(95 * MS, 95 * MS);
    assert_eq!((r.t_rtt, r.t_srtt, r.t_rttvar), (9, 72, 18));
    assert_eq!(r.timeout(), 270 * MS);
    // A 3-tick sample: delta = 3 - 9 = -6: t_srtt_ = 66; |delta| - (18 >> 2) = 2:
    // t_rttvar_ = 20; RTO = ((20 << 3) + 66) >> 3 = 28 ticks.
    r.update(1000 * MS, 30 * MS);
    assert_eq!((r.t_srtt, r.t_rttvar), (66, 20));
    assert_eq!(r.timeout(), 280 * MS);
    // Backoff doubles; after the fourth (t_backoff_ 16 > 8) the SRTT is folded into
    // the variation and restarted: t_rttvar_ += 66 >> 3, t_srtt_ = 0.
    r.backoff();
    assert_eq!(r.timeout(), 560 * MS);
    r.backoff();
    r.backoff();
    assert_eq!(r.t_srtt, 66);
    r.backoff();
    assert_eq!((r.t_backoff, r.t_srtt, r.t_rttvar), (16, 0, 28));
    // The boot-time phase: a 95 ms RTT sent 6 ms before a tick boundary crosses 10.
    let mut r = Ns2Rtt::new(10 * MS, 3000 * MS, 200 * MS, 60_000 * MS, 4 * MS);
    r.update(95 * MS, 95 * MS);
    assert_eq!(r.t_rtt, 9); // (95 + 4) / 10
    let mut r = Ns2Rtt::new(10 * MS, 3000 * MS, 200 * MS, 60_000 * MS, 6 * MS);
    r.update(95 * MS, 95 * MS);
    assert_eq!(r.t_rtt, 10); // (95 + 6) / 10
}

#[test]
fn minrto_floors_before_the_backoff_and_maxrto_caps() {
    // 3 ticks: t_rtxcur_ = ((6 << 3) + 24) >> 3 = 9 ticks = 90 ms < minrto_ 200 ms:
    // the timeout is minrto_ × backoff (rfc2988_ order).
    let mut r = Ns2Rtt::new(10 * MS, 3000 * MS, 200 * MS, 60_000 * MS, 0);
    r.update(30 * MS, 30 * MS);
    assert_eq!(r.timeout(), 200 * MS);
    r.backoff();
    assert_eq!(r.timeout(), 400 * MS);
    for _ in 0..12 {
        r.backoff();
    }
    assert_eq!(r.timeout(), 60_000 * MS);
    assert!(r.t_backoff <= 1 << 10); // stops doubling once the cap is reached
}

#[test]
fn timeout_halves_ssthresh_and_restarts_from_one_packet() {
    let (mut s, mut st, mut out) = established(Ns2Agent::NewReno, 100 * MS);
    s.on_segment(200 * MS, &ack(1), &mut out, &mut st); // cwnd 3, sent 1..4
    out.clear();
    assert_eq!(s.maxseq, 4);
    // The RTT sample of packet 0 (100 ms: 10 ticks) set t_rtxcur_ = (10·8 + 5·4·8/4)
    // ... = ((10 << 3) + 80) >> 3 = 20 ticks = 200 ms.
    let at = s.rtx_at.unwrap();
    s.on_timer(at, &mut out, &mut st);
    // slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART): ssthresh_ = int(3 / 2) = 1 → 2
    // (the floor), cwnd_ = 1; resend from highest_ack_ + 1 = 2; backed-off timer.
    assert_eq!((s.ssthresh, s.cwnd), (2, 1.0));
    assert_eq!(seqs(&mut out), vec![2]);
    assert_eq!(s.rtt.t_backoff, 2);
    assert_eq!(s.last_cwnd_action, CwndAction::Timeout);
    assert_eq!(st.timeouts, 1);
}

/// Bring a sender to cwnd 8 in congestion avoidance with packets 1..=k acked.
fn at_window_8(agent: Ns2Agent) -> (Ns2Sender, FlowStats, Vec<Segment>) {
    let (mut s, mut st, mut out) = established(agent, 100 * MS);
    s.ssthresh = 8;
    for n in 1..=6 {
        s.on_segment(200 * MS, &ack(n), &mut out, &mut st);
    }
    // 2 + 6 = 8 = ssthresh_: highest_ack_ 6, sent up to 14.
    assert_eq!(s.cwnd, 8.0);
    assert_eq!(s.t_seqno - 1, 14);
    out.clear();
    (s, st, out)
}

#[test]
fn reno_fast_recovery_inflates_and_deflates() {
    let (mut s, mut st, mut out) = at_window_8(Ns2Agent::Reno);
    // Packet 7 lost: packets 8.. bring dupacks of 6. The first two each send one new
    // packet (send_one: t_seqno_ <= highest_ack_ + cwnd_ + dupacks_ = 6 + 8 + 1).
    s.on_segment(300 * MS, &ack(6), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![15]);
    s.on_segment(300 * MS, &ack(6), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![16]);
    // The third: slowdown to ssthresh_ = int(8/2) = 4, cwnd_ = 4, retransmit 7,
    // dupwnd_ = 3; window() = 4 + 3 = 7 < 16 - 6 outstanding: nothing new.
    s.on_segment(300 * MS, &ack(6), &mut out, &mut st);
    assert_eq!((s.ssthresh, s.cwnd, s.dupwnd), (4, 4.0, 3));
    assert_eq!(seqs(&mut out), vec![7]);
    // Each further dupack inflates by one; at dupwnd_ 7 the window (11) passes
    // t_seqno_ 17 ≤ 6 + 11: packet 17 goes.
    for _ in 0..3 {
        s.on_segment(300 * MS, &ack(6), &mut out, &mut st);
    }
    assert!(out.is_empty());
    s.on_segment(300 * MS, &ack(6), &mut out, &mut st);
    assert_eq!(s.dupwnd, 7);
    assert_eq!(seqs(&mut out), vec![17]);
    // The new ACK deflates (dupwnd_ 0) and opens the window in congestion avoidance:
    // cwnd_ = 4 + 1/4.
    s.on_segment(400 * MS, &ack(16), &mut out, &mut st);
    assert_eq!((s.dupwnd, s.cwnd), (0, 4.25));
    assert_eq!(s.last_cwnd_action, CwndAction::Exited);
    assert_eq!(st.retransmits, 1);
}

#[test]
fn reno_leaves_recovery_on_a_partial_ack_and_does_not_fast_retransmit_again() {
    let (mut s, mut st, mut out) = at_window_8(Ns2Agent::Reno);
    for _ in 0..3 {
        s.on_segment(300 * MS, &ack(6), &mut out, &mut st);
    }
    assert_eq!(s.recover, 16);
    // Packets 7 and 10 lost: the retransmission of 7 brings a partial ACK of 9. Reno
    // leaves recovery (dupwnd_ 0, cwnd_ 4 + 1/4) ...
    s.on_segment(400 * MS, &ack(9), &mut out, &mut st);
    assert_eq!(s.dupwnd, 0);
    out.clear();
    // ... and three dupacks of 9 do nothing: highest_ack_ 9 <= recover_ 16 and the
    // last action is no longer DUPACK (bugFix_): it waits for the timeout.
    for _ in 0..3 {
        s.on_segment(400 * MS, &ack(9), &mut out, &mut st);
    }
    assert_eq!(s.cwnd, 4.25);
    assert!(!seqs(&mut out).contains(&10));
}

#[test]
fn newreno_partial_ack_deflates_and_retransmits_the_next_hole() {
    let (mut s, mut st, mut out) = at_window_8(Ns2Agent::NewReno);
    for _ in 0..3 {
        s.on_segment(300 * MS, &ack(6), &mut out, &mut st);
    }
    for _ in 0..4 {
        s.on_segment(300 * MS, &ack(6), &mut out, &mut st);
    }
    // dupwnd_ 3 + 4 = 7, cwnd_ 4, recover_ = 16; 15, 16 (limited transmit), 7, 17 sent.
    assert_eq!(seqs(&mut out), vec![15, 16, 7, 17]);
    // Partial ACK of 9 (10 lost too): partialnewack with partial_window_deflation_:
    // deflate = 9 - 6 = 3 < dupwnd_ 7: dupwnd_ -= 3 - 1 → 5; retransmit 10 at once;
    // dupacks_ stays 7, so send_much(maxburst 2): window 4 + 5 = 9, 18 ≤ 9 + 9: 18.
    s.on_segment(400 * MS, &ack(9), &mut out, &mut st);
    assert_eq!((s.dupwnd, s.cwnd, s.last_ack), (5, 4.0, 9));
    assert_eq!(seqs(&mut out), vec![10, 18]);
    // The full ACK (≥ recover_ 16) ends recovery: dupwnd_ 0, cwnd_ 4 + 1/4.
    s.on_segment(500 * MS, &ack(17), &mut out, &mut st);
    assert_eq!((s.dupwnd, s.cwnd, s.dupacks), (0, 4.25, 0));
    assert_eq!(s.last_cwnd_action, CwndAction::Exited);
}

#[test]
fn tcpsink_acks_every_packet_with_the_cumulative_seqno() {
    let mut st = FlowStats::default();
    let mut out = Vec::new();
    let mut k = Ns2Sink::new(Ns2SinkKind::TcpSink, 0, ACK_SIZE);
    for (seq, cum) in [(0, 0), (1, 1), (3, 1), (4, 1), (2, 4)] {
        k.on_segment(0, &data(seq, 0), &mut out, &mut st);
        let a = out.pop().unwrap();
        assert_eq!(a.tcp.ack as i64 - 1, cum);
        assert_eq!(a.wire_size(), 40);
    }
    assert_eq!(st.bytes_delivered, 4000);
}

#[test]
fn delack_sink_acks_every_second_packet_or_after_100ms() {
    let mut st = FlowStats::default();
    let mut out = Vec::new();
    let mut k = Ns2Sink::new(Ns2SinkKind::DelAck, DELACK_INTERVAL, ACK_SIZE);
    // The SYN (packet 0) is acknowledged at once (SYN_immediate_ack_).
    k.on_segment(0, &data(0, 0), &mut out, &mut st);
    assert_eq!(out.len(), 1);
    out.clear();
    // Packet 1 in order: held, timer at 10 + 100 ms.
    k.on_segment(10 * MS, &data(1, 0), &mut out, &mut st);
    assert!(out.is_empty());
    assert_eq!(k.next_deadline(), Some(110 * MS));
    // Packet 2 with the timer running: ACK 2 at once, timer cancelled.
    k.on_segment(20 * MS, &data(2, 0), &mut out, &mut st);
    assert_eq!(out.pop().unwrap().tcp.ack, 3);
    assert_eq!(k.next_deadline(), None);
    // Packet 3 alone: its ACK leaves when the timer fires, 100 ms later.
    k.on_segment(30 * MS, &data(3, 0), &mut out, &mut st);
    k.on_timer(129 * MS, &mut out);
    assert!(out.is_empty());
    k.on_timer(130 * MS, &mut out);
    assert_eq!(out.pop().unwrap().tcp.ack, 4);
    // Out of order (5 before 4): ACK at once (a dupack of 3); 4 fills the hole
    // (4 < maxseen_ 5, RFC2581_immediate_ack_): ACK 5 at once.
    k.on_segment(200 * MS, &data(5, 0), &mut out, &mut st);
    assert_eq!(out.pop().unwrap().tcp.ack, 4);
    k.on_segment(210 * MS, &data(4, 0), &mut out, &mut st);
    assert_eq!(out.pop().unwrap().tcp.ack, 6);
    assert_eq!(k.next_deadline(), None);
}

#[test]
fn profile_defaults_are_ns2s() {
    let c: TcpConfig = TcpProfile::Ns2.config();
    assert_eq!((c.mss, c.iw, c.header_bytes, c.dupthresh), (1000, 2, 40, 3));
    assert_eq!(
        (c.min_rto, c.initial_rto, c.max_rto),
        (200 * MS, 3000 * MS, 60_000 * MS)
    );
    assert_eq!(c.delack, 100 * MS);
    let o = c.ns2.unwrap();
    assert_eq!((o.window, o.tick, o.maxburst), (20, 10 * MS, 0));
}

#[test]
fn sack1_sink_reports_the_newest_block_first_then_older_ones() {
    let mut st = FlowStats::default();
    let mut out = Vec::new();
    let mut k = Ns2Sink::new(Ns2SinkKind::Sack1, 0, ACK_SIZE);
    for seq in 0..=3 {
        k.on_segment(0, &data(seq, 0), &mut out, &mut st);
    }
    assert_eq!(out.drain(..).map(|a| a.tcp.sack_len).max(), Some(0));
    // 4 and 7 lost: 5 gives the block [5, 6), 6 grows it to [5, 7); 8 opens [8, 9)
    // and repeats the older [5, 7) from the stack (Sacker::append_ack).
    k.on_segment(0, &data(5, 0), &mut out, &mut st);
    let a = out.pop().unwrap();
    assert_eq!((a.tcp.ack, a.tcp.sack_len, a.tcp.sack[0]), (4, 1, (5, 6)));
    assert_eq!(a.wire_size(), 48); // 40 B + 8 B per block
    k.on_segment(0, &data(6, 0), &mut out, &mut st);
    let a = out.pop().unwrap();
    assert_eq!((a.tcp.sack_len, a.tcp.sack[0]), (1, (5, 7)));
    k.on_segment(0, &data(8, 0), &mut out, &mut st);
    let a = out.pop().unwrap();
    assert_eq!(&a.tcp.sack[..a.tcp.sack_len as usize], &[(8, 9), (5, 7)]);
    // The retransmitted 4 fills the first hole: cumulative 6 (header 7); the stack's
    // [5, 7) is now covered and popped, [8, 9) stays.
    k.on_segment(0, &data(4, 0), &mut out, &mut st);
    let a = out.pop().unwrap();
    assert_eq!(a.tcp.ack, 7);
    assert_eq!(&a.tcp.sack[..a.tcp.sack_len as usize], &[(8, 9)]);
}

#[test]
fn scoreboard_retransmits_holes_below_sacked_blocks_once() {
    let mut sb = scoreboard::ScoreBoard::default();
    // Cumulative ACK 6; SACKed [8, 10) and [12, 13): holes 7, 10, 11 (13 and up are
    // not below a SACKed block: never retransmitted from the scoreboard).
    sb.update(6, &[(8, 10), (12, 13)]);
    assert!(sb.changed);
    assert_eq!(sb.next_retran(), Some(7));
    sb.mark_retran(7);
    assert_eq!(sb.next_retran(), Some(10));
    sb.mark_retran(10);
    assert_eq!(sb.next_retran(), Some(11));
    sb.mark_retran(11);
    assert_eq!(sb.next_retran(), None);
    // The same blocks again change nothing (not a new duplicate ACK for Sack1).
    sb.update(6, &[(8, 10), (12, 13)]);
    assert!(!sb.changed);
}

#[test]
fn sack1_recovery_is_limited_by_pipe() {
    let (mut s, mut st, mut out) = at_window_8(Ns2Agent::Sack1);
    // 7 lost, 8.. arrive: each dupack carries a new SACK block, so each counts.
    let dup = |blocks: &[(u64, u64)]| {
        let mut a = ack(6);
        for (i, b) in blocks.iter().enumerate() {
            a.tcp.sack[i] = *b;
        }
        a.tcp.sack_len = blocks.len() as u8;
        a
    };
    s.on_segment(300 * MS, &dup(&[(8, 9)]), &mut out, &mut st);
    s.on_segment(300 * MS, &dup(&[(8, 10)]), &mut out, &mut st);
    // Limited transmit on the first two.
    assert_eq!(seqs(&mut out), vec![15, 16]);
    // Third: pipe_ = maxseq_ 16 - highest_ack_ 6 - 3 = 7; cwnd_ 4, ssthresh_ 4;
    // retransmit 7 (not counted in pipe_ by dupack_action).
    s.on_segment(300 * MS, &dup(&[(8, 11)]), &mut out, &mut st);
    assert!(s.fastrecov);
    assert_eq!((s.pipe, s.cwnd, s.ssthresh), (7, 4.0, 4));
    assert_eq!(seqs(&mut out), vec![7]);
    // Each further ACK takes one from pipe_; sending resumes when pipe_ < 4: after
    // four more dupacks (pipe_ 3), one new packet (17), pipe_ back to 4.
    for r in 12..=14 {
        s.on_segment(300 * MS, &dup(&[(8, r)]), &mut out, &mut st);
        assert!(out.is_empty());
    }
    s.on_segment(300 * MS, &dup(&[(8, 15)]), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![17]);
    assert_eq!(s.pipe, 4);
    // The ACK of everything up to recover_ (16) ends recovery without growth.
    s.on_segment(400 * MS, &ack(16), &mut out, &mut st);
    assert!(!s.fastrecov);
    assert_eq!(s.cwnd, 4.0);
}

// ---- Agent/TCP/Linux + select_ca cubic (tcp/tcp-linux.cc) -----------------------------

fn cubic_of(s: &Ns2Sender) -> cubic::NsCubic {
    match s.linux.as_ref().unwrap().ca {
        sender::linux::LinuxCa::Cubic(c) => c,
        other => panic!("not cubic: {other:?}"),
    }
}

fn linux_window(s: &Ns2Sender) -> (u64, u64) {
    let w = s.linux.as_ref().unwrap().w;
    (w.snd_cwnd, w.snd_ssthresh)
}

/// Opened, SYN and packet 1 acknowledged at 100 ms: t_seqno_ 6, cwnd 4, 2..5 out.
fn linux_at_cwnd_4() -> (Ns2Sender, FlowStats, Vec<Segment>) {
    linux_with_at_cwnd_4(LinuxCaKind::Cubic)
}

fn linux_with_at_cwnd_4(ca: LinuxCaKind) -> (Ns2Sender, FlowStats, Vec<Segment>) {
    let cfg = TcpProfile::Ns2.config();
    let opt = Ns2Options {
        agent: Ns2Agent::Linux,
        linux_ca: ca,
        ..Ns2Options::default()
    };
    let (mut s, mut st, mut out) = (
        Ns2Sender::new(&cfg, &opt, 0),
        FlowStats::default(),
        Vec::new(),
    );
    s.write(0, u64::MAX, false, &mut out, &mut st);
    // delay_growth_ false: snd_cwnd = windowInit_ 2 at once, the SYN and packet 1.
    s.open(0, &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![0, 1]);
    // ACK 0: prior in flight 2 >= cwnd 2, slow start (ABC, 1000 B acked): cwnd 3;
    // in flight 2 - 1 = 1 < 3: packets 2 and 3.
    s.on_segment(100 * MS, &ack(0), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![2, 3]);
    assert_eq!(linux_window(&s), (3, 20));
    // RTT 100 ms in 1 ms ticks: srtt 800 (×8), rttvar 200 (×4), RTO (1600+800)>>3 =
    // 300 ticks; the timer is re-armed from this ACK.
    assert_eq!((s.rtt.t_srtt, s.rtt.t_rttvar), (800, 200));
    assert_eq!(s.rtx_at, Some(400 * MS));
    s.on_segment(100 * MS, &ack(1), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![4, 5]);
    assert_eq!(linux_window(&s), (4, 20));
    (s, st, out)
}

#[test]
fn linux_rto_marks_everything_lost_and_keeps_t_seqno() {
    let (mut s, mut st, mut out) = linux_at_cwnd_4();
    // enter_loss: ssthresh = max(4·819/1024, 2) = 3 (W_max 4), cwnd 1, 2..5 lost;
    // only packet 2 fits; t_seqno_ stays 6 (reset_rtx_timer is mild); RTO doubles.
    s.on_timer(400 * MS, &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![2]);
    assert_eq!(linux_window(&s), (1, 3));
    assert_eq!((s.t_seqno, st.timeouts, st.retransmits), (6, 1, 1));
    assert_eq!(s.rtx_at, Some(1000 * MS));
    let lx = s.linux.as_ref().unwrap();
    assert_eq!(lx.sb.fack_out, 3);
    assert_eq!(cubic_of(&s).last_max_cwnd, 0); // bictcp_reset on Loss
                                               // ACK 2: in flight before = 6 - 2 - 3 = 1 >= cwnd 1, slow start in Loss: cwnd 2;
                                               // 3 and 4 are the next lost packets.
    s.on_segment(500 * MS, &ack(2), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![3, 4]);
    assert_eq!(linux_window(&s), (2, 3));
    // ACK 5 (5 had arrived): in flight before 6 - 3 - 1 = 2 >= 2: cwnd 3; 5 >= recover_
    // 5 ends Loss (cwnd 3 is not below ssthresh 3); new data 6, 7, 8.
    s.on_segment(600 * MS, &ack(5), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![6, 7, 8]);
    assert_eq!(linux_window(&s), (3, 3));
    assert_eq!(
        s.linux.as_ref().unwrap().state,
        sender::linux::CaState::Open
    );
}

#[test]
fn linux_without_sack_ignores_duplicate_acks() {
    let (mut s, mut st, mut out) = linux_at_cwnd_4();
    for _ in 0..5 {
        s.on_segment(150 * MS, &ack(1), &mut out, &mut st);
    }
    // No SACK blocks, empty scoreboard: no loss is detected, nothing is sent, but
    // each accepted ACK re-arms the timer (time_processing, timerfix_).
    assert!(out.is_empty());
    assert_eq!(linux_window(&s), (4, 20));
    assert_eq!(s.rtx_at, Some(450 * MS));
}

#[test]
fn linux_sack_fack_loss_enters_recovery_with_cubic_ssthresh() {
    let (mut s, mut st, mut out) = linux_at_cwnd_4();
    // ACK 2: cwnd 5, in flight 3: packets 6 and 7.
    s.on_segment(150 * MS, &ack(2), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![6, 7]);
    let dup = |right: u64| {
        let mut a = ack(2);
        a.tcp.sack[0] = (4, right);
        a.tcp.sack_len = 1;
        a
    };
    // 3 is lost. SACK [4,5), [4,6), [4,7): fack 4..6, threshold fack - 4 < 3: no
    // loss; each SACKed packet leaves the pipe, so one new packet per ACK.
    for (r, next) in [(5, 8), (6, 9), (7, 10)] {
        s.on_segment(200 * MS, &dup(r), &mut out, &mut st);
        assert_eq!(seqs(&mut out), vec![next]);
    }
    // SACK [4,8): fack 7, threshold 3: packet 3 lost. ssthresh = 5·819/1024 = 3,
    // cwnd 3; next_pkts_in_flight_ 5 -> min(5, in flight 3 + 1) = 4: retransmit 3.
    s.on_segment(200 * MS, &dup(8), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![3]);
    assert_eq!(linux_window(&s), (3, 3));
    let lx = s.linux.as_ref().unwrap();
    assert_eq!(lx.state, sender::linux::CaState::Recovery);
    assert_eq!((lx.next_pkts_in_flight, s.recover), (3, 10));
    assert_eq!(cubic_of(&s).last_max_cwnd, 5);
    // Rate halving: SACK [4,9) frees one packet of flight (4 -> 3), but the allowance
    // is min(3, 3 + 1) = 3 and snd_cwnd 3: nothing; the next, [4,10), sends 11
    // (flight 2 < 3), and the allowance falls to max(3 - 1, 1) = 2.
    s.on_segment(210 * MS, &dup(9), &mut out, &mut st);
    assert!(out.is_empty());
    s.on_segment(210 * MS, &dup(10), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![11]);
    assert_eq!(s.linux.as_ref().unwrap().next_pkts_in_flight, 2);
    // ACK 10 >= recover_ 10: Recovery ends (no cong_avoid in Recovery), the
    // scoreboard is cleared, cwnd 3 = ssthresh stays; flight 1 (packet 11): 12, 13.
    s.on_segment(250 * MS, &ack(10), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![12, 13]);
    assert_eq!(linux_window(&s), (3, 3));
    let lx = s.linux.as_ref().unwrap();
    assert_eq!(
        (lx.state, lx.next_pkts_in_flight),
        (sender::linux::CaState::Open, 0)
    );
    assert!(lx.sb.is_empty());
}

#[test]
fn linux_reno_recovery_window_is_half_of_ssthresh() {
    // The same trace as above with select_ca reno: slow start is the same (ABC), the
    // FACK loss at cwnd 5 gives ssthresh max(5/2, 2) = 2 and, through min_cwnd
    // (tcp-linux.cc:498), snd_cwnd = 2/2 = 1; the rate halving still lets packet 3 go.
    let (mut s, mut st, mut out) = linux_with_at_cwnd_4(LinuxCaKind::Reno);
    s.on_segment(150 * MS, &ack(2), &mut out, &mut st);
    assert_eq!(seqs(&mut out), vec![6, 7]);
    for r in 5..=8u64 {
        let mut a = ack(2);
        a.tcp.sack[0] = (4, r);
        a.tcp.sack_len = 1;
        s.on_segment(200 * MS, &a, &mut out, &mut st);
    }
    assert_eq!(seqs(&mut out), vec![8, 9, 10, 3]);
    assert_eq!(linux_window(&s), (1, 2));
}

#[test]
fn linux_rtt_update_damps_falling_samples() {
    // tcp-linux.cc:282: srtt 100 ticks, rttvar 50; a 20-tick sample: delta -80,
    // srtt 720; |delta| - 50 = 30 > 0 -> 30 >> 3 = 3: rttvar 203 (tcp.cc's rule: 230).
    let mut r = Ns2Rtt::new(MS, 3000 * MS, 200 * MS, 120_000 * MS, 0);
    r.update_linux(100 * MS, 100 * MS);
    assert_eq!((r.t_srtt, r.t_rttvar), (800, 200));
    r.update_linux(200 * MS, 20 * MS);
    assert_eq!((r.t_srtt, r.t_rttvar), (720, 203));
}
