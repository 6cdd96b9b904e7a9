//! Retransmission timer (RFC 6298).
//!
//! - First sample R: `SRTT = R`, `RTTVAR = R/2`.
//! - Later samples: `RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R|` (with the old SRTT), then
//!   `SRTT = 7/8·SRTT + 1/8·R`.
//! - `RTO = max(min_rto, SRTT + max(G, 4·RTTVAR))`, capped at `max_rto` (RFC 6298 §2.4
//!   allows a maximum of at least 60 s). `G` (clock granularity) is 1 ms, as in ns-3.
//! - Before any sample the RTO is the configured initial RTO (RFC 6298 §2.1: 1 s).
//! - On expiry the RTO doubles (§5.5) up to `max_rto`; the next valid sample recomputes it
//!   from SRTT/RTTVAR, which ends the backoff.
//!
//! Samples come from the timestamp option (RFC 7323 §4), so Karn's rule is not needed:
//! the echoed timestamp identifies the transmission that the ACK answers.
//!
//! Integer nanoseconds throughout; the 1/4 and 1/8 gains are exact shifts.

use crate::sim::time::{Nanos, NS_PER_MS};

/// Clock granularity G.
pub const GRANULARITY: Nanos = NS_PER_MS;

#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    pub srtt: Nanos,
    pub rttvar: Nanos,
    /// The smallest sample seen (for CUBIC/Vegas/Compound base RTT and reports).
    pub min_rtt: Nanos,
    pub has_sample: bool,
    rto: Nanos,
    min_rto: Nanos,
    max_rto: Nanos,
}

impl RttEstimator {
    pub fn new(initial_rto: Nanos, min_rto: Nanos, max_rto: Nanos) -> Self {
        RttEstimator {
            srtt: 0,
            rttvar: 0,
            min_rtt: Nanos::MAX,
            has_sample: false,
            rto: initial_rto.min(max_rto),
            min_rto,
            max_rto,
        }
    }

    /// Take one RTT sample `r`.
    pub fn sample(&mut self, r: Nanos) {
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = r / 2;
            self.has_sample = true;
        } else {
            let err = self.srtt.abs_diff(r);
            self.rttvar = self.rttvar - self.rttvar / 4 + err / 4;
            self.srtt = self.srtt - self.srtt / 8 + r / 8;
        }
        self.min_rtt = self.min_rtt.min(r);
        self.rto = (self.srtt + GRANULARITY.max(4 * self.rttvar))
            .max(self.min_rto)
            .min(self.max_rto);
    }

    /// The current retransmission timeout (with any backoff).
    #[inline]
    pub fn rto(&self) -> Nanos {
        self.rto
    }

    /// Double the RTO after a timeout (RFC 6298 §5.5).
    pub fn backoff(&mut self) {
        self.rto = (self.rto * 2).min(self.max_rto);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Nanos = NS_PER_MS;

    #[test]
    fn first_and_second_samples_follow_rfc6298() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS);
        assert_eq!(e.rto(), 1000 * MS);
        e.sample(100 * MS);
        assert_eq!((e.srtt, e.rttvar), (100 * MS, 50 * MS));
        assert_eq!(e.rto(), 300 * MS); // 100 + 4·50
        e.sample(200 * MS);
        // RTTVAR = 0.75·50 + 0.25·100 = 62.5; SRTT = 0.875·100 + 0.125·200 = 112.5
        assert_eq!(e.rttvar, 62_500_000);
        assert_eq!(e.srtt, 112_500_000);
        assert_eq!(e.rto(), 362_500_000);
    }

    #[test]
    fn min_rto_applies_and_backoff_doubles_to_the_cap() {
        let mut e = RttEstimator::new(1000 * MS, 1000 * MS, 60_000 * MS);
        e.sample(10 * MS);
        assert_eq!(e.rto(), 1000 * MS);
        let mut seen = vec![];
        for _ in 0..8 {
            e.backoff();
            seen.push(e.rto() / MS);
        }
        assert_eq!(
            seen,
            vec![2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]
        );
    }
}
