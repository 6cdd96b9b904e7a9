//! Fixed-interval samples of a link after the warm-up, as a test-bed measures them
//! (Byun's dissertation §4.3: "measured once every 100 msec"): the queue length at each
//! interval boundary, and the bits sent and offered in each interval. Only the mean and
//! the (population) standard deviation of each are kept (Welford's update, Knuth TAOCP
//! vol. 2 §4.2.2), so sampling costs no memory.
//!
//! Sampling is lazy: no event is scheduled. Before any of the sampled quantities
//! changes at `now`, `advance(now, ..)` closes every interval that ended at or before
//! `now` with the values held until then (the queue length is piecewise constant and the
//! counters only grow, so a boundary sees exactly what a timer firing there would see
//! before any event at the same instant). Only whole intervals are sampled.

use crate::sim::time::{Nanos, NS_PER_S};

/// Mean and population variance of a stream (Welford).
#[derive(Clone, Copy, Debug, Default)]
pub struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// NaN without samples.
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.mean
        }
    }

    /// Population standard deviation; NaN without samples.
    pub fn std(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            (self.m2 / self.n as f64).sqrt()
        }
    }

    pub fn count(&self) -> u64 {
        self.n
    }
}

/// The per-interval samples of one link (off while `interval` is 0). `repr(C)`: the two
/// fields `advance` reads at every packet come first (`LinkStats` keeps them next to
/// its per-packet counters), the moments it updates once per interval after them.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct IntervalSamples {
    interval: Nanos,
    /// End of the interval being filled.
    next: Nanos,
    sent_at_last: u64,
    offered_at_last: u64,
    /// Queue length (packets) at each boundary.
    pub qlen_pkts: Moments,
    /// Bits sent per second in each interval.
    pub sent_bps: Moments,
    /// Bits offered per second in each interval.
    pub offered_bps: Moments,
}

impl IntervalSamples {
    /// Sample every `interval` from `start` (0: off), the counters reading `sent` and
    /// `offered` bytes at `start`.
    pub fn start(interval: Nanos, start: Nanos, sent: u64, offered: u64) -> Self {
        IntervalSamples {
            interval,
            next: start + interval,
            sent_at_last: sent,
            offered_at_last: offered,
            ..Default::default()
        }
    }

    pub fn interval(&self) -> Nanos {
        self.interval
    }

    /// Close the intervals ending at or before `now`, with the queue at `qlen` packets
    /// and the byte counters at `sent` and `offered` throughout them (their values
    /// before whatever happens at `now`).
    #[inline]
    pub fn advance(&mut self, now: Nanos, qlen: u64, sent: u64, offered: u64) {
        if self.interval == 0 || now < self.next {
            return;
        }
        self.close(now, qlen, sent, offered);
    }

    #[cold]
    fn close(&mut self, now: Nanos, qlen: u64, sent: u64, offered: u64) {
        let per_s = NS_PER_S as f64 / self.interval as f64;
        // The first closed interval holds all the bytes counted since the last
        // boundary; later ones (no change in between) hold none.
        let mut first = true;
        while self.next <= now {
            let (s, o) = if first {
                (sent - self.sent_at_last, offered - self.offered_at_last)
            } else {
                (0, 0)
            };
            first = false;
            self.qlen_pkts.push(qlen as f64);
            self.sent_bps.push(s as f64 * 8.0 * per_s);
            self.offered_bps.push(o as f64 * 8.0 * per_s);
            self.next += self.interval;
        }
        self.sent_at_last = sent;
        self.offered_at_last = offered;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn moments_match_a_hand_computation() {
        let mut m = Moments::default();
        assert!(m.mean().is_nan() && m.std().is_nan());
        for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            m.push(x);
        }
        // mean 5, population variance 4.
        assert_eq!(m.mean(), 5.0);
        assert_eq!(m.std(), 2.0);
        assert_eq!(m.count(), 8);
    }

    /// 100 ms intervals from t = 1 s. Events (before each, the values held so far):
    /// - 1.05 s: queue 0, 0 B sent, 0 B offered → no boundary passed.
    /// - 1.25 s: boundaries 1.1 and 1.2 s pass with queue 3 (set at 1.05 s), sent 1000 B,
    ///   offered 2500 B → interval 1: 1000 B = 80 kbit/s sent, 200 kbit/s offered;
    ///   interval 2: nothing counted since → 0, 0.
    /// - 1.30 s (exactly on the boundary): queue 5, sent 3000, offered 2500 → interval 3
    ///   (1.2, 1.3]: 2000 B sent = 160 kbit/s, 0 offered.
    ///
    /// Queue samples 3, 3, 5: mean 11/3. Sent 80k, 0, 160k: mean 80k, std
    /// sqrt(((0)² + 80k² + 80k²)/3) = 80k·sqrt(2/3).
    #[test]
    fn worked_trace_of_three_intervals() {
        let mut s = IntervalSamples::start(100 * MS, 1000 * MS, 0, 0);
        s.advance(1050 * MS, 0, 0, 0);
        assert_eq!(s.qlen_pkts.count(), 0);
        s.advance(1250 * MS, 3, 1000, 2500);
        assert_eq!(s.qlen_pkts.count(), 2);
        assert_eq!(s.offered_bps.mean(), 100_000.0);
        s.advance(1300 * MS, 5, 3000, 2500);
        assert_eq!(s.qlen_pkts.count(), 3);
        assert!((s.qlen_pkts.mean() - 11.0 / 3.0).abs() < 1e-12);
        assert!((s.sent_bps.mean() - 80_000.0).abs() < 1e-9);
        let want = 80_000.0 * (2.0f64 / 3.0).sqrt();
        assert!(
            (s.sent_bps.std() - want).abs() < 1e-6,
            "{}",
            s.sent_bps.std()
        );
        // Off: nothing is sampled.
        let mut off = IntervalSamples::default();
        off.advance(10_000 * MS, 1, 1, 1);
        assert_eq!(off.qlen_pkts.count(), 0);
    }
}
