//! Simulation time: unsigned 64-bit nanoseconds.
//!
//! The clock never uses floating point, so event order and every derived number are
//! exact and identical on every machine. 2^64 ns is about 584 years of simulated time.

/// A point in simulated time, or a span of it, in nanoseconds.
pub type Nanos = u64;

pub const NS_PER_US: Nanos = 1_000;
pub const NS_PER_MS: Nanos = 1_000_000;
pub const NS_PER_S: Nanos = 1_000_000_000;

/// Time to serialise `bytes` onto a link of `rate_bps`, rounded up to the next nanosecond
/// so that a link is never faster than its configured rate.
#[inline]
pub fn tx_time(bytes: u32, rate_bps: u64) -> Nanos {
    // bytes·8·10⁹ fits 64 bits up to 2.3 GB: one 64-bit division instead of a 128-bit
    // one (a library call) per packet, with the same result.
    const MAX_U64_BYTES: u32 = (u64::MAX / (8 * NS_PER_S)) as u32;
    if bytes <= MAX_U64_BYTES {
        return (bytes as u64 * 8 * NS_PER_S).div_ceil(rate_bps);
    }
    let bits = bytes as u128 * 8 * NS_PER_S as u128;
    bits.div_ceil(rate_bps as u128) as Nanos
}

/// Seconds as `f64`, for reporting only (never for the clock).
#[inline]
pub fn secs(t: Nanos) -> f64 {
    t as f64 / NS_PER_S as f64
}

/// Milliseconds as `f64`, for reporting only.
#[inline]
pub fn millis(t: Nanos) -> f64 {
    t as f64 / NS_PER_MS as f64
}

/// A duration given in (possibly fractional) seconds, rounded to the nearest nanosecond.
#[inline]
pub fn from_secs_f64(s: f64) -> Nanos {
    (s * NS_PER_S as f64).round() as Nanos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_of_1500_bytes_at_10mbit_is_1_2_ms() {
        assert_eq!(tx_time(1500, 10_000_000), 1_200_000);
    }

    #[test]
    fn tx_time_of_sizes_past_64_bits_matches_the_wide_division() {
        // 4 GB · 8 · 10⁹ overflows 64 bits: the 128-bit path. 2^32−1 bytes at 1 Gbit/s.
        assert_eq!(tx_time(u32::MAX, 1_000_000_000), 34_359_738_360);
        // The last size of the 64-bit path and the first past it agree with the wide sum.
        let wide = |b: u32, r: u64| (b as u128 * 8_000_000_000).div_ceil(r as u128) as u64;
        let edge = (u64::MAX / 8_000_000_000) as u32;
        for b in [edge - 1, edge, edge + 1] {
            assert_eq!(tx_time(b, 7), wide(b, 7));
        }
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 byte at 3 bit/s = 8/3 s = 2.666...e9 ns -> rounded up.
        assert_eq!(tx_time(1, 3), 2_666_666_667);
    }
}
