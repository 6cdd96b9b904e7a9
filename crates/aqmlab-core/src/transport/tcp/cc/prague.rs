//! TCP Prague (the L4S scalable controller), reimplemented on this model's window
//! controller interface from the L4S team's Linux `net/ipv4/tcp_prague.c`
//! (`MODULE_VERSION("0.6")`, github.com/L4STeam/linux commit 02573a2; requirements in
//! RFC 9331 §4.3 and draft-briscoe-iccrg-prague-congestion-control).
//!
//! - ECN: Prague offers AccECN and refuses RFC 3168 feedback (`TCP_CONG_NEEDS_ACCECN |
//!   TCP_CONG_NO_FALLBACK_RFC3168`): with an AccECN receiver data is ECT(1) (RFC 9331)
//!   and the ACE counter reports CE-marked packets; with any other receiver the
//!   connection runs without ECN and Prague becomes `prague_reno` (`prague_init`): Reno
//!   growth and halving, unpaced (`prague_release`).
//! - α: an EWMA with g = 1/16 of the fraction of CE-marked packets (`delivered_ce` /
//!   `delivered` growth over the round), starting at 1 and frozen until the first CE
//!   mark (`saw_ce`), updated when `snd_una` passes the `snd_nxt` of the round start
//!   (`prague_should_update_ewma`); once RTT-independent, also not before the target
//!   RTT has passed since the last update (`prague_target_rtt_elapsed`).
//! - On a CE report, once per round trip (the connection's CWR rule, Linux
//!   `TCP_CA_CWR`): cwnd ← cwnd·(1 − α/2), at least 2 segments (`prague_enter_cwr`);
//!   once RTT-independent, no reduction within the target RTT of the previous one.
//! - Additive increase for the ACKed packets not CE-marked (`prague_update_cwnd`:
//!   `acked − ece_delta`), standard slow start, then per ACK `acked·ai/cwnd` with `ai`
//!   one segment per round (`prague_ai_ack_increase`).
//! - RTT independence (`rtt_scaling`, default `"rate"` = `RTT_CONTROL_RATE`, the
//!   module default): after `rtt_transition` (500) rounds out of slow start
//!   (`prague_new_round` counts them), a flow whose SRTT (in Linux's 128 µs units,
//!   `US2RTT`) is below `rtt_target` (25 ms) grows by (SRTT/target)² segments per
//!   round (`prague_rate_scaled_ai_ack_increase`), so flows of any RTT below the target
//!   add the same rate per unit time; not above 100 ms (`MAX_SCALED_RTT`).
//!   `"none"` is `RTT_CONTROL_NONE` (DCTCP-like, RTT-dependent).
//! - Classic-ECN bottleneck detection (`ecn_fallback`, default 0 as the module
//!   parameter `prague_ecn_fallback`; 1 = detect and fall back, 2 = detect only):
//!   Prague keeps its own smoothed RTT and deviation of the per-ACK RTT samples
//!   (`prague_rtt_estimator`, gains 2^−g and 2^−(g+1), g = min(⌊lg ssthresh⌋ +
//!   ⌊lg ssthresh⌋/2 + 1, 18) set at every congestion event,
//!   `prague_update_rtt_scaling`); at each α update the score `classic_ecn` moves by
//!   ½·lg(mdev / 750 µs) + ½·max(lg(queue delay / 2 ms), 0), the queue delay being
//!   SRTT − min RTT, and is kept in [0, 17] (`prague_classic_ecn_detection`; Linux
//!   takes integer logarithms with a carried remainder, here the real logarithm).
//!   Above 8 (`L_STICKY`) the fallback clamps α at the reduction to at least
//!   0.625·(min(score, 9) − 8) (`prague_classic_ecn_fallback`).
//! - Loss: halve (`prague_enter_loss`), through the connection's recovery.
//! - Pacing (on by default): cwnd in packets × (MSS + header bytes) / SRTT, × 100 % in
//!   congestion avoidance, × 200 % in slow start below ssthresh/2
//!   (`prague_update_pacing_rate`); a paced skb holds 2^−12 s (≈ 250 µs) of that rate,
//!   at least 2 segments (`prague_burst_shift`, `prague_tso_segs`).
//! - Differences from Linux: Linux keeps a fractional cwnd (`frac_cwnd`, 2^−20
//!   segments) and steps `snd_cwnd` one segment per ACK towards it; here a reduction
//!   is applied at once and growth is byte-counted with a fractional credit. Growth
//!   counts the unmarked part of every ACK, also inside the CWR round, as Linux's
//!   `cong_control` does (`Caps::grows_in_cwr`). `RTT_CONTROL_SCALABLE` and
//!   `_ADDITIVE` are not offered. α is a float, not Linux's 2^20 fixed point.

use super::{alpha_ssthresh, reno_growth, slow_start, AckSample, Window};
use super::{
    AnyCc, Caps, CcParams, CongestionEvent, Controller, EcnMode, Established, Kind, Pacing,
    Registered,
};
use crate::scenario::error::Result;
use crate::scenario::params::{param, KindDoc, Params};
use crate::sim::time::{Nanos, NS_PER_MS, NS_PER_US};
use crate::transport::tcp::accecn::Feedback;
use crate::transport::tcp::TcpConfig;

/// EWMA gain g = 1/2⁴ (`PRAGUE_SHIFT_G`).
pub const G: f64 = 1.0 / 16.0;
/// Linux `RTT_UNIT`: RTTs are compared in units of 2⁷ µs.
const RTT_UNIT_US: u64 = 128;
/// `prague_burst_shift`: a TSO burst lasts at most 2^−12 s of the pacing rate.
const BURST_SHIFT: u32 = 12;
/// `MAX_SCALED_RTT`.
const MAX_SCALED_RTT: Nanos = 100 * NS_PER_MS;
/// `PRAGUE_MAX_SRTT_BITS`.
const MAX_SRTT_SHIFT: u32 = 18;
/// `L_STICKY`, `CLASSIC_ECN`, `C_STICKY` in α units (`PRAGUE_MAX_ALPHA` = 1).
const L_STICKY: f64 = 8.0;
const CLASSIC_ECN: f64 = 9.0;
const C_STICKY: f64 = 17.0;
/// The reference deviation and queue delay of the detection (`V0_LG`, `D0_LG`), µs.
const V0_US: f64 = 750.0;
const D0_US: f64 = 2000.0;

/// Prague's parameters (the module parameters of `tcp_prague.c`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PragueParams {
    /// `prague_rtt_scaling`: RTT_CONTROL_RATE (true) or _NONE.
    pub rtt_control: bool,
    /// `prague_rtt_target`.
    pub rtt_target: Nanos,
    /// `prague_rtt_transition`: rounds out of slow start before RTT independence.
    pub rtt_transition: u32,
    /// `prague_ecn_fallback`: 0 none, 1 detection and fallback, 2 detection only.
    pub ecn_fallback: u8,
}

impl Default for PragueParams {
    fn default() -> Self {
        PragueParams {
            rtt_control: true,
            rtt_target: 25 * NS_PER_MS,
            rtt_transition: 500,
            ecn_fallback: 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Prague {
    pub p: PragueParams,
    pub alpha: f64,
    saw_ce: bool,
    /// Packets delivered and reported CE-marked in this round.
    delivered: u64,
    delivered_ce: u64,
    /// `snd_nxt` at the start of the round.
    next_seq: u64,
    /// Rounds out of slow start (`ca->round`).
    pub round: u32,
    /// Segments added per round of ACKs (`ai_ack_increase` / `ONE_CWND`).
    pub ai: f64,
    alpha_stamp: Nanos,
    cwr_stamp: Option<Nanos>,
    /// Growth credit, bytes.
    acc: f64,
    /// No AccECN: `prague_reno`.
    pub reno: bool,
    reno_acc: u64,
    /// Classic-ECN detection: Prague's RTT estimator (µs), its gain shift, the score.
    srtt_pace: f64,
    mdev_pace: f64,
    g_shift: u32,
    pub classic_ecn: f64,
}

impl Prague {
    pub fn new(p: PragueParams) -> Self {
        Prague {
            p,
            alpha: 1.0,
            saw_ce: false,
            delivered: 0,
            delivered_ce: 0,
            next_seq: 0,
            round: 0,
            ai: 1.0,
            alpha_stamp: 0,
            cwr_stamp: None,
            acc: 0.0,
            reno: false,
            reno_acc: 0,
            srtt_pace: 0.0,
            mdev_pace: 1.0,
            g_shift: MAX_SRTT_SHIFT,
            classic_ecn: 0.0,
        }
    }

    /// `prague_is_rtt_indep`.
    fn rtt_indep(&self, w: &Window) -> bool {
        self.p.rtt_control && !w.in_slow_start() && self.round >= self.p.rtt_transition
    }

    /// `prague_ai_ack_increase` with `prague_rate_scaled_ai_ack_increase`.
    fn update_ai(&mut self, srtt: Nanos) {
        let rtt = srtt / NS_PER_US / RTT_UNIT_US;
        let target = self.p.rtt_target / NS_PER_US / RTT_UNIT_US;
        self.ai = if !self.p.rtt_control
            || self.round < self.p.rtt_transition
            || rtt == 0
            || srtt > MAX_SCALED_RTT
            || rtt >= target
        {
            1.0
        } else {
            (rtt * rtt) as f64 / (target * target) as f64
        };
    }

    /// `prague_rtt_estimator` on an RTT sample.
    fn rtt_sample(&mut self, rtt: Nanos) {
        let m = rtt as f64 / NS_PER_US as f64;
        if self.srtt_pace == 0.0 {
            self.srtt_pace = m;
            self.mdev_pace = 1.0;
            return;
        }
        let err = m - self.srtt_pace;
        self.srtt_pace += err / (1u64 << self.g_shift) as f64;
        self.mdev_pace += (err.abs() - self.mdev_pace) / (1u64 << (self.g_shift + 1)) as f64;
    }

    /// `prague_update_rtt_scaling` with the ssthresh in segments.
    fn update_rtt_scaling(&mut self, ssthresh_segs: u64) {
        let lg = 63 - ssthresh_segs.max(1).leading_zeros();
        self.g_shift = (lg + lg / 2 + 1).min(MAX_SRTT_SHIFT);
    }

    /// `prague_classic_ecn_detection`.
    fn detect_classic_ecn(&mut self, min_rtt: Nanos) {
        if self.srtt_pace == 0.0 || min_rtt == Nanos::MAX {
            return;
        }
        let mut c = self.classic_ecn + 0.5 * (self.mdev_pace.max(1.0) / V0_US).log2();
        let depth = self.srtt_pace - min_rtt as f64 / NS_PER_US as f64;
        if depth > 0.0 {
            c += 0.5 * (depth / D0_US).log2().max(0.0);
        }
        self.classic_ecn = c.clamp(0.0, C_STICKY);
    }

    /// α for a reduction: with `ecn_fallback = 1` and a classic bottleneck detected, at
    /// least 0.625·(min(score, 9) − 8) (`prague_classic_ecn_fallback`).
    pub fn reduction_alpha(&self) -> f64 {
        if self.p.ecn_fallback == 1 && self.classic_ecn > L_STICKY {
            let c = self.classic_ecn.min(CLASSIC_ECN) - L_STICKY;
            self.alpha.max(0.625 * c)
        } else {
            self.alpha
        }
    }

    /// The round ended (`prague_update_alpha` → `prague_new_round`).
    fn end_round(&mut self, w: &Window, a: &AckSample) {
        if self.saw_ce {
            if self.p.ecn_fallback > 0 {
                self.detect_classic_ecn(a.min_rtt);
            }
            let f = if self.delivered_ce > 0 {
                self.delivered_ce as f64 / self.delivered.max(1) as f64
            } else {
                0.0
            };
            self.alpha = ((1.0 - G) * self.alpha + G * f).min(1.0);
            self.alpha_stamp = a.now;
        }
        self.next_seq = a.snd_nxt;
        self.delivered = 0;
        self.delivered_ce = 0;
        if !w.in_slow_start() {
            self.round = self.round.saturating_add(1);
        }
        self.update_ai(a.srtt);
    }
}

pub const KIND: Kind = Kind {
    doc: KindDoc {
        kind: "prague",
        summary: "TCP Prague (L4S): AccECN, ECT(1), α per round, RTT-independent after 500 rounds, paced (pacing = false turns pacing off); Reno without an AccECN receiver",
        source: "Linux net/ipv4/tcp_prague.c (L4S team, v0.6); RFC 9331 §4.3; draft-briscoe-iccrg-prague-congestion-control",
        params: &[
            param(
                "rtt_scaling",
                "string",
                "rate",
                "RTT independence: rate (RTT_CONTROL_RATE: below rtt_target, grow by (SRTT/target)² segments per round) or none (prague_rtt_scaling)",
            ),
            param("rtt_target", "duration", "25ms", "the RTT Prague behaves as if it had (prague_rtt_target)"),
            param(
                "rtt_transition",
                "int",
                "500",
                "rounds out of slow start before RTT independence starts (prague_rtt_transition)",
            ),
            param(
                "ecn_fallback",
                "int",
                "0",
                "classic-ECN bottleneck detection: 0 off, 1 detect and fall back (α at least 0.625 on a classic AQM), 2 detect only (prague_ecn_fallback)",
            ),
        ],
    },
    aliases: &[],
    parse,
};

fn parse(p: &mut Params) -> Result<CcParams> {
    let d = PragueParams::default();
    let rtt_control = p.choice_or("rtt_scaling", "rate", &["rate", "none"])? == "rate";
    Ok(CcParams::Prague(PragueParams {
        rtt_control,
        rtt_target: p.positive_duration_or("rtt_target", d.rtt_target)?,
        rtt_transition: p.u64_or("rtt_transition", d.rtt_transition as u64, 0, 1_000_000)? as u32,
        ecn_fallback: p.u64_or("ecn_fallback", 0, 0, 2)? as u8,
    }))
}

impl Registered for Prague {
    type Params = PragueParams;

    fn build(p: &PragueParams, _: &TcpConfig) -> AnyCc {
        Prague::new(*p).into()
    }

    /// AccECN only, ECT(1); paced by default at 100 % of cwnd/SRTT in congestion
    /// avoidance (`prague_update_pacing_rate`).
    fn caps(_: &PragueParams) -> Caps {
        Caps {
            ecn: EcnMode::L4s,
            pacing: Pacing::Default,
            pacing_ca_percent: 100,
            pacing_mtu: true,
            grows_in_cwr: true,
            needs_accecn: true,
            ..Caps::WINDOW
        }
    }
}

impl Controller for Prague {
    /// Without AccECN, `prague_reno`.
    fn on_established(&mut self, _w: &Window, e: &Established) {
        self.reno = e.feedback != Feedback::AccEcn;
    }

    /// Round bookkeeping on every ACK of new data, in and out of recovery
    /// (`prague_cong_control` → `prague_should_update_ewma`, `prague_pkts_acked`).
    fn pkts_acked(&mut self, w: &mut Window, a: &AckSample) {
        if self.reno {
            return;
        }
        if let Some(r) = a.rtt {
            self.rtt_sample(r);
        }
        self.delivered += a.acked.div_ceil(w.mss);
        self.delivered_ce += a.ce;
        if a.ce > 0 {
            self.saw_ce = true;
        }
        let round_over = a.snd_una >= self.next_seq;
        if round_over
            && (!self.rtt_indep(w) || a.now.saturating_sub(self.alpha_stamp) >= self.p.rtt_target)
        {
            self.end_round(w, a);
        }
    }

    /// Growth outside recovery for the bytes not reported CE-marked.
    fn on_ack(&mut self, w: &mut Window, a: &AckSample) {
        if self.reno {
            reno_growth(w, &mut self.reno_acc, a.acked);
            return;
        }
        let mut grow = a.acked - a.ce_bytes;
        if grow == 0 {
            return;
        }
        if w.in_slow_start() {
            grow = slow_start(w, grow);
            if grow == 0 {
                return;
            }
        }
        self.acc += grow as f64 * self.ai;
        while self.acc >= w.cwnd as f64 {
            self.acc -= w.cwnd as f64;
            w.cwnd += w.mss;
        }
    }

    /// `prague_ssthresh` (the detection's gains), then `prague_enter_cwr` /
    /// `prague_enter_loss`.
    fn on_congestion(&mut self, w: &Window, e: &CongestionEvent) -> u64 {
        if self.reno {
            return alpha_ssthresh(w, 1.0, false);
        }
        self.update_rtt_scaling(w.ssthresh / w.mss);
        self.acc = 0.0;
        if !e.is_ecn() {
            return alpha_ssthresh(w, self.alpha, false);
        }
        if self.rtt_indep(w)
            && self
                .cwr_stamp
                .is_some_and(|t| e.now.saturating_sub(t) < self.p.rtt_target)
        {
            return w.cwnd;
        }
        self.cwr_stamp = Some(e.now);
        alpha_ssthresh(w, self.reduction_alpha(), true)
    }

    /// `prague_tso_segs`: 2^−12 s (about 250 µs, `prague_burst_shift`) of the pacing
    /// rate in packets, at least one, and at least `tcp_min_tso_segs` = 2.
    fn tso_segs(&self, pacing_rate: u64, mtu: u64) -> Option<u64> {
        Some(((pacing_rate / mtu) >> BURST_SHIFT).max(1).max(2))
    }

    fn extra(&self) -> f64 {
        self.alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::cc::Cause;

    const MSS: u64 = 1000;

    fn win(cwnd_segs: u64) -> Window {
        Window {
            cwnd: cwnd_segs * MSS,
            ssthresh: cwnd_segs * MSS,
            mss: MSS,
        }
    }

    /// One ACK of one 1000-B packet, `ce` of it reported CE-marked.
    fn ack(now: Nanos, una: u64, nxt: u64, ce: u64, srtt: Nanos) -> AckSample {
        AckSample {
            now,
            acked: MSS,
            ece: ce > 0,
            ce,
            ce_bytes: ce * MSS,
            srtt,
            snd_una: una,
            snd_nxt: nxt,
            ..Default::default()
        }
    }

    /// Rounds of 10 one-packet ACKs; in each round the first `ce` ACKs report a mark.
    fn rounds(p: &mut Prague, w: &mut Window, una: &mut u64, t: &mut Nanos, n: u32, ce: u32) {
        for _ in 0..n {
            let end = *una + 10 * MSS;
            for i in 0..10 {
                *una += MSS;
                *t += NS_PER_MS;
                p.pkts_acked(
                    w,
                    &ack(*t, *una, end + 10 * MSS, (i < ce) as u64, 10 * NS_PER_MS),
                );
            }
        }
    }

    /// Without CE α stays 1 (no AQM seen); after the first mark it follows
    /// α ← 15/16·α + 1/16·F once per round, F in packets: a round with 2 of 10
    /// marked from α = 1 gives 15/16 + 0.2/16 = 0.95. The cut is cwnd·(1 − α/2).
    #[test]
    fn alpha_starts_at_one_frozen_until_the_first_mark_then_per_round() {
        let mut p = Prague::new(PragueParams::default());
        let (mut w, mut una, mut t) = (win(100), 0, 0);
        rounds(&mut p, &mut w, &mut una, &mut t, 5, 0);
        assert_eq!(p.alpha, 1.0);
        rounds(&mut p, &mut w, &mut una, &mut t, 1, 2);
        assert!(
            (p.alpha - (15.0 / 16.0 + 0.2 / 16.0)).abs() < 1e-12,
            "{}",
            p.alpha
        );
        let e = CongestionEvent {
            now: t,
            flight: 0,
            cause: Cause::Ecn,
        };
        assert_eq!(
            p.on_congestion(&w, &e),
            (100_000.0 * (1.0 - p.alpha / 2.0)) as u64
        );
        let loss = CongestionEvent {
            cause: Cause::Loss,
            ..e
        };
        assert_eq!(p.on_congestion(&w, &loss), 50_000);
    }

    /// Growth counts only the packets not reported CE-marked (`acked − ece_delta`).
    #[test]
    fn marked_packets_do_not_grow_the_window() {
        let mut p = Prague::new(PragueParams::default());
        let mut w = win(10);
        let a = AckSample {
            acked: 10 * MSS,
            ce: 10,
            ce_bytes: 10 * MSS,
            ..Default::default()
        };
        p.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 10 * MSS);
        p.on_ack(
            &mut w,
            &AckSample {
                ce: 4,
                ce_bytes: 4 * MSS,
                ..a
            },
        );
        assert_eq!(w.cwnd, 10 * MSS, "6 of 10 segments: not a whole window yet");
        p.on_ack(
            &mut w,
            &AckSample {
                ce: 6,
                ce_bytes: 6 * MSS,
                ..a
            },
        );
        assert_eq!(w.cwnd, 11 * MSS, "6 + 4 unmarked segments: one MSS");
    }

    /// RTT_CONTROL_RATE: 500 rounds out of slow start with SRTT 10 ms, then the increase
    /// per round is (⌊10000/128⌋ / ⌊25000/128⌋)² = (78/195)² = 0.16 segment; the EWMA
    /// waits for the 25 ms target since its last update, and a second CE reduction
    /// within 25 ms of the first is skipped.
    #[test]
    fn rtt_independence_after_500_rounds() {
        let mut p = Prague::new(PragueParams::default());
        let (mut w, mut una, mut t) = (win(100), 0, 0);
        rounds(&mut p, &mut w, &mut una, &mut t, 499, 1);
        assert_eq!((p.round, p.ai), (499, 1.0));
        rounds(&mut p, &mut w, &mut una, &mut t, 1, 1);
        assert_eq!(p.round, 500);
        assert!(
            (p.ai - (78.0f64 * 78.0) / (195.0 * 195.0)).abs() < 1e-12,
            "{}",
            p.ai
        );
        // 100 segments of unmarked ACKs on a 100-segment window: 0.16 segment, no step.
        let before = w.cwnd;
        for _ in 0..6 {
            p.on_ack(
                &mut w,
                &AckSample {
                    acked: 100 * MSS,
                    ..Default::default()
                },
            );
        }
        assert_eq!(w.cwnd, before, "0.96 of a segment");
        p.on_ack(
            &mut w,
            &AckSample {
                acked: 100 * MSS,
                ..Default::default()
            },
        );
        assert_eq!(w.cwnd, before + MSS, "1.12 segments");
        // Rounds of 10 ms now close only every 25 ms: three rounds, one update.
        let r = p.round;
        rounds(&mut p, &mut w, &mut una, &mut t, 3, 1);
        assert_eq!(p.round, r + 1);
        // CWR: the first reduces, the next within 25 ms does not, after 25 ms again.
        let e = |now| CongestionEvent {
            now,
            flight: 0,
            cause: Cause::Ecn,
        };
        assert!(p.on_congestion(&w, &e(t)) < w.cwnd);
        assert_eq!(p.on_congestion(&w, &e(t + 24 * NS_PER_MS)), w.cwnd);
        assert!(p.on_congestion(&w, &e(t + 25 * NS_PER_MS)) < w.cwnd);
        // RTT_CONTROL_NONE: never scaled.
        let mut q = Prague::new(PragueParams {
            rtt_control: false,
            ..Default::default()
        });
        let (mut w, mut una, mut t) = (win(100), 0, 0);
        rounds(&mut q, &mut w, &mut una, &mut t, 600, 1);
        assert_eq!(q.ai, 1.0);
    }

    /// Classic-ECN detection by hand: deviation 3000 µs adds ½·lg(3000/750) = 1, queue
    /// delay 8000 µs (SRTT 18 ms over a 10 ms minimum) adds ½·lg(8000/2000) = 1: +2 per
    /// α update. After 5 updates the score is 10 > 8 and the fallback clamps α = 0.1 to
    /// 0.625·(min(10, 9) − 8) = 0.625; detection only (2) leaves it.
    #[test]
    fn classic_ecn_detection_and_fallback() {
        for (mode, want) in [(1u8, 0.625), (2, 0.1)] {
            let mut p = Prague::new(PragueParams {
                ecn_fallback: mode,
                ..Default::default()
            });
            p.alpha = 0.1;
            for i in 1..=5 {
                p.srtt_pace = 18_000.0;
                p.mdev_pace = 3_000.0;
                p.detect_classic_ecn(10 * NS_PER_MS);
                assert!(
                    (p.classic_ecn - 2.0 * i as f64).abs() < 1e-9,
                    "{}",
                    p.classic_ecn
                );
            }
            assert_eq!(p.reduction_alpha(), want);
        }
        // A smooth path (deviation 375 µs, no queue) lowers the score, not below 0.
        let mut p = Prague::new(PragueParams {
            ecn_fallback: 1,
            ..Default::default()
        });
        p.srtt_pace = 10_000.0;
        p.mdev_pace = 375.0;
        p.classic_ecn = 0.25;
        p.detect_classic_ecn(10 * NS_PER_MS);
        assert_eq!(p.classic_ecn, 0.0);
    }

    /// `prague_rtt_estimator`: the first sample is the estimate; then gains 2^−g and
    /// 2^−(g+1) with g from ssthresh: 40 segments → ⌊lg 40⌋ = 5, 5 + 2 + 1 = 8.
    #[test]
    fn pacing_rtt_estimator_gains_follow_ssthresh() {
        let mut p = Prague::new(PragueParams::default());
        p.rtt_sample(10 * NS_PER_MS);
        assert_eq!((p.srtt_pace, p.mdev_pace), (10_000.0, 1.0));
        p.update_rtt_scaling(40);
        assert_eq!(p.g_shift, 8);
        p.rtt_sample(10 * NS_PER_MS + 256 * NS_PER_US);
        assert_eq!(p.srtt_pace, 10_001.0);
        assert_eq!(p.mdev_pace, 1.0 + 255.0 / 512.0);
    }

    /// `prague_tso_segs`: 40 Mbit/s in 1500-B packets is 3333 packets/s, 2^−12 s of it
    /// 0 → at least 1, then `tcp_min_tso_segs` 2; 1 Gbit/s: 83 333 >> 12 = 20.
    #[test]
    fn tso_burst_is_a_quarter_millisecond_of_the_rate() {
        let p = Prague::new(PragueParams::default());
        assert_eq!(p.tso_segs(5_000_000, 1500), Some(2));
        assert_eq!(p.tso_segs(125_000_000, 1500), Some(20));
    }

    /// Without AccECN (`prague_reno`): Reno's growth and halving, α untouched.
    #[test]
    fn without_accecn_prague_is_reno() {
        let mut p = Prague::new(PragueParams::default());
        let mut w = win(10);
        let e = Established {
            now: 0,
            srtt: None,
            feedback: Feedback::None,
        };
        p.on_established(&w, &e);
        assert!(p.reno);
        p.on_ack(
            &mut w,
            &AckSample {
                acked: 10 * MSS,
                ..Default::default()
            },
        );
        assert_eq!(w.cwnd, 11 * MSS);
        let loss = CongestionEvent {
            now: 0,
            flight: 0,
            cause: Cause::Loss,
        };
        assert_eq!(p.on_congestion(&w, &loss), 5500);
    }
}
