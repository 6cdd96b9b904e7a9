//! `rtp`: an RTP session (RFC 3550) — one sender, one receiver per flow — with RTCP.
//!
//! The sender emits data packets with a 16-bit sequence number and a 32-bit RTP
//! timestamp (both starting at random values, §5.1), sizes and gaps drawn from the
//! configured distributions (`dist.rs`). Both ends run an RTCP timer
//! (`rtcp_session.rs` over `rtcp.rs`, §6.3/A.7): the sender sends SRs forward on the
//! flow, the receiver sends RRs back (`AppIo::send_tagged(reverse = true)`) carrying a
//! report block computed by `stats.rs` (A.1/A.3/A.8). RTCP packets are real
//! datagrams that queue and can be lost; their contents travel beside them in the app
//! (a report id in the packet's tag), and the sender learns them only when the
//! datagram arrives (`on_datagram`). The sender also gets the round-trip time from
//! LSR/DLSR (§6.4.1).
//!
//! Warm-up: the quality columns count data packets sent at or after `warmup` (and
//! reports made from then on, `rtcp_session.rs`); the RFC state (sequence tracking,
//! jitter estimate, timers) runs from the start.
//!
//! Packet tags: `unit_type` 0 = data (`unit` = RTP timestamp), 200 = SR, 201 = RR
//! (the RTCP packet types; `unit` = report number).
//!
//! RTCP packet sizes (IP bytes, an SDES CNAME chunk of 24 B in every compound packet):
//! SR without report blocks 28 + 28 + 24 = 80 B; RR with one block 28 + 8 + 24 + 24 =
//! 84 B (60 B before the receiver has a valid source, with no block).

pub mod rtcp;
pub mod rtcp_session;
pub mod stats;
pub mod tfrc;

use crate::app::dist::Dist;
use crate::app::{AppIo, Application, Arrival, EntryBuild, FlowKind, TrafficKind};
use crate::net::packet::AppTag;
use crate::output::table::Val;
use crate::scenario::error::Result;
use crate::scenario::params::{KindDoc, ParamDoc, Params};
use crate::sim::rng::Rng;
use crate::sim::time::{Nanos, NS_PER_S};
use rtcp::RtcpConfig;
use rtcp_session::{ReportLedger, RtcpMember, TAG_RR, TAG_SR};
use stats::SourceStats;

/// IP + UDP + RTP header bytes: the smallest data packet.
pub const RTP_HEADERS: u32 = 40;
pub const TAG_DATA: u8 = 0;

pub const RTP: TrafficKind = TrafficKind {
    doc: KindDoc {
        kind: "rtp",
        summary: "RTP session with RTCP sender/receiver reports (RFC 3550)",
        source: "RFC 3550 §5, §6, App. A.1, A.3, A.7, A.8",
        params: &[
            ParamDoc { name: "size", ty: "size", default: "500B", doc: "mean IP packet size (≥ 40 B)" },
            ParamDoc { name: "size_dist", ty: "string", default: "fixed", doc: "fixed, uniform (mean ± size_spread), exp (40 B + exponential) or normal (sd size_spread, truncated at ±3 sd)" },
            ParamDoc { name: "size_spread", ty: "size", default: "-", doc: "half-width (uniform) or standard deviation (normal) of the size" },
            ParamDoc { name: "rate", ty: "rate", default: "required (or interval)", doc: "mean sending rate (IP bytes); sets the mean gap to size·8/rate (give this or `interval`)" },
            ParamDoc { name: "interval", ty: "duration", default: "-", doc: "mean gap between packets (give this or `rate`)" },
            ParamDoc { name: "interval_dist", ty: "string", default: "fixed", doc: "fixed, uniform, exp or normal, as for sizes" },
            ParamDoc { name: "interval_spread", ty: "duration", default: "-", doc: "half-width (uniform) or standard deviation (normal) of the gap" },
            ParamDoc { name: "clock_rate", ty: "int", default: "90000", doc: "RTP timestamp clock in Hz (8000 for telephony audio)" },
            ParamDoc { name: "rtcp", ty: "bool", default: "true", doc: "send RTCP SRs and RRs" },
            ParamDoc { name: "session_bw", ty: "rate", default: "mean rate", doc: "session bandwidth for the RTCP interval (RFC 3550 §6.2)" },
            ParamDoc { name: "rtcp_fraction", ty: "float", default: "0.05", doc: "RTCP share of the session bandwidth" },
            ParamDoc { name: "rtcp_reduced_min", ty: "bool", default: "false", doc: "minimum interval 360/(session kbit/s) s instead of 5 s" },
            ParamDoc { name: "reconsideration", ty: "bool", default: "true", doc: "timer reconsideration on expiry (§6.3.6)" },
            crate::app::DATAGRAM_ECN,
        ],
    },
    build,
};

fn build(p: &mut Params, e: &mut EntryBuild) -> Result<()> {
    e.ecn = crate::app::read_datagram_ecn(p)?;
    let size = p.size_or("size", 500)?;
    if !(RTP_HEADERS as u64..=65_535).contains(&size) {
        return Err(p.error(
            "size",
            format!("{size}B: expected 40B (IP + UDP + RTP headers) to 65535B"),
        ));
    }
    let spread = p.size("size_spread")?.map(|s| s as f64);
    let size_dist = Dist::read(
        p,
        "size_dist",
        "size_spread",
        "size",
        size as f64,
        spread,
        RTP_HEADERS as f64,
    )?;
    if size_dist.mean + 3.0 * size_dist.spread > 65_535.0 {
        return Err(p.error("size_spread", "sizes could exceed 65535B"));
    }
    let gap_ns = match (p.rate("rate")?, p.duration("interval")?) {
        (Some(r), None) if r > 0 => size as f64 * 8.0 * NS_PER_S as f64 / r as f64,
        (None, Some(i)) if i > 0 => i as f64,
        (Some(_), Some(_)) => {
            return Err(p.error("interval", "give either `rate` or `interval`, not both"))
        }
        (Some(_), None) => return Err(p.error("rate", "expected a rate above 0")),
        (None, Some(_)) => return Err(p.error("interval", "expected a duration above 0")),
        (None, None) => {
            return Err(p.error(
                "rate",
                "missing: give `rate` (like \"800kbit\") or `interval`",
            ))
        }
    };
    let ispread = p.duration("interval_spread")?.map(|s| s as f64);
    let gap_dist = Dist::read(
        p,
        "interval_dist",
        "interval_spread",
        "interval",
        gap_ns,
        ispread,
        0.0,
    )?;
    let clock_rate = p.u64_or("clock_rate", 90_000, 1, 10_000_000)? as u32;
    let mean_rate = size as f64 * 8.0 * NS_PER_S as f64 / gap_ns;
    let rtcp = rtcp_session::read_config(p, mean_rate)?;
    for (k, (src, dst)) in e.pairs.clone().into_iter().enumerate() {
        let flow = e.next_flow();
        let start = e.start_for(&format!("flow[{k}]"));
        let mut rng = e.rng(&format!("flow[{k}]"));
        let rtcp_rngs = (
            e.rng(&format!("flow[{k}].rtcp.sender")),
            e.rng(&format!("flow[{k}].rtcp.receiver")),
        );
        let seq0 = rng.below(1 << 16) as u16;
        let ts0 = rng.next_u64() as u32;
        let src_cfg = SourceConfig {
            size: size_dist,
            gap: gap_dist,
            clock_rate,
            seq0,
            ts0,
            start,
            stop: e.stop,
            warmup: e.warmup,
        };
        let app = RtpApp::new(flow, src_cfg, rtcp, rng, rtcp_rngs);
        let a = e.add_app(app);
        e.add_flow(src, dst, FlowKind::Udp, None, a);
        // RRs come back.
        e.need_route(dst, src, false);
    }
    Ok(())
}

/// What the data source sends.
#[derive(Clone, Copy, Debug)]
pub struct SourceConfig {
    pub size: Dist,
    pub gap: Dist,
    pub clock_rate: u32,
    pub seq0: u16,
    pub ts0: u32,
    pub start: Nanos,
    pub stop: Nanos,
    /// Quality columns count data packets sent from here on.
    pub warmup: Nanos,
}

/// RTP timestamp units of a time in ns (the sampling clock, modulo 2^32).
pub fn ts_units(t: Nanos, clock_rate: u32) -> u32 {
    (t as u128 * clock_rate as u128 / NS_PER_S as u128) as u32
}

pub struct RtpApp {
    flow: u32,
    cfg: SourceConfig,
    rng: Rng,
    next_send: Option<Nanos>,
    /// Data packets sent (the sequence number's offset), and those sent since the
    /// warm-up.
    sent: u64,
    sent_counted: u64,
    // Receiver.
    stats: SourceStats,
    received: u64,
    received_bytes: u64,
    /// Lowest counted and highest received packet index (the ground truth's window;
    /// the highest also unwraps the 16-bit sequence numbers).
    first_seq: Option<u64>,
    highest_seq: u64,
    jitter_ts_sum: f64,
    /// RTCP state, boxed: most of the app's size, touched only every few seconds.
    rtcp: Box<RtcpState>,
}

/// Both members' RTCP timers and the stream's reports.
struct RtcpState {
    sender: Option<RtcpMember>,
    receiver: Option<RtcpMember>,
    ledger: ReportLedger,
}

impl RtpApp {
    pub fn new(
        flow: u32,
        cfg: SourceConfig,
        rtcp: Option<RtcpConfig>,
        rng: Rng,
        rtcp_rngs: (Rng, Rng),
    ) -> Self {
        let (sender, receiver) = match rtcp {
            Some(c) => (
                Some(RtcpMember::new(c, 1, true, 0, cfg.start, rtcp_rngs.0)),
                Some(RtcpMember::new(c, 1, false, 1, cfg.start, rtcp_rngs.1)),
            ),
            None => (None, None),
        };
        RtpApp {
            flow,
            cfg,
            rng,
            next_send: None,
            sent: 0,
            sent_counted: 0,
            stats: SourceStats::default(),
            received: 0,
            received_bytes: 0,
            first_seq: None,
            highest_seq: 0,
            jitter_ts_sum: 0.0,
            rtcp: Box::new(RtcpState {
                sender,
                receiver,
                ledger: ReportLedger::new(cfg.seq0, cfg.clock_rate, cfg.warmup),
            }),
        }
    }

    fn send_data(&mut self, now: Nanos, io: &mut AppIo) {
        let size = (self.cfg.size.sample(&mut self.rng).round() as u32).clamp(RTP_HEADERS, 65_535);
        let seq = self.cfg.seq0.wrapping_add(self.sent as u16);
        let ts = self
            .cfg
            .ts0
            .wrapping_add(ts_units(now - self.cfg.start, self.cfg.clock_rate));
        let tag = AppTag {
            unit: ts,
            unit_type: TAG_DATA,
            fragment: 0,
            fragments: 1,
        };
        io.send_tagged(self.flow, false, size, seq as u64, tag);
        self.sent += 1;
        self.sent_counted += (now >= self.cfg.warmup) as u64;
        let gap = self.cfg.gap.sample(&mut self.rng).round().max(1.0) as Nanos;
        let next = now + gap;
        self.next_send = (next < self.cfg.stop).then_some(next);
    }

    fn on_sender_rtcp(&mut self, now: Nanos, io: &mut AppIo) {
        let Some(m) = self.rtcp.sender.as_mut() else {
            return;
        };
        if let Some(size) = m.fire(now, 0) {
            io.send_tagged(
                self.flow,
                false,
                size,
                0,
                AppTag {
                    unit: 0,
                    unit_type: TAG_SR,
                    fragment: 0,
                    fragments: 1,
                },
            );
            self.rtcp.ledger.count_packet(now, size);
        }
    }

    fn on_receiver_rtcp(&mut self, now: Nanos, io: &mut AppIo) {
        let Some(m) = self.rtcp.receiver.as_mut() else {
            return;
        };
        let Some(size) = m.fire(now, self.stats.valid() as u32) else {
            return;
        };
        let block = self.stats.valid().then(|| self.stats.report_block());
        let id = self.rtcp.ledger.issue(now, block);
        io.send_tagged(
            self.flow,
            true,
            size,
            id as u64,
            AppTag {
                unit: id,
                unit_type: TAG_RR,
                fragment: 0,
                fragments: 1,
            },
        );
        self.rtcp.ledger.count_packet(now, size);
    }

    fn on_data(&mut self, now: Nanos, d: &Arrival) {
        let arrival = self
            .cfg
            .ts0
            .wrapping_add(ts_units(now - self.cfg.start, self.cfg.clock_rate));
        self.stats.on_packet(d.seq as u16, d.tag.unit, arrival);
        // Ground truth: the sender's packet index, unwrapped against the 16-bit number.
        let index = (d.seq as u16).wrapping_sub(self.cfg.seq0) as u64;
        let index = index + ((self.highest_seq.saturating_sub(index) + (1 << 15)) >> 16 << 16);
        // Indices grow with send time, so once a counted packet arrived the highest
        // index is a counted one.
        self.highest_seq = self.highest_seq.max(index);
        if d.sent_at < self.cfg.warmup {
            return;
        }
        self.jitter_ts_sum += self.stats.jitter_exact();
        self.received += 1;
        self.received_bytes += d.size as u64;
        self.first_seq = Some(self.first_seq.map_or(index, |f| f.min(index)));
    }

    /// Ground-truth loss fraction of data packets between the first and the highest
    /// received (so packets still in flight at the end are not counted).
    fn true_loss(&self) -> f64 {
        match self.first_seq {
            Some(f) => {
                let expected = self.highest_seq - f + 1;
                1.0 - (self.received.min(expected) as f64 / expected as f64)
            }
            None => f64::NAN,
        }
    }

    fn columns(&self, out: &mut Vec<(&'static str, Val)>) {
        out.push(("packets_sent", Val::U(self.sent_counted)));
        out.push(("packets_received", Val::U(self.received)));
        out.push((
            "mean_size_bytes",
            Val::F(self.received_bytes as f64 / self.received as f64),
        ));
        out.push(("loss_fraction_true", Val::F(self.true_loss())));
        let l = &self.rtcp.ledger;
        out.push(("loss_fraction_rr", Val::F(l.loss_fraction())));
        out.push(("fraction_lost_rr_mean", Val::F(l.fraction_lost_mean())));
        out.push(("cumulative_lost_rr", Val::I(l.cumulative_lost())));
        out.push(("jitter_ms", Val::F(self.jitter_ms())));
        out.push(("jitter_ms_rr_mean", Val::F(l.jitter_ms_mean())));
        out.push(("rtt_ms_rtcp", Val::F(l.rtt_ms())));
        let (packets, bytes) = l.packets();
        out.push(("rtcp_packets", Val::U(packets)));
        out.push(("rtcp_bytes", Val::U(bytes)));
        out.push(("rr_received", Val::U(l.reports())));
    }

    /// Mean of the RFC 3550 jitter estimate over the data packets' arrivals, in ms.
    fn jitter_ms(&self) -> f64 {
        self.jitter_ts_sum / self.received as f64 * 1e3 / self.cfg.clock_rate as f64
    }
}

impl Application for RtpApp {
    fn start(&mut self, io: &mut AppIo) {
        if self.cfg.start < self.cfg.stop {
            self.next_send = Some(self.cfg.start);
            io.wake_at(self.cfg.start);
        }
        for m in [&self.rtcp.sender, &self.rtcp.receiver]
            .into_iter()
            .flatten()
        {
            if m.next() < self.cfg.stop {
                io.wake_at(m.next());
            }
        }
    }

    fn on_wake(&mut self, now: Nanos, io: &mut AppIo) {
        if self.next_send == Some(now) {
            self.send_data(now, io);
            if let Some(t) = self.next_send {
                io.wake_at(t);
            }
        }
        let stop = self.cfg.stop;
        if self.rtcp.sender.as_ref().is_some_and(|m| m.next() == now) {
            self.on_sender_rtcp(now, io);
            let tn = self.rtcp.sender.as_ref().map_or(stop, |m| m.next());
            if tn < stop {
                io.wake_at(tn);
            }
        }
        if self.rtcp.receiver.as_ref().is_some_and(|m| m.next() == now) {
            self.on_receiver_rtcp(now, io);
            let tn = self.rtcp.receiver.as_ref().map_or(stop, |m| m.next());
            if tn < stop {
                io.wake_at(tn);
            }
        }
    }

    fn wants_datagrams(&self) -> bool {
        true
    }

    fn on_datagram(&mut self, now: Nanos, d: &Arrival, _io: &mut AppIo) {
        match (d.reverse, d.tag.unit_type) {
            (false, TAG_DATA) => self.on_data(now, d),
            (false, TAG_SR) => self.rtcp.ledger.on_sr(d.sent_at, now),
            (true, TAG_RR) => self.rtcp.ledger.on_report(now, d.tag.unit),
            _ => {}
        }
    }

    /// Entry row: counts summed over the sessions, rates and delays averaged over the
    /// sessions that have them.
    fn report(apps: &[&Self], out: &mut Vec<(&'static str, Val)>) {
        let mut rows: Vec<Vec<(&'static str, Val)>> = Vec::with_capacity(apps.len());
        for a in apps {
            let mut r = Vec::new();
            a.columns(&mut r);
            rows.push(r);
        }
        crate::app::merge_rows(&rows, out);
    }

    fn report_flows(&self, out: &mut Vec<crate::app::FlowReport>) {
        let mut cols = Vec::new();
        self.columns(&mut cols);
        out.push(crate::app::FlowReport {
            flow: self.flow,
            cols,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::rtp::rtcp_session::compound_bytes;
    use crate::app::Action;

    fn app(rtcp: bool) -> RtpApp {
        let cfg = SourceConfig {
            size: Dist::fixed(200.0),
            gap: Dist::fixed(20e6),
            clock_rate: 8000,
            seq0: 65_534,
            ts0: 1000,
            start: 0,
            stop: 10 * NS_PER_S,
            warmup: 0,
        };
        let rc = RtcpConfig {
            session_bw_bps: 80_000.0,
            fraction: 0.05,
            reduced_min: false,
            reconsideration: false,
        };
        RtpApp::new(
            3,
            cfg,
            rtcp.then_some(rc),
            Rng::stream(1, "a"),
            (Rng::stream(1, "s"), Rng::stream(1, "r")),
        )
    }

    fn sends(io: &AppIo) -> Vec<(bool, u32, u64, AppTag)> {
        io.actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send {
                    reverse,
                    size,
                    seq,
                    tag,
                    ..
                } => Some((*reverse, *size, *seq, *tag)),
                _ => None,
            })
            .collect()
    }

    /// Data packets: 16-bit sequence numbers wrap; timestamps advance by 160 per 20 ms
    /// at 8 kHz from the random start.
    #[test]
    fn sequence_numbers_and_timestamps() {
        let mut a = app(false);
        let mut io = AppIo::new(0);
        a.start(&mut io);
        let mut out = Vec::new();
        for k in 0..3u64 {
            io.reset(0);
            a.on_wake(k * 20_000_000, &mut io);
            out.extend(sends(&io));
        }
        let seqs: Vec<u64> = out.iter().map(|s| s.2).collect();
        let ts: Vec<u32> = out.iter().map(|s| s.3.unit).collect();
        assert_eq!(seqs, vec![65_534, 65_535, 0]);
        assert_eq!(ts, vec![1000, 1160, 1320]);
    }

    /// The receiver's RR carries the A.3 block; the sender reads it only when the RR
    /// datagram arrives, and an RR lost on the way is skipped.
    #[test]
    fn rr_contents_reach_the_sender_only_with_the_datagram() {
        let mut a = app(true);
        let mut io = AppIo::new(0);
        let arrive = |a: &mut RtpApp, seq: u16, ts: u32, at: Nanos| {
            let d = Arrival {
                flow: 3,
                reverse: false,
                seq: seq as u64,
                size: 200,
                sent_at: 0,
                tag: AppTag {
                    unit: ts,
                    unit_type: TAG_DATA,
                    fragment: 0,
                    fragments: 1,
                },
                ecn: Default::default(),
            };
            a.on_datagram(at, &d, &mut AppIo::new(0));
        };
        // Seqs 65534 (probation), 65535 (base), 0, [1 lost], 2.
        for (i, s) in [65_534u16, 65_535, 0, 2].iter().enumerate() {
            let k = s.wrapping_sub(65_534) as u32;
            arrive(
                &mut a,
                *s,
                1000 + 160 * k,
                30_000_000 + 20_000_000 * k as u64 + i as u64,
            );
        }
        let t = a.rtcp.receiver.as_ref().unwrap().next();
        io.reset(0);
        a.on_wake(t, &mut io);
        let rr = sends(&io);
        assert_eq!(rr.len(), 1);
        assert_eq!(
            (rr[0].0, rr[0].1, rr[0].3.unit_type),
            (true, compound_bytes(false, 1), TAG_RR)
        );
        assert_eq!(a.rtcp.ledger.reports(), 0);
        let back = Arrival {
            flow: 3,
            reverse: true,
            seq: 0,
            size: compound_bytes(false, 1),
            sent_at: t,
            tag: rr[0].3,
            ecn: Default::default(),
        };
        a.on_datagram(t + 5_000_000, &back, &mut io);
        assert_eq!(a.rtcp.ledger.reports(), 1);
        let b = a.rtcp.ledger.last_block().unwrap();
        // Expected 65535..=65538 (extended) = 4, received 3 → lost 1, fraction 64/256.
        assert_eq!(
            (b.cumulative_lost, b.fraction_lost, b.extended_max),
            (1, 64, 65_538)
        );
        assert!((a.rtcp.ledger.loss_fraction() - 1.0 / 5.0).abs() < 1e-12); // sender counts from 65534
        assert!((a.true_loss() - 0.2).abs() < 1e-12); // 65534..=2: 5 expected, 4 received
    }
}
