//! Hand-worked tests of `bbr.rs` (kept apart so the model file stays short).

use super::*;
const MS: Nanos = NS_PER_MS;
const MSS: u64 = 1000;

fn window() -> Window {
    Window {
        cwnd: 10 * MSS,
        ssthresh: u64::MAX,
        mss: MSS,
    }
}

/// An ACK at `now` with a bandwidth sample of `bw` B/s (over 100 ms) and an RTT
/// sample `rtt`; `round`: it ends a packet-timed round.
struct Feed {
    delivered: u64,
}
impl Feed {
    #[allow(clippy::too_many_arguments)]
    fn ack(
        &mut self,
        b: &mut Bbr,
        w: &mut Window,
        now: Nanos,
        bw: u64,
        rtt: Nanos,
        in_flight: u64,
        round: bool,
    ) {
        let acked = 2 * MSS;
        self.delivered += acked;
        let prior = if round {
            b.next_rtt_delivered
        } else {
            b.next_rtt_delivered.saturating_sub(1)
        };
        let rs = RateSample {
            now,
            delivered: Some(bw / 10),
            interval: 100 * MS,
            prior_delivered: prior,
            acked_sacked: acked,
            prior_in_flight: in_flight,
            in_flight,
            rtt: Some(rtt),
            tp_delivered: self.delivered,
            delivered_mstamp: now,
            edt: now,
            ..RateSample::default()
        };
        b.on_ack(w, &rs, 10);
    }
}

fn started(b: &mut Bbr, w: &mut Window) {
    b.init(w, 0, Some(100 * MS));
    assert_eq!(b.mode, Mode::Startup);
    // 10 segments / 100 ms · 2.89 · 99 %.
    assert_eq!(b.pacing_rate, 100_000 * HIGH_GAIN * 99 / (UNIT * 100));
}

/// Rounds with bw 1, 2, 4 MB/s grow ≥ 25 %; then 4.5, 4.9, 4.99 MB/s do not (all
/// below 5 MB/s = 4 · 5/4): the third such round ends STARTUP. ssthresh is then the
/// BDP at gain 1 with STARTUP's pacing rate in the TSO goal: ⌈4.99 MB/s · 0.1 s /
/// 1000 B⌉ = 499 segments + 3 · 13 (4.99 MB/s · 2.89 · 0.99 = 14.3 MB/s, 1 ms of it
/// = 13 segments) = 538. In flight 600 KB is above it, so DRAIN follows; from the next
/// ACK the pacing rate is the drain rate (1.7 MB/s: TSO goal 2), the target
/// 499 + 6 = 505 → 506 segments, and DRAIN ends on the first ACK with ≤ 506 000 B.
#[test]
fn startup_ends_after_three_rounds_without_25_percent_growth_then_drains() {
    let (mut b, mut w) = (Bbr::new(0, false, false), window());
    started(&mut b, &mut w);
    let mut f = Feed { delivered: 0 };
    let mut t = 100 * MS;
    for bw in [1_000_000, 2_000_000, 4_000_000, 4_500_000, 4_900_000] {
        f.ack(&mut b, &mut w, t, bw, 100 * MS, 600_000, true);
        assert_eq!(b.mode, Mode::Startup, "bw {bw}");
        t += 100 * MS;
    }
    assert_eq!(b.full_bw, 4_000_000);
    assert_eq!(b.full_bw_cnt, 2);
    f.ack(&mut b, &mut w, t, 4_990_000, 100 * MS, 600_000, true);
    assert!(b.full_bw_reached);
    assert_eq!(b.mode, Mode::Drain);
    assert_eq!(b.pacing_gain, DRAIN_GAIN);
    assert_eq!(b.cwnd_gain, HIGH_GAIN);
    assert_eq!(w.ssthresh, 538 * MSS);
    f.ack(&mut b, &mut w, t + MS, 4_990_000, 100 * MS, 507_000, false);
    assert_eq!(b.mode, Mode::Drain);
    f.ack(
        &mut b,
        &mut w,
        t + 2 * MS,
        4_990_000,
        100 * MS,
        506_000,
        false,
    );
    assert_eq!(b.mode, Mode::ProbeBw);
    assert_ne!(b.cycle_idx, 1, "never enters PROBE_BW in the 3/4 phase");
    assert_eq!(b.cwnd_gain, CWND_GAIN);
}

#[test]
fn growth_of_25_percent_each_round_keeps_startup() {
    let (mut b, mut w) = (Bbr::new(0, false, false), window());
    started(&mut b, &mut w);
    let mut f = Feed { delivered: 0 };
    let mut bw = 1_000_000u64;
    for i in 0..10 {
        f.ack(&mut b, &mut w, (i + 1) * 100 * MS, bw, 100 * MS, 0, true);
        bw = bw * 5 / 4;
    }
    assert_eq!(b.mode, Mode::Startup);
    assert_eq!(b.full_bw_cnt, 0);
}

/// In PROBE_BW a phase at gain 1 ends on the first ACK more than min_rtt (100 ms)
/// after it began: with ACKs 60 ms apart, every second ACK. The 5/4 phase also
/// needs in flight ≥ 5/4 BDP (or a loss): with 100 KB in flight it stays. The
/// pacing rate follows the cycle's gain.
#[test]
fn probe_bw_cycles_the_gains_every_min_rtt() {
    let (mut b, mut w) = (Bbr::new(0, false, false), window());
    started(&mut b, &mut w);
    b.full_bw_reached = true;
    b.bw.update(BW_RTTS, 0, 1_000_000);
    b.reset_probe_bw(0);
    // Force the phase after the 3/4 one: 1.0 from here on for six phases.
    b.cycle_idx = 2;
    b.update_gains();
    let mut f = Feed { delivered: 0 };
    let mut seen = vec![];
    for k in 1..=14 {
        f.ack(
            &mut b,
            &mut w,
            k * 60 * MS,
            1_000_000,
            100 * MS,
            100_000,
            false,
        );
        seen.push(b.cycle_idx);
    }
    assert_eq!(seen, [2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 0, 0, 0]);
    assert_eq!(b.pacing_gain, UNIT * 5 / 4);
    assert_eq!(b.pacing_rate, bw_to_pacing_rate(1_000_000, UNIT * 5 / 4));
}

/// No RTT sample at or below min_rtt for 10 s: PROBE_RTT caps cwnd at 4 segments;
/// once in flight is ≤ 4 segments it stays 200 ms and until a round ends, then
/// returns to PROBE_BW with the cwnd from before.
#[test]
fn probe_rtt_after_ten_seconds_without_a_new_min_rtt() {
    let (mut b, mut w) = (Bbr::new(0, false, false), window());
    started(&mut b, &mut w);
    b.full_bw_reached = true;
    b.bw.update(BW_RTTS, 0, 1_000_000);
    b.reset_probe_bw(0);
    let mut f = Feed { delivered: 0 };
    w.cwnd = 200 * MSS;
    let mut t = 0;
    while t < 10 * NS_PER_S {
        t += 500 * MS;
        f.ack(&mut b, &mut w, t, 1_000_000, 120 * MS, 150_000, false);
        assert_eq!(b.mode, Mode::ProbeBw, "at {t}");
    }
    let before = w.cwnd;
    f.ack(&mut b, &mut w, t + 1, 1_000_000, 120 * MS, 150_000, false);
    assert_eq!(b.mode, Mode::ProbeRtt);
    assert_eq!(b.min_rtt, 120 * MS, "an expired filter takes the sample");
    assert_eq!(w.cwnd, CWND_MIN * MSS);
    // In flight still above 4 segments: the 200 ms have not started.
    f.ack(
        &mut b,
        &mut w,
        t + 10 * MS,
        1_000_000,
        120 * MS,
        5 * MSS,
        false,
    );
    assert!(b.probe_rtt_done.is_none());
    let low = t + 20 * MS;
    f.ack(&mut b, &mut w, low, 1_000_000, 120 * MS, 4 * MSS, false);
    assert_eq!(b.probe_rtt_done, Some(low + PROBE_RTT_TIME));
    // A round ends, but 200 ms have not passed.
    f.ack(
        &mut b,
        &mut w,
        low + 150 * MS,
        1_000_000,
        120 * MS,
        4 * MSS,
        true,
    );
    assert_eq!(b.mode, Mode::ProbeRtt);
    // 200 ms passed and the round is done.
    f.ack(
        &mut b,
        &mut w,
        low + 201 * MS,
        1_000_000,
        120 * MS,
        4 * MSS,
        false,
    );
    assert_eq!(b.mode, Mode::ProbeBw);
    assert!(w.cwnd >= before, "cwnd {} restored to {before}", w.cwnd);
}

#[test]
fn max_filter_keeps_the_best_of_the_last_ten_rounds_by_subwindows() {
    let mut f = MaxFilter::default();
    f.update(BW_RTTS, 1, 100);
    // Within the first quarter of the window the best's sub-window is still open:
    // a lower sample is not kept (Linux `minmax_subwin_update`).
    f.update(BW_RTTS, 2, 50);
    // Round 11 (10 rounds on, still in the window) opens the 2nd/3rd-best slots.
    assert_eq!(f.update(BW_RTTS, 11, 40), 100);
    // Round 12: the 100 of round 1 is 11 rounds old; the 40 of round 11 is next.
    assert_eq!(f.update(BW_RTTS, 12, 30), 40);
    assert_eq!(f.update(BW_RTTS, 13, 200), 200);
}

/// `bbr_update_ack_aggregation` by hand, bw = 1 segment/ms (10^6 B/s, MSS 1000):
/// - 10 ms, 2 acked: expected over [0, 10 ms] = 10 ≥ 0 acked → new epoch at 10 ms; 2.
/// - 12 ms, 2: expected 2 ≥ 2 → new epoch at 12 ms; extra 2.
/// - 12.5 ms, 2: expected ⌊0.5⌋ = 0 < 2: epoch goes on, 4 acked, extra 4.
/// - 13 ms, 4: expected 1, 8 acked, extra 7 (the max).
/// - 20 ms, 2: expected 8 ≥ 8 → new epoch, extra 2; the max stays 7.
///
/// The allowance is 7 segments once the pipe is full (0 before, 0 when off); with
/// min_rtt 50 ms the cwnd target is 2·BDP (100) + 7 + 3 TSO goals = 110, even, instead
/// of 103 → 104. A cwnd of 5 caps an excess at 5; after 5 round starts the other
/// window slot is cleared and used, after 5 more the first one.
#[test]
fn extra_acked_by_hand() {
    let mut b = Bbr::new(0, true, false);
    b.bw.update(BW_RTTS, 0, 1_000_000);
    b.min_rtt = 50 * MS;
    let w = Window {
        cwnd: 200 * MSS,
        ssthresh: u64::MAX,
        mss: MSS,
    };
    let rs = |t: Nanos, segs: u64| RateSample {
        now: t,
        delivered: Some(segs * MSS),
        interval: MS,
        acked_sacked: segs * MSS,
        delivered_mstamp: t,
        ..Default::default()
    };
    let steps = [
        (10 * MS, 2, 2),
        (12 * MS, 2, 2),
        (12 * MS + MS / 2, 2, 4),
        (13 * MS, 4, 7),
        (20 * MS, 2, 7),
    ];
    for (t, segs, max) in steps {
        b.update_ack_aggregation(&rs(t, segs), &w);
        assert_eq!(b.extra_acked, [max, 0], "at {t}");
    }
    assert_eq!(b.ack_epoch_stamp, 20 * MS);
    assert_eq!(b.ack_epoch_acked, 2);
    assert_eq!(b.aggregation_segs(1_000_000, MSS), 0); // pipe not yet full
    b.full_bw_reached = true;
    b.cwnd_gain = CWND_GAIN; // PROBE_BW's 2
    assert_eq!(b.aggregation_segs(1_000_000, MSS), 7);
    let mut w2 = w;
    let mut s = rs(21 * MS, 2);
    b.set_cwnd(&s, &mut w2, 1_000_000, 10);
    assert_eq!(w2.cwnd, 110 * MSS);
    let mut off = b.clone();
    off.extra_acked_on = false;
    let mut w3 = w;
    off.set_cwnd(&s, &mut w3, 1_000_000, 10);
    assert_eq!(w3.cwnd, 104 * MSS);
    // The excess is capped at cwnd.
    let small = Window { cwnd: 5 * MSS, ..w };
    s = rs(21 * MS, 20);
    b.update_ack_aggregation(&s, &small);
    assert_eq!(b.extra_acked, [7, 0]); // 2 + 20 − 1 expected = 21 → 5 < 7
                                       // Window rotation on round starts.
    for i in 1..=5 {
        b.round_start = true;
        b.update_ack_aggregation(&rs(100 * MS * i, 1), &w);
    }
    assert_eq!((b.extra_acked_win_idx, b.extra_acked), (1, [7, 1]));
    for i in 6..=10 {
        b.round_start = true;
        b.update_ack_aggregation(&rs(100 * MS * i, 1), &w);
    }
    assert_eq!((b.extra_acked_win_idx, b.extra_acked), (0, [1, 1]));
    // Sending again after idle while app-limited starts a new epoch; not otherwise.
    let mut w4 = w;
    b.on_tx_start(false, 2 * NS_PER_S, &mut w4);
    assert_ne!(b.ack_epoch_stamp, 2 * NS_PER_S);
    b.on_tx_start(true, 2 * NS_PER_S, &mut w4);
    assert_eq!((b.ack_epoch_stamp, b.ack_epoch_acked), (2 * NS_PER_S, 0));
}

/// One ACK for the long-term tests: a 1 MB/s sample, RTT 100 ms, 50 KB in flight;
/// `delivered`, `lost`: the connection's totals; `round`: it ends a round.
fn lt_ack(
    b: &mut Bbr,
    w: &mut Window,
    t: Nanos,
    delivered: u64,
    lost: u64,
    losses: u64,
    round: bool,
) {
    let rs = RateSample {
        now: t,
        delivered: Some(100_000),
        interval: 100 * MS,
        prior_delivered: if round { b.next_rtt_delivered } else { 0 },
        acked_sacked: 2 * MSS,
        losses,
        prior_in_flight: 50_000,
        in_flight: 50_000,
        rtt: Some(100 * MS),
        tp_delivered: delivered,
        tp_lost: lost,
        delivered_mstamp: t,
        edt: t,
        ..RateSample::default()
    };
    b.on_ack(w, &rs, 10);
}

/// `bbr_lt_bw_sampling` by hand (PROBE_BW, max filter 1 MB/s):
/// - 100 ms: first loss (1000 B lost in all): an interval starts (delivered 20 000).
/// - 4 rounds to 500 ms, no loss: 4 rounds, the minimum, but it ends only on a loss.
/// - 550 ms: a loss, but 1000 of 90 000 B lost (1000 · 256 < 50 · 90 000): go on.
/// - 600 ms: 26 000 of 100 000 B lost (6.656 M ≥ 5 M): over 600 − 100 = 500 ms that is
///   100 000 B / 0.5 s = 200 000 B/s, the first interval's rate; a new one starts.
/// - 4 rounds, then at 1100 ms: 105 000 B delivered, 21 000 lost (5.376 M ≥ 5.25 M),
///   210 000 B/s; |210 000 − 200 000| · 256 ≤ 200 000 · 32: consistent, a policer.
///   BBR now paces at gain 1 at the mean, 205 000 · 0.99 = 202 950 B/s, and the cwnd
///   target uses 205 000 B/s.
/// - 47 more rounds keep it; the 48th ends it: back to the max filter's 1 MB/s and
///   the gain cycle.
#[test]
fn lt_bw_detects_a_policer_by_hand() {
    let (mut b, mut w) = (Bbr::new(0, false, true), window());
    started(&mut b, &mut w);
    b.full_bw_reached = true;
    b.bw.update(BW_RTTS, 0, 1_000_000);
    b.reset_probe_bw(0);
    lt_ack(&mut b, &mut w, MS, 10_000, 0, 0, true);
    assert!(!b.lt_is_sampling);
    lt_ack(&mut b, &mut w, 100 * MS, 20_000, 1_000, 1_000, false);
    assert!(b.lt_is_sampling);
    assert_eq!(
        (b.lt_last_stamp_ms, b.lt_last_delivered, b.lt_last_lost),
        (100, 20_000, 1_000)
    );
    for k in 1..=4 {
        lt_ack(
            &mut b,
            &mut w,
            (100 + 100 * k) * MS,
            20_000 + 20_000 * k,
            1_000,
            0,
            true,
        );
    }
    assert_eq!(b.lt_rtt_cnt, 4);
    lt_ack(&mut b, &mut w, 550 * MS, 110_000, 2_000, 1_000, false);
    assert_eq!(b.lt_bw, 0);
    lt_ack(&mut b, &mut w, 600 * MS, 120_000, 27_000, 25_000, false);
    assert_eq!(b.lt_bw, 200_000);
    assert!(!b.lt_use_bw);
    assert_eq!((b.lt_last_stamp_ms, b.lt_rtt_cnt), (600, 0));
    for k in 1..=4 {
        lt_ack(
            &mut b,
            &mut w,
            (600 + 100 * k) * MS,
            120_000 + 15_000 * k,
            27_000,
            0,
            true,
        );
    }
    lt_ack(&mut b, &mut w, 1100 * MS, 225_000, 48_000, 21_000, false);
    assert!(b.lt_use_bw);
    assert_eq!(b.lt_bw, 205_000);
    assert_eq!(b.bw_est(), 205_000);
    assert_eq!(b.pacing_gain, UNIT);
    assert_eq!(b.pacing_rate, 202_950);
    let mut t = 1100 * MS;
    for _ in 0..47 {
        t += 10 * MS;
        lt_ack(&mut b, &mut w, t, 300_000, 48_000, 0, true);
    }
    assert!(b.lt_use_bw);
    assert_eq!(b.pacing_gain, UNIT);
    lt_ack(&mut b, &mut w, t + 10 * MS, 300_000, 48_000, 0, true);
    assert!(!b.lt_use_bw);
    assert_eq!((b.lt_bw, b.bw_est()), (0, 1_000_000));
    assert_eq!(b.mode, Mode::ProbeBw);
    assert_eq!(b.pacing_gain, PACING_GAIN[b.cycle_idx]);
}

/// Off (`bbr_lt_bw = false`, ns3/rfc): the same losses change nothing.
#[test]
fn lt_bw_off_ignores_lossy_intervals() {
    let (mut b, mut w) = (Bbr::new(0, false, false), window());
    started(&mut b, &mut w);
    b.full_bw_reached = true;
    b.bw.update(BW_RTTS, 0, 1_000_000);
    b.reset_probe_bw(0);
    lt_ack(&mut b, &mut w, 100 * MS, 20_000, 1_000, 1_000, false);
    lt_ack(&mut b, &mut w, 600 * MS, 120_000, 27_000, 25_000, false);
    assert!(!b.lt_is_sampling);
    assert_eq!(b.lt_bw, 0);
}
