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
//! - Timeout (§4.8): ssthresh as in §4.6; the next epoch starts from the post-timeout
//!   window.
//!
//! Slow start is standard (RFC 5681 + byte counting); HyStart is not modelled.

use super::{slow_start, AckSample, Window};
use crate::sim::time::Nanos;

pub const C: f64 = 0.4;
pub const BETA: f64 = 0.7;

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
}

impl Cubic {
    /// `W_cubic(t)` in segments for t seconds into the epoch.
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }

    pub fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
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
                    self.k = ((self.w_max - cwnd) / C).cbrt();
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

    pub fn on_rto(&mut self, _w: &Window) {
        self.epoch_start = None;
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
