//! DCTCP (RFC 8257; Linux `tcp_dctcp.c`).
//!
//! - The sender keeps `α` ← `(1 − g)·α + g·F` once per window of data (when `snd_una`
//!   passes the `snd_nxt` recorded at the window start), with `F` the fraction of bytes
//!   acknowledged by ACKs carrying ECE in that window; g = 1/16, initial α = 1 (Linux
//!   `dctcp_alpha_on_init` default).
//! - On ECE (at most once per window, the connection's CWR rule):
//!   `cwnd = ssthresh = cwnd·(1 − α/2)`, at least 2 segments (RFC 8257 §3.3).
//! - On loss: halve like Reno (RFC 8257 §3.4; Linux `dctcp_react_to_loss`).
//! - The receiver echoes each packet's CE state exactly, sending an immediate ACK when
//!   the CE state changes (RFC 8257 §3.2; see `receiver.rs`); with `ecn = "accecn"`
//!   negotiated, the AccECN ACE counter reports the marks instead (RFC 9768; Linux
//!   DCTCP then reads `delivered_ce`), `ce` MSS of the ACK's bytes counting as marked.
//! - Window growth is Reno's.

use super::{alpha_ssthresh, reno_growth, AckSample, Window};
use super::{AnyCc, Caps, CcParams, CongestionEvent, Controller, EcnMode, Kind, Registered};
use crate::scenario::error::Result;
use crate::scenario::params::{param, KindDoc, Params};
use crate::transport::tcp::TcpConfig;

#[derive(Clone, Debug)]
pub struct Dctcp {
    pub g: f64,
    pub alpha: f64,
    acked_bytes: u64,
    marked_bytes: u64,
    window_end: u64,
    acc: u64,
}

impl Dctcp {
    pub fn new(g: f64) -> Self {
        Dctcp {
            g,
            alpha: 1.0,
            acked_bytes: 0,
            marked_bytes: 0,
            window_end: 0,
            acc: 0,
        }
    }

    /// New ssthresh at a congestion event; `ecn` says whether it was an ECE.
    pub fn ssthresh(&mut self, w: &Window, ecn: bool) -> u64 {
        self.acc = 0;
        alpha_ssthresh(w, self.alpha, ecn)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpParams {
    pub g: f64,
}

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "dctcp",
        summary:
            "DCTCP: cuts cwnd by α/2, α the EWMA of the marked fraction; per-packet CE echo, ECN on",
        source: "RFC 8257; Linux net/ipv4/tcp_dctcp.c",
        params: &[param(
            "g",
            "float",
            "0.0625",
            "EWMA gain g; flat alias `dctcp_g`",
        )],
    },
    aliases: &[("g", "dctcp_g")],
    parse,
};

fn parse(p: &mut Params) -> Result<CcParams> {
    Ok(CcParams::Dctcp(DctcpParams {
        g: p.f64_or("g", 1.0 / 16.0, 1e-6, 1.0)?,
    }))
}

impl Registered for Dctcp {
    type Params = DctcpParams;

    fn build(p: &DctcpParams, _: &TcpConfig) -> AnyCc {
        Dctcp::new(p.g).into()
    }

    fn caps(_: &DctcpParams) -> Caps {
        Caps {
            ecn: EcnMode::Accurate,
            ..Caps::WINDOW
        }
    }
}

impl Controller for Dctcp {
    /// α bookkeeping on every ACK that acknowledges data (also during recovery).
    #[inline]
    fn observe(&mut self, a: &AckSample) {
        self.acked_bytes += a.acked;
        self.marked_bytes += a.ce_bytes;
        if a.snd_una >= self.window_end {
            if self.acked_bytes > 0 {
                let f = self.marked_bytes as f64 / self.acked_bytes as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            }
            self.acked_bytes = 0;
            self.marked_bytes = 0;
            self.window_end = a.snd_nxt;
        }
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
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

    /// A hand-driven ECE stream: windows of 10 segments of 1000 B, one ACK each; in
    /// every window the first `marked` ACKs carry ECE. The sender is one window ahead
    /// (`snd_nxt` = end of the next window), so after the first ACK closes the empty
    /// initial window, observation windows close on ACKs 20, 30, 40, ...
    fn run_windows(d: &mut Dctcp, una: &mut u64, windows: u32, marked: u32) {
        for _ in 0..windows {
            let end = *una + 10_000;
            for i in 0..10 {
                *una += 1000;
                d.observe(&AckSample {
                    acked: 1000,
                    ece: i < marked,
                    ce_bytes: if i < marked { 1000 } else { 0 },
                    snd_una: *una,
                    snd_nxt: end + 10_000,
                    ..Default::default()
                });
            }
        }
    }

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        let mut d = Dctcp::new(1.0 / 16.0);
        let mut una = 0;
        run_windows(&mut d, &mut una, 200, 3);
        assert!((d.alpha - 0.3).abs() < 0.01, "{}", d.alpha);
        // Reduction on ECE: cwnd·(1 − α/2).
        let w = Window {
            cwnd: 100_000,
            ssthresh: 0,
            mss: 1000,
        };
        let ss = d.ssthresh(&w, true);
        assert!((ss as f64 - 100_000.0 * (1.0 - d.alpha / 2.0)).abs() < 1.0);
        assert_eq!(d.ssthresh(&w, false), 50_000);
    }

    #[test]
    fn alpha_decays_by_one_minus_g_per_unmarked_window() {
        let mut d = Dctcp::new(1.0 / 16.0);
        let mut una = 0;
        // Updates at ACKs 1, 20, 30 and 40, all with F = 0.
        run_windows(&mut d, &mut una, 4, 0);
        let expect = (15.0f64 / 16.0).powi(4);
        assert!((d.alpha - expect).abs() < 1e-12, "{} vs {expect}", d.alpha);
    }
}
