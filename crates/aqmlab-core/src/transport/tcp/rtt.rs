//! Retransmission timer: RFC 6298, or Linux's variant of it (`RtoStyle`).
//!
//! ## `RtoStyle::Rfc6298` (RFC 6298 §2; what ns-3 `RttMeanDeviation` + `TcpSocketBase` do)
//! - First sample R: `SRTT = R`, `RTTVAR = R/2`.
//! - Later samples: `RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R|` (with the old SRTT), then
//!   `SRTT = 7/8·SRTT + 1/8·R`.
//! - `RTO = max(min_rto, SRTT + max(G, 4·RTTVAR))`: the minimum bounds the total.
//!   `G` (clock granularity) is 1 ms, as in ns-3.
//!
//! ## `RtoStyle::Linux` (`net/ipv4/tcp_input.c`: `tcp_rtt_estimator`, `tcp_set_rto`)
//! Linux keeps the deviation in units of 4·mdev (so "mdev" below is the value that is
//! added to SRTT, RFC 6298's 4·RTTVAR) and floors *the deviation term*, not the total:
//! - First sample R: `SRTT = R`, `mdev = 2R`, `rttvar = max(mdev, rto_min)`,
//!   `mdev_max = rttvar`; the current window ends at `snd_nxt` (`rtt_seq`).
//! - Later samples: `err = R − SRTT`; `SRTT += err/8`. If `err < 0` and `|err| > mdev/4`
//!   the deviation grows with gain 1/32 instead of 1/4 (Linux's "finer gain" when the RTT
//!   falls, so a falling RTT does not inflate the RTO); otherwise
//!   `mdev += |err| − mdev/4`. `mdev_max = max(mdev_max, mdev)`, `rttvar =
//!   max(rttvar, mdev_max)`.
//! - Once per window of data (the first sample with `snd_una > rtt_seq`): `rttvar`
//!   decays a quarter of the way down to `mdev_max`, `mdev_max` restarts at `rto_min`,
//!   `rtt_seq = snd_nxt`.
//! - `RTO = SRTT + rttvar`, capped at `max_rto`. Since `rttvar ≥ mdev_max ≥ rto_min`,
//!   this is `SRTT + max(4·mdev, rto_min)` (with the windowed maximum of mdev): at a
//!   500 ms RTT the RTO is ≥ 700 ms, where RFC 6298 with a 200 ms floor on the total
//!   gives ≈ 500 ms once the RTT is steady — and a queue-inflated path times out
//!   spuriously (issue 10).
//!
//! Both: before any sample the RTO is the configured initial RTO (RFC 6298 §2.1: 1 s);
//! on expiry it doubles (§5.5) up to `max_rto`; the next sample recomputes it, which ends
//! the backoff. Samples come from the timestamp option (RFC 7323 §4), so Karn's rule is
//! not needed: the echoed timestamp identifies the transmission the ACK answers.
//!
//! Integer nanoseconds throughout; the gains are exact shifts.

use crate::sim::time::{Nanos, NS_PER_MS};

/// Clock granularity G.
pub const GRANULARITY: Nanos = NS_PER_MS;

/// How the RTO is derived from the RTT samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoStyle {
    /// Linux `tcp_rtt_estimator`/`tcp_set_rto`: `SRTT + max(4·mdev, rto_min)`.
    Linux,
    /// RFC 6298 / ns-3: `max(min_rto, SRTT + max(G, 4·RTTVAR))`.
    Rfc6298,
}

#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    pub srtt: Nanos,
    /// RFC 6298 RTTVAR (Rfc6298), or Linux `rttvar_us` / 4 (Linux), for reports.
    pub rttvar: Nanos,
    /// The smallest sample seen (for CUBIC/Vegas/Compound base RTT and reports).
    pub min_rtt: Nanos,
    pub has_sample: bool,
    style: RtoStyle,
    /// Linux `mdev_us`: 4 × the mean deviation.
    mdev: Nanos,
    /// Linux `mdev_max_us`: the largest `mdev` of this window, at least `rto_min`.
    mdev_max: Nanos,
    /// Linux `rttvar_us`: the deviation term added to SRTT (4× units).
    linux_rttvar: Nanos,
    /// Linux `rtt_seq`: the window of data the current `mdev_max` belongs to ends here.
    rtt_seq: u64,
    rto: Nanos,
    min_rto: Nanos,
    max_rto: Nanos,
}

impl RttEstimator {
    pub fn new(style: RtoStyle, initial_rto: Nanos, min_rto: Nanos, max_rto: Nanos) -> Self {
        RttEstimator {
            srtt: 0,
            rttvar: 0,
            min_rtt: Nanos::MAX,
            has_sample: false,
            style,
            mdev: 0,
            mdev_max: 0,
            linux_rttvar: 0,
            rtt_seq: 0,
            rto: initial_rto.min(max_rto),
            min_rto,
            max_rto,
        }
    }

    /// Take one RTT sample `r`, carried by an ACK after which the sender's state is
    /// `snd_una`/`snd_nxt` (Linux's once-per-window decay needs them).
    pub fn sample(&mut self, r: Nanos, snd_una: u64, snd_nxt: u64) {
        self.min_rtt = self.min_rtt.min(r);
        let rto = match self.style {
            RtoStyle::Rfc6298 => self.rfc6298(r),
            RtoStyle::Linux => self.linux(r, snd_una, snd_nxt),
        };
        self.has_sample = true;
        self.rto = rto.min(self.max_rto);
    }

    fn rfc6298(&mut self, r: Nanos) -> Nanos {
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = r / 2;
        } else {
            let err = self.srtt.abs_diff(r);
            self.rttvar = self.rttvar - self.rttvar / 4 + err / 4;
            self.srtt = self.srtt - self.srtt / 8 + r / 8;
        }
        (self.srtt + GRANULARITY.max(4 * self.rttvar)).max(self.min_rto)
    }

    fn linux(&mut self, r: Nanos, snd_una: u64, snd_nxt: u64) -> Nanos {
        if !self.has_sample {
            self.srtt = r;
            self.mdev = 2 * r;
            self.linux_rttvar = self.mdev.max(self.min_rto);
            self.mdev_max = self.linux_rttvar;
            self.rtt_seq = snd_nxt;
        } else {
            let falling = r < self.srtt;
            let err = self.srtt.abs_diff(r);
            self.srtt = if falling {
                self.srtt - err / 8
            } else {
                self.srtt + err / 8
            };
            let quarter = self.mdev / 4;
            if err > quarter {
                let grow = err - quarter;
                self.mdev += if falling { grow / 8 } else { grow };
            } else {
                self.mdev -= quarter - err;
            }
            if self.mdev > self.mdev_max {
                self.mdev_max = self.mdev;
                self.linux_rttvar = self.linux_rttvar.max(self.mdev_max);
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max < self.linux_rttvar {
                    self.linux_rttvar -= (self.linux_rttvar - self.mdev_max) / 4;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = self.min_rto;
            }
        }
        self.rttvar = self.linux_rttvar / 4;
        self.srtt + self.linux_rttvar
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
        let mut e = RttEstimator::new(RtoStyle::Rfc6298, 1000 * MS, 200 * MS, 60_000 * MS);
        assert_eq!(e.rto(), 1000 * MS);
        e.sample(100 * MS, 0, 0);
        assert_eq!((e.srtt, e.rttvar), (100 * MS, 50 * MS));
        assert_eq!(e.rto(), 300 * MS); // 100 + 4·50
        e.sample(200 * MS, 0, 0);
        // RTTVAR = 0.75·50 + 0.25·100 = 62.5; SRTT = 0.875·100 + 0.125·200 = 112.5
        assert_eq!(e.rttvar, 62_500_000);
        assert_eq!(e.srtt, 112_500_000);
        assert_eq!(e.rto(), 362_500_000);
    }

    #[test]
    fn min_rto_applies_and_backoff_doubles_to_the_cap() {
        let mut e = RttEstimator::new(RtoStyle::Rfc6298, 1000 * MS, 1000 * MS, 60_000 * MS);
        e.sample(10 * MS, 0, 0);
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

    /// A steady 500 ms RTT, one sample per window of data: RFC 6298 with the 200 ms floor
    /// on the total converges to ≈ SRTT (the deviation decays to 0), Linux keeps
    /// SRTT + rto_min = 700 ms. Hand-worked from `tcp_rtt_estimator`:
    /// sample 1: srtt 500, mdev 1000, rttvar = mdev_max = max(1000, 200) = 1000 → RTO 1500.
    /// sample 2 (err 0, snd_una > rtt_seq): mdev = 1000 − 250 = 750; rttvar decays by
    /// (1000 − 1000)/4 = 0, mdev_max := 200 → RTO 1500.
    /// sample 3: mdev = 750 − 187.5 = 562.5 > mdev_max 200 → mdev_max = 562.5; window end:
    /// rttvar −= (1000 − 562.5)/4 → 890.625, mdev_max := 200 → RTO 1390.625.
    #[test]
    fn linux_rto_at_500ms_rtt_is_srtt_plus_max_of_mdev_and_rto_min() {
        let mut e = RttEstimator::new(RtoStyle::Linux, 1000 * MS, 200 * MS, 60_000 * MS);
        let mut rfc = RttEstimator::new(RtoStyle::Rfc6298, 1000 * MS, 200 * MS, 60_000 * MS);
        let mut rtos = vec![];
        for k in 1..=120u64 {
            // Each sample acknowledges past the previous sample's snd_nxt.
            e.sample(500 * MS, 100 * k, 100 * k + 50);
            rfc.sample(500 * MS, 100 * k, 100 * k + 50);
            rtos.push(e.rto());
        }
        assert_eq!(rtos[0], 1500 * MS);
        assert_eq!(rtos[1], 1500 * MS);
        assert_eq!(rtos[2], 1_390_625_000);
        // The deviation decays, but the term added to SRTT never falls below rto_min.
        assert!(rtos.windows(2).all(|w| w[1] <= w[0]));
        // rttvar − rto_min shrinks by a quarter per window; the integer step `d −= d/4`
        // stops at d ≤ 3 ns (Linux's microsecond arithmetic stops at ≤ 3 µs).
        let last = *rtos.last().unwrap();
        assert!((700 * MS..700 * MS + 4).contains(&last), "{last}");
        assert!(rtos.iter().all(|&r| r >= 700 * MS));
        // RFC 6298 with the floor on the total: 500 ms + 4·RTTVAR → 501 ms (G = 1 ms).
        assert_eq!(rfc.rto(), 501 * MS);
    }

    /// Linux: an RTT that falls grows mdev with gain 1/32, one that rises with 1/4.
    #[test]
    fn linux_mdev_grows_slowly_when_the_rtt_falls() {
        let mk = || {
            let mut e = RttEstimator::new(RtoStyle::Linux, 1000 * MS, 200 * MS, 60_000 * MS);
            e.sample(100 * MS, 0, 10); // srtt 100, mdev 200
            e
        };
        let mut up = mk();
        up.sample(180 * MS, 5, 20); // err +80 > mdev/4 = 50: mdev = 200 + 30 = 230
        assert_eq!(up.mdev, 230 * MS);
        assert_eq!(up.srtt, 110 * MS);
        let mut down = mk();
        down.sample(20 * MS, 5, 20); // err −80: mdev = 200 + 30/8 = 203.75
        assert_eq!(down.mdev, 203_750_000);
        assert_eq!(down.srtt, 90 * MS);
        let mut small = mk();
        small.sample(120 * MS, 5, 20); // |err| 20 < 50: mdev = 200 − 30 = 170
        assert_eq!(small.mdev, 170 * MS);
        // Same window (snd_una 5 ≤ rtt_seq 10): rttvar stays at the window maximum 200.
        assert_eq!(small.rto(), 102_500_000 + 200 * MS);
    }
}
