//! TCP Prague (the L4S scalable controller; Linux `net/ipv4/tcp_prague.c` of the L4S
//! team, v0.6; requirements in RFC 9331 §4.3 and draft-briscoe-iccrg-prague-
//! congestion-control), reimplemented on this model's window controller interface.
//!
//! - Data is sent as ECT(1) (RFC 9331), so a DualPI2 bottleneck puts it in its L4S
//!   queue; the receiver echoes CE per packet (DCTCP-style, standing in for AccECN).
//! - α: an EWMA with g = 1/16 of the fraction of CE-marked bytes, updated once per
//!   round trip (when `snd_una` passes the `snd_nxt` of the round start,
//!   `prague_should_update_ewma`), starting at 1 and frozen until the first CE mark
//!   (`saw_ce`: no AQM on the path yet).
//! - On ECE, once per round trip (the connection's CWR rule): cwnd ← cwnd·(1 − α/2),
//!   at least 2 segments (`prague_enter_cwr`). Linux subtracts the reduction from a
//!   fractional carry and takes it one segment per ACK; here it is applied at once.
//! - Additive increase of one MSS per round trip, counting only the bytes of ACKs
//!   without ECE (`prague_update_cwnd`: `acked − ece_delta`); standard slow start.
//! - Loss: halve (`prague_enter_loss`), through the connection's recovery.
//! - Pacing (the connection's, on by default for Prague): cwnd / SRTT × 100 % in
//!   congestion avoidance, × 200 % in slow start below ssthresh/2
//!   (`prague_update_pacing_rate`).
//! - Left out: RTT independence (Linux's default `RTT_CONTROL_RATE` with a 25 ms
//!   target after 500 rounds scales the increase by (RTT/25 ms)² for shorter RTTs;
//!   here the increase is RTT-dependent like DCTCP's, `RTT_CONTROL_NONE`), classic-ECN
//!   fallback detection (off by default in Linux too), the TSO burst limit.

use super::{alpha_ssthresh, reno_growth, AckSample, Window};
use super::{
    AnyCc, Caps, CcParams, CongestionEvent, Controller, EcnMode, Kind, Pacing, Registered,
};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, Params};
use crate::transport::tcp::TcpConfig;

/// EWMA gain g = 1/2⁴.
pub const G: f64 = 1.0 / 16.0;

#[derive(Clone, Debug)]
pub struct Prague {
    pub alpha: f64,
    saw_ce: bool,
    acked_bytes: u64,
    marked_bytes: u64,
    /// `snd_nxt` at the start of the round.
    next_seq: u64,
    acc: u64,
}

impl Default for Prague {
    fn default() -> Self {
        Prague {
            alpha: 1.0,
            saw_ce: false,
            acked_bytes: 0,
            marked_bytes: 0,
            next_seq: 0,
            acc: 0,
        }
    }
}

impl Prague {
    /// New ssthresh at a congestion event: cwnd·(1 − α/2) on ECE, half on loss.
    pub fn ssthresh(&mut self, w: &Window, ecn: bool) -> u64 {
        self.acc = 0;
        alpha_ssthresh(w, self.alpha, ecn)
    }
}

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "prague",
        summary: "TCP Prague (L4S): ECT(1), DCTCP-style α per round, paced (pacing = false turns pacing off)",
        source: "Linux net/ipv4/tcp_prague.c (L4S team, v0.6); RFC 9331 §4.3; draft-briscoe-iccrg-prague-congestion-control",
        params: &[],
    },
    aliases: &[],
    parse,
};

fn parse(_: &mut Params) -> Result<CcParams> {
    Ok(CcParams::Prague(()))
}

impl Registered for Prague {
    type Params = ();

    fn build(_: &(), _: &TcpConfig) -> AnyCc {
        Prague::default().into()
    }

    /// ECT(1) and accurate echo; paced by default at 100 % of cwnd/SRTT in congestion
    /// avoidance (`prague_update_pacing_rate`).
    fn caps(_: &()) -> Caps {
        Caps {
            ecn: EcnMode::L4s,
            pacing: Pacing::Default,
            pacing_ca_percent: 100,
            needs_accecn: true,
            ..Caps::WINDOW
        }
    }
}

impl Controller for Prague {
    /// α bookkeeping on every ACK of new data (in and out of recovery).
    #[inline]
    fn observe(&mut self, a: &AckSample) {
        self.acked_bytes += a.acked;
        if a.ece {
            self.marked_bytes += a.acked;
            self.saw_ce = true;
        }
        if a.snd_una >= self.next_seq {
            if self.saw_ce && self.acked_bytes > 0 {
                let f = self.marked_bytes as f64 / self.acked_bytes as f64;
                self.alpha = (1.0 - G) * self.alpha + G * f;
            }
            self.acked_bytes = 0;
            self.marked_bytes = 0;
            self.next_seq = a.snd_nxt;
        }
    }

    /// Growth on an ACK outside recovery: none for CE-marked bytes.
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if a.ece {
            return;
        }
        reno_growth(w, &mut self.acc, a.acked);
    }

    fn on_congestion(&mut self, w: &Window, e: &CongestionEvent) -> u64 {
        self.ssthresh(w, e.is_ecn())
    }

    fn extra(&self) -> f64 {
        self.alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(p: &mut Prague, una: u64, nxt: u64, ece: bool) {
        p.observe(&AckSample {
            acked: 1000,
            ece,
            snd_una: una,
            snd_nxt: nxt,
            ..Default::default()
        });
    }

    /// Rounds of 10 ACKs of 1000 B. Without CE α stays 1 (no AQM seen); after the
    /// first mark it follows α ← 15/16·α + 1/16·F once per round: a round with 2 of 10
    /// marked from α = 1 gives 15/16 + 0.2/16 = 0.95.
    #[test]
    fn alpha_starts_at_one_frozen_until_the_first_mark_then_per_round() {
        let mut p = Prague::default();
        let mut una = 0;
        for _ in 0..5 {
            let end = una + 10_000;
            for _ in 0..10 {
                una += 1000;
                ack(&mut p, una, end + 10_000, false);
            }
        }
        assert_eq!(p.alpha, 1.0);
        // The round that started at the last close: 2 marked of 10.
        let end = una + 10_000;
        for i in 0..10 {
            una += 1000;
            ack(&mut p, una, end + 10_000, i < 2);
        }
        assert!(
            (p.alpha - (15.0 / 16.0 + 0.2 / 16.0)).abs() < 1e-12,
            "{}",
            p.alpha
        );
        let w = Window {
            cwnd: 100_000,
            ssthresh: 0,
            mss: 1000,
        };
        assert_eq!(
            p.ssthresh(&w, true),
            (100_000.0 * (1.0 - p.alpha / 2.0)) as u64
        );
        assert_eq!(p.ssthresh(&w, false), 50_000);
    }

    #[test]
    fn marked_acks_do_not_grow_the_window() {
        let mut p = Prague::default();
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: 10_000,
            mss: 1000,
        };
        let a = AckSample {
            acked: 10_000,
            ece: true,
            ..Default::default()
        };
        p.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 10_000);
        p.on_ack(&mut w, &AckSample { ece: false, ..a });
        assert_eq!(w.cwnd, 11_000, "one MSS per window of unmarked bytes");
    }
}
