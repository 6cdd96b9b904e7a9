//! Reading a DOCSIS link's parameter table (`model = { kind = "docsis", ... }`, or the
//! older `model = "docsis"` with a `docsis = { ... }` table): every key checked, every
//! error naming its field path (docs/access/docsis.md lists the keys).

use super::mac::MAX_DELAY_MAPS;
use crate::scenario::error::Result;
use crate::scenario::params::{param, ParamDoc, Params};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

/// Direction of a DOCSIS link: the modem's upstream (shaper, TxQ, request/grant MAC) or
/// the CMTS's downstream (shaper only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Upstream,
    Downstream,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DocsisConfig {
    pub direction: Direction,
    pub sustained_bps: u64,
    pub max_burst: u64,
    /// Peak rate and its bucket depth, if the flow has a peak rate.
    pub peak: Option<(u64, u64)>,
    /// Upstream only (ignored downstream): TxQ capacity in packets, MAP interval,
    /// request–grant delay in MAPs, per-MAP grant cap range in bytes.
    pub txq_limit: usize,
    pub map_interval: Nanos,
    pub request_delay: usize,
    pub grant_lo: u64,
    pub grant_hi: u64,
    /// What a full TxQ does to the packet the shaper releases next.
    pub txq_overflow: TxqOverflow,
}

/// A full TxQ: hold the shaper (back-pressure, the AQM queue grows) or drop the packet
/// the shaper releases into it (the study's 32-packet DropTail TxQ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxqOverflow {
    Pushback,
    Drop,
}

/// Keys only an upstream link reads.
const UPSTREAM_ONLY: &[&str] = &[
    "txq_limit",
    "map_interval",
    "request_delay",
    "grant_mean",
    "grant_spread",
    "txq_overflow",
];

/// The parameter table's keys (docs/access/docsis.md, "Parameters").
pub const PARAMS: &[ParamDoc] = &[
    param("direction", "string", "upstream", "upstream (the modem: shaper, TxQ, request/grant MAC) or downstream (a CMTS: shaper only)"),
    param("sustained_rate", "rate", "required", "Maximum Sustained Traffic Rate R"),
    param("max_burst", "size", "3044B", "Maximum Traffic Burst B: depth of the R bucket (at least the MTU)"),
    param("peak_rate", "rate", "none", "Peak Traffic Rate P (at least R); none: no peak bucket"),
    param("peak_burst", "size", "1522B", "depth of the P bucket (at least the MTU; only with peak_rate)"),
    param("txq_limit", "int", "32", "transmit queue capacity in packets (upstream)"),
    param("txq_overflow", "string", "pushback", "a full TxQ holds the shaper (pushback) or drops the packet released into it (drop) (upstream)"),
    param("map_interval", "duration", "2ms", "MAP interval; the channel must carry an MTU per MAP (upstream)"),
    param("request_delay", "int", "2", "MAP intervals from a request to its first grant, 1-16 (upstream)"),
    param("grant_mean", "size", "channel bytes per MAP", "mean per-MAP grant cap: RF congestion (upstream)"),
    param("grant_spread", "float", "0", "the cap is drawn uniformly in mean*(1 +- spread), [0, 0.99] (upstream)"),
];

/// Bytes the channel carries in one MAP interval.
pub fn channel_bytes(rate_bps: u64, map: Nanos) -> u64 {
    (rate_bps as u128 * map as u128 / (8 * NS_PER_S as u128)) as u64
}

impl DocsisConfig {
    /// Read the model's parameter table `p` for a link of channel rate `rate_bps` and MTU
    /// `mtu`.
    pub fn read(p: &mut Params, rate_bps: u64, mtu: u32) -> Result<Self> {
        let direction = match p.choice_or("direction", "upstream", &["upstream", "downstream"])? {
            "downstream" => Direction::Downstream,
            _ => Direction::Upstream,
        };
        let sustained_bps = p.required_rate("sustained_rate")?;
        if sustained_bps == 0 {
            return Err(p.error("sustained_rate", "0: expected a rate greater than zero"));
        }
        let max_burst = p.size_or("max_burst", 3044)?;
        if max_burst < mtu as u64 {
            return Err(p.error(
                "max_burst",
                format!("{max_burst}B: expected at least the link MTU ({mtu}B)"),
            ));
        }
        let peak_rate = p.rate("peak_rate")?;
        let peak_burst = p.size("peak_burst")?;
        let peak = match (peak_rate, peak_burst) {
            (None, Some(_)) => {
                return Err(p.error("peak_burst", "given without a `peak_rate`"));
            }
            (None, None) => None,
            (Some(r), b) => {
                if r < sustained_bps {
                    return Err(p.error(
                        "peak_rate",
                        format!(
                            "{r}bit/s: expected at least sustained_rate ({sustained_bps}bit/s)"
                        ),
                    ));
                }
                let b = b.unwrap_or(1522);
                if b < mtu as u64 {
                    return Err(p.error(
                        "peak_burst",
                        format!("{b}B: expected at least the link MTU ({mtu}B)"),
                    ));
                }
                Some((r, b))
            }
        };
        let mut cfg = DocsisConfig {
            direction,
            sustained_bps,
            max_burst,
            peak,
            txq_limit: 32,
            map_interval: 2 * NS_PER_MS,
            request_delay: 2,
            grant_lo: 0,
            grant_hi: 0,
            txq_overflow: TxqOverflow::Pushback,
        };
        if direction == Direction::Downstream {
            if let Some(k) = UPSTREAM_ONLY.iter().find(|k| p.peek(k).is_some()) {
                return Err(p.error(
                    k,
                    "only an upstream docsis link has a transmit queue and a MAC (direction = \"upstream\")",
                ));
            }
            return Ok(cfg);
        }
        cfg.txq_limit = p.u64_or("txq_limit", 32, 1, 1_000_000)? as usize;
        cfg.txq_overflow = match p.choice_or("txq_overflow", "pushback", &["pushback", "drop"])? {
            "drop" => TxqOverflow::Drop,
            _ => TxqOverflow::Pushback,
        };
        cfg.map_interval = p.positive_duration_or("map_interval", 2 * NS_PER_MS)?;
        cfg.request_delay = p.u64_or("request_delay", 2, 1, MAX_DELAY_MAPS)? as usize;
        let channel = channel_bytes(rate_bps, cfg.map_interval);
        if channel < mtu as u64 {
            return Err(p.error(
                "map_interval",
                format!(
                    "the channel ({rate_bps}bit/s) carries {channel}B per MAP interval: expected at least one MTU ({mtu}B); raise `rate` or `map_interval`"
                ),
            ));
        }
        let mean = p.size_or("grant_mean", channel)?;
        if mean == 0 || mean > channel {
            return Err(p.error(
                "grant_mean",
                format!("{mean}B: expected 1B up to the channel's {channel}B per MAP interval"),
            ));
        }
        let spread = p.f64_or("grant_spread", 0.0, 0.0, 0.99)?;
        let w = (mean as f64 * spread).round() as u64;
        cfg.grant_lo = mean - w.min(mean - 1);
        cfg.grant_hi = mean + w;
        if cfg.grant_hi > channel {
            return Err(p.error(
                "grant_spread",
                format!(
                    "{spread}: grants up to {}B exceed the channel's {channel}B per MAP interval; lower `grant_mean` or `grant_spread`",
                    cfg.grant_hi
                ),
            ));
        }
        Ok(cfg)
    }
}
