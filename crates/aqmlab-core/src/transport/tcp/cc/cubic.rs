//! CUBIC (RFC 9438).
//!
//! - Window curve (§4.2): `W_cubic(t) = C·(t − K)³ + W_max`, `K = ∛((W_max − cwnd_epoch)/C)`,
//!   C = 0.4, in segments and seconds; `t` runs from the start of the congestion-avoidance
//!   epoch (the first ACK after a congestion event).
//! - Concave/convex regions (§4.4, §4.5): `target = W_cubic(t + RTT)` clamped to
//!   [cwnd, 1.5·cwnd]; cwnd grows by `(target − cwnd)/cwnd` per acknowledged segment
//!   (RFC 9438 says per ACK; counting acknowledged segments, as Linux `tcp_cubic.c` does,
//!   keeps the curve independent of delayed ACKs). RTT is the smoothed RTT (§4.2).
//! - Reno-friendly region (§4.3): `W_est += α_cubic·segments_acked/cwnd`, `α_cubic =
//!   3(1 − β)/(1 + β)` until `W_est ≥ cwnd_prior`, then 1; if `W_cubic(t) < W_est`,
//!   cwnd = W_est.
//! - Multiplicative decrease (§4.6): `ssthresh = max(β·cwnd, 2 segments)`, β = 0.7.
//! - Fast convergence (§4.7): if cwnd < W_max at the event, `W_max = cwnd·(1 + β)/2`,
//!   else `W_max = cwnd`.
//! - Timeout (§4.8): ssthresh as in §4.6, then `W_max` is forgotten: the first epoch
//!   after the timeout has K = 0 and W_max = the window at its start (Linux
//!   `cubictcp_state(TCP_CA_Loss)` → `bictcp_reset` zeroes `last_max_cwnd` likewise).
//!
//! - Application-limited periods (RFC 9438 §5.8, Linux `cubictcp_cwnd_event`
//!   `CA_EVENT_TX_START`): when the sender starts sending again with nothing in flight,
//!   the epoch start moves forward by the idle time (not past now), so `t` counts only
//!   time spent sending and the curve does not jump after a pause.
//!
//! Slow start is standard (RFC 5681 + byte counting), optionally with HyStart.
//!
//! ## HyStart (`hystart = true`, the default, as in Linux and ns-3)
//!
//! Classic HyStart (Ha & Rhee, "Taming the elephants: New TCP slow start", Computer
//! Networks 55(9), 2011), as Linux `net/ipv4/tcp_cubic.c` runs it since 5.7
//! (`bictcp_hystart_reset`, `hystart_update`, `cubictcp_acked`), not HyStart++
//! (RFC 9406): it is what CUBIC ships with in Linux and ns-3 (`TcpCubic`), and the
//! simulator's CUBIC is meant to stand for those. Slow start ends (ssthresh = cwnd, so
//! CUBIC's congestion avoidance takes over from the current window; no reduction)
//! when either detector fires, checked on every ACK with an RTT sample while in slow
//! start with cwnd ≥ [`HYSTART_LOW_WINDOW`] segments:
//! - A round starts at the first ACK that acknowledges beyond `end_seq`, the `snd_nxt`
//!   at the previous round start; it resets `round_start`, `last_ack`, `curr_rtt` and
//!   `sample_cnt`.
//! - ACK train: an ACK within [`HYSTART_ACK_DELTA`] (2 ms) of the previous train ACK
//!   extends the train; when the train reaches more than `delay_min/2` past
//!   `round_start`, the window is about one BDP. Linux adds a TSO/GRO cushion
//!   (`hystart_ack_delay`, ≤ 1 ms) to `delay_min` when a pacing rate is set; the
//!   model has no TSO or GRO, so the cushion is 0 (Linux's value without a pacing rate).
//! - Delay increase: `curr_rtt` is the smallest RTT sample of the round; from the
//!   ([`HYSTART_MIN_SAMPLES`] + 1)-th sample of a round on, if `curr_rtt > delay_min +
//!   clamp(delay_min/8, 4 ms, 16 ms)`, the queue has started to build.
//! - `delay_min` is the smallest RTT sample of the connection (taken on every ACK,
//!   also in recovery), except during the first second of a congestion-avoidance epoch
//!   ("discard delay samples right after fast recovery"). Once found, HyStart stays
//!   off until an RTO, which resets it (`found`, `delay_min`, the round), as Linux's
//!   `cubictcp_state(TCP_CA_Loss)` does.
//!
//! ns-3's `TcpCubic` (HyStart on by default) ports the same two detectors from an older
//! Linux, with its own attributes for the constants; where the two differ we follow
//! current Linux (delay threshold `delay_min/8`, the test from the 9th sample on).

use super::cubic_linux::CubicLinux;
use super::cubic_ns3::CubicNs3;
use super::{slow_start, AckSample, Window};
use super::{AnyCc, CcParams, CongestionEvent, Controller, Kind, Registered, RtoEvent, TxStart};
use crate::scenario::error::Result;
use crate::scenario::params::{param, KindDoc, Params};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};
use crate::transport::tcp::TcpConfig;

pub const C: f64 = 0.4;
pub const BETA: f64 = 0.7;

/// HyStart runs only once cwnd reaches this many segments (Linux `hystart_low_window`).
pub const HYSTART_LOW_WINDOW: u64 = 16;
/// ACKs closer than this form a train (Linux `hystart_ack_delta_us`, 2 ms).
pub const HYSTART_ACK_DELTA: Nanos = 2 * NS_PER_MS;
/// RTT samples per round before the delay test (Linux `HYSTART_MIN_SAMPLES`).
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// Bounds of the delay-increase threshold `delay_min/8` (Linux `HYSTART_DELAY_MIN/MAX`).
pub const HYSTART_DELAY_MIN: Nanos = 4 * NS_PER_MS;
pub const HYSTART_DELAY_MAX: Nanos = 16 * NS_PER_MS;

/// Which HyStart detector ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartExit {
    AckTrain,
    Delay,
}

/// HyStart state (Linux `struct bictcp`: `found`, `round_start`, `end_seq`, `last_ack`,
/// `curr_rtt`, `sample_cnt`, `delay_min`).
#[derive(Clone, Debug, Default)]
pub struct HyStart {
    /// Slow-start exit found: `Some((detector, cwnd in bytes at the exit))`.
    pub found: Option<(HyStartExit, u64)>,
    pub round_start: Nanos,
    pub end_seq: u64,
    pub last_ack: Nanos,
    /// Smallest RTT sample of the current round (Nanos::MAX: none yet).
    pub curr_rtt: Nanos,
    pub sample_cnt: u32,
    /// Smallest RTT sample (0: none yet).
    pub delay_min: Nanos,
}

impl HyStart {
    /// Linux `bictcp_hystart_reset`: a new round.
    pub(super) fn reset_round(&mut self, now: Nanos, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = Nanos::MAX;
        self.sample_cnt = 0;
    }

    /// Linux `hystart_update`: the detector that says slow start ends here, if any.
    fn update(
        &mut self,
        now: Nanos,
        snd_una: u64,
        snd_nxt: u64,
        delay: Nanos,
    ) -> Option<HyStartExit> {
        self.next_round(now, snd_una, snd_nxt);
        self.detect(now, delay, self.delay_min / 2)
    }

    /// Start a new round once the ACK passes the previous round's `end_seq`.
    pub(super) fn next_round(&mut self, now: Nanos, snd_una: u64, snd_nxt: u64) {
        if snd_una > self.end_seq {
            self.reset_round(now, snd_nxt);
        }
    }

    /// The two detectors of `hystart_update` on an RTT sample `delay`; the ACK train
    /// fires once it reaches more than `train` past the round start.
    pub(super) fn detect(&mut self, now: Nanos, delay: Nanos, train: Nanos) -> Option<HyStartExit> {
        // ACK train.
        if now - self.last_ack <= HYSTART_ACK_DELTA {
            self.last_ack = now;
            if now - self.round_start > train {
                return Some(HyStartExit::AckTrain);
            }
        }
        // Delay increase.
        self.curr_rtt = self.curr_rtt.min(delay);
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
            if self.curr_rtt > self.delay_min + thresh {
                return Some(HyStartExit::Delay);
            }
        }
        None
    }
}

#[derive(Clone, Debug, Default)]
pub struct Cubic {
    /// Segments.
    pub w_max: f64,
    pub k: f64,
    /// Start of the current congestion-avoidance epoch.
    pub epoch_start: Option<Nanos>,
    pub cwnd_epoch: f64,
    pub w_est: f64,
    pub cwnd_prior: f64,
    /// cwnd in bytes with its fraction (mirrors `Window::cwnd`).
    cwnd_f: f64,
    /// HyStart state; `None` when HyStart is off.
    pub hystart: Option<HyStart>,
}

impl Cubic {
    pub fn new(hystart: bool) -> Cubic {
        Cubic {
            hystart: hystart.then(HyStart::default),
            ..Cubic::default()
        }
    }

    /// HyStart on an ACK in slow start: may set ssthresh = cwnd.
    fn hystart(&mut self, w: &mut Window, a: &AckSample) {
        let Some(hs) = &mut self.hystart else {
            return;
        };
        let Some(rtt) = a.rtt else {
            return;
        };
        if hs.found.is_some()
            || !w.in_slow_start()
            || w.cwnd < HYSTART_LOW_WINDOW * w.mss
            || self.epoch_start.is_some_and(|t| a.now - t < NS_PER_S)
        {
            return;
        }
        if let Some(exit) = hs.update(a.now, a.snd_una, a.snd_nxt, rtt.max(1)) {
            hs.found = Some((exit, w.cwnd));
            w.ssthresh = w.cwnd;
        }
    }

    /// `W_cubic(t)` in segments for t seconds into the epoch.
    pub fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        C * d * d * d + self.w_max
    }

    pub fn ssthresh(&mut self, w: &Window, _now: Nanos) -> u64 {
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        self.cwnd_prior = cwnd;
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.epoch_start = None;
        ((BETA * cwnd * mss) as u64).max(2 * w.mss)
    }

    /// New data after an idle period of `idle` with nothing in flight.
    pub fn on_tx_start(&mut self, now: Nanos, idle: Nanos) {
        if let Some(t) = &mut self.epoch_start {
            *t = (*t + idle).min(now);
        }
    }

    /// An RTO (Linux `cubictcp_state(TCP_CA_Loss)`): a new epoch, and HyStart starts
    /// afresh (the slow start back to ssthresh may end early again).
    pub fn on_rto(&mut self, _w: &Window, now: Nanos, snd_nxt: u64) {
        self.epoch_start = None;
        self.w_max = 0.0;
        if let Some(hs) = &mut self.hystart {
            *hs = HyStart::default();
            hs.reset_round(now, snd_nxt);
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    pub hystart: bool,
}

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "cubic",
        summary: "CUBIC: cubic window growth from the last maximum; RFC 9438 (rfc), Linux tcp_cubic.c (linux), ns-3.44 TcpCubic (ns3)",
        source: "RFC 9438; Linux net/ipv4/tcp_cubic.c (cubic_linux.rs); ns-3.44 tcp-cubic.cc (cubic_ns3.rs)",
        params: &[param(
            "hystart",
            "bool",
            "true",
            "HyStart slow-start exit (ACK train + delay increase, as Linux); flat alias `hystart`",
        )],
    },
    aliases: &[("hystart", "hystart")],
    parse,
};

fn parse(p: &mut Params) -> Result<CcParams> {
    Ok(CcParams::Cubic(CubicParams {
        hystart: p.bool_or("hystart", true)?,
    }))
}

impl Registered for Cubic {
    type Params = CubicParams;

    /// `ns3_cubic`: ns-3's `TcpCubic` (`cubic_ns3.rs`); `linux_cubic`: Linux's
    /// `tcp_cubic.c` (`cubic_linux.rs`); otherwise RFC 9438.
    fn build(p: &CubicParams, cfg: &TcpConfig) -> AnyCc {
        if cfg.ns3_cubic {
            CubicNs3::new(p.hystart).into()
        } else if cfg.linux_cubic {
            CubicLinux::new(p.hystart).into()
        } else {
            Cubic::new(p.hystart).into()
        }
    }
}

impl Controller for Cubic {
    /// Every ACK of new data, in or out of recovery (Linux `cubictcp_acked`): the
    /// minimum delay HyStart compares against.
    #[inline]
    fn observe(&mut self, a: &AckSample) {
        let (Some(hs), Some(rtt)) = (&mut self.hystart, a.rtt) else {
            return;
        };
        // Discard delay samples right after fast recovery.
        if self.epoch_start.is_some_and(|t| a.now - t < NS_PER_S) {
            return;
        }
        let delay = rtt.max(1);
        if hs.delay_min == 0 || hs.delay_min > delay {
            hs.delay_min = delay;
        }
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        self.hystart(w, a);
        let mut acked = a.acked;
        if w.in_slow_start() {
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        let mss = w.mss as f64;
        if (self.cwnd_f - w.cwnd as f64).abs() >= 1.0 {
            self.cwnd_f = w.cwnd as f64;
        }
        let cwnd = self.cwnd_f / mss;
        let epoch = match self.epoch_start {
            Some(t) => t,
            None => {
                self.epoch_start = Some(a.now);
                self.cwnd_epoch = cwnd;
                if cwnd < self.w_max {
                    self.k = libm::cbrt((self.w_max - cwnd) / C);
                } else {
                    self.k = 0.0;
                    self.w_max = cwnd;
                }
                self.w_est = cwnd;
                a.now
            }
        };
        let segs = acked as f64 / mss;
        let t = (a.now - epoch) as f64 * 1e-9;
        let rtt = a.srtt as f64 * 1e-9;
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - BETA) / (1.0 + BETA)
        };
        self.w_est += alpha * segs / cwnd;
        let new = if self.w_cubic(t) < self.w_est {
            self.w_est
        } else {
            let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * segs
        };
        self.cwnd_f = new.max(cwnd) * mss;
        w.cwnd = self.cwnd_f as u64;
    }

    fn on_congestion(&mut self, w: &Window, e: &CongestionEvent) -> u64 {
        self.ssthresh(w, e.now)
    }

    fn on_rto(&mut self, w: &Window, e: &RtoEvent) {
        Cubic::on_rto(self, w, e.now, e.snd_nxt)
    }

    fn on_tx_start(&mut self, _: &mut Window, e: &TxStart) {
        if let Some(idle) = e.idle {
            Cubic::on_tx_start(self, e.now, idle)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NS_PER_MS;

    /// A loss-free epoch driven by hand: every RTT (100 ms) the whole window is
    /// acknowledged in ACKs of two segments. cwnd follows `C(t − K)³ + W_max` within 5 %.
    #[test]
    fn cwnd_follows_the_cubic_curve_in_a_loss_free_epoch() {
        let mss = 1000u64;
        let mut w = Window {
            cwnd: 200 * mss,
            ssthresh: u64::MAX,
            mss,
        };
        let mut c = Cubic::default();
        // Congestion event at 200 segments: W_max = 200, cwnd = ssthresh = 140.
        w.ssthresh = c.ssthresh(&w, 0);
        w.cwnd = w.ssthresh;
        assert_eq!(w.cwnd, 140 * mss);
        let rtt = 100 * NS_PER_MS;
        let k = ((200.0 - 140.0) / C).cbrt(); // 5.313 s
        let mut now = 0;
        let mut worst: f64 = 0.0;
        for _round in 0..90 {
            // One window of ACKs spread over the RTT.
            let acks = (w.cwnd / (2 * mss)).max(1);
            for i in 0..acks {
                let a = AckSample {
                    now: now + rtt * i / acks,
                    acked: 2 * mss,
                    srtt: rtt,
                    ..Default::default()
                };
                c.on_ack(&mut w, &a);
            }
            now += rtt;
            let t = now as f64 * 1e-9;
            let model = C * (t - k).powi(3) + 200.0;
            let got = w.cwnd as f64 / mss as f64;
            worst = worst.max((got - model).abs() / model);
        }
        assert!(worst < 0.05, "worst relative error {worst}");
        // It did pass W_max into the convex region.
        assert!(w.cwnd > 220 * mss, "{}", w.cwnd);
    }

    const MSS: u64 = 1000;

    /// RFC 9438 §5.8 / Linux `CA_EVENT_TX_START`: 2 s of idle time in the middle of an
    /// epoch do not count in t — after resuming, the window is where it would have been
    /// without the pause, not 2 s further along the curve; the shift stops at now.
    #[test]
    fn idle_time_does_not_advance_the_epoch() {
        let mk = || {
            let mut w = Window {
                cwnd: 200 * MSS,
                ssthresh: u64::MAX,
                mss: MSS,
            };
            let mut c = Cubic::new(false);
            w.ssthresh = c.ssthresh(&w, 0);
            w.cwnd = w.ssthresh;
            let a = AckSample {
                now: NS_PER_S,
                acked: MSS,
                srtt: 100 * NS_PER_MS,
                ..Default::default()
            };
            c.on_ack(&mut w, &a);
            assert_eq!(c.epoch_start, Some(NS_PER_S));
            (c, w)
        };
        let (mut paused, _) = mk();
        paused.on_tx_start(4 * NS_PER_S, 2 * NS_PER_S);
        assert_eq!(paused.epoch_start, Some(3 * NS_PER_S));
        // The shift never moves the epoch past now.
        let (mut long, _) = mk();
        long.on_tx_start(2 * NS_PER_S, 5 * NS_PER_S);
        assert_eq!(long.epoch_start, Some(2 * NS_PER_S));
        // No epoch yet (slow start): nothing to shift.
        let mut fresh = Cubic::new(false);
        fresh.on_tx_start(2 * NS_PER_S, NS_PER_S);
        assert_eq!(fresh.epoch_start, None);
    }

    /// RFC 9438 §4.8: after an RTO the first epoch has K = 0 and W_max = cwnd at its
    /// start, not the W_max of the loss before.
    #[test]
    fn rto_forgets_w_max() {
        let mut w = Window {
            cwnd: 200 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        let mut c = Cubic::new(false);
        w.ssthresh = c.ssthresh(&w, 0); // W_max = 200, ssthresh 140
        assert_eq!(c.w_max, 200.0);
        c.on_rto(&w, 0, 0);
        w.cwnd = 140 * MSS; // slow start back up to ssthresh
        let a = AckSample {
            now: NS_PER_S,
            acked: MSS,
            srtt: 100 * NS_PER_MS,
            ..Default::default()
        };
        c.on_ack(&mut w, &a);
        assert_eq!(c.k, 0.0);
        assert_eq!(c.w_max, 140.0);
        // Without the timeout the same epoch would aim at the old W_max (K = ∛(60/0.4)).
        let mut d = Cubic::new(false);
        let mut w2 = Window {
            cwnd: 200 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
        };
        w2.ssthresh = d.ssthresh(&w2, 0);
        w2.cwnd = 140 * MSS;
        d.on_ack(&mut w2, &a);
        assert!((d.k - (60.0f64 / C).cbrt()).abs() < 1e-12);
        assert_eq!(d.w_max, 200.0);
    }

    /// A HyStart CUBIC in slow start at cwnd = 16 segments, driven by an ACK clock:
    /// each ACK acknowledges 2 segments and the sender keeps `snd_nxt = snd_una + cwnd`.
    /// Rounds are tracked here from their definition (a round starts at the first ACK
    /// beyond the `snd_nxt` of the previous round start), independently of `HyStart`.
    struct SlowStart {
        c: Cubic,
        w: Window,
        now: Nanos,
        una: u64,
        nxt: u64,
        round_end: u64,
        /// ACKs so far in the current round (1 = the ACK that started it).
        in_round: u32,
        rounds: u32,
    }

    impl SlowStart {
        fn new(hystart: bool, cwnd_segs: u64) -> SlowStart {
            SlowStart {
                c: Cubic::new(hystart),
                w: Window {
                    cwnd: cwnd_segs * MSS,
                    ssthresh: u64::MAX,
                    mss: MSS,
                },
                now: 0,
                una: 0,
                nxt: cwnd_segs * MSS,
                round_end: 0,
                in_round: 0,
                rounds: 0,
            }
        }

        /// One ACK `gap` after the previous one, carrying RTT sample `rtt`; returns
        /// cwnd before the ACK.
        fn ack(&mut self, gap: Nanos, rtt: Nanos) -> u64 {
            self.now += gap;
            self.una += 2 * MSS;
            if self.una > self.round_end {
                self.round_end = self.nxt;
                self.in_round = 0;
                self.rounds += 1;
            }
            self.in_round += 1;
            let a = AckSample {
                now: self.now,
                acked: 2 * MSS,
                rtt: Some(rtt),
                srtt: rtt,
                snd_una: self.una,
                snd_nxt: self.nxt,
                ..Default::default()
            };
            let before = self.w.cwnd;
            self.c.observe(&a);
            self.c.on_ack(&mut self.w, &a);
            self.nxt = self.nxt.max(self.una + self.w.cwnd);
            before
        }

        fn found(&self) -> Option<(HyStartExit, u64)> {
            self.c.hystart.as_ref().unwrap().found
        }
    }

    /// Delay increase: RTT 100 ms (threshold clamp(100/8, 4, 16) = 12.5 ms), then
    /// 112.5 ms + 1 ns from the 21st ACK on. That ACK is in the middle of round 2, whose
    /// minimum stays 100 ms; round 3 starts at ACK 25 and slow start ends on its 9th
    /// sample (ACK 33), not before, with ssthresh = the cwnd of that moment.
    #[test]
    fn hystart_delay_increase_ends_slow_start_on_the_ninth_sample_of_a_round() {
        let mut s = SlowStart::new(true, 16);
        for i in 1..=200 {
            let rtt = if i <= 20 {
                100 * NS_PER_MS
            } else {
                100 * NS_PER_MS + 12_500_000 + 1
            };
            let before = s.ack(5 * NS_PER_MS, rtt);
            if let Some((exit, cwnd)) = s.found() {
                assert_eq!(exit, HyStartExit::Delay);
                assert_eq!((s.rounds, s.in_round), (3, 9));
                assert_eq!(i, 33);
                // 16 segments + 2 per ACK for the 32 ACKs before.
                assert_eq!(cwnd, before);
                assert_eq!(cwnd, 80 * MSS);
                assert_eq!(s.w.ssthresh, 80 * MSS);
                assert!(!s.w.in_slow_start());
                return;
            }
            assert!(s.w.in_slow_start());
        }
        panic!("no slow-start exit");
    }

    /// An increase of exactly the threshold (12.5 ms) is not "more than" it; and with
    /// `hystart = false` even +50 ms never ends slow start.
    #[test]
    fn hystart_delay_does_not_fire_at_the_threshold_or_when_off() {
        for (hystart, extra) in [(true, 12_500_000), (false, 50 * NS_PER_MS)] {
            let mut s = SlowStart::new(hystart, 16);
            for i in 1..=300 {
                let rtt = 100 * NS_PER_MS + if i <= 20 { 0 } else { extra };
                s.ack(5 * NS_PER_MS, rtt);
            }
            assert!(s.w.in_slow_start(), "hystart {hystart}");
            assert_eq!(s.w.cwnd, (16 + 600) * MSS);
            if hystart {
                assert_eq!(s.found(), None);
            }
        }
    }

    /// HyStart waits for cwnd ≥ 16 segments: from 2 segments with the RTT already up
    /// from the second ACK, the first check is at cwnd = 16 (ACK 8). It starts a round
    /// that ends (snd_una beyond 30 segments) after 8 samples, at ACK 16; the exit comes
    /// on the 9th sample of the next round (ACK 24, cwnd 2 + 2·23 = 48 segments).
    #[test]
    fn hystart_waits_for_the_low_window() {
        let mut s = SlowStart::new(true, 2);
        for i in 1..=100 {
            let rtt = if i == 1 {
                100 * NS_PER_MS
            } else {
                150 * NS_PER_MS
            };
            let before = s.ack(5 * NS_PER_MS, rtt);
            if let Some((exit, cwnd)) = s.found() {
                assert_eq!(exit, HyStartExit::Delay);
                assert_eq!(i, 24);
                assert_eq!(cwnd, before);
                assert_eq!(cwnd, 48 * MSS);
                return;
            }
        }
        panic!("no slow-start exit");
    }

    /// ACK train: ACKs 1 ms apart (≤ 2 ms) with a constant RTT of 100 ms. Rounds last
    /// 8, 16, 32, 64 ACKs; the first ACK more than delay_min/2 = 50 ms after its round
    /// started is the 52nd of round 4 (ACK 57 + 51 = 108), cwnd = 16 + 2·107 segments.
    #[test]
    fn hystart_ack_train_ends_slow_start_half_an_rtt_into_a_round() {
        let mut s = SlowStart::new(true, 16);
        for i in 1..=400 {
            let before = s.ack(NS_PER_MS, 100 * NS_PER_MS);
            if let Some((exit, cwnd)) = s.found() {
                assert_eq!(exit, HyStartExit::AckTrain);
                assert_eq!((s.rounds, s.in_round), (4, 52));
                assert_eq!(i, 108);
                assert_eq!(cwnd, before);
                assert_eq!(cwnd, (16 + 2 * 107) * MSS);
                assert_eq!(s.w.ssthresh, cwnd);
                return;
            }
        }
        panic!("no slow-start exit");
    }

    /// ACKs 3 ms apart are not a train (delta 2 ms): with a constant RTT nothing fires.
    #[test]
    fn hystart_ack_train_needs_closely_spaced_acks() {
        let mut s = SlowStart::new(true, 16);
        for _ in 0..400 {
            s.ack(3 * NS_PER_MS, 100 * NS_PER_MS);
        }
        assert_eq!(s.found(), None);
        assert!(s.w.in_slow_start());
        assert!(s.rounds >= 5, "{}", s.rounds);
    }

    /// An RTO re-arms HyStart (Linux resets it on entering Loss).
    #[test]
    fn rto_rearms_hystart() {
        let mut s = SlowStart::new(true, 16);
        while s.found().is_none() {
            s.ack(NS_PER_MS, 100 * NS_PER_MS);
        }
        s.c.on_rto(&s.w, s.now, s.nxt);
        let hs = s.c.hystart.as_ref().unwrap();
        assert_eq!((hs.found, hs.delay_min), (None, 0));
        assert_eq!(hs.end_seq, s.nxt);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = Cubic::default();
        let mut w = Window {
            cwnd: 100_000,
            ssthresh: 0,
            mss: 1000,
        };
        c.ssthresh(&w, 0);
        assert_eq!(c.w_max, 100.0);
        w.cwnd = 80_000;
        assert_eq!(c.ssthresh(&w, 0), 56_000);
        assert!((c.w_max - 80.0 * 0.85).abs() < 1e-9);
    }
}
