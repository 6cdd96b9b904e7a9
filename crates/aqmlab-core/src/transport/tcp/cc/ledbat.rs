//! LEDBAT (RFC 6817), as a window controller on top of the TCP connection, like ns-3's
//! `TcpLedbat`.
//!
//! - One-way delay samples: `TSval(ack) − TSecr(ack)` of each ACK, the receiver's clock
//!   minus the sender's timestamp echoed (as ns-3 `TcpLedbat` does). The constant clock
//!   offset cancels in `current − base`. (In the simulator both clocks are the same.)
//! - Base delay (§3.4.2): minimum over BASE_HISTORY = 10 one-minute buckets.
//! - Current delay: minimum of the last CURRENT_FILTER = 4 samples.
//! - Per ACK (§2.4.2): `off_target = (TARGET − queuing_delay)/TARGET`;
//!   `cwnd += GAIN·off_target·bytes_newly_acked·MSS/cwnd`; then
//!   `cwnd ≤ flightsize + ALLOWED_INCREASE·MSS` and `cwnd ≥ MIN_CWND·MSS`
//!   (ALLOWED_INCREASE = 1, MIN_CWND = 2). `flightsize` is the data outstanding before
//!   the ACK.
//! - Loss: halve (at most once per RTT — the connection reacts once per recovery
//!   episode), not below MIN_CWND.
//! - TARGET ≤ 100 ms (RFC 6817 MUST); default 100 ms like ns-3, configurable
//!   (`ledbat_target`), GAIN = 1 (ns-3 default).
//! - Slow start (RFC 6817 leaves it open; ns-3 `TcpLedbat` slow-starts while
//!   cwnd < ssthresh): standard slow start until the first loss, or until the queuing
//!   delay exceeds the target — the second exit is our choice (TARGET is the delay
//!   LEDBAT is meant to tolerate; without it a lone LEDBAT flow would fill any buffer
//!   once before settling).

use super::{slow_start, AckSample, Window};
use super::{AnyCc, CcParams, CongestionEvent, Controller, Kind, Registered};
use crate::scenario::error::Result;
use crate::scenario::params::{param, KindDoc, Params};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_S};
use crate::transport::tcp::TcpConfig;

pub const BASE_HISTORY: usize = 10;
pub const CURRENT_FILTER: usize = 4;
pub const ALLOWED_INCREASE: u64 = 1;
pub const MIN_CWND: u64 = 2;
const MINUTE: Nanos = 60 * NS_PER_S;

#[derive(Clone, Debug)]
pub struct Ledbat {
    pub target: Nanos,
    pub gain: f64,
    base: [Nanos; BASE_HISTORY],
    base_len: usize,
    last_rollover_minute: u64,
    current: [Nanos; CURRENT_FILTER],
    current_len: usize,
    current_next: usize,
    cwnd_f: f64,
}

impl Ledbat {
    pub fn new(target: Nanos, gain: f64) -> Self {
        Ledbat {
            target,
            gain,
            base: [Nanos::MAX; BASE_HISTORY],
            base_len: 0,
            last_rollover_minute: 0,
            current: [0; CURRENT_FILTER],
            current_len: 0,
            current_next: 0,
            cwnd_f: 0.0,
        }
    }

    fn update_base(&mut self, now: Nanos, d: Nanos) {
        let minute = now / MINUTE;
        if self.base_len == 0 {
            self.base[0] = d;
            self.base_len = 1;
            self.last_rollover_minute = minute;
        } else if minute != self.last_rollover_minute {
            self.last_rollover_minute = minute;
            if self.base_len == BASE_HISTORY {
                self.base.copy_within(1.., 0);
                self.base_len -= 1;
            }
            self.base[self.base_len] = d;
            self.base_len += 1;
        } else {
            let tail = &mut self.base[self.base_len - 1];
            *tail = (*tail).min(d);
        }
    }

    fn update_current(&mut self, d: Nanos) {
        self.current[self.current_next] = d;
        self.current_next = (self.current_next + 1) % CURRENT_FILTER;
        self.current_len = (self.current_len + 1).min(CURRENT_FILTER);
    }

    /// current − base, the estimated queuing delay (None before any sample).
    pub fn queuing_delay(&self) -> Option<Nanos> {
        if self.current_len == 0 {
            return None;
        }
        let cur = self.current[..self.current_len].iter().min().copied()?;
        let base = self.base[..self.base_len].iter().min().copied()?;
        Some(cur.saturating_sub(base))
    }

    pub fn ssthresh(&mut self, w: &Window) -> u64 {
        (w.cwnd / 2).max(MIN_CWND * w.mss)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LedbatParams {
    pub target: Nanos,
    pub gain: f64,
}

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "ledbat",
        summary: "LEDBAT: less-than-best-effort, keeps the queuing delay at TARGET",
        source: "RFC 6817; ns-3.44 TcpLedbat",
        params: &[
            param(
                "target",
                "duration",
                "100ms",
                "TARGET queuing delay (at most 100ms); flat alias `ledbat_target`",
            ),
            param("gain", "float", "1", "GAIN; flat alias `ledbat_gain`"),
        ],
    },
    aliases: &[("target", "ledbat_target"), ("gain", "ledbat_gain")],
    parse,
};

fn parse(p: &mut Params) -> Result<CcParams> {
    let target = p.positive_duration_or("target", 100 * NS_PER_MS)?;
    if target > 100 * NS_PER_MS {
        return Err(p.error("target", "RFC 6817: TARGET MUST be at most 100ms"));
    }
    Ok(CcParams::Ledbat(LedbatParams {
        target,
        gain: p.f64_or("gain", 1.0, 1e-6, 1.0)?,
    }))
}

impl Registered for Ledbat {
    type Params = LedbatParams;

    fn build(p: &LedbatParams, _: &TcpConfig) -> AnyCc {
        Ledbat::new(p.target, p.gain).into()
    }
}

impl Controller for Ledbat {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if let Some(d) = a.owd {
            self.update_base(a.now, d);
            self.update_current(d);
        }
        let Some(qd) = self.queuing_delay() else {
            return;
        };
        if w.in_slow_start() {
            if qd <= self.target {
                if slow_start(w, a.acked) == 0 {
                    return;
                }
            } else {
                w.ssthresh = w.cwnd;
            }
        }
        let mss = w.mss as f64;
        if (self.cwnd_f - w.cwnd as f64).abs() >= 1.0 {
            self.cwnd_f = w.cwnd as f64;
        }
        let off_target = (self.target as f64 - qd as f64) / self.target as f64;
        self.cwnd_f += self.gain * off_target * a.acked as f64 * mss / self.cwnd_f;
        let max_allowed = (a.prior_in_flight + ALLOWED_INCREASE * w.mss) as f64;
        self.cwnd_f = self.cwnd_f.min(max_allowed).max((MIN_CWND * w.mss) as f64);
        w.cwnd = self.cwnd_f as u64;
    }

    fn on_congestion(&mut self, w: &Window, _: &CongestionEvent) -> u64 {
        self.ssthresh(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NS_PER_MS;

    fn ack(now: Nanos, owd_ms: u64, acked: u64, flight: u64) -> AckSample {
        AckSample {
            now,
            acked,
            prior_in_flight: flight,
            owd: Some(owd_ms * NS_PER_MS),
            ..Default::default()
        }
    }

    #[test]
    fn grows_below_target_and_shrinks_above_it() {
        let mut l = Ledbat::new(100 * NS_PER_MS, 1.0);
        let mut w = Window {
            cwnd: 20_000,
            ssthresh: 0, // congestion avoidance
            mss: 1000,
        };
        // Base 50 ms; queuing 0: off_target = 1 → +1000·1000/20000 = +50 B per 1000 B.
        l.on_ack(&mut w, &ack(0, 50, 1000, 20_000));
        assert_eq!(w.cwnd, 20_050);
        // Samples of 200 ms: once they fill the 4-sample filter, queuing delay is
        // 150 ms and off_target = −0.5.
        for i in 0..4 {
            l.on_ack(&mut w, &ack(i + 1, 200, 1000, 40_000));
        }
        assert_eq!(l.queuing_delay(), Some(150 * NS_PER_MS));
        let before = w.cwnd as f64;
        l.on_ack(&mut w, &ack(5, 200, 1000, 40_000));
        let expect = before - 0.5 * 1000.0 * 1000.0 / before;
        assert!(
            (w.cwnd as f64 - expect).abs() <= 1.0,
            "{} vs {expect}",
            w.cwnd
        );
    }

    #[test]
    fn cwnd_is_capped_by_flightsize_plus_one_mss_and_floored_at_two() {
        let mut l = Ledbat::new(100 * NS_PER_MS, 1.0);
        let mut w = Window {
            cwnd: 20_000,
            ssthresh: 0,
            mss: 1000,
        };
        l.on_ack(&mut w, &ack(0, 50, 1000, 5_000));
        assert_eq!(w.cwnd, 6_000);
        for i in 0..10_000 {
            l.on_ack(&mut w, &ack(i + 1, 1000, 1000, 5_000));
        }
        assert_eq!(w.cwnd, 2_000);
    }

    #[test]
    fn base_delay_forgets_after_ten_minutes() {
        let mut l = Ledbat::new(100 * NS_PER_MS, 1.0);
        l.update_base(0, 10);
        for m in 1..=10 {
            l.update_base(m * MINUTE, 50);
        }
        assert_eq!(l.base[..l.base_len].iter().min(), Some(&50));
    }
}
