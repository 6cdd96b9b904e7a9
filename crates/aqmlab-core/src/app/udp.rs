//! UDP sources: constant bit rate and Poisson.
//!
//! CBR sends packet k at `start + k·size·8/rate` exactly (computed from k, so rounding
//! never accumulates). Poisson draws exponential gaps with mean `mean_size·8/rate`.
//! Sizes are fixed, or exponential with the given mean (rounded to whole bytes, at
//! least 1 B). Datagrams are not limited by the link MTU (no fragmentation model).

use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_S};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Cbr,
    Poisson,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeDist {
    Fixed,
    Exponential,
}

/// A datagram an app asks the engine to send.
#[derive(Clone, Copy, Debug)]
pub struct Datagram {
    pub size: u32,
    pub seq: u64,
}

pub struct UdpSource {
    pub flow: u32,
    pub pattern: Pattern,
    pub rate_bps: u64,
    pub size: u32,
    pub size_dist: SizeDist,
    pub start: Nanos,
    pub stop: Nanos,
    pub rng: Rng,
    sent: u64,
    next: Nanos,
}

impl UdpSource {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        pattern: Pattern,
        rate_bps: u64,
        size: u32,
        size_dist: SizeDist,
        start: Nanos,
        stop: Nanos,
        rng: Rng,
    ) -> Self {
        UdpSource {
            flow,
            pattern,
            rate_bps,
            size,
            size_dist,
            start,
            stop,
            rng,
            sent: 0,
            next: start,
        }
    }

    /// When the first datagram goes out.
    pub fn first_time(&mut self) -> Option<Nanos> {
        if self.pattern == Pattern::Poisson {
            self.next = self.start + self.gap();
        }
        (self.next < self.stop).then_some(self.next)
    }

    fn gap(&mut self) -> Nanos {
        let mean_ns = self.size as f64 * 8.0 * NS_PER_S as f64 / self.rate_bps as f64;
        self.rng.exponential(mean_ns).round() as Nanos
    }

    /// Emit the datagram due now; returns it and the time of the next one.
    pub fn on_timer(&mut self, _now: Nanos) -> (Datagram, Option<Nanos>) {
        let size = match self.size_dist {
            SizeDist::Fixed => self.size,
            SizeDist::Exponential => (self.rng.exponential(self.size as f64).round() as u32).max(1),
        };
        let d = Datagram {
            size,
            seq: self.sent,
        };
        self.sent += 1;
        self.next = match self.pattern {
            Pattern::Cbr => {
                let bits = self.sent as u128 * self.size as u128 * 8 * NS_PER_S as u128;
                self.start + (bits / self.rate_bps as u128) as Nanos
            }
            Pattern::Poisson => self.next + self.gap(),
        };
        (d, (self.next < self.stop).then_some(self.next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbr_sends_at_exact_multiples() {
        // 1000 B at 3 Mbit/s: every 2.666... ms, never drifting.
        let mut s = UdpSource::new(
            0,
            Pattern::Cbr,
            3_000_000,
            1000,
            SizeDist::Fixed,
            0,
            u64::MAX,
            Rng::stream(1, "x"),
        );
        let mut t = s.first_time().unwrap();
        for _ in 0..3000 {
            t = s.on_timer(t).1.unwrap();
        }
        assert_eq!(t, 8_000_000_000); // 3000 packets · 8000 bit / 3 Mbit/s = 8 s
    }

    #[test]
    fn stops_before_stop_time() {
        let mut s = UdpSource::new(
            0,
            Pattern::Cbr,
            8_000,
            1000,
            SizeDist::Fixed,
            0,
            2_500_000_000,
            Rng::stream(1, "x"),
        );
        let mut n = 0;
        let mut next = s.first_time();
        while let Some(t) = next {
            n += 1;
            next = s.on_timer(t).1;
        }
        assert_eq!(n, 3); // at 0, 1, 2 s
    }
}
