//! Differentiated Services codepoints (the 6-bit DSCP of the IP header's DS field,
//! RFC 2474 §3) and their standard names: class selectors `CS0`–`CS7` (RFC 2474
//! §4.2.2, `CSn` = 8·n), Assured Forwarding `AFxy` (RFC 2597 §6, = 8·x + 2·y),
//! Expedited Forwarding `EF` = 46 (RFC 3246 §2.2), Voice Admit `VA` = 44 (RFC 5865 §3),
//! Lower Effort `LE` = 1 (RFC 8622 §4) and the default `DF`/`BE` = 0 (RFC 2474 §4.1).
//!
//! A packet's DSCP (`Packet::dscp`) is what a Diffserv-aware queue reads (CAKE's tins);
//! it is separate from `Packet::class`, the simulator's scheduling priority.

use serde_json::Value;

/// The largest DSCP (6 bits).
pub const MAX: u8 = 63;

/// Named codepoints that are not class selectors or AF: (name, value).
const NAMED: &[(&str, u8)] = &[("DF", 0), ("BE", 0), ("LE", 1), ("VA", 44), ("EF", 46)];

/// The codepoint a name stands for (case-insensitive), or None.
pub fn from_name(name: &str) -> Option<u8> {
    let up = name.trim().to_ascii_uppercase();
    if let Some(&(_, v)) = NAMED.iter().find(|(n, _)| *n == up) {
        return Some(v);
    }
    let digits: Vec<u8> = up.bytes().skip(2).map(|b| b.wrapping_sub(b'0')).collect();
    match (up.get(..2), digits.as_slice()) {
        (Some("CS"), [n]) if *n <= 7 => Some(8 * n),
        (Some("AF"), [x, y]) if (1..=4).contains(x) && (1..=3).contains(y) => Some(8 * x + 2 * y),
        _ => None,
    }
}

/// Read a DSCP from a scenario value: a number 0–63 or a name (`"EF"`, `"AF41"`, `"CS1"`,
/// `"LE"`, ...). The error says what was expected.
pub fn read(v: &Value) -> Result<u8, String> {
    let bad = || {
        format!(
            "{}: expected a DSCP from 0 to {MAX} or a name (DF, BE, LE, EF, VA, CS0-CS7, AF11-AF43)",
            crate::scenario::params::show_value(v)
        )
    };
    match v {
        Value::Number(n) => n
            .as_u64()
            .filter(|&d| d <= MAX as u64)
            .map(|d| d as u8)
            .ok_or_else(bad),
        Value::String(s) => from_name(s).ok_or_else(bad),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_map_to_their_rfc_values() {
        // RFC 2474 CSn = 8n; RFC 2597 AFxy = 8x + 2y; RFC 3246 EF 46; RFC 5865 VA 44;
        // RFC 8622 LE 1.
        let cases = [
            ("CS0", 0),
            ("cs1", 8),
            ("CS5", 40),
            ("CS7", 56),
            ("AF11", 10),
            ("AF13", 14),
            ("AF21", 18),
            ("AF41", 34),
            ("af43", 38),
            ("EF", 46),
            ("VA", 44),
            ("LE", 1),
            ("DF", 0),
            ("be", 0),
        ];
        for (name, v) in cases {
            assert_eq!(from_name(name), Some(v), "{name}");
        }
        for bad in ["CS8", "AF14", "AF51", "AF1", "EF1", "", "X", "CS"] {
            assert_eq!(from_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn read_takes_numbers_and_names_and_names_the_problem() {
        assert_eq!(read(&json!(46)), Ok(46));
        assert_eq!(read(&json!("EF")), Ok(46));
        assert_eq!(read(&json!(0)), Ok(0));
        let e = read(&json!(64)).unwrap_err();
        assert!(e.starts_with("64: expected a DSCP from 0 to 63"), "{e}");
        let e = read(&json!("XF")).unwrap_err();
        assert!(e.contains("\"XF\"") && e.contains("AF11-AF43"), "{e}");
        assert!(read(&json!(-1)).is_err());
        assert!(read(&json!(1.5)).is_err());
    }
}
