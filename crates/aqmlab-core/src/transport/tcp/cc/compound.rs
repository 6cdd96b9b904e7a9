//! Compound TCP (Tan, Song, Zhang, Sridharan, "A Compound TCP Approach for High-speed
//! and Long Distance Networks", INFOCOM 2006; MSR-TR-2005-86), checked against the
//! Linux port by Castellani, Hemminger and Andrew (`tcp_compound.c`).
//!
//! - Sending window `win = cwnd + dwnd`; `cwnd` is the loss-based (Reno) component and
//!   grows by one MSS per `win` bytes acknowledged (the paper's `cwnd += 1/win` per
//!   packet); `dwnd` is the delay-based component, zero in slow start.
//! - Once per RTT (the Linux port's `beg_snd_nxt` rounds, and only with at least 3 RTT
//!   samples in the round, to skip rounds seen only through delayed ACKs):
//!   `expected = win/baseRTT`, `actual = win/RTT` with RTT the minimum of the round,
//!   `diff = (expected − actual)·baseRTT = win·(1 − baseRTT/RTT)` (packets);
//!   if `diff < γ`: `dwnd += max(α·win^k − 1, 0)`; else `dwnd = max(dwnd − ζ·diff, 0)`.
//! - Loss: `cwnd = cwnd/2`, `dwnd = max(win·(1 − β) − cwnd/2, 0)` (paper eq. 6).
//! - Constants: α = 1/8, β = 1/2, k = 0.75, ζ = 1, γ = 30 packets (the paper and the Linux
//!   port agree; the Linux port's γ auto-tuning is not modelled).
//!
//! Where the sources disagree: on loss the Linux port halves the total window through
//! ssthresh and keeps `dwnd`; we follow the paper.

use super::{slow_start, AckSample, Window};
use super::{AnyCc, CcParams, CongestionEvent, Controller, Kind, Registered, RtoEvent};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, Params};
use crate::sim::time::Nanos;
use crate::transport::tcp::TcpConfig;

pub const ALPHA: f64 = 0.125;
pub const BETA: f64 = 0.5;
pub const K: f64 = 0.75;
pub const ZETA: f64 = 1.0;
pub const GAMMA: f64 = 30.0;

#[derive(Clone, Debug)]
pub struct Compound {
    /// Delay window in segments.
    pub dwnd: f64,
    base_rtt: Nanos,
    min_rtt_round: Nanos,
    samples_round: u32,
    round_end: u64,
    acc: u64,
}

impl Default for Compound {
    fn default() -> Self {
        Compound {
            dwnd: 0.0,
            base_rtt: Nanos::MAX,
            min_rtt_round: Nanos::MAX,
            samples_round: 0,
            round_end: 0,
            acc: 0,
        }
    }
}

impl Compound {
    pub fn dwnd_bytes(&self, w: &Window) -> u64 {
        (self.dwnd * w.mss as f64) as u64
    }

    fn end_round_if_due(&mut self, w: &Window, a: &AckSample, avoid: bool) {
        if a.snd_una < self.round_end {
            return;
        }
        if avoid && self.samples_round > 2 && self.base_rtt < Nanos::MAX {
            let win = w.cwnd as f64 / w.mss as f64 + self.dwnd;
            let rtt = self.min_rtt_round as f64;
            let diff = win * (1.0 - self.base_rtt as f64 / rtt);
            if diff < GAMMA {
                self.dwnd += (ALPHA * libm::pow(win, K) - 1.0).max(0.0);
            } else {
                self.dwnd = (self.dwnd - ZETA * diff).max(0.0);
            }
        }
        self.round_end = a.snd_nxt;
        self.min_rtt_round = Nanos::MAX;
        self.samples_round = 0;
    }

    pub fn ssthresh(&mut self, w: &Window, _flight: u64) -> u64 {
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        let win = cwnd + self.dwnd;
        self.dwnd = (win * (1.0 - BETA) - cwnd / 2.0).max(0.0);
        self.acc = 0;
        (w.cwnd / 2).max(2 * w.mss)
    }

    pub fn on_rto(&mut self) {
        self.dwnd = 0.0;
    }
}

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "compound",
        summary: "Compound TCP: Reno window plus a delay-based window dwnd",
        source: "Tan, Song, Zhang, Sridharan, INFOCOM 2006; Linux port tcp_compound.c (Castellani, Hemminger, Andrew)",
        params: &[],
    },
    aliases: &[],
    parse,
};

fn parse(_: &mut Params) -> Result<CcParams> {
    Ok(CcParams::Compound(()))
}

impl Registered for Compound {
    type Params = ();

    fn build(_: &(), _: &TcpConfig) -> AnyCc {
        Compound::default().into()
    }
}

impl Controller for Compound {
    /// RTT bookkeeping on every ACK (also during recovery).
    #[inline]
    fn observe(&mut self, a: &AckSample) {
        if let Some(r) = a.rtt {
            self.base_rtt = self.base_rtt.min(r);
            self.min_rtt_round = self.min_rtt_round.min(r);
            self.samples_round += 1;
        }
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        let mut acked = a.acked;
        if w.in_slow_start() {
            self.dwnd = 0.0;
            acked = slow_start(w, acked);
            if acked == 0 {
                self.end_round_if_due(w, a, false);
                return;
            }
        }
        let win = w.cwnd + self.dwnd_bytes(w);
        self.acc += acked;
        if self.acc >= win {
            self.acc -= win;
            w.cwnd += w.mss;
        }
        self.end_round_if_due(w, a, true);
    }

    fn on_congestion(&mut self, w: &Window, e: &CongestionEvent) -> u64 {
        self.ssthresh(w, e.flight)
    }

    fn on_rto(&mut self, _: &Window, _: &RtoEvent) {
        Compound::on_rto(self)
    }

    #[inline]
    fn send_window(&self, w: &Window) -> u64 {
        w.cwnd + self.dwnd_bytes(w)
    }

    fn extra(&self) -> f64 {
        self.dwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NS_PER_MS;

    /// Feed one round of 4 ACKs (1000 B each, RTT samples of `rtt_ms`). ACKs ack
    /// 1000 B each and `snd_nxt` is 4000 B ahead, so each round closes on its last ACK.
    /// Returns (dwnd before, dwnd after, the window used by the update).
    fn round(c: &mut Compound, w: &mut Window, una: &mut u64, rtt_ms: u64) -> (f64, f64, f64) {
        let before = c.dwnd;
        for _ in 0..4 {
            *una += 1000;
            let a = AckSample {
                acked: 1000,
                rtt: Some(rtt_ms * NS_PER_MS),
                snd_una: *una,
                snd_nxt: *una + 4000,
                ..Default::default()
            };
            c.observe(&a);
            c.on_ack(w, &a);
        }
        (before, c.dwnd, w.cwnd as f64 / 1000.0 + before)
    }

    #[test]
    fn dwnd_grows_without_queueing_and_shrinks_with_it() {
        let mut c = Compound::default();
        let mut w = Window {
            cwnd: 100_000,
            ssthresh: 0,
            mss: 1000,
        };
        let mut una = 0;
        // A first ACK closes the empty initial round (too few samples: no update); from
        // then on every `round` call is one measurement round.
        una += 1000;
        let first = AckSample {
            acked: 1000,
            rtt: Some(100 * NS_PER_MS),
            snd_una: una,
            snd_nxt: una + 4000,
            ..Default::default()
        };
        c.observe(&first);
        c.on_ack(&mut w, &first);
        assert_eq!(c.dwnd, 0.0);
        round(&mut c, &mut w, &mut una, 100);
        // diff = 0 < γ: dwnd += α·win^0.75 − 1.
        let (d0, d1, win) = round(&mut c, &mut w, &mut una, 100);
        assert!(d1 > d0);
        assert!(
            (d1 - d0 - (ALPHA * win.powf(K) - 1.0)).abs() < 1e-9,
            "{d0} {d1} {win}"
        );
        // RTT doubles: diff = win/2 ≥ γ: dwnd −= ζ·diff, to 0 here.
        let (_, d2, _) = round(&mut c, &mut w, &mut una, 200);
        assert_eq!(d2, 0.0);
    }

    #[test]
    fn loss_halves_the_total_window() {
        let mut c = Compound {
            dwnd: 40.0,
            ..Default::default()
        };
        let w = Window {
            cwnd: 60_000,
            ssthresh: 0,
            mss: 1000,
        };
        let ss = c.ssthresh(&w, 100_000);
        assert_eq!(ss, 30_000);
        assert_eq!(c.dwnd, 20.0); // 100·0.5 − 30
    }
}
