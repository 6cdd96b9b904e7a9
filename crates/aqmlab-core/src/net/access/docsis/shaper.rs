//! The DOCSIS service-flow rate shaper: a token bucket for the Maximum Sustained
//! Traffic Rate (depth: Maximum Traffic Burst) in series with an optional one for the
//! Peak Traffic Rate (depth: the peak burst), after DOCSIS 3.0 MULPI (CM-SP-MULPIv3.0,
//! §C.2.2.5.2 "Maximum Sustained Traffic Rate" and §C.2.2.5.3 "Maximum Traffic Burst";
//! peak rate §C.2.2.5.10): over any interval T a flow may send at most R·T + B bytes,
//! and with a peak rate at most P·T + B_peak.
//!
//! A packet conforms when both buckets hold at least its size (a packet larger than a
//! bucket's depth conforms when that bucket is full, and leaves it in debt, so no size
//! can deadlock the shaper). Tokens are taken only when a packet is released, so a packet
//! the AQM drops never consumes any (White & Padden 2012, §2.2.1: "Packets dropped by
//! CoDel are not counted against the token bucket").
//!
//! Integer arithmetic: one byte is `SCALE` token units (bits × ns per s), a bucket of rate
//! R bit/s gains R units per ns, so refills and waits are exact.

use crate::sim::time::Nanos;

/// Token units per byte: 8 bits × 10⁹ ns/s.
const SCALE: i128 = 8 * 1_000_000_000;

/// One token bucket: `rate_bps`, depth `depth` (units), full at time 0.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate_bps: u64,
    depth: i128,
    tokens: i128,
    last: Nanos,
}

impl TokenBucket {
    pub fn new(rate_bps: u64, depth_bytes: u64) -> Self {
        let depth = depth_bytes as i128 * SCALE;
        TokenBucket {
            rate_bps,
            depth,
            tokens: depth,
            last: 0,
        }
    }

    /// Tokens at `now` (≥ the last update), without changing the bucket.
    fn level(&self, now: Nanos) -> i128 {
        let gained = self.rate_bps as i128 * (now - self.last) as i128;
        (self.tokens + gained).min(self.depth)
    }

    /// Units a packet of `size` bytes must find in the bucket.
    fn need(&self, size: u32) -> i128 {
        (size as i128 * SCALE).min(self.depth)
    }

    /// The earliest time at or after `now` when a `size`-byte packet conforms.
    pub fn ready_at(&self, now: Nanos, size: u32) -> Nanos {
        let short = self.need(size) - self.level(now);
        if short <= 0 {
            return now;
        }
        now + wait_ns(short, self.rate_bps)
    }

    /// Release a `size`-byte packet at `now`: refill, then take its tokens.
    pub fn take(&mut self, now: Nanos, size: u32) {
        self.tokens = self.level(now) - size as i128 * SCALE;
        self.last = now;
    }

    /// Whole bytes in the bucket at `now`.
    #[cfg(test)]
    pub fn bytes(&self, now: Nanos) -> i64 {
        (self.level(now) / SCALE) as i64
    }
}

/// Nanoseconds until a bucket short of `short` (> 0) units gains them at `rate_bps`
/// units per ns, rounded up. A shortfall below 2^64 units (≈ 2.3 GB of tokens: every
/// packet, all but an enormous debt) divides in one 64-bit instruction instead of
/// the 128-bit division routine (~60 instructions, once or twice per packet); both give
/// the same quotient.
fn wait_ns(short: i128, rate_bps: u64) -> Nanos {
    match u64::try_from(short) {
        Ok(s) => s.div_ceil(rate_bps),
        Err(_) => {
            let rate = rate_bps as i128;
            ((short + rate - 1) / rate) as Nanos
        }
    }
}

/// Sustained-rate bucket and optional peak-rate bucket in series.
#[derive(Clone, Debug)]
pub struct Shaper {
    pub sustained: TokenBucket,
    pub peak: Option<TokenBucket>,
}

impl Shaper {
    /// When a `size`-byte packet conforms to both buckets (≥ `now`).
    pub fn ready_at(&self, now: Nanos, size: u32) -> Nanos {
        let s = self.sustained.ready_at(now, size);
        match &self.peak {
            Some(p) => s.max(p.ready_at(now, size)),
            None => s,
        }
    }

    pub fn take(&mut self, now: Nanos, size: u32) {
        self.sustained.take(now, size);
        if let Some(p) = &mut self.peak {
            p.take(now, size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NS_PER_MS;

    /// Release times of `n` back-to-back `size`-byte packets, all waiting from time 0.
    fn releases(s: &mut Shaper, n: usize, size: u32) -> Vec<Nanos> {
        let mut t = 0;
        (0..n)
            .map(|_| {
                t = s.ready_at(t, size);
                s.take(t, size);
                t
            })
            .collect()
    }

    /// R = 1 Mbit/s (125 B/ms), P = 2 Mbit/s (250 B/ms), B = 100 000 B, peak burst one
    /// 1000-B packet. At peak pace (one packet per 4 ms) the sustained bucket holds
    /// 100 000 − 500·n bytes before packet n, so packets 0..=198 leave every 4 ms; packet
    /// 199 finds 500 B at 796 ms and waits 4 ms for 500 more: it leaves at 800 ms =
    /// B/(P − R) = 100 000 B / 125 B/ms, and from then on one every 8 ms (R).
    #[test]
    fn peak_burst_lasts_burst_over_peak_minus_sustained() {
        let mut s = Shaper {
            sustained: TokenBucket::new(1_000_000, 100_000),
            peak: Some(TokenBucket::new(2_000_000, 1000)),
        };
        let t = releases(&mut s, 203, 1000);
        for (n, &tn) in t.iter().enumerate().take(199) {
            assert_eq!(tn, 4 * n as u64 * NS_PER_MS, "packet {n}");
        }
        assert_eq!(t[199], 800 * NS_PER_MS);
        assert_eq!(t[200], 808 * NS_PER_MS);
        assert_eq!(t[202], 824 * NS_PER_MS);
    }

    /// Without a peak bucket the whole burst leaves at once, then the sustained pace.
    #[test]
    fn without_peak_the_burst_leaves_at_once() {
        let mut s = Shaper {
            sustained: TokenBucket::new(1_000_000, 3000),
            peak: None,
        };
        let t = releases(&mut s, 5, 1000);
        assert_eq!(t, vec![0, 0, 0, 8 * NS_PER_MS, 16 * NS_PER_MS]);
    }

    /// Tokens go only to released packets: a bucket nobody takes from refills to depth
    /// and no further.
    #[test]
    fn untaken_tokens_stay_and_cap_at_depth() {
        let mut b = TokenBucket::new(8_000, 10); // 1 B/ms
        b.take(0, 10);
        assert_eq!(b.bytes(4 * NS_PER_MS), 4);
        assert_eq!(b.ready_at(4 * NS_PER_MS, 6), 6 * NS_PER_MS);
        assert_eq!(b.bytes(100 * NS_PER_MS), 10);
    }

    /// Both division paths round up: 10 units at 3 per ns take 4 ns; a shortfall of
    /// 2^64 units or more (≈ 2.3 GB of tokens) takes the 128-bit path, with the same
    /// rounding.
    #[test]
    fn waits_round_up_on_both_division_paths() {
        assert_eq!(wait_ns(10, 3), 4);
        assert_eq!(wait_ns(9, 3), 3);
        assert_eq!(wait_ns(1, 1_000_000), 1);
        let big = u64::MAX as i128 + 1; // 2^64
        assert_eq!(wait_ns(big, 1 << 20), 1 << 44);
        assert_eq!(wait_ns(big + 1, 1 << 20), (1 << 44) + 1);
    }

    /// A packet larger than the depth goes when the bucket is full and leaves a debt.
    #[test]
    fn oversize_packet_conforms_when_full_and_leaves_a_debt() {
        let mut b = TokenBucket::new(8_000, 10); // 1 B/ms
        assert_eq!(b.ready_at(0, 30), 0);
        b.take(0, 30);
        assert_eq!(b.bytes(0), -20);
        assert_eq!(b.ready_at(0, 1), 21 * NS_PER_MS);
    }
}
