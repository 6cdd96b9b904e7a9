//! Quantities with units, as written in scenario files.
//!
//! - durations: `ns`, `us`, `ms`, `s`, `min`, `h` (e.g. `"5ms"`, `"1.5s"`);
//! - rates, always **bits** per second with SI prefixes: `bit`/`bps`, `kbit`/`kbps`,
//!   `Mbit`/`Mbps`, `Gbit`/`Gbps` (case-insensitive; unlike Linux `tc`, `mbps` is
//!   megabits, not megabytes);
//! - sizes: `B`, `KB`/`MB`/`GB` (powers of 1000), `KiB`/`MiB`/`GiB` (powers of 1024);
//! - queue limits: a size, or packets: `pkt`, `pkts`, `p`, `packets`.
//!
//! A bare number is refused: a unit-less `5` is a common source of silent errors.

use crate::sim::time::Nanos;

/// A queue limit: in packets or in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl Limit {
    /// Whether a queue holding `packets` packets and `bytes` bytes admits one more of
    /// `size` bytes: a packet limit admits while fewer than `limit` are queued, a byte
    /// limit while the backlog after adding stays within it (Linux `sch_fifo.c`). The
    /// one place every discipline checks its buffer.
    #[inline]
    pub fn admits(self, packets: usize, bytes: u64, size: u32) -> bool {
        match self {
            Limit::Packets(n) => (packets as u64) < n,
            Limit::Bytes(n) => bytes + size as u64 <= n,
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Packets(n) => write!(f, "{n}pkt"),
            Limit::Bytes(n) => write!(f, "{n}B"),
        }
    }
}

/// Split `"12.5 ms"` into (12.5, "ms").
fn split(text: &str) -> Result<(f64, &str), String> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|&(_, c)| {
            !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')
        })
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    // An exponent 'e' directly followed by a letter is the start of a unit, not a number.
    let mut end = end;
    while end > 0 && matches!(t.as_bytes()[end - 1], b'e' | b'E') {
        end -= 1;
    }
    let (num, unit) = t.split_at(end);
    if num.is_empty() {
        return Err("no number".into());
    }
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{num}` is not a number"))?;
    if !v.is_finite() {
        return Err("not a finite number".into());
    }
    if v < 0.0 {
        return Err("must not be negative".into());
    }
    Ok((v, unit.trim()))
}

/// `v` (already scaled to the integer unit) rounded to a u64, or an error when it does
/// not fit. `as u64` would saturate silently: `"1e30s"` would become 2^64 − 1 ns and
/// time arithmetic on it would overflow later.
fn whole(v: f64, too_large: &str, expected: &str) -> Result<u64, String> {
    let r = v.round();
    // 2^64 is exactly representable; every f64 below it converts without loss of range.
    if r >= 18_446_744_073_709_551_616.0 {
        return Err(format!("too large: {too_large}; {expected}"));
    }
    Ok(r as u64)
}

/// The longest duration: 2^64 − 1 ns, about 584 years.
const DURATION_TOO_LARGE: &str = "at most 2^64 ns (about 584 years)";

/// ` (did you mean "ms"?)` for the spellings people type for a duration unit.
fn duration_hint(unit: &str) -> String {
    let u = unit.to_ascii_lowercase();
    let known = match u.trim_end_matches('s') {
        "msec" | "millisecond" | "milli" => "ms",
        "usec" | "microsecond" | "micro" => "us",
        "nsec" | "nanosecond" | "nano" => "ns",
        "second" | "sec" => "s",
        "minute" | "min" | "mn" => "min",
        "hour" | "hr" => "h",
        _ => {
            return crate::scenario::suggest::did_you_mean(
                unit,
                ["ns", "us", "ms", "s", "min", "h"],
            )
        }
    };
    format!(" (did you mean \"{known}\"?)")
}

pub fn parse_duration(text: &str) -> Result<Nanos, String> {
    let expected = "expected a duration with a unit (ns, us, ms, s, min, h), like \"5ms\"";
    let (v, unit) = split(text).map_err(|e| format!("{e}; {expected}"))?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        "" => return Err(format!("missing unit; {expected}")),
        u => {
            return Err(format!(
                "unknown unit `{u}`{}; {expected}",
                duration_hint(u)
            ))
        }
    };
    whole(v * scale, DURATION_TOO_LARGE, expected)
}

pub fn parse_rate(text: &str) -> Result<u64, String> {
    let expected =
        "expected a rate in bits per second with a unit (bit, kbit, Mbit, Gbit, or bps, kbps, Mbps, Gbps), like \"10Mbit\"";
    let (v, unit) = split(text).map_err(|e| format!("{e}; {expected}"))?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "bit" | "bps" | "bit/s" => 1.0,
        "kbit" | "kbps" | "kbit/s" => 1e3,
        "mbit" | "mbps" | "mbit/s" => 1e6,
        "gbit" | "gbps" | "gbit/s" => 1e9,
        "" => return Err(format!("missing unit; {expected}")),
        _ => return Err(format!("unknown unit `{unit}`; {expected}")),
    };
    let bps = whole(v * scale, "at most 2^64 bit/s", expected)?;
    if bps < 1 {
        return Err(format!("must be positive; {expected}"));
    }
    Ok(bps)
}

fn byte_scale(unit: &str) -> Option<f64> {
    Some(match unit {
        "B" | "b" | "byte" | "bytes" => 1.0,
        "KB" | "kB" | "kb" => 1e3,
        "MB" | "mb" => 1e6,
        "GB" | "gb" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

pub fn parse_size(text: &str) -> Result<u64, String> {
    let expected = "expected a size with a unit (B, KB, MB, GB, KiB, MiB, GiB), like \"1500B\"";
    let (v, unit) = split(text).map_err(|e| format!("{e}; {expected}"))?;
    if unit.is_empty() {
        return Err(format!("missing unit; {expected}"));
    }
    let scale = byte_scale(unit).ok_or_else(|| format!("unknown unit `{unit}`; {expected}"))?;
    whole(v * scale, "at most 2^64 bytes", expected)
}

pub fn parse_limit(text: &str) -> Result<Limit, String> {
    let expected = "expected a queue limit in packets or bytes, like \"100pkt\" or \"150KB\"";
    let (v, unit) = split(text).map_err(|e| format!("{e}; {expected}"))?;
    let limit = match unit {
        "pkt" | "pkts" | "p" | "packet" | "packets" => {
            if v.fract() != 0.0 {
                return Err(format!("a packet count must be whole; {expected}"));
            }
            Limit::Packets(whole(v, "at most 2^64 packets", expected)?)
        }
        "" => return Err(format!("missing unit; {expected}")),
        u => Limit::Bytes(whole(
            v * byte_scale(u).ok_or_else(|| format!("unknown unit `{u}`; {expected}"))?,
            "at most 2^64 bytes",
            expected,
        )?),
    };
    match limit {
        Limit::Packets(0) | Limit::Bytes(0) => {
            Err(format!("must be greater than zero; {expected}"))
        }
        l => Ok(l),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5ms"), Ok(5_000_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("2 min"), Ok(120_000_000_000));
        assert_eq!(parse_duration("250us"), Ok(250_000));
        assert!(parse_duration("5").unwrap_err().contains("missing unit"));
        assert!(parse_duration("5 parsecs")
            .unwrap_err()
            .contains("unknown unit `parsecs`"));
        let e = parse_duration("10msec").unwrap_err();
        assert!(
            e.starts_with("unknown unit `msec` (did you mean \"ms\"?)"),
            "{e}"
        );
        assert!(parse_duration("3 Seconds")
            .unwrap_err()
            .contains("(did you mean \"s\"?)"));
        assert!(!parse_duration("3 parsecs")
            .unwrap_err()
            .contains("did you mean"));
        assert!(parse_duration("-1ms").unwrap_err().contains("negative"));
    }

    #[test]
    fn quantities_beyond_u64_are_rejected_not_saturated() {
        // 2^64 ns = 18446744073.709551616 s: the largest duration is just below it.
        // (f64 has 53 bits: the value is within 2^11 ns of 18446744073 s)
        let longest = parse_duration("18446744073s").unwrap();
        assert!(
            longest.abs_diff(18_446_744_073_000_000_000) < 1 << 11,
            "{longest}"
        );
        assert!(parse_duration("18446744074s")
            .unwrap_err()
            .contains("584 years"));
        assert!(parse_duration("1e30s").unwrap_err().contains("too large"));
        assert!(parse_duration("1e300h").unwrap_err().contains("too large"));
        assert!(parse_rate("1e20bit").unwrap_err().contains("too large"));
        assert!(parse_size("1e11GB").unwrap_err().contains("too large"));
        assert!(parse_limit("1e20pkt").unwrap_err().contains("too large"));
        assert!(parse_limit("1e20GB").unwrap_err().contains("too large"));
        assert!(parse_duration("1e999s").unwrap_err().contains("finite"));
    }

    #[test]
    fn rates_are_bits_per_second() {
        assert_eq!(parse_rate("10Mbit"), Ok(10_000_000));
        assert_eq!(parse_rate("10Mbps"), Ok(10_000_000));
        assert_eq!(parse_rate("10mbps"), Ok(10_000_000));
        assert_eq!(parse_rate("64kbit"), Ok(64_000));
        assert_eq!(parse_rate("0.5Mbit"), Ok(500_000));
        assert_eq!(parse_rate("1Gbit"), Ok(1_000_000_000));
        assert!(parse_rate("0Mbit").unwrap_err().contains("positive"));
        assert!(parse_rate("-2Mbit").unwrap_err().contains("negative"));
        assert!(parse_rate("2").unwrap_err().contains("missing unit"));
    }

    #[test]
    fn sizes_and_limits() {
        assert_eq!(parse_size("150KB"), Ok(150_000));
        assert_eq!(parse_size("1KiB"), Ok(1024));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_limit("100pkt"), Ok(Limit::Packets(100)));
        assert_eq!(parse_limit("150KB"), Ok(Limit::Bytes(150_000)));
        assert!(parse_limit("0pkt")
            .unwrap_err()
            .contains("greater than zero"));
        assert!(parse_limit("1.5pkt").unwrap_err().contains("whole"));
    }
}
