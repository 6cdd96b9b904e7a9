//! Reading an LLD modem's parameter table (`model = { kind = "lld", ... }`): every key
//! checked, every error naming its field path (docs/access/lld.md lists the keys, their
//! defaults and sources).

use super::dual_queue_aqm::{self, DualQueueConfig, MAX_FRAME_SIZE};
use super::queue_protection::{self, QpConfig};
use super::token_bucket::PEAK_TOKEN_INTERVAL;
use crate::net::access::docsis::config::channel_bytes;
use crate::net::access::docsis::mac::MAX_DELAY_MAPS;
use crate::scenario::error::Result;
use crate::scenario::params::{param, ParamDoc, Params};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};

#[derive(Clone, Debug, PartialEq)]
pub struct LldConfig {
    /// Aggregate Maximum Sustained Traffic Rate and the MSR bucket depth (bytes).
    pub amsr_bps: u64,
    pub max_burst: u64,
    /// Peak rate and its bucket depth (bytes).
    pub peak: Option<(u64, u64)>,
    pub map_interval: Nanos,
    pub request_delay: usize,
    /// Inter-SF scheduling weight of the LL SF, out of 256.
    pub weight: u8,
    /// PGS: Guaranteed Grant Rate, Interval, offset of the first grant.
    pub pgs: Option<(u64, Nanos, Nanos)>,
    /// SF queue capacities in bytes.
    pub classic_buffer: u64,
    pub ll_buffer: u64,
    /// The Classic SF's DOCSIS-PIE latency target (Classic AQM Latency Target).
    pub classic_target: Nanos,
    /// The dual-queue coupled AQM and Queue Protection.
    pub aqm: DualQueueConfig,
    pub qp: QpConfig,
    /// The LL SF's delay estimate for the IAQM and Queue Protection.
    pub ll_estimator: LlEstimator,
}

/// The LL queue delay estimate (docsis-ns3 `LlEstimator`, `dual-queue-coupled-aqm.cc:212-219`):
/// `qdelayCoupledL` (the LL bytes at MAX_RATE; docsis-ns3's default) or `qdelayCoupledV`
/// (the virtual queue of Annex O, the spec's upstream estimate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlEstimator {
    CoupledL,
    CoupledV,
}

/// docsis-ns3's `VqInterval` (`dual-queue-coupled-aqm.cc:220-224`): how often the
/// virtual queue is aligned to the actual LL backlog.
pub const VQ_INTERVAL: Nanos = 500_000;

/// The modem's own keys (docs/access/lld.md, "Parameters").
const MODEM_PARAMS: &[ParamDoc] = &[
    param("sustained_rate", "rate", "required", "Aggregate Maximum Sustained Traffic Rate (AMSR) of the ASF"),
    param("max_burst", "size", "3044B", "Maximum Traffic Burst: depth of the AMSR bucket (at least the MTU)"),
    param("peak_rate", "rate", "none", "Peak Traffic Rate of the ASF (at least sustained_rate); none: no peak bucket"),
    param("peak_burst", "size", "peak_rate x 2ms", "depth of the peak bucket (at least the MTU; only with peak_rate)"),
    param("map_interval", "duration", "2ms", "MAP interval; the channel must carry an MTU per MAP"),
    param("request_delay", "int", "2", "MAP intervals from a request to its first grant, 1-16"),
    param("scheduling_weight", "int", "230", "the LL SF's share of a MAP's grant when both SFs are backlogged, out of 256 (1-255)"),
    param("guaranteed_grant_rate", "rate", "none", "PGS: Guaranteed Grant Rate of the LL SF; none: no PGS"),
    param("guaranteed_grant_interval", "duration", "map_interval", "PGS: Guaranteed Grant Interval (only with guaranteed_grant_rate)"),
    param("pgs_offset", "duration", "0", "PGS: time of the first grant into the first MAP interval (only with guaranteed_grant_rate)"),
    param("classic_buffer", "size", "100ms x sustained_rate", "Classic SF queue capacity"),
    param("ll_buffer", "size", "max(10ms x sustained_rate, 40000B)", "LL SF queue capacity"),
    param("classic_aqm_target", "duration", "10ms", "Classic AQM Latency Target: the Classic SF's DOCSIS-PIE target delay"),
    param("ll_delay_estimate", "string", "coupled_l", "the LL delay the IAQM and Queue Protection see: coupled_l (LL bytes / AMSR) or coupled_v (the Annex O virtual queue)"),
];

const N_PARAMS: usize =
    MODEM_PARAMS.len() + dual_queue_aqm::PARAMS.len() + queue_protection::PARAMS.len();

/// Every key: the modem's, the dual-queue AQM's and Queue Protection's.
pub const PARAMS: &[ParamDoc] = &concat([
    MODEM_PARAMS,
    dual_queue_aqm::PARAMS,
    queue_protection::PARAMS,
]);

const fn concat(parts: [&[ParamDoc]; 3]) -> [ParamDoc; N_PARAMS] {
    let mut out = [MODEM_PARAMS[0]; N_PARAMS];
    let (mut i, mut n) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[n] = parts[i][j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

/// Bytes sent at `rate_bps` in `t`.
fn bytes_in(rate_bps: u64, t: Nanos) -> u64 {
    (rate_bps as u128 * t as u128 / (8 * NS_PER_S as u128)) as u64
}

impl LldConfig {
    /// Read the model's parameter table `p` for a link of channel rate `rate_bps` and MTU
    /// `mtu`.
    pub fn read(p: &mut Params, rate_bps: u64, mtu: u32) -> Result<Self> {
        let mtu = mtu as u64;
        let amsr_bps = p.required_rate("sustained_rate")?;
        let max_burst = p.size_or("max_burst", 3044)?;
        if max_burst < mtu {
            return Err(p.error(
                "max_burst",
                format!("{max_burst}B: expected at least the link MTU ({mtu}B)"),
            ));
        }
        let peak = match (p.rate("peak_rate")?, p.size("peak_burst")?) {
            (None, Some(_)) => return Err(p.error("peak_burst", "given without a `peak_rate`")),
            (None, None) => None,
            (Some(r), b) => {
                if r < amsr_bps {
                    return Err(p.error(
                        "peak_rate",
                        format!("{r}bit/s: expected at least sustained_rate ({amsr_bps}bit/s)"),
                    ));
                }
                let b = b.unwrap_or_else(|| bytes_in(r, PEAK_TOKEN_INTERVAL));
                if b < mtu {
                    return Err(p.error(
                        "peak_burst",
                        format!("{b}B: expected at least the link MTU ({mtu}B)"),
                    ));
                }
                Some((r, b))
            }
        };
        let map_interval = p.positive_duration_or("map_interval", 2 * NS_PER_MS)?;
        let channel = channel_bytes(rate_bps, map_interval);
        if channel < mtu {
            return Err(p.error(
                "map_interval",
                format!(
                    "the channel ({rate_bps}bit/s) carries {channel}B per MAP interval: expected at least one MTU ({mtu}B); raise `rate` or `map_interval`"
                ),
            ));
        }
        let request_delay = p.u64_or("request_delay", 2, 1, MAX_DELAY_MAPS)? as usize;
        let weight = p.u64_or("scheduling_weight", 230, 1, 255)? as u8;
        let ggr = p.rate("guaranteed_grant_rate")?;
        let pgs = match ggr {
            None => {
                for k in ["guaranteed_grant_interval", "pgs_offset"] {
                    if p.peek(k).is_some() {
                        return Err(p.error(k, "given without a `guaranteed_grant_rate`"));
                    }
                }
                None
            }
            Some(r) => {
                let ggi = p.positive_duration_or("guaranteed_grant_interval", map_interval)?;
                let offset = p.duration_or("pgs_offset", 0)?;
                if offset >= map_interval {
                    return Err(p.error(
                        "pgs_offset",
                        format!(
                            "{offset}ns: expected less than the MAP interval ({map_interval}ns)"
                        ),
                    ));
                }
                Some((r, ggi, offset))
            }
        };
        let classic_buffer = p.size_or("classic_buffer", bytes_in(amsr_bps, 100 * NS_PER_MS))?;
        let ll_default = bytes_in(amsr_bps, 10 * NS_PER_MS).max(20 * MAX_FRAME_SIZE);
        let ll_buffer = p.size_or("ll_buffer", ll_default)?;
        for (k, v, least) in [
            ("classic_buffer", classic_buffer, mtu),
            ("ll_buffer", ll_buffer, MAX_FRAME_SIZE + mtu),
        ] {
            if v < least {
                return Err(p.error(k, format!("{v}B: expected at least {least}B")));
            }
        }
        let classic_target = p.positive_duration_or("classic_aqm_target", 10 * NS_PER_MS)?;
        let ll_estimator = match p.choice_or(
            "ll_delay_estimate",
            "coupled_l",
            &["coupled_l", "coupled_v"],
        )? {
            "coupled_v" => LlEstimator::CoupledV,
            _ => LlEstimator::CoupledL,
        };
        let aqm = DualQueueConfig::from_params(p)?;
        let qp = QpConfig::from_params(p)?;
        Ok(LldConfig {
            amsr_bps,
            max_burst,
            peak,
            map_interval,
            request_delay,
            weight,
            pgs,
            classic_buffer,
            ll_buffer,
            classic_target,
            aqm,
            qp,
            ll_estimator,
        })
    }
}
