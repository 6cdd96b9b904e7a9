//! TCP Vegas (Brakmo & Peterson, IEEE JSAC 13(8), 1995), as Linux `tcp_vegas.c` runs it.
//!
//! - `baseRTT` is the minimum RTT ever seen; `RTT` the minimum over the last round.
//! - Once per round (when the ACK passes the `snd_nxt` recorded at the round start), and
//!   only if the round had more than 2 RTT samples (else Reno growth):
//!   `diff = cwnd·(RTT − baseRTT)/baseRTT` (packets).
//!   - In slow start: if `diff > γ`, `cwnd = min(cwnd, cwnd·baseRTT/RTT + 1)` and leave
//!     slow start; else slow start continues.
//!   - In congestion avoidance: `diff > β` → cwnd −1 segment; `diff < α` → +1; else hold.
//! - α = 2, β = 4, γ = 1 packets (Linux defaults). cwnd ≥ 2 segments.
//! - Loss: Reno (`ssthresh = max(FlightSize/2, 2·SMSS)`).

use super::{half_flight, reno_avoidance, slow_start, AckSample, Window};
use super::{AnyCc, CcParams, CongestionEvent, Controller, Kind, Registered, RtoEvent};
use crate::scenario::error::Result;
use crate::scenario::params::{param, KindDoc, Params};
use crate::sim::time::Nanos;
use crate::transport::tcp::TcpConfig;

#[derive(Clone, Debug)]
pub struct Vegas {
    pub alpha: u32,
    pub beta: u32,
    pub gamma: u32,
    base_rtt: Nanos,
    min_rtt_round: Nanos,
    samples_round: u32,
    round_end: u64,
    acc: u64,
}

impl Vegas {
    pub fn new(alpha: u32, beta: u32, gamma: u32) -> Self {
        Vegas {
            alpha,
            beta,
            gamma,
            base_rtt: Nanos::MAX,
            min_rtt_round: Nanos::MAX,
            samples_round: 0,
            round_end: 0,
            acc: 0,
        }
    }

    pub fn ssthresh(&mut self, w: &Window, flight: u64) -> u64 {
        self.acc = 0;
        half_flight(w, flight)
    }

    pub fn on_rto(&mut self) {
        self.round_end = 0;
        self.min_rtt_round = Nanos::MAX;
        self.samples_round = 0;
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasParams {
    pub alpha: u32,
    pub beta: u32,
    pub gamma: u32,
}

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "vegas",
        summary:
            "Vegas: keeps between alpha and beta packets queued, from the RTT above the base RTT",
        source: "Brakmo, Peterson, IEEE JSAC 1995; Linux net/ipv4/tcp_vegas.c",
        params: &[
            param(
                "alpha",
                "int",
                "2",
                "alpha, packets; flat alias `vegas_alpha`",
            ),
            param(
                "beta",
                "int",
                "4",
                "beta, packets (at least alpha); flat alias `vegas_beta`",
            ),
            param(
                "gamma",
                "int",
                "1",
                "gamma (slow-start exit), packets; flat alias `vegas_gamma`",
            ),
        ],
    },
    aliases: &[
        ("alpha", "vegas_alpha"),
        ("beta", "vegas_beta"),
        ("gamma", "vegas_gamma"),
    ],
    parse,
};

fn parse(p: &mut Params) -> Result<CcParams> {
    let alpha = p.u64_or("alpha", 2, 0, 1000)? as u32;
    let beta = p.u64_or("beta", 4, 0, 1000)? as u32;
    let gamma = p.u64_or("gamma", 1, 0, 1000)? as u32;
    if beta < alpha {
        return Err(p.error("beta", format!("{beta}: must be at least alpha ({alpha})")));
    }
    Ok(CcParams::Vegas(VegasParams { alpha, beta, gamma }))
}

impl Registered for Vegas {
    type Params = VegasParams;

    fn build(p: &VegasParams, _: &TcpConfig) -> AnyCc {
        Vegas::new(p.alpha, p.beta, p.gamma).into()
    }
}

impl Controller for Vegas {
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
        if a.snd_una < self.round_end {
            if w.in_slow_start() {
                slow_start(w, a.acked);
            }
            return;
        }
        self.round_end = a.snd_nxt;
        if self.samples_round <= 2 {
            // Too few samples this round: behave like Reno.
            let mut acked = a.acked;
            if w.in_slow_start() {
                acked = slow_start(w, acked);
            }
            if acked > 0 {
                reno_avoidance(w, &mut self.acc, acked);
            }
        } else {
            let mss = w.mss;
            let cwnd = w.cwnd / mss;
            let rtt = self.min_rtt_round;
            let base = self.base_rtt;
            let diff = cwnd as u128 * (rtt - base) as u128 / base as u128;
            if diff > self.gamma as u128 && w.in_slow_start() {
                let target = (cwnd as u128 * base as u128 / rtt as u128) as u64 + 1;
                w.cwnd = w.cwnd.min(target * mss);
                w.ssthresh = w.ssthresh.min(w.cwnd.saturating_sub(mss));
            } else if w.in_slow_start() {
                slow_start(w, a.acked);
            } else if diff > self.beta as u128 {
                w.cwnd -= mss;
                w.ssthresh = w.ssthresh.min(w.cwnd.saturating_sub(mss));
            } else if diff < self.alpha as u128 {
                w.cwnd += mss;
            }
            w.cwnd = w.cwnd.max(2 * mss);
        }
        self.min_rtt_round = Nanos::MAX;
        self.samples_round = 0;
    }

    fn on_congestion(&mut self, w: &Window, e: &CongestionEvent) -> u64 {
        self.ssthresh(w, e.flight)
    }

    fn on_rto(&mut self, _: &Window, _: &RtoEvent) {
        Vegas::on_rto(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::NS_PER_MS;

    fn round(v: &mut Vegas, w: &mut Window, una: &mut u64, rtt_ms: u64) {
        for _ in 0..3 {
            v.observe(&AckSample {
                rtt: Some(rtt_ms * NS_PER_MS),
                ..Default::default()
            });
        }
        *una += 1000;
        let a = AckSample {
            acked: 1000,
            snd_una: *una,
            snd_nxt: *una + 1,
            ..Default::default()
        };
        v.on_ack(w, &a);
    }

    #[test]
    fn holds_between_alpha_and_beta_and_moves_outside() {
        let mut v = Vegas::new(2, 4, 1);
        let mut w = Window {
            cwnd: 30_000,
            ssthresh: 0,
            mss: 1000,
        };
        let mut una = 0;
        round(&mut v, &mut w, &mut una, 100); // base 100 ms, diff 0 < α: +1
        assert_eq!(w.cwnd, 31_000);
        round(&mut v, &mut w, &mut una, 110); // diff = 31·10/100 = 3: hold
        assert_eq!(w.cwnd, 31_000);
        round(&mut v, &mut w, &mut una, 120); // diff = 31·20/100 = 6 > β: −1
        assert_eq!(w.cwnd, 30_000);
    }
}
