//! The DOCSIS 3.0 upstream request/grant MAC, as the CableLabs ns-2 `DocsisLink` model
//! of the DOCSIS AQM study abstracts it (White & Rice, "Active Queue Management
//! Algorithms for DOCSIS 3.0", CableLabs 2013; White & Padden 2012, §2.2.2; the MAC behaviour
//! RFC 8034 Appendix A assumes): the CMTS schedules the upstream in MAP intervals; a
//! cable modem asks for bytes (a contention request when it holds no grant, a request
//! piggybacked on its data while it does) and receives them in a later MAP.
//!
//! Request bookkeeping is a vector of `delay` slots: a request made at a MAP boundary
//! enters the last slot and reaches slot 0 `delay − 1` boundaries later; at each
//! boundary the grant is `min(max_grant, REQ(0))`, then `REQ(0) ← REQ(0) − grant +
//! REQ(1)` and the slots shift. With `delay = 2` this is White & Padden's REQ(0)/REQ(1) pair, and
//! a request is first served `delay` MAP intervals after it was made.
//!
//! `max_grant` models RF congestion (other modems sharing the channel): drawn per MAP
//! uniformly from the integers in `[mean − spread·mean, mean + spread·mean]`, and never
//! more than the channel carries in one MAP interval. `DocsisLink` draws the same way
//! (its `mgvar_` is the spread in percent).

use crate::sim::rng::Rng;

/// The longest request–grant delay, in MAP intervals.
pub const MAX_DELAY_MAPS: u64 = 16;

/// Counters of the MAC, for the `docsis` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MacStats {
    /// MAP boundaries at which the modem had data queued or requested.
    pub maps: u64,
    /// MAPs that gave the modem a non-zero grant.
    pub grants: u64,
    pub bytes_requested: u64,
    pub bytes_granted: u64,
    /// Granted bytes the modem filled with data.
    pub bytes_used: u64,
    /// Grants smaller than the outstanding request because of the per-MAP cap.
    pub grants_capped: u64,
    /// Requests sent in contention (no grant in that MAP) and piggybacked on data.
    pub requests_contention: u64,
    pub requests_piggyback: u64,
    /// Packets whose bytes were spread over more than one grant.
    pub fragmented_packets: u64,
}

pub struct Mac {
    /// Outstanding requests, slot 0 served next.
    req: Vec<u64>,
    grant_lo: u64,
    grant_hi: u64,
    rng: Rng,
    pub stats: MacStats,
}

impl Mac {
    /// `delay` ≥ 1 MAP intervals; per-MAP grant cap uniform in [lo, hi] bytes.
    pub fn new(delay: usize, grant_lo: u64, grant_hi: u64, rng: Rng) -> Self {
        debug_assert!(delay >= 1 && grant_lo <= grant_hi);
        Mac {
            req: vec![0; delay],
            grant_lo,
            grant_hi,
            rng,
            stats: MacStats::default(),
        }
    }

    /// Bytes requested and not yet granted.
    pub fn outstanding(&self) -> u64 {
        self.req.iter().sum()
    }

    /// Requested bytes due for a grant now (slot 0).
    pub fn due(&self) -> u64 {
        self.req[0]
    }

    /// The grant for the MAP interval starting now (at most `channel` bytes), and the
    /// request pipeline moved on by one interval.
    pub fn grant(&mut self, channel: u64) -> u64 {
        let r0 = self.req[0];
        let grant = if r0 == 0 {
            0
        } else {
            let cap = self.draw_cap().min(channel);
            if cap < r0 {
                self.stats.grants_capped += 1;
            }
            cap.min(r0)
        };
        let carry = r0 - grant;
        self.req.remove(0);
        self.req.push(0);
        self.req[0] += carry;
        if grant > 0 {
            self.stats.grants += 1;
            self.stats.bytes_granted += grant;
        }
        grant
    }

    /// Ask for `bytes` more, at a boundary where the modem was granted `granted` bytes
    /// (a piggybacked request if non-zero, else a contention request).
    pub fn request(&mut self, bytes: u64, granted: u64) {
        if bytes == 0 {
            return;
        }
        *self.req.last_mut().expect("delay ≥ 1") += bytes;
        self.stats.bytes_requested += bytes;
        if granted > 0 {
            self.stats.requests_piggyback += 1;
        } else {
            self.stats.requests_contention += 1;
        }
    }

    fn draw_cap(&mut self) -> u64 {
        if self.grant_lo == self.grant_hi {
            return self.grant_hi;
        }
        self.grant_lo + self.rng.below(self.grant_hi - self.grant_lo + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mac(delay: usize, lo: u64, hi: u64) -> Mac {
        Mac::new(delay, lo, hi, Rng::stream(1, "mac"))
    }

    /// White & Padden's two slots: a request made at boundary 0 is granted at boundary 2.
    #[test]
    fn a_request_is_granted_two_maps_later() {
        let mut m = mac(2, 10_000, 10_000);
        assert_eq!(m.grant(u64::MAX), 0);
        m.request(3000, 0);
        assert_eq!(m.grant(u64::MAX), 0); // boundary 1
        assert_eq!(m.grant(u64::MAX), 3000); // boundary 2
        assert_eq!(m.outstanding(), 0);
        assert_eq!(m.stats.requests_contention, 1);
    }

    /// A capped grant carries the rest to the next MAP, ahead of newer requests:
    /// REQ(0) ← REQ(0) − grant + REQ(1).
    #[test]
    fn the_cap_carries_the_rest_over() {
        let mut m = mac(2, 1250, 1250);
        m.request(3000, 0);
        m.grant(u64::MAX);
        m.request(500, 0);
        assert_eq!(m.grant(u64::MAX), 1250); // 3000 − 1250 = 1750 left, + 500 joins
        assert_eq!(m.outstanding(), 2250);
        assert_eq!(m.grant(u64::MAX), 1250);
        assert_eq!(m.grant(u64::MAX), 1000);
        assert_eq!(m.grant(u64::MAX), 0);
        assert_eq!(m.stats.grants_capped, 2);
        assert_eq!(m.stats.bytes_granted, 3500);
    }

    /// The channel bounds the grant even when the cap does not.
    #[test]
    fn the_channel_bounds_a_grant() {
        let mut m = mac(1, 9000, 9000);
        m.request(9000, 0);
        assert_eq!(m.grant(5000), 5000);
        assert_eq!(m.grant(5000), 4000);
    }

    /// Caps are drawn from [lo, hi] and, over many MAPs, average their midpoint.
    #[test]
    fn drawn_caps_stay_in_range_and_average_the_mean() {
        let mut m = mac(1, 1000, 1500);
        let n = 20_000;
        let mut sum = 0;
        for _ in 0..n {
            m.request(1_000_000, 1);
            let g = m.grant(u64::MAX);
            assert!((1000..=1500).contains(&g), "{g}");
            sum += g;
            m.req[0] = 0;
        }
        // sd of one draw ≈ 144.6 B, of the mean ≈ 1.02 B: 5 B is ~5 sd.
        let mean = sum as f64 / n as f64;
        assert!((mean - 1250.0).abs() < 5.0, "{mean}");
    }
}
