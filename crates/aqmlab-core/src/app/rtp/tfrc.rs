//! TCP-Friendly Rate Control (TFRC), RFC 5348, as the rate controller of responsive
//! video (`video` with `responsive = true`). Sender and receiver halves are plain state
//! machines (time in, decisions out); the video app carries their messages.
//!
//! - Throughput equation (§3.1) with b = 1 and t_RTO = 4R:
//!   `X = s / (R·√(2bp/3) + t_RTO·(3·√(3bp/8))·p·(1 + 32p²))` bytes/s.
//! - Receiver (§5, §6): a packet is lost when a later sequence number arrives (the gap
//!   rule; RFC 5348 waits for three later packets, NDUPACK, to allow reordering — our
//!   paths keep a flow's packets in order unless a class scheduler reorders I and B
//!   packets, which then count as losses). Lost packets whose interpolated send time
//!   lies within one RTT of the current loss event's first loss belong to that event
//!   (§5.2). The loss event rate is `p = 1/I_mean`, the average loss interval of §5.4
//!   over the 8 most recent intervals with weights 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2,
//!   `I_mean = max(I_tot0, I_tot1)/W_tot` (with and without the open interval I_0,
//!   `I_0 = S_max − S_event + 1`). The first loss event seeds the history with the
//!   interval that the equation would need for the receive rate of the last RTT (§6.3.1).
//!   Feedback goes once per RTT while data arrives, and at once on a new loss event
//!   (§6.2). X_recv is the rate received since the last feedback (§6.2).
//! - Sender (§4): RTT `R = 0.9·R + 0.1·sample` (first sample taken as is); initial rate
//!   `W_init/R` with `W_init = min(4s, max(2s, 4380))` (§4.2); with p > 0,
//!   `X = max(min(X_Bps, 2·X_recv), s/t_mbi)`; in slow start (p = 0) at most once per
//!   RTT `X = max(min(2X, 2·X_recv), W_init/R)` (§4.3, with recv_limit simplified to
//!   `2·X_recv` of the latest report instead of the X_recv set); t_mbi = 64 s. The
//!   no-feedback timer (§4.4, 2 s at first, then `max(4R, 2s/X)`) halves the rate (to at
//!   least `s/t_mbi`); the initial 1 packet/s before any RTT sample is replaced by the
//!   video's own start rate (the media needs its first GOP).

use crate::sim::time::{Nanos, NS_PER_S};

/// Weights of the 8 most recent loss intervals (RFC 5348 §5.4).
pub const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
/// Maximum back-off interval (RFC 5348 §4.3).
pub const T_MBI_S: f64 = 64.0;

/// The TCP throughput equation (RFC 5348 §3.1) in bytes/s for packet size `s` bytes,
/// RTT `r` seconds and loss event rate `p` (b = 1, t_RTO = 4R).
pub fn throughput(s: f64, r: f64, p: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let b = 1.0;
    let t_rto = 4.0 * r;
    let den = r * (2.0 * b * p / 3.0).sqrt()
        + t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / den
}

/// The loss event rate p whose equation rate is `x` bytes/s (the inverse of
/// `throughput`, which falls monotonically in p), by bisection on log p.
pub fn invert(s: f64, r: f64, x: f64) -> f64 {
    let (mut lo, mut hi) = (1e-9f64.ln(), 0.0f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if throughput(s, r, mid.exp()) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// The loss history of RFC 5348 §5: intervals in packets, newest first.
#[derive(Clone, Debug, Default)]
pub struct LossHistory {
    /// Closed intervals I_1..I_8, newest first.
    closed: [u64; 8],
    n_closed: usize,
    /// First lost sequence number and its (interpolated) send time of the current event.
    event: Option<(u64, Nanos)>,
}

impl LossHistory {
    /// True once a loss event was seen.
    pub fn has_loss(&self) -> bool {
        self.event.is_some()
    }

    /// Packet `seq`, sent at `sent_at`, was lost; `rtt` groups losses into events.
    /// Returns true if it starts a new loss event. `seed` gives I_1 for the first event.
    pub fn on_loss(
        &mut self,
        seq: u64,
        sent_at: Nanos,
        rtt: Nanos,
        seed: impl FnOnce() -> u64,
    ) -> bool {
        match self.event {
            Some((_, t0)) if sent_at <= t0 + rtt => false,
            Some((s0, _)) => {
                self.push(seq - s0);
                self.event = Some((seq, sent_at));
                true
            }
            None => {
                self.push(seed().max(1));
                self.event = Some((seq, sent_at));
                true
            }
        }
    }

    fn push(&mut self, len: u64) {
        self.closed.copy_within(0..7, 1);
        self.closed[0] = len;
        self.n_closed = (self.n_closed + 1).min(8);
    }

    /// The loss event rate for the newest received sequence number `s_max` (0 before
    /// the first loss).
    pub fn p(&self, s_max: u64) -> f64 {
        let Some((s0, _)) = self.event else {
            return 0.0;
        };
        let i0 = (s_max + 1).saturating_sub(s0) as f64;
        let k = self.n_closed;
        // I_tot0 over I_0..I_{k-1}, I_tot1 over I_1..I_k (RFC 5348 §5.4, k ≤ n = 8).
        let (mut tot0, mut tot1, mut w_tot) = (0.0, 0.0, 0.0);
        for (i, w) in WEIGHTS.iter().enumerate().take(k) {
            let ii = if i == 0 {
                i0
            } else {
                self.closed[i - 1] as f64
            };
            tot0 += ii * w;
            tot1 += self.closed[i] as f64 * w;
            w_tot += w;
        }
        let mean = tot0.max(tot1) / w_tot;
        1.0 / mean
    }
}

/// A receiver feedback report (RFC 5348 §6.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Feedback {
    /// Send time of the newest data packet (t_recvdata), and how long it was held.
    pub t_recvdata: Nanos,
    pub t_delay: Nanos,
    /// Receive rate since the last report, bytes/s.
    pub x_recv: f64,
    pub p: f64,
}

/// The receiving half.
#[derive(Clone, Debug, Default)]
pub struct TfrcReceiver {
    pub history: LossHistory,
    /// Newest sequence number, its send and arrival time.
    last: Option<(u64, Nanos, Nanos)>,
    bytes_since: u64,
    last_feedback: Nanos,
    p_reported: f64,
    /// Data arrived since the last report.
    pending: bool,
}

impl TfrcReceiver {
    /// A data packet arrived. `rtt` is the sender's estimate (carried in its header),
    /// `s` the packet size for seeding. Returns true if feedback is due at once (a new
    /// loss event raised p).
    pub fn on_data(
        &mut self,
        now: Nanos,
        seq: u64,
        sent_at: Nanos,
        size: u32,
        rtt: Nanos,
        s: f64,
    ) -> bool {
        self.bytes_since += size as u64;
        self.pending = true;
        let mut new_event = false;
        match self.last {
            Some((last, _, _)) if seq <= last => return false,
            Some((last, t_last, _)) => {
                for lost in last + 1..seq {
                    let frac = (lost - last) as f64 / (seq - last) as f64;
                    let t = t_last + ((sent_at - t_last) as f64 * frac) as Nanos;
                    let x_recv = self.rate(now);
                    let seed = || {
                        let r = rtt.max(1) as f64 / NS_PER_S as f64;
                        (1.0 / invert(s, r, x_recv.max(1.0))).round() as u64
                    };
                    new_event |= self.history.on_loss(lost, t, rtt, seed);
                }
            }
            None => self.last_feedback = now,
        }
        self.last = Some((seq, sent_at, now));
        new_event && self.p(now) > self.p_reported
    }

    fn p(&self, _now: Nanos) -> f64 {
        self.last.map_or(0.0, |(s, _, _)| self.history.p(s))
    }

    /// Receive rate since the last report.
    fn rate(&self, now: Nanos) -> f64 {
        let dt = now.saturating_sub(self.last_feedback).max(1) as f64 / NS_PER_S as f64;
        self.bytes_since as f64 / dt
    }

    /// True if the once-per-RTT report is due (data arrived since the last one).
    pub fn due(&self) -> bool {
        self.pending
    }

    /// Make a report now; restarts the receive-rate measurement.
    pub fn report(&mut self, now: Nanos) -> Feedback {
        let (t_recvdata, t_delay) = self.last.map_or((0, 0), |(_, sent, arr)| (sent, now - arr));
        let fb = Feedback {
            t_recvdata,
            t_delay,
            x_recv: self.rate(now),
            p: self.p(now),
        };
        self.p_reported = fb.p;
        self.bytes_since = 0;
        self.last_feedback = now;
        self.pending = false;
        fb
    }
}

/// The sending half: the allowed rate X.
#[derive(Clone, Debug)]
pub struct TfrcSender {
    /// Packet size s (bytes).
    pub s: f64,
    /// Allowed sending rate, bytes/s.
    pub x: f64,
    /// Smoothed RTT (ns), none before the first feedback.
    pub rtt: Option<Nanos>,
    pub p: f64,
    x_recv: f64,
    /// Time of the last doubling in slow start (tld).
    tld: Nanos,
    /// When the no-feedback timer fires.
    pub nofeedback_at: Nanos,
}

impl TfrcSender {
    /// Start at `x0` bytes/s at time `now`.
    pub fn new(s: f64, x0: f64, now: Nanos) -> Self {
        TfrcSender {
            s,
            x: x0,
            rtt: None,
            p: 0.0,
            x_recv: 0.0,
            tld: now,
            nofeedback_at: now + 2 * NS_PER_S,
        }
    }

    fn min_rate(&self) -> f64 {
        self.s / T_MBI_S
    }

    fn w_init(&self) -> f64 {
        (4.0 * self.s).min((2.0 * self.s).max(4380.0))
    }

    fn secs(ns: Nanos) -> f64 {
        ns as f64 / NS_PER_S as f64
    }

    /// A feedback report arrived at `now` (RFC 5348 §4.3).
    pub fn on_feedback(&mut self, now: Nanos, fb: &Feedback) {
        let sample = now.saturating_sub(fb.t_recvdata + fb.t_delay).max(1);
        let r = match self.rtt {
            None => {
                // First feedback: the initial window rate (§4.2) replaces the start rate
                // only if larger (the video's own start rate is the floor, see above).
                self.tld = now;
                sample
            }
            Some(r) => (0.9 * r as f64 + 0.1 * sample as f64) as Nanos,
        };
        self.rtt = Some(r);
        let rs = Self::secs(r);
        self.p = fb.p;
        self.x_recv = fb.x_recv;
        let recv_limit = 2.0 * fb.x_recv;
        if fb.p > 0.0 {
            let x_bps = throughput(self.s, rs, fb.p);
            self.x = x_bps.min(recv_limit).max(self.min_rate());
        } else if now.saturating_sub(self.tld) >= r {
            self.x = (2.0 * self.x).min(recv_limit).max(self.w_init() / rs);
            self.tld = now;
        }
        self.restart_timer(now);
    }

    fn restart_timer(&mut self, now: Nanos) {
        let t = match self.rtt {
            Some(r) => (4.0 * Self::secs(r)).max(2.0 * self.s / self.x),
            None => 2.0,
        };
        self.nofeedback_at = now + (t * NS_PER_S as f64) as Nanos;
    }

    /// The no-feedback timer fired (RFC 5348 §4.4, simplified): halve the rate.
    pub fn on_nofeedback(&mut self, now: Nanos) {
        self.x = (self.x / 2.0).max(self.min_rate());
        self.restart_timer(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: s = 1000 B, R = 0.1 s, p = 0.01:
    /// √(2p/3) = 0.0816497; 3·√(3p/8) = 3·0.0612372 = 0.1837117; t_RTO = 0.4 s;
    /// den = 0.1·0.0816497 + 0.4·0.1837117·0.01·(1 + 0.0032)
    ///     = 0.00816497 + 0.00073720 = 0.00890217 s → X = 112 332.4 B/s.
    #[test]
    fn equation_by_hand() {
        let x = throughput(1000.0, 0.1, 0.01);
        assert!((x - 112_332.4).abs() < 1.0, "{x}");
        assert!((invert(1000.0, 0.1, x) - 0.01).abs() < 1e-9);
    }

    /// A hand-made history: losses at 100 (first event, seeded I_1 = 50), 110 (same
    /// event: sent within one RTT), 300, 500 and 1000, newest packet 1099.
    /// Closed (newest first): 500 (1000−500), 200 (500−300), 200 (300−100), 50; I_0 =
    /// 1099 + 1 − 1000 = 100. k = 4, weights 1:
    /// I_tot0 = 100 + 500 + 200 + 200 = 1000, I_tot1 = 500 + 200 + 200 + 50 = 950,
    /// I_mean = 1000/4 = 250 → p = 0.004.
    #[test]
    fn loss_event_rate_by_hand() {
        let mut h = LossHistory::default();
        let rtt = 100;
        // Send time = sequence number (ns), RTT 100 ns.
        assert!(h.on_loss(100, 100, rtt, || 50));
        assert!(!h.on_loss(110, 110, rtt, || unreachable!()));
        assert!(h.on_loss(300, 300, rtt, || unreachable!()));
        assert!(h.on_loss(500, 500, rtt, || unreachable!()));
        assert!(h.on_loss(1000, 1000, rtt, || unreachable!()));
        assert!((h.p(1099) - 0.004).abs() < 1e-12, "{}", h.p(1099));
        // A long open interval dominates: I_0 = 3000 → I_tot0 = 3900 → p = 4/3900.
        assert!((h.p(3999) - 4.0 / 3900.0).abs() < 1e-12);
    }

    /// With 9 closed intervals only the newest 8 count, with the weights.
    /// Intervals (newest first) 10, 20, ..., 80 closed, I_0 = 1:
    /// I_tot0 = 1 + 10 + 20 + 30 + 0.8·40 + 0.6·50 + 0.4·60 + 0.2·70 = 161;
    /// I_tot1 = 10 + 20 + 30 + 40 + 0.8·50 + 0.6·60 + 0.4·70 + 0.2·80 = 220;
    /// W_tot = 6 → p = 6/220.
    #[test]
    fn weights_over_eight_intervals() {
        let mut h = LossHistory::default();
        let mut seq = 0;
        h.on_loss(seq, 0, 0, || 999); // oldest seeded interval drops out
        for len in [80, 70, 60, 50, 40, 30, 20, 10] {
            seq += len;
            assert!(h.on_loss(seq, seq, 0, || unreachable!()));
        }
        assert!((h.p(seq) - 6.0 / 220.0).abs() < 1e-12, "{}", h.p(seq));
    }

    /// Packets every 1 ms from t = 10 ms, RTT 50 ms; 5, 6, 7 lost in one burst, found
    /// when 8 arrives at 18 ms. The receive rate since the first packet is 6 × 1000 B
    /// over 8 ms = 750 000 B/s, so the first event is seeded (RFC 5348 §6.3.1) with the
    /// interval whose p gives that rate in the equation: I_1 = round(1/p*). Then
    /// I_0 = 8 + 1 − 5 = 4 < I_1, and p = 1/I_1.
    #[test]
    fn receiver_groups_a_burst_and_seeds_the_first_interval() {
        let mut r = TfrcReceiver::default();
        let ms = 1_000_000;
        for s in 0..5u64 {
            assert!(!r.on_data(s * ms + 10 * ms, s, s * ms, 1000, 50 * ms, 1000.0));
        }
        assert!(r.on_data(18 * ms, 8, 8 * ms, 1000, 50 * ms, 1000.0));
        assert_eq!(r.history.n_closed, 1); // one event for the three losses
        let i1 = r.history.closed[0];
        assert_eq!(i1, (1.0 / invert(1000.0, 0.05, 750_000.0)).round() as u64);
        let x = throughput(1000.0, 0.05, 1.0 / i1 as f64);
        assert!((x / 750_000.0 - 1.0).abs() < 0.05, "{i1} {x}");
        let fb = r.report(18 * ms);
        assert_eq!(fb.p, 1.0 / i1 as f64);
        assert_eq!(fb.t_recvdata, 8 * ms);
        assert_eq!(fb.x_recv, 750_000.0);
        // No new event: the next report is not urgent.
        assert!(!r.on_data(19 * ms, 9, 9 * ms, 1000, 50 * ms, 1000.0));
    }

    #[test]
    fn sender_halves_without_feedback_and_follows_the_equation() {
        let ms = 1_000_000;
        let mut s = TfrcSender::new(1000.0, 100_000.0, 0);
        s.on_feedback(
            100 * ms,
            &Feedback {
                t_recvdata: 0,
                t_delay: 0,
                x_recv: 1e9,
                p: 0.01,
            },
        );
        assert_eq!(s.rtt, Some(100 * ms));
        assert!((s.x - 112_332.4).abs() < 1.0);
        s.on_nofeedback(s.nofeedback_at);
        assert!((s.x - 56_166.2).abs() < 1.0);
    }
}
