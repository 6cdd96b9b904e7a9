//! TCP applications: bulk, file, on-off, connection arrivals (open and closed loop).
//!
//! - `tcp-bulk`: one connection per flow, an infinite source from `start`.
//! - `tcp-file`: `size` bytes then FIN; with `restart = true` a new transfer of `size`
//!   bytes starts on the same connection as soon as the previous one is acknowledged.
//! - `tcp-onoff`: `size` bytes, then `pause`, then `size` bytes again, ... on one
//!   connection (the pause runs from the moment the previous transfer is acknowledged).
//! - `tcp-arrivals`: every connection is a new flow (its own row in `flows`).
//!   `mode = "open"`: connections arrive as a Poisson process of `rate` per second, each
//!   of `size` bytes. `mode = "closed"`: `users` users each run one connection at a time;
//!   after a transfer is acknowledged the user thinks for an exponential time of mean
//!   `think`, then opens the next connection. Each user also thinks once before its
//!   first connection, so the users do not all start at `start`.
//! - `rate_cap` (any kind): the application writes at most this payload rate.
//!
//! The flow completion time (`completion_s`) is from the SYN to the ACK of the last byte
//! of the first transfer, measured at the sender.

use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};
use crate::transport::tcp::cc::{CcKind, CC_NAMES};
use crate::transport::tcp::TcpConfig;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    Bulk,
    File { size: u64, restart: bool },
    OnOff { size: u64, pause: Nanos },
    Open { rate: f64, size: u64 },
    Closed { size: u64, think: Nanos },
}

/// One TCP application instance.
pub struct TcpApp {
    pub pattern: Pattern,
    pub cfg: TcpConfig,
    pub entry: u32,
    pub src: u32,
    pub dst: u32,
    pub start: Nanos,
    pub stop: Nanos,
    /// The connection of single-connection patterns (and a closed-loop user's current one).
    pub flow: Option<u32>,
    pub rng: Rng,
    /// Connections opened.
    pub opened: u64,
}

impl TcpApp {
    /// Next arrival gap (open loop) or think time (closed loop).
    pub fn gap(&mut self) -> Nanos {
        match self.pattern {
            Pattern::Open { rate, .. } => {
                self.rng.exponential(NS_PER_S as f64 / rate).round() as Nanos
            }
            Pattern::Closed { think, .. } => self.rng.exponential(think as f64).round() as Nanos,
            _ => 0,
        }
    }
}

const fn p(
    name: &'static str,
    ty: &'static str,
    default: &'static str,
    doc: &'static str,
) -> ParamDoc {
    ParamDoc {
        name,
        ty,
        default,
        doc,
    }
}

/// A parameter list: the kind's own parameters, then those common to every TCP kind.
macro_rules! tcp_params {
    ($($own:expr),* $(,)?) => {
        &[
            $($own,)*
            p(
                "cc",
                "string",
                "newreno",
                "congestion control: reno, newreno, cubic, ledbat, compound, vegas, dctcp",
            ),
            p(
                "mss",
                "size",
                "1448B",
                "maximum segment size (payload); packets are MSS + 40 B",
            ),
            p("iw", "int", "10", "initial window, segments"),
            p(
                "sack",
                "bool",
                "true",
                "SACK blocks and RFC 6675 recovery (false: NewReno, or Reno for cc = reno)",
            ),
            p(
                "ecn",
                "bool",
                "false",
                "ECN (RFC 3168): ECT(0) data, ECE/CWR",
            ),
            p(
                "l4s",
                "bool",
                "false",
                "send data as ECT(1), the L4S identifier (RFC 9331); implies ecn",
            ),
            p(
                "min_rto",
                "duration",
                "200ms",
                "minimum RTO (RFC 6298 says 1s)",
            ),
            p(
                "initial_rto",
                "duration",
                "1s",
                "RTO before the first RTT sample (SYN retries)",
            ),
            p("max_rto", "duration", "60s", "RTO backoff cap"),
            p(
                "delack",
                "duration",
                "40ms",
                "delayed-ACK timeout; 0s acknowledges every segment",
            ),
            p(
                "rwnd",
                "size",
                "16MB",
                "receiver buffer (largest advertised window)",
            ),
            p(
                "rate_cap",
                "rate",
                "none",
                "application write rate cap (payload)",
            ),
            p(
                "ledbat_target",
                "duration",
                "100ms",
                "cc = ledbat: TARGET queuing delay (at most 100ms)",
            ),
            p("ledbat_gain", "float", "1", "cc = ledbat: GAIN"),
            p(
                "hystart",
                "bool",
                "true",
                "cc = cubic: HyStart slow-start exit (ACK train + delay increase, as Linux)",
            ),
            p("dctcp_g", "float", "0.0625", "cc = dctcp: EWMA gain g"),
            p("vegas_alpha", "int", "2", "cc = vegas: alpha, packets"),
            p("vegas_beta", "int", "4", "cc = vegas: beta, packets"),
            p(
                "vegas_gamma",
                "int",
                "1",
                "cc = vegas: gamma (slow-start exit), packets",
            ),
        ]
    };
}

/// Parameters common to every TCP kind.
pub const TCP_COMMON: &[ParamDoc] = tcp_params!();

pub const TCP_BULK: KindDoc = KindDoc {
    kind: "tcp-bulk",
    summary: "TCP bulk transfer (infinite source)",
    source: "RFC 9293, RFC 5681, RFC 6582, RFC 6675, RFC 6298",
    params: TCP_COMMON,
};

pub const TCP_FILE: KindDoc = KindDoc {
    kind: "tcp-file",
    summary: "TCP transfer of `size` bytes (optionally restarted); plus the common TCP parameters",
    source: "-",
    params: &[
        p("size", "size", "required", "bytes per transfer"),
        p(
            "restart",
            "bool",
            "false",
            "start a new transfer on the connection when one completes",
        ),
    ],
};

pub const TCP_ONOFF: KindDoc = KindDoc {
    kind: "tcp-onoff",
    summary:
        "TCP: `size` bytes, `pause`, repeat, on one connection; plus the common TCP parameters",
    source: "-",
    params: &[
        p("size", "size", "required", "bytes per burst"),
        p(
            "pause",
            "duration",
            "required",
            "idle time after each burst is acknowledged",
        ),
    ],
};

pub const TCP_ARRIVALS: KindDoc = KindDoc {
    kind: "tcp-arrivals",
    summary: "TCP connection arrivals, open or closed loop, one flow per connection",
    source: "-",
    params: tcp_params![
        p(
            "mode",
            "string",
            "open",
            "open (Poisson arrivals) or closed (users with think time)"
        ),
        p("size", "size", "required", "bytes per connection"),
        p(
            "rate",
            "float",
            "required (open)",
            "new connections per second"
        ),
        p("users", "int", "1 (closed)", "connections kept alive"),
        p(
            "think",
            "duration",
            "1s (closed)",
            "mean (exponential) think time between transfers"
        ),
    ],
};

/// Read the common TCP parameters.
pub fn config(p: &mut Params) -> Result<TcpConfig> {
    let d = TcpConfig::default();
    let cc = p.choice_or("cc", "newreno", CC_NAMES)?;
    let cc = match cc {
        "reno" => CcKind::Reno,
        "newreno" => CcKind::NewReno,
        "cubic" => CcKind::Cubic {
            hystart: p.bool_or("hystart", true)?,
        },
        "ledbat" => {
            let target = p.positive_duration_or("ledbat_target", 100 * NS_PER_MS)?;
            if target > 100 * NS_PER_MS {
                return Err(p.error("ledbat_target", "RFC 6817: TARGET MUST be at most 100ms"));
            }
            CcKind::Ledbat {
                target,
                gain: p.f64_or("ledbat_gain", 1.0, 1e-6, 1.0)?,
            }
        }
        "compound" => CcKind::Compound,
        "vegas" => {
            let alpha = p.u64_or("vegas_alpha", 2, 0, 1000)? as u32;
            let beta = p.u64_or("vegas_beta", 4, 0, 1000)? as u32;
            let gamma = p.u64_or("vegas_gamma", 1, 0, 1000)? as u32;
            if beta < alpha {
                return Err(p.error("vegas_beta", "must be at least vegas_alpha"));
            }
            CcKind::Vegas { alpha, beta, gamma }
        }
        "dctcp" => CcKind::Dctcp {
            g: p.f64_or("dctcp_g", 1.0 / 16.0, 1e-6, 1.0)?,
        },
        _ => unreachable!("choice_or returns a listed name"),
    };
    let mss = p.size_or("mss", d.mss as u64)?;
    if !(64..=65_495).contains(&mss) {
        return Err(p.error("mss", format!("{mss}B: expected 64B to 65495B")));
    }
    let l4s = p.bool_or("l4s", d.l4s)?;
    let cfg = TcpConfig {
        cc,
        mss: mss as u32,
        iw: p.u64_or("iw", d.iw as u64, 1, 1000)? as u32,
        sack: p.bool_or("sack", d.sack)?,
        ecn: p.bool_or("ecn", d.ecn)? || matches!(cc, CcKind::Dctcp { .. }) || l4s,
        l4s,
        min_rto: p.positive_duration_or("min_rto", d.min_rto)?,
        initial_rto: p.positive_duration_or("initial_rto", d.initial_rto)?,
        max_rto: p.positive_duration_or("max_rto", d.max_rto)?,
        delack: p.duration_or("delack", d.delack)?,
        rwnd: p.size_or("rwnd", 16_000_000)?,
        dupthresh: d.dupthresh,
        rate_cap_bps: p.rate("rate_cap")?,
    };
    if cfg.rwnd < mss {
        return Err(p.error("rwnd", "must be at least one MSS"));
    }
    if cfg.max_rto < cfg.min_rto {
        return Err(p.error("max_rto", "must be at least min_rto"));
    }
    if cfg.rate_cap_bps == Some(0) {
        return Err(p.error("rate_cap", "expected a rate greater than zero"));
    }
    Ok(cfg)
}

/// Read the kind-specific parameters.
pub fn pattern(kind: &str, p: &mut Params) -> Result<Pattern> {
    let size = |p: &mut Params| -> Result<u64> {
        match p.size("size")? {
            Some(0) => Err(p.error("size", "expected a size greater than zero")),
            Some(s) => Ok(s),
            None => Err(p.error("size", "missing: expected a size like \"1MB\"")),
        }
    };
    Ok(match kind {
        "tcp-bulk" => Pattern::Bulk,
        "tcp-file" => Pattern::File {
            size: size(p)?,
            restart: p.bool_or("restart", false)?,
        },
        "tcp-onoff" => {
            let size = size(p)?;
            let pause = p
                .duration("pause")?
                .ok_or_else(|| p.error("pause", "missing: expected a duration like \"1s\""))?;
            Pattern::OnOff { size, pause }
        }
        "tcp-arrivals" => match p.choice_or("mode", "open", &["open", "closed"])? {
            "open" => {
                let size = size(p)?;
                let rate = p.f64_or("rate", f64::NAN, 1e-9, 1e9)?;
                if rate.is_nan() {
                    return Err(p.error("rate", "missing: expected connections per second"));
                }
                Pattern::Open { rate, size }
            }
            _ => Pattern::Closed {
                size: size(p)?,
                think: p.duration_or("think", NS_PER_S)?,
            },
        },
        _ => unreachable!("TCP kinds only"),
    })
}
