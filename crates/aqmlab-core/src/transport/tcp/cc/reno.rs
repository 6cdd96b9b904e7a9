//! Reno window growth: slow start and congestion avoidance (RFC 5681 §3.1, with
//! RFC 3465 byte counting), `ssthresh = max(FlightSize/2, 2·SMSS)` (RFC 5681 eq. 4).
//!
//! `cc = "reno"` and `cc = "newreno"` share this controller; they differ in the loss
//! recovery the connection runs when SACK is off: plain Reno fast recovery (RFC 5681
//! §3.2: the first new ACK ends recovery) or NewReno partial-ACK recovery (RFC 6582).
//!
//! `linux` (profile "linux", `linux_reno`): Linux `tcp_reno_cong_avoid` and
//! `tcp_reno_ssthresh` (net/ipv4/tcp_cong.c, read at 6.17-rc3), in whole segments as the
//! kernel's `snd_cwnd`: slow start `tcp_slow_start` (+ acked segments up to ssthresh,
//! no RFC 3465 cap), congestion avoidance `tcp_cong_avoid_ai(cwnd, acked)` (one segment
//! per cwnd acknowledged segments, credit `snd_cwnd_cnt`, zeroed at a reduction by
//! `tcp_init_cwnd_reduction`), ssthresh = max(⌊cwnd/2⌋, 2) segments of the loss base.
//! A window of 7 segments is cut to 3, not 3.5, and then grows one segment per 3
//! acknowledged, not per 3.5 segments' worth of bytes.
//!
//! `per_ack` (profile "ns3"): ns-3.44 `TcpNewReno` counts ACKs, not bytes — slow start
//! adds one MSS per ACK (`SlowStart`: one segment, the rest of the ACK goes to
//! congestion avoidance if ssthresh is reached), congestion avoidance adds
//! `max(1, MSS²/cwnd)` bytes per ACK (`CongestionAvoidance`). With delayed ACKs (one ACK
//! per two segments) that is ≈ ½ MSS per RTT, where RFC 3465 byte counting gives 1.

use super::{
    half_flight, linux_cong_avoid_ai, linux_slow_start, linux_ssthresh_segs, reno_growth, segments,
    AckSample, Window,
};
use super::{AnyCc, Caps, CcParams, CongestionEvent, Controller, Kind, Registered};
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, Params};
use crate::transport::tcp::TcpConfig;

#[derive(Clone, Debug, Default)]
pub struct Reno {
    /// Bytes acknowledged towards the next congestion-avoidance increment.
    acc: u64,
    /// Linux's whole-segment rules (`linux_reno`).
    linux: bool,
    /// Grow per ACK (ns-3) instead of per byte acknowledged.
    per_ack: bool,
}

impl Reno {
    pub fn new(per_ack: bool, linux: bool) -> Reno {
        Reno {
            acc: 0,
            linux,
            per_ack,
        }
    }

    /// `tcp_reno_cong_avoid`; `acc` is `snd_cwnd_cnt` (segments).
    fn linux_growth(&mut self, w: &mut Window, acked: u64) {
        let mss = w.mss;
        let old = w.cwnd / mss;
        let mut acked = segments(acked, mss);
        let mut cwnd = old;
        if let Some(ssthresh) = linux_ssthresh_segs(w) {
            if cwnd < ssthresh {
                (cwnd, acked) = linux_slow_start(cwnd, ssthresh, acked);
            }
        }
        if acked > 0 {
            cwnd = linux_cong_avoid_ai(cwnd, &mut self.acc, cwnd, acked);
        }
        w.cwnd += (cwnd - old) * mss;
    }

    pub fn ssthresh(&mut self, w: &Window, flight: u64) -> u64 {
        self.acc = 0;
        if self.linux {
            // tcp_reno_ssthresh: max(snd_cwnd >> 1, 2), in segments.
            return ((flight / w.mss) >> 1).max(2) * w.mss;
        }
        half_flight(w, flight)
    }
}

/// ns-3 `TcpNewReno::IncreaseWindow` on one ACK of `acked` bytes.
fn per_ack_growth(w: &mut Window, acked: u64) {
    if acked == 0 {
        return;
    }
    let mut segs = acked.div_ceil(w.mss);
    if w.in_slow_start() {
        w.cwnd += w.mss;
        segs -= 1;
    }
    if !w.in_slow_start() && segs > 0 {
        w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
    }
}

/// `reno` and `newreno` differ only in the connection's loss recovery without SACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenoParams {
    /// Plain Reno fast recovery (RFC 5681 §3.2) instead of NewReno's (RFC 6582).
    pub reno_recovery: bool,
}

const SOURCE: &str = "RFC 5681, RFC 3465; Linux net/ipv4/tcp_cong.c (tcp_reno_cong_avoid, tcp_reno_ssthresh); ns-3.44 TcpNewReno";

pub const RENO: Kind = Kind {
    doc: KindDoc {
        kind: "reno",
        summary: "Reno: slow start, AIMD; without SACK, RFC 5681 fast recovery (the first new ACK ends it)",
        source: SOURCE,
        params: &[],
    },
    aliases: &[],
    parse: parse_reno,
};

pub const NEWRENO: Kind = Kind {
    doc: KindDoc {
        kind: "newreno",
        summary: "NewReno: Reno's window rules; without SACK, RFC 6582 partial-ACK recovery",
        source: SOURCE,
        params: &[],
    },
    aliases: &[],
    parse: parse_newreno,
};

fn parse_reno(_: &mut Params) -> Result<CcParams> {
    Ok(CcParams::Reno(RenoParams {
        reno_recovery: true,
    }))
}

fn parse_newreno(_: &mut Params) -> Result<CcParams> {
    Ok(CcParams::Reno(RenoParams {
        reno_recovery: false,
    }))
}

impl Registered for Reno {
    type Params = RenoParams;

    /// `per_ack_growth`: per ACK as ns-3; `linux_reno`: whole segments as Linux.
    fn build(_: &RenoParams, cfg: &TcpConfig) -> AnyCc {
        Reno::new(cfg.per_ack_growth, cfg.linux_reno).into()
    }

    fn caps(p: &RenoParams) -> Caps {
        Caps {
            reno_recovery: p.reno_recovery,
            ..Caps::WINDOW
        }
    }
}

impl Controller for Reno {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if self.per_ack {
            return per_ack_growth(w, a.acked);
        }
        if self.linux {
            return self.linux_growth(w, a.acked);
        }
        reno_growth(w, &mut self.acc, a.acked);
    }

    fn on_congestion(&mut self, w: &Window, e: &CongestionEvent) -> u64 {
        self.ssthresh(w, e.flight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ns-3 growth: an ACK of two segments in slow start adds one MSS; in congestion
    /// avoidance each ACK adds MSS²/cwnd whatever it acknowledges.
    #[test]
    fn per_ack_growth_counts_acks_not_bytes() {
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: 20_000,
            mss: 1000,
        };
        let mut r = Reno::new(true, false);
        let ack = |acked| AckSample {
            acked,
            ..Default::default()
        };
        r.on_ack(&mut w, &ack(2000));
        assert_eq!(w.cwnd, 11_000);
        w.cwnd = 19_500;
        // Slow start +1000 reaches 20 500 ≥ ssthresh; the second segment goes to
        // congestion avoidance: + 1000²/20 500 = 48.
        r.on_ack(&mut w, &ack(2000));
        assert_eq!(w.cwnd, 20_548);
        r.on_ack(&mut w, &ack(2000));
        assert_eq!(w.cwnd, 20_548 + 1_000_000 / 20_548);
        r.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd, 20_596 + 1_000_000 / 20_596);
    }

    #[test]
    fn slow_start_then_one_mss_per_window() {
        let mut w = Window {
            cwnd: 10_000,
            ssthresh: 12_000,
            mss: 1000,
        };
        let mut r = Reno::default();
        let ack = |acked| AckSample {
            acked,
            ..Default::default()
        };
        r.on_ack(&mut w, &ack(2000)); // slow start: +2000
        assert_eq!(w.cwnd, 12_000);
        // Congestion avoidance: 12 ACKs of 1000 B = one window → +1 MSS.
        for _ in 0..11 {
            r.on_ack(&mut w, &ack(1000));
        }
        assert_eq!(w.cwnd, 12_000);
        r.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd, 13_000);
        assert_eq!(r.ssthresh(&w, 13_000), 6_500);
        assert_eq!(r.ssthresh(&w, 1_000), 2_000);
    }

    /// Linux Reno by hand (MSS 1000): cwnd 7 segments cut to ⌊7/2⌋ = 3 (RFC 5681 byte
    /// halving: 3.5); then ACKs of 2 segments: 2 < 3 credit; +2 → 4 ≥ 3 → cwnd 4, credit
    /// 1; +2 → 3 < 4; +2 → 5 ≥ 4 → cwnd 5, credit 1. Byte counting from 3.5 segments
    /// reaches 4.5 only after 4 segments and 5.5 after 9. Slow start takes a stretch
    /// ACK whole (5 segments from 10 up to ssthresh 13, 2 over into avoidance).
    #[test]
    fn linux_reno_whole_segments() {
        let mut r = Reno::new(false, true);
        let mut w = Window {
            cwnd: 7000,
            ssthresh: u64::MAX,
            mss: 1000,
        };
        w.ssthresh = r.ssthresh(&w, w.cwnd);
        w.cwnd = w.ssthresh;
        assert_eq!(w.cwnd, 3000);
        let ack = |acked| AckSample {
            acked,
            ..Default::default()
        };
        let mut seen = vec![];
        for _ in 0..4 {
            r.on_ack(&mut w, &ack(2000));
            seen.push(w.cwnd / 1000);
        }
        assert_eq!(seen, [3, 4, 4, 5]);
        let mut rfc = Reno::new(false, false);
        let mut v = Window {
            cwnd: 7000,
            ssthresh: u64::MAX,
            mss: 1000,
        };
        v.ssthresh = rfc.ssthresh(&v, v.cwnd);
        v.cwnd = v.ssthresh;
        assert_eq!(v.cwnd, 3500);
        // Floor of 2 segments.
        let tiny = Window { cwnd: 3000, ..w };
        assert_eq!(r.ssthresh(&tiny, tiny.cwnd), 2000);
        let mut ss = Window {
            cwnd: 10_000,
            ssthresh: 13_000,
            mss: 1000,
        };
        r.on_ack(&mut ss, &ack(5000));
        assert_eq!(ss.cwnd, 13_000);
    }
}
