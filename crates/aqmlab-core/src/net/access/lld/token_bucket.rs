//! The Aggregate Service Flow's rate limit as the CMTS upstream scheduler enforces it:
//! a Maximum Sustained Traffic Rate bucket (depth: Maximum Traffic Burst) and a Peak
//! Traffic Rate bucket, refilled once per MAP and debited by the bytes granted in it
//! (DOCSIS 3.1 MULPI §C.2.2.7.2 Maximum Sustained Traffic Rate, §C.2.2.7.3 Maximum
//! Traffic Burst, §C.2.2.7.10 Peak Traffic Rate, as CableLabs docsis-ns3 numbers them in
//! `model/docsis-configuration.h:124-132`; the bucket arithmetic is
//! `CmtsUpstreamScheduler::IncrementTokenBucketCounters` / `DecrementTokenBucketCounters`
//! / `ReceiveUnused*GrantUpdate`, `model/cmts-upstream-scheduler.cc:198-214,835-939`).
//!
//! At each MAP the scheduler adds `interval × rate` to both buckets (the first MAP counts
//! one whole MAP interval, `cmts-upstream-scheduler.cc:857-864`), caps the MSR bucket at
//! the Maximum Traffic Burst and the peak bucket at `peak × 2 ms` (its
//! `PeakRateTokenInterval`, lines 108-111 and 760). It may grant `min(msr, peak)` bytes,
//! nothing while the MSR bucket is empty; granted bytes leave both buckets (never below
//! zero), and grant bytes the modem did not use go back into the MSR bucket. The MSR
//! bucket starts full, the peak bucket empty (line 757-758).
//!
//! Tokens are kept in bit·ns units (a byte is 8·10⁹ units, a bucket of R bit/s gains R
//! units per ns), so refills are exact where docsis-ns3 truncates each MAP's increment to
//! whole bytes. Without a peak rate the MSR bucket alone limits the grant (docsis-ns3 has
//! no such case: a zero peak rate there grants nothing).

use crate::sim::time::Nanos;

/// Units per byte: 8 bits × 10⁹ ns/s.
const SCALE: i128 = 8 * 1_000_000_000;

/// The CMTS's pre-MAP peak bucket depth interval (docsis-ns3 `PeakRateTokenInterval`).
pub const PEAK_TOKEN_INTERVAL: Nanos = 2_000_000;

#[derive(Clone, Debug)]
struct Bucket {
    rate_bps: u64,
    depth: i128,
    tokens: i128,
}

impl Bucket {
    fn refill(&mut self, interval: Nanos) {
        self.tokens = (self.tokens + self.rate_bps as i128 * interval as i128).min(self.depth);
    }

    fn spend(&mut self, bytes: u64) {
        self.tokens = (self.tokens - bytes as i128 * SCALE).max(0);
    }
}

/// The ASF's MSR and optional peak bucket.
#[derive(Clone, Debug)]
pub struct AsfBuckets {
    msr: Bucket,
    peak: Option<Bucket>,
    last: Option<Nanos>,
}

impl AsfBuckets {
    /// MSR `amsr_bps` with depth `max_burst` bytes (full at the start); peak rate and
    /// its depth in bytes (empty at the start).
    pub fn new(amsr_bps: u64, max_burst: u64, peak: Option<(u64, u64)>) -> Self {
        let depth = max_burst as i128 * SCALE;
        AsfBuckets {
            msr: Bucket {
                rate_bps: amsr_bps,
                depth,
                tokens: depth,
            },
            peak: peak.map(|(rate_bps, d)| Bucket {
                rate_bps,
                depth: d as i128 * SCALE,
                tokens: 0,
            }),
            last: None,
        }
    }

    /// The MAP at `now` (MAP interval `map`): refill, then the bytes that may be granted.
    pub fn refill(&mut self, now: Nanos, map: Nanos) -> u64 {
        let interval = self.last.map_or(map, |l| now - l);
        self.last = Some(now);
        self.msr.refill(interval);
        if let Some(p) = &mut self.peak {
            p.refill(interval);
        }
        self.available()
    }

    /// Bytes that may be granted now: none while the MSR bucket is empty.
    pub fn available(&self) -> u64 {
        if self.msr.tokens <= 0 {
            return 0;
        }
        let t = match &self.peak {
            Some(p) => self.msr.tokens.min(p.tokens),
            None => self.msr.tokens,
        };
        (t / SCALE) as u64
    }

    /// `bytes` granted: out of both buckets, never below zero.
    pub fn spend(&mut self, bytes: u64) {
        self.msr.spend(bytes);
        if let Some(p) = &mut self.peak {
            p.spend(bytes);
        }
    }

    /// Granted bytes the modem left unused go back into the MSR bucket (uncapped until
    /// the next refill, as docsis-ns3 does).
    pub fn refund(&mut self, bytes: u64) {
        self.msr.tokens += bytes as i128 * SCALE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NS_PER_MS;

    const MAP: Nanos = 2 * NS_PER_MS;

    /// AMSR 8 Mbit/s (2000 B per 2-ms MAP), burst 20 000 B, peak 16 Mbit/s (4000 B per
    /// MAP, depth 16 Mbit/s × 2 ms = 4000 B), a backlog granted all it may get each MAP.
    /// By hand: MAP 0: msr 20 000 (full, capped), peak 0 + 4000 → grant 4000, msr 16 000.
    /// Each MAP adds 2000 to msr and refills peak to 4000, so msr before the grant is
    /// 18 000, 16 000, ..., 4000 at MAPs 1..8 (grant 4000 each, the peak rate), leaving
    /// msr 0 after MAP 8; MAP 9 finds msr 2000 < peak 4000 → 2000, and from then on
    /// 2000 per MAP (the AMSR). Peak-rate grants last 9 MAPs = 18 ms, 36 000 B =
    /// burst + AMSR × 16 ms.
    #[test]
    fn peak_then_sustained_on_a_hand_worked_trace() {
        let mut b = AsfBuckets::new(8_000_000, 20_000, Some((16_000_000, 4000)));
        let mut grants = Vec::new();
        for k in 0..12u64 {
            let g = b.refill(k * MAP, MAP);
            b.spend(g);
            grants.push(g);
        }
        assert_eq!(
            grants,
            vec![4000, 4000, 4000, 4000, 4000, 4000, 4000, 4000, 4000, 2000, 2000, 2000]
        );
    }

    /// The MSR bucket caps at the burst; without a peak bucket a full burst is grantable
    /// at once; an idle MAP gap refills by the whole gap.
    #[test]
    fn burst_caps_and_idle_gaps_refill() {
        let mut b = AsfBuckets::new(8_000_000, 3044, None);
        assert_eq!(b.refill(0, MAP), 3044); // 3044 + 2000 capped at 3044
        b.spend(3000);
        assert_eq!(b.refill(MAP, MAP), 2044); // 44 + 2000
        b.spend(5000); // more than held: floors at zero
        assert_eq!(b.available(), 0);
        assert_eq!(b.refill(MAP + NS_PER_MS, MAP), 1000); // a 1-ms gap: 1000 B
    }

    /// Unused grant bytes return to the MSR bucket only; the peak bucket still limits.
    #[test]
    fn refunds_go_to_the_msr_bucket() {
        let mut b = AsfBuckets::new(8_000_000, 10_000, Some((16_000_000, 4000)));
        assert_eq!(b.refill(0, MAP), 4000);
        b.spend(4000); // msr 6000, peak 0
        b.refund(1500); // msr 7500
        assert_eq!(b.available(), 0); // the peak bucket is empty
        assert_eq!(b.refill(MAP, MAP), 4000); // msr 9500, peak 4000
        b.spend(4000);
        assert_eq!(b.refill(2 * MAP, MAP), 4000); // msr 7500
    }
}
