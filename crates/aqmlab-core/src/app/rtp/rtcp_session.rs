//! The RTCP side of a two-member RTP session, shared by `rtp` and `voip`.
//!
//! - `read_config`: the entry's RTCP parameters (`rtcp`, `session_bw`,
//!   `rtcp_fraction`, `rtcp_reduced_min`, `reconsideration`).
//! - `RtcpMember`: one participant's report timer (`rtcp.rs`, RFC 3550 §6.3/A.7) and
//!   the size of the compound packet it sends (§6.1: every compound packet starts with
//!   an SR if the member sent data, else an RR, and carries an SDES CNAME).
//! - `ReportLedger`: one media stream's reception reports as the stream's sender learns
//!   them. A report's contents travel beside its datagram (a report number in the
//!   packet's tag) and reach the sender only when the datagram arrives; a lost report
//!   is missing. The ledger also keeps the stream receiver's memory of the last SR
//!   (LSR and the DLSR origin, §6.4.1), so the sender gets the round-trip time
//!   `A − LSR − DLSR`.
//!
//! Compound packet sizes (IP bytes): IP + UDP 28, SR header and sender info 28 (RR
//! header 8), 24 per report block, SDES with one CNAME chunk 24. So an SR without
//! blocks is 80 B, an RR with one block 84 B (60 B without), an SR with one block
//! (a member that both sends and receives) 104 B.
//!
//! Warm-up: reports generated before `warmup` are not counted; the last of them that
//! reaches the sender becomes the baseline, so `loss_fraction` and `cumulative_lost`
//! are the RFC's cumulative counters differenced against it (the A.3 way to get the
//! loss over an interval). RTCP packets count from `warmup` on.

use super::rtcp::{RtcpConfig, RtcpTimer};
use super::stats::ReportBlock;
use crate::scenario::error::Result;
use crate::scenario::params::Params;
use crate::sim::rng::Rng;
use crate::sim::time::Nanos;
use std::collections::VecDeque;

pub const TAG_SR: u8 = 200;
pub const TAG_RR: u8 = 201;
/// Reports in flight kept for the sender (older ones count as lost).
const MAX_PENDING: usize = 64;

/// IP bytes of a compound RTCP packet: SR or RR, `blocks` report blocks, one CNAME.
pub const fn compound_bytes(sr: bool, blocks: u32) -> u32 {
    28 + if sr { 28 } else { 8 } + 24 * blocks + 24
}

/// The entry's RTCP settings, or None with `rtcp = false`. `default_bw` is the
/// session bandwidth (bit/s) when `session_bw` is not given.
pub fn read_config(p: &mut Params, default_bw: f64) -> Result<Option<RtcpConfig>> {
    let rtcp = p.bool_or("rtcp", true)?;
    let session_bw = p.rate("session_bw")?.map_or(default_bw, |r| r as f64);
    if session_bw <= 0.0 {
        return Err(p.error("session_bw", "expected a rate above 0"));
    }
    let fraction = p.f64_or("rtcp_fraction", 0.05, 1e-6, 1.0)?;
    let reduced_min = p.bool_or("rtcp_reduced_min", false)?;
    let reconsideration = p.bool_or("reconsideration", true)?;
    Ok(rtcp.then_some(RtcpConfig {
        session_bw_bps: session_bw,
        fraction,
        reduced_min,
        reconsideration,
    }))
}

/// One member of a two-member session.
#[derive(Clone, Debug)]
pub struct RtcpMember {
    timer: RtcpTimer,
    /// Sends media: its packets are SRs.
    sr: bool,
}

impl RtcpMember {
    /// A member joining at `start` in a session of two members, `senders` of which
    /// send media; its first packet is assumed to carry `blocks` report blocks.
    pub fn new(
        cfg: RtcpConfig,
        senders: u32,
        sr: bool,
        blocks: u32,
        start: Nanos,
        rng: Rng,
    ) -> Self {
        RtcpMember {
            timer: RtcpTimer::new(cfg, 2, senders, sr, compound_bytes(sr, blocks), start, rng),
            sr,
        }
    }

    /// The report timer (its members, senders and average packet size).
    pub fn timer(&self) -> &RtcpTimer {
        &self.timer
    }

    /// The next expiry of the timer.
    pub fn next(&self) -> Nanos {
        self.timer.tn
    }

    /// The timer fired at `now`: the size of the compound packet (with `blocks`
    /// report blocks) that goes out now, or None when reconsideration deferred it.
    /// Either way `next()` is the next expiry.
    pub fn fire(&mut self, now: Nanos, blocks: u32) -> Option<u32> {
        if !self.timer.expire(now) {
            return None;
        }
        let size = compound_bytes(self.sr, blocks);
        self.timer.sent(now, size);
        Some(size)
    }
}

/// A report in flight: its number, send time, block, and LSR/DLSR (ns).
#[derive(Clone, Copy, Debug)]
struct Pending {
    id: u32,
    at: Nanos,
    block: Option<ReportBlock>,
    lsr_dlsr: Option<(Nanos, Nanos)>,
}

/// One media stream's reception reports and RTCP packet counts.
#[derive(Clone, Debug)]
pub struct ReportLedger {
    warmup: Nanos,
    clock_rate: u32,
    /// Cumulative lost and extended highest sequence number the counted reports are
    /// measured from: (0, first sequence number − 1), or the last pre-warm-up report.
    base_lost: i32,
    base_ext: u32,
    next_id: u32,
    pending: VecDeque<Pending>,
    /// (SR send time, its arrival) of the stream's latest SR, at its receiver.
    last_sr: Option<(Nanos, Nanos)>,
    count: u64,
    fraction_sum: f64,
    jitter_ms_sum: f64,
    rtt_ms_sum: f64,
    rtt_n: u64,
    last: Option<ReportBlock>,
    packets: u64,
    bytes: u64,
}

impl ReportLedger {
    /// A stream whose first data packet has sequence number `seq0`.
    pub fn new(seq0: u16, clock_rate: u32, warmup: Nanos) -> Self {
        ReportLedger {
            warmup,
            clock_rate,
            base_lost: 0,
            base_ext: (seq0 as u32).wrapping_sub(1),
            next_id: 0,
            pending: VecDeque::new(),
            last_sr: None,
            count: 0,
            fraction_sum: 0.0,
            jitter_ms_sum: 0.0,
            rtt_ms_sum: 0.0,
            rtt_n: 0,
            last: None,
            packets: 0,
            bytes: 0,
        }
    }

    /// The stream's receiver sends a report (`block` None before the source is
    /// valid) at `now`: its number, for the packet's tag.
    pub fn issue(&mut self, now: Nanos, block: Option<ReportBlock>) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        if self.pending.len() == MAX_PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back(Pending {
            id,
            at: now,
            block,
            lsr_dlsr: self.last_sr.map(|(sent, arrived)| (sent, now - arrived)),
        });
        id
    }

    /// An SR of this stream's sender, sent at `sent_at`, reached the receiver.
    pub fn on_sr(&mut self, sent_at: Nanos, now: Nanos) {
        self.last_sr = Some((sent_at, now));
    }

    /// Report `id` reached the stream's sender at `now`.
    pub fn on_report(&mut self, now: Nanos, id: u32) {
        while let Some(p) = self.pending.front().copied() {
            if p.id > id {
                return; // already superseded (duplicate) — cannot happen on a FIFO path
            }
            self.pending.pop_front();
            if p.id < id {
                continue; // that report was lost
            }
            if p.at < self.warmup {
                if let Some(b) = p.block {
                    self.base_lost = b.cumulative_lost;
                    self.base_ext = b.extended_max;
                }
                return;
            }
            if let Some(b) = p.block {
                self.count += 1;
                self.fraction_sum += b.fraction_lost as f64 / 256.0;
                self.jitter_ms_sum += b.jitter as f64 * 1e3 / self.clock_rate as f64;
                self.last = Some(b);
            }
            if let Some((lsr, dlsr)) = p.lsr_dlsr {
                self.rtt_ms_sum += (now - lsr - dlsr) as f64 / 1e6;
                self.rtt_n += 1;
            }
            return;
        }
    }

    /// An RTCP packet of `size` bytes went out on this stream's flow at `now`.
    pub fn count_packet(&mut self, now: Nanos, size: u32) {
        if now >= self.warmup {
            self.packets += 1;
            self.bytes += size as u64;
        }
    }

    /// Loss from the last counted report: lost / expected since the baseline.
    pub fn loss_fraction(&self) -> f64 {
        match self.last {
            Some(b) => {
                let expected = b.extended_max.wrapping_sub(self.base_ext) as f64;
                (b.cumulative_lost - self.base_lost) as f64 / expected
            }
            None => f64::NAN,
        }
    }

    /// Mean of the counted reports' fraction lost (8-bit, /256).
    pub fn fraction_lost_mean(&self) -> f64 {
        self.fraction_sum / self.count as f64
    }

    /// Cumulative lost of the last counted report, from the baseline.
    pub fn cumulative_lost(&self) -> i64 {
        self.last
            .map_or(0, |b| b.cumulative_lost as i64 - self.base_lost as i64)
    }

    /// Mean of the jitter the counted reports carried, in ms.
    pub fn jitter_ms_mean(&self) -> f64 {
        self.jitter_ms_sum / self.count as f64
    }

    /// Mean round-trip time from LSR/DLSR, in ms.
    pub fn rtt_ms(&self) -> f64 {
        self.rtt_ms_sum / self.rtt_n as f64
    }

    /// The last counted report block.
    pub fn last_block(&self) -> Option<ReportBlock> {
        self.last
    }

    /// Counted reports with a block that reached the sender.
    pub fn reports(&self) -> u64 {
        self.count
    }

    /// RTCP packets and bytes on this stream's flow since the warm-up.
    pub fn packets(&self) -> (u64, u64) {
        (self.packets, self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compound_sizes() {
        assert_eq!(compound_bytes(true, 0), 80);
        assert_eq!(compound_bytes(false, 1), 84);
        assert_eq!(compound_bytes(false, 0), 60);
        assert_eq!(compound_bytes(true, 1), 104);
    }

    fn block(lost: i32, ext: u32) -> Option<ReportBlock> {
        Some(ReportBlock {
            fraction_lost: 0,
            cumulative_lost: lost,
            extended_max: ext,
            jitter: 0,
        })
    }

    /// Without a warm-up the loss is cumulative lost / (extended max − seq0 + 1); with
    /// one, a report made before it is the baseline: a report at 12 s with (lost 9,
    /// ext 1099) after one at 8 s with (lost 7, ext 599) gives 2/500, and the 8 s one
    /// is not counted.
    #[test]
    fn reports_before_the_warmup_are_the_baseline() {
        let mut l = ReportLedger::new(100, 8000, 0);
        let id = l.issue(8_000_000_000, block(7, 599));
        l.on_report(8_010_000_000, id);
        assert!((l.loss_fraction() - 7.0 / 500.0).abs() < 1e-15);
        assert_eq!(l.reports(), 1);

        let mut l = ReportLedger::new(100, 8000, 10_000_000_000);
        let a = l.issue(8_000_000_000, block(7, 599));
        let b = l.issue(12_000_000_000, block(9, 1099));
        l.on_report(8_010_000_000, a);
        assert!(l.loss_fraction().is_nan());
        l.on_report(12_010_000_000, b);
        assert!((l.loss_fraction() - 2.0 / 500.0).abs() < 1e-15);
        assert_eq!((l.cumulative_lost(), l.reports()), (2, 1));
        l.count_packet(9_000_000_000, 84);
        l.count_packet(10_000_000_000, 84);
        assert_eq!(l.packets(), (1, 84));
    }
}
